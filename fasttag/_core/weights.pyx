# cython: language_level=3
"""The compiled core: stable hashing and a lazily averaged sparse weight table.

``WeightTable`` maps 64-bit feature hashes to the labels each feature has
touched, in an open-addressing table over one pool of entries: memory grows
with the (label, feature) pairs touched, never with labels x features.
Every entry is a lazily averaged weight (per-entry timestamps, float64
accumulators; the convention is in ``averaging.pxd``), so an update costs
O(active features x labels touched).  A trained table scores with float64
weights, a loaded one with the float32 weights model files store.
"""
import numpy as np

cimport cython
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport uint32_t, uint64_t, int64_t, int32_t
from libc.stdlib cimport malloc, calloc, free, qsort
from libc.string cimport memcpy, memmove, memset

from .types cimport feat_t, weight_t, class_t, step_t
from .hashing cimport murmurhash64a, hash_combine, mix64, FASTTAG_HASH_ID
from .check cimport check_index, check, DEBUG_BUILD as _DEBUG_BUILD
from .probe cimport Slot, SLOT_EMPTY as EMPTY, home_slot, probe, new_slots
from .averaging cimport avg_update, avg_start, avg_read
from .buffers cimport resize

HASH_ID = FASTTAG_HASH_ID.decode("ascii")

DEBUG_BUILD = bool(_DEBUG_BUILD)
"""True when this module was compiled by the debug build (FASTTAG_DEBUG=1):
raw-pointer indices are checked and a bad one aborts the process."""


def _debug_probe(long long i, long long n):
    """Test hook: ``check_index(i, n)``.  Under the debug build an ``i``
    outside [0, n) aborts the process with the C file and line; the release
    build compiles the check away and this returns None."""
    check_index(i, n)

cdef extern from *:
    void __builtin_prefetch(const void* addr) noexcept nogil

cdef uint64_t MAX_POOL = 0xFFFFFFF0u
cdef uint32_t NO_DENSE = 0xFFFFFFFFu    # dense_min of a table without dense rows
cdef enum:
    GROUP = 32          # keys looked up together by find_group
    DENSE_MIN_ENTRIES = 32          # the smallest block given a dense row
    DENSE_MAX_BYTES = 16 << 20      # the most the dense rows of a table take


# ---------------------------------------------------------------- hashing

def hash_string(str text, uint64_t seed=0):
    """MurmurHash64A of the UTF-8 bytes of ``text`` (stable across runs)."""
    cdef Py_ssize_t n
    cdef const char* data = PyUnicode_AsUTF8AndSize(text, &n)
    return murmurhash64a(<const unsigned char*>data, n, seed)


def hash_bytes(const unsigned char[::1] data, uint64_t seed=0):
    """MurmurHash64A of raw bytes."""
    if data.shape[0] == 0:
        return murmurhash64a(NULL, 0, seed)
    return murmurhash64a(&data[0], data.shape[0], seed)


def hash_strings(strings, uint64_t seed=0):
    """Hash each string of an iterable; returns a uint64 array."""
    cdef list items = list(strings)
    cdef Py_ssize_t i, n
    cdef const char* data
    out = np.empty(len(items), dtype=np.uint64)
    cdef uint64_t[::1] view = out
    for i in range(len(items)):
        data = PyUnicode_AsUTF8AndSize(items[i], &n)
        view[i] = murmurhash64a(<const unsigned char*>data, n, seed)
    return out


def combine(uint64_t a, uint64_t b):
    """Order-sensitive combination of two hashes."""
    return hash_combine(a, b)


# ---------------------------------------------------------------- helpers

cdef int _compare_u32(const void* a, const void* b) noexcept nogil:
    cdef uint32_t x = (<const uint32_t*>a)[0], y = (<const uint32_t*>b)[0]
    return (x > y) - (x < y)


cdef inline uint32_t block_capacity(uint32_t n) noexcept nogil:
    """Capacity of a loose block holding n entries: the next power of two."""
    cdef uint32_t c = 1
    while c < n:
        c <<= 1
    return c


cdef inline uint32_t _lower_bound(const class_t* labels, uint32_t lo, uint32_t hi, class_t label,
                                  uint64_t n_labels) noexcept nogil:
    """The first entry of the sorted labels[lo:hi] that is >= label (hi if
    none); labels holds n_labels entries."""
    cdef uint32_t mid
    while lo < hi:
        mid = (lo + hi) >> 1
        check_index(mid, n_labels)
        if labels[mid] < label:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef int _raise_memory() except -1 with gil:
    raise MemoryError("fasttag weight table: out of memory")


cdef int _raise_overflow() except -1 with gil:
    raise OverflowError("fasttag weight table: more than 2^32 entries")


# ---------------------------------------------------------------- the table

