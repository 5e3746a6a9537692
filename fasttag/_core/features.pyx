# cython: language_level=3
"""Template features as hashes, without Python strings in the hot path.

Input: a matrix ``attrs[token, attribute]`` of uint64 attribute hashes for a
batch of sentences and their boundaries.  A template is up to
``MAX_PARTS`` (offset, attribute) parts and a seed; its feature for token i
combines the seed with each part's hash.  Positions outside the sentence
read a padding value that depends on the attribute and the distance (so
``w[-2]`` at the first token is "two before the start", not an error).
"""
import numpy as np

from libc.stdint cimport uint64_t, int64_t, int32_t

from .types cimport feat_t
from libc.stdlib cimport malloc, free

from .hashing cimport hash_combine, hash_combine_mixed, mix64
from .check cimport check_index, DEBUG_BUILD as _DEBUG_BUILD

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


cdef enum:
    MAX_BUFFER_OFFSET = 4096


cdef void extract_into(const uint64_t[:, ::1] attrs, const int64_t[::1] bounds,
                       const int32_t[:, ::1] offsets, const int32_t[:, ::1] attr_ids,
                       const int32_t[::1] n_parts, const uint64_t[::1] seeds,
                       uint64_t[:, ::1] keys) noexcept nogil:
    # Indices proven in range: ``extract`` validated attr ids and bounds;
    # positions outside [start, end) read pad_value instead of attrs.  (No
    # boundscheck override here: the debug build checks these memoryviews,
    # the release build turns the checks off for every module.)
    #
    # A value is read by many templates at many positions: each attribute
    # a template reads is mixed once per token into ``mixed`` (the first
    # step of hash_combine), a block of rows at a time.
    cdef Py_ssize_t n_attrs = attrs.shape[1], n_templates = seeds.shape[0]
    cdef Py_ssize_t s, i, t, p, r, m
    cdef int64_t start, end, pos, lo, hi
    cdef uint64_t h, v
    cdef int32_t a
    # the attributes any template reads, and each part's column among them
    cdef int32_t* used = <int32_t*>malloc(n_attrs * sizeof(int32_t))
    cdef int32_t* column = <int32_t*>malloc(n_attrs * sizeof(int32_t))
    cdef uint64_t* mixed = NULL
    cdef Py_ssize_t n_used = 0
    cdef int64_t max_off = 0
    if used == NULL or column == NULL:
        free(used)
        free(column)
        extract_plain(attrs, bounds, offsets, attr_ids, n_parts, seeds, keys)
        return
    for a in range(n_attrs):
        column[a] = -1
    for t in range(n_templates):
        for p in range(n_parts[t]):
            a = attr_ids[t, p]
            if column[a] < 0:
                column[a] = <int32_t>n_used
                used[n_used] = a
                n_used += 1
            if offsets[t, p] > max_off:
                max_off = offsets[t, p]
            if -<int64_t>offsets[t, p] > max_off:
                max_off = -<int64_t>offsets[t, p]
    if max_off > MAX_BUFFER_OFFSET:     # (templates keep offsets within +-1024)
        free(used)
        free(column)
        extract_plain(attrs, bounds, offsets, attr_ids, n_parts, seeds, keys)
        return
    # rows [lo, hi) of attrs mixed into a buffer of BLOCK + 2 * max_off rows
    cdef Py_ssize_t block = 4096
    cdef Py_ssize_t rows = block + 2 * max_off
    if n_used:
        mixed = <uint64_t*>malloc(rows * n_used * sizeof(uint64_t))
    if n_used and mixed == NULL:
        free(used)
        free(column)
        extract_plain(attrs, bounds, offsets, attr_ids, n_parts, seeds, keys)
        return
    cdef Py_ssize_t n_tokens = attrs.shape[0]
    cdef Py_ssize_t first = 0, last
    while first < n_tokens:
        last = min(first + block, n_tokens)
        # the rows the block's tokens can read
        lo = max(first - max_off, 0)
        hi = min(last + max_off, n_tokens)
        for r in range(lo, hi):
            for m in range(n_used):
                check_index((r - lo) * n_used + m, rows * n_used)
                mixed[(r - lo) * n_used + m] = mix64(attrs[r, used[m]])
        # sentences overlapping the block (bounds ascend)
        s = sentence_of(bounds, first)
        while s < bounds.shape[0] - 1 and bounds[s] < last:
            start = bounds[s]
            end = bounds[s + 1]
            for i in range(max(start, first), min(end, last)):
                for t in range(n_templates):
                    h = seeds[t]
                    for p in range(n_parts[t]):
                        pos = i + offsets[t, p]
                        a = attr_ids[t, p]
                        if pos < start:
                            v = mix64(pad_value(a, pos - start))
                        elif pos >= end:
                            v = mix64(pad_value(a, pos - end + 1))
                        else:
                            # pos within the sentence, within max_off of i
                            check_index((pos - lo) * n_used + column[a], rows * n_used)
                            v = mixed[(pos - lo) * n_used + column[a]]
                        h = hash_combine_mixed(h, v)
                    keys[i, t] = h
            s += 1
        first = last
    free(mixed)
    free(used)
    free(column)


cdef Py_ssize_t sentence_of(const int64_t[::1] bounds, int64_t i) noexcept nogil:
    """The sentence holding token i (the last s with bounds[s] <= i; empty
    sentences before it skipped), by binary search."""
    cdef Py_ssize_t lo = 0, hi = bounds.shape[0] - 1, mid
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bounds[mid] <= i:
            lo = mid
        else:
            hi = mid
    return lo


cdef void extract_plain(const uint64_t[:, ::1] attrs, const int64_t[::1] bounds,
                        const int32_t[:, ::1] offsets, const int32_t[:, ::1] attr_ids,
                        const int32_t[::1] n_parts, const uint64_t[::1] seeds,
                        uint64_t[:, ::1] keys) noexcept nogil:
    """The same keys without a buffer (when none can be had)."""
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
