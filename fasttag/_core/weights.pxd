# C-level interface of the weight table, for other Cython modules to cimport.
from libc.stdint cimport uint32_t, uint64_t, int32_t
from .types cimport feat_t, weight_t, class_t, step_t
# Slot (in the weight table: key, the first entry of the feature's block in
# the pool, the labels the feature has touched)
from .probe cimport Slot


cdef struct Packed:
    class_t label
    float weight


cdef class WeightTable:
    cdef Slot* slots
    cdef uint64_t n_slots          # a power of two
    cdef int shift                 # 64 - log2(n_slots)
    cdef uint64_t n_features
    # The pool: one entry per (feature, label), structure of arrays.
    cdef class_t* labels
    cdef weight_t* weights
    cdef weight_t* totals          # NULL until the table is trained
    cdef step_t* tstamps           # NULL until the table is trained
    cdef uint64_t pool_top
    cdef uint64_t pool_cap
    cdef uint64_t pool_holes       # entries lost to relocated blocks
    cdef uint64_t n_entries        # live entries (pool_top minus holes)
    cdef bint tight                # blocks hold exactly n entries (loaded/averaged)
    cdef Packed* packed            # tight tables: (label, float32 weight) pairs for fast scoring
    cdef uint64_t packed_len       # entries of packed (the pool top when it was built)
    # packed tables: the blocks of at least dense_min entries also as dense
    # float32 rows of dense_width labels (row r: block dense_starts[r]);
    # scoring adds such a row in one contiguous pass instead of scattering it
    cdef float* dense_rows
    cdef uint32_t* dense_starts    # ascending
    cdef uint32_t n_dense
    cdef uint32_t dense_min        # 0xFFFFFFFF: no dense rows
    cdef class_t dense_width
    cdef readonly class_t n_classes
    cdef readonly step_t last_step
    # a shard's log of the features it changed in a round (see copy_from)
    cdef bint tracking
    cdef feat_t* changed
    cdef uint64_t n_changed
    cdef uint64_t changed_cap

    cdef int _alloc_slots(self, uint64_t size) except -1
    cdef int _grow_slots(self) except -1 nogil
    cdef int _reserve_pool(self, uint64_t extra) except -1 nogil
    cdef int _resize_pool(self, uint64_t cap) except -1 nogil
    cdef int _relayout(self, bint tight) except -1 nogil
    cdef const Slot* find(self, feat_t key) noexcept nogil
    cdef int find_group(self, const feat_t* keys, Py_ssize_t g, Py_ssize_t n_keys,
                        const Slot** found, Py_ssize_t* at) noexcept nogil
    cdef int _pack(self) except -1
    cdef void _drop_packed(self) noexcept nogil
    cdef const float* _dense_row(self, const Slot* slot) noexcept nogil
    cdef int _copy_from(self, WeightTable other) except -1 nogil
    cdef int _log_change(self, const Slot* slot, uint32_t skip) except -1 nogil
    cdef Py_ssize_t _entry_for(self, feat_t key, class_t label, step_t step) except -1 nogil
    cdef uint64_t _collect_changes(self, step_t end, uint64_t* kv, int32_t* lv, double* wv,
                                   double* sv) noexcept nogil
    cdef void score_into(self, const feat_t* keys, const weight_t* values,
                         Py_ssize_t n_keys, weight_t* scores, Py_ssize_t n_scores) noexcept nogil
    cdef void score_labels(self, const feat_t* keys, Py_ssize_t n_keys, const class_t* labels,
                           Py_ssize_t n_labels, weight_t* out, const int32_t* slot_of) noexcept nogil
    cdef int add(self, feat_t key, class_t label, weight_t delta,
                 step_t step) except -1 nogil
    cdef Py_ssize_t entry_of(self, feat_t key, class_t label) noexcept nogil
    cdef weight_t weight_at(self, Py_ssize_t j) noexcept nogil
    cdef weight_t weight_of(self, feat_t key, class_t label) noexcept nogil


cdef class AveragedVector:
    cdef weight_t* w
    cdef weight_t* total
    cdef step_t* tstamp
    cdef readonly Py_ssize_t size
    cdef readonly step_t last_step

    cdef void add(self, Py_ssize_t i, weight_t delta, step_t step) noexcept nogil
