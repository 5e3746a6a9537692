# cython: language_level=3
"""Dictionary matching of the segmentation featurizer, compiled.

For every character of a batch, the lengths of the longest dictionary
words that start at it, end at it and strictly contain it (the ``db``,
``de`` and ``dm`` attributes of :mod:`fasttag.charfeatures`), in one pass:
each position extends its rolling hash one character at a time (the same
hash as :func:`fasttag.charfeatures.word_hashes`), and a word is looked up
through the set's bit filter (small enough to stay in cache) and a binary search of its sorted hashes.
No temporary array per length, and no Python object in the loop.
"""
import numpy as np

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

from .hashing cimport mix64
from .check cimport check_index, DEBUG_BUILD as _DEBUG_BUILD

DEBUG_BUILD = bool(_DEBUG_BUILD)
"""True when this module was compiled by the debug build (indices checked)."""

cdef uint64_t P = 0x9E3779B97F4A7C15ULL


cdef inline bint member(uint64_t h, const uint64_t[::1] hashes, const uint8_t[::1] bitmap,
                        uint64_t mask) noexcept nogil:
    cdef Py_ssize_t lo = 0, hi = hashes.shape[0], mid
    if not (bitmap[(h & mask) >> 3] >> (h & 7)) & 1:
        return False
    while lo < hi:          # the first hash >= h
        mid = (lo + hi) // 2
        if hashes[mid] < h:
            lo = mid + 1
        else:
            hi = mid
    return lo < hashes.shape[0] and hashes[lo] == h


def dictionary_lengths(const uint32_t[::1] cp, const int64_t[::1] sent_end,
                       const uint64_t[::1] hashes, const uint8_t[::1] bitmap,
                       const uint8_t[::1] want, int64_t[::1] db, int64_t[::1] de, int64_t[::1] dm):
    """Fill ``db``, ``de``, ``dm`` (zeros in) for the folded code points
    ``cp``: ``want[L]`` says which word lengths to look for (L >= 2),
    ``sent_end[i]`` is the end of position i's sentence (words never cross
    it), ``hashes`` the set's sorted word hashes and ``bitmap`` its filter
    packed 8 bits a byte, little-endian (a power of two in size: the low
    bits of a hash index it)."""
    cdef Py_ssize_t n = cp.shape[0], i, L, j, max_len = want.shape[0] - 1
    cdef uint64_t mask = 8 * <uint64_t>bitmap.shape[0] - 1
    cdef uint64_t h, fin
    if sent_end.shape[0] != n or db.shape[0] != n or de.shape[0] != n or dm.shape[0] != n:
        raise ValueError("the arrays differ in length")
    if bitmap.shape[0] == 0 or bitmap.shape[0] & (bitmap.shape[0] - 1):
        raise ValueError("the filter's size must be a power of two")
    for i in range(n):
        if not i < sent_end[i] <= n:
            raise ValueError("a sentence end is out of range")
    with nogil:
        for i in range(n):
            h = 0
            for L in range(1, max_len + 1):
                if i + L > sent_end[i]:
                    break
                h = h * P + cp[i + L - 1]
                if L < 2 or not want[L]:
                    continue
                fin = mix64(h ^ ((<uint64_t>L & 0xFF) << 56))
                if not member(fin, hashes, bitmap, mask):
                    continue
                if L > db[i]:
                    db[i] = L
                if L > de[i + L - 1]:
                    de[i + L - 1] = L
                for j in range(i + 1, i + L - 1):
                    if L > dm[j]:
                        dm[j] = L
