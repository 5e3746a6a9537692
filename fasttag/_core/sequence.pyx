# cython: language_level=3
"""Sequence decoding and Collins' structured perceptron, without the GIL.

A sequence model is an emission ``WeightTable`` (feature -> tag) plus a
dense transition vector of ``transition_size(T) == (T + 2) * T`` entries
(tag pairs, then start and end transitions), with an optional ``allowed``
mask of the same layout.  Each token decodes over all tags or a closed list
from the tag dictionary; open tokens may be pruned to their ``prune_k``
best tags.  Ties break towards lower tag indices.  ``run_epoch`` is the one
training loop, with an ``UpdateRule``.  The layouts: docs/architecture.md.
"""
import numpy as np

cimport cython
from libc.math cimport INFINITY
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t, int32_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

from .types cimport feat_t, weight_t, class_t, step_t, PAD_KEY
from .weights cimport WeightTable, AveragedVector
from .check cimport check_index, check, DEBUG_BUILD as _DEBUG_BUILD
from .buffers cimport resize, reserve

DEBUG_BUILD = bool(_DEBUG_BUILD)
"""True when this module was compiled by the debug build (raw indices checked)."""

cdef extern from *:
    void __builtin_prefetch(const void* addr) noexcept nogil

MAX_TAGS = 8192
"""The most tags a sequence model may have.  Its transition matrix has
(T + 2) * T float64 entries, held up to four times while training (weights,
averaging totals and timestamps, the transposed copy): 2 GB at 8,192 tags,
34 GB per copy at 65,536.  Larger tag sets are refused before anything is
allocated."""


cdef enum:
    FEW_SHARE = 4       # a token with at most T / FEW_SHARE candidates has few


cdef inline bint few_candidates(int64_t n, int64_t T) noexcept nogil:
    """Whether a token's ``n`` candidates of ``T`` tags are scored alone
    rather than through every tag's scores."""
    return FEW_SHARE * n <= T


def few_candidates_of(sizes, n_tags):
    """:func:`few_candidates` of each class size in ``sizes`` (an array):
    the rule the decoder applies, for a caller deciding what to score."""
    return FEW_SHARE * np.asarray(sizes) <= n_tags


def transition_size(n_tags):
    """Length of the transition vector of a model with ``n_tags`` tags
    (computed with Python integers: it never wraps)."""
    return (int(n_tags) + 2) * int(n_tags)


def check_n_tags(n_tags):
    """Refuse tag sets that are empty or too large to decode, with the
    memory they would need, before anything is allocated."""
    n = int(n_tags)
    if n < 1:
        raise ValueError("a sequence model needs at least one tag")
    if n > MAX_TAGS:
        raise ValueError(
            f"{n:,} tags is more than fasttag's maximum of {MAX_TAGS:,}: the transition matrix "
            f"alone would take {transition_size(n) * 8 / 1e9:,.1f} GB")
    return n


