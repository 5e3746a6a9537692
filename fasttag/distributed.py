"""Training and tagging on a Dask cluster (the optional extra
``fasttag-nlp[dask]``: ``pip install 'fasttag-nlp[dask]'``).

Training is iterative parameter mixing (:mod:`fasttag.model.mixing`, which
states the averaging convention: the same as on one machine), one shard
per worker::

    from dask.distributed import Client
    model = fasttag.Tagger.train("train.conllu", dev="dev.conllu", client=Client(...))

or ``fasttag train pos train.conllu -o model.ftm --dask`` (a LocalCluster
of ``--threads`` worker processes, 2 by default) or ``--scheduler
tcp://host:8786`` (an existing cluster).  The training file must be a
path every worker can read: the client reads it once to build the model
(its tag set and dictionaries), cuts it into byte ranges at sentence
boundaries and sends each worker a path and a range (with the CRC-32 of
the range's bytes as the client reads them, which the worker checks: a
worker seeing another file at the path is an error), never data.  Each
epoch, the client sends the mixed weights (the model-file format, float64
weights); each worker trains one epoch on its shard (featurized once,
kept in the worker between epochs; shuffled by the seed, the epoch and
the shard) and sends back only the entries it changed.  The result
depends on the seed and the number of workers only.

Features jackknifed over the training set (the segmenter's vocabulary
features, NER's ambiguity classes) need tables built from all of it: the
client reads each byte range as its worker will, builds the fold tables
with each shard counting its folds (sentences, or documents) from its own
start, and sends them once with the model.  Document features are
computed per shard; the cuts fall between sentences.

Losing workers: the model, the fold tables and each epoch's weights are
tasks of the cluster (:func:`_constant`), not scattered data: where a
worker dies, even every worker at once, Dask computes what it held again
and runs its shards again on the workers that remain or return, with the
same result (a shard's epoch depends only on its inputs).  When none is
left for the cluster's patience (:func:`_patience`), or the workers
running a shard keep dying, training stops as Ctrl-C does, keeping the
best completed epoch: :class:`fasttag.errors.WorkersLost`.

Tagging: :func:`tag` tags a collection on the cluster and :func:`tag_bag`
maps a ``dask.bag`` (such as ``dask.bag.read_text`` of large files, read
on the workers) through the model, carried to the workers as its bytes.
"""
import io
import os
import threading
import time
import uuid
import zlib

import numpy as np

from .model import mixing, modelfile
from ._core.weights import AveragedVector, WeightTable
from ._core.sequence import transition_size
from .errors import InputError, TrainingInterrupted, WorkersLost

_WORKER_CACHE = {}          # on a worker: (run, path, start, end) -> (model, featurized shard)
_WORKER_LOCK = threading.Lock()


def require_dask():
    """``dask.distributed``, or an InputError saying how to install it."""
    try:
        import dask.distributed
    except ImportError:
        raise InputError("distributed training and tagging need Dask: pip install 'fasttag-nlp[dask]'") from None
    return dask.distributed


def n_workers(client):
    """The workers of ``client``'s cluster (at least one)."""
    workers = len(client.scheduler_info().get("workers", {}))
    if workers < 1:
        raise InputError("the Dask cluster has no workers")
    return workers


# ---------------------------------------------------------------- training

