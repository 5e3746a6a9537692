"""The one training loop of every sequence task.

Collins' structured perceptron, or k-best MIRA, over a
:class:`fasttag.sequence.SequenceModel`.  Each epoch shuffles the
examples with a seeded generator.  The compiled epoch decodes every
example with the current weights.  Where the best path differs from the
gold path, it adds the gold path's features and subtracts the predicted
path's.  Weights are averaged lazily, one averaging step per example.
With a dev set, the averaged weights of the best-scoring epoch are kept.

The kept weights are rounded to float32, the precision of model files.
So a model predicts the same before and after a save.
"""
import sys
import time

import numpy as np

from ._core import AveragedVector, WeightTable
from ._sequence import transition_size
from .errors import InputError, TrainingInterrupted
from .progress import Progress
from .tables import table_from_arrays, table_to_arrays


def fit(model, train, dev=None, *, epochs, seed=0, algorithm="perceptron", k=1, C=1.0,
        evaluate=None, verbose=None, name="train", progress=None, slices=100, init=False):
    """Train ``model`` in place on ``train``: (input, context, gold tag ids)
    triples.  Options are checked by :mod:`fasttag.options` before any call.

    ``evaluate(dev_examples_predicted_ids) -> float`` is the dev score (a
    fraction; token accuracy when None).  The epoch with the best score
    is kept; without ``dev``, the last epoch is kept.  Sets
    ``model.training_info`` (with the training-pass accuracy and the dev
    score of every epoch: the learning curve the model file keeps) and
    returns per-epoch statistics.  With ``init``, training continues from
    the model's weights (fine-tuning): the perceptron starts from them, and
    they count in the average from the first step on.

    ``progress`` (a :class:`fasttag.progress.Progress`) reports one line
    per epoch and, on a terminal, a live bar; without it ``verbose``
    decides (None: when standard error is a terminal).  Each epoch runs as
    ``slices`` compiled calls (the bar moves and Ctrl-C is answered between
    them; the model is the same for any number).

    Ctrl-C (KeyboardInterrupt) during an epoch raises
    :class:`fasttag.errors.TrainingInterrupted` with ``model`` set when an
    epoch was completed: the model then holds the best completed epoch, and
    its ``training_info`` says ``interrupted_at_epoch``.
    """
    if progress is None:
        progress = Progress(name, sys.stderr.isatty() if verbose is None else verbose)
    if not train:
        raise InputError("no training sentences")
    keys, bounds, cands, _ = model.featurize([(x, c) for x, c, _ in train])
    gold = np.concatenate([np.asarray(g, dtype=np.int32) for _, _, g in train])
    if len(gold) != keys.shape[0]:
        raise InputError(f"the gold tags cover {len(gold)} positions, the inputs {keys.shape[0]}")
    if dev:
        dev_keys, dev_bounds, dev_cands, _ = model.featurize([(x, c) for x, c, _ in dev])
        dev_gold = [np.asarray(g, dtype=np.int32) for _, _, g in dev]
    greedy = model.decoder == "greedy"
    if init:
        emit, trans = _trainable_copy(model)
    else:
        emit = WeightTable(initial_features=1 << 16)
        trans = AveragedVector(transition_size(len(model.tags)))
    search = model.search(emit, trans, cands)
    rng = np.random.default_rng(seed)
    step = 0
    best = None
    history = []
    n_tokens = int(gold.shape[0])
    lengths = np.diff(np.asarray(bounds, dtype=np.int64))
    # the epoch runs in slices: the live bar moves and Ctrl-C is answered
    # between them (the compiled loop holds no GIL); the result is the same
    n_slices = max(1, min(len(train), slices))
    finished = 0         # the last epoch whose weights were kept in ``best``
    try:
        for epoch in range(1, epochs + 1):
            order = rng.permutation(len(train)).astype(np.int64)
            t0 = time.perf_counter()
            wrong = done_tokens = 0
            cuts = np.linspace(0, len(order), n_slices + 1).astype(np.int64)
            for a, b in zip(cuts[:-1], cuts[1:]):
                if a == b:
                    continue
                part = order[a:b]
                w, step = _pass(search, trans, keys, bounds, gold, part, step, algorithm, k, C, greedy)
                wrong += w
                done_tokens += int(lengths[part].sum())
                progress.bar(f"epoch {epoch}/{epochs}", int(b), len(order), t0, done_tokens, "positions")
            seconds = time.perf_counter() - t0
            stats = {"epoch": epoch, "train_accuracy": 1 - wrong / max(n_tokens, 1),
                     "seconds": seconds, "tokens_per_second": n_tokens / max(seconds, 1e-9)}
            # averaged every epoch, so that Ctrl-C in the next one keeps this one
            avg_emit = emit.averaged(step)
            avg_trans = trans.averaged(step)
            if dev:
                ids = model.search(avg_emit, avg_trans, dev_cands).decode(dev_keys, dev_bounds, greedy=greedy)
                pred = [ids[dev_bounds[i]:dev_bounds[i + 1]] for i in range(len(dev))]
                if evaluate is None:
                    score = _accuracy(pred, dev_gold)
                else:
                    score = float(evaluate(pred))
                stats["dev_score"] = score
                if best is None or score > best[0]:
                    best = (score, epoch, avg_emit, avg_trans)
            else:
                best = (None, epoch, avg_emit, avg_trans)
            finished = epoch
            history.append(stats)
            dev_text = f"  dev {100 * stats['dev_score']:.2f}%" if "dev_score" in stats else ""
            progress.line(f"epoch {epoch}/{epochs}  train acc {100 * stats['train_accuracy']:.2f}%"
                          f"{dev_text}  {stats['tokens_per_second']:,.0f} positions/s  {seconds:.1f}s")
    except KeyboardInterrupt:
        progress.clear()
        if best is None:
            raise TrainingInterrupted(finished + 1) from None
        _keep(model, best, history, bool(dev), epochs, seed, algorithm, k, C, n_tokens, len(train))
        model.training_info["interrupted_at_epoch"] = finished + 1
        raise TrainingInterrupted(finished + 1, model) from None
    _keep(model, best, history, bool(dev), epochs, seed, algorithm, k, C, n_tokens, len(train))
    return history


