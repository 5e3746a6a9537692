"""The one training loop of every sequence task: Collins' structured
perceptron or k-best MIRA over a :class:`fasttag.model.sequence.SequenceModel`,
epoch by epoch, with dev selection, progress and Ctrl-C in one place.  Where
the shards of an epoch run is a backend: this process (one shard, or threads
mixing their parameters, :mod:`fasttag.model.mixing`) or Dask workers
(:mod:`fasttag.model.dask_training`).  Kept weights are rounded to float32,
the precision of model files, so a model predicts the same after a save.
"""
import dataclasses
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from typing import NamedTuple

import numpy as np

from .._core.weights import AveragedVector, WeightTable
from .._core.keyids import KeyIds
from .._core.sequence import transition_size
from . import mixing
from ..errors import InputError, ModelFormatError, TrainingInterrupted, WorkersLost, shown
from .options import MAX_MIRA_K
from .progress import Progress
from .tables import mean_table, table_from_arrays, table_to_arrays

ROUND_POSITIONS = 8192
MAX_ROUNDS = 16
"""Parameter mixing with threads runs in rounds of about ``ROUND_POSITIONS``
positions per shard, at most ``MAX_ROUNDS`` an epoch: the mixing is serial,
so more rounds keep the shards closer to sequential training and fewer keep
the threads busy (measurements: docs/lab-notes.md)."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """The settings of one training, resolved once by :mod:`fasttag.model.options`.
    ``rounds``: of mixing per epoch (None: by size); ``slices``: compiled
    calls per epoch, between which Ctrl-C is answered (same model for any)."""
    epochs: int = 10
    seed: int = 0
    algorithm: str = "perceptron"
    k: int = 1
    C: float = 1.0
    threads: int = 1
    ensemble: int = 1
    rounds: int = None
    slices: int = 100

    @classmethod
    def of(cls, options):
        """The settings of resolved ``options`` (a dict; others ignored)."""
        fields = {f.name for f in dataclasses.fields(cls)}
        got = {key: value for key, value in options.items() if key in fields and value is not None}
        if "C" in got:
            got["C"] = float(got["C"])
        return cls(**got)

    @property
    def rule(self):
        """What the model file records of the update rule."""
        return {"algorithm": self.algorithm, "k": self.k, "C": self.C}


class Stopped(Exception):
    """A backend lost the workers of an epoch for good: ``reason``
    (training stops as on Ctrl-C, raising :class:`fasttag.errors.WorkersLost`)."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def fit(model, train, dev=None, *, evaluate=None, verbose=None, name="train", progress=None, init=False,
        backend=None, settings=None, **options):
    """Train ``model`` in place on ``train``, (input, context, gold tag ids)
    triples (None where ``backend`` reads the data), by ``settings``
    (keywords such as ``epochs=`` replace its fields), keeping the epoch
    with the best ``evaluate(predicted dev ids)`` (token accuracy when
    None), without ``dev`` the last; ``init``: from the model's weights.
    Returns per-epoch statistics.  An ensemble averages its runs' weights.
    Ctrl-C raises :class:`fasttag.errors.TrainingInterrupted` (losing the
    workers :class:`fasttag.errors.WorkersLost`) with ``model`` set to the
    best completed epoch, when there is one."""
    settings = dataclasses.replace(settings or Settings(), **options)
    if progress is None:
        progress = Progress(name, sys.stderr.isatty() if verbose is None else verbose)
    if backend is None:
        if not train:
            raise InputError("no training sentences")
        backend = Local(model, train, settings)
    selection = Selection(model, dev, evaluate)
    kept, histories = [], []      # per finished run: its kept (score, epoch, emit, trans), its epochs
    stopped = reason = None
    try:
        for r in range(settings.ensemble):
            run = _Run(model, backend, selection, settings, settings.seed + r, init,
                       f"run {r + 1}/{settings.ensemble}, " if settings.ensemble > 1 else "")
            try:
                run.epochs(progress)
            except (KeyboardInterrupt, Stopped) as exc:
                progress.clear()
                stopped, reason = run.finished + 1, getattr(exc, "reason", None)
            if run.best is not None:
                kept.append(run.best)
                histories.append(run.history)
            run = None              # its training state goes before the next run's (peak memory)
            if stopped:
                break
    finally:
        backend.close()
    best = _mean(kept, selection, model) if kept else None
    selection = None
    if settings.ensemble > 1 and not stopped:
        progress.line(f"the {settings.ensemble} runs averaged" + (f": dev {100 * best[0]:.2f}%" if dev else ""))
    if best is not None:
        _keep(model, best, histories, bool(dev), settings, backend)
    if stopped:
        if best is not None:
            model.training_info["interrupted_at_epoch"] = stopped
            if reason is not None:
                model.training_info["interrupted_by"] = reason
        kept = model if best is not None else None
        raise (TrainingInterrupted(stopped, kept) if reason is None else WorkersLost(stopped, reason, kept))
    if settings.ensemble > 1:
        return [dict(h, run=r + 1) for r, history in enumerate(histories) for h in history]
    return histories[0]


