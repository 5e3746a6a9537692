"""Iterative parameter mixing (McDonald, Hall & Mann 2010): training on
shards at once, on threads (:func:`fasttag.trainer.fit` with
``threads``) or on Dask workers (:mod:`fasttag.distributed`).

Why mixing and not lock-free shared updates: each shard trains its own
copy, so the result depends on the seed and the number of shards only,
never on timing.

A round (one epoch): the shuffled examples are dealt into shards of about
equal size in positions (:func:`deal`).  Every shard starts from the mixed
weights ``W`` and trains on its examples in order, with clean averaging
accumulators, at steps 2..n_i + 1 (step 1 stands for ``W``).  Only the
entries a shard changed travel back (:func:`round_changes`).  The mixed
weights are then ``W + sum_i (n_i / N) (w_i - W)``: the shards' weights
weighted by shard size (examples).

The averaging convention: as on one machine, every example is one step,
and the final weights are the average, over all steps of all epochs, of
the weights in force after the step, the weights of the shard that took
it.  An epoch of N examples adds N steps: ``N * W`` plus each shard's
sum of its weights minus ``W`` over its own steps.  With one shard this
is single-machine averaging exactly (up to the order of float additions).
"""
from dataclasses import dataclass

import numpy as np

from ._core import AveragedVector, WeightTable


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


def start_round(emit, trans, mixed_emit, mixed_trans):
    """A shard's copy (``emit``, ``trans``) before a round: the mixed
    weights, with clean accumulators.  ``mixed_emit`` must be loose
    (``WeightTable.loosen``); it is only read (shards copy it at once)."""
    emit.copy_from(mixed_emit)
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
    that ended at global step ``step``."""
    changes = [c for c in changes if c.n]
    total = sum(c.n for c in changes)
    if not total:
        return
    # every shard started from the same W: read it before mixing any
    starts = [emit.weights_at(c.keys, c.labels) if c.starts is None else c.starts for c in changes]
    trans_start = trans.weights
    trans_dw = np.zeros(trans.size)
    trans_dsum = np.zeros(trans.size)
    for c, w0 in zip(changes, starts):
        emit.mix(c.keys, c.labels, (c.n / total) * (c.weights - w0), c.sums - (c.n + 1) * w0, step)
        trans_dw += (c.n / total) * (c.trans_weights - trans_start)
        trans_dsum += c.trans_sums - (c.n + 1) * trans_start
    trans.mix(trans_dw, trans_dsum, step)
