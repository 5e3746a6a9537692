"""Iterative parameter mixing (McDonald, Hall & Mann 2010) on threads or
Dask workers: the result depends on the seed and the number of shards only
(docs/training.md).  A round's shuffled examples are dealt into shards of
about equal positions (:func:`deal`); every shard starts from the mixed
weights ``W``, trains at steps 2..n_i + 1 (step 1 stands for ``W``) and
sends back only the entries it changed (:func:`round_changes`).

Mixing is per entry: ``W + sum_{i in S} (n_i / n_S) (w_i - W)`` over the
shards S that changed the entry; mixing whole vectors would divide a
correction only one shard could make by the number of shards.  Averaging
is as on one machine: an epoch of N examples adds N steps, ``N * W`` plus
each shard's sum of its weights minus ``W`` over its steps.
"""
from dataclasses import dataclass

import numpy as np

from .._core.weights import WeightTable


@dataclass
class Changes:
    """What a shard sends back after a round: its changed emission entries
    (weights, sums over steps 1..n + 1), its transition weights and sums,
    ``n`` examples, ``wrong`` positions and, where it could read them, the
    entries' mixed ``starts``."""
    keys: np.ndarray
    labels: np.ndarray
    weights: np.ndarray
    sums: np.ndarray
    trans_weights: np.ndarray
    trans_sums: np.ndarray
    n: int
    wrong: int
    starts: np.ndarray = None


def deal(order, lengths, shards):
    """``order`` (shuffled example indices) cut into ``shards`` consecutive
    parts of about equal positions (``lengths`` per example)."""
    sizes = np.cumsum(np.asarray(lengths, dtype=np.int64)[order])
    total = int(sizes[-1]) if len(sizes) else 0
    targets = [total * i / shards for i in range(1, shards)]
    cuts = [0] + [int(np.searchsorted(sizes, t, side="right")) for t in targets] + [len(order)]
    return [order[a:b] for a, b in zip(cuts[:-1], cuts[1:])]


def start_round(emit, trans, mixed_emit, mixed_trans, mixed=None):
    """A shard's copy before a round: the mixed weights (``mixed_emit``
    loose, only read), clean accumulators.  ``mixed``: :func:`mix`'s result
    when the copy was in step before it: only those entries are updated."""
    if mixed is None:
        emit.copy_from(mixed_emit)
    else:
        keys, labels = mixed
        emit.assign(keys, labels, mixed_emit.weights_at(keys, labels))
    trans.set_weights(mixed_trans.weights)


def round_changes(emit, trans, n, wrong, mixed_emit=None):
    """A shard's :class:`Changes` after a round of ``n`` examples (its
    accumulators reset), start weights read from ``mixed_emit`` if given."""
    keys, labels, weights, sums = emit.round_changes(n + 1)
    trans_weights, trans_sums = trans.round_sums(n + 1)
    starts = None if mixed_emit is None else mixed_emit.weights_at(keys, labels)
    return Changes(keys, labels, weights, sums, trans_weights, trans_sums, int(n), int(wrong), starts)


def mix(emit, trans, changes, step):
    """Mix the shards' ``changes``, in their order (same sums for any
    timing), into ``emit`` and ``trans`` at global step ``step``.  Returns
    the changed (keys, labels), for :func:`start_round`."""
    changes = [c for c in changes if c.n]
    total = sum(c.n for c in changes)
    if not total:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int32)
    # every shard started from the same W: read it before mixing any
    starts = [emit.weights_at(c.keys, c.labels) if c.starts is None else c.starts for c in changes]
    keys, labels, sizes = _changed_by(changes)
    trans_start = trans.weights
    trans_dw = np.zeros(trans.size)
    trans_dsum = np.zeros(trans.size)
    for c, w0 in zip(changes, starts):
        share = c.n / sizes.weights_at(c.keys, c.labels)
        emit.mix(c.keys, c.labels, share * (c.weights - w0), c.sums - (c.n + 1) * w0, step)
        trans_dw += (c.n / total) * (c.trans_weights - trans_start)
        trans_dsum += c.trans_sums - (c.n + 1) * trans_start
    trans.mix(trans_dw, trans_dsum, step)
    return keys, labels


def _changed_by(changes):
    """The entries the shards changed, as (keys, labels), and a table of
    the total size of the shards that changed each (their denominators)."""
    keys = np.concatenate([c.keys for c in changes])
    labels = np.concatenate([c.labels for c in changes])
    if len(changes) == 1:
        return keys, labels, _Whole(changes[0].n)
    sizes = WeightTable(initial_features=max(1024, len(keys)))
    for c in changes:
        m = len(c.keys)
        sizes.mix(c.keys, c.labels, np.full(m, float(c.n)), np.zeros(m), 0)
    return keys, labels, sizes


class _Whole:
    """The denominators when one shard changed everything: its size."""

    def __init__(self, n):
        self.n = n

    def weights_at(self, keys, labels):
        return np.full(len(keys), float(self.n))
