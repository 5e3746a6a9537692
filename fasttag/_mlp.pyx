# cython: language_level=3
"""Compiled forward and backward passes of the multi-layer perceptron
(``fasttag.linear.MLPClassifier`` / ``MLPRegressor``).

A network of L weight layers has widths ``sizes[0..L]`` (``sizes[0]``: the
input columns, ``sizes[L]``: the outputs).  All its parameters live in one
flat float64 array: the first layer's weights W0 (sizes[0], sizes[1]) come
first, row-major, so that the weights of one input column are contiguous;
then b0, W1, b1, ... at the offsets ``woff[l]`` and ``boff[l]``.

Samples are CSR arrays (``indptr``, ``idx``, ``val``; dense inputs are CSR
with every column stored).  The first layer is an embedding bag: a sample's
pre-activations are b0 plus the sum of ``val * W0[idx]`` over its stored
values, so its cost is (stored values x sizes[1]), never sizes[0].  A
mini-batch step updates only the rows of W0 the batch touches (their L2
term included, and their optimizer state: lazily, as sparse Adam does); on
dense input every row is touched and the step is the ordinary one.

Output: softmax with log loss (classification, one output per class) or
identity with squared loss (regression).  The objective of a batch of B
samples is (1/B) sum_i loss_i + (alpha / 2) ||W||^2 (weights, not biases).

Everything runs without the GIL; the Python layer validates the arrays
(shapes, index ranges) before calling in; each function checks once that
the shapes agree, and the debug build (FASTTAG_DEBUG=1) checks every
raw-pointer index of the loops (``_check.pxd``).
"""
import numpy as np

cimport cython
from libc.math cimport exp, log, tanh, sqrt, pow
from libc.stdint cimport int64_t, int32_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memcpy

from ._check cimport check_index, DEBUG_BUILD as _DEBUG_BUILD

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


cdef inline void activate(double* z, int64_t n, int act) noexcept nogil:
    cdef int64_t h
    if act == 1:
        for h in range(n):
            z[h] = 1.0 / (1.0 + exp(-z[h]))
    elif act == 2:
        for h in range(n):
            z[h] = tanh(z[h])
    elif act == 3:
        for h in range(n):
            if z[h] < 0.0:
                z[h] = 0.0


cdef inline void times_derivative(double* d, const double* a, int64_t n, int act) noexcept nogil:
    """d *= f'(z), written with the activation's output a = f(z)."""
    cdef int64_t h
    if act == 1:
        for h in range(n):
            d[h] *= a[h] * (1.0 - a[h])
    elif act == 2:
        for h in range(n):
            d[h] *= 1.0 - a[h] * a[h]
    elif act == 3:
        for h in range(n):
            if a[h] <= 0.0:
                d[h] = 0.0


cdef inline double output_delta(double* z, double* d, int64_t K, int out, int32_t label,
                                const double* target) noexcept nogil:
    """Loss of one sample whose output pre-activations are z; writes
    dloss/dz into d."""
    cdef int64_t k
    cdef double m, s, loss = 0.0
    if out == 0:
        m = z[0]
        for k in range(1, K):
            if z[k] > m:
                m = z[k]
        s = 0.0
        for k in range(K):
            s += exp(z[k] - m)
        check_index(label, K)
        loss = m + log(s) - z[label]
        for k in range(K):
            d[k] = exp(z[k] - m) / s
        d[label] -= 1.0
    else:
        for k in range(K):
            d[k] = z[k] - target[k]
            loss += 0.5 * d[k] * d[k]
    return loss


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
                             yf + i * K if yf != NULL else NULL)
        for k in range(K):
            d[k] *= inv_b
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


cdef inline void opt_step(const Optimizer* o, double* w, const double* g, double* s1, double* s2,
                          int64_t n) noexcept nogil:
    cdef int64_t i
    cdef double v, m
    if o.solver == 0:
        if o.momentum == 0.0:
            for i in range(n):
                w[i] -= o.lr * g[i]
        else:
            for i in range(n):
                v = o.momentum * s1[i] - o.lr * g[i]
                s1[i] = v
                if o.nesterov:
                    w[i] += o.momentum * v - o.lr * g[i]
                else:
                    w[i] += v
    else:
        for i in range(n):
            m = o.beta1 * s1[i] + (1.0 - o.beta1) * g[i]
            v = o.beta2 * s2[i] + (1.0 - o.beta2) * g[i] * g[i]
            s1[i] = m
            s2[i] = v
            w[i] -= o.lr_t * m / (sqrt(v) + o.eps)


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
    cdef double* acts
    cdef double* deltas
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
    acts = <double*>malloc(B * width * sizeof(double))
    deltas = <double*>malloc(B * width * sizeof(double))
    if acts == NULL or deltas == NULL:
        free(acts)
        free(deltas)
        raise MemoryError()
    S1 = ptr(s1)
    S2 = ptr(s2)
    A = ptr(acc)
    o.solver = solver
    o.lr = lr
    o.momentum = momentum
    o.nesterov = nesterov
    o.beta1 = beta1
    o.beta2 = beta2
    o.eps = eps
    try:
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
    cdef double* cur
    cdef double* nxt
    cdef double* tmp
    _check_samples(indptr, val, idx)
    if result.shape[0] != n or result.shape[1] != K:
        raise ValueError("_mlp: the result does not match the samples")
    for l in range(1, sizes.shape[0]):
        width = max(width, sizes[l])
    cur = <double*>malloc(width * sizeof(double))
    nxt = <double*>malloc(width * sizeof(double))
    if cur == NULL or nxt == NULL:
        free(cur)
        free(nxt)
        raise MemoryError()
    try:
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
