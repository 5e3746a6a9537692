# cython: language_level=3
"""Dense 32-bit ids of 64-bit feature keys, for training.

Training keeps every template's key of every position for all its epochs:
at 8 bytes a key that is most of its memory (PD 1998: 2.98M characters x
27 templates).  A training set has far fewer distinct keys than key
occurrences (3.4M against 80M there), so the trainer stores each
occurrence as a 4-byte id into the distinct keys (the *vocabulary*), and
the compiled loop reads ``vocab[id]`` (``_sequence.Search`` gathers a
sentence's keys before decoding it).

:class:`KeyIds` numbers keys in order of first sight, one batch at a time,
through the open-addressing probe of ``_probe.pxd``; the ids of a key never
change, so the batches of a training set can be numbered in turn into one
id matrix.
"""
import numpy as np

cimport cython
from libc.stdint cimport uint32_t, uint64_t, int64_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from ._types cimport feat_t
from ._probe cimport Slot, SLOT_EMPTY, home_slot, probe, new_slots
from ._buffers cimport reserve
from ._check cimport check_index, DEBUG_BUILD as _DEBUG_BUILD

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define FT_KEYIDS_PREFETCH(p) __builtin_prefetch(p)
    #else
    #define FT_KEYIDS_PREFETCH(p) ((void)0)
    #endif
    """
    void FT_KEYIDS_PREFETCH(const void* p) noexcept nogil

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
    :meth:`vocabulary` is the keys in id order.  The probe table is kept at
    most half full: 16 bytes a slot, freed with the numbering."""
    cdef Slot* slots
    cdef uint64_t n_slots
    cdef int shift
    cdef uint64_t* keys          # the keys in id order
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
        cdef uint64_t size = self.n_slots * 2, i, j
        cdef Slot* grown = new_slots(size)
        if grown == NULL:
            with gil:
                raise MemoryError("fasttag key ids: out of memory")
        free(self.slots)
        self.slots = grown
        self.n_slots = size
        self.shift -= 1
        for i in range(<uint64_t>self.n_keys):
            check_index(i, self.n_keys)
            j = probe(self.slots, self.n_slots, self.shift, self.keys[i])
            self.slots[j].key = self.keys[i]
            self.slots[j].start = <uint32_t>i
        return 0

    cdef int _number(self, const feat_t* keys, uint32_t* out, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i
        cdef uint64_t j
        cdef feat_t key
        for i in range(n):
            if i + 8 < n:
                FT_KEYIDS_PREFETCH(&self.slots[home_slot(keys[i + 8], self.shift)])
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
                self.n_keys += 1
                out[i] = <uint32_t>(self.n_keys - 1)
                if <uint64_t>self.n_keys * 2 > self.n_slots:
                    self._grow()
            else:
                out[i] = self.slots[j].start
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

    def vocabulary(self):
        """The keys in id order (uint64, a copy)."""
        out = np.empty(self.n_keys, dtype=np.uint64)
        cdef uint64_t[::1] ov = out
        if self.n_keys:
            memcpy(&ov[0], self.keys, self.n_keys * sizeof(uint64_t))
        return out
