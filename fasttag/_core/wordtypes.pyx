# cython: language_level=3
"""The per-token steps of the featurizers' value caches, compiled.

A word featurizer keeps one row of hashed attributes per word type and a
dict from word to row id (:class:`fasttag.features.WordFeaturizer`).  Per
token, tagging needs the word's id (:func:`lookup_ids`: one dict probe in
C, no Python bytecode) and, to score the features of each type once, the
distinct ids of a batch with each token's index among them
(:func:`distinct`: an open-addressing pass, O(n), instead of a sort).
Per-token feature columns (POS tags, document features) are hashed through
one dict per column the same way (:func:`column_values`).
"""
import numpy as np

from cpython.dict cimport PyDict_GetItemWithError
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.tuple cimport PyTuple_GET_ITEM
from cpython.ref cimport PyObject
from cpython.long cimport PyLong_AsLongLong
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc, free

from .hashing cimport mix64
from .check cimport check_index, DEBUG_BUILD as _DEBUG_BUILD

DEBUG_BUILD = bool(_DEBUG_BUILD)
"""True when this module was compiled by the debug build (indices checked)."""


def lookup_ids(dict index, list words):
    """(ids int64[n], number missing): ``index[word]`` per word, -1 where
    the word is not in ``index``.  An unhashable token is a TypeError (as
    ``dict.get`` gives).  Called with the GIL held: the dict may be read
    while another thread adds words under the featurizer's lock."""
    cdef Py_ssize_t i, n = PyList_GET_SIZE(words)
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] ids = out
    cdef PyObject* v
    cdef Py_ssize_t missing = 0
    for i in range(n):
        v = PyDict_GetItemWithError(index, <object>PyList_GET_ITEM(words, i))
        if v == NULL:
            # (an unhashable word raised instead: Cython declares the call
            # ``except? NULL``)
            ids[i] = -1
            missing += 1
        else:
            ids[i] = PyLong_AsLongLong(<object>v)
    return out, missing


def distinct(const int64_t[::1] ids):
    """(unique ids int64[k], index int64[n]): the distinct values of
    ``ids`` (non-negative) in order of first occurrence, and each
    position's index into them: ``unique[index] == ids``."""
    cdef Py_ssize_t n = ids.shape[0]
    index_arr = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] index = index_arr
    cdef int64_t[::1] out_view
    cdef Py_ssize_t size = 16
    while size < 2 * n:
        size <<= 1
    cdef uint64_t mask = size - 1
    cdef int64_t* keys = <int64_t*>malloc(size * sizeof(int64_t))
    cdef int64_t* slot_of = <int64_t*>malloc(size * sizeof(int64_t))
    cdef int64_t* first = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    if keys == NULL or slot_of == NULL or first == NULL:
        free(keys)
        free(slot_of)
        free(first)
        raise MemoryError()
    cdef Py_ssize_t i, k = 0
    cdef uint64_t h
    cdef int64_t v
    cdef bint negative = False
    try:
        with nogil:
            for i in range(size):
                keys[i] = -1
            for i in range(n):
                v = ids[i]
                if v < 0:
                    negative = True
                    break
                h = mix64(<uint64_t>v) & mask
                check_index(h, size)
                while keys[h] != -1 and keys[h] != v:
                    h = (h + 1) & mask
                    check_index(h, size)
                if keys[h] == -1:
                    keys[h] = v
                    slot_of[h] = k
                    check_index(k, n)
                    first[k] = v
                    k += 1
                index[i] = slot_of[h]
        if negative:
            raise ValueError("type ids must not be negative")
        unique = np.empty(k, dtype=np.int64)
        out_view = unique
        for i in range(k):
            out_view[i] = first[i]
    finally:
        free(keys)
        free(slot_of)
        free(first)
    return unique, index_arr


def column_values(list columns, list caches, uint64_t[:, ::1] out, Py_ssize_t first):
    """Fill ``out[i, first + j]`` with ``caches[j][columns[i][j]]`` (the
    hashed value of column j of token i); returns the number of values
    not in their cache (their entries are left as they were: add them
    and call again).  ``columns``: one sequence of column values per
    token."""
    cdef Py_ssize_t n = PyList_GET_SIZE(columns), m = PyList_GET_SIZE(caches)
    cdef Py_ssize_t i, j, missing = 0
    cdef PyObject* hit
    if out.shape[0] != n or not 0 <= first <= out.shape[1] - m:
        raise ValueError("the output does not fit the columns")
    for j in range(m):
        if type(<object>PyList_GET_ITEM(caches, j)) is not dict:
            raise TypeError("column caches must be dicts")
    for i in range(n):
        c = <object>PyList_GET_ITEM(columns, i)
        if type(c) is not tuple or len(<tuple>c) != m:
            c = tuple(c)
            if len(<tuple>c) != m:
                raise ValueError(f"token {i} has {len(<tuple>c)} column values, not {m}")
        for j in range(m):
            hit = PyDict_GetItemWithError(<dict>PyList_GET_ITEM(caches, j), <object>PyTuple_GET_ITEM(c, j))
            if hit == NULL:
                missing += 1
            else:
                out[i, first + j] = <uint64_t>(<object>hit)
    return missing
