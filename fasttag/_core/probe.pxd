# The one open-addressing probe of the compiled core, for every table of
# 64-bit pre-hashed keys (the weight table's features, the distinct keys of
# ``_linear.index_keys``).
#
# A table is a power-of-two array of ``Slot`` records; a key's home slot is
# the high bits of key * 2^64/phi (Fibonacci hashing: ``shift`` is
# 64 - log2(size)), and collisions go on to the next slot (linear probing).
# Changing ``home_slot`` changes no model file (tables are stored as sorted
# arrays) but every table's memory layout and speed.
from libc.stdint cimport uint32_t, uint64_t
from libc.stdlib cimport malloc
from .types cimport feat_t
from .check cimport check_index

cdef extern from *:
    """
    #define FASTTAG_SLOT_EMPTY 0xFFFFFFFFu
    """
    const uint32_t SLOT_EMPTY "FASTTAG_SLOT_EMPTY"


cdef struct Slot:
    feat_t key        # the key (a feature hash)
    uint32_t start    # the owner's payload (first entry of a block, an id); SLOT_EMPTY if unused
    uint32_t n        # the owner's payload (entries of the block)


cdef inline uint64_t home_slot(feat_t key, int shift) noexcept nogil:
    """Fibonacci hashing: the high bits of key * 2^64/phi."""
    return (key * 0x9E3779B97F4A7C15ULL) >> shift


cdef inline uint64_t probe(const Slot* slots, uint64_t n_slots, int shift, feat_t key) noexcept nogil:
    """The slot holding ``key``, or the empty slot where it goes (the table
    must have an empty slot: its owners keep it at most half full)."""
    cdef uint64_t mask = n_slots - 1
    cdef uint64_t i = home_slot(key, shift)
    check_index(i, n_slots)
    while slots[i].start != SLOT_EMPTY and slots[i].key != key:
        i = (i + 1) & mask
        check_index(i, n_slots)
    return i


cdef inline Slot* new_slots(uint64_t size) noexcept nogil:
    """``size`` empty slots (malloc'd: the caller frees them), or NULL when
    out of memory."""
    cdef uint64_t i
    cdef Slot* slots = <Slot*>malloc(size * sizeof(Slot))
    if slots == NULL:
        return NULL
    for i in range(size):
        check_index(i, size)
        slots[i].key = 0
        slots[i].start = SLOT_EMPTY
        slots[i].n = 0
    return slots
