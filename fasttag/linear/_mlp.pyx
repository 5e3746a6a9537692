# cython: language_level=3
"""Compiled forward and backward passes of the multi-layer perceptron
(``fasttag.linear.MLPClassifier`` / ``MLPRegressor``).

All parameters live in one flat float64 array.  Sparse samples go through
an embedding-bag first layer (cost: stored values x hidden units; a step
updates only the rows its batch touches, lazily, as sparse Adam does);
dense samples take a batched path of float32 matrix products through
scipy's BLAS when available (its own kernel otherwise).  Everything runs
without the GIL; the Python layer validates the arrays before calling in,
and the debug build checks every raw-pointer index.  The layout and
precision rules: docs/architecture.md.
"""
import numpy as np

cimport cython
import re

from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer
from libc.math cimport exp, log, tanh, sqrt, pow
from libc.stdint cimport int64_t, int32_t
from libc.stdlib cimport free
from libc.string cimport memset, memcpy

from fasttag._core.buffers cimport resize
from fasttag._core.check cimport check, check_index, DEBUG_BUILD as _DEBUG_BUILD

cdef extern from "math.h" nogil:
    float expf(float)
    float tanhf(float)

DEBUG_BUILD = bool(_DEBUG_BUILD)

#: activation name -> code of the compiled loops
ACTIVATIONS = {"identity": 0, "logistic": 1, "tanh": 2, "relu": 3}
#: output kind -> code
OUTPUTS = {"softmax": 0, "identity": 1}
#: solver -> code
SOLVERS = {"sgd": 0, "adam": 1}
cdef enum:
    MAX_LAYERS_C = 64

#: the most weight layers a network may have (stack buffers of the loops)
MAX_LAYERS = MAX_LAYERS_C


cdef struct Net:
    int L                   # weight layers
    const int64_t* sizes    # L + 1 widths
    const int64_t* woff     # L offsets of the weight matrices in the flat array
    const int64_t* boff     # L offsets of the biases
    int act
    int out
    int64_t n_params


ctypedef fused real:
    float
    double


cdef inline void activate(real* z, int64_t n, int act) noexcept nogil:
    cdef int64_t h
    if act == 1:
        for h in range(n):
            if real is float:
                z[h] = 1 / (1 + expf(-z[h]))
            else:
                z[h] = 1 / (1 + exp(-z[h]))
    elif act == 2:
        for h in range(n):
            if real is float:
                z[h] = tanhf(z[h])
            else:
                z[h] = tanh(z[h])
    elif act == 3:
        for h in range(n):             # a select, branch-free (signs are random); NaN stays NaN
            z[h] = 0 if z[h] < 0 else z[h]


cdef inline void times_derivative(real* d, const real* a, int64_t n, int act) noexcept nogil:
    """d *= f'(z), written with the activation's output a = f(z)."""
    cdef int64_t h
    if act == 1:
        for h in range(n):
            d[h] *= a[h] * (1 - a[h])
    elif act == 2:
        for h in range(n):
            d[h] *= 1 - a[h] * a[h]
    elif act == 3:
        for h in range(n):
            d[h] = 0 if a[h] <= 0 else d[h]


cdef inline double output_delta(const real* z, real* d, int64_t K, int out, int32_t label,
                                const double* target, double scale) noexcept nogil:
    """Loss of one sample whose output pre-activations are z (summed in
    float64); writes scale * dloss/dz into d (K values, also a scratch
    buffer)."""
    cdef int64_t k
    cdef double m, s, loss = 0.0, e
    if out == 0:
        m = z[0]
        for k in range(1, K):
            if z[k] > m:
                m = z[k]
        s = 0.0
        for k in range(K):
            if real is float:
                e = expf(<float>(z[k] - m))     # float32 products: float32 exponentials suffice
            else:
                e = exp(z[k] - m)
            s += e
            d[k] = <real>e
        check_index(label, K)
        loss = m + log(s) - z[label]
        e = scale / s
        for k in range(K):
            d[k] = <real>(e * d[k])
        d[label] -= <real>scale
    else:
        for k in range(K):
            e = z[k] - target[k]
            loss += 0.5 * e * e
            d[k] = <real>(scale * e)
    return loss


# ---------------------------------------------------------------- matrix products

ctypedef void (*sgemm_t)(char*, char*, int*, int*, int*, float*, float*, int*, float*, int*, float*,
                         float*, int*) noexcept nogil
ctypedef void (*dgemm_t)(char*, char*, int*, int*, int*, double*, double*, int*, double*, int*, double*,
                         double*, int*) noexcept nogil

cdef sgemm_t blas_sgemm = NULL
cdef dgemm_t blas_dgemm = NULL
cdef bint use_blas = False
cdef bint row_blocks = True
cdef enum:
    INT_MAX_C = 2147483647
    ONE_THREAD_GEMM = 262144      # 65536 * 4: OpenBLAS's default bound for one-thread gemm

_blas_state = {"looked": False, "found": False}


def _blas_pointer(capi, name, scalar):
    """The C function behind scipy's ``cython_blas`` capsule ``name`` (as an
    int), or 0 when its signature is not the Fortran gemm of ``scalar``."""
    cdef const char* cname
    cap = capi.get(name)
    if cap is None:
        return 0
    try:
        cname = PyCapsule_GetName(cap)
    except Exception:
        return 0
    if cname == NULL:
        return 0
    real = r"(?:%s|__pyx_t_\w*cython_blas_%s)" % (scalar, "s" if scalar == "float" else "d")
    sig = r"void \(char \*, char \*, int \*, int \*, int \*, " + ", ".join(
        [real + r" \*"] * 2 + [r"int \*", real + r" \*", r"int \*", real + r" \*", real + r" \*", r"int \*"]) + r"\)"
    if not re.fullmatch(sig, cname.decode("ascii", "replace")):
        return 0
    return <size_t>PyCapsule_GetPointer(cap, cname)