@cython.final
cdef class Search:
    """Decoding state for one model: its weights, constraints and buffers
    (attributes declared in _sequence.pxd).

    Indices are validated by the Python entry points before any nogil loop.
    Buffers and counts start at NULL and 0: Cython zeroes a new object's C
    attributes before ``__cinit__``.
    """

    def __dealloc__(self):
        free(self.dense)
        free(self.select)
        free(self.cand)
        free(self.cand_start)
        free(self.escore)
        free(self.delta)
        free(self.back)
        free(self.path)
        free(self.transT)
        free(self.gathered)
        free(self.slot_of)

    def __init__(self, WeightTable emit, trans, n_tags, allowed=None,
                 candidates=None, prune_k=0):
        n_tags = check_n_tags(n_tags)
        prune_k = int(prune_k)
        if emit.n_classes > n_tags:
            raise ValueError(f"the emission table has labels up to {emit.n_classes - 1} for {n_tags} tags")
        self.emit = emit
        self.T = n_tags
        self.n_trans = transition_size(n_tags)
        if allowed is not None:
            a = np.ascontiguousarray(allowed, dtype=np.uint8)
            if a.shape != (transition_size(n_tags),):
                raise ValueError("allowed mask has the wrong size")
            self.allowed_owner = a
            self.allowed = <const uint8_t*><size_t>a.ctypes.data
        else:
            self.allowed = NULL
        self.set_transitions(trans)
        self.classes = NULL
        self.class_offsets = NULL
        self.class_tags = NULL
        self.prune_k = prune_k if 0 < prune_k < n_tags else 0
        self.dense = <weight_t*>malloc(n_tags * sizeof(weight_t))
        self.select = <weight_t*>malloc(n_tags * sizeof(weight_t))
        self.slot_of = <int32_t*>malloc(n_tags * sizeof(int32_t))
        if self.dense == NULL or self.select == NULL or self.slot_of == NULL:
            raise MemoryError()
        memset(self.slot_of, 0xFF, n_tags * sizeof(int32_t))      # -1: no candidate
        if candidates is not None:
            self.set_candidates(*candidates)

    def set_transitions(self, trans):
        """Use this transition vector (an AveragedVector's current weights
        during training, or an array of averaged weights)."""
        cdef AveragedVector vec
        if isinstance(trans, AveragedVector):
            vec = trans
            if vec.size != transition_size(self.T):
                raise ValueError("transition vector has the wrong size")
            self.trans_owner = vec
            self.trans = vec.w
            free(self.transT)           # weights change during training
            self.transT = NULL
        else:
            t = np.ascontiguousarray(trans, dtype=np.float64)
            if t.shape != (transition_size(self.T),):
                raise ValueError("transition vector has the wrong size")
            self.trans_owner = t
            self.trans = <const weight_t*><size_t>t.ctypes.data
            self._transpose()

    def _transpose(self):
        """transT[t * T + p] = trans[p * T + t], -inf where forbidden: the
        inner Viterbi loop then reads one contiguous row per tag."""
        cdef int64_t T = self.T, p, t
        free(self.transT)
        self.transT = <weight_t*>malloc(T * T * sizeof(weight_t))
        if self.transT == NULL:
            raise MemoryError()
        for t in range(T):
            for p in range(T):
                check_index(t * T + p, T * T)
                check_index(p * T + t, self.n_trans)
                if self.allowed != NULL and not self.allowed[p * T + t]:
                    self.transT[t * T + p] = -INFINITY
                else:
                    self.transT[t * T + p] = self.trans[p * T + t]

    def set_candidates(self, classes, class_offsets, class_tags):
        """Per-token candidate classes (see the module docstring)."""
        c = np.ascontiguousarray(classes, dtype=np.int32)
        o = np.ascontiguousarray(class_offsets, dtype=np.int64)
        g = np.ascontiguousarray(class_tags, dtype=np.int32)
        if o.ndim != 1 or len(o) < 1 or o[0] != 0 or o[len(o) - 1] != len(g) or np.any(np.diff(o) < 1):
            raise ValueError("class offsets must rise from 0 to len(class_tags), no class empty")
        if len(g) and (g.min() < 0 or g.max() >= self.T):
            raise ValueError("candidate tag out of range")
        # build() reserves T + 1 candidates a token: a class must not repeat a tag
        rising = np.diff(g) > 0
        rising[o[1:len(o) - 1] - 1] = True          # class boundaries may fall
        if not rising.all():
            raise ValueError("a candidate class must list distinct tags in ascending order")
        if len(c) and (c.min() < -1 or c.max() >= len(o) - 1):
            raise ValueError("candidate class out of range")
        self.cand_owner = (c, o, g)
        self.classes = <const int32_t*><size_t>c.ctypes.data
        self.class_offsets = <const int64_t*><size_t>o.ctypes.data
        self.class_tags = <const int32_t*><size_t>g.ctypes.data
        self.n_class_tokens = len(c)
        self.n_class_offsets = len(o)
        self.n_class_tags = len(g)
        return len(c)

    # ------------------------------------------------------------ lattice

    cdef int reserve(self, Py_ssize_t n_cands, Py_ssize_t n_tokens) except -1 nogil:
        """Room for n_cands candidates and n_tokens tokens in every buffer."""
        cdef Py_ssize_t c = self.cap_cand
        if n_cands > c:
            c = max(2 * c, n_cands, 256)
            resize(<void**>&self.cand, c * sizeof(int32_t), b"decoder")
            resize(<void**>&self.escore, c * sizeof(weight_t), b"decoder")
            resize(<void**>&self.delta, c * sizeof(weight_t), b"decoder")
            resize(<void**>&self.back, c * sizeof(int32_t), b"decoder")
            self.cap_cand = c
        c = self.cap_start
        if n_tokens + 1 > c:
            c = max(2 * c, n_tokens + 1, 64)
            resize(<void**>&self.cand_start, c * sizeof(int64_t), b"decoder")
            resize(<void**>&self.path, c * sizeof(int32_t), b"decoder")
            self.cap_start = c
        return 0

    cdef int sentence_keys(self, const KeyRows* rows, int64_t start, int64_t n,
                           const uint64_t** out) except -1 nogil:
        """``out[0]``: the keys of rows start..start+n-1 of ``rows`` (F a
        row), where they lie, or read from the ids into a buffer of this
        search (an id outside the vocabulary is a ValueError)."""
        cdef Py_ssize_t j, m = n * rows.F
        cdef const uint32_t* ids
        cdef uint32_t key_id
        if rows.ids == NULL:
            out[0] = rows.keys + start * rows.F if rows.keys != NULL else NULL
            return 0
        reserve(<void**>&self.gathered, &self.cap_gathered, m, sizeof(uint64_t), b"decoder")
        if m:
            check_index((start + n) * rows.F - 1, rows.n_rows * rows.F)
        ids = rows.ids + start * rows.F
        cdef const uint64_t* vocab = rows.vocab
        cdef uint64_t* gathered = self.gathered
        cdef int64_t n_vocab = rows.n_vocab
        # every entry asked for first, then read: the misses of rare keys
        # overlap instead of queueing one after another
        for j in range(m):
            key_id = ids[j]
            if key_id >= n_vocab:
                with gil:
                    raise ValueError(f"feature id {key_id} outside the vocabulary of {rows.n_vocab}")
            __builtin_prefetch(&vocab[key_id])
        for j in range(m):
            check_index(ids[j], rows.n_vocab)
            check_index(j, self.cap_gathered)
            gathered[j] = vocab[ids[j]]
        out[0] = gathered
        return 0

    cdef int build(self, const uint64_t* keys, Py_ssize_t F, int64_t start,
                   int64_t n, const int32_t* gold) except -1 nogil:
        """Candidates and their emission scores for tokens start..start+n-1;
        ``keys`` points at their keys (row start's first).  With ``gold``
        (training) the gold tag is kept among a token's candidates."""
        cdef int64_t i, j, pos = 0
        cdef int64_t T = self.T
        cdef int32_t cls
        cdef bint few
        self.reserve(T, n)
        self.n_built = self.n_cands = 0       # no valid lattice until the end
        for i in range(n):
            # row start + i of base_index and classes (the caller's arrays)
            check_index(start + i, self.n_rows)
            check_index(i, self.cap_start)
            self.cand_start[i] = pos
            self.reserve(pos + T + 1, n)
            if self.classes != NULL:
                check_index(start + i, self.n_class_tokens)
            cls = self.classes[start + i] if self.classes != NULL else -1
            if cls >= 0:
                check_index(cls + 1, self.n_class_offsets)
            # a closed token with few candidates: score just those tags
            few = cls >= 0 and few_candidates(self.class_offsets[cls + 1] - self.class_offsets[cls], T)
            if not few:         # every tag's score, into dense
                self.token_scores(keys + i * F if F else keys, F, start + i)
            if cls >= 0:
                for j in range(self.class_offsets[cls], self.class_offsets[cls + 1]):
                    check_index(j, self.n_class_tags)
                    check_index(pos, self.cap_cand)
                    self.cand[pos] = self.class_tags[j]
                    pos += 1
            elif self.prune_k:
                pos = self.top_k(pos)
            else:
                pos = self.all_tags(pos)
            if gold != NULL:
                pos = self.ensure(self.cand_start[i], pos, gold[i])
            check(pos > self.cand_start[i])        # decoders need a candidate per token
            if not few:
                for j in range(self.cand_start[i], pos):
                    check_index(j, self.cap_cand)
                    check_index(self.cand[j], T)
                    self.escore[j] = self.dense[self.cand[j]]
                continue
            check(pos <= self.cap_cand)
            self.few_scores(keys + i * F if F else keys, F, start + i, self.cand + self.cand_start[i],
                            pos - self.cand_start[i], self.escore + self.cand_start[i])
        check_index(n, self.cap_start)
        self.cand_start[n] = pos
        self.n_built = n
        self.n_cands = pos
        return 0

    cdef int64_t top_k(self, int64_t pos) noexcept nogil:
        """Append the prune_k best tags of ``dense`` (ties: lower tags),
        in ascending tag order."""
        cdef int64_t T = self.T, t, first = pos
        cdef int k = self.prune_k, above = 0, taken_ties = 0
        cdef weight_t kth = _kth_largest(self.dense, self.select, T, k)
        for t in range(T):
            if self.dense[t] > kth:
                above += 1
        for t in range(T):
            if self.dense[t] > kth:
                check_index(pos, self.cap_cand)
                self.cand[pos] = t
                pos += 1
            elif self.dense[t] == kth and above + taken_ties < k:
                taken_ties += 1
                check_index(pos, self.cap_cand)
                self.cand[pos] = t
                pos += 1
        if pos == first:
            # a NaN k-th score (inf - inf from a model's huge weights) compares
            # false with everything: keep every tag rather than none, as the
            # lattice needs a candidate per token
            pos = self.all_tags(pos)
        return pos

    cdef int64_t all_tags(self, int64_t pos) noexcept nogil:
        """Append every tag, ascending."""
        cdef int32_t t
        for t in range(self.T):
            check_index(pos, self.cap_cand)
            self.cand[pos] = t
            pos += 1
        return pos

    cdef int64_t ensure(self, int64_t first, int64_t pos, int32_t tag) noexcept nogil:
        """Insert ``tag`` into the ascending list cand[first:pos] if absent."""
        cdef int64_t j = first
        check_index(first, self.cap_cand)
        while j < pos and self.cand[j] < tag:
            j += 1
        if j < pos and self.cand[j] == tag:
            return pos
        # the list grows by one: cand[pos] must be allocated (reserve's T + 1)
        check_index(pos, self.cap_cand)
        cdef int64_t m = pos
        while m > j:
            self.cand[m] = self.cand[m - 1]
            m -= 1
        self.cand[j] = tag
        return pos + 1

    cdef void viterbi(self, int64_t n, int32_t* out) noexcept nogil:
        """Best path over the built lattice into out[0..n-1]."""
        cdef int64_t T = self.T
        cdef int64_t i, c, pc, best_c
        cdef int32_t tag, ptag
        cdef weight_t v, best
        cdef int32_t arg
        cdef bint constrained = self.allowed != NULL
        cdef const uint8_t* saved
        cdef weight_t* saved_t
        if n == 0:
            return
        # the lattice is valid for n_built tokens and n_cands candidates
        check_index(n - 1, self.n_built)
        for c in range(self.cand_start[0], self.cand_start[1]):
            check_index(c, self.n_cands)
            tag = self.cand[c]
            check_index(T * T + tag, self.n_trans)
            if constrained and not self.allowed[T * T + tag]:
                self.delta[c] = -INFINITY
            else:
                self.delta[c] = self.escore[c] + self.trans[T * T + tag]
            self.back[c] = -1
        cdef const weight_t* prev_delta
        cdef const weight_t* row
        cdef int32_t p
        for i in range(1, n):
            if self.transT != NULL and self.cand_start[i] - self.cand_start[i - 1] == T:
                # every tag is a candidate of the previous token: contiguous rows
                prev_delta = self.delta + self.cand_start[i - 1]
                # the inner loop reads prev_delta[0..T-1] and row[0..T-1]
                check_index(self.cand_start[i - 1] + T - 1, self.n_cands)
                for c in range(self.cand_start[i], self.cand_start[i + 1]):
                    check_index(c, self.n_cands)
                    check_index(self.cand[c], T)      # row lies in the T * T of transT
                    row = self.transT + self.cand[c] * T
                    best = prev_delta[0] + row[0]
                    arg = 0
                    for p in range(1, T):
                        v = prev_delta[p] + row[p]
                        if v > best:
                            best = v
                            arg = p
                    self.delta[c] = best + self.escore[c] if best != -INFINITY else -INFINITY
                    self.back[c] = arg
                continue
            for c in range(self.cand_start[i], self.cand_start[i + 1]):
                check_index(c, self.n_cands)
                tag = self.cand[c]
                best = -INFINITY
                arg = -1
                for pc in range(self.cand_start[i - 1], self.cand_start[i]):
                    check_index(pc, self.n_cands)
                    ptag = self.cand[pc]
                    check_index(ptag * T + tag, self.n_trans)
                    if constrained and not self.allowed[ptag * T + tag]:
                        continue
                    v = self.delta[pc] + self.trans[ptag * T + tag]
                    if v > best or arg < 0:
                        best = v
                        arg = <int32_t>(pc - self.cand_start[i - 1])
                if arg < 0:
                    self.delta[c] = -INFINITY
                    arg = 0
                else:
                    self.delta[c] = best + self.escore[c]
                self.back[c] = arg
        best = -INFINITY
        best_c = self.cand_start[n - 1]
        for c in range(self.cand_start[n - 1], self.cand_start[n]):
            check_index(c, self.n_cands)
            tag = self.cand[c]
            check_index((T + 1) * T + tag, self.n_trans)
            if constrained and not self.allowed[(T + 1) * T + tag]:
                continue
            v = self.delta[c] + self.trans[(T + 1) * T + tag]
            if v > best:
                best = v
                best_c = c
        if best == -INFINITY and constrained:
            # no path satisfies the constraints with these candidates:
            # decode unconstrained rather than return garbage
            saved = self.allowed
            saved_t = self.transT
            self.allowed = NULL
            self.transT = NULL         # it carries the mask too
            self.viterbi(n, out)
            self.allowed = saved
            self.transT = saved_t
            return
        c = best_c
        # (out holds n tags: its callers check that)
        for i in range(n - 1, -1, -1):
            check_index(c, self.n_cands)
            out[i] = self.cand[c]
            if i > 0:
                # a back-pointer is a candidate of the previous token
                check_index(self.back[c], self.cand_start[i] - self.cand_start[i - 1])
                c = self.cand_start[i - 1] + self.back[c]

    cdef void greedy(self, int64_t n, int32_t* out) noexcept nogil:
        """Left to right, each tag scored with the previous predicted tag."""
        cdef int64_t i
        cdef int32_t prev = self.T           # T stands for the start
        for i in range(n):
            out[i] = self.best_after(i, prev)
            prev = out[i]

    cdef int32_t best_after(self, int64_t i, int32_t prev) noexcept nogil:
        """Best candidate of built token i after tag ``prev`` (T = start);
        ties go to the lower tag, forbidden transitions are skipped."""
        cdef int64_t T = self.T
        cdef int64_t c, row = prev * T
        cdef weight_t v, best = -INFINITY
        cdef int32_t tag, arg = -1
        check_index(i, self.n_built)
        for c in range(self.cand_start[i], self.cand_start[i + 1]):
            check_index(c, self.n_cands)
            tag = self.cand[c]
            check_index(row + tag, self.n_trans)
            if self.allowed != NULL and not self.allowed[row + tag]:
                continue
            v = self.escore[c] + self.trans[row + tag]
            if v > best or arg < 0:
                best = v
                arg = tag
        if arg < 0:
            check_index(self.cand_start[i], self.n_cands)
            arg = self.cand[self.cand_start[i]]
        return arg

    cdef int64_t base_row_of(self, int64_t row, int64_t* type_of) noexcept nogil:
        """The base row of token ``row``'s type (-1: none; its type, if it
        has one, into ``type_of[0]``)."""
        cdef int64_t t
        if self.base_index == NULL:
            return -1
        check_index(row, self.n_rows)
        t = self.base_index[row]
        type_of[0] = t
        if self.base_rows == NULL:
            return t
        check_index(t, self.n_types)
        return self.base_rows[t]

    cdef void token_scores(self, const uint64_t* keys, Py_ssize_t F, int64_t row) noexcept nogil:
        """dense = every tag's emission score of token ``row`` (its ``F``
        keys at ``keys``): its type's base scores plus its own features'."""
        cdef int64_t T = self.T, t = -1
        cdef int64_t b = self.base_row_of(row, &t)
        if b >= 0:
            check_index(b * T, self.n_base)
            check_index(b * T + T - 1, self.n_base)
            memcpy(self.dense, self.base + b * T, T * sizeof(weight_t))
        else:
            memset(self.dense, 0, T * sizeof(weight_t))
            if self.type_keys != NULL and self.F_type:      # the same sums the base row holds
                self.emit.score_into(self.type_keys + t * self.F_type, NULL, self.F_type, self.dense, T)
        if F:
            self.emit.score_into(keys, NULL, F, self.dense, T)

    cdef void few_scores(self, const uint64_t* keys, Py_ssize_t F, int64_t row, const int32_t* tags,
                         int64_t n, weight_t* out) noexcept nogil:
        """out[c] = the emission score of tags[c] (n ascending tags) for
        token ``row``, as token_scores() sums it, without every tag's."""
        cdef int64_t T = self.T, j, t = -1
        cdef int64_t b = self.base_row_of(row, &t)
        for j in range(n):
            check_index(tags[j], T)
            if b >= 0:
                check_index(b * T + tags[j], self.n_base)
            out[j] = self.base[b * T + tags[j]] if b >= 0 else 0.0
            self.slot_of[tags[j]] = <int32_t>j
        if b < 0 and self.type_keys != NULL and self.F_type:
            self.emit.score_labels(self.type_keys + t * self.F_type, self.F_type, tags, n, out, self.slot_of)
        if F:
            self.emit.score_labels(keys, F, tags, n, out, self.slot_of)
        for j in range(n):
            self.slot_of[tags[j]] = -1

    cdef int32_t greedy_pick(self, const uint64_t* keys, Py_ssize_t F, int64_t row,
                             int32_t prev) noexcept nogil:
        """The tag greedy decoding gives token ``row`` after tag ``prev`` (T:
        the start), the one build() and best_after() give (prune_k 0), with
        no lattice: for a thousand tags, one pass over the scores instead of
        four over candidate lists."""
        cdef int64_t T = self.T, c, first = 0, last = T, tr = prev * T
        cdef int32_t cls = -1, tag, arg = -1
        cdef weight_t v, best = -INFINITY
        cdef bint few
        if self.classes != NULL:
            check_index(row, self.n_class_tokens)
            cls = self.classes[row]
        if cls >= 0:
            check_index(cls + 1, self.n_class_offsets)
            first = self.class_offsets[cls]
            last = self.class_offsets[cls + 1]
        few = cls >= 0 and few_candidates(last - first, T)
        if few:
            check_index(last - 1, self.n_class_tags)
            self.few_scores(keys, F, row, self.class_tags + first, last - first, self.dense)
        else:
            self.token_scores(keys, F, row)
        for c in range(first, last):
            if cls >= 0:
                check_index(c, self.n_class_tags)
                tag = self.class_tags[c]
            else:
                tag = <int32_t>c
            check_index(tr + tag, self.n_trans)
            if self.allowed != NULL and not self.allowed[tr + tag]:
                continue
            v = (self.dense[c - first] if few else self.dense[tag]) + self.trans[tr + tag]
            if v > best or arg < 0:
                best = v
                arg = tag
        if arg < 0:         # every transition forbidden: the first candidate, as best_after
            if cls >= 0:
                check_index(first, self.n_class_tags)
                arg = self.class_tags[first]
            else:
                arg = 0
        return arg

    # ------------------------------------------------------------ Python

    def _check(self, keys, bounds, n_tokens_expected=None):
        if keys.ndim != 2:
            raise ValueError("keys must be a 2-d array")
        b = np.asarray(bounds)
        if len(b) < 1 or b[0] != 0 or b[len(b) - 1] != keys.shape[0] or np.any(np.diff(b) < 0):
            raise ValueError("bounds must rise from 0 to the number of tokens")
        if self.classes != NULL and len(self.cand_owner[0]) != keys.shape[0]:
            raise ValueError("candidate classes and keys differ in length")
        _check_emit(self)

    def decode(self, keys, const int64_t[::1] bounds, bint greedy=False,
               const weight_t[:, ::1] base=None, const int64_t[::1] base_index=None, vocab=None,
               const uint64_t[:, ::1] type_keys=None, const int64_t[::1] base_rows=None):
        """Tag ids (int32, one per token) for a batch of sentences.

        ``keys``: uint64[tokens, F], or with ``vocab`` (uint64, distinct
        keys) uint32 ids into it, the key of id i being ``vocab[i]``.
        ``base[base_index[i]]`` (optional) holds emission scores already
        summed for token i (the features that depend on the word type only,
        scored once per type); ``keys`` then holds the remaining features.
        With ``type_keys`` (uint64[types, F_type]), token i is of type
        ``base_index[i]`` and type t's scores are ``base[base_rows[t]]``, or
        where that is -1 summed from ``type_keys[t]`` for the tags scored
        (the same sums; a type whose tokens have few candidates needs no
        row of every tag's scores).
        """
        cdef KeyRows rows
        owners = key_rows(keys, vocab, &rows)
        self._check(np.asarray(keys), np.asarray(bounds))
        if (base_index is None) != (base is None and type_keys is None):
            raise ValueError("base_index goes with base or type_keys")
        n_base_rows = 0 if base is None else base.shape[0]
        if base is not None and base.shape[1] != self.T:
            raise ValueError("base scores must be [rows, tags]")
        if type_keys is not None:
            if base_index is None or base_rows is None or base_rows.shape[0] != type_keys.shape[0]:
                raise ValueError("type_keys need base_index and one base row (or -1) per type")
            br = np.asarray(base_rows)
            if len(br) and (br.min() < -1 or br.max() >= n_base_rows):
                raise ValueError("base row out of range")
        elif base_rows is not None:
            raise ValueError("base_rows go with type_keys")
        if base_index is not None:
            if base_index.shape[0] != rows.n_rows:
                raise ValueError("base scores need one type index per token")
            bi = np.asarray(base_index)
            n_types = type_keys.shape[0] if type_keys is not None else n_base_rows
            if len(bi) and (bi.min() < 0 or bi.max() >= n_types):
                raise ValueError("base index out of range")
        out = np.empty(rows.n_rows, dtype=np.int32)
        cdef int32_t[::1] tags = out
        cdef Py_ssize_t s, F = rows.F
        cdef int64_t start, n, i
        cdef int32_t prev
        cdef const uint64_t* kp
        cdef bint picking = greedy and self.prune_k == 0
        if base_index is not None and rows.n_rows:
            self.base_index = &base_index[0]
            if base is not None and base.shape[0]:
                self.base = &base[0, 0]
                self.n_base = base.shape[0] * self.T
            if type_keys is not None:
                self.type_keys = &type_keys[0, 0] if type_keys.shape[1] else NULL
                self.F_type = type_keys.shape[1]
                self.base_rows = &base_rows[0]
                self.n_types = type_keys.shape[0]
        self.n_rows = rows.n_rows
        try:
            with nogil:
                for s in range(bounds.shape[0] - 1):
                    start = bounds[s]
                    n = bounds[s + 1] - start
                    if n == 0:
                        continue
                    check_index(start + n - 1, tags.shape[0])    # greedy/viterbi write n tags
                    self.sentence_keys(&rows, start, n, &kp)
                    if picking:
                        prev = <int32_t>self.T
                        for i in range(n):
                            prev = tags[start + i] = self.greedy_pick(kp + i * F if F else kp, F, start + i, prev)
                        continue
                    self.build(kp, F, start, n, NULL)
                    if greedy:
                        self.greedy(n, &tags[start])
                    else:
                        self.viterbi(n, &tags[start])
        finally:
            self.base = NULL
            self.base_index = NULL
            self.n_base = 0
            self.type_keys = NULL
            self.base_rows = NULL
            self.F_type = 0
            self.n_types = 0
        return out

    def _check_training(self, AveragedVector trans, keys, gold, bounds=None, order=None):
        """The checks of every training entry point (epochs over a batch
        with ``bounds`` and ``order``, or one sentence)."""
        keys = np.asarray(keys)
        if bounds is not None:
            self._check(keys, np.asarray(bounds))
        if <const weight_t*>trans.w != self.trans:
            raise ValueError("train with the transition vector the search reads")
        if keys.ndim != 2 or gold.shape[0] != keys.shape[0]:
            raise ValueError("gold tags and keys differ in length")
        g = np.asarray(gold)
        if len(g) and (g.min() < 0 or g.max() >= self.T):
            raise ValueError("gold tag out of range")
        if self.classes != NULL and len(self.cand_owner[0]) != keys.shape[0]:
            raise ValueError("candidate classes and keys differ in length")
        _check_emit(self)
        if order is not None:
            o = np.asarray(order)
            if len(o) and (o.min() < 0 or o.max() >= len(bounds) - 1):
                raise ValueError("sentence index out of range")

    def train_epoch(self, AveragedVector trans, keys,
                    const int64_t[::1] bounds, const int32_t[::1] gold,
                    const int64_t[::1] order, step_t step, bint greedy=False, vocab=None):
        """One epoch of Collins' structured perceptron over the sentences in
        ``order``; sentence k is step ``step + k + 1``.  Returns
        (tokens wrong, last step).  ``trans`` must be the vector this search
        reads its transitions from.  ``keys`` and ``vocab`` as for
        :meth:`decode`."""
        cdef UpdateRule rule = GreedyPerceptronRule() if greedy else PerceptronRule()
        return run_epoch(self, rule, trans, keys, bounds, gold, order, step, vocab)

    # ------------------------------------------------------------ updates

    cdef int64_t walk_diff(self, AveragedVector trans, const uint64_t* keys, Py_ssize_t F,
                           int64_t start, int64_t n, const int32_t* gold, const int32_t* pred,
                           step_t step, EntryList* out) except -1 nogil:
        """The gold-minus-predicted walk of a sentence (rows start..start+n-1,
        ``keys`` pointing at their keys) tagged ``pred``: where a token's tags differ, +1 for its
        features with the gold tag and -1 with the predicted one; where a
        token's tag or the one before it differs, +1 for the gold transition
        into it and -1 for the predicted one; the same for the transitions to
        the end.  ``out`` NULL: the changes are made at once, at ``step``
        (the perceptron; the transposed transitions are kept in step).  Else
        they are appended to ``out`` in the same order (MIRA's difference
        vectors).  Returns the tokens whose tags differ."""
        cdef int64_t T = self.T
        cdef int64_t i, wrong = 0
        cdef Py_ssize_t need
        cdef int32_t gp = T, pp = T      # previous tags; T stands for the start
        if out != NULL:
            need = out.top + 2 * (n + 1)
            for i in range(n):
                if gold[i] != pred[i]:
                    need += 2 * F
            reserve_entries(out, need)
        for i in range(n):
            check_index(start + i, self.n_rows)     # row of the batch
            if gold[i] != pred[i]:
                wrong += 1
                self.token_diff(keys, i * F, F, gold[i], pred[i], step, out)
            if gold[i] != pred[i] or gp != pp:
                self.trans_diff(trans, gp, gold[i], 1.0, step, out)
                self.trans_diff(trans, pp, pred[i], -1.0, step, out)
            gp = gold[i]
            pp = pred[i]
        if gp != pp:                     # T + 1 stands for the end
            self.trans_diff(trans, T + 1, gp, 1.0, step, out)
            self.trans_diff(trans, T + 1, pp, -1.0, step, out)
        return wrong

    cdef int token_diff(self, const uint64_t* keys, int64_t row, Py_ssize_t F, int32_t gold,
                        int32_t pred, step_t step, EntryList* out) except -1 nogil:
        """+1 for the features keys[row:row + F] with ``gold``, -1 with
        ``pred``: made at ``step``, or appended to ``out`` (room reserved)."""
        cdef Py_ssize_t f
        for f in range(F):
            if keys[row + f] == PAD_KEY:       # padding: no feature
                continue
            if out == NULL:
                self.emit.add(keys[row + f], gold, 1.0, step)
                self.emit.add(keys[row + f], pred, -1.0, step)
            else:
                check_index(out.top + 1, out.cap)
                out.items[out.top].key = keys[row + f]
                out.items[out.top].tag = gold
                out.items[out.top].v = 1.0
                out.items[out.top + 1].key = keys[row + f]
                out.items[out.top + 1].tag = pred
                out.items[out.top + 1].v = -1.0
                out.top += 2
        return 0

    cdef int trans_diff(self, AveragedVector trans, int64_t prev, int32_t tag, weight_t v,
                        step_t step, EntryList* out) except -1 nogil:
        """v for the transition prev -> tag (prev: a tag, T the start, T + 1
        for tag -> end): made at ``step`` (and in the transposed copy), or
        appended to ``out`` (room reserved)."""
        cdef int64_t T = self.T
        cdef int64_t index = prev * T + tag
        if out != NULL:
            check_index(out.top, out.cap)
            out.items[out.top].key = <uint64_t>index
            out.items[out.top].tag = -1
            out.items[out.top].v = v
            out.top += 1
            return 0
        trans.add(index, v, step)
        if self.transT != NULL and prev < T:     # keep the transposed copy in step
            check_index(tag * T + prev, T * T)
            self.transT[tag * T + prev] += v
        return 0

    cdef int64_t greedy_update(self, AveragedVector trans, const uint64_t* keys,
                               Py_ssize_t F, int64_t start, int64_t n,
                               const int32_t* gold, step_t step) except -1 nogil:
        """Greedy training: each token predicted with the previous predicted
        tag, updated at once where wrong (scores see earlier updates)."""
        cdef int64_t T = self.T
        cdef int64_t i, wrong = 0
        cdef int32_t pred, prev = T
        for i in range(n):
            check_index(start + i, self.n_rows)     # row of the batch
            self.build(keys + i * F, F, start + i, 1, gold + i)
            pred = self.best_after(0, prev)
            if pred != gold[i]:
                wrong += 1
                self.token_diff(keys, i * F, F, gold[i], pred, step, NULL)
                self.trans_diff(trans, prev, gold[i], 1.0, step, NULL)
                self.trans_diff(trans, prev, pred, -1.0, step, NULL)
            prev = pred
        return wrong


