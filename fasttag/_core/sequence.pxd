# C-level interface of the sequence search, for other Cython modules
# (k-best decoding, other training algorithms) to cimport.
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t, int32_t
from .types cimport feat_t, weight_t, class_t, step_t
from .weights cimport WeightTable, AveragedVector


cdef struct Entry:
    uint64_t key        # feature key, or transition index
    int32_t tag         # emission label, or -1 for a transition
    weight_t v


cdef struct EntryList:
    # a growing list of weight changes (Search.walk_diff appends to it)
    Entry* items
    Py_ssize_t cap      # entries allocated
    int64_t top         # entries in use


cdef struct KeyRows:
    # the feature keys of a batch, F a row: 64-bit keys, or 32-bit ids into
    # ``vocab``, the batch's distinct keys (``keys`` NULL; see _keyids.pyx)
    const uint64_t* keys
    const uint32_t* ids
    const uint64_t* vocab
    int64_t n_vocab
    int64_t n_rows
    Py_ssize_t F


cdef class Search:
    cdef WeightTable emit
    cdef const weight_t* trans       # (T + 2) * T, layout in _sequence.pyx
    cdef object trans_owner
    cdef const uint8_t* allowed      # NULL: every transition allowed
    cdef object allowed_owner
    cdef int64_t T                   # number of tags (64-bit: products never wrap)
    cdef int64_t n_trans             # length of trans and allowed: (T + 2) * T
    cdef const int32_t* classes      # per token candidate class, -1 open; NULL: all open
    cdef const int64_t* class_offsets
    cdef const int32_t* class_tags
    cdef int64_t n_class_tokens      # lengths of classes, class_offsets, class_tags
    cdef int64_t n_class_offsets
    cdef int64_t n_class_tags
    cdef object cand_owner
    cdef int prune_k
    cdef weight_t* transT             # transposed, masked transitions (fixed weights only)
    # per-type emission scores, set during decode(): token i is of type
    # base_index[i]; with base_rows, type t's scores are base row
    # base_rows[t], or (-1) summed from its F_type keys at type_keys when
    # asked for; without, base row base_index[i]
    cdef const weight_t* base
    cdef const int64_t* base_index
    cdef const uint64_t* type_keys
    cdef const int64_t* base_rows
    cdef Py_ssize_t F_type
    cdef int64_t n_types             # rows of type_keys and base_rows
    cdef int64_t n_base              # entries of base (rows * T)
    cdef int64_t n_rows              # tokens of the batch being run: rows of keys (and
                                     # base_index, gold, the output), set by the callers of build()
    # buffers, grown by reserve(); after build(), token i of the sentence has
    # candidates cand[cand_start[i]:cand_start[i + 1]] (ascending tags) with
    # emission scores escore[...]
    cdef weight_t* dense
    cdef weight_t* select
    cdef int32_t* slot_of            # T entries, -1 but while few_scores() maps its tags
    cdef int32_t* cand
    cdef int64_t* cand_start
    cdef weight_t* escore
    cdef weight_t* delta
    cdef int32_t* back
    cdef int32_t* path
    cdef Py_ssize_t cap_cand, cap_start
    cdef uint64_t* gathered          # the keys of the sentence being run, read from ids
    cdef Py_ssize_t cap_gathered
    # the lattice of the last build(): n_built tokens, n_cands candidates
    # (the valid lengths the debug build checks reads against)
    cdef int64_t n_built, n_cands

    cdef int reserve(self, Py_ssize_t n_cands, Py_ssize_t n_tokens) except -1 nogil
    cdef int sentence_keys(self, const KeyRows* rows, int64_t start, int64_t n,
                           const uint64_t** out) except -1 nogil
    cdef int build(self, const uint64_t* keys, Py_ssize_t F, int64_t start,
                   int64_t n, const int32_t* gold) except -1 nogil
    cdef int64_t top_k(self, int64_t pos) noexcept nogil
    cdef int64_t all_tags(self, int64_t pos) noexcept nogil
    cdef int64_t ensure(self, int64_t first, int64_t pos, int32_t tag) noexcept nogil
    cdef void viterbi(self, int64_t n, int32_t* out) noexcept nogil
    cdef void greedy(self, int64_t n, int32_t* out) noexcept nogil
    cdef int64_t walk_diff(self, AveragedVector trans, const uint64_t* keys, Py_ssize_t F,
                           int64_t start, int64_t n, const int32_t* gold, const int32_t* pred,
                           step_t step, EntryList* out) except -1 nogil
    cdef int token_diff(self, const uint64_t* keys, int64_t row, Py_ssize_t F, int32_t gold,
                        int32_t pred, step_t step, EntryList* out) except -1 nogil
    cdef int trans_diff(self, AveragedVector trans, int64_t prev, int32_t tag, weight_t v,
                        step_t step, EntryList* out) except -1 nogil
    cdef int64_t greedy_update(self, AveragedVector trans, const uint64_t* keys,
                               Py_ssize_t F, int64_t start, int64_t n,
                               const int32_t* gold, step_t step) except -1 nogil
    cdef int32_t best_after(self, int64_t i, int32_t prev) noexcept nogil
    cdef int64_t base_row_of(self, int64_t row, int64_t* type_of) noexcept nogil
    cdef void token_scores(self, const uint64_t* keys, Py_ssize_t F, int64_t row) noexcept nogil
    cdef void few_scores(self, const uint64_t* keys, Py_ssize_t F, int64_t row, const int32_t* tags,
                         int64_t n, weight_t* out) noexcept nogil
    cdef int32_t greedy_pick(self, const uint64_t* keys, Py_ssize_t F, int64_t row,
                             int32_t prev) noexcept nogil


cdef class UpdateRule:
    """A training update of one sentence for ``run_epoch``: the perceptron
    (``_sequence``), its greedy form, k-best MIRA (``_kbest``)."""
    cdef int begin(self, Search s) except -1
    cdef void finish(self, Search s) noexcept
    cdef int64_t update(self, Search s, AveragedVector trans, const uint64_t* keys, Py_ssize_t F,
                        int64_t start, int64_t n, const int32_t* gold, step_t step) except -1 nogil


cdef int reserve_entries(EntryList* out, Py_ssize_t need) except -1 nogil
cdef object key_rows(keys, vocab, KeyRows* rows)
cdef object run_epoch(Search s, UpdateRule rule, AveragedVector trans, keys, bounds, gold, order,
                      step_t step, vocab=*)