def _one_blas_thread():
    """Whether the environment gives OpenBLAS one thread (the variables it
    reads, in its order)."""
    import os
    for name in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value:
            return value == "1"
    return False


def _set_row_blocks(on):
    """Whether BLAS calls go in blocks of rows small enough for one thread
    (a testing hook; decided from the environment at the first product);
    returns the previous setting."""
    global row_blocks
    _find_blas()
    previous = bool(row_blocks)
    row_blocks = bool(on)
    return previous


def _find_blas():
    """Look once for scipy's BLAS; use it when found."""
    global blas_sgemm, blas_dgemm, use_blas, row_blocks
    if _blas_state["looked"]:
        return
    try:
        from scipy.linalg import cython_blas
        capi = cython_blas.__pyx_capi__
        s, d = _blas_pointer(capi, "sgemm", "float"), _blas_pointer(capi, "dgemm", "double")
    except Exception:
        s = d = 0
    if s and d:
        blas_sgemm = <sgemm_t><size_t>s
        blas_dgemm = <dgemm_t><size_t>d
        use_blas = True
        row_blocks = not _one_blas_thread()
        _blas_state["found"] = True
    _blas_state["looked"] = True


def gemm_backend():
    """The kernel of the matrix products: "blas" (scipy's) or "own"."""
    _find_blas()
    return "blas" if use_blas else "own"


def set_gemm_backend(name):
    """Choose the kernel ("blas" or "own"; a testing and benchmarking hook,
    process-wide); returns the previous one."""
    global use_blas
    previous = gemm_backend()
    if name not in ("blas", "own"):
        raise ValueError(f"gemm backend must be 'blas' or 'own', got {name!r}")
    if name == "blas" and not _blas_state["found"]:
        raise ValueError("gemm backend 'blas' needs scipy's cython_blas, which was not found")
    use_blas = name == "blas"
    return previous


cdef void own_gemm(bint ta, bint tb, int64_t M, int64_t N, int64_t K, const real* A, int64_t lda,
                   const real* B, int64_t ldb, real beta, real* C, int64_t ldc) noexcept nogil:
    """C = beta C + op(A) op(B), row-major, without BLAS: four rows of C at a
    time against contiguous rows of B (op(B) = B), or four dot products at a
    time over contiguous k (op(B) = B^T)."""
    cdef int64_t i, j, k, r, i_end
    cdef real a0, a1, a2, a3, s0, s1, s2, s3, bj
    cdef real* c0
    cdef real* c1
    cdef real* c2
    cdef real* c3
    cdef const real* b
    cdef const real* a
    for i in range(M):
        c0 = C + i * ldc
        if beta == 0:
            for j in range(N):
                c0[j] = 0
        elif beta != 1:
            for j in range(N):
                c0[j] *= beta
    if not tb:
        i = 0
        while i + 4 <= M:
            c0 = C + i * ldc
            c1 = c0 + ldc
            c2 = c1 + ldc
            c3 = c2 + ldc
            for k in range(K):
                if ta:
                    a = A + k * lda + i
                    a0 = a[0]
                    a1 = a[1]
                    a2 = a[2]
                    a3 = a[3]
                else:
                    a = A + i * lda + k
                    a0 = a[0]
                    a1 = a[lda]
                    a2 = a[2 * lda]
                    a3 = a[3 * lda]
                b = B + k * ldb
                for j in range(N):
                    bj = b[j]
                    c0[j] += a0 * bj
                    c1[j] += a1 * bj
                    c2[j] += a2 * bj
                    c3[j] += a3 * bj
            i += 4
        while i < M:
            c0 = C + i * ldc
            for k in range(K):
                a0 = A[k * lda + i] if ta else A[i * lda + k]
                b = B + k * ldb
                for j in range(N):
                    c0[j] += a0 * b[j]
            i += 1
    else:
        for i in range(M):
            c0 = C + i * ldc
            j = 0
            while j < N:
                s0 = s1 = s2 = s3 = 0
                r = min(4, N - j)
                for k in range(K):
                    a0 = A[k * lda + i] if ta else A[i * lda + k]
                    b = B + j * ldb + k
                    s0 += a0 * b[0]
                    if r > 1:
                        s1 += a0 * b[ldb]
                    if r > 2:
                        s2 += a0 * b[2 * ldb]
                    if r > 3:
                        s3 += a0 * b[3 * ldb]
                c0[j] += s0
                if r > 1:
                    c0[j + 1] += s1
                if r > 2:
                    c0[j + 2] += s2
                if r > 3:
                    c0[j + 3] += s3
                j += 4


