"""The MLP's batched dense path (float32 matrix products, float64
parameters) against a slow numpy reference in float64: outputs, gradients
and training steps on random small networks, every activation, both
outputs, with scipy's BLAS and with the own kernel; dense input against the
same data as CSR (the embedding-bag path)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from fasttag.linear import _mlp
from fasttag.linear import MLPClassifier, MLPRegressor
from fasttag.linear._compat import check_random_state

ACTIVATIONS = ["identity", "logistic", "tanh", "relu"]
BACKENDS = ["own"] + (["blas"] if _mlp.gemm_backend() == "blas" else [])


@pytest.fixture(params=BACKENDS)
def backend(request):
    previous = _mlp.set_gemm_backend(request.param)
    yield request.param
    _mlp.set_gemm_backend(previous)


def _f(name, z):
    return {"identity": z, "logistic": 1 / (1 + np.exp(-z)), "tanh": np.tanh(z), "relu": np.maximum(z, 0)}[name]


def _df(name, a):
    """f'(z) from a = f(z)."""
    return {"identity": np.ones_like(a), "logistic": a * (1 - a), "tanh": 1 - a * a,
            "relu": (a > 0).astype(float)}[name]


def reference_forward(activation, X, coefs, intercepts):
    """Activations of every layer, the input first (the output without f)."""
    acts = [X]
    for layer, (W, b) in enumerate(zip(coefs, intercepts)):
        z = acts[-1] @ W + b
        acts.append(_f(activation, z) if layer < len(coefs) - 1 else z)
    return acts


def reference_gradient(activation, classify, X, y, coefs, intercepts, alpha):
    """dJ/dW, dJ/db of J = mean loss + alpha/2 ||W||^2, by backpropagation
    written out layer by layer (y: class indices, or targets)."""
    acts = reference_forward(activation, X, coefs, intercepts)
    z = acts[-1]
    if classify:
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        d = p.copy()
        d[np.arange(len(y)), y] -= 1
    else:
        d = z - y.reshape(-1, 1)
    d /= len(X)
    gW, gb = [None] * len(coefs), [None] * len(coefs)
    for layer in range(len(coefs) - 1, -1, -1):
        gW[layer] = acts[layer].T @ d + alpha * coefs[layer]
        gb[layer] = d.sum(axis=0)
        if layer:
            d = (d @ coefs[layer].T) * _df(activation, acts[layer])
    return gW, gb


def _flat(coefs, intercepts):
    return np.concatenate([v for W, b in zip(coefs, intercepts) for v in (W.ravel(), b)])


def _data(seed, n, d, kind):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.normal(size=n) if kind == "regression" else np.arange(n) % (2 if kind == "binary" else 5)
    return X, y