@cython.final
cdef class WeightTable:
    """Hashed feature -> {label: weight} table with lazy averaging.

    ``WeightTable(initial_features=1024)``.  Keys are uint64 feature hashes
    (see :func:`hash_string`); labels are ints in [0, 2^31).  See the module
    docstring for the averaging convention.
    """

    def __cinit__(self, Py_ssize_t initial_features=1024):
        cdef uint64_t size = 16
        while size < 2 * <uint64_t>max(initial_features, 1):
            size <<= 1
        self._alloc_slots(size)
        self.pool_cap = 0
        self.pool_top = 0
        self.pool_holes = 0
        self.labels = NULL
        self.packed = NULL
        self.packed_len = 0
        self.dense_rows = NULL
        self.dense_starts = NULL
        self.n_dense = 0
        self.dense_min = NO_DENSE
        self.dense_width = 0
        self.weights = NULL
        self.totals = NULL
        self.tstamps = NULL
        self.n_entries = 0
        self.n_features = 0
        self.tight = False
        self.n_classes = 0
        self.last_step = 0
        self.tracking = False
        self.changed = NULL
        self.n_changed = 0
        self.changed_cap = 0

    def __dealloc__(self):
        free(self.changed)
        free(self.slots)
        self._drop_packed()
        free(self.labels)
        free(self.weights)
        free(self.totals)
        free(self.tstamps)

    cdef int _alloc_slots(self, uint64_t size) except -1:
        cdef int log2 = 0
        self.slots = new_slots(size)
        if self.slots == NULL:
            raise MemoryError()
        self.n_slots = size
        while (<uint64_t>1 << log2) < size:
            log2 += 1
        self.shift = 64 - log2
        return 0

    # ------------------------------------------------------------ C level

    cdef const Slot* find(self, feat_t key) noexcept nogil:
        cdef uint64_t i = probe(self.slots, self.n_slots, self.shift, key)
        if self.slots[i].start == EMPTY:
            return NULL
        return &self.slots[i]

    cdef int find_group(self, const feat_t* keys, Py_ssize_t g, Py_ssize_t n_keys,
                        const Slot** found, Py_ssize_t* at) noexcept nogil:
        """The slots of the keys g..g+GROUP-1 (keys holds n_keys) that the
        table holds, in key order, into found[0..m-1] and their key indices
        into at[0..m-1] (both of GROUP entries); returns m.  The slots, then
        a packed table's blocks, are prefetched first, so the cache misses of
        a group overlap instead of queueing.  (A prefetch only computes an
        address: nothing to check there.)"""
        cdef Py_ssize_t i, stop = min(g + GROUP, n_keys)
        cdef int m = 0
        cdef const Slot* slot
        for i in range(g, stop):
            check_index(i, n_keys)
            __builtin_prefetch(&self.slots[home_slot(keys[i], self.shift)])
        for i in range(g, stop):
            slot = self.find(keys[i])
            if slot == NULL:
                continue
            if self.packed != NULL:
                __builtin_prefetch(&self.packed[slot.start])
            found[m] = slot
            at[m] = i
            m += 1
        return m

    cdef void score_into(self, const feat_t* keys, const weight_t* values,
                         Py_ssize_t n_keys, weight_t* scores, Py_ssize_t n_scores) noexcept nogil:
        """scores[label] += weight * value for every feature; scores (of
        n_scores entries, only the debug build checks it) must hold at least
        n_classes entries.  values may be NULL (all 1.0).

        Keys are handled in groups whose slots are prefetched first, so the
        cache misses of a group overlap instead of queueing.
        """
        cdef Py_ssize_t g
        cdef int q, m
        cdef uint32_t j, end
        cdef const Slot* slot
        cdef const Slot* found[GROUP]
        cdef Py_ssize_t at[GROUP]
        cdef weight_t v
        cdef const Packed* p
        cdef const float* row
        cdef class_t t
        for g in range(0, n_keys, 32):         # (32: GROUP, which range() needs as a literal)
            m = self.find_group(keys, g, n_keys, found, at)
            for q in range(m):
                slot = found[q]
                v = 1.0 if values == NULL else values[at[q]]
                end = slot.start + slot.n
                if slot.n >= self.dense_min and values == NULL:
                    # the same sums: a label outside the block adds 0.0
                    row = self._dense_row(slot)
                    if row != NULL:
                        check_index(self.dense_width - 1, n_scores)
                        for t in range(self.dense_width):
                            scores[t] += row[t]
                        continue
                if self.packed != NULL:
                    p = self.packed
                    for j in range(slot.start, end):
                        check_index(j, self.packed_len)
                        check_index(p[j].label, n_scores)
                        scores[p[j].label] += p[j].weight * v
                else:
                    for j in range(slot.start, end):
                        check_index(j, self.pool_top)
                        check_index(self.labels[j], n_scores)
                        scores[self.labels[j]] += self.weights[j] * v

    cdef void score_labels(self, const feat_t* keys, Py_ssize_t n_keys, const class_t* labels,
                           Py_ssize_t n_labels, weight_t* out, const int32_t* slot_of) noexcept nogil:
        """out[c] += weight(key, labels[c]) summed over the keys, for a few
        ascending labels (decoding hundreds of tags with a tag dictionary, a
        lemmatizer's fitting scripts): ``slot_of[label]`` is c for each
        labels[c], -1 for every other label below n_classes.  A short block
        is walked through slot_of, a long one binary-searched, a dense row
        read at the labels."""
        cdef Py_ssize_t g, c
        cdef int q, m
        cdef const Slot* found[GROUP]
        cdef Py_ssize_t at[GROUP]
        cdef const Slot* slot
        cdef uint32_t lo, hi, mid, end, j
        cdef class_t lab
        cdef int32_t k
        cdef const float* row
        for g in range(0, n_keys, 32):         # (32: GROUP, which range() needs as a literal)
            m = self.find_group(keys, g, n_keys, found, at)
            for q in range(m):
                slot = found[q]
                if slot.n >= self.dense_min:
                    row = self._dense_row(slot)
                    if row != NULL:         # the same sums: a label outside the block adds 0.0
                        for c in range(n_labels):
                            if labels[c] < self.dense_width:    # (a tag the table never saw: none)
                                out[c] += row[labels[c]]
                        continue
                lo = slot.start
                end = slot.start + slot.n
                if slot.n <= 8 * n_labels:
                    # a short block: each of its labels looked up in slot_of
                    for j in range(lo, end):
                        if self.packed != NULL:
                            check_index(j, self.packed_len)
                            lab = self.packed[j].label
                        else:
                            check_index(j, self.pool_top)
                            lab = self.labels[j]
                        check_index(lab, self.n_classes)
                        k = slot_of[lab]
                        if k >= 0:
                            check_index(k, n_labels)
                            out[k] += self.packed[j].weight if self.packed != NULL else self.weights[j]
                    continue
                for c in range(n_labels):
                    lab = labels[c]
                    hi = end
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if self.packed != NULL:
                            check_index(mid, self.packed_len)
                        else:
                            check_index(mid, self.pool_top)
                        if (self.packed[mid].label if self.packed != NULL else self.labels[mid]) < lab:
                            lo = mid + 1
                        else:
                            hi = mid
                    if lo == end:
                        break
                    if self.packed != NULL:
                        check_index(lo, self.packed_len)
                        if self.packed[lo].label == lab:
                            out[c] += self.packed[lo].weight
                    else:
                        check_index(lo, self.pool_top)
                        if self.labels[lo] == lab:
                            out[c] += self.weights[lo]

    cdef Py_ssize_t entry_of(self, feat_t key, class_t label) noexcept nogil:
        """The pool entry of (key, label), or -1."""
        cdef const Slot* slot = self.find(key)
        cdef uint32_t j
        if slot == NULL:
            return -1
        j = _lower_bound(self.labels, slot.start, slot.start + slot.n, label, self.pool_top)
        if j < slot.start + slot.n and self.labels[j] == label:
            return j
        return -1

    cdef weight_t weight_at(self, Py_ssize_t j) noexcept nogil:
        """The weight of pool entry j as scoring reads it: the float32 copy
        of a packed (tight) table, else the float64 weight."""
        if self.packed != NULL:
            check_index(j, self.packed_len)
            return self.packed[j].weight
        check_index(j, self.pool_top)
        return self.weights[j]

    cdef weight_t weight_of(self, feat_t key, class_t label) noexcept nogil:
        """The weight of (key, label) as scoring reads it; 0.0 when absent."""
        cdef Py_ssize_t j = self.entry_of(key, label)
        return 0.0 if j < 0 else self.weight_at(j)

    cdef int _grow_slots(self) except -1 nogil:
        """Double the slot array and reinsert every feature."""
        cdef Slot* old = self.slots
        cdef uint64_t old_n = self.n_slots
        cdef uint64_t new_n = old_n * 2
        cdef uint64_t i
        cdef Slot* fresh = new_slots(new_n)
        if fresh == NULL:
            _raise_memory()
            return -1
        self.shift -= 1
        for i in range(old_n):
            check_index(i, old_n)
            if old[i].start != EMPTY:
                fresh[probe(fresh, new_n, self.shift, old[i].key)] = old[i]
        self.slots = fresh
        self.n_slots = new_n
        free(old)
        return 0

    cdef int _reserve_pool(self, uint64_t extra) except -1 nogil:
        """Make room for ``extra`` more entries at the pool top."""
        cdef uint64_t need = self.pool_top + extra
        cdef uint64_t cap
        if need <= self.pool_cap:
            return 0
        if need > MAX_POOL:
            _raise_overflow()
            return -1
        # Holes from relocated blocks: compact instead of growing when they
        # make up more than half the pool.
        if self.pool_holes > self.pool_top // 2 and not self.tight:
            self._relayout(False)
            need = self.pool_top + extra
            if need <= self.pool_cap:
                return 0
        cap = self.pool_cap if self.pool_cap > 0 else 256
        while cap < need:
            cap *= 2
        if cap > MAX_POOL:
            cap = MAX_POOL
        return self._resize_pool(cap)

    cdef int _resize_pool(self, uint64_t cap) except -1 nogil:
        resize(<void**>&self.labels, cap * sizeof(class_t), b"weight table")
        resize(<void**>&self.weights, cap * sizeof(weight_t), b"weight table")
        if self.totals != NULL:
            resize(<void**>&self.totals, cap * sizeof(weight_t), b"weight table")
            resize(<void**>&self.tstamps, cap * sizeof(step_t), b"weight table")
        self.pool_cap = cap
        return 0

    cdef int _relayout(self, bint tight) except -1 nogil:
        """Copy every block, in slot order, into fresh arrays without holes.

        Loose blocks get power-of-two capacity (so appends know their room);
        tight blocks get exactly n entries.  Allocates the averaging
        accumulators when the table becomes loose.
        """
        cdef uint64_t i, total_cap = 0, pos = 0
        cdef uint32_t cap, n
        for i in range(self.n_slots):
            check_index(i, self.n_slots)
            if self.slots[i].start != EMPTY:
                n = self.slots[i].n
                total_cap += n if tight else block_capacity(n)
        if total_cap > MAX_POOL:
            _raise_overflow()
            return -1
        cdef uint64_t alloc = total_cap if tight else total_cap + total_cap // 2 + 256
        if alloc == 0:
            alloc = 1
        cdef class_t* labels = <class_t*>malloc(alloc * sizeof(class_t))
        cdef weight_t* weights = <weight_t*>malloc(alloc * sizeof(weight_t))
        cdef weight_t* totals = NULL
        cdef step_t* tstamps = NULL
        if not tight:
            totals = <weight_t*>calloc(alloc, sizeof(weight_t))
            tstamps = <step_t*>calloc(alloc, sizeof(step_t))
        if labels == NULL or weights == NULL or (not tight and (totals == NULL or tstamps == NULL)):
            free(labels); free(weights); free(totals); free(tstamps)
            _raise_memory()
            return -1
        for i in range(self.n_slots):
            check_index(i, self.n_slots)
            if self.slots[i].start == EMPTY:
                continue
            n = self.slots[i].n
            if n:       # the block is read from the old pool, written to the new one
                check_index(self.slots[i].start + n - 1, self.pool_top)
                check_index(pos + n - 1, alloc)
            memcpy(&labels[pos], &self.labels[self.slots[i].start], n * sizeof(class_t))
            memcpy(&weights[pos], &self.weights[self.slots[i].start], n * sizeof(weight_t))
            if totals != NULL and self.totals != NULL:
                memcpy(&totals[pos], &self.totals[self.slots[i].start], n * sizeof(weight_t))
                memcpy(&tstamps[pos], &self.tstamps[self.slots[i].start], n * sizeof(step_t))
            self.slots[i].start = <uint32_t>pos
            pos += n if tight else block_capacity(n)
        free(self.labels); free(self.weights); free(self.totals); free(self.tstamps)
        self._drop_packed()
        self.labels = labels
        self.weights = weights
        self.totals = totals
        self.tstamps = tstamps
        self.pool_top = pos
        self.pool_cap = alloc
        self.pool_holes = 0
        self.tight = tight
        return 0

    cdef int _pack(self) except -1:
        """Build the (label, float32 weight) array of a tight table: scoring
        then reads one array, not two; and the dense rows of its heaviest
        blocks (a bias or a word-shape feature of a model of hundreds of
        classes has a weight for most of them)."""
        cdef uint64_t i, r
        cdef uint32_t j
        cdef float* row
        self._drop_packed()
        self.packed = <Packed*>malloc(max(self.pool_top, 1) * sizeof(Packed))
        if self.packed == NULL:
            raise MemoryError()
        self.packed_len = self.pool_top
        for i in range(self.pool_top):
            check_index(i, self.pool_cap)
            self.packed[i].label = self.labels[i]
            self.packed[i].weight = <float>self.weights[i]
        if self.n_classes < DENSE_MIN_ENTRIES:
            return 0
        # a block of an eighth of the labels or more (DENSE_MIN_ENTRIES at
        # the least), doubled while the rows would pass DENSE_MAX_BYTES
        cdef uint32_t need = max(DENSE_MIN_ENTRIES, (self.n_classes + 7) // 8)
        cdef uint64_t limit = DENSE_MAX_BYTES // (self.n_classes * sizeof(float))
        cdef uint64_t n_heavy
        while True:
            n_heavy = 0
            for i in range(self.n_slots):
                if self.slots[i].start != EMPTY and self.slots[i].n >= need:
                    n_heavy += 1
            if n_heavy <= limit:
                break
            need *= 2
        if n_heavy == 0:
            return 0
        self.dense_starts = <uint32_t*>malloc(n_heavy * sizeof(uint32_t))
        self.dense_rows = <float*>calloc(n_heavy * <uint64_t>self.n_classes, sizeof(float))
        if self.dense_starts == NULL or self.dense_rows == NULL:
            self._drop_packed()
            raise MemoryError()
        r = 0
        for i in range(self.n_slots):
            if self.slots[i].start != EMPTY and self.slots[i].n >= need:
                check_index(r, n_heavy)
                self.dense_starts[r] = self.slots[i].start
                r += 1
        qsort(self.dense_starts, n_heavy, sizeof(uint32_t), _compare_u32)
        self.n_dense = <uint32_t>n_heavy
        self.dense_width = self.n_classes
        for i in range(self.n_slots):
            if self.slots[i].start != EMPTY and self.slots[i].n >= need:
                row = <float*>self._dense_row(&self.slots[i])
                for j in range(self.slots[i].start, self.slots[i].start + self.slots[i].n):
                    check_index(j, self.packed_len)
                    check_index(self.packed[j].label, self.n_classes)
                    row[self.packed[j].label] = self.packed[j].weight
        self.dense_min = need
        return 0

    cdef void _drop_packed(self) noexcept nogil:
        """Free the packed array and the dense rows (the table is changing)."""
        free(self.packed)
        self.packed = NULL
        self.packed_len = 0
        free(self.dense_rows)
        free(self.dense_starts)
        self.dense_rows = NULL
        self.dense_starts = NULL
        self.n_dense = 0
        self.dense_min = NO_DENSE
        self.dense_width = 0

    cdef const float* _dense_row(self, const Slot* slot) noexcept nogil:
        """The dense row of a block of at least dense_min entries (binary
        search in the few row starts), NULL if it has none."""
        cdef uint32_t lo = 0, hi = self.n_dense, mid
        while lo < hi:
            mid = (lo + hi) >> 1
            check_index(mid, self.n_dense)
            if self.dense_starts[mid] < slot.start:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.n_dense and self.dense_starts[lo] == slot.start:
            return self.dense_rows + <size_t>lo * self.dense_width
        return NULL

    cdef int add(self, feat_t key, class_t label, weight_t delta,
                 step_t step) except -1 nogil:
        """Add delta to (key, label) as part of step ``step`` (>= 1).

        Steps must not decrease from one call to the next.
        """
        cdef uint64_t i
        cdef uint32_t j, n, cap, start
        cdef Slot* slot
        if self.tight or self.totals == NULL:
            self._relayout(False)
        if step > self.last_step:
            self.last_step = step
        if label >= self.n_classes:
            self.n_classes = label + 1
        # find or insert the feature
        i = probe(self.slots, self.n_slots, self.shift, key)
        if self.slots[i].start == EMPTY:
            if 2 * (self.n_features + 1) > self.n_slots:
                self._grow_slots()
                i = probe(self.slots, self.n_slots, self.shift, key)
            self._reserve_pool(1)
            check_index(self.pool_top, self.pool_cap)
            slot = &self.slots[i]
            slot.key = key
            slot.start = <uint32_t>self.pool_top
            slot.n = 0
            self.pool_top += 1
            self.n_features += 1
        slot = &self.slots[i]
        # find the label in the feature's block (kept sorted by label)
        cdef uint32_t lo = _lower_bound(self.labels, slot.start, slot.start + slot.n, label,
                                        self.pool_top)
        if lo < slot.start + slot.n and self.labels[lo] == label:
            check_index(lo, self.pool_top)
            if self.tracking and self.tstamps[lo] == 0:
                self._log_change(slot, lo)
            avg_update(&self.weights[lo], &self.totals[lo], &self.tstamps[lo], delta, step)
            return 0
        if self.tracking:
            self._log_change(slot, EMPTY)
        # insert a new entry at its sorted place, relocating a full block
        cdef uint32_t at = lo - slot.start
        n = slot.n
        cap = block_capacity(n)
        if n == cap:
            self._reserve_pool(2 * cap)   # may compact: look the slot up again
            slot = &self.slots[i]
            if slot.start + cap == self.pool_top:
                self.pool_top += cap      # the block ends the pool: extend in place
                check_index(self.pool_top - 1, self.pool_cap)
            else:
                start = <uint32_t>self.pool_top
                if n:    # the whole block moves to the top, with room for 2 * cap
                    check_index(slot.start + n - 1, self.pool_top)
                    check_index(start + 2 * cap - 1, self.pool_cap)
                memcpy(&self.labels[start], &self.labels[slot.start], n * sizeof(class_t))
                memcpy(&self.weights[start], &self.weights[slot.start], n * sizeof(weight_t))
                memcpy(&self.totals[start], &self.totals[slot.start], n * sizeof(weight_t))
                memcpy(&self.tstamps[start], &self.tstamps[slot.start], n * sizeof(step_t))
                slot.start = start
                self.pool_top += 2 * cap
                self.pool_holes += cap
        j = slot.start + at
        check_index(slot.start + n, self.pool_top)     # the block's room for one more
        if at < n:
            memmove(&self.labels[j + 1], &self.labels[j], (n - at) * sizeof(class_t))
            memmove(&self.weights[j + 1], &self.weights[j], (n - at) * sizeof(weight_t))
            memmove(&self.totals[j + 1], &self.totals[j], (n - at) * sizeof(weight_t))
            memmove(&self.tstamps[j + 1], &self.tstamps[j], (n - at) * sizeof(step_t))
        self.labels[j] = label
        avg_start(&self.weights[j], &self.totals[j], &self.tstamps[j], delta, step)
        slot.n = n + 1
        self.n_entries += 1
        return 0

    cdef int _log_change(self, const Slot* slot, uint32_t skip) except -1 nogil:
        """Log the slot's feature as changed in this round unless one of
        its entries (other than ``skip``) already was: each feature is
        logged once, when its first entry changes."""
        cdef uint32_t j
        for j in range(slot.start, slot.start + slot.n):
            check_index(j, self.pool_top)
            if j != skip and self.tstamps[j] > 0:
                return 0
        if self.n_changed == self.changed_cap:
            self.changed_cap = max(1024, 2 * self.changed_cap)
            resize(<void**>&self.changed, self.changed_cap * sizeof(feat_t), b"weight table")
        check_index(self.n_changed, self.changed_cap)
        self.changed[self.n_changed] = slot.key
        self.n_changed += 1
        return 0

    # ------------------------------------------------------------ Python level

    def __len__(self):
        """Number of features stored."""
        return self.n_features

    @property
    def n_weights(self):
        """Number of (feature, label) entries stored."""
        return self.n_entries

    @property
    def nbytes(self):
        """Bytes held by the table's arrays (slots, the entry pool, the dense rows)."""
        per_entry = sizeof(class_t) + sizeof(weight_t)
        if self.packed != NULL:
            per_entry += sizeof(Packed)
        if self.totals != NULL:
            per_entry += sizeof(weight_t) + sizeof(step_t)
        return (self.n_slots * sizeof(Slot) + self.pool_cap * per_entry
                + self.n_dense * (self.dense_width * sizeof(float) + sizeof(uint32_t)))

    def score(self, const feat_t[::1] keys, const weight_t[::1] values=None,
              Py_ssize_t n_classes=0):
        """Per-label scores of a feature set (current weights).

        Returns a float64 array of max(n_classes, self.n_classes) scores.
        """
        cdef Py_ssize_t size = max(n_classes, self.n_classes)
        out = np.zeros(size, dtype=np.float64)
        cdef weight_t[::1] scores = out
        if values is not None and values.shape[0] != keys.shape[0]:
            raise ValueError("keys and values differ in length")
        if keys.shape[0] == 0 or size == 0:
            return out
        cdef const weight_t* vals = NULL
        if values is not None:
            vals = &values[0]
        with nogil:
            self.score_into(&keys[0], vals, keys.shape[0], &scores[0], size)
        return out

    def update(self, const feat_t[::1] keys, class_t label, weight_t delta,
               step_t step, const weight_t[::1] values=None):
        """Add ``delta`` (times each value) to every key's weight for ``label``
        as part of step ``step``.  Steps start at 1 and never decrease."""
        cdef Py_ssize_t i
        if label < 0:
            raise ValueError("labels must be >= 0")
        if step < 1 or step < self.last_step:
            raise ValueError(f"step {step} is before the last step {self.last_step} (steps start at 1 and never decrease)")
        if values is not None and values.shape[0] != keys.shape[0]:
            raise ValueError("keys and values differ in length")
        with nogil:
            for i in range(keys.shape[0]):
                self.add(keys[i], label, delta if values is None else delta * values[i], step)

    def update_batch(self, const feat_t[::1] keys, const int64_t[::1] offsets,
                     const class_t[::1] labels, const weight_t[::1] deltas,
                     const step_t[::1] steps, const weight_t[::1] values=None):
        """Many updates in one call: update e adds ``deltas[e]`` (times each
        value) to ``keys[offsets[e]:offsets[e + 1]]`` for ``labels[e]`` at
        ``steps[e]`` (non-decreasing)."""
        cdef Py_ssize_t e, i, n = labels.shape[0]
        if offsets.shape[0] != n + 1 or deltas.shape[0] != n or steps.shape[0] != n:
            raise ValueError("offsets must have one more entry than labels, deltas and steps")
        if values is not None and values.shape[0] != keys.shape[0]:
            raise ValueError("keys and values differ in length")
        if n == 0:
            return
        if offsets[0] != 0 or offsets[n] != keys.shape[0]:
            raise ValueError("offsets must run from 0 to the number of keys")
        cdef step_t last = self.last_step
        for e in range(n):
            if offsets[e + 1] < offsets[e]:
                raise ValueError("offsets must not decrease")
            if labels[e] < 0:
                raise ValueError("labels must be >= 0")
            if steps[e] < 1 or steps[e] < last:
                raise ValueError(f"step {steps[e]} is before step {last} (steps never decrease)")
            last = steps[e]
        cdef Py_ssize_t ahead
        with nogil:
            for e in range(n):
                if e + 1 < n:        # the next example's slots, while this one runs
                    for ahead in range(offsets[e + 1], offsets[e + 2]):
                        __builtin_prefetch(&self.slots[home_slot(keys[ahead], self.shift)])
                for i in range(offsets[e], offsets[e + 1]):
                    self.add(keys[i], labels[e],
                             deltas[e] if values is None else deltas[e] * values[i], steps[e])

    def score_batch(self, const feat_t[::1] keys, const int64_t[::1] offsets,
                    Py_ssize_t n_classes=0, const weight_t[::1] values=None):
        """Scores of many feature sets: row e scores
        ``keys[offsets[e]:offsets[e + 1]]``."""
        cdef Py_ssize_t e, n = offsets.shape[0] - 1
        cdef Py_ssize_t size = max(n_classes, self.n_classes)
        if n < 0:
            raise ValueError("offsets must not be empty")
        if values is not None and values.shape[0] != keys.shape[0]:
            raise ValueError("keys and values differ in length")
        if offsets[0] != 0 or offsets[n] != keys.shape[0]:
            raise ValueError("offsets must run from 0 to the number of keys")
        for e in range(n):
            if offsets[e + 1] < offsets[e]:
                raise ValueError("offsets must not decrease")
        out = np.zeros((n, size), dtype=np.float64)
        if size == 0 or keys.shape[0] == 0:
            return out
        cdef weight_t[:, ::1] scores = out
        cdef const weight_t* vals = NULL
        if values is not None:
            vals = &values[0]
        with nogil:
            for e in range(n):
                if offsets[e + 1] > offsets[e]:
                    self.score_into(&keys[offsets[e]], vals + offsets[e] if vals != NULL else NULL,
                                    offsets[e + 1] - offsets[e], &scores[e, 0], size)
        return out

    def get(self, feat_t key, class_t label):
        """The current weight of (key, label); 0.0 when absent.  It is the
        weight :meth:`score` adds: on a tight (loaded or averaged) table the
        float32 value scoring reads, so ``get`` and ``score`` agree exactly."""
        return self.weight_of(key, label)

    def get_average(self, feat_t key, class_t label, step_t step):
        """The averaged weight of (key, label) after ``step`` steps, in
        float64 (a table never trained: its float64 weight, as
        :meth:`averaged` copies it)."""
        self._check_average_step(step)
        cdef Py_ssize_t j = self.entry_of(key, label)
        if j < 0:
            return 0.0
        if self.totals == NULL:
            return self.weights[j]
        return avg_read(self.weights[j], self.totals[j], self.tstamps[j], step)

    def _check_average_step(self, step_t step):
        if step < 1 or step < self.last_step:
            raise ValueError(f"cannot average over {step} steps: updates were made at step {self.last_step}")

    def averaged(self, step_t step=0):
        """A new table holding the averaged weights after ``step`` steps.

        ``step`` defaults to the last step an update was made at.  Entries
        whose average is exactly zero are dropped.  This table is untouched:
        training can go on.  A table never trained (loaded) is copied as is.
        """
        if step == 0:
            step = max(self.last_step, 1)
        self._check_average_step(step)
        cdef WeightTable out = WeightTable.__new__(WeightTable, self.n_features)
        cdef uint64_t i, k
        cdef uint32_t j, n
        cdef uint64_t pos = 0
        cdef weight_t avg
        out._resize_pool(max(self.n_entries, 1))
        with nogil:
            for i in range(self.n_slots):
                check_index(i, self.n_slots)
                if self.slots[i].start == EMPTY:
                    continue
                n = 0
                for j in range(self.slots[i].start, self.slots[i].start + self.slots[i].n):
                    check_index(j, self.pool_top)
                    if self.totals == NULL:
                        avg = self.weights[j]
                    else:
                        avg = avg_read(self.weights[j], self.totals[j], self.tstamps[j], step)
                    if avg != 0.0:
                        check_index(pos + n, out.pool_cap)
                        out.labels[pos + n] = self.labels[j]
                        out.weights[pos + n] = avg
                        n += 1
                if n == 0:
                    continue
                k = probe(out.slots, out.n_slots, out.shift, self.slots[i].key)
                out.slots[k].key = self.slots[i].key
                out.slots[k].start = <uint32_t>pos
                out.slots[k].n = n
                out.n_features += 1
                out.n_entries += n
                pos += n
        out.pool_top = pos
        out.tight = True
        out.n_classes = self.n_classes
        out._pack()
        return out

    def to_arrays(self):
        """Canonical arrays (keys ascending, labels ascending within a key,
        as blocks are kept):
        ``keys`` uint64, ``counts`` uint32 (labels per key), ``labels`` int32,
        ``weights`` float64.  Equal tables give equal arrays."""
        keys = np.empty(self.n_features, dtype=np.uint64)
        starts = np.empty(self.n_features, dtype=np.int64)
        counts = np.empty(self.n_features, dtype=np.uint32)
        cdef uint64_t[::1] kv = keys
        cdef int64_t[::1] sv = starts
        cdef uint32_t[::1] cv = counts
        cdef uint64_t i, f = 0
        for i in range(self.n_slots):
            check_index(i, self.n_slots)
            if self.slots[i].start != EMPTY:
                kv[f] = self.slots[i].key
                sv[f] = self.slots[i].start
                cv[f] = self.slots[i].n
                f += 1
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        starts = starts[order]
        counts = counts[order]
        labels = np.empty(self.n_entries, dtype=np.int32)
        weights = np.empty(self.n_entries, dtype=np.float64)
        cdef int32_t[::1] lv = labels
        cdef weight_t[::1] wv = weights
        sv = starts
        cv = counts
        cdef uint64_t pos = 0
        cdef uint32_t j
        for f in range(self.n_features):
            for j in range(cv[f]):
                check_index(sv[f] + j, self.pool_top)
                lv[pos + j] = self.labels[sv[f] + j]
                wv[pos + j] = self.weights[sv[f] + j]
            pos += cv[f]
        return {"keys": keys, "counts": counts, "labels": labels, "weights": weights}

    @staticmethod
    def from_arrays(keys, counts, labels, weights, Py_ssize_t n_classes=0):
        """Rebuild a (tight, untrained) table from :meth:`to_arrays` output.

        Validates everything first: ValueError on inconsistent arrays,
        duplicate keys or labels out of range.
        """
        cdef const uint64_t[::1] kv = np.ascontiguousarray(keys, dtype=np.uint64)
        cdef const uint32_t[::1] cv = np.ascontiguousarray(counts, dtype=np.uint32)
        cdef const int32_t[::1] lv = np.ascontiguousarray(labels, dtype=np.int32)
        cdef const double[::1] wv = np.ascontiguousarray(weights, dtype=np.float64)
        if kv.shape[0] != cv.shape[0]:
            raise ValueError("keys and counts differ in length")
        if lv.shape[0] != wv.shape[0]:
            raise ValueError("labels and weights differ in length")
        cdef uint64_t total = 0
        cdef Py_ssize_t f
        for f in range(cv.shape[0]):
            if cv[f] == 0:
                raise ValueError("a feature with no labels")
            total += cv[f]
        if total != <uint64_t>lv.shape[0]:
            raise ValueError("counts do not add up to the number of weights")
        if total > MAX_POOL:
            raise ValueError("too many weights")
        cdef int32_t max_label = -1
        for f in range(lv.shape[0]):
            if lv[f] < 0:
                raise ValueError("negative label")
            if lv[f] > max_label:
                max_label = lv[f]
        if n_classes and max_label >= n_classes:
            raise ValueError(f"label {max_label} out of range for {n_classes} classes")
        cdef uint64_t pos = 0, k, e
        for f in range(cv.shape[0]):
            for e in range(pos + 1, pos + cv[f]):
                if lv[e] <= lv[e - 1]:
                    raise ValueError("labels of a feature must be strictly increasing")
            pos += cv[f]
        pos = 0
        cdef WeightTable out = WeightTable.__new__(WeightTable, kv.shape[0])
        out._resize_pool(max(total, 1))
        if lv.shape[0]:
            check_index(total - 1, out.pool_cap)
            memcpy(out.labels, &lv[0], total * sizeof(class_t))
            memcpy(out.weights, &wv[0], total * sizeof(weight_t))
        for f in range(kv.shape[0]):
            k = probe(out.slots, out.n_slots, out.shift, kv[f])
            if out.slots[k].start != EMPTY:
                raise ValueError("duplicate feature key")
            out.slots[k].key = kv[f]
            out.slots[k].start = <uint32_t>pos
            out.slots[k].n = cv[f]
            pos += cv[f]
        out.n_features = kv.shape[0]
        out.n_entries = total
        out.pool_top = total
        out.tight = True
        out.n_classes = max(n_classes, max_label + 1)
        out._pack()
        return out

    # ------------------------------------------------------------ parameter mixing
    #
    # Iterative parameter mixing (``fasttag.mixing``): each round, every
    # shard table starts from the mixed weights with clean accumulators
    # (timestamps and totals 0: ``copy_from``) and trains at steps 2..end
    # (step 1 stands for the mixed weights it started from).  The entries a
    # round touched are those with a timestamp above 0; only they travel
    # (``round_changes``) and change in the mixed table (``mix``).

    def loosen(self):
        """Ready for training (what the first update does): loose blocks
        and averaging accumulators."""
        if self.tight or self.totals == NULL:
            self._relayout(False)

    def copy_from(self, WeightTable other):
        """A shard's table before a round: an exact copy of the mixed table
        ``other`` (loose: see :meth:`loosen`) with clean accumulators.
        Whole arrays are copied, without the GIL; ``other`` is only read."""
        if other.tight or other.totals == NULL:
            raise ValueError("copy from a loose (trained) table")
        with nogil:
            self._copy_from(other)

    cdef int _copy_from(self, WeightTable other) except -1 nogil:
        if self.n_slots != other.n_slots:
            resize(<void**>&self.slots, other.n_slots * sizeof(Slot), b"weight table")
            self.n_slots = other.n_slots
        memcpy(self.slots, other.slots, other.n_slots * sizeof(Slot))
        self.shift = other.shift
        self.n_features = other.n_features
        if self.totals == NULL or self.pool_cap != other.pool_cap:
            resize(<void**>&self.labels, other.pool_cap * sizeof(class_t), b"weight table")
            resize(<void**>&self.weights, other.pool_cap * sizeof(weight_t), b"weight table")
            resize(<void**>&self.totals, other.pool_cap * sizeof(weight_t), b"weight table")
            resize(<void**>&self.tstamps, other.pool_cap * sizeof(step_t), b"weight table")
            self.pool_cap = other.pool_cap
        memcpy(self.labels, other.labels, other.pool_top * sizeof(class_t))
        memcpy(self.weights, other.weights, other.pool_top * sizeof(weight_t))
        memset(self.totals, 0, other.pool_top * sizeof(weight_t))
        memset(self.tstamps, 0, other.pool_top * sizeof(step_t))
        self.tracking = True        # a shard: round_changes reads its log
        self.n_changed = 0
        self.pool_top = other.pool_top
        self.pool_holes = other.pool_holes
        self.n_entries = other.n_entries
        self.tight = False
        self._drop_packed()
        self.n_classes = other.n_classes
        self.last_step = 0
        return 0

    def round_changes(self, step_t end):
        """A shard's round: the entries it changed (timestamp above 0) as
        arrays ``keys``, ``labels``, ``weights`` (now) and ``sums`` (the
        weight summed over steps 1..``end``).  Their accumulators are reset,
        so that the next round starts clean.  A shard's table (made by
        :meth:`copy_from`) reads them from its log of changed features in
        O(changes); any other table is scanned whole."""
        if self.totals == NULL:
            empty = np.empty(0, dtype=np.float64)
            return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int32), empty, empty.copy()
        cdef uint64_t m
        with nogil:
            m = self._collect_changes(end, NULL, NULL, NULL, NULL)
        keys = np.empty(m, dtype=np.uint64)
        labels = np.empty(m, dtype=np.int32)
        weights = np.empty(m, dtype=np.float64)
        sums = np.empty(m, dtype=np.float64)
        cdef uint64_t[::1] kv = keys
        cdef int32_t[::1] lv = labels
        cdef double[::1] wv = weights
        cdef double[::1] sv = sums
        if m:
            with nogil:
                self._collect_changes(end, &kv[0], &lv[0], &wv[0], &sv[0])
        self.n_changed = 0
        self.last_step = 0
        return keys, labels, weights, sums

    cdef uint64_t _collect_changes(self, step_t end, uint64_t* kv, int32_t* lv, double* wv,
                                   double* sv) noexcept nogil:
        """Count the changed entries (``kv`` NULL), or write them out and
        reset their accumulators."""
        cdef uint64_t i, n = self.n_changed if self.tracking else self.n_slots, k = 0
        cdef uint32_t j
        cdef const Slot* slot
        for i in range(n):
            if self.tracking:
                check_index(i, self.changed_cap)
                slot = self.find(self.changed[i])
                if slot == NULL:
                    continue
            else:
                check_index(i, self.n_slots)
                slot = &self.slots[i]
                if slot.start == EMPTY:
                    continue
            for j in range(slot.start, slot.start + slot.n):
                check_index(j, self.pool_top)
                if self.tstamps[j] > 0:
                    if kv != NULL:
                        kv[k] = slot.key
                        lv[k] = self.labels[j]
                        wv[k] = self.weights[j]
                        sv[k] = self.totals[j] + (end - self.tstamps[j]) * self.weights[j]
                        self.totals[j] = 0.0
                        self.tstamps[j] = 0
                    k += 1
        return k

    def weights_at(self, const feat_t[::1] keys, const class_t[::1] labels):
        """The float64 weights of the (key, label) pairs (0.0 where absent)."""
        if keys.shape[0] != labels.shape[0]:
            raise ValueError("keys and labels differ in length")
        out = np.zeros(keys.shape[0], dtype=np.float64)
        cdef double[::1] o = out
        cdef Py_ssize_t i, j
        with nogil:
            for i in range(keys.shape[0]):
                j = self.entry_of(keys[i], labels[i])
                if j >= 0:
                    check_index(j, self.pool_top)
                    o[i] = self.weights[j]
        return out

    def mix(self, const feat_t[::1] keys, const class_t[::1] labels, const double[::1] dw,
            const double[::1] dsum, step_t step):
        """The mixed table after a round that ended at step ``step``: the
        weight of each (key, label) held through ``step`` and its sum of
        weights gains ``dsum`` beyond that; then the weight gains ``dw``
        (in force from step ``step + 1`` on).  Absent pairs are created."""
        cdef Py_ssize_t i, j, n = keys.shape[0]
        if step < self.last_step:
            raise ValueError(f"step {step} is before the last step {self.last_step}")
        self._ready_for_pairs(keys, labels, dw, dsum)
        with nogil:
            for i in range(n):
                j = self._entry_for(keys[i], labels[i], step + 1)
                check_index(j, self.pool_top)                    # caught up to ``step``
                avg_update(&self.weights[j], &self.totals[j], &self.tstamps[j], 0.0, step + 1)
                self.totals[j] += dsum[i]
                self.weights[j] += dw[i]
        if n or step > self.last_step:
            self.last_step = step
        return None

    def assign(self, const feat_t[::1] keys, const class_t[::1] labels, const double[::1] weights):
        """A shard's table brought up to the mixed weights after a round:
        set the weights of the (key, label) pairs (absent pairs are created)
        with clean accumulators.  The pairs must be every entry whose mixed
        weight changed, which costs O(changes) where :meth:`copy_from`
        copies the whole table.  Call after :meth:`round_changes`."""
        cdef Py_ssize_t i, j, n = keys.shape[0]
        self._ready_for_pairs(keys, labels, weights, weights)
        with nogil:
            for i in range(n):
                j = self._entry_for(keys[i], labels[i], 1)
                check_index(j, self.pool_top)
                self.weights[j] = weights[i]
                self.totals[j] = 0.0
                self.tstamps[j] = 0
            self.last_step = 0
            self.n_changed = 0      # nothing changed in the round to come yet
        return None

    def _ready_for_pairs(self, const feat_t[::1] keys, const class_t[::1] labels, const double[::1] a,
                         const double[::1] b):
        """Check (key, label) pairs and their values for :meth:`mix` and
        :meth:`assign`, and make the table trainable."""
        cdef Py_ssize_t i, n = keys.shape[0]
        if labels.shape[0] != n or a.shape[0] != n or b.shape[0] != n:
            raise ValueError("keys, labels and values differ in length")
        for i in range(n):
            if labels[i] < 0:
                raise ValueError("negative label")
        if n and (self.tight or self.totals == NULL):
            self._relayout(False)

    cdef Py_ssize_t _entry_for(self, feat_t key, class_t label, step_t step) except -1 nogil:
        """The pool entry of (key, label), created with weight 0 at step
        ``step`` when absent (one probe when present)."""
        cdef Py_ssize_t j = self.entry_of(key, label)
        if j < 0:
            self.add(key, label, 0.0, step)
            j = self.entry_of(key, label)
        return j

    def compact(self):
        """Drop the holes left by relocated blocks (training state kept)."""
        self._relayout(self.tight)
        if self.tight:
            self._pack()