cdef inline void gemm(bint ta, bint tb, int64_t M, int64_t N, int64_t K, const real* A, int64_t lda,
                      const real* B, int64_t ldb, real beta, real* C, int64_t ldc) noexcept nogil:
    """C = beta C + op(A) op(B) for row-major matrices (op: transposed when
    ta / tb): C is M x N, op(A) M x K, op(B) K x N.  Row-major C = A B is
    column-major C^T = B^T A^T, hence the swapped operands of the BLAS call."""
    cdef int m, n = <int>N, k = <int>K, la = <int>lda, lb = <int>ldb, lc = <int>ldc
    cdef char tra = b'T' if ta else b'N'
    cdef char trb = b'T' if tb else b'N'
    cdef float fone = 1, fbeta = beta
    cdef double done = 1, dbeta = beta
    cdef int64_t i0 = 0, rows = M
    if M <= 0 or N <= 0:
        return
    if use_blas and M <= INT_MAX_C and N <= INT_MAX_C and K <= INT_MAX_C and lda <= INT_MAX_C \
            and ldb <= INT_MAX_C and ldc <= INT_MAX_C:
        # Products of a few hundred rows gain nothing from BLAS threads (they cost more to wake,
        # and idle ones spin: on a busy machine a fit took 10-50 times longer): calls of at most
        # ONE_THREAD_GEMM multiply-adds run on the calling thread (OpenBLAS's threshold), so
        # unless the BLAS has one thread anyway (``row_blocks`` false), C goes in blocks of rows
        # that small when a block still has 8 rows; larger products are left to the BLAS.
        if row_blocks and N * K * 8 <= ONE_THREAD_GEMM:
            rows = ONE_THREAD_GEMM // (N * K) if K > 0 else M
        while i0 < M:
            m = <int>min(rows, M - i0)
            if real is float:
                blas_sgemm(&trb, &tra, &n, &m, &k, &fone, <float*>B, &lb,
                           <float*>(A + (i0 if ta else i0 * lda)), &la, &fbeta, C + i0 * ldc, &lc)
            else:
                blas_dgemm(&trb, &tra, &n, &m, &k, &done, <double*>B, &lb,
                           <double*>(A + (i0 if ta else i0 * lda)), &la, &dbeta, C + i0 * ldc, &lc)
            i0 += m
    else:
        own_gemm(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc)


cdef inline void first_layer(const Net* net, const int64_t* indptr, const int64_t* idx, const double* val,
                             int64_t i, const double* params, double* z) noexcept nogil:
    """z = b0 + sum of val * W0[idx] over sample i's stored values."""
    cdef int64_t H = net.sizes[1], p, j, h
    cdef const double* w
    cdef double v
    memcpy(z, params + net.boff[0], H * sizeof(double))
    for p in range(indptr[i], indptr[i + 1]):
        j = idx[p]
        v = val[p]
        check_index(j, net.sizes[0])
        w = params + j * H
        for h in range(H):
            z[h] += v * w[h]


cdef inline void dense_layer(const Net* net, int l, const double* a, const double* params,
                             double* z) noexcept nogil:
    """z = a W_l + b_l (a: sizes[l] values, z: sizes[l + 1])."""
    cdef int64_t n_in = net.sizes[l], n_out = net.sizes[l + 1], k, h
    cdef const double* w
    cdef double x
    memcpy(z, params + net.boff[l], n_out * sizeof(double))
    for k in range(n_in):
        x = a[k]
        if x != 0.0:
            w = params + net.woff[l] + k * n_out
            for h in range(n_out):
                z[h] += x * w[h]


cdef double backprop(const Net* net, const int64_t* indptr, const int64_t* idx, const double* val,
                     const int64_t* rows, int64_t B, const int32_t* yi, const double* yf,
                     const double* params, double* grad, double* acts, double* deltas,
                     int64_t* mark, int64_t stamp, int64_t* touched, int64_t* n_touched) noexcept nogil:
    """Forward and backward pass over the B samples ``rows``: adds the
    gradient of (1/B) sum loss_i (no penalty) to ``grad`` and returns
    sum loss_i.  The dense part of ``grad`` (past W0) must be zero; a row of
    W0 is zeroed when the batch first touches it (``mark[row] != stamp``)
    and listed in ``touched``."""
    cdef int L = net.L
    cdef int64_t aoff[MAX_LAYERS_C + 1]
    cdef int64_t b, i, l, k, h, p, j, n_in, n_out, K = net.sizes[L]
    cdef double loss = 0.0, inv_b = 1.0 / B, v, s
    cdef double* a
    cdef double* d
    cdef double* dn
    cdef double* g
    cdef const double* w
    aoff[1] = 0
    for l in range(1, L):
        aoff[l + 1] = aoff[l] + B * net.sizes[l]
    # forward: activations of layers 1..L for every sample of the batch
    for b in range(B):
        i = rows[b]
        a = acts + aoff[1] + b * net.sizes[1]
        first_layer(net, indptr, idx, val, i, params, a)
        if L > 1:
            activate(a, net.sizes[1], net.act)
        for l in range(1, L):
            dense_layer(net, l, acts + aoff[l] + b * net.sizes[l], params,
                        acts + aoff[l + 1] + b * net.sizes[l + 1])
            if l < L - 1:
                activate(acts + aoff[l + 1] + b * net.sizes[l + 1], net.sizes[l + 1], net.act)
        d = deltas + aoff[L] + b * K
        loss += output_delta(acts + aoff[L] + b * K, d, K, net.out, yi[i] if yi != NULL else 0,
                             yf + i * K if yf != NULL else NULL, inv_b)
    # backward through the dense layers
    for l in range(L - 1, 0, -1):
        n_in = net.sizes[l]
        n_out = net.sizes[l + 1]
        for b in range(B):
            a = acts + aoff[l] + b * n_in
            d = deltas + aoff[l + 1] + b * n_out
            dn = deltas + aoff[l] + b * n_in
            g = grad + net.boff[l]
            for h in range(n_out):
                g[h] += d[h]
            for k in range(n_in):
                w = params + net.woff[l] + k * n_out
                g = grad + net.woff[l] + k * n_out
                v = a[k]
                s = 0.0
                for h in range(n_out):
                    g[h] += v * d[h]
                    s += w[h] * d[h]
                dn[k] = s
            times_derivative(dn, a, n_in, net.act)
    # the first layer: bias, then the rows of the active features
    n_out = net.sizes[1]
    for b in range(B):
        i = rows[b]
        d = deltas + aoff[1] + b * n_out
        g = grad + net.boff[0]
        for h in range(n_out):
            g[h] += d[h]
        for p in range(indptr[i], indptr[i + 1]):
            j = idx[p]
            v = val[p]
            check_index(j, net.sizes[0])
            g = grad + j * n_out
            if mark[j] != stamp:
                mark[j] = stamp
                touched[n_touched[0]] = j
                n_touched[0] += 1
                memset(g, 0, n_out * sizeof(double))
            for h in range(n_out):
                g[h] += v * d[h]
    return loss