def _fit(cls, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(**kw).fit(X, y)


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression"])
def test_forward_matches_numpy(activation, kind, backend):
    """Predictions (float64 products) on odd shapes: rows, widths and
    classes that are not multiples of the kernel's blocks."""
    X, y = _data(1, 37, 7, kind)
    cls = MLPRegressor if kind == "regression" else MLPClassifier
    est = _fit(cls, X, y, hidden_layer_sizes=(9, 5), activation=activation, max_iter=2, random_state=0)
    rng = np.random.default_rng(2)
    est._weights = rng.normal(size=est._weights.shape)         # weights far from training's
    Xt = rng.normal(size=(300, 7))                               # more rows than one block of 256
    z = reference_forward(activation, Xt, est.coefs_, est.intercepts_)[-1]
    if kind == "regression":
        np.testing.assert_allclose(est.predict(Xt), z[:, 0], rtol=1e-10, atol=1e-12)
    else:
        p = np.exp(z - z.max(axis=1, keepdims=True))
        np.testing.assert_allclose(est.predict_proba(Xt), p / p.sum(axis=1, keepdims=True), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("kind", ["multiclass", "regression"])
def test_gradient_hook_matches_numpy_backprop(activation, kind, backend):
    X, y = _data(3, 11, 6, kind)
    cls = MLPRegressor if kind == "regression" else MLPClassifier
    est = _fit(cls, X, y, hidden_layer_sizes=(5, 3), activation=activation, max_iter=1, alpha=0.2, random_state=1)
    w = np.random.default_rng(4).normal(size=est._weights.shape)
    _, grad = est._objective_gradient(X, y, w)
    est._weights = w
    yy = y if kind == "regression" else np.searchsorted(est.classes_, y)
    gW, gb = reference_gradient(activation, kind != "regression", X, yy, est.coefs_, est.intercepts_, 0.2)
    np.testing.assert_allclose(grad, _flat(gW, gb), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression"])
def test_training_steps_match_numpy(activation, kind, backend):
    """Plain SGD without shuffling, two epochs of batches 8, 8, 4 (a
    ragged last batch): every step is w -= lr * dJ_B/dw with the reference
    gradient, up to float32 rounding of the products."""
    X, y = _data(5, 20, 6, kind)
    cls = MLPRegressor if kind == "regression" else MLPClassifier
    kw = dict(hidden_layer_sizes=(7, 4), activation=activation, solver="sgd", momentum=0.0, alpha=0.05,
              learning_rate_init=0.1, batch_size=8, shuffle=False, max_iter=2, random_state=3, tol=0.0,
              n_iter_no_change=100)
    est = _fit(cls, X, y, **kw)
    ref = cls(**kw)
    ref._sizes = [6, 7, 4, 1 if kind == "regression" else len(np.unique(y))]
    w = ref._init_weights(check_random_state(3))
    ref._weights = w
    yy = y if kind == "regression" else np.searchsorted(np.unique(y), y)
    for _ in range(2):
        for start in range(0, 20, 8):
            sl = slice(start, start + 8)
            gW, gb = reference_gradient(activation, kind != "regression", X[sl], yy[sl], ref.coefs_,
                                        ref.intercepts_, 0.05)
            ref._weights = ref._weights - 0.1 * _flat(gW, gb)
    moved = ref._weights - w
    np.testing.assert_allclose(est._weights - w, moved, rtol=1e-4, atol=1e-5 * np.abs(moved).max())
    assert est.n_updates_ == 6


def test_dense_equals_csr_within_float32(backend):
    """The same samples with zeros: dense (batched, float32 products) and
    CSR (embedding bag, float64) give the same network up to rounding."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(60, 9))
    X[rng.random(X.shape) < 0.4] = 0.0
    y = (X[:, 0] - X[:, 1] > 0).astype(int) + (X[:, 2] > 0.5)
    kw = dict(hidden_layer_sizes=(10,), activation="tanh", solver="adam", batch_size=16, max_iter=4,
              random_state=2, average=3)
    dense = _fit(MLPClassifier, X, y, **kw)
    csr = _fit(MLPClassifier, sp.csr_matrix(X), y, **kw)
    np.testing.assert_allclose(dense._weights, csr._weights, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dense.loss_curve_, csr.loss_curve_, rtol=1e-5)
    np.testing.assert_allclose(dense.predict_proba(X), csr.predict_proba(sp.csr_matrix(X)), atol=1e-4)
    reg = _fit(MLPRegressor, X, X[:, 0] * 2.0, **kw)
    reg_csr = _fit(MLPRegressor, sp.csr_matrix(X), X[:, 0] * 2.0, **kw)
    np.testing.assert_allclose(reg._weights, reg_csr._weights, rtol=1e-4, atol=1e-5)


def test_own_kernel_and_blas_agree_and_runs_repeat():
    if "blas" not in BACKENDS:
        pytest.skip("scipy's BLAS is not available: only the own kernel runs")
    X, y = _data(8, 50, 13, "multiclass")
    kw = dict(hidden_layer_sizes=(11, 6), activation="relu", batch_size=9, max_iter=3, random_state=4)
    fits = {}
    for name in ("own", "blas"):
        previous = _mlp.set_gemm_backend(name)
        try:
            fits[name] = [_fit(MLPClassifier, X, y, **kw) for _ in range(2)]
        finally:
            _mlp.set_gemm_backend(previous)
    for a, b in fits.values():
        assert a.to_bytes() == b.to_bytes()
    np.testing.assert_allclose(fits["own"][0]._weights, fits["blas"][0]._weights, rtol=1e-4, atol=1e-5)


def test_backend_hook_rejects_unknown_names():
    with pytest.raises(ValueError, match="own"):
        _mlp.set_gemm_backend("mkl")


def _run(code, tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    import fasttag
    env["PYTHONPATH"] = str(Path(fasttag.__file__).resolve().parents[1]) + os.pathsep + root
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("how", ["not a capsule", "no sgemm", "wrong signature"])
def test_without_scipys_blas_the_own_kernel_trains(tmp_path, how):
    """fasttag's core does not build against scipy: when scipy's BLAS
    capsules are missing or not the expected gemm, the own kernel runs and
    trains the same network as in-process within float32 rounding."""
    setup = {"not a capsule": "from scipy.linalg import cython_blas as cb; cb.__pyx_capi__['dgemm'] = 1",
             "no sgemm": "from scipy.linalg import cython_blas as cb; cb.__pyx_capi__.pop('sgemm')",
             "wrong signature": "from scipy.linalg import cython_blas as cb; "
                                "cb.__pyx_capi__['sgemm'] = cb.__pyx_capi__['dgemm']"}[how]
    code = f"""import numpy as np, warnings
from fasttag.linear import _mlp
from fasttag.linear import MLPClassifier
{setup}
X = np.random.default_rng(0).normal(size=(30, 5))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    est = MLPClassifier(hidden_layer_sizes=(6,), max_iter=3, batch_size=7, random_state=0).fit(X, np.arange(30) % 3)
print(_mlp.gemm_backend())
print(repr(est._weights.tolist()))
"""
    result = _run(code, tmp_path)
    assert result.returncode == 0, result.stderr
    backend, weights = result.stdout.splitlines()
    assert backend == "own"
    X = np.random.default_rng(0).normal(size=(30, 5))
    here = _fit(MLPClassifier, X, np.arange(30) % 3, hidden_layer_sizes=(6,), max_iter=3, batch_size=7,
                random_state=0)
    np.testing.assert_allclose(np.array(eval(weights)), here._weights, rtol=1e-4, atol=1e-6)


def test_blas_calls_in_one_thread_blocks_agree():
    """Products split into blocks of rows small enough for one BLAS thread
    (when the environment leaves OpenBLAS several) train the same network
    as whole products, up to float32 rounding; with enough rows that the
    split happens (batches of 300 rows x 64 x 100)."""
    if "blas" not in BACKENDS:
        pytest.skip("scipy's BLAS is not available")
    rng = np.random.default_rng(9)
    X = rng.normal(size=(600, 64))
    y = rng.integers(0, 4, 600)
    kw = dict(hidden_layer_sizes=(100,), batch_size=300, max_iter=2, random_state=0)
    previous = _mlp.set_gemm_backend("blas")
    fits = []
    try:
        for blocks in (True, False):
            before = _mlp._set_row_blocks(blocks)
            try:
                fits.append(_fit(MLPClassifier, X, y, **kw))
            finally:
                _mlp._set_row_blocks(before)
    finally:
        _mlp.set_gemm_backend(previous)
    np.testing.assert_allclose(fits[0]._weights, fits[1]._weights, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(fits[0].loss_curve_, fits[1].loss_curve_, rtol=1e-5)
