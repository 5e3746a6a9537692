"""Shrink a bundled model: drop its small averaged emission weights.

The same rule as :meth:`fasttag.Segmenter.prune`, for the sequence model
of any task (the build scripts measure what it costs before using it).
"""
import numpy as np

from fasttag.tables import table_from_arrays, table_to_arrays


def prune_emissions(model, threshold):
    """Drop the emission weights of ``model`` (a SequenceModel) with
    ``|w| < threshold``; returns the number of weights kept."""
    arrs = table_to_arrays(model.emit, "emit")
    w = arrs["emit.weights"]
    keep = np.abs(w) >= threshold
    owner = np.repeat(np.arange(len(arrs["emit.counts"])), arrs["emit.counts"].astype(np.int64))
    counts = np.bincount(owner[keep], minlength=len(arrs["emit.counts"]))
    nonempty = counts > 0
    model.emit = table_from_arrays({"emit.keys": arrs["emit.keys"][nonempty],
                                    "emit.counts": counts[nonempty].astype(np.uint32),
                                    "emit.labels": arrs["emit.labels"][keep], "emit.weights": w[keep]},
                                   "emit", len(model.tags))
    return int(keep.sum())