cdef struct Optimizer:
    int solver
    double lr
    double momentum
    bint nesterov
    double beta1
    double beta2
    double eps
    double lr_t          # Adam's bias-corrected step of the current update


cdef int work_space(void** a, void** b, size_t nbytes) except -1:
    """Two buffers of ``nbytes`` (a batch's activations and deltas, or a
    sample's two layers) into the NULL pointers ``a`` and ``b``; MemoryError
    if either cannot be had (the caller frees both in any case)."""
    resize(a, nbytes, b"multi-layer perceptron")
    resize(b, nbytes, b"multi-layer perceptron")
    return 0


cdef Optimizer make_optimizer(int solver, double lr, double momentum, bint nesterov, double beta1,
                              double beta2, double eps) noexcept:
    """The optimizer settings of an epoch (sparse and dense paths alike)."""
    return Optimizer(solver=solver, lr=lr, momentum=momentum, nesterov=nesterov, beta1=beta1, beta2=beta2,
                     eps=eps, lr_t=0.0)


cdef extern from *:
    """
    #include <math.h>
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    /* Adam's step.  In C for SSE2: compilers keep sqrt scalar (errno), and
       two square roots and divisions at a time halve the step's cost. */
    static void fasttag_adam_step(double* w, const double* g, double* m1, double* m2, long long n,
                                  double b1, double b2, double lr_t, double eps) {
        long long i = 0;
    #if defined(__SSE2__)
        const __m128d vb1 = _mm_set1_pd(b1), vc1 = _mm_set1_pd(1.0 - b1), vb2 = _mm_set1_pd(b2),
                      vc2 = _mm_set1_pd(1.0 - b2), vlr = _mm_set1_pd(lr_t), veps = _mm_set1_pd(eps);
        for (; i + 2 <= n; i += 2) {
            __m128d gi = _mm_loadu_pd(g + i);
            __m128d m = _mm_add_pd(_mm_mul_pd(vb1, _mm_loadu_pd(m1 + i)), _mm_mul_pd(vc1, gi));
            __m128d v = _mm_add_pd(_mm_mul_pd(vb2, _mm_loadu_pd(m2 + i)), _mm_mul_pd(_mm_mul_pd(vc2, gi), gi));
            _mm_storeu_pd(m1 + i, m);
            _mm_storeu_pd(m2 + i, v);
            _mm_storeu_pd(w + i, _mm_sub_pd(_mm_loadu_pd(w + i),
                                            _mm_div_pd(_mm_mul_pd(vlr, m), _mm_add_pd(_mm_sqrt_pd(v), veps))));
        }
    #endif
        for (; i < n; i++) {
            double m = b1 * m1[i] + (1.0 - b1) * g[i];
            double v = b2 * m2[i] + (1.0 - b2) * g[i] * g[i];
            m1[i] = m;
            m2[i] = v;
            w[i] -= lr_t * m / (sqrt(v) + eps);
        }
    }
    """
    void adam_step "fasttag_adam_step"(double* w, const double* g, double* m1, double* m2, long long n,
                                       double b1, double b2, double lr_t, double eps) noexcept nogil


cdef inline void opt_step(const Optimizer* o, double* w, const double* g, double* s1, double* s2,
                          int64_t n) noexcept nogil:
    """One step of the n parameters w on their gradient g, with their state
    s1 (velocity or Adam's first moment) and s2.  The settings are read
    into locals first and each case is its own loop: the compiler can
    then vectorise them."""
    cdef int64_t i
    cdef double v, m, lr = o.lr, mom = o.momentum, b1 = o.beta1, b2 = o.beta2, eps = o.eps, lr_t = o.lr_t
    if o.solver == 0:
        if mom == 0.0:
            for i in range(n):
                w[i] -= lr * g[i]
        elif o.nesterov:
            for i in range(n):
                v = mom * s1[i] - lr * g[i]
                s1[i] = v
                w[i] += mom * v - lr * g[i]
        else:
            for i in range(n):
                v = mom * s1[i] - lr * g[i]
                s1[i] = v
                w[i] += v
    else:
        adam_step(w, g, s1, s2, n, b1, b2, lr_t, eps)


cdef inline double* ptr(double[::1] a):
    return &a[0] if a.shape[0] else NULL


cdef Net make_net(const int64_t[::1] sizes, const int64_t[::1] woff, const int64_t[::1] boff,
                  int act, int out, int64_t n_params) except *:
    cdef Net net
    cdef int64_t L = sizes.shape[0] - 1
    if not (1 <= L <= MAX_LAYERS_C and woff.shape[0] == L and boff.shape[0] == L):
        raise ValueError("_mlp: the layer sizes and offsets disagree")
    if not (0 <= act <= 3 and 0 <= out <= 1):
        raise ValueError("_mlp: unknown activation or output")
    net.L = <int>L
    net.sizes = &sizes[0]
    net.woff = &woff[0]
    net.boff = &boff[0]
    net.act = act
    net.out = out
    net.n_params = n_params
    return net


def _check_samples(const int64_t[::1] indptr, const double[::1] val, const int64_t[::1] idx):
    if indptr.shape[0] < 1 or idx.shape[0] != val.shape[0] or indptr[indptr.shape[0] - 1] > idx.shape[0]:
        raise ValueError("_mlp: the sample arrays disagree")


