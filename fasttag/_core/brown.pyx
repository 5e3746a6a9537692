# cython: language_level=3
"""Brown clustering in compiled code: the exchange step and the merges.

:func:`exchange` moves each word to the class that most raises the
class-bigram log-likelihood; :func:`merge` then merges the final classes
two by two, always the pair that loses least, which gives the tree of the
bit strings in O(classes^3).  Class ``n_classes`` is a fixed context class
(sentence boundaries, rare words) that never moves or merges.  Everything
runs on typed memoryviews without the GIL.  The objective and costs:
docs/architecture.md.
"""
import numpy as np

from libc.math cimport log
from libc.stdint cimport int32_t, int64_t

from .check cimport DEBUG_BUILD as _DEBUG_BUILD

DEBUG_BUILD = bool(_DEBUG_BUILD)

TABLE_SIZE = 1 << 20
"""f(x) = x log x is read from a table below this count, computed above."""


def xlogx_table():
    """f(x) = x log x for x in [0, TABLE_SIZE), f(0) = 0."""
    x = np.arange(TABLE_SIZE, dtype=np.float64)
    out = np.zeros(TABLE_SIZE, dtype=np.float64)
    out[1:] = x[1:] * np.log(x[1:])
    return out


cdef inline double F(const double[::1] table, int64_t x) noexcept nogil:
    if x < table.shape[0]:
        return table[x]
    return <double>x * log(<double>x)


cdef inline double G(const double[::1] table, int64_t x, int64_t y) noexcept nogil:
    """f(x + y) - f(x) - f(y): the gain of pooling two counts."""
    if x == 0 or y == 0:
        return 0.0
    return F(table, x + y) - F(table, x) - F(table, y)


cdef double _gain(const int64_t[:, ::1] N, const int64_t[::1] L, const int64_t[::1] R,
                  const double[::1] table, const int64_t[::1] sacc, const int64_t[::1] pacc,
                  const int32_t[::1] stouch, const int32_t[::1] ptouch, int ns, int np_,
                  int64_t selfc, int64_t cl, int64_t cr, int b) noexcept nogil:
    """The change of Q when a word (taken out of its class) joins class b:
    ``sacc``/``pacc`` its bigram counts with each successor/predecessor
    class (listed in ``stouch``/``ptouch``), ``selfc`` with itself, ``cl``
    and ``cr`` its row and column totals."""
    cdef int i, c, d
    cdef int64_t x, sb, pb
    cdef double g = 0.0
    for i in range(ns):
        d = stouch[i]
        x = N[b, d]
        g += F(table, x + sacc[d]) - F(table, x)
    for i in range(np_):
        c = ptouch[i]
        x = N[c, b]
        g += F(table, x + pacc[c]) - F(table, x)
    # the (b, b) cell takes both sides and the self-bigrams at once
    sb = sacc[b]
    pb = pacc[b]
    x = N[b, b]
    if sb:
        g -= F(table, x + sb) - F(table, x)
    if pb:
        g -= F(table, x + pb) - F(table, x)
    g += F(table, x + sb + pb + selfc) - F(table, x)
    g -= F(table, L[b] + cl) - F(table, L[b])
    g -= F(table, R[b] + cr) - F(table, R[b])
    return g


cdef inline int _neighbour_classes(const int32_t[::1] ptr, const int32_t[::1] word,
                                   const int64_t[::1] count, const int32_t[::1] classes, Py_ssize_t w,
                                   int64_t[::1] acc, int32_t[::1] touch, int64_t* total,
                                   int64_t* selfc) noexcept nogil:
    """Add word w's bigram counts (one side: successors or predecessors) to
    ``acc`` by the class of the other word, listing each class met first in
    ``touch``; its bigrams with itself go to ``selfc`` instead, and all of
    them to ``total``.  Returns how many classes ``touch`` lists."""
    cdef int n = 0, c
    cdef Py_ssize_t k
    for k in range(ptr[w], ptr[w + 1]):
        total[0] += count[k]
        if word[k] == w:
            selfc[0] += count[k]
            continue
        c = classes[word[k]]
        if acc[c] == 0:
            touch[n] = c
            n += 1
        acc[c] += count[k]
    return n


