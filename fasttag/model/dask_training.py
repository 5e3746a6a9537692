"""The training loop's backend whose shards are Dask workers, a byte range
of the training file each; what workers need are tasks of the cluster
(:func:`_constant`), so a lost worker's shard runs again with the same result.
"""
import io
import os
import threading
import time
import uuid
import zlib

import numpy as np

from . import mixing, modelfile
from .._core.weights import AveragedVector, WeightTable
from ..errors import InputError
from .taskmodel import TaskModel
from .training import Stopped, epoch_pass, featurize

_WORKER_CACHE = {}          # on a worker: (run, path, start, end) -> (model, featurized shard)
_WORKER_LOCK = threading.Lock()


def require_dask():
    """``dask.distributed``, or an InputError saying how to install it."""
    try:
        import dask.distributed
    except ImportError:
        raise InputError("distributed training and tagging need Dask: pip install 'fasttag-nlp[dask]'") from None
    return dask.distributed


WORKERS_WAIT = 30.0         # seconds a cluster with no workers yet is given for one to join


def n_workers(client):
    """The workers of ``client``'s cluster (at least one), asked of the
    scheduler now: the client's cached ``scheduler_info()`` can lag behind
    workers that have just joined or been restarted by their nanny."""
    workers = len(client.nthreads())
    if workers < 1:
        try:
            client.wait_for_workers(1, timeout=WORKERS_WAIT)
        except Exception:       # (dask raises its own TimeoutError subclasses across versions)
            raise InputError(f"the Dask cluster has no workers (none joined in {WORKERS_WAIT:g} s)") from None
        workers = len(client.nthreads())
    return workers


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


class DaskShards:
    """The backend of :func:`fasttag.model.training.fit` on ``client``'s
    cluster: per epoch each worker trains on its shard of ``path`` (kept
    featurized on the worker) from the mixed weights and sends back only
    the entries it changed.  The result depends on the seed and the number
    of workers only."""

    def __init__(self, task_model: TaskModel, path, reading, settings, client):
        if not isinstance(path, (str, os.PathLike)):
            raise InputError("distributed training reads the training data on the workers: give a file path")
        if reading.get("max_sentences"):
            raise InputError("option max_sentences does not apply to distributed training")
        self.path = os.path.abspath(os.fspath(path))
        self.client, self.settings, self.reading = client, settings, dict(reading)
        self.ranges = byte_ranges(self.path, n_workers(client))
        self.run = uuid.uuid4().hex
        blobs = [_range_bytes(self.path, a, b) for a, b in self.ranges]
        self.digests = [zlib.crc32(blob) for blob in blobs]         # what each worker must read
        cls = type(task_model)
        tables = task_model._fold_tables(lambda: [_parse_range(cls, blob, self.reading) for blob in blobs])
        blobs = None                    # (the file's bytes: not kept while training)
        self.patience = _patience()
        self.model_bytes = _constant(client, (cls, task_model.to_bytes()))
        self.tables = None if tables is None else _constant(client, tables)
        self.info = {"workers": len(self.ranges)}
        self.n_tokens = self.n_sentences = self.seed = 0

    def start(self, emit, trans, seed):
        emit.loosen()
        self.seed = seed

    def epoch(self, epoch, emit, trans, step, bar):
        client = self.client
        weights = _constant(client, _weights_bytes(emit, trans))
        futures = [client.submit(_shard_epoch, self.run, self.model_bytes, self.tables, weights, self.path, a, b,
                                 digest, self.reading, self.settings, self.seed, epoch, i, pure=False)
                   for i, ((a, b), digest) in enumerate(zip(self.ranges, self.digests))]
        results = _gather(client, futures, self.patience)
        weights = futures = None
        changes = [c for c, _ in results]
        self.n_sentences = sum(c.n for c in changes)
        self.n_tokens = sum(t for _, t in results)
        if not self.n_sentences:
            raise InputError("no training sentences", path=self.path)
        step += self.n_sentences
        mixing.mix(emit, trans, changes, step)
        return sum(c.wrong for c in changes), step

    def speed(self, stats):
        return f"{len(self.ranges)} workers"

    def finish_run(self):
        pass

    def close(self):
        self.client.run(_forget, self.run, on_error="ignore")


def _patience():
    """(setting, seconds) to wait for a worker while the cluster has none:
    ``no-workers-timeout`` where set, else Dask's connect timeout, longer
    than a nanny takes to restart a worker."""
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
    """A future of ``value`` computed on the cluster, not scattered: a copy
    lost with its workers is computed again (scattered data would be lost)."""
    import dask
    # Dask warns about large graphs and suggests futures: this is one
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1 PiB"}):
        return client.submit(_identity, value, pure=False)


def _gather(client, futures, patience, poll=1.0):
    """The results of one epoch's shard ``futures``, in order; :class:`Stopped`
    when the cluster had no worker for ``patience`` or a shard's workers
    died more often than the scheduler allows."""
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
        raise Stopped(f"the Dask workers running shard {shard + 1} of {len(futures)} kept dying (more often than "
                    f"distributed.scheduler.allowed-failures allows)") from None
    except NoValidWorkerError:
        raise Stopped(none_for) from None
    except dd.CancelledError:
        if lost:
            raise Stopped(lost[0]) from None
        raise
    finally:
        done.set()
        watcher.join()


def _weights_bytes(emit, trans):
    """The mixed weights in the model-file format, in float64 (a shard
    starts from exactly the client's weights)."""
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


def _parse_range(cls, data, reading):
    return cls._read(io.BytesIO(data), dict(reading), "training data")


def _shard(run, model_bytes, tables, path, start, end, digest, reading):
    """On a worker: the model and its featurized shard (bytes start..end of
    ``path``), read once per run; ``digest``: the CRC-32 the client read."""
    key = (run, path, start, end)
    with _WORKER_LOCK:
        if key in _WORKER_CACHE:
            return _WORKER_CACHE[key]
    cls, data = model_bytes
    task_model = cls.from_bytes(data)
    data = _range_bytes(path, start, end)
    if zlib.crc32(data) != digest:
        raise InputError(f"a Dask worker reads other bytes at this path than the client (bytes {start}-{end}): "
                         f"the training file must be the same file on every worker", path=path)
    examples = _parse_range(cls, data, reading)
    if tables is not None:
        task_model._use_fold_tables(tables)
    encoded = task_model._encode(examples, training=True)
    model = task_model.model
    if encoded:
        keys, bounds, cands = featurize(model, encoded)
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


def _shard_epoch(run, model_bytes, tables, weights, path, start, end, digest, reading, settings, seed,
                 epoch, index):
    """On a worker: one epoch on one shard from the mixed ``weights``:
    (:class:`fasttag.model.mixing.Changes`, positions)."""
    task_model, keys, bounds, cands, gold, n = _shard(run, model_bytes, tables, path, start, end, digest, reading)
    model = task_model.model
    emit, trans = _load_weights(weights, len(model.tags))
    if not n:
        return mixing.round_changes(emit, trans, 0, 0), 0
    order = np.random.default_rng([seed, epoch, index]).permutation(n).astype(np.int64)
    search = model.search(emit, trans, cands)
    wrong, _ = epoch_pass(search, trans, keys, bounds, gold, order, 1, settings, model.decoder == "greedy")
    return mixing.round_changes(emit, trans, n, wrong), int(keys.shape[0])
