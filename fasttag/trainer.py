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
        evaluate=None, verbose=None, name="train"):
    """Train ``model`` in place on ``train``: (input, context, gold tag ids)
    triples.  Options are checked by :mod:`fasttag.options` before any call.

    ``evaluate(dev_examples_predicted_ids) -> float`` is the dev score (a
    fraction; token accuracy when None).  The epoch with the best score
    is kept; without ``dev``, the last epoch is kept.  Sets
    ``model.training_info`` (with the training-pass accuracy and the dev
    score of every epoch: the learning curve the model file keeps) and
    returns per-epoch statistics.
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
                           "train_sentences": len(train),
                           # the learning curve, per epoch (fasttag.plot draws it)
                           "train_accuracy": [h["train_accuracy"] for h in history],
                           "dev_scores": [h["dev_score"] for h in history] if dev else None}
    return history


def _accuracy(pred, gold):
    if not pred or not sum(len(g) for g in gold):
        return 0.0
    return float(np.mean(np.concatenate(pred) == np.concatenate(gold)))
