# cython: language_level=3
"""Template features as hashes, without Python strings in the hot path.

Input: a matrix ``attrs[token, attribute]`` of uint64 attribute hashes for
all tokens of a batch of sentences (word-level attributes are hashed once per
word type by the Python featurizer and gathered by row), and the sentence
boundaries.  A template is a list of up to ``MAX_PARTS`` (offset, attribute)
parts and a seed (the hash of its name); its feature for token i is

    key = hash_combine(...hash_combine(seed, attrs[i + off_1, attr_1])...)

Positions outside the sentence read a padding value that depends on the
attribute and on how far outside they are (spaCy's PADDING idea), so
``w[-2]`` at the first token is "two before the start", not an error.
"""
import numpy as np

from libc.stdint cimport uint64_t, int64_t, int32_t

from ._types cimport feat_t
from ._hashing cimport hash_combine, mix64
from ._check cimport DEBUG_BUILD as _DEBUG_BUILD

DEBUG_BUILD = bool(_DEBUG_BUILD)
"""True when this module was compiled by the debug build (indices checked)."""


cdef inline uint64_t pad_value(int32_t attr, int64_t outside) noexcept nogil:
    """The attribute value read ``outside`` positions past an edge
    (negative: before the start; positive: after the end)."""
    return mix64(0x5EED5EED00000000ULL ^ (<uint64_t>(attr + 1) << 16) ^ <uint64_t>(outside + 0x8000))


def extract(const uint64_t[:, ::1] attrs, const int64_t[::1] bounds,
            const int32_t[:, ::1] offsets, const int32_t[:, ::1] attr_ids,
            const int32_t[::1] n_parts, const uint64_t[::1] seeds):
    """Feature keys ``uint64[n_tokens, n_templates]`` for a batch.

    ``bounds`` holds sentence starts and the final end (length n_sents + 1)
    as row indices into ``attrs``.  Templates are rows of ``offsets`` and
    ``attr_ids`` (the first ``n_parts[t]`` entries used).
    """
    cdef Py_ssize_t n_tokens = attrs.shape[0]
    cdef Py_ssize_t n_attrs = attrs.shape[1]
    cdef Py_ssize_t n_templates = seeds.shape[0]
    if bounds.shape[0] < 1 or bounds[0] != 0 or bounds[bounds.shape[0] - 1] != n_tokens:
        raise ValueError("bounds must run from 0 to the number of tokens")
    if offsets.shape[0] != n_templates or attr_ids.shape[0] != n_templates or n_parts.shape[0] != n_templates:
        raise ValueError("template arrays differ in length")
    cdef Py_ssize_t s, t, p
    for s in range(1, bounds.shape[0]):
        if bounds[s] < bounds[s - 1]:
            raise ValueError("bounds must not decrease")
    for t in range(n_templates):
        if not 0 <= n_parts[t] <= offsets.shape[1]:
            raise ValueError("bad template length")
        for p in range(n_parts[t]):
            if not 0 <= attr_ids[t, p] < n_attrs:
                raise ValueError(f"template {t} reads attribute {attr_ids[t, p]} of {n_attrs}")
    out = np.empty((n_tokens, n_templates), dtype=np.uint64)
    cdef uint64_t[:, ::1] keys = out
    if n_tokens == 0 or n_templates == 0:
        return out
    with nogil:
        extract_into(attrs, bounds, offsets, attr_ids, n_parts, seeds, keys)
    return out


cdef void extract_into(const uint64_t[:, ::1] attrs, const int64_t[::1] bounds,
                       const int32_t[:, ::1] offsets, const int32_t[:, ::1] attr_ids,
                       const int32_t[::1] n_parts, const uint64_t[::1] seeds,
                       uint64_t[:, ::1] keys) noexcept nogil:
    # Indices proven in range: ``extract`` validated attr ids and bounds;
    # positions outside [start, end) read pad_value instead of attrs.  (No
    # boundscheck override here: the debug build checks these memoryviews,
    # the release build turns the checks off for every module.)
    cdef Py_ssize_t s, i, t, p
    cdef int64_t start, end, pos
    cdef uint64_t h, v
    cdef int32_t a
    for s in range(bounds.shape[0] - 1):
        start = bounds[s]
        end = bounds[s + 1]
        for i in range(start, end):
            for t in range(seeds.shape[0]):
                h = seeds[t]
                for p in range(n_parts[t]):
                    pos = i + offsets[t, p]
                    a = attr_ids[t, p]
                    if pos < start:
                        v = pad_value(a, pos - start)
                    elif pos >= end:
                        v = pad_value(a, pos - end + 1)
                    else:
                        v = attrs[pos, a]
                    h = hash_combine(h, v)
                keys[i, t] = h