def mlp_epoch(const int64_t[::1] indptr, const int64_t[::1] idx, const double[::1] val,
              const int32_t[::1] yi, const double[:, ::1] yf, const int64_t[::1] order,
              const int64_t[::1] sizes, const int64_t[::1] woff, const int64_t[::1] boff,
              int act, int out, double[::1] params, double[::1] grad, double[::1] s1, double[::1] s2,
              double[::1] acc, int64_t[::1] last, int64_t[::1] mark, int64_t[::1] touched,
              int solver, double lr, double momentum, bint nesterov, double beta1, double beta2,
              double eps, double alpha, int64_t batch_size, int64_t t, int64_t t0):
    """One pass over ``order`` in mini-batches of ``batch_size``; returns
    ``(sum of the batch losses with penalty, weighted by batch size, t)``,
    t counting the updates.  ``s1``/``s2``: the velocity (sgd with
    momentum) or Adam's moments, else empty.  ``acc``/``last``: with
    averaging (``t0 >= 0``), the running sum of the iterates after step t0
    (W0's rows caught up lazily: ``last[row]`` is the step their sum
    includes), else empty."""
    cdef Net net = make_net(sizes, woff, boff, act, out, params.shape[0])
    cdef int64_t n = order.shape[0], n_cols = sizes[0], H = sizes[1], K = sizes[sizes.shape[0] - 1]
    cdef int64_t n0 = n_cols * H, P = params.shape[0], width = 0, l, start, B, r, j, h, c, q
    cdef int64_t n_touched = 0
    cdef bint momentum_state = solver == 0 and momentum != 0.0
    cdef bint averaging = t0 >= 0
    cdef double total = 0.0, batch_loss, penalty, wv
    cdef Optimizer o
    cdef double* W = ptr(params)
    cdef double* G = ptr(grad)
    cdef double* S1
    cdef double* S2
    cdef double* A
    cdef double* acts = NULL
    cdef double* deltas = NULL
    _check_samples(indptr, val, idx)
    if grad.shape[0] != P or mark.shape[0] != n_cols or touched.shape[0] != n_cols:
        raise ValueError("_mlp: the gradient buffers do not match the network")
    if (yi.shape[0] == 0) == (yf.shape[0] == 0) or (yf.shape[0] and yf.shape[1] != K):
        raise ValueError("_mlp: give integer labels or float targets")
    if (momentum_state or solver == 1) and s1.shape[0] != P or solver == 1 and s2.shape[0] != P:
        raise ValueError("_mlp: the optimizer state does not match the network")
    if averaging and (acc.shape[0] != P or last.shape[0] != n_cols):
        raise ValueError("_mlp: the averaging state does not match the network")
    if batch_size < 1 or n == 0:
        return 0.0, t
    for l in range(1, sizes.shape[0]):
        width += sizes[l]
    B = min(batch_size, n)
    S1 = ptr(s1)
    S2 = ptr(s2)
    A = ptr(acc)
    o = make_optimizer(solver, lr, momentum, nesterov, beta1, beta2, eps)
    try:
        work_space(<void**>&acts, <void**>&deltas, B * width * sizeof(double))
        with nogil:
            start = 0
            while start < n:
                B = min(batch_size, n - start)
                memset(G + n0, 0, (P - n0) * sizeof(double))
                n_touched = 0
                batch_loss = backprop(&net, &indptr[0], &idx[0] if idx.shape[0] else NULL,
                                      &val[0] if val.shape[0] else NULL, &order[start], B,
                                      &yi[0] if yi.shape[0] else NULL, &yf[0, 0] if yf.shape[0] else NULL,
                                      W, G, acts, deltas, &mark[0] if n_cols else NULL, t,
                                      &touched[0] if n_cols else NULL, &n_touched)
                # the L2 term: the dense layers' weights, and W0's touched rows
                penalty = 0.0
                if alpha != 0.0:
                    for l in range(1, net.L):
                        for q in range(woff[l], woff[l] + sizes[l] * sizes[l + 1]):
                            penalty += W[q] * W[q]
                            G[q] += alpha * W[q]
                    for r in range(n_touched):
                        j = touched[r]
                        for h in range(j * H, j * H + H):
                            penalty += W[h] * W[h]
                            G[h] += alpha * W[h]
                total += batch_loss + 0.5 * alpha * penalty * B
                t += 1
                if solver == 1:
                    o.lr_t = lr * sqrt(1.0 - pow(beta2, <double>t)) / (1.0 - pow(beta1, <double>t))
                # W0's touched rows: catch their sums up to step t - 1, step, add
                for r in range(n_touched):
                    j = touched[r]
                    if averaging:
                        c = t - 1 - (last[j] if last[j] > t0 else t0)
                        if c > 0:
                            for h in range(j * H, j * H + H):
                                A[h] += c * W[h]
                    opt_step(&o, W + j * H, G + j * H, S1 + j * H if S1 != NULL else NULL,
                             S2 + j * H if S2 != NULL else NULL, H)
                    if averaging:
                        if t > t0:
                            for h in range(j * H, j * H + H):
                                A[h] += W[h]
                        last[j] = t
                opt_step(&o, W + n0, G + n0, S1 + n0 if S1 != NULL else NULL,
                         S2 + n0 if S2 != NULL else NULL, P - n0)
                if averaging and t > t0:
                    for q in range(n0, P):
                        A[q] += W[q]
                start += B
    finally:
        free(acts)
        free(deltas)
    return total, t


def mlp_forward(const int64_t[::1] indptr, const int64_t[::1] idx, const double[::1] val,
                const int64_t[::1] sizes, const int64_t[::1] woff, const int64_t[::1] boff,
                int act, const double[::1] params, double[:, ::1] result):
    """The output layer's pre-activations (before softmax) of every sample
    into ``result`` (n_samples, sizes[L])."""
    cdef Net net = make_net(sizes, woff, boff, act, 1, params.shape[0])
    cdef int64_t n = indptr.shape[0] - 1, width = 0, i, l, K = sizes[sizes.shape[0] - 1]
    cdef double* cur = NULL
    cdef double* nxt = NULL
    cdef double* tmp
    _check_samples(indptr, val, idx)
    if result.shape[0] != n or result.shape[1] != K:
        raise ValueError("_mlp: the result does not match the samples")
    for l in range(1, sizes.shape[0]):
        width = max(width, sizes[l])
    try:
        work_space(<void**>&cur, <void**>&nxt, width * sizeof(double))
        with nogil:
            for i in range(n):
                first_layer(&net, &indptr[0], &idx[0] if idx.shape[0] else NULL,
                            &val[0] if val.shape[0] else NULL, i, &params[0], cur)
                for l in range(1, net.L):
                    activate(cur, sizes[l], act)
                    dense_layer(&net, <int>l, cur, &params[0], nxt)
                    tmp = cur
                    cur = nxt
                    nxt = tmp
                memcpy(&result[i, 0], cur, K * sizeof(double))
    finally:
        free(cur)
        free(nxt)