def byte_ranges(path, n):
    """``path`` cut into at most ``n`` byte ranges of about equal size, at
    sentence boundaries: blank lines where the file has them (CoNLL
    formats), else line ends (one sentence per line)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(1 << 20)
        blocks = b"\n\n" in head or b"\n\r\n" in head
        cuts = [0]
        for i in range(1, n):
            at = max(size * i // n, cuts[-1])
            f.seek(at)
            f.readline()                          # to the next line start
            while blocks:
                pos = f.tell()
                line = f.readline()
                if not line or not line.strip():
                    at = f.tell() if line else pos
                    break
            else:
                at = f.tell()
            if cuts[-1] < at < size:
                cuts.append(at)
        cuts.append(size)
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


def fit(task_model, path, opts, client, dev=None, evaluate=None, progress=None, init=False):
    """Train ``task_model`` (built by the task's ``train``) in place on the
    file ``path``, one shard per worker of ``client``; like
    :func:`fasttag.model.training.fit` (dev selection, Ctrl-C, training info).
    Returns the per-epoch statistics."""
    from .model import training as trainer
    if not isinstance(path, (str, os.PathLike)):
        raise InputError("distributed training reads the training data on the workers: give a file path")
    path = os.path.abspath(os.fspath(path))
    model = task_model.model
    epochs, seed = opts["epochs"], opts["seed"]
    rule = (opts["algorithm"], opts["k"], float(opts["C"]), model.decoder == "greedy")
    ranges = byte_ranges(path, n_workers(client))
    if init:
        emit, trans = trainer._trainable_copy(model)
    else:
        emit = WeightTable(initial_features=1 << 16)
        trans = AveragedVector(transition_size(len(model.tags)))
    emit.loosen()
    run = uuid.uuid4().hex
    if opts.get("max_sentences"):
        raise InputError("option max_sentences does not apply to distributed training")
    reading = dict(opts)            # what the task's reader needs (format, columns, scheme ...)
    blobs = [_range_bytes(path, a, b) for a, b in ranges]
    digests = [zlib.crc32(blob) for blob in blobs]         # what each worker must read
    tables = task_model._fold_tables(lambda: [_parse_range(type(task_model), blob, reading) for blob in blobs])
    blobs = None                    # (the file's bytes: not kept while training)
    patience = _patience()
    model_bytes = _constant(client, _structure_bytes(task_model))
    if tables is not None:
        tables = _constant(client, tables)
    selection = trainer.Selection(model, dev, evaluate)
    step = 0
    best = None
    history = []
    finished = 0
    n_tokens = n_sentences = 0
    try:
        for epoch in range(1, epochs + 1):
            t0 = time.perf_counter()
            weights = _constant(client, _weights_bytes(emit, trans))
            futures = [client.submit(_shard_epoch, run, model_bytes, tables, weights, path, a, b, digest, reading,
                                     seed, epoch, i, rule, pure=False)
                       for i, ((a, b), digest) in enumerate(zip(ranges, digests))]
            results = _gather(client, futures, patience)
            weights = futures = None
            changes = [c for c, _ in results]
            n_sentences = sum(c.n for c in changes)
            n_tokens = sum(t for _, t in results)
            if not n_sentences:
                raise InputError("no training sentences", path=path)
            step += n_sentences
            mixing.mix(emit, trans, changes, step)
            seconds = time.perf_counter() - t0
            wrong = sum(c.wrong for c in changes)
            stats = {"epoch": epoch, "train_accuracy": 1 - wrong / max(n_tokens, 1), "seconds": seconds,
                     "tokens_per_second": n_tokens / max(seconds, 1e-9)}
            best = selection.update(best, epoch, emit, trans, step, stats, rule[3])
            finished = epoch
            history.append(stats)
            if progress is not None:
                dev_text = f"  dev {100 * stats['dev_score']:.2f}%" if "dev_score" in stats else ""
                progress.line(f"epoch {epoch}/{epochs}  train acc {100 * stats['train_accuracy']:.2f}%"
                              f"{dev_text}  {len(ranges)} workers  {seconds:.1f}s")
    except (KeyboardInterrupt, _Lost) as exc:
        reason = exc.reason if isinstance(exc, _Lost) else None
        kept = None
        if best is not None:
            trainer._keep(model, best, [history], bool(dev), epochs, seed, rule[0], rule[1], rule[2], n_tokens,
                          n_sentences)
            model.training_info["workers"] = len(ranges)
            model.training_info["interrupted_at_epoch"] = finished + 1
            if reason is not None:
                model.training_info["interrupted_by"] = reason
            kept = model
        if reason is not None:
            raise WorkersLost(finished + 1, reason, kept) from None
        raise TrainingInterrupted(finished + 1, kept) from None
    finally:
        client.run(_forget, run, on_error="ignore")
    trainer._keep(model, best, [history], bool(dev), epochs, seed, rule[0], rule[1], rule[2], n_tokens, n_sentences)
    model.training_info["workers"] = len(ranges)
    return history


class _Lost(Exception):
    """The cluster lost the workers of an epoch for good: ``reason``."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def _patience():
    """Seconds to wait for a worker while the cluster has none: the
    scheduler's own ``distributed.scheduler.no-workers-timeout`` where it
    is set, else ``distributed.comm.timeouts.connect`` (30 s): how long
    Dask itself waits for a peer before counting it as gone, longer than
    a nanny takes to start a killed worker again (seconds) and than a
    LocalCluster waits for it (``distributed.deploy.lost-worker-timeout``,
    15 s)."""
    import dask
    from dask.utils import parse_timedelta
    for name in ("distributed.scheduler.no-workers-timeout", "distributed.comm.timeouts.connect"):
        seconds = parse_timedelta(dask.config.get(name, None), default="s")
        if seconds:
            return name, float(seconds)
    return "distributed.comm.timeouts.connect", 30.0


def _identity(value):
    return value


def _constant(client, value):
    """A future of ``value`` computed on the cluster (not scattered): the
    scheduler keeps the task, so a copy lost with every worker that held
    it is computed again on the workers that remain or return (scattered
    data would be lost for good, and the epoch with it)."""
    import dask
    # Dask warns about large graphs and suggests futures: this is one
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1 PiB"}):
        return client.submit(_identity, value, pure=False)


def _gather(client, futures, patience, poll=1.0):
    """The results of one epoch's shard ``futures``, in order.  Dask runs
    a shard whose worker dies again on the workers that remain or return;
    this stops (:class:`_Lost`) when the cluster has had no worker for
    ``patience`` (the setting named and its seconds), or when the workers
    running a shard died more often than the scheduler allows."""
    dd = require_dask()
    from distributed.scheduler import NoValidWorkerError
    setting, seconds = patience
    none_for = f"the Dask cluster lost its workers (none for {seconds:g} s, {setting})"
    lost = []
    done = threading.Event()

    def watch():
        alone_since = None
        while not done.wait(poll):
            try:
                workers = len(client.nthreads())
            except Exception:           # (the client is closing: the gather says why)
                continue
            now = time.monotonic()
            if workers:
                alone_since = None
            elif alone_since is None:
                alone_since = now
            elif now - alone_since >= seconds:
                lost.append(none_for)
                client.cancel(futures)
                return

    watcher = threading.Thread(target=watch, name="fasttag-dask-watch", daemon=True)
    watcher.start()
    try:
        return client.gather(futures)
    except dd.KilledWorker:
        shard = next((i for i, f in enumerate(futures) if f.status == "error"), 0)
        raise _Lost(f"the Dask workers running shard {shard + 1} of {len(futures)} kept dying (more often than "
                    f"distributed.scheduler.allowed-failures allows)") from None
    except NoValidWorkerError:
        raise _Lost(none_for) from None
    except dd.CancelledError:
        if lost:
            raise _Lost(lost[0]) from None
        raise
    finally:
        done.set()
        watcher.join()


def _structure_bytes(task_model):
    """The model's file bytes: its features, tags and settings (the
    weights travel each epoch in :func:`_weights_bytes`)."""
    return task_model.to_bytes()


def _weights_bytes(emit, trans):
    """The mixed weights in the model-file format, in float64 (a shard
    starts from exactly the weights the client mixes into)."""
    arrays = {f"emit.{k}": v for k, v in emit.to_arrays().items()}
    arrays["trans"] = trans.weights
    return modelfile.dumps({"kind": "fasttag-mixed-weights"}, arrays)


def _load_weights(data, n_tags):
    header, arrays = modelfile.loads(data)
    if header.get("kind") != "fasttag-mixed-weights":
        raise ValueError("not mixed weights")
    emit = WeightTable.from_arrays(arrays["emit.keys"], arrays["emit.counts"], arrays["emit.labels"],
                                   arrays["emit.weights"], n_classes=n_tags)
    emit.loosen()                   # trainable, accumulators clean
    trans = AveragedVector(len(arrays["trans"]))
    trans.set_weights(arrays["trans"])
    return emit, trans


def _forget(run):
    """On a worker: drop the shards of training run ``run``."""
    with _WORKER_LOCK:
        for key in [k for k in _WORKER_CACHE if k[0] == run]:
            del _WORKER_CACHE[key]


def _range_bytes(path, start, end):
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start)


