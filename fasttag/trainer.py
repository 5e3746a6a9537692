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
from .errors import InputError
from .tables import table_from_arrays, table_to_arrays


def fit(model, train, dev=None, *, epochs, seed=0, algorithm="perceptron", k=1, C=1.0,
        evaluate=None, verbose=None, name="train", init=False):
    """Train ``model`` in place on ``train``: (input, context, gold tag ids)
    triples.  Options are checked by :mod:`fasttag.options` before any call.

    ``evaluate(dev_examples_predicted_ids) -> float`` is the dev score (a
    fraction; token accuracy when None).  The epoch with the best score
    is kept; without ``dev``, the last epoch is kept.  Sets
    ``model.training_info`` and returns per-epoch statistics.  With
    ``init``, training continues from the model's weights (fine-tuning):
    the perceptron starts from them, and they count in the average from
    the first step on.
    """
    if verbose is None:
        verbose = sys.stderr.isatty()
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
        emit = table_from_arrays(table_to_arrays(model.emit, "emit"), "emit", len(model.tags))
        trans = AveragedVector(transition_size(len(model.tags)))
        trans.set_weights(np.asarray(model.trans, dtype=np.float64))
    else:
        emit = WeightTable(initial_features=1 << 16)
        trans = AveragedVector(transition_size(len(model.tags)))
    search = model.search(emit, trans, cands)
    rng = np.random.default_rng(seed)
    step = 0
    best = None
    history = []
    n_tokens = int(gold.shape[0])
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(train)).astype(np.int64)
        t0 = time.perf_counter()
        if algorithm == "mira":
            from ._kbest import mira_epoch
            wrong, step = mira_epoch(search, trans, keys, bounds, gold, order, step, k=k, C=C)
        else:
            wrong, step = search.train_epoch(trans, keys, bounds, gold, order, step, greedy=greedy)
        seconds = time.perf_counter() - t0
        stats = {"epoch": epoch, "train_accuracy": 1 - wrong / max(n_tokens, 1),
                 "seconds": seconds, "tokens_per_second": n_tokens / max(seconds, 1e-9)}
        if dev or epoch == epochs:
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
        elif epoch == epochs:
            best = (None, epoch, avg_emit, avg_trans)
        history.append(stats)
        if verbose:
            dev_text = f"  dev {100 * stats['dev_score']:.2f}%" if "dev_score" in stats else ""
            print(f"[fasttag {name}] epoch {epoch}/{epochs}  train acc {100 * stats['train_accuracy']:.2f}%"
                  f"{dev_text}  {stats['tokens_per_second']:,.0f} positions/s", file=sys.stderr)
    score, best_epoch, best_emit, best_trans = best
    model.emit = table_from_arrays(table_to_arrays(best_emit, "emit"), "emit", len(model.tags))
    model.trans = best_trans.astype(np.float32).astype(np.float64)
    model.training_info = {"epochs": epochs, "best_epoch": best_epoch, "seed": seed,
                           "algorithm": algorithm, "k": k, "C": C,
                           "dev_score": score, "train_tokens": n_tokens,
                           "train_sentences": len(train)}
    return history


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
        T = len(model.tags)
        self.emit = table_from_arrays(table_to_arrays(model.emit, "emit"), "emit", T)
        self.trans = AveragedVector(transition_size(T))
        self.trans.set_weights(np.asarray(model.trans, dtype=np.float64))
        self.step = 0
        self.n_tags = T

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
        if self.algorithm == "mira":
            from ._kbest import mira_epoch
            wrong, self.step = mira_epoch(search, self.trans, keys, bounds, gold, order, self.step,
                                          k=self.k, C=self.C)
        else:
            wrong, self.step = search.train_epoch(self.trans, keys, bounds, gold, order, self.step,
                                                  greedy=model.decoder == "greedy")
        model.emit = table_from_arrays(table_to_arrays(self.emit.averaged(self.step), "emit"), "emit",
                                       len(model.tags))
        model.trans = self.trans.averaged(self.step).astype(np.float32).astype(np.float64)
        return int(wrong)
