# cython: language_level=3
"""Exact k-best Viterbi and structured MIRA over a ``Search`` lattice,
without the GIL.

k-best Viterbi keeps the k best partial paths per (token, candidate), with
ties broken so that k = 1 gives Viterbi's own answer, and respects the
``allowed`` mask and candidate lists as ``Search.viterbi`` does.
Structured MIRA (Crammer & Singer; McDonald, Crammer & Pereira 2005)
makes the smallest weight change that separates gold from each of the k
best by its Hamming loss, with slack C (Hildreth's coordinate ascent), and
runs as the perceptron's epoch loop with the ``MiraRule`` update rule.
Details: docs/architecture.md.
"""
import numpy as np

cimport cython
from libc.math cimport INFINITY
from libc.stdint cimport uint8_t, uint64_t, int64_t, int32_t
from libc.stdlib cimport malloc, free, qsort

from .types cimport weight_t, step_t
from .weights cimport WeightTable, AveragedVector
from .sequence cimport Search, Entry, EntryList, UpdateRule, run_epoch
from .check cimport check_index, check, DEBUG_BUILD as _DEBUG_BUILD
from .buffers cimport reserve

DEBUG_BUILD = bool(_DEBUG_BUILD)
"""True when this module was compiled by the debug build (raw indices checked)."""
cdef int MAX_HILDRETH_ITER = 200     # coordinate steps per constraint


cdef inline int _grow(void** buf, Py_ssize_t* cap, Py_ssize_t need, size_t item) except -1 nogil:
    return reserve(buf, cap, need, item, b"k-best decoder")


cdef int _cmp_entry(const void* a, const void* b) noexcept nogil:
    cdef const Entry* x = <const Entry*>a
    cdef const Entry* y = <const Entry*>b
    if x.tag != y.tag:
        return -1 if x.tag < y.tag else 1
    if x.key != y.key:
        return -1 if x.key < y.key else 1
    return 0