def exchange(const int32_t[::1] succ_ptr, const int32_t[::1] succ_word, const int64_t[::1] succ_count,
             const int32_t[::1] pred_ptr, const int32_t[::1] pred_word, const int64_t[::1] pred_count,
             int32_t[::1] classes, int n_classes, int max_iter, const double[::1] table):
    """Exchange passes over the words ``1 .. V-1`` (word 0 is the fixed
    context word, in class ``n_classes``).  ``succ_*`` and ``pred_*``: the
    bigram counts as compressed rows (word -> successors, word ->
    predecessors).  ``classes`` (length V) is updated in place.  Returns
    the number of words moved in each pass."""
    cdef Py_ssize_t V = classes.shape[0]
    cdef int K = n_classes + 1
    cdef Py_ssize_t w, k, i
    cdef int a, b, c, d, best, ns, np_, it
    cdef int64_t selfc, cl, cr, pred_self = 0      # pred_self: counted on the successors' side
    cdef double g, best_gain
    if succ_ptr.shape[0] != V + 1 or pred_ptr.shape[0] != V + 1:
        raise ValueError("bigram rows do not match the vocabulary")
    if succ_word.shape[0] < succ_ptr[V] or succ_count.shape[0] < succ_ptr[V] \
            or pred_word.shape[0] < pred_ptr[V] or pred_count.shape[0] < pred_ptr[V]:
        raise ValueError("bigram rows run past their arrays")
    for i in range(V):
        if not (0 <= classes[i] <= n_classes) or (i == 0) != (classes[i] == n_classes):
            raise ValueError("bad class assignment")
    N_ = np.zeros((K, K), dtype=np.int64)
    L_ = np.zeros(K, dtype=np.int64)
    R_ = np.zeros(K, dtype=np.int64)
    sacc_ = np.zeros(K, dtype=np.int64)
    pacc_ = np.zeros(K, dtype=np.int64)
    stouch_ = np.zeros(K, dtype=np.int32)
    ptouch_ = np.zeros(K, dtype=np.int32)
    cdef int64_t[:, ::1] N = N_
    cdef int64_t[::1] L = L_, R = R_, sacc = sacc_, pacc = pacc_
    cdef int32_t[::1] stouch = stouch_, ptouch = ptouch_
    moved_ = []
    cdef Py_ssize_t moved
    for w in range(V):
        for k in range(succ_ptr[w], succ_ptr[w + 1]):
            N[classes[w], classes[succ_word[k]]] += succ_count[k]
    for c in range(K):
        for d in range(K):
            L[c] += N[c, d]
            R[d] += N[c, d]
    with nogil:
        for it in range(max_iter):
            moved = 0
            for w in range(1, V):
                a = classes[w]
                selfc = 0
                cl = 0
                cr = 0
                ns = _neighbour_classes(succ_ptr, succ_word, succ_count, classes, w, sacc, stouch, &cl, &selfc)
                np_ = _neighbour_classes(pred_ptr, pred_word, pred_count, classes, w, pacc, ptouch, &cr,
                                         &pred_self)
                # take w out of its class
                for i in range(ns):
                    d = stouch[i]
                    N[a, d] -= sacc[d]
                for i in range(np_):
                    c = ptouch[i]
                    N[c, a] -= pacc[c]
                N[a, a] -= selfc
                L[a] -= cl
                R[a] -= cr
                # the class that gains most from taking it (ties: stay)
                best = a
                best_gain = _gain(N, L, R, table, sacc, pacc, stouch, ptouch, ns, np_, selfc, cl, cr, a)
                for b in range(n_classes):
                    if b == a:
                        continue
                    g = _gain(N, L, R, table, sacc, pacc, stouch, ptouch, ns, np_, selfc, cl, cr, b)
                    if g > best_gain + 1e-9 * (1.0 + (best_gain if best_gain > 0 else -best_gain)):
                        best = b
                        best_gain = g
                # put it there
                for i in range(ns):
                    d = stouch[i]
                    N[best, d] += sacc[d]
                    sacc[d] = 0
                for i in range(np_):
                    c = ptouch[i]
                    N[c, best] += pacc[c]
                    pacc[c] = 0
                N[best, best] += selfc
                L[best] += cl
                R[best] += cr
                if best != a:
                    classes[w] = best
                    moved += 1
            with gil:
                moved_.append(moved)
            if moved == 0:
                break
    return moved_