def mlp_gradient(const int64_t[::1] indptr, const int64_t[::1] idx, const double[::1] val,
                 const int32_t[::1] yi, const double[:, ::1] yf,
                 const int64_t[::1] sizes, const int64_t[::1] woff, const int64_t[::1] boff,
                 int act, int out, const double[::1] params):
    """``(mean loss, gradient)`` over all samples, without the penalty: the
    pass training takes, on one batch (a testing hook for the gradient
    checks)."""
    cdef Net net = make_net(sizes, woff, boff, act, out, params.shape[0])
    cdef int64_t n = indptr.shape[0] - 1, width = 0, l, n_touched = 0, K = sizes[sizes.shape[0] - 1]
    _check_samples(indptr, val, idx)
    if n < 1 or (yi.shape[0] == 0) == (yf.shape[0] == 0) or (yi.shape[0] and yi.shape[0] != n) \
            or (yf.shape[0] and (yf.shape[0] != n or yf.shape[1] != K)):
        raise ValueError("_mlp: give one label or target row per sample")
    for l in range(1, sizes.shape[0]):
        width += sizes[l]
    grad = np.zeros(params.shape[0])
    acts = np.empty(n * width)
    deltas = np.empty(n * width)
    mark = np.full(sizes[0], -1, dtype=np.int64)
    touched = np.empty(sizes[0], dtype=np.int64)
    rows = np.arange(n, dtype=np.int64)
    cdef double[::1] g = grad, a = acts, d = deltas
    cdef int64_t[::1] m = mark, tt = touched, rr = rows
    loss = backprop(&net, &indptr[0], &idx[0] if idx.shape[0] else NULL, &val[0] if val.shape[0] else NULL,
                    &rr[0], n, &yi[0] if yi.shape[0] else NULL, &yf[0, 0] if yf.shape[0] else NULL,
                    &params[0], &g[0], &a[0], &d[0], &m[0] if sizes[0] else NULL, 0,
                    &tt[0] if sizes[0] else NULL, &n_touched)
    return loss / n, grad


# ---------------------------------------------------------------- the batched dense path

cdef inline void layer_offsets_of(const Net* net, int64_t B, int64_t* aoff) noexcept nogil:
    """aoff[l]: where layer l's B x sizes[l] block starts in the activation
    (and delta) buffers, l = 1..L."""
    cdef int l
    aoff[1] = 0
    for l in range(1, net.L):
        aoff[l + 1] = aoff[l] + B * net.sizes[l]


cdef void forward_batch(const Net* net, const real* X, int64_t B, const real* W, real* acts,
                        const int64_t* aoff) noexcept nogil:
    """Layers 1..L of the B samples X (rows of sizes[0] values) into
    ``acts``: A_{l+1} = f(A_l W_l + b_l), the last one without f."""
    cdef int l
    cdef int64_t b, n_in, n_out
    cdef const real* a
    cdef real* z
    for l in range(net.L):
        n_in = net.sizes[l]
        n_out = net.sizes[l + 1]
        check(net.woff[l] + n_in * n_out <= net.n_params and net.boff[l] + n_out <= net.n_params)
        a = X if l == 0 else acts + aoff[l]
        z = acts + aoff[l + 1]
        for b in range(B):
            memcpy(z + b * n_out, W + net.boff[l], n_out * sizeof(real))
        gemm(False, False, B, n_out, n_in, a, n_in, W + net.woff[l], n_out, <real>1, z, n_out)
        if l < net.L - 1:
            activate(z, B * n_out, net.act)


cdef double batch_gradient(const Net* net, const real* X, int64_t B, const int64_t* rows,
                           const int32_t* yi, const double* yf, const real* W, real* acts, real* deltas,
                           real* G) noexcept nogil:
    """Forward and backward pass of the B samples X (labels: those of
    ``rows``, or of 0..B-1 when NULL): overwrites G with the gradient of
    (1/B) sum loss_i (no penalty) and returns sum loss_i."""
    cdef int L = net.L, l
    cdef int64_t aoff[MAX_LAYERS_C + 1]
    cdef int64_t b, i, h, n_in, n_out, K = net.sizes[L]
    cdef double loss = 0.0, inv_b = 1.0 / B
    cdef const real* a
    cdef real* d
    cdef real* g
    layer_offsets_of(net, B, aoff)
    forward_batch(net, X, B, W, acts, aoff)
    for b in range(B):
        i = rows[b] if rows != NULL else b
        loss += output_delta(acts + aoff[L] + b * K, deltas + aoff[L] + b * K, K, net.out,
                             yi[i] if yi != NULL else 0, yf + i * K if yf != NULL else NULL, inv_b)
    for l in range(L - 1, -1, -1):
        n_in = net.sizes[l]
        n_out = net.sizes[l + 1]
        a = X if l == 0 else acts + aoff[l]
        d = deltas + aoff[l + 1]
        gemm(True, False, n_in, n_out, B, a, n_in, d, n_out, <real>0, G + net.woff[l], n_out)
        g = G + net.boff[l]
        memset(g, 0, n_out * sizeof(real))
        for b in range(B):
            for h in range(n_out):
                g[h] += d[b * n_out + h]
        if l > 0:
            gemm(False, True, B, n_in, n_out, d, n_out, W + net.woff[l], n_out, <real>0,
                 deltas + aoff[l], n_in)
            times_derivative(deltas + aoff[l], acts + aoff[l], B * n_in, net.act)
    return loss