# ---------------------------------------------------------------- training epochs

cdef class UpdateRule:
    """A training update of one sentence (declared in _sequence.pxd)."""

    cdef int begin(self, Search s) except -1:
        """Before an epoch."""
        return 0

    cdef void finish(self, Search s) noexcept:
        """After an epoch, whether it ended or raised."""
        pass

    cdef int64_t update(self, Search s, AveragedVector trans, const uint64_t* keys, Py_ssize_t F,
                        int64_t start, int64_t n, const int32_t* gold, step_t step) except -1 nogil:
        """Decode the sentence of rows start..start+n-1 (n >= 1), ``keys``
        pointing at their keys, with the current weights and update them as part of ``step``;
        returns the tokens decoded wrong."""
        return 0


@cython.final
cdef class PerceptronRule(UpdateRule):
    """Collins' structured perceptron: Viterbi, then the gold-minus-predicted
    walk applied at once.  Viterbi reads the transposed transitions, which
    the updates keep in step during the epoch."""

    cdef int begin(self, Search s) except -1:
        s._transpose()
        return 0

    cdef void finish(self, Search s) noexcept:
        free(s.transT)               # later updates (MIRA) do not maintain it
        s.transT = NULL

    cdef int64_t update(self, Search s, AveragedVector trans, const uint64_t* keys, Py_ssize_t F,
                        int64_t start, int64_t n, const int32_t* gold, step_t step) except -1 nogil:
        s.build(keys, F, start, n, gold)
        check_index(n - 1, s.cap_start)          # s.path holds cap_start tags
        s.viterbi(n, s.path)
        return s.walk_diff(trans, keys, F, start, n, gold, s.path, step, NULL)


