"""Iterative parameter mixing (McDonald, Hall & Mann 2010): training on
shards at once, on threads (:func:`fasttag.model.training.fit` with
``threads``) or on Dask workers (:mod:`fasttag.model.dask_training`).

Why mixing and not lock-free shared updates: each shard trains its own
copy, so the result depends on the seed and the number of shards only,
never on timing.

A round (a part of an epoch on threads, see ``training.ROUND_POSITIONS``;
one epoch on Dask): its shuffled examples are dealt into shards of about
equal size in positions (:func:`deal`).  Every shard starts from the mixed
weights ``W`` and trains on its examples in order, with clean averaging
accumulators, at steps 2..n_i + 1 (step 1 stands for ``W``).  Only the
entries a shard changed travel back (:func:`round_changes`).

Mixing is per entry: each weight becomes the average of the shards that
changed it, weighted by shard size (examples), ``W + sum_{i in S} (n_i /
n_S) (w_i - W)`` over the set S of shards that changed the entry.  McDonald
et al. mix whole vectors, ``W + sum_i (n_i / N) (w_i - W)``, which divides
a correction that only one shard could make (a rare feature's) by the
number of shards: at the same number of epochs that cost 0.2-0.3 points of
EWT accuracy on 2 threads and 1.4 on 8; mixing per entry keeps such
corrections whole and still averages the corrections that several shards
made at once (a frequent feature's).  Either way a weight is a convex
combination of the shards' weights.

The averaging convention: as on one machine, every example is one step,
and the final weights are the average, over all steps of all epochs, of
the weights in force after the step, the weights of the shard that took
it.  An epoch of N examples adds N steps: ``N * W`` plus each shard's
sum of its weights minus ``W`` over its own steps.  With one shard this
is single-machine averaging exactly (up to the order of float additions).
"""
from dataclasses import dataclass

import numpy as np

from .._core.weights import WeightTable


@dataclass
class Changes:
    """What a shard sends back after a round: its changed emission entries
    (their weights and the sums of their weights over the round's steps
    1..n + 1), its transition weights and sums, ``n`` examples (steps) and
    ``wrong`` positions decoded wrongly before their update.  ``starts``:
    the mixed weights of the entries when the round began, where the shard
    could read them (else :func:`mix` does)."""
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
    """A shard's copy (``emit``, ``trans``) before a round: the mixed
    weights, with clean accumulators.  ``mixed_emit`` must be loose
    (``WeightTable.loosen``); it is only read.  ``mixed``: what :func:`mix`
    returned after the last round, when the shard's copy was in step with
    the mixed table before that round; then only the entries the round
    changed are brought up to date, else the whole table is copied."""
    if mixed is None:
        emit.copy_from(mixed_emit)
    else:
        keys, labels = mixed
        emit.assign(keys, labels, mixed_emit.weights_at(keys, labels))
    trans.set_weights(mixed_trans.weights)


def round_changes(emit, trans, n, wrong, mixed_emit=None):
    """A shard's :class:`Changes` after a round of ``n`` examples; its
    accumulators are reset.  With ``mixed_emit`` (the mixed table the round
    started from, unchanged since), the changed entries' start weights are
    read from it."""
    keys, labels, weights, sums = emit.round_changes(n + 1)
    trans_weights, trans_sums = trans.round_sums(n + 1)
    starts = None if mixed_emit is None else mixed_emit.weights_at(keys, labels)
    return Changes(keys, labels, weights, sums, trans_weights, trans_sums, int(n), int(wrong), starts)


def mix(emit, trans, changes, step):
    """Mix the shards' ``changes`` (in their order: the sums are the same
    for any timing) into the mixed ``emit`` and ``trans`` after a round
    that ended at global step ``step``.  Returns the (keys, labels) of the
    entries that changed (once per shard that changed them), for
    :func:`start_round`."""
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
    """The entries the shards changed, as (keys, labels) (an entry changed
    by several shards comes once per shard), and a table of the total size
    of the shards that changed each (the denominator of its mixing
    weights).  Transition weights are dense: every shard changes almost all
    of them, so they mix by shard size."""
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