cdef inline double with_l2(double* g, const float* g32, const double* w, int64_t n,
                           double alpha) noexcept nogil:
    """g = g32 + alpha w over n weights; returns ||w||^2 (four partial
    sums: one chain of additions would bound the loop by their latency)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef int64_t i = 0
    while i + 4 <= n:
        s0 += w[i] * w[i]
        s1 += w[i + 1] * w[i + 1]
        s2 += w[i + 2] * w[i + 2]
        s3 += w[i + 3] * w[i + 3]
        i += 4
    while i < n:
        s0 += w[i] * w[i]
        i += 1
    for i in range(n):
        g[i] = g32[i] + alpha * w[i]
    return (s0 + s1) + (s2 + s3)


cdef int64_t layers_width(const int64_t[::1] sizes):
    cdef int64_t width = 0, l
    for l in range(1, sizes.shape[0]):
        width += sizes[l]
    return width


def _check_targets(const int32_t[::1] yi, const double[:, ::1] yf, int64_t n, int64_t K):
    if (yi.shape[0] == 0) == (yf.shape[0] == 0) or (yi.shape[0] and yi.shape[0] != n) \
            or (yf.shape[0] and (yf.shape[0] != n or yf.shape[1] != K)):
        raise ValueError("_mlp: give one label or target row per sample")


#: rows of one block of the objective, prediction and gradient passes
cdef enum:
    BLOCK_ROWS = 256


def dense_epoch(const float[:, ::1] X, const int32_t[::1] yi, const double[:, ::1] yf,
                const int64_t[::1] order, const int64_t[::1] sizes, const int64_t[::1] woff,
                const int64_t[::1] boff, int act, int out, double[::1] params, float[::1] w32,
                float[::1] g32, double[::1] grad, double[::1] s1, double[::1] s2, double[::1] acc,
                int solver, double lr, double momentum, bint nesterov, double beta1, double beta2,
                double eps, double alpha, int64_t batch_size, int64_t t, int64_t t0):
    """One pass of dense samples X (n, sizes[0]) over ``order`` in
    mini-batches, each a forward and backward pass of float32 matrix
    products on the float32 copy ``w32`` of ``params``, then the step of
    the float64 ``params`` (and ``w32`` refreshed).  Arguments and result
    as :func:`mlp_epoch` (``g32``, ``grad``: gradient buffers of P floats
    and doubles; every row is touched in every step, so averaging keeps no
    ``last``)."""
    cdef Net net = make_net(sizes, woff, boff, act, out, params.shape[0])
    cdef int64_t n = X.shape[0], d = X.shape[1], P = params.shape[0], K = sizes[sizes.shape[0] - 1]
    cdef int64_t width = layers_width(sizes), start, B, b, q, i, n_w
    cdef int l
    cdef bint averaging = t0 >= 0
    cdef double total = 0.0, batch_loss, penalty, w
    cdef Optimizer o
    cdef double* Wd = ptr(params)
    cdef double* S1 = ptr(s1)
    cdef double* S2 = ptr(s2)
    cdef double* Acc = ptr(acc)
    cdef float* W32 = &w32[0] if w32.shape[0] else NULL
    cdef float* G32 = &g32[0] if g32.shape[0] else NULL
    cdef double* G64 = ptr(grad)
    cdef float* xb = NULL
    cdef float* acts = NULL
    cdef float* deltas = NULL
    _find_blas()
    if d != sizes[0] or w32.shape[0] != P or g32.shape[0] != P or grad.shape[0] != P:
        raise ValueError("_mlp: the dense samples or buffers do not match the network")
    _check_targets(yi, yf, n, K)
    if (solver == 1 or solver == 0 and momentum != 0.0) and s1.shape[0] != P or solver == 1 and s2.shape[0] != P:
        raise ValueError("_mlp: the optimizer state does not match the network")
    if averaging and acc.shape[0] != P:
        raise ValueError("_mlp: the averaging state does not match the network")
    if batch_size < 1 or order.shape[0] == 0:
        return 0.0, t
    B = min(batch_size, order.shape[0])
    o = make_optimizer(solver, lr, momentum, nesterov, beta1, beta2, eps)
    try:
        resize(<void**>&xb, B * d * sizeof(float), b"multi-layer perceptron")
        work_space(<void**>&acts, <void**>&deltas, B * width * sizeof(float))
        with nogil:
            start = 0
            while start < order.shape[0]:
                B = min(batch_size, order.shape[0] - start)
                for b in range(B):
                    i = order[start + b]
                    check_index(i, n)
                    memcpy(xb + b * d, &X[i, 0], d * sizeof(float))
                batch_loss = batch_gradient(&net, xb, B, &order[start], &yi[0] if yi.shape[0] else NULL,
                                            &yf[0, 0] if yf.shape[0] else NULL, W32, acts, deltas, G32)
                t += 1
                if solver == 1:
                    o.lr_t = lr * sqrt(1.0 - pow(beta2, <double>t)) / (1.0 - pow(beta1, <double>t))
                # the step on the float64 parameters: the gradient with the weights' L2 term
                # (the penalty taken before the step), the optimizer, then the float32 copy
                penalty = 0.0
                for l in range(net.L):
                    penalty += with_l2(G64 + woff[l], G32 + woff[l], Wd + woff[l], boff[l] - woff[l], alpha)
                    for q in range(boff[l], boff[l] + sizes[l + 1]):
                        G64[q] = G32[q]
                opt_step(&o, Wd, G64, S1, S2, P)
                for q in range(P):
                    W32[q] = <float>Wd[q]
                total += batch_loss + 0.5 * alpha * penalty * B
                if averaging and t > t0:
                    for q in range(P):
                        Acc[q] += Wd[q]
                start += B
    finally:
        free(xb)
        free(acts)
        free(deltas)
    return total, t


cdef object dense_pass(const real[:, ::1] X, const int32_t[::1] yi, const double[:, ::1] yf,
                       const int64_t[::1] sizes, const int64_t[::1] woff, const int64_t[::1] boff,
                       int act, int out, const real[::1] params, double[:, ::1] result, real[::1] grad):
    """Blocks of BLOCK_ROWS dense samples through the network: the output
    pre-activations into ``result`` (when not empty), and the loss summed
    (with labels or targets given) and its gradient summed into ``grad``
    (when not empty, scaled by 1/n: that of the mean loss)."""
    cdef Net net = make_net(sizes, woff, boff, act, out, params.shape[0])
    cdef int64_t n = X.shape[0], d = X.shape[1], K = sizes[sizes.shape[0] - 1], P = params.shape[0]
    cdef int64_t width = layers_width(sizes), start, B, b, k, q
    cdef int64_t aoff[MAX_LAYERS_C + 1]
    cdef bint want_out = result.shape[0] != 0, want_loss = yi.shape[0] != 0 or yf.shape[0] != 0
    cdef bint want_grad = grad.shape[0] != 0
    cdef double total = 0.0, scale
    cdef real* acts = NULL
    cdef real* deltas = NULL
    cdef real* g
    cdef real[::1] gb
    if d != sizes[0] or (want_out and (result.shape[0] != n or result.shape[1] != K)) \
            or (want_grad and (grad.shape[0] != P or not want_loss or want_out)):
        raise ValueError("_mlp: the dense samples or buffers do not match the network")
    if want_loss:
        _check_targets(yi, yf, n, K)
    if n == 0:
        return 0.0
    B = min(<int64_t>BLOCK_ROWS, n)
    if want_grad:
        gb = np.empty(P, dtype=np.float32 if real is float else np.float64)
        memset(&grad[0], 0, P * sizeof(real))
    try:
        work_space(<void**>&acts, <void**>&deltas, B * width * sizeof(real))
        with nogil:
            start = 0
            while start < n:
                B = min(<int64_t>BLOCK_ROWS, n - start)
                if want_grad:
                    total += batch_gradient(&net, &X[start, 0], B, NULL,
                                            &yi[start] if yi.shape[0] else NULL,
                                            &yf[start, 0] if yf.shape[0] else NULL,
                                            &params[0], acts, deltas, &gb[0])
                    scale = <double>B / n
                    g = &grad[0]
                    for q in range(P):
                        g[q] += <real>(scale * gb[q])
                else:
                    layer_offsets_of(&net, B, aoff)
                    forward_batch(&net, &X[start, 0], B, &params[0], acts, aoff)
                    if want_loss:
                        for b in range(B):
                            total += output_delta(acts + aoff[net.L] + b * K, deltas, K, net.out,
                                                  yi[start + b] if yi.shape[0] else 0,
                                                  &yf[start + b, 0] if yf.shape[0] else NULL, 1.0)
                if want_out:
                    for b in range(B):
                        for k in range(K):
                            result[start + b, k] = acts[aoff[net.L] + b * K + k]
                start += B
    finally:
        free(acts)
        free(deltas)
    return total


def dense_forward(const real[:, ::1] X, const int64_t[::1] sizes, const int64_t[::1] woff,
                  const int64_t[::1] boff, int act, const real[::1] params, double[:, ::1] result):
    """The output pre-activations (before softmax) of the dense samples X
    into ``result`` (n_samples, sizes[L]), in X's precision."""
    cdef int32_t[::1] no_labels = np.zeros(0, np.int32)
    cdef double[:, ::1] no_targets = np.zeros((0, 1))
    cdef real[::1] no_grad = np.zeros(0, np.float32 if real is float else np.float64)
    _find_blas()
    if result.shape[0] != X.shape[0]:
        raise ValueError("_mlp: the result does not match the samples")
    if X.shape[0]:
        dense_pass(X, no_labels, no_targets, sizes, woff, boff, act, 1, params, result, no_grad)