@cython.final
cdef class GreedyPerceptronRule(UpdateRule):
    """The perceptron of greedy decoding (``Search.greedy_update``)."""

    cdef int64_t update(self, Search s, AveragedVector trans, const uint64_t* keys, Py_ssize_t F,
                        int64_t start, int64_t n, const int32_t* gold, step_t step) except -1 nogil:
        return s.greedy_update(trans, keys, F, start, n, gold, step)


cdef int reserve_entries(EntryList* out, Py_ssize_t need) except -1 nogil:
    """Room for ``need`` entries in ``out``."""
    return reserve(<void**>&out.items, &out.cap, need, sizeof(Entry), b"trainer")


cdef object key_rows(keys, vocab, KeyRows* rows):
    """Point ``rows`` at ``keys`` (uint64[tokens, F]), or with ``vocab``
    at the ids ``keys`` (uint32[tokens, F]) into it; returns what must stay
    alive while ``rows`` is read."""
    cdef const uint64_t[:, ::1] kv
    cdef const uint32_t[:, ::1] iv
    cdef const uint64_t[::1] vv
    rows.keys = NULL
    rows.ids = NULL
    rows.vocab = NULL
    rows.n_vocab = 0
    if vocab is None:
        kv = keys
        rows.n_rows, rows.F = kv.shape[0], kv.shape[1]
        if kv.shape[0] and kv.shape[1]:
            rows.keys = &kv[0, 0]
        return kv
    iv = keys
    vv = vocab
    rows.n_rows, rows.F = iv.shape[0], iv.shape[1]
    rows.n_vocab = vv.shape[0]
    if iv.shape[0] and iv.shape[1]:
        rows.ids = &iv[0, 0]
        if vv.shape[0]:
            rows.vocab = &vv[0]
        else:
            raise ValueError("feature ids without a vocabulary")
    return iv, vv