@cython.final
cdef class KBest:
    """k-best decoding and MIRA updates over one ``Search``.  Its buffers
    start at NULL and 0 (Cython zeroes a new object's C attributes)."""
    cdef Search search
    cdef int k
    # per lattice candidate c: up to k entries at c * k + r
    cdef weight_t* score
    cdef int32_t* back_c        # previous candidate, relative to its token's first
    cdef int32_t* back_r        # rank in that candidate's list
    cdef int32_t* count         # entries per candidate
    cdef int32_t* heads         # merge heads, one per previous candidate
    cdef Py_ssize_t cap_cand, cap_heads
    # results of the last decode: n_found sequences of n tags
    cdef int32_t* paths
    cdef weight_t* path_scores
    cdef Py_ssize_t cap_paths
    cdef int n_found
    # MIRA work space: the difference vectors, one after the other
    cdef EntryList diff
    cdef int64_t* seg           # per sequence: first entry, and the end
    cdef weight_t* gram
    cdef weight_t* alpha
    cdef weight_t* resid
    cdef weight_t* loss

    def __dealloc__(self):
        free(self.score)
        free(self.back_c)
        free(self.back_r)
        free(self.count)
        free(self.heads)
        free(self.paths)
        free(self.path_scores)
        free(self.diff.items)
        free(self.seg)
        free(self.gram)
        free(self.alpha)
        free(self.resid)
        free(self.loss)

    def __init__(self, Search search, int k=1):
        if k < 1:
            raise ValueError("k must be at least 1")
        self.search = search
        self.k = k
        self.n_found = 0
        self.path_scores = <weight_t*>malloc(k * sizeof(weight_t))
        self.seg = <int64_t*>malloc((k + 1) * sizeof(int64_t))
        self.gram = <weight_t*>malloc(k * k * sizeof(weight_t))
        self.alpha = <weight_t*>malloc(k * sizeof(weight_t))
        self.resid = <weight_t*>malloc(k * sizeof(weight_t))
        self.loss = <weight_t*>malloc(k * sizeof(weight_t))
        if self.path_scores == NULL or self.seg == NULL or self.gram == NULL \
                or self.alpha == NULL or self.resid == NULL or self.loss == NULL:
            raise MemoryError()

    # ------------------------------------------------------------ decoding

    cdef int reserve(self, int64_t n) except -1 nogil:
        check_index(n - 1, self.search.n_built)
        cdef Py_ssize_t n_cands = self.search.cand_start[n], cap
        cdef int k = self.k
        if n_cands > self.cap_cand:
            cap = self.cap_cand
            _grow(<void**>&self.count, &cap, n_cands, sizeof(int32_t))
            cap = self.cap_cand
            _grow(<void**>&self.score, &cap, n_cands, k * sizeof(weight_t))
            cap = self.cap_cand
            _grow(<void**>&self.back_c, &cap, n_cands, k * sizeof(int32_t))
            cap = self.cap_cand
            _grow(<void**>&self.back_r, &cap, n_cands, k * sizeof(int32_t))
            self.cap_cand = cap
        _grow(<void**>&self.heads, &self.cap_heads, self.search.T + 1, sizeof(int32_t))
        _grow(<void**>&self.paths, &self.cap_paths, n * k, sizeof(int32_t))
        return 0

    cdef int decode(self, int64_t n) except -1 nogil:
        """The k best paths over the built lattice of n tokens into
        self.paths (row j: path j) and self.path_scores; sets n_found."""
        cdef int64_t T = self.search.T
        cdef int k = self.k, r, got, m
        cdef int64_t i, c, pc, first, prev_first, j, best_pc
        cdef int32_t tag
        cdef weight_t best
        cdef const uint8_t* allowed = self.search.allowed
        cdef const int32_t* cand = self.search.cand
        cdef const int64_t* cand_start = self.search.cand_start
        cdef const weight_t* escore = self.search.escore
        cdef const weight_t* trans = self.search.trans
        cdef weight_t* score
        cdef int32_t* count
        cdef int32_t* heads
        self.n_found = 0
        if n == 0:
            return 0
        self.reserve(n)
        score = self.score
        count = self.count
        heads = self.heads
        # lengths: the search's lattice has n_cands candidates (n_built + 1
        # starts), its transitions n_trans; score/back_c/back_r hold k per
        # allocated candidate, count one, heads cap_heads, paths cap_paths
        check(self.search.n_cands <= self.cap_cand)   # c < n_cands indexes count and score rows
        for c in range(cand_start[0], cand_start[1]):
            check_index(c, self.search.n_cands)
            tag = cand[c]
            check_index(T * T + tag, self.search.n_trans)
            if allowed != NULL and not allowed[T * T + tag]:
                count[c] = 0
            else:
                count[c] = 1
                check_index(c * k, self.cap_cand * k)
                score[c * k] = escore[c] + trans[T * T + tag]
                self.back_c[c * k] = -1
                self.back_r[c * k] = -1
        for i in range(1, n):
            prev_first = cand_start[i - 1]
            m = <int>(cand_start[i] - prev_first)
            if m > 0:
                check_index(m - 1, self.cap_heads)
            for c in range(cand_start[i], cand_start[i + 1]):
                check_index(c, self.search.n_cands)
                tag = cand[c]
                for j in range(m):
                    heads[j] = 0
                got = 0
                while got < k:
                    # transitions ptag -> tag: index tag + ptag * T
                    best_pc = self.best_head(prev_first, m, tag, T, &best)
                    if best_pc < 0:
                        break
                    check_index(c * k + got, self.cap_cand * k)
                    score[c * k + got] = best + escore[c]
                    self.back_c[c * k + got] = <int32_t>best_pc
                    self.back_r[c * k + got] = heads[best_pc]
                    heads[best_pc] += 1
                    got += 1
                count[c] = got
        # the end: merge the last token's lists with the end transitions
        first = cand_start[n - 1]
        m = <int>(cand_start[n] - first)
        if m > 0:
            check_index(m - 1, self.cap_heads)
        for j in range(m):
            heads[j] = 0
        got = 0
        while got < k:
            # transitions ptag -> end: index (T + 1) * T + ptag
            best_pc = self.best_head(first, m, (T + 1) * T, 1, &best)
            if best_pc < 0:
                break
            check_index(got, k)
            self.path_scores[got] = best
            # follow the back-pointers
            c = first + best_pc
            r = heads[best_pc]
            for i in range(n - 1, -1, -1):
                check_index(c, self.search.n_cands)
                check_index(got * n + i, self.cap_paths)
                self.paths[got * n + i] = cand[c]
                if i > 0:
                    # an entry r < count[c] of c's list, pointing into the
                    # previous token's candidates
                    check_index(r, count[c])
                    pc = self.back_c[c * k + r]
                    r = self.back_r[c * k + r]
                    check_index(pc, cand_start[i] - cand_start[i - 1])
                    c = cand_start[i - 1] + pc
            heads[best_pc] += 1
            got += 1
        self.n_found = got
        if got == 0 and allowed != NULL:
            # no path satisfies the constraints: decode without them
            self.search.allowed = NULL
            self.decode(n)
            self.search.allowed = allowed
        return 0

    cdef int64_t best_head(self, int64_t first, int m, int64_t base, int64_t stride,
                           weight_t* best_out) noexcept nogil:
        """The merge step of decode(): among the m candidates first..first+m-1
        of a token, the j whose next unused list entry (heads[j]) scores best
        through the transition base + ptag * stride from its tag ptag
        (ties: the lowest tag, the candidates being in ascending tag order),
        its score into best_out; -1 when every list is used up or
        forbidden."""
        cdef int64_t j, pc, index, best_pc = -1
        cdef int k = self.k
        cdef weight_t v, best = -INFINITY
        cdef const uint8_t* allowed = self.search.allowed
        for j in range(m):
            pc = first + j
            check_index(pc, self.search.n_cands)
            if self.heads[j] >= self.count[pc]:
                continue
            index = base + self.search.cand[pc] * stride
            check_index(index, self.search.n_trans)
            if allowed != NULL and not allowed[index]:
                continue
            check_index(self.heads[j], k)
            v = self.score[pc * k + self.heads[j]] + self.search.trans[index]
            if best_pc < 0 or v > best:
                best = v
                best_pc = j
        best_out[0] = best
        return best_pc

    cdef int decode_one(self, int64_t n) except -1 nogil:
        """k = 1: the search's own Viterbi (the same path, ties included)."""
        self.n_found = 0
        if n == 0:
            return 0
        _grow(<void**>&self.paths, &self.cap_paths, n, sizeof(int32_t))
        check_index(n - 1, self.cap_paths)         # viterbi writes n tags
        self.search.viterbi(n, self.paths)
        self.path_scores[0] = self.path_score(n, self.paths)
        self.n_found = 1
        return 0

    # ------------------------------------------------------------ MIRA

    cdef weight_t path_score(self, int64_t n, const int32_t* tags) noexcept nogil:
        """Score of a tag sequence over the built lattice (its tags must be
        candidates; the gold path is, after build(..., gold))."""
        cdef int64_t T = self.search.T
        cdef int64_t i, c
        cdef int32_t prev = T
        cdef weight_t total = 0
        check_index(n - 1, self.search.n_built)
        for i in range(n):
            for c in range(self.search.cand_start[i], self.search.cand_start[i + 1]):
                check_index(c, self.search.n_cands)
                if self.search.cand[c] == tags[i]:
                    total += self.search.escore[c]
                    break
            check_index(prev * T + tags[i], self.search.n_trans)
            total += self.search.trans[prev * T + tags[i]]
            prev = tags[i]
        check_index((T + 1) * T + prev, self.search.n_trans)
        return total + self.search.trans[(T + 1) * T + prev]

    cdef int64_t diff_entries(self, AveragedVector trans, int64_t pos, const uint64_t* keys,
                              Py_ssize_t F, int64_t start, int64_t n, const int32_t* gold,
                              const int32_t* pred) except -1 nogil:
        """Append phi(gold) - phi(pred) at diff.items[pos:] (the walk of
        ``Search.walk_diff``), sorted with equal features merged (zeros
        dropped); returns the new end."""
        cdef int64_t i, top, w
        cdef Entry* entries
        self.diff.top = pos
        self.search.walk_diff(trans, keys, F, start, n, gold, pred, 0, &self.diff)
        top = self.diff.top
        entries = self.diff.items
        if top == pos:
            return pos
        check_index(top - 1, self.diff.cap)
        qsort(&entries[pos], top - pos, sizeof(Entry), _cmp_entry)
        # merge equal features
        w = pos
        for i in range(pos + 1, top):
            check_index(i, self.diff.cap)
            check_index(w, i)
            if entries[i].key == entries[w].key and entries[i].tag == entries[w].tag:
                entries[w].v += entries[i].v
            else:
                if entries[w].v != 0:
                    w += 1
                entries[w] = entries[i]
        check_index(w, top)
        if entries[w].v != 0:
            w += 1
        return w

    cdef weight_t dot(self, int a, int b) noexcept nogil:
        """Dot product of difference vectors a and b."""
        check_index(a + 1, self.k + 1)
        check_index(b + 1, self.k + 1)
        cdef int64_t i = self.seg[a], ie = self.seg[a + 1]
        cdef int64_t j = self.seg[b], je = self.seg[b + 1]
        cdef weight_t total = 0
        cdef int cmp
        while i < ie and j < je:
            check_index(i, self.diff.cap)
            check_index(j, self.diff.cap)
            cmp = _cmp_entry(&self.diff.items[i], &self.diff.items[j])
            if cmp == 0:
                total += self.diff.items[i].v * self.diff.items[j].v
                i += 1
                j += 1
            elif cmp < 0:
                i += 1
            else:
                j += 1
        return total

    cdef int64_t update(self, AveragedVector trans, const uint64_t* keys, Py_ssize_t F,
                        int64_t start, int64_t n, const int32_t* gold, step_t step,
                        weight_t C) except -1 nogil:
        """Decode the k best over the built lattice and make the MIRA update;
        returns the tokens the best sequence gets wrong."""
        cdef int k = self.k, m = 0, a, b, it, arg
        cdef int64_t i, wrong = 0, hamming, pos = 0
        cdef weight_t gold_score, viol, best_viol, step_size, new_alpha, change
        cdef const int32_t* pred
        cdef const Entry* e
        if self.k == 1:
            self.decode_one(n)
        else:
            self.decode(n)
        if self.n_found == 0:
            return 0
        check_index(self.n_found * n - 1, self.cap_paths)
        for i in range(n):
            if self.paths[i] != gold[i]:
                wrong += 1
        gold_score = self.path_score(n, gold)
        # one constraint per decoded sequence other than gold
        self.seg[0] = 0
        for a in range(self.n_found):
            pred = &self.paths[a * n]
            hamming = 0
            for i in range(n):
                if pred[i] != gold[i]:
                    hamming += 1
            if hamming == 0:
                continue
            pos = self.diff_entries(trans, self.seg[m], keys, F, start, n, gold, pred)
            if pos == self.seg[m]:
                continue       # same features as gold: no constraint can help
            check_index(m + 1, self.k + 1)          # loss, resid, alpha: k; seg: k + 1
            check_index(a, self.k)                  # path_scores
            self.loss[m] = <weight_t>hamming
            self.resid[m] = hamming - (gold_score - self.path_scores[a])
            self.alpha[m] = 0
            m += 1
            self.seg[m] = pos
        if m == 0:
            return wrong
        for a in range(m):
            for b in range(a, m):
                check_index(a * k + b, k * k)
                check_index(b * k + a, k * k)
                self.gram[a * k + b] = self.dot(a, b)
                self.gram[b * k + a] = self.gram[a * k + b]
        if m == 1:
            if self.resid[0] > 0:
                self.alpha[0] = min(C, self.resid[0] / self.gram[0])
        else:
            # Hildreth: coordinate ascent on the dual, alphas in [0, C];
            # resid[j] = loss_j - margin_j after the current alphas
            for it in range(MAX_HILDRETH_ITER * m):
                best_viol = 0
                arg = -1
                for a in range(m):
                    check_index(a, k)
                    viol = 0
                    if self.resid[a] > 0 and self.alpha[a] < C:
                        viol = self.resid[a]
                    elif self.resid[a] < 0 and self.alpha[a] > 0:
                        viol = -self.resid[a]
                    if viol > best_viol:
                        best_viol = viol
                        arg = a
                if arg < 0 or best_viol < 1e-10 * (1 + self.loss[arg]):
                    break
                check_index(arg * k + arg, k * k)
                new_alpha = self.alpha[arg] + self.resid[arg] / self.gram[arg * k + arg]
                if new_alpha < 0:
                    new_alpha = 0
                elif new_alpha > C:
                    new_alpha = C
                change = new_alpha - self.alpha[arg]
                if change == 0:
                    break
                self.alpha[arg] = new_alpha
                for b in range(m):
                    check_index(arg * k + b, k * k)
                    self.resid[b] -= change * self.gram[arg * k + b]
        # w += sum_j alpha_j d_j, entry by entry
        for a in range(m):
            check_index(a + 1, k + 1)
            step_size = self.alpha[a]
            if step_size <= 0:
                continue
            for i in range(self.seg[a], self.seg[a + 1]):
                check_index(i, self.diff.cap)
                e = &self.diff.items[i]
                if e.tag < 0:
                    trans.add(<Py_ssize_t>e.key, step_size * e.v, step)
                else:
                    self.search.emit.add(e.key, e.tag, step_size * e.v, step)
        return wrong

    # ------------------------------------------------------------ Python

    def kbest(self, const uint64_t[:, ::1] keys, const int64_t[::1] bounds):
        """The k best sequences of every sentence of a batch: per sentence a
        list of (score, int32 tag array), best first (fewer than k when the
        sentence has fewer valid sequences)."""
        cdef Search s = self.search
        s._check(np.asarray(keys), np.asarray(bounds))
        cdef Py_ssize_t sent, F = keys.shape[1], j, i
        cdef int64_t start, n
        cdef const uint64_t* kp = &keys[0, 0] if keys.shape[0] and F else NULL
        s.n_rows = keys.shape[0]
        out = []
        for sent in range(bounds.shape[0] - 1):
            start = bounds[sent]
            n = bounds[sent + 1] - start
            if n == 0:
                out.append([(0.0, np.zeros(0, np.int32))])
                continue
            with nogil:
                s.build(kp + start * F if kp != NULL else NULL, F, start, n, NULL)
                self.decode(n)
            rows = []
            for j in range(self.n_found):
                tags = np.empty(n, dtype=np.int32)
                for i in range(n):
                    check_index(j * n + i, self.cap_paths)
                    tags[i] = self.paths[j * n + i]
                rows.append((float(self.path_scores[j]), tags))
            out.append(rows)
        return out

    def mira_step(self, AveragedVector trans, const uint64_t[:, ::1] keys,
                  const int32_t[::1] gold, step_t step, double C=1.0):
        """One MIRA update on one sentence (all of ``keys``), as step
        ``step``: returns (tokens the best sequence got wrong, the k best
        sequences decoded before the update, best first), a pair whatever
        the sentence (an empty one: ``(0, [])``, nothing decoded or
        updated)."""
        cdef Search s = self.search
        s._check_training(trans, keys, gold)
        if step < 1 or step < trans.last_step or step < s.emit.last_step:
            raise ValueError("steps start at 1 and never decrease")
        cdef Py_ssize_t F = keys.shape[1]
        cdef int64_t n = keys.shape[0], wrong = 0
        cdef const uint64_t* kp = &keys[0, 0] if keys.shape[0] and F else NULL
        if n == 0:
            return 0, []
        cdef MiraRule rule = MiraRule(self, C)
        s.n_rows = n
        with nogil:
            wrong = rule.update(s, trans, kp, F, 0, n, &gold[0], step)
        check(self.n_found * n <= self.cap_paths)
        seqs = [np.array([self.paths[j * n + i] for i in range(n)], dtype=np.int32)
                for j in range(self.n_found)]
        return wrong, seqs