def dense_loss(const real[:, ::1] X, const int32_t[::1] yi, const double[:, ::1] yf,
               const int64_t[::1] sizes, const int64_t[::1] woff, const int64_t[::1] boff,
               int act, int out, const real[::1] params):
    """Sum of the losses of the dense samples X (no penalty): the
    objective pass, batched, in X's precision."""
    cdef double[:, ::1] no_result = np.zeros((0, 1))
    cdef real[::1] no_grad = np.zeros(0, np.float32 if real is float else np.float64)
    _find_blas()
    return dense_pass(X, yi, yf, sizes, woff, boff, act, out, params, no_result, no_grad)


def dense_gradient(const real[:, ::1] X, const int32_t[::1] yi, const double[:, ::1] yf,
                   const int64_t[::1] sizes, const int64_t[::1] woff, const int64_t[::1] boff,
                   int act, int out, const real[::1] params):
    """``(mean loss, gradient)`` over the dense samples X without the
    penalty, by the batched passes training takes (a testing hook)."""
    _find_blas()
    if X.shape[0] < 1:
        raise ValueError("_mlp: give one label or target row per sample")
    grad = np.zeros(params.shape[0], dtype=np.float32 if real is float else np.float64)
    cdef real[::1] g = grad
    cdef double[:, ::1] no_result = np.zeros((0, 1))
    loss = dense_pass(X, yi, yf, sizes, woff, boff, act, out, params, no_result, g)
    return loss / X.shape[0], grad
