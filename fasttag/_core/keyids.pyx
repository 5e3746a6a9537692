# cython: language_level=3
"""Dense 32-bit ids of 64-bit feature keys, for training.

Training keeps every template's key of every position for all its epochs,
and a training set has far fewer distinct keys than occurrences, so the
trainer stores each occurrence as a 4-byte id into the distinct keys and
the compiled loop reads ``vocab[id]``.  :class:`KeyIds` numbers keys in
order of first sight, one batch at a time; a key's id never changes, so the
batches of a training set fill one id matrix in turn.
"""
import numpy as np

cimport cython
from libc.stdint cimport uint32_t, uint64_t, int64_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from .types cimport feat_t
from .probe cimport Slot, SLOT_EMPTY, home_slot, probe, new_slots
from .buffers cimport reserve
from .check cimport check_index, DEBUG_BUILD as _DEBUG_BUILD

cdef extern from *:
    void __builtin_prefetch(const void* addr) noexcept nogil

DEBUG_BUILD = bool(_DEBUG_BUILD)
"""True when this module was compiled by the debug build (indices checked)."""

cdef uint64_t _MAX_KEYS = 0xFFFFFFFF
MAX_KEYS = _MAX_KEYS
"""The most distinct keys one numbering holds: ids are uint32, and the
probe's empty mark (2^32 - 1) is not an id."""


@cython.final
cdef class KeyIds:
    """A numbering of 64-bit keys: :meth:`add` gives each key of a batch
    its id (uint32), new keys the next ids in order of first sight;
    :meth:`by_frequency` renumbers them, the most frequent first;
    :meth:`vocabulary` is the keys in id order.  The probe table (a slot
    holds a key, its id and its count) is kept at most half full: 16 bytes
    a slot, freed with the numbering."""
    cdef Slot* slots
    cdef uint64_t n_slots
    cdef int shift
    cdef uint64_t* keys          # the keys in id order (slots[].n: their counts)
    cdef Py_ssize_t n_keys, cap_keys

    def __cinit__(self):
        self.slots = NULL
        self.keys = NULL
        self.n_keys = self.cap_keys = 0
        self.n_slots = 1024
        self.shift = 54
        self.slots = new_slots(self.n_slots)
        if self.slots == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.slots)
        free(self.keys)

    def __len__(self):
        return self.n_keys

    cdef int _grow(self) except -1 nogil:
        """Twice the slots, every key placed again."""
        cdef uint64_t size = self.n_slots * 2, i
        cdef Slot* old = self.slots
        cdef Slot* grown = new_slots(size)
        if grown == NULL:
            with gil:
                raise MemoryError("fasttag key ids: out of memory")
        self.shift -= 1
        for i in range(self.n_slots):
            check_index(i, self.n_slots)
            if old[i].start != SLOT_EMPTY:
                grown[probe(grown, size, self.shift, old[i].key)] = old[i]
        free(old)
        self.slots = grown
        self.n_slots = size
        return 0

    cdef int _number(self, const feat_t* keys, uint32_t* out, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i
        cdef uint64_t j
        cdef feat_t key
        for i in range(n):
            if i + 8 < n:
                __builtin_prefetch(&self.slots[home_slot(keys[i + 8], self.shift)])
            key = keys[i]
            j = probe(self.slots, self.n_slots, self.shift, key)
            if self.slots[j].start == SLOT_EMPTY:
                if <uint64_t>self.n_keys >= _MAX_KEYS:
                    with gil:
                        raise OverflowError(f"more than {_MAX_KEYS:,} distinct feature keys")
                reserve(<void**>&self.keys, &self.cap_keys, self.n_keys + 1, sizeof(uint64_t),
                        b"key ids")
                check_index(self.n_keys, self.cap_keys)
                self.keys[self.n_keys] = key
                self.slots[j].key = key
                self.slots[j].start = <uint32_t>self.n_keys
                self.slots[j].n = 1
                self.n_keys += 1
                out[i] = <uint32_t>(self.n_keys - 1)
                if <uint64_t>self.n_keys * 2 > self.n_slots:
                    self._grow()
            else:
                out[i] = self.slots[j].start
                if self.slots[j].n != 0xFFFFFFFFu:        # the count saturates
                    self.slots[j].n += 1
        return 0

    def add(self, keys, out=None):
        """The ids of ``keys`` (a uint64 array of any shape), numbering the
        new ones; written into ``out`` (a C-contiguous uint32 array of the
        same shape) when given, which is returned."""
        k = np.ascontiguousarray(keys, dtype=np.uint64)
        if out is None:
            out = np.empty(k.shape, dtype=np.uint32)
        if not isinstance(out, np.ndarray) or out.dtype != np.uint32 or out.shape != k.shape \
                or not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("out must be a writeable C-contiguous uint32 array of the keys' shape")
        cdef const uint64_t[::1] kv = k.reshape(-1)
        cdef uint32_t[::1] ov = out.reshape(-1)
        cdef Py_ssize_t n = kv.shape[0]
        if n:
            with nogil:
                self._number(&kv[0], &ov[0], n)
        return out

    def by_frequency(self, ids):
        """Renumber the keys, the most frequent first (ties: in order of
        first sight), and rewrite ``ids`` in place (a C-contiguous uint32
        array: every id this numbering gave out that is still used): the
        keys read most often then share a few cache lines of the
        vocabulary, which training reads for every key of every epoch.
        Returns the vocabulary in the new order."""
        if not isinstance(ids, np.ndarray) or ids.dtype != np.uint32 or not ids.flags.c_contiguous \
                or not ids.flags.writeable:
            raise ValueError("ids must be a writeable C-contiguous uint32 array")
        counts = np.zeros(self.n_keys, dtype=np.int64)
        cdef int64_t[::1] cv = counts
        cdef uint64_t i
        for i in range(self.n_slots):
            check_index(i, self.n_slots)
            if self.slots[i].start != SLOT_EMPTY:
                cv[self.slots[i].start] = self.slots[i].n
        order = np.argsort(-counts, kind="stable")           # new id -> old id
        rank = np.empty(self.n_keys, dtype=np.uint32)         # old id -> new id
        rank[order] = np.arange(self.n_keys, dtype=np.uint32)
        cdef const uint32_t[::1] rv = rank
        cdef uint32_t[::1] iv = ids.reshape(-1)
        cdef Py_ssize_t j, n = iv.shape[0], n_keys = self.n_keys
        with nogil:
            for j in range(n):
                if iv[j] >= n_keys:
                    with gil:
                        raise ValueError(f"id {iv[j]} was not given by this numbering")
        with nogil:
            for j in range(n):
                iv[j] = rv[iv[j]]
            for i in range(self.n_slots):
                if self.slots[i].start != SLOT_EMPTY:
                    self.slots[i].start = rv[self.slots[i].start]
        vocab = self.vocabulary()[order]
        cdef const uint64_t[::1] vv = vocab
        if n_keys:
            memcpy(self.keys, &vv[0], n_keys * sizeof(uint64_t))
        return vocab

    def vocabulary(self):
        """The keys in id order (uint64, a copy)."""
        out = np.empty(self.n_keys, dtype=np.uint64)
        cdef uint64_t[::1] ov = out
        if self.n_keys:
            memcpy(&ov[0], self.keys, self.n_keys * sizeof(uint64_t))
        return out
