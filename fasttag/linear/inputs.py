"""Input conversion: every accepted input becomes CSR-like arrays.

``X`` is a dense numeric array-like or a scipy.sparse matrix (column j is
feature j), or, the NLP case, a list of samples each a list of feature
strings or a ``{feature: value}`` dict, hashed by the core's MurmurHash64A
straight into uint64 keys: no vocabulary, no scipy matrix (``n_features``
None keeps the 64-bit space, an int folds keys modulo it).  The learners
keep one weight row per column: for feature strings, the distinct keys seen
in training (``feature_keys_``); keys unseen in training are dropped at
prediction time.
"""
import numbers
from collections.abc import Mapping

import numpy as np

from .._core.weights import hash_strings
from ._weights import hash_feature_lists

__all__ = ["Design", "is_feature_input", "hash_features", "numeric_design", "map_keys"]


class Design:
    """A sample set as CSR arrays: ``indptr`` int64 (n + 1), ``idx`` int64
    (column of each value), ``val`` float64."""

    __slots__ = ("indptr", "idx", "val")

    def __init__(self, indptr, idx, val):
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.idx = np.ascontiguousarray(idx, dtype=np.int64)
        self.val = np.ascontiguousarray(val, dtype=np.float64)

    @property
    def n_samples(self):
        return len(self.indptr) - 1

    def rows(self):
        """Row index of every stored value."""
        return np.repeat(np.arange(self.n_samples, dtype=np.int64), np.diff(self.indptr))


def _is_arraylike(X):
    return isinstance(X, np.ndarray) or hasattr(X, "__array__") or hasattr(X, "tocsr")


def is_feature_input(X):
    """True for a list/tuple of feature-string lists or feature dicts."""
    if _is_arraylike(X) or not isinstance(X, (list, tuple)):
        return False
    for row in X:
        if isinstance(row, Mapping):
            return True
        if isinstance(row, str):
            raise TypeError("each sample must be a list of feature strings or a "
                            "{feature: value} dict, not a string")
        if isinstance(row, (list, tuple)):
            if len(row) == 0:
                continue
            return isinstance(row[0], str)
        return False
    return len(X) > 0


def hash_features(X, n_features=None):
    """Hash feature lists/dicts: returns ``(indptr, keys uint64, values)``."""
    n = len(X)
    fast = hash_feature_lists(X)        # lists of str: one compiled pass
    if fast is not None:
        indptr, keys = fast
        if n_features is not None:
            keys = keys % np.uint64(n_features)
        return indptr, keys, np.ones(len(keys))
    # the general path: dicts, tuples, str subclasses, or an error
    names, vals, lengths = [], [], np.empty(n, dtype=np.int64)
    for i, row in enumerate(X):
        before = len(names)
        if isinstance(row, Mapping):
            for name, value in row.items():
                if isinstance(value, str):
                    names.append(f"{name}={value}")
                    vals.append(1.0)
                elif isinstance(value, (numbers.Real, np.bool_)):
                    names.append(name)
                    vals.append(value)
                elif isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
                    names.extend(f"{name}={v}" for v in value)      # as DictVectorizer reads them
                    vals.extend([1.0] * len(value))
                else:
                    raise TypeError(f"sample {i}, feature {name!r}: a value must be a number, a string or a "
                                    f"list of strings, not {type(value).__name__}")
        else:
            names.extend(row)
            vals.extend([1.0] * len(row))
        lengths[i] = len(names) - before
    try:
        keys = hash_strings(names)
    except TypeError:
        raise TypeError("feature names must be strings") from None
    values = np.asarray(vals, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise ValueError("Input X contains NaN or infinity (a feature value).")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    if n_features is not None:
        keys = keys % np.uint64(n_features)
    return indptr, keys, values


def numeric_design(X):
    """CSR arrays of a validated float64 dense array or scipy.sparse matrix."""
    if hasattr(X, "tocsr"):
        X = X.tocsr()
        return Design(X.indptr, X.indices, X.data)
    n, d = X.shape
    return Design(np.arange(0, n * d + 1, max(d, 1), dtype=np.int64)[: n + 1] if d else np.zeros(n + 1),
                  np.tile(np.arange(d, dtype=np.int64), n), np.ascontiguousarray(X).ravel())


def map_keys(indptr, keys, values, feature_keys):
    """Design over the columns ``feature_keys`` (sorted); unknown keys dropped."""
    n = len(indptr) - 1
    if len(feature_keys) == 0 or len(keys) == 0:
        return Design(np.zeros(n + 1, dtype=np.int64), np.zeros(0, np.int64), np.zeros(0))
    pos = np.searchsorted(feature_keys, keys)
    pos[pos == len(feature_keys)] = 0
    known = feature_keys[pos] == keys
    if known.all():
        return Design(indptr, pos, values)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    counts = np.bincount(rows[known], minlength=n)
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=new_indptr[1:])
    return Design(new_indptr, pos[known], values[known])