class _Run:
    """One training run: its own weights, seed and kept epoch (``best``),
    on the backend shared by the runs of an ensemble."""

    def __init__(self, model, backend, selection, settings, seed, init, label):
        self.model, self.backend, self.selection, self.settings = model, backend, selection, settings
        self.label = label
        self.emit, self.trans = trainable_copy(model) if init else (
            WeightTable(initial_features=1 << 16), AveragedVector(transition_size(len(model.tags))))
        backend.start(self.emit, self.trans, seed)
        self.best = None
        self.history = []
        self.finished = 0       # the last epoch whose weights were kept in ``best``

    def epochs(self, progress):
        emit, trans, backend, epochs = self.emit, self.trans, self.backend, self.settings.epochs
        greedy = self.model.decoder == "greedy"
        step = 0
        for epoch in range(1, epochs + 1):
            t0 = time.perf_counter()
            title = f"{self.label}epoch {epoch}/{epochs}"

            def bar(done, total, done_tokens, title=title, t0=t0):
                progress.bar(title, done, total, t0, done_tokens, "positions")
            wrong, step = backend.epoch(epoch, emit, trans, step, bar)
            seconds = time.perf_counter() - t0
            n_tokens = backend.n_tokens
            stats = {"epoch": epoch, "train_accuracy": 1 - wrong / max(n_tokens, 1),
                     "seconds": seconds, "tokens_per_second": n_tokens / max(seconds, 1e-9)}
            # averaged every epoch, so that Ctrl-C in the next one keeps this one
            self.best = self.selection.update(self.best, epoch, emit, trans, step, stats, greedy)
            self.finished = epoch
            self.history.append(stats)
            dev_text = f"  dev {100 * stats['dev_score']:.2f}%" if "dev_score" in stats else ""
            progress.line(f"{title}  train acc {100 * stats['train_accuracy']:.2f}%"
                          f"{dev_text}  {backend.speed(stats)}  {seconds:.1f}s")
        backend.finish_run()


class Local:
    """The backend of this process: the training set featurized once for
    every run, each epoch shuffled by the run's seed and run as compiled
    slices, on one thread or on shards mixed by :class:`_Shards`."""

    def __init__(self, model, train, settings):
        self.model, self.settings = model, settings
        self.keys, self.bounds, self.cands = featurize(model, train)
        self.gold = np.concatenate([np.asarray(g, dtype=np.int32) for _, _, g in train])
        self.n_tokens, self.n_sentences = int(self.gold.shape[0]), len(train)
        self.lengths = np.diff(np.asarray(self.bounds, dtype=np.int64))
        self.mixed = settings.threads > 1 or settings.rounds is not None
        self.info = {"threads": settings.threads} if settings.threads > 1 else {}
        self.greedy = model.decoder == "greedy"
        self.search = self.shards = self.rng = None

    def start(self, emit, trans, seed):
        self.rng = np.random.default_rng(seed)
        if self.mixed:
            self.shards = _Shards(self, emit, trans)
        else:
            self.search = self.model.search(emit, trans, self.cands)

    def epoch(self, epoch, emit, trans, step, bar):
        """One epoch: (positions wrong before their update, the step reached)."""
        order = self.rng.permutation(len(self.bounds) - 1).astype(np.int64)
        if self.mixed:
            return self.shards.epoch(emit, trans, order, step, lambda done, tokens: bar(done, len(order), tokens))
        done_tokens = [0]

        def after(done, tokens):
            done_tokens[0] += tokens
            bar(done, len(order), done_tokens[0])
        return self.passes(self.search, trans, order, step, self.settings.slices, after)

    def passes(self, search, trans, order, step, slices, after):
        """The examples ``order`` names in at most ``slices`` compiled passes,
        ``after(examples done, positions)`` after each: (wrong, step reached)."""
        wrong = 0
        cuts = np.linspace(0, len(order), max(1, min(len(order), slices)) + 1).astype(np.int64)
        for a, b in zip(cuts[:-1], cuts[1:]):
            if a < b:
                w, step = epoch_pass(search, trans, self.keys, self.bounds, self.gold, order[a:b], step,
                                     self.settings, self.greedy)
                wrong += w
                after(int(b), int(self.lengths[order[a:b]].sum()))
        return wrong, step

    def speed(self, stats):
        return f"{stats['tokens_per_second']:,.0f} positions/s"

    def finish_run(self):
        self.search = self.shards = None

    def close(self):
        self.keys = self.bounds = self.cands = self.gold = self.search = self.shards = None