def _keep(model, best, history, has_dev, epochs, seed, algorithm, k, C, n_tokens, n_sentences):
    """Put the weights of ``best`` (score, epoch, emit, transitions) in the
    model, rounded to float32 as files store them, and its training info
    with the curve of the epochs in ``history``."""
    score, best_epoch, best_emit, best_trans = best
    _install(model, best_emit, best_trans)
    model.training_info = {"epochs": epochs, "best_epoch": best_epoch, "seed": seed,
                           "algorithm": algorithm, "k": k, "C": C,
                           "dev_score": score, "train_tokens": n_tokens,
                           "train_sentences": n_sentences,
                           # the learning curve, per epoch (fasttag.plot draws it)
                           "train_accuracy": [h["train_accuracy"] for h in history],
                           "dev_scores": [h["dev_score"] for h in history] if has_dev else None}


def _accuracy(pred, gold):
    if not pred or not sum(len(g) for g in gold):
        return 0.0
    return float(np.mean(np.concatenate(pred) == np.concatenate(gold)))


class Online:
    """Training a batch at a time, for callers that own the loop
    (``partial_fit``, spaCy's ``update``): each :meth:`update` is one pass
    over its examples in order, continuing the weights, the step counter
    and the lazy average of the previous ones.  The model's own weights
    (what it predicts with) start the run and count in the average from
    the first step; :meth:`update` writes the average so far back into the
    model."""

    def __init__(self, model, algorithm="perceptron", k=1, C=1.0):
        self.model = model
        self.algorithm, self.k, self.C = algorithm, k, C
        self.emit, self.trans = _trainable_copy(model)
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
        keys, bounds, cands, _ = model.featurize([(x, c) for x, c, _ in data])
        gold = np.concatenate([np.asarray(g, dtype=np.int32) for _, _, g in data])
        if len(gold) != keys.shape[0] or (len(gold) and (gold.min() < 0 or gold.max() >= len(model.tags))):
            raise InputError("gold tags must be the model's tags, one per position")
        search = model.search(self.emit, self.trans, cands)
        order = np.arange(len(data), dtype=np.int64)
        wrong, self.step = _pass(search, self.trans, keys, bounds, gold, order, self.step, self.algorithm,
                                 self.k, self.C, model.decoder == "greedy")
        _install(model, self.emit.averaged(self.step), self.trans.averaged(self.step))
        return int(wrong)


def _pass(search, trans, keys, bounds, gold, order, step, algorithm, k, C, greedy):
    """One compiled pass over the examples ``order`` names: (positions
    wrong before their update, the step reached)."""
    if algorithm == "mira":
        from ._kbest import mira_epoch
        return mira_epoch(search, trans, keys, bounds, gold, order, step, k=k, C=C)
    return search.train_epoch(trans, keys, bounds, gold, order, step, greedy=greedy)


def _trainable_copy(model):
    """Trainable (emission table, transition vector) holding the model's
    weights: where fine-tuning and online training start."""
    emit = table_from_arrays(table_to_arrays(model.emit, "emit"), "emit", len(model.tags))
    trans = AveragedVector(transition_size(len(model.tags)))
    trans.set_weights(np.asarray(model.trans, dtype=np.float64))
    return emit, trans


def _install(model, emit, trans):
    """Put averaged weights in the model, rounded to float32 as files
    store them (so a model predicts the same before and after a save)."""
    model.emit = table_from_arrays(table_to_arrays(emit, "emit"), "emit", len(model.tags))
    model.trans = trans.astype(np.float32).astype(np.float64)
