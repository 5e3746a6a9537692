"""Weight tables in and out of model files, and averaged over training runs.

A table is stored as its canonical arrays (keys ascending, labels ascending
within a key) with the weights as float32 and zero weights pruned, so a
loaded and re-saved model is byte-identical to the original.
"""
import numpy as np

from .._core.weights import AveragedVector, WeightTable
from ..errors import ModelFormatError

__all__ = ["WeightTable", "AveragedVector", "table_to_arrays", "table_from_arrays", "mean_table"]


def table_to_arrays(table, prefix, min_abs=0.0):
    """Arrays ``{prefix}.keys/.counts/.labels/.weights`` for a model file,
    without the weights of magnitude below ``min_abs`` (nor zeros)."""
    arrs = table.to_arrays()
    weights = arrs["weights"].astype(np.float32)
    keep = (weights != 0) & (np.abs(weights) >= min_abs)
    counts = arrs["counts"]
    if not keep.all():
        owner = np.repeat(np.arange(len(counts)), counts)
        counts = np.bincount(owner[keep], minlength=len(counts)).astype(np.uint32)
        nonempty = counts > 0
        arrs["keys"] = arrs["keys"][nonempty]
        counts = counts[nonempty]
    labels = arrs["labels"][keep]
    n = int(labels.max()) + 1 if len(labels) else 0
    ltype = np.uint16 if n <= 0xFFFF else np.int32
    return {f"{prefix}.keys": arrs["keys"], f"{prefix}.counts": counts,
            f"{prefix}.labels": labels.astype(ltype), f"{prefix}.weights": weights[keep]}


def table_from_arrays(arrays, prefix, n_classes):
    """Rebuild a table from :func:`table_to_arrays` output; ModelFormatError
    if the arrays are missing or inconsistent."""
    try:
        parts = [arrays[f"{prefix}.{name}"] for name in ("keys", "counts", "labels", "weights")]
    except KeyError as exc:
        raise ModelFormatError(f"corrupt fasttag model: missing array {exc}") from None
    keys, counts, labels, weights = parts
    if any(a.ndim != 1 for a in parts):
        raise ModelFormatError(f"corrupt fasttag model: table {prefix!r} arrays are not vectors")
    if keys.dtype != np.uint64 or counts.dtype.kind != "u" or labels.dtype.kind not in "iu" \
            or weights.dtype.kind != "f":
        raise ModelFormatError(f"corrupt fasttag model: table {prefix!r} arrays have the wrong types")
    if len(labels) and (labels.min() < 0 or labels.max() >= max(n_classes, 1)):
        raise ModelFormatError(f"corrupt fasttag model: table {prefix!r} has labels out of range")
    # finite in float32 too: an overflow to inf would make inf - inf = NaN scores
    if not np.all(np.isfinite(weights)) or (len(weights) and np.abs(weights).max() > np.finfo(np.float32).max):
        raise ModelFormatError(f"corrupt fasttag model: table {prefix!r} holds non-finite weights")
    try:
        return WeightTable.from_arrays(keys, counts, labels.astype(np.int32), weights.astype(np.float64),
                                       n_classes=n_classes)
    except (ValueError, OverflowError) as exc:
        raise ModelFormatError(f"corrupt fasttag model: table {prefix!r}: {exc}") from None


def mean_table(tables, n_classes):
    """The entrywise mean of weight tables (an entry missing from a table
    counts as 0 there): one model from several training runs."""
    keys, labels, weights = [], [], []
    for table in tables:
        arrs = table.to_arrays()
        keys.append(np.repeat(arrs["keys"], arrs["counts"]))
        labels.append(arrs["labels"].astype(np.int64))
        weights.append(arrs["weights"])
    keys, labels, weights = np.concatenate(keys), np.concatenate(labels), np.concatenate(weights)
    order = np.lexsort((labels, keys))
    keys, labels, weights = keys[order], labels[order], weights[order]
    first = np.ones(len(keys), dtype=bool)      # the first of each (key, label) run
    first[1:] = (keys[1:] != keys[:-1]) | (labels[1:] != labels[:-1])
    mean = np.bincount(np.cumsum(first) - 1, weights=weights) / len(tables)
    keys, labels = keys[first], labels[first]
    new_key = np.ones(len(keys), dtype=bool)
    new_key[1:] = keys[1:] != keys[:-1]
    counts = np.bincount(np.cumsum(new_key) - 1, minlength=int(new_key.sum())).astype(np.uint32)
    return WeightTable.from_arrays(keys[new_key], counts, labels.astype(np.int32), mean, n_classes=n_classes)