def _mean(kept, selection, model):
    """The kept (score, epoch, emit, trans) of one run, or of several runs
    averaged (scored on dev again, the runs' epochs listed)."""
    if len(kept) == 1:
        return kept[0]
    emit = mean_table([b[2] for b in kept], len(model.tags))
    trans = np.mean([b[3] for b in kept], axis=0)
    score = selection.score(emit, trans, model.decoder == "greedy") if selection.n else None
    return (score, [b[1] for b in kept], emit, trans)


FEATURIZE_CHUNK = 1000
"""Examples featurized at a time for training (see :func:`featurize`)."""


class KeyRows(NamedTuple):
    """The feature keys of a data set as 32-bit ``ids`` (a row per position)
    into ``vocab``, its distinct 64-bit keys: half the memory of the keys,
    which training keeps for all its epochs."""
    ids: np.ndarray
    vocab: np.ndarray

    @property
    def shape(self):
        return self.ids.shape


def featurize(model, examples, chunk=None):
    """(:class:`KeyRows`, bounds, candidates) of (input, context, gold)
    ``examples``, featurized a chunk at a time so the 64-bit keys of the
    whole set are never held; gold not covering the positions: InputError."""
    chunk = chunk or FEATURIZE_CHUNK
    n_rows = sum(len(g) for _, _, g in examples)
    numbering = KeyIds()
    ids = classes = cands = None
    pad = None                   # the id of PAD_KEY, where rows are padded
    bounds = [np.zeros(1, dtype=np.int64)]
    at = 0
    for i in range(0, len(examples), chunk):
        part = examples[i:i + chunk]
        k, b, c, _ = model.featurize([(x, ctx) for x, ctx, _ in part])
        n, width = k.shape
        if at + n <= n_rows:
            if ids is None or width > ids.shape[1]:
                # per-token feature dicts: as wide as the widest row (padded)
                ids, pad = _widen(ids, n_rows, width, pad, numbering)
            if width == ids.shape[1]:
                numbering.add(k, ids[at:at + n])        # in place: no copy of the chunk
            else:
                if pad is None:
                    pad = _pad_id(numbering)
                ids[at:at + n, :width] = numbering.add(k)
                ids[at:at + n, width:] = pad
            if c is not None:
                if classes is None:
                    classes = np.full(n_rows, -1, dtype=np.int32)      # -1: open
                classes[at:at + n] = c[0]
                cands = c
        bounds.append(np.asarray(b, dtype=np.int64)[1:] + at)
        at += n
        del k, b, c
    if at != n_rows:
        raise InputError(f"the gold tags cover {n_rows} positions, the inputs {at}")
    if ids is None:
        ids = np.zeros((0, 0), dtype=np.uint32)
    vocab = numbering.by_frequency(ids)     # frequent keys first: fewer cache misses
    del numbering                           # the probe table
    if cands is not None:
        cands = (classes,) + tuple(cands[1:])
    return KeyRows(ids, vocab), np.concatenate(bounds), cands


def _widen(ids, n_rows, width, pad, numbering):
    """``ids`` (None: none) widened to ``width`` columns, padded; and the pad id."""
    grown = np.empty((n_rows, width), dtype=np.uint32)
    if ids is not None:
        if pad is None:
            pad = _pad_id(numbering)
        grown[:, :ids.shape[1]] = ids
        grown[:, ids.shape[1]:] = pad
    return grown, pad


def _pad_id(numbering):
    """The id of the padding key (0), which training never stores."""
    return int(numbering.add(np.zeros(1, dtype=np.uint64))[0])


def _keep(model, best, histories, has_dev, settings, backend):
    """Put the weights of ``best`` in the model, and its training info with
    the learning curve of the first run in ``histories``."""
    score, best_epoch, best_emit, best_trans = best
    _install(model, best_emit, best_trans)
    history = histories[0]
    model.training_info = {"epochs": settings.epochs, "best_epoch": best_epoch, "seed": settings.seed,
                           **settings.rule, "dev_score": score, "train_tokens": backend.n_tokens,
                           "train_sentences": backend.n_sentences,
                           # the learning curve, per epoch (fasttag.plot draws it)
                           "train_accuracy": [h["train_accuracy"] for h in history],
                           "dev_scores": [h["dev_score"] for h in history] if has_dev else None}
    if isinstance(best_epoch, list):
        model.training_info.update(ensemble=len(best_epoch), best_epoch=best_epoch[0], best_epochs=best_epoch)
    model.training_info.update(backend.info)