# ---------------------------------------------------------------- dense vector

@cython.final
cdef class AveragedVector:
    """A dense float64 vector with the same lazy averaging as WeightTable
    (used for tag-transition matrices and dense linear models)."""

    def __cinit__(self, Py_ssize_t size):
        if size < 0:
            raise ValueError("size must be >= 0")
        self.size = size
        self.last_step = 0
        self.w = <weight_t*>calloc(max(size, 1), sizeof(weight_t))
        self.total = <weight_t*>calloc(max(size, 1), sizeof(weight_t))
        self.tstamp = <step_t*>calloc(max(size, 1), sizeof(step_t))
        if self.w == NULL or self.total == NULL or self.tstamp == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.w)
        free(self.total)
        free(self.tstamp)

    cdef void add(self, Py_ssize_t i, weight_t delta, step_t step) noexcept nogil:
        check_index(i, self.size)
        avg_update(&self.w[i], &self.total[i], &self.tstamp[i], delta, step)
        if step > self.last_step:
            self.last_step = step

    def update(self, Py_ssize_t index, weight_t delta, step_t step):
        """Add delta to element ``index`` as part of step ``step``."""
        if not 0 <= index < self.size:
            raise IndexError(index)
        if step < 1 or step < self.last_step:
            raise ValueError(f"step {step} is before the last step {self.last_step}")
        self.add(index, delta, step)

    @property
    def weights(self):
        """A copy of the current weights."""
        out = np.empty(self.size, dtype=np.float64)
        if self.size:
            memcpy(<void*><size_t>out.ctypes.data, self.w, self.size * sizeof(weight_t))
        return out

    def set_weights(self, values):
        """Overwrite the current weights (as loaded from a model); resets
        the averaging state."""
        cdef const double[::1] v = np.ascontiguousarray(values, dtype=np.float64)
        if v.shape[0] != self.size:
            raise ValueError("wrong size")
        cdef Py_ssize_t i
        for i in range(self.size):
            check_index(i, self.size)
            self.w[i] = v[i]
            self.total[i] = 0.0
            self.tstamp[i] = 0
        self.last_step = 0

    def round_sums(self, step_t end):
        """A shard's round (see ``WeightTable.round_changes``): the weights
        now and summed over steps 1..``end``; the accumulators are reset."""
        weights = np.empty(self.size, dtype=np.float64)
        sums = np.empty(self.size, dtype=np.float64)
        cdef double[::1] wv = weights
        cdef double[::1] sv = sums
        cdef Py_ssize_t i
        for i in range(self.size):
            check_index(i, self.size)
            wv[i] = self.w[i]
            sv[i] = self.total[i] + (end - self.tstamp[i]) * self.w[i]
            self.total[i] = 0.0
            self.tstamp[i] = 0
        self.last_step = 0
        return weights, sums

    def mix(self, dw, dsum, step_t step):
        """The mixed vector after a round that ended at step ``step`` (see
        ``WeightTable.mix``)."""
        cdef const double[::1] d = np.ascontiguousarray(dw, dtype=np.float64)
        cdef const double[::1] s = np.ascontiguousarray(dsum, dtype=np.float64)
        if d.shape[0] != self.size or s.shape[0] != self.size:
            raise ValueError("wrong size")
        if step < self.last_step:
            raise ValueError(f"step {step} is before the last step {self.last_step}")
        cdef Py_ssize_t i
        for i in range(self.size):
            check_index(i, self.size)
            avg_update(&self.w[i], &self.total[i], &self.tstamp[i], 0.0, step + 1)
            self.total[i] += s[i]
            self.w[i] += d[i]
        self.last_step = step
        return None

    def averaged(self, step_t step=0):
        """Averaged weights after ``step`` steps (default: the last update's)."""
        if step == 0:
            step = max(self.last_step, 1)
        if step < self.last_step:
            raise ValueError(f"cannot average over {step} steps: updates were made at step {self.last_step}")
        out = np.empty(self.size, dtype=np.float64)
        cdef double[::1] o = out
        cdef Py_ssize_t i
        for i in range(self.size):
            check_index(i, self.size)
            if self.last_step == 0:
                o[i] = self.w[i]
            else:
                o[i] = avg_read(self.w[i], self.total[i], self.tstamp[i], step)
        return out