def _read_range(cls, path, start, end, reading, digest=None):
    """The examples of bytes start..end of ``path``, read by task class
    ``cls`` as a worker reads its shard; ``digest``: the CRC-32 the client
    read there (a worker seeing another file at the path is an error)."""
    data = _range_bytes(path, start, end)
    if digest is not None and zlib.crc32(data) != digest:
        raise InputError(f"a Dask worker reads other bytes at this path than the client (bytes {start}-{end}): "
                         f"the training file must be the same file on every worker", path=path)
    return _parse_range(cls, data, reading)


def _parse_range(cls, data, reading):
    return cls._read(io.BytesIO(data), dict(reading), "training data")


def _shard(run, model_bytes, tables, path, start, end, digest, reading):
    """On a worker: the model and its featurized shard (bytes start..end
    of ``path``, jackknifed with the fold ``tables``), read once per
    training run."""
    key = (run, path, start, end)
    with _WORKER_LOCK:
        if key in _WORKER_CACHE:
            return _WORKER_CACHE[key]
    from .store import loads
    task_model = loads(model_bytes)
    examples = _read_range(type(task_model), path, start, end, reading, digest)
    if tables is not None:
        task_model._use_fold_tables(tables)
    encoded = task_model._encode(examples, training=True)
    model = task_model.model
    if encoded:
        from .model.training import _featurize
        keys, bounds, cands = _featurize(model, encoded)
        gold = np.concatenate([np.asarray(g, dtype=np.int32) for _, _, g in encoded])
        if len(gold) and (gold.min() < 0 or len(gold) != keys.shape[0]):
            raise InputError("a shard holds tags the model does not know", path=path)
    else:
        keys = bounds = cands = gold = None
    shard = (task_model, keys, bounds, cands, gold, len(encoded))
    with _WORKER_LOCK:
        for old in [k for k in _WORKER_CACHE if k[0] != run]:       # one run at a time
            del _WORKER_CACHE[old]
        _WORKER_CACHE[key] = shard
    return shard