class Selection:
    """Choosing the epoch to keep: the averaged weights of the epoch with
    the best dev score, or of the last epoch without dev data."""

    def __init__(self, model, dev, evaluate=None):
        self.model, self.evaluate, self.n = model, evaluate, len(dev or ())
        if dev:
            self.keys, self.bounds, self.cands = featurize(model, dev)
            self.gold = [np.asarray(g, dtype=np.int32) for _, _, g in dev]

    def update(self, best, epoch, emit, trans, step, stats, greedy):
        """``best`` after ``epoch``: (score, epoch, averaged emission table,
        averaged transitions); puts the dev score in ``stats``."""
        avg_emit, avg_trans = emit.averaged(step), trans.averaged(step)
        if not self.n:
            return (None, epoch, avg_emit, avg_trans)
        score = self.score(avg_emit, avg_trans, greedy)
        stats["dev_score"] = score
        return (score, epoch, avg_emit, avg_trans) if best is None or score > best[0] else best

    def score(self, emit, trans, greedy):
        """The dev score of these weights."""
        keys, vocab = key_arrays(self.keys)
        ids = self.model.search(emit, trans, self.cands).decode(keys, self.bounds, greedy=greedy, vocab=vocab)
        pred = [ids[self.bounds[i]:self.bounds[i + 1]] for i in range(self.n)]
        return _accuracy(pred, self.gold) if self.evaluate is None else float(self.evaluate(pred))


def _accuracy(pred, gold):
    if not pred or not sum(len(g) for g in gold):
        return 0.0
    return float(np.mean(np.concatenate(pred) == np.concatenate(gold)))


ALGORITHMS = ("perceptron", "mira")


def check_settings(settings, name):
    """Check the training settings a model file records (``name``: where),
    which fine-tuning and :class:`Online` reuse; ModelFormatError if bad."""
    if not isinstance(settings, dict):
        raise ModelFormatError(f"corrupt fasttag model: {name} is a {type(settings).__name__}, not an object")
    algorithm, k, C = settings.get("algorithm"), settings.get("k"), settings.get("C")
    if "algorithm" in settings and algorithm not in ALGORITHMS:
        raise ModelFormatError(f"corrupt fasttag model: {name} algorithm {shown(algorithm)} is not "
                               f"{' or '.join(ALGORITHMS)}")
    if "k" in settings and (type(k) is not int or not 1 <= k <= MAX_MIRA_K):
        raise ModelFormatError(f"corrupt fasttag model: {name} k {shown(k)} is not an integer from 1 to "
                               f"{MAX_MIRA_K}")
    if "C" in settings and (type(C) not in (int, float) or not 0 < C < float("inf")):
        raise ModelFormatError(f"corrupt fasttag model: {name} C {shown(C)} is not a positive number")


class Online:
    """Training a batch at a time, for callers that own the loop
    (``partial_fit``, spaCy's ``update``): each :meth:`update` is one pass,
    continuing the weights and average, which it writes back to the model."""

    def __init__(self, model, settings):
        self.model, self.settings = model, settings
        self.emit, self.trans = trainable_copy(model)
        self.step = 0
        self.n_tags = len(model.tags)

    def update(self, data):
        """One pass over ``data``: (input, context, gold tag ids) triples.
        Returns the positions decoded wrongly before their update."""
        if not data:
            return 0
        model = self.model
        if len(model.tags) != self.n_tags:
            raise ValueError("the model's tag set changed since this run started")
        batch = Local(model, data, self.settings)
        if len(batch.gold) and (batch.gold.min() < 0 or batch.gold.max() >= len(model.tags)):
            raise InputError("gold tags must be the model's tags, one per position")
        wrong, self.step = batch.passes(model.search(self.emit, self.trans, batch.cands), self.trans,
                                        np.arange(len(data), dtype=np.int64), self.step, 1, lambda *_: None)
        _install(model, self.emit.averaged(self.step), self.trans.averaged(self.step))
        return int(wrong)