cdef double _pair_delta(const int64_t[:, ::1] N, const int64_t[::1] L, const int64_t[::1] R,
                        const double[::1] table, int a, int b) noexcept nogil:
    """The change of Q when classes a and b merge."""
    cdef int K = N.shape[0]
    cdef int e
    cdef double g = 0.0
    for e in range(K):
        if e != a and e != b:
            g += G(table, N[a, e], N[b, e]) + G(table, N[e, a], N[e, b])
    g += F(table, N[a, a] + N[a, b] + N[b, a] + N[b, b]) - F(table, N[a, a]) - F(table, N[a, b]) \
        - F(table, N[b, a]) - F(table, N[b, b])
    g -= G(table, L[a], L[b]) + G(table, R[a], R[b])
    return g


def merge(const int64_t[:, ::1] counts, int n_classes, const double[::1] table):
    """Merge classes ``0 .. n_classes-1`` of the class bigram counts
    ``counts`` (``(n_classes + 1)`` square, the last class fixed) into one,
    greedily.  Returns ``int32[n_classes - 1, 2]``: the pairs (a, b)
    merged, in order; the merged class keeps the index a."""
    cdef int K = n_classes + 1
    if counts.shape[0] != K or counts.shape[1] != K:
        raise ValueError("counts must be (n_classes + 1) square")
    N_ = np.array(counts, dtype=np.int64)
    cdef int64_t[:, ::1] N = N_
    cdef int64_t[::1] L = N_.sum(axis=1), R = N_.sum(axis=0)
    delta_ = np.zeros((max(n_classes, 1), max(n_classes, 1)), dtype=np.float64)
    active_ = np.ones(max(n_classes, 1), dtype=np.uint8)
    out_ = np.zeros((max(n_classes - 1, 0), 2), dtype=np.int32)
    cdef double[:, ::1] delta = delta_
    cdef unsigned char[::1] active = active_
    cdef int32_t[:, ::1] out = out_
    cdef int a, b, c, d, e, step, ba, bb
    cdef double best, upd
    with nogil:
        for a in range(n_classes):
            for b in range(a + 1, n_classes):
                delta[a, b] = _pair_delta(N, L, R, table, a, b)
        for step in range(n_classes - 1):
            ba = -1
            bb = -1
            best = 0.0
            for a in range(n_classes):
                if not active[a]:
                    continue
                for b in range(a + 1, n_classes):
                    if active[b] and (ba < 0 or delta[a, b] > best):
                        ba = a
                        bb = b
                        best = delta[a, b]
            a = ba
            b = bb
            out[step, 0] = a
            out[step, 1] = b
            # pairs (c, d) apart from a and b: their context a and b become one
            for c in range(n_classes):
                if not active[c] or c == a or c == b:
                    continue
                for d in range(c + 1, n_classes):
                    if not active[d] or d == a or d == b:
                        continue
                    upd = G(table, N[c, a] + N[c, b], N[d, a] + N[d, b]) - G(table, N[c, a], N[d, a]) \
                        - G(table, N[c, b], N[d, b])
                    upd += G(table, N[a, c] + N[b, c], N[a, d] + N[b, d]) - G(table, N[a, c], N[a, d]) \
                        - G(table, N[b, c], N[b, d])
                    delta[c, d] += upd
            for e in range(K):
                N[a, e] += N[b, e]
                N[b, e] = 0
            for e in range(K):
                N[e, a] += N[e, b]
                N[e, b] = 0
            L[a] += L[b]
            L[b] = 0
            R[a] += R[b]
            R[b] = 0
            active[b] = 0
            for c in range(n_classes):
                if active[c] and c != a:
                    if c < a:
                        delta[c, a] = _pair_delta(N, L, R, table, c, a)
                    else:
                        delta[a, c] = _pair_delta(N, L, R, table, a, c)
    return out_