@cython.final
cdef class MiraRule(UpdateRule):
    """k-best MIRA as the update rule of ``run_epoch``."""
    cdef KBest kb
    cdef double C

    def __cinit__(self, KBest kb, double C):
        self.kb = kb
        self.C = C

    cdef int64_t update(self, Search s, AveragedVector trans, const uint64_t* keys, Py_ssize_t F,
                        int64_t start, int64_t n, const int32_t* gold, step_t step) except -1 nogil:
        s.build(keys, F, start, n, gold)
        return self.kb.update(trans, keys, F, start, n, gold, step, self.C)


def kbest(Search search, keys, bounds, int k):
    """The k best tag sequences of every sentence in a batch, per sentence a
    list of (score, int32 tags), best first; ties by the tag sequence read
    right to left, ascending."""
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    bounds = np.ascontiguousarray(bounds, dtype=np.int64)
    return KBest(search, k).kbest(keys, bounds)


def mira_epoch(Search search, AveragedVector trans, keys,
               const int64_t[::1] bounds, const int32_t[::1] gold,
               const int64_t[::1] order, step_t step, int k=1, C=1.0, vocab=None):
    """One epoch of k-best MIRA over the sentences in ``order``; sentence j
    of ``order`` is step ``step + j + 1``.  Returns (tokens the best
    sequence got wrong, last step), like ``Search.train_epoch`` (``keys``
    and ``vocab`` as there)."""
    cdef double c = 1.0 if C is None else float(C)
    if not c > 0:
        raise ValueError("C must be positive")
    return run_epoch(search, MiraRule(KBest(search, k), c), trans, keys, bounds, gold, order, step, vocab)