cdef object run_epoch(Search s, UpdateRule rule, AveragedVector trans, keys_in, bounds_in,
                      gold_in, order_in, step_t step, vocab=None):
    """One training epoch, the one loop of every sequence learner: the
    sentences of ``order`` in turn, sentence k of it being step
    ``step + k + 1`` (an empty one too), each decoded and updated by
    ``rule``.  ``keys_in`` and ``vocab`` as for ``Search.decode``.
    Returns (tokens decoded wrong, the last step)."""
    cdef KeyRows rows
    owners = key_rows(keys_in, vocab, &rows)
    cdef const int64_t[::1] bounds = bounds_in
    cdef const int32_t[::1] gold = gold_in
    cdef const int64_t[::1] order = order_in
    s._check_training(trans, keys_in, gold_in, bounds_in, order_in)
    cdef Py_ssize_t k, F = rows.F
    cdef int64_t sent, start, n, wrong = 0
    cdef const uint64_t* kp
    s.n_rows = rows.n_rows
    rule.begin(s)
    try:
        with nogil:
            for k in range(order.shape[0]):
                sent = order[k]
                start = bounds[sent]
                n = bounds[sent + 1] - start
                step += 1
                if n == 0:
                    continue
                check_index(start + n - 1, gold.shape[0])
                s.sentence_keys(&rows, start, n, &kp)
                wrong += rule.update(s, trans, kp, F, start, n, &gold[start], step)
    finally:
        rule.finish(s)
    return wrong, step


cdef weight_t _kth_largest(const weight_t* values, weight_t* work, int n, int k) noexcept nogil:
    """The k-th largest of values[0..n-1] (1 <= k <= n), by quickselect."""
    cdef int lo = 0, hi = n - 1, i, j, target = k - 1
    cdef weight_t pivot, tmp
    for i in range(n):
        work[i] = values[i]
    while lo < hi:
        check_index((lo + hi) // 2, n)
        pivot = work[(lo + hi) // 2]
        i = lo
        j = hi
        while i <= j:
            check_index(i, n)
            while work[i] > pivot:
                i += 1
                check_index(i, n)
            check_index(j, n)
            while work[j] < pivot:
                j -= 1
                check_index(j, n)
            if i <= j:
                tmp = work[i]; work[i] = work[j]; work[j] = tmp
                i += 1
                j -= 1
        if target <= j:
            hi = j
        elif target >= i:
            lo = i
        else:
            break
    check_index(target, n)
    return work[target]


def _check_emit(Search search):
    """The emission table may have been trained since the search was made:
    scoring writes one score per label into buffers of T."""
    if search.emit.n_classes > search.T:
        raise ValueError(f"the emission table has labels up to {search.emit.n_classes - 1} "
                         f"for {search.T} tags")