def _shard_epoch(run, model_bytes, tables, weights, path, start, end, digest, reading, seed, epoch, index, rule):
    """On a worker: one epoch on one shard from the mixed ``weights``:
    (:class:`fasttag.model.mixing.Changes`, positions)."""
    from .model import training as trainer
    task_model, keys, bounds, cands, gold, n = _shard(run, model_bytes, tables, path, start, end, digest, reading)
    model = task_model.model
    emit, trans = _load_weights(weights, len(model.tags))
    if not n:
        return mixing.round_changes(emit, trans, 0, 0), 0
    order = np.random.default_rng([seed, epoch, index]).permutation(n).astype(np.int64)
    search = model.search(emit, trans, cands)
    algorithm, k, C, greedy = rule
    wrong, _ = trainer._pass(search, trans, keys, bounds, gold, order, 1, algorithm, k, C, greedy)
    return mixing.round_changes(emit, trans, n, wrong), int(keys.shape[0])


# ---------------------------------------------------------------- tagging

_MODELS = {}                # on a worker: model token -> loaded model


def _model_on_worker(token, model_bytes):
    with _WORKER_LOCK:
        model = _MODELS.get(token)
    if model is None:
        from .store import loads
        model = loads(model_bytes)
        with _WORKER_LOCK:
            _MODELS.clear()                 # one model at a time per worker
            _MODELS[token] = model
    return model


def _tag_partition(items, token, model_bytes, method):
    model = _model_on_worker(token, model_bytes)
    items = list(items)
    if method is None:
        method = "segment_lines" if hasattr(model, "segment_lines") else "tag_sents"
    return list(getattr(model, method)(items))


def tag_bag(model, bag, method=None):
    """A ``dask.bag`` of ``model``'s outputs for the items of ``bag``, in
    order: token lists (``tag_sents``) or, for a segmenter, lines
    (``segment_lines``); ``method`` names another batch method.  The model
    travels to the workers as its file bytes, loaded once per worker."""
    require_dask()
    import dask
    import dask.bag as db
    from .tasks.base import SequenceTask
    if not isinstance(model, SequenceTask):
        raise TypeError(f"tag_bag() takes a fasttag model (fasttag.load), not {type(model).__name__}")
    if not isinstance(bag, db.Bag):
        raise TypeError(f"tag_bag() takes a dask.bag.Bag (dask.bag.from_sequence(items)), not "
                        f"{type(bag).__name__}; fasttag.distributed.tag takes a list")
    if method is not None and not callable(getattr(model, method, None)):
        raise ValueError(f"a {type(model).__name__} has no method {method!r}")
    token = uuid.uuid4().hex
    data = dask.delayed(model.to_bytes(), pure=True)
    return bag.map_partitions(_tag_partition, token, data, method)


def tag(model, items, client, npartitions=None, method=None):
    """``model``'s outputs for ``items`` (a list), computed on ``client``'s
    cluster in ``npartitions`` parts (default: two per worker); equal to
    tagging them locally."""
    require_dask()
    import dask.bag as db
    items = list(items)
    if not items:
        return []
    if npartitions is not None and (isinstance(npartitions, bool) or not isinstance(npartitions, int)
                                    or npartitions < 1):
        raise ValueError(f"npartitions must be a positive int or None, not {npartitions!r}")
    parts = npartitions or 2 * n_workers(client)
    bag = db.from_sequence(items, npartitions=min(parts, len(items)))
    return client.compute(tag_bag(model, bag, method)).result()
