# cython: language_level=3
"""Compiled epoch loops of the linear learners (``fasttag.linear``).

Each function runs one full pass over CSR-like samples without the GIL,
on dense (n_columns, n_vectors) float64 weights; the Python layer validates
every argument before calling in, and the debug build checks every index.
The perceptron family averages lazily with ``fasttag._core``'s functions;
SGD keeps each vector as a scale times a vector so that L2 shrinkage and
averaged SGD stay O(active features) per sample.  Feature strings are
hashed and mapped to weight rows once per fit.  Details:
docs/architecture.md.
"""
import numpy as np

cimport cython
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.math cimport exp, log, log1p, fabs, sqrt, pow
from libc.stdint cimport int64_t, int32_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from fasttag._core.check cimport check_index, DEBUG_BUILD as _DEBUG_BUILD
from fasttag._core.hashing cimport murmurhash64a
from fasttag._core.probe cimport Slot, SLOT_EMPTY, home_slot, probe, new_slots
from fasttag._core.averaging cimport avg_update, avg_read

DEBUG_BUILD = bool(_DEBUG_BUILD)
"""True when this module was compiled by the debug build (indices checked)."""

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define FT_PREFETCH(p) __builtin_prefetch(p)
    #else
    #define FT_PREFETCH(p) ((void)0)
    #endif
    """
    void FT_PREFETCH(const void* p) noexcept nogil


def hash_feature_lists(X):
    """The common case of feature-string inputs, in one compiled pass: X a
    list of lists (or tuples) of str.  Returns ``(indptr, keys)`` (the
    MurmurHash64A of each string, as ``fasttag._core.hash_strings``), or None
    when X is anything else (the caller then takes the general path)."""
    if type(X) is not list:
        return None
    cdef list rows = <list>X
    cdef Py_ssize_t n = len(rows), i, total = 0, pos = 0, ln
    cdef object row, s
    cdef const char* data
    indptr = np.empty(n + 1, dtype=np.int64)
    cdef int64_t[::1] ip = indptr
    ip[0] = 0
    for i in range(n):
        row = rows[i]
        if type(row) is list:
            total += len(<list>row)
        elif type(row) is tuple:
            total += len(<tuple>row)
        else:
            return None
        ip[i + 1] = total
    keys = np.empty(total, dtype=np.uint64)
    cdef uint64_t[::1] kv = keys
    for i in range(n):
        row = rows[i]
        if ip[i + 1] - ip[i] != len(row):     # mutated meanwhile
            return None
        for s in row:
            if type(s) is not str:
                return None
            data = PyUnicode_AsUTF8AndSize(s, &ln)
            kv[pos] = murmurhash64a(<const unsigned char*>data, ln, 0)
            pos += 1
    return indptr, keys


def index_keys(const uint64_t[::1] keys, bint return_counts=False):
    """Distinct keys ascending and each key's position among them (int64):
    ``np.unique(keys, return_inverse=True)`` by hashing instead of sorting
    every key; with ``return_counts`` also each distinct key's count."""
    cdef Py_ssize_t n = keys.shape[0], i
    if <uint64_t>n >= SLOT_EMPTY:          # ids would not fit a slot
        return np.unique(np.asarray(keys), return_inverse=True, return_counts=return_counts)
    cdef uint64_t cap = 1024, j
    cdef int shift = 54
    # start small (the table grows): a table sized for every key would be
    # mostly empty on real feature sets and far out of cache
    while cap < <uint64_t>min(n // 4, 1 << 16) + 16:
        cap <<= 1
        shift -= 1
    first = np.empty(min(n, 1024), dtype=np.uint64)
    ids = np.empty(n, dtype=np.int64)
    cnt = np.zeros(first.shape[0], dtype=np.int64)
    cdef uint64_t[::1] fv = first
    cdef int64_t[::1] iv = ids, cv = cnt
    cdef int64_t count = 0, idn
    cdef uint64_t key, h
    cdef Slot* slots = _empty_slots(cap)
    cdef Slot* grown
    try:
        for i in range(n):
            if i + 4 < n:
                FT_PREFETCH(&slots[home_slot(keys[i + 4], shift)])
            key = keys[i]
            h = probe(slots, cap, shift, key)
            if slots[h].start == SLOT_EMPTY:
                if count == fv.shape[0]:          # grow the distinct-key arrays
                    first = np.concatenate([first, np.empty(count, dtype=np.uint64)])
                    cnt = np.concatenate([cnt, np.zeros(count, dtype=np.int64)])
                    fv = first
                    cv = cnt
                slots[h].key = key
                slots[h].start = <uint32_t>count
                fv[count] = key
                count += 1
                if <uint64_t>count * 2 > cap:     # grow and rehash
                    grown = _empty_slots(cap * 2)
                    free(slots)
                    slots = grown
                    cap *= 2
                    shift -= 1
                    for j in range(<uint64_t>count):
                        h = probe(slots, cap, shift, fv[j])
                        slots[h].key = fv[j]
                        slots[h].start = <uint32_t>j
                idn = count - 1
            else:
                idn = slots[h].start
            iv[i] = idn
            cv[idn] += 1
    finally:
        free(slots)
    uniq = first[:count]
    order = np.argsort(uniq, kind="stable")
    rank = np.empty(count, dtype=np.int64)
    rank[order] = np.arange(count, dtype=np.int64)
    if return_counts:
        return uniq[order], rank[ids], cnt[:count][order]
    return uniq[order], rank[ids]


cdef Slot* _empty_slots(uint64_t size) except NULL:
    cdef Slot* slots = new_slots(size)
    if slots == NULL:
        raise MemoryError("fasttag index_keys: out of memory")
    return slots


def take_rows(const int64_t[::1] indptr, const int64_t[::1] idx, const double[::1] val,
              const int64_t[::1] order, int64_t[::1] out_indptr, int64_t[::1] out_idx,
              double[::1] out_val):
    """Rows ``order`` of a CSR sample set, copied contiguously into the
    ``out_*`` arrays (sized by the caller): an epoch then reads its samples
    in memory order instead of jumping around the whole set."""
    cdef Py_ssize_t n = order.shape[0], t, i, a, m, pos = 0, ahead
    cdef Py_ssize_t nnz = idx.shape[0]
    if out_indptr.shape[0] != n + 1 or val.shape[0] != nnz:
        raise ValueError("take_rows: inconsistent array sizes")
    with nogil:
        out_indptr[0] = 0
        for t in range(n):
            if t + 8 < n:
                ahead = indptr[order[t + 8]]
                if ahead < nnz:     # an empty last row starts at nnz
                    FT_PREFETCH(&idx[ahead])
                    FT_PREFETCH(&val[ahead])
                    FT_PREFETCH(&idx[ahead] + 8)
                    FT_PREFETCH(&val[ahead] + 8)
            if t + 16 < n:
                FT_PREFETCH(&indptr[order[t + 16]])
            i = order[t]
            a = indptr[i]
            m = indptr[i + 1] - a
            if m > 0:
                check_index(a + m - 1, nnz)                    # the copied spans
                check_index(pos + m - 1, out_idx.shape[0])
                check_index(pos + m - 1, out_val.shape[0])
                memcpy(&out_idx[pos], &idx[a], m * sizeof(int64_t))
                memcpy(&out_val[pos], &val[a], m * sizeof(double))
            pos += m
            out_indptr[t + 1] = pos
    return pos


# ------------------------------------------------------------------ codes
# The codes of the losses, learning-rate schedules and update rules are
# defined here only: the Python layer (fasttag.linear.losses, .sgd and
# .perceptron) imports the name -> code tables below.
cdef enum:
    L_HINGE = 0
    L_LOG = 1
    L_SQUARED = 2
    L_MODIFIED_HUBER = 3
    L_PERCEPTRON = 4
    L_HUBER = 5
    L_EPS_INSENSITIVE = 6
    L_SQ_EPS_INSENSITIVE = 7

# learning-rate schedules
cdef enum:
    LR_CONSTANT = 0
    LR_OPTIMAL = 1
    LR_INVSCALING = 2

# perceptron-family update rules
cdef enum:
    A_PERCEPTRON = 0
    A_PA = 1
    A_PA1 = 2
    A_PA2 = 3
    A_MIRA = 4

LOSSES = {"hinge": L_HINGE, "log_loss": L_LOG, "squared_error": L_SQUARED,
          "modified_huber": L_MODIFIED_HUBER, "perceptron": L_PERCEPTRON, "huber": L_HUBER,
          "epsilon_insensitive": L_EPS_INSENSITIVE,
          "squared_epsilon_insensitive": L_SQ_EPS_INSENSITIVE}
"""Loss name -> the code ``sgd_epoch``, ``loss_values`` and friends take."""

LEARNING_RATES = {"constant": LR_CONSTANT, "optimal": LR_OPTIMAL, "invscaling": LR_INVSCALING}
"""Learning-rate schedule name -> the code ``sgd_epoch`` takes."""

ALGORITHMS = {"perceptron": A_PERCEPTRON, "pa": A_PA, "pa1": A_PA1, "pa2": A_PA2, "mira": A_MIRA}
"""Perceptron-family update rule name -> the code ``pa_epoch`` takes."""

cdef double MAX_DLOSS = 1e12


cdef inline double _loss(int kind, double p, double y, double eps) noexcept nogil:
    """Loss of prediction p for target y (+-1 for the classification losses)."""
    cdef double z, r
    if kind == L_HINGE:
        z = 1.0 - p * y
        return z if z > 0 else 0.0
    elif kind == L_PERCEPTRON:
        z = -p * y
        return z if z > 0 else 0.0
    elif kind == L_LOG:
        z = p * y
        if z > 18.0:
            return exp(-z)
        if z < -18.0:
            return -z
        return log1p(exp(-z))
    elif kind == L_SQUARED:
        return 0.5 * (p - y) * (p - y)
    elif kind == L_MODIFIED_HUBER:
        z = p * y
        if z >= 1.0:
            return 0.0
        if z >= -1.0:
            return (1.0 - z) * (1.0 - z)
        return -4.0 * z
    elif kind == L_HUBER:
        r = p - y
        if fabs(r) <= eps:
            return 0.5 * r * r
        return eps * fabs(r) - 0.5 * eps * eps
    elif kind == L_EPS_INSENSITIVE:
        r = fabs(y - p) - eps
        return r if r > 0 else 0.0
    else:  # L_SQ_EPS_INSENSITIVE
        r = fabs(y - p) - eps
        return r * r if r > 0 else 0.0


cdef inline double _dloss(int kind, double p, double y, double eps) noexcept nogil:
    """Derivative of the loss with respect to p."""
    cdef double z, r
    if kind == L_HINGE:                 # updates at the threshold too, as scikit-learn's Hinge does:
        return -y if p * y <= 1.0 else 0.0
    elif kind == L_PERCEPTRON:          # so the perceptron loss leaves zero weights
        return -y if p * y <= 0.0 else 0.0
    elif kind == L_LOG:
        z = p * y
        if z > 18.0:
            return -y * exp(-z)
        if z < -18.0:
            return -y
        return -y / (exp(z) + 1.0)
    elif kind == L_SQUARED:
        return p - y
    elif kind == L_MODIFIED_HUBER:
        z = p * y
        if z >= 1.0:
            return 0.0
        if z >= -1.0:
            return -2.0 * (1.0 - z) * y
        return -4.0 * y
    elif kind == L_HUBER:
        r = p - y
        if fabs(r) <= eps:
            return r
        return eps if r > 0 else -eps
    elif kind == L_EPS_INSENSITIVE:
        r = y - p
        if r > eps:
            return -1.0
        if r < -eps:
            return 1.0
        return 0.0
    else:
        r = y - p
        if r > eps:
            return -2.0 * (r - eps)
        if r < -eps:
            return 2.0 * (-r - eps)
        return 0.0


def loss_values(int kind, const double[::1] p, const double[::1] y, double eps=0.1):
    """Vectorised loss (the compiled function the learners use)."""
    return _pointwise(kind, p, y, eps, False)


def dloss_values(int kind, const double[::1] p, const double[::1] y, double eps=0.1):
    """Vectorised d loss / d p (the compiled function the learners use)."""
    return _pointwise(kind, p, y, eps, True)


cdef _pointwise(int kind, const double[::1] p, const double[::1] y, double eps, bint derivative):
    if y.shape[0] != p.shape[0]:
        raise ValueError("p and y differ in length")
    out = np.empty(p.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i
    for i in range(p.shape[0]):
        o[i] = _dloss(kind, p[i], y[i], eps) if derivative else _loss(kind, p[i], y[i], eps)
    return out


# ------------------------------------------------------------------ scoring

def csr_scores(const int64_t[::1] indptr, const int64_t[::1] idx, const double[::1] val,
               const double[:, ::1] W, const double[::1] b):
    """scores[i, k] = sum_j W[idx_j, k] * val_j + b[k] over row i."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, K = W.shape[1]
    if b.shape[0] != K or val.shape[0] != idx.shape[0] or n < 0:
        raise ValueError("csr_scores: the intercept or the sample arrays do not fit the weights")
    out = np.empty((n, K))
    cdef double[:, ::1] o = out
    cdef Py_ssize_t i, j, k
    cdef int64_t f
    cdef double v
    with nogil:
        for i in range(n):
            for k in range(K):
                o[i, k] = b[k]
            if i + 1 < n:
                for j in range(indptr[i + 1], indptr[i + 2]):
                    FT_PREFETCH(&W[idx[j], 0])
            for j in range(indptr[i], indptr[i + 1]):
                f = idx[j]
                v = val[j]
                for k in range(K):
                    o[i, k] += W[f, k] * v
    return out


# ------------------------------------------------------------------ MIRA

cdef void _mira_tau(const double* s, Py_ssize_t K, Py_ssize_t g, double A, double C,
                    double* tau, double* buf) noexcept nogil:
    """Crammer & Singer's multiclass update: tau solving

        min_tau  1/2 A sum_r tau_r^2 + sum_r B_r tau_r
        s.t.     tau_r <= C [r == g],  sum_r tau_r = 0

    with B_r = s_r + 1 - [r == g] and A = ||x||^2: the dual of
    min 1/2 sum_r ||w'_r - w_r||^2 + C xi  s.t.  w'_g.x - w'_r.x >= 1 - xi
    for every r != g, xi >= 0, with w'_r = w_r + tau_r x.
    Solved exactly: nu = tau + B / A is the projection nu_r = min(theta, D_r),
    D_r = B_r / A + C [r == g], with sum_r max(0, D_r - theta) = C.
    """
    cdef Py_ssize_t r, k, m
    cdef double cum, th, theta, d, tmp
    check_index(g, K)       # s, tau and buf hold K entries
    for r in range(K):
        d = (s[r] + (0.0 if r == g else 1.0)) / A + (C if r == g else 0.0)
        buf[r] = d
        tau[r] = d
    # sort buf descending (insertion sort: K is small)
    for r in range(1, K):
        tmp = buf[r]
        m = r
        while m > 0 and buf[m - 1] < tmp:
            check_index(m - 1, K)
            buf[m] = buf[m - 1]
            m -= 1
        buf[m] = tmp
    cum = 0.0
    theta = buf[0] - C
    for k in range(K):
        cum += buf[k]
        th = (cum - C) / (k + 1)
        if k + 1 == K or buf[k + 1] <= th:
            theta = th
            break
    for r in range(K):
        d = tau[r]        # D_r
        tau[r] = (theta if theta < d else d) - (d - (C if r == g else 0.0))


def mira_tau(const double[::1] scores, Py_ssize_t gold, double sqnorm, double C):
    """Python access to the MIRA step sizes (for tests)."""
    cdef Py_ssize_t K = scores.shape[0]
    if not 0 <= gold < K or sqnorm <= 0 or C <= 0:
        raise ValueError("bad arguments")
    tau = np.empty(K)
    buf = np.empty(K)
    cdef double[::1] t = tau, bb = buf
    _mira_tau(&scores[0], K, gold, sqnorm, C, &t[0], &bb[0])
    return tau


# ------------------------------------------------------------------ perceptron family

cdef inline void _prefetch_rows(const int64_t* idx, Py_ssize_t n_idx, Py_ssize_t lo,
                                Py_ssize_t hi, const double* base, Py_ssize_t K) noexcept nogil:
    """Prefetch the weight rows (K doubles each) of the features idx[lo:hi]
    (idx holds n_idx entries).  A prefetch never faults, so the rows are
    not checked; the reads of idx are."""
    cdef Py_ssize_t j, o
    cdef const double* row
    if base == NULL:
        return
    for j in range(lo, hi):
        check_index(j, n_idx)
        row = base + idx[j] * K
        o = 0
        while o < K:
            FT_PREFETCH(row + o)
            o += 8
        if K > 1:
            FT_PREFETCH(row + K - 1)


cdef inline void _avg_add(double* w, double* tot, int64_t* ts, double delta, int64_t step,
                          bint track) noexcept nogil:
    """w += delta at ``step``, averaged lazily when ``track`` (else the
    averaging state is left alone)."""
    if track:
        avg_update(w, tot, ts, delta, step)
    else:
        w[0] += delta


def pa_epoch(const int64_t[::1] indptr, const int64_t[::1] idx, const double[::1] val,
             const int32_t[::1] y, const int64_t[::1] order,
             double[:, ::1] W, double[:, ::1] TOT, int64_t[:, ::1] TS,
             double[:, ::1] B, double[:, ::1] BTOT, int64_t[:, ::1] BTS,
             int64_t step, int algo, double eta, double C, bint fit_intercept,
             bint track_average):
    """One pass of a perceptron-family learner.

    ``W`` is (n_columns, K); K == 1 is the binary case (y in {0, 1}, one
    vector, class 1 when the score is > 0), K >= 2 keeps one vector per class
    with argmax prediction (ties to the lowest index).  The bias is the
    weight of a constant input 1 (``B`` is (1, K)).  ``step`` counts the
    examples seen before this pass; each example is one averaging step.
    Returns (step, n_updates, n_mistakes, loss_sum).
    """
    cdef Py_ssize_t K = W.shape[1], n = order.shape[0], F = W.shape[0], n_idx = idx.shape[0]
    cdef Py_ssize_t t, i, j, k, g, pred, riv, nnz, q, lo, hi
    cdef int64_t f
    cdef double v, xsq, loss, tau_scalar, yy, best, second
    cdef int64_t n_updates = 0, n_mistakes = 0
    cdef double loss_sum = 0.0
    if (K < 1 or TOT.shape[0] != F or TOT.shape[1] != K or TS.shape[0] != F or TS.shape[1] != K
            or B.shape[0] != 1 or B.shape[1] != K or BTOT.shape[0] != 1 or BTOT.shape[1] != K
            or BTS.shape[0] != 1 or BTS.shape[1] != K or val.shape[0] != n_idx
            or y.shape[0] < indptr.shape[0] - 1):
        raise ValueError("pa_epoch: the shapes of the weights, the state and the samples disagree")
    cdef const int64_t* idxp = &idx[0] if n_idx > 0 else NULL
    cdef double[:, ::1] work = np.zeros((3, max(K, 1)))
    cdef Py_ssize_t[::1] nzk_mv = np.zeros(max(K, 1), dtype=np.intp)
    cdef double* s = &work[0, 0]         # scores
    cdef double* tau = &work[1, 0]       # per-class steps
    cdef double* buf = &work[2, 0]       # MIRA's sort buffer
    cdef Py_ssize_t* nzk = &nzk_mv[0]    # the classes whose step is nonzero
    cdef double* Wp = &W[0, 0] if W.shape[0] > 0 else NULL
    cdef double* Tp = &TOT[0, 0] if TOT.shape[0] > 0 else NULL
    cdef int64_t* Sp = &TS[0, 0] if TS.shape[0] > 0 else NULL
    cdef double* wr
    cdef double bias_in = 1.0 if fit_intercept else 0.0
    with nogil:
        for t in range(n):
            i = order[t]
            step += 1
            if t + 1 < n:
                _prefetch_rows(idxp, n_idx, indptr[order[t + 1]], indptr[order[t + 1] + 1], Wp, K)
            lo = indptr[i]
            hi = indptr[i + 1]
            # scores and squared norm
            xsq = bias_in
            for k in range(K):
                s[k] = B[0, k] * bias_in
            for j in range(lo, hi):
                v = val[j]
                check_index(idx[j], F)
                wr = Wp + idx[j] * K
                xsq += v * v
                for k in range(K):
                    s[k] += wr[k] * v
            for k in range(K):
                tau[k] = 0.0
            g = y[i]
            check_index(g, K if K > 1 else 2)     # indexes s and tau when K > 1
            if K == 1:
                yy = 1.0 if g == 1 else -1.0
                pred = 1 if s[0] > 0 else 0
                if pred != g:
                    n_mistakes += 1
                if algo == A_PERCEPTRON:
                    loss = -yy * s[0]
                    if loss > 0:
                        loss_sum += loss
                    if pred != g:
                        tau[0] = eta * yy
                else:
                    loss = 1.0 - yy * s[0]
                    if loss > 0 and xsq > 0:
                        loss_sum += loss
                        if algo == A_PA:
                            tau_scalar = loss / xsq
                        elif algo == A_PA2:
                            tau_scalar = loss / (xsq + 0.5 / C)
                        else:   # PA-I, and MIRA's two-class case
                            tau_scalar = loss / xsq
                            if tau_scalar > C:
                                tau_scalar = C
                        tau[0] = tau_scalar * yy
            else:
                # predicted class (ties -> lowest index) and best rival of g
                pred = 0
                best = s[0]
                riv = -1
                second = 0.0
                for k in range(K):
                    if s[k] > best:
                        best = s[k]
                        pred = k
                    if k != g and (riv < 0 or s[k] > second):
                        second = s[k]
                        riv = k
                if pred != g:
                    n_mistakes += 1
                if algo == A_PERCEPTRON:
                    if pred != g:
                        loss_sum += s[pred] - s[g]
                        tau[g] = eta
                        tau[pred] = -eta
                elif algo == A_MIRA:
                    loss = 1.0 - (s[g] - second)
                    if loss > 0 and xsq > 0:
                        loss_sum += loss
                        _mira_tau(s, K, g, xsq, C, tau, buf)
                else:
                    loss = 1.0 - (s[g] - second)
                    if loss > 0 and xsq > 0:
                        loss_sum += loss
                        if algo == A_PA:
                            tau_scalar = loss / (2.0 * xsq)
                        elif algo == A_PA2:
                            tau_scalar = loss / (2.0 * xsq + 0.5 / C)
                        else:
                            tau_scalar = loss / (2.0 * xsq)
                            if tau_scalar > C:
                                tau_scalar = C
                        tau[g] = tau_scalar
                        tau[riv] = -tau_scalar
            # apply: only the classes whose step is nonzero
            nnz = 0
            for k in range(K):
                if tau[k] != 0.0:
                    nzk[nnz] = k
                    nnz += 1
            if nnz == 0:
                continue
            n_updates += 1
            for j in range(lo, hi):
                f = idx[j]
                v = val[j]
                check_index(f, F)
                for q in range(nnz):
                    k = nzk[q]
                    _avg_add(Wp + f * K + k, Tp + f * K + k, Sp + f * K + k,
                             tau[k] * v, step, track_average)
            if fit_intercept:
                for q in range(nnz):
                    k = nzk[q]
                    _avg_add(&B[0, k], &BTOT[0, k], &BTS[0, k], tau[k], step, track_average)
    return step, n_updates, n_mistakes, loss_sum


def averaged_weights(const double[:, ::1] W, const double[:, ::1] TOT,
                     const int64_t[:, ::1] TS, int64_t step):
    """(TOT + (step - TS) * W) / step: the averages after ``step`` steps."""
    cdef Py_ssize_t n = W.shape[0], K = W.shape[1], f, k
    if TOT.shape[0] != n or TOT.shape[1] != K or TS.shape[0] != n or TS.shape[1] != K:
        raise ValueError("averaged_weights: W, TOT and TS differ in shape")
    if step <= 0:
        return np.array(W, copy=True)
    out = np.empty((n, K))
    cdef double[:, ::1] o = out
    with nogil:
        for f in range(n):
            for k in range(K):
                o[f, k] = avg_read(W[f, k], TOT[f, k], TS[f, k], step)
    return out


# ------------------------------------------------------------------ SGD

cdef inline double _target(bint classify, Py_ssize_t K, int32_t label, double value,
                          Py_ssize_t k) noexcept nogil:
    """The target of problem k for a sample of class ``label`` (classifying:
    +1 or -1, K == 1 class 1 against the rest, else class k against the
    rest) or of regression target ``value``."""
    if not classify:
        return value
    if K == 1:
        return 1.0 if label == 1 else -1.0
    return 1.0 if label == k else -1.0


cdef void _rescale(double[:, ::1] V, double[:, ::1] U, double* wscale, double* cavg,
                   Py_ssize_t k, bint averaging) noexcept nogil:
    """Fold wscale[k] into V[:, k] (and c[k] into U) so wscale becomes 1."""
    cdef Py_ssize_t f
    check_index(k, V.shape[1])       # wscale and cavg hold one entry per column of V
    cdef double sc = wscale[k], c = cavg[k]
    for f in range(V.shape[0]):
        if averaging and c != 0.0:
            U[f, k] += c * V[f, k]
        V[f, k] *= sc
    cavg[k] = 0.0
    wscale[k] = 1.0


def sgd_epoch(const int64_t[::1] indptr, const int64_t[::1] idx, const double[::1] val,
              const int32_t[::1] yi, const double[::1] yf, const int64_t[::1] order,
              double[:, ::1] V, double[::1] wscale, double[::1] b,
              double[:, ::1] U, double[::1] cavg, double[::1] bsum,
              int64_t[::1] counters,
              int loss_kind, int lr_kind, double eta0, double power_t, double alpha,
              double opt_init, bint fit_intercept, double eps, int64_t avg_start,
              bint classify, bint want_loss=True):
    """One pass of (averaged) SGD over K independent binary/regression problems.

    Targets: classification with K == 1 uses +1 for y == 1 else -1; K > 1 is
    one-vs-rest (+1 for y == k); regression uses yf.  ``counters`` holds
    [t, n_averaged]: t is the 1-based index of the next update (it drives
    the learning rate), averaging covers the steps t >= avg_start (0: off).
    Per step: p = wscale * V.x + b; update = -eta * dloss(p, y);
    w <- (1 - eta * alpha) w; w += update * x; b += update.
    Returns the sum of the losses seen (before each update), or 0.0 when
    ``want_loss`` is false (the losses are then not computed).
    """
    cdef Py_ssize_t K = V.shape[1], n = order.shape[0], F = V.shape[0], n_idx = idx.shape[0]
    cdef Py_ssize_t tt, i, j, k, q, nnz, lo, hi
    cdef int64_t f
    cdef int64_t t, n_avg
    cdef double v, eta, d, target, shrink, loss_sum = 0.0
    cdef bint averaging
    if (K < 1 or U.shape[0] != F or U.shape[1] != K or wscale.shape[0] != K or b.shape[0] != K
            or cavg.shape[0] != K or bsum.shape[0] != K or counters.shape[0] != 2
            or val.shape[0] != n_idx or (yi.shape[0] if classify else yf.shape[0]) < indptr.shape[0] - 1):
        raise ValueError("sgd_epoch: the shapes of the weights, the state and the samples disagree")
    t = counters[0]
    n_avg = counters[1]
    cdef const int64_t* idxp = &idx[0] if n_idx > 0 else NULL
    cdef double[:, ::1] work = np.zeros((3, max(K, 1)))
    cdef Py_ssize_t[::1] nz_mv = np.zeros(max(K, 1), dtype=np.intp)
    cdef double* p = &work[0, 0]         # scores
    cdef double* upd = &work[1, 0]       # per-class updates
    cdef double* step_v = &work[2, 0]    # upd / wscale: the change of V per unit input
    cdef Py_ssize_t* nzk = &nz_mv[0]
    cdef double* Vp
    cdef double* Up
    cdef double* vr
    cdef double* ur
    with nogil:
        for tt in range(n):
            i = order[tt]
            # V and U move when a rescale folds wscale in: re-read the pointers
            Vp = &V[0, 0] if V.shape[0] > 0 else NULL
            Up = &U[0, 0] if U.shape[0] > 0 else NULL
            if tt + 1 < n:
                _prefetch_rows(idxp, n_idx, indptr[order[tt + 1]], indptr[order[tt + 1] + 1], Vp, K)
            if lr_kind == LR_CONSTANT:
                eta = eta0
            elif lr_kind == LR_OPTIMAL:
                eta = 1.0 / (alpha * (opt_init + t - 1))
            else:
                eta = eta0 / pow(<double>t, power_t)
            lo = indptr[i]
            hi = indptr[i + 1]
            for k in range(K):
                p[k] = 0.0
            for j in range(lo, hi):
                v = val[j]
                check_index(idx[j], F)
                vr = Vp + idx[j] * K
                for k in range(K):
                    p[k] += vr[k] * v
            averaging = avg_start > 0 and t >= avg_start
            nnz = 0
            for k in range(K):
                p[k] = p[k] * wscale[k] + b[k]
                target = _target(classify, K, yi[i] if classify else 0, 0.0 if classify else yf[i], k)
                if want_loss:
                    loss_sum += _loss(loss_kind, p[k], target, eps)
                d = _dloss(loss_kind, p[k], target, eps)
                if d > MAX_DLOSS:
                    d = MAX_DLOSS
                elif d < -MAX_DLOSS:
                    d = -MAX_DLOSS
                upd[k] = -eta * d
                if alpha > 0:
                    shrink = 1.0 - eta * alpha
                    if shrink < 0:
                        shrink = 0.0
                    wscale[k] *= shrink
                    if wscale[k] < 1e-6:
                        _rescale(V, U, &wscale[0], &cavg[0], k, averaging or n_avg > 0)
                if upd[k] != 0.0:
                    step_v[k] = upd[k] / wscale[k]
                    nzk[nnz] = k
                    nnz += 1
            if nnz > 0:
                for j in range(lo, hi):
                    f = idx[j]
                    v = val[j]
                    check_index(f, F)      # U has V's shape
                    vr = Vp + f * K
                    if averaging:
                        ur = Up + f * K
                        for q in range(nnz):
                            k = nzk[q]
                            d = step_v[k] * v
                            vr[k] += d
                            ur[k] -= cavg[k] * d
                    else:
                        for q in range(nnz):
                            k = nzk[q]
                            vr[k] += step_v[k] * v
            for k in range(K):
                if fit_intercept:
                    b[k] += upd[k]
                if averaging:
                    cavg[k] += wscale[k]
                    bsum[k] += b[k]
            if averaging:
                n_avg += 1
            t += 1
    counters[0] = t
    counters[1] = n_avg
    return loss_sum


def sgd_weights(const double[:, ::1] V, const double[::1] wscale, const double[:, ::1] U,
                const double[::1] cavg, int64_t n_avg):
    """The weights SGD predicts with: (U + cavg V) / n_avg once averaging
    has begun (n_avg > 0), else wscale V; one pass, one new array."""
    cdef Py_ssize_t n = V.shape[0], K = V.shape[1], f, k
    if U.shape[0] != n or U.shape[1] != K or wscale.shape[0] != K or cavg.shape[0] != K:
        raise ValueError("sgd_weights: the shapes of V, U, wscale and cavg disagree")
    out = np.empty((n, K))
    cdef double[:, ::1] o = out
    with nogil:
        for f in range(n):
            for k in range(K):
                if n_avg > 0:
                    o[f, k] = (U[f, k] + cavg[k] * V[f, k]) / n_avg
                else:
                    o[f, k] = V[f, k] * wscale[k]
    return out


def sgd_objective(const int64_t[::1] indptr, const int64_t[::1] idx, const double[::1] val,
                  const int32_t[::1] yi, const double[::1] yf,
                  const double[:, ::1] V, const double[::1] wscale, const double[::1] b,
                  const double[:, ::1] U, const double[::1] cavg, const double[::1] bsum,
                  int64_t n_avg, int loss_kind, double eps, double alpha, bint classify):
    """J = sum_k [(1/n) sum_i L(w_k.x_i + b_k, y_ik) + alpha/2 ||w_k||^2] for
    the weights :func:`sgd_weights` gives, computed on the fly (no copy of
    the weights): one pass over the samples and one over the weights."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, K = V.shape[1], F = V.shape[0], n_idx = idx.shape[0]
    cdef Py_ssize_t i, j, k, f
    cdef double v, target, w, loss_sum = 0.0, sq = 0.0
    if (U.shape[0] != F or U.shape[1] != K or wscale.shape[0] != K or b.shape[0] != K
            or cavg.shape[0] != K or bsum.shape[0] != K or val.shape[0] != n_idx or n < 0
            or (yi.shape[0] if classify else yf.shape[0]) < n):
        raise ValueError("sgd_objective: the shapes of the weights, the state and the samples disagree")
    cdef const int64_t* idxp = &idx[0] if n_idx > 0 else NULL
    cdef double[:, ::1] work = np.zeros((4, max(K, 1)))
    cdef double* p = &work[0, 0]
    cdef double* q = &work[1, 0]         # U part of the averaged score
    cdef double* a = &work[2, 0]         # per-class factor of V
    cdef double* bb = &work[3, 0]
    cdef const double* Vp = &V[0, 0] if F > 0 and K > 0 else NULL
    cdef const double* Up = &U[0, 0] if F > 0 and K > 0 else NULL
    cdef const double* vr
    cdef const double* ur
    cdef bint avg = n_avg > 0
    for k in range(K):
        a[k] = cavg[k] if avg else wscale[k]
        bb[k] = bsum[k] / n_avg if avg else b[k]
    with nogil:
        for i in range(n):
            if i + 1 < n:
                _prefetch_rows(idxp, n_idx, indptr[i + 1], indptr[i + 2], Vp, K)
                if avg:
                    _prefetch_rows(idxp, n_idx, indptr[i + 1], indptr[i + 2], Up, K)
            for k in range(K):
                p[k] = 0.0
                q[k] = 0.0
            for j in range(indptr[i], indptr[i + 1]):
                v = val[j]
                check_index(idx[j], F)       # U has V's shape
                vr = Vp + idx[j] * K
                for k in range(K):
                    p[k] += vr[k] * v
                if avg:
                    ur = Up + idx[j] * K
                    for k in range(K):
                        q[k] += ur[k] * v
            for k in range(K):
                if avg:
                    w = (q[k] + a[k] * p[k]) / n_avg + bb[k]
                else:
                    w = p[k] * a[k] + bb[k]
                target = _target(classify, K, yi[i] if classify else 0, 0.0 if classify else yf[i], k)
                loss_sum += _loss(loss_kind, w, target, eps)
        if alpha > 0:
            for f in range(F):
                for k in range(K):
                    if avg:
                        w = (U[f, k] + a[k] * V[f, k]) / n_avg
                    else:
                        w = V[f, k] * a[k]
                    sq += w * w
    return (loss_sum / n if n > 0 else 0.0) + 0.5 * alpha * sq