def epoch_pass(search, trans, keys, bounds, gold, order, step, settings, greedy):
    """One compiled pass over the examples ``order`` names, by the update
    rule of ``settings``: (positions wrong, the step reached)."""
    keys, vocab = key_arrays(keys)
    if settings.algorithm == "mira":
        from .._core.kbest import mira_epoch
        return mira_epoch(search, trans, keys, bounds, gold, order, step, k=settings.k, C=settings.C, vocab=vocab)
    return search.train_epoch(trans, keys, bounds, gold, order, step, greedy=greedy, vocab=vocab)


def key_arrays(keys):
    """(keys, vocab) as the compiled loops take them: ids and their
    vocabulary, or uint64 keys and None."""
    return (keys.ids, keys.vocab) if isinstance(keys, KeyRows) else (keys, None)


class _Shards:
    """The shards of multi-threaded training: per thread a trainable copy
    of the mixed weights and its own search; an epoch is rounds of mixing."""

    def __init__(self, local, emit, trans):
        emit.loosen()                       # the shards copy its arrays as they are
        self.local, self.lengths = local, local.lengths
        self.copies = [(WeightTable(), AveragedVector(trans.size)) for _ in range(local.settings.threads)]
        self.searches = [local.model.search(e, t, local.cands) for e, t in self.copies]
        self.mixed = None       # what the last round changed: the copies follow it

    def epoch(self, emit, trans, order, step, bar):
        """One epoch over ``order``, mixed into ``emit``/``trans``: (positions
        wrong, the step reached)."""
        rounds = self.local.settings.rounds
        if rounds is None:
            rounds = min(MAX_ROUNDS, -(-int(self.lengths.sum()) // (ROUND_POSITIONS * len(self.copies))))
        rounds = max(1, min(rounds, len(order) // (4 * len(self.copies))))
        cuts = np.linspace(0, len(order), rounds + 1).astype(np.int64)
        slices = max(1, -(-max(1, min(len(order), self.local.settings.slices)) // rounds))
        wrong = 0
        done = [0, 0]                           # examples, positions done before this round
        with ThreadPoolExecutor(max_workers=len(self.copies)) as pool:
            for a, b in zip(cuts[:-1], cuts[1:]):
                w, step = self.round(pool, emit, trans, order[a:b], step, slices, bar, done)
                wrong += w
        return wrong, step

    def round(self, pool, emit, trans, order, step, slices, bar, before):
        """One round over ``order``: each shard, in its own thread, copies
        the mixed weights, trains on its part and collects its changes;
        then the changes are mixed, in shard order."""
        lengths = self.lengths
        parts = mixing.deal(order, lengths, len(self.copies))
        stop = threading.Event()
        done = [[0, 0] for _ in parts]           # per shard: examples, positions done

        def work(i):
            if stop.is_set():
                return None
            shard_emit, shard_trans = self.copies[i]
            mixing.start_round(shard_emit, shard_trans, emit, trans, self.mixed)

            def after(examples, positions):
                if stop.is_set():
                    raise _Halted
                done[i][0] = examples
                done[i][1] += positions
            # step 1 stands for the mixed weights
            wrong, _ = self.local.passes(self.searches[i], shard_trans, parts[i], 1, slices, after)
            return mixing.round_changes(shard_emit, shard_trans, len(parts[i]), wrong, emit)

        futures = [pool.submit(work, i) for i in range(len(parts))]
        try:
            while wait(futures, timeout=0.2)[1]:
                bar(before[0] + sum(d[0] for d in done), before[1] + sum(d[1] for d in done))
            changes = [f.result() for f in futures]
        except BaseException:
            stop.set()
            wait(futures)
            self.mixed = None
            raise
        before[0] += len(order)
        before[1] += int(lengths[order].sum())
        bar(*before)
        step += len(order)
        self.mixed = mixing.mix(emit, trans, changes, step)
        return sum(c.wrong for c in changes), step


class _Halted(Exception):
    """A shard's thread stops: the round was interrupted."""


def trainable_copy(model):
    """Trainable (emission table, transition vector) holding the model's
    weights: where fine-tuning and online training start."""
    emit = table_from_arrays(table_to_arrays(model.emit, "emit"), "emit", len(model.tags))
    trans = AveragedVector(transition_size(len(model.tags)))
    trans.set_weights(np.asarray(model.trans, dtype=np.float64))
    return emit, trans


def _install(model, emit, trans):
    """Put averaged weights in the model, rounded to float32 so that it
    predicts the same after a save."""
    model.emit = table_from_arrays(table_to_arrays(emit, "emit"), "emit", len(model.tags))
    model.trans = trans.astype(np.float32).astype(np.float64)
