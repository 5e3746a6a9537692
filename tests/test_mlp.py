"""The multi-layer perceptron: gradients against finite differences and a
numpy forward pass, training steps against slow references, scikit-learn's
check_estimator, the model file, determinism, sparse inputs, early stopping."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import fasttag
from fasttag.errors import ModelFormatError
from fasttag.linear import MLPClassifier, MLPRegressor
from fasttag.linear._compat import check_random_state

ACTIVATIONS = ["identity", "logistic", "tanh", "relu"]


def _act(name, z):
    return {"identity": z, "logistic": 1 / (1 + np.exp(-z)), "tanh": np.tanh(z),
            "relu": np.maximum(z, 0)}[name]


def reference_objective(est, X, y, coefs, intercepts):
    """The objective by the definition, in numpy."""
    a = X
    for layer, (W, b) in enumerate(zip(coefs, intercepts)):
        a = a @ W + b
        if layer < len(coefs) - 1:
            a = _act(est.activation, a)
    if isinstance(est, MLPClassifier):
        z = a - a.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        data = -np.mean(logp[np.arange(len(y)), np.searchsorted(est.classes_, y)])
    else:
        data = 0.5 * np.mean((a[:, 0] - y) ** 2)
    return data + 0.5 * est.alpha * sum(float(np.sum(W * W)) for W in coefs)


def _problem(kind, seed, n=12, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.3] = 0.0
    if kind == "regression":
        return X, rng.normal(size=n)
    k = 2 if kind == "binary" else 4
    return X, np.arange(n) % k


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression"])
def test_gradient_matches_finite_differences(activation, kind):
    for seed in range(3):
        X, y = _problem(kind, seed)
        cls = MLPRegressor if kind == "regression" else MLPClassifier
        est = cls(hidden_layer_sizes=(4, 3), activation=activation, alpha=0.3, max_iter=1,
                  random_state=seed, solver="sgd")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(sp.csr_matrix(X) if seed == 1 else X, y)
        w = np.random.default_rng(seed + 10).normal(size=est._weights.shape)
        Xin = sp.csr_matrix(X) if seed == 1 else X      # the embedding-bag pass, else the batched dense one
        loss, grad = est._objective_gradient(Xin, y, w)
        est._weights = w
        assert loss == pytest.approx(reference_objective(est, X, y, est.coefs_, est.intercepts_), rel=1e-10)
        eps = 1e-6
        numeric = np.empty_like(w)
        for i in range(len(w)):
            e = np.zeros_like(w)
            e[i] = eps
            numeric[i] = (est._objective_gradient(Xin, y, w + e)[0]
                          - est._objective_gradient(Xin, y, w - e)[0]) / (2 * eps)
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


def _initial(est, n_columns, n_outputs):
    est._sizes = [n_columns] + list(est.hidden_layer_sizes) + [n_outputs]
    return est._init_weights(check_random_state(est.random_state))


def test_plain_sgd_with_averaging_after_t0_matches_a_slow_reference():
    """alpha=0, no momentum: each mini-batch step is w -= lr * grad on the
    batch (the rows a batch does not touch have no gradient), and the model
    predicts with the mean of the iterates after t0 steps; W0's sums are
    kept lazily, which this checks on sparse samples touching few columns."""
    rng = np.random.default_rng(0)
    n, d = 15, 8
    X = np.zeros((n, d))
    for i in range(n):
        X[i, rng.choice(d, 2, replace=False)] = rng.normal(size=2)
    y = rng.integers(0, 3, n)
    lr, batch, epochs, t0 = 0.5, 2, 3, 4
    est = MLPClassifier(hidden_layer_sizes=(3,), activation="tanh", solver="sgd", momentum=0.0, alpha=0.0,
                        learning_rate_init=lr, batch_size=batch, shuffle=False, max_iter=epochs,
                        average=t0, random_state=3, tol=0.0, n_iter_no_change=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(sp.csr_matrix(X), y)
    w = _initial(MLPClassifier(hidden_layer_sizes=(3,), activation="tanh", random_state=3), d, 3)
    iterates = []
    for _ in range(epochs):
        for start in range(0, n, batch):
            sl = slice(start, start + batch)
            _, g = est._objective_gradient(X[sl], y[sl], w)
            w = w - lr * g
            iterates.append(w)
    np.testing.assert_allclose(est._weights, np.mean(iterates[t0:], axis=0), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dense", [True, False])
def test_adam_and_momentum_steps_match_their_formulas(dense):
    """On sparse input the step is float64 throughout; on dense input the
    gradient comes from float32 products (the step itself is float64)."""
    X, y = _problem("multiclass", 4)
    tol = dict(rtol=1e-6, atol=1e-9) if dense else dict(rtol=1e-12)
    Xin = X if dense else sp.csr_matrix(X)
    common = dict(hidden_layer_sizes=(5,), activation="logistic", alpha=0.1, batch_size=len(y),
                  shuffle=False, max_iter=1, random_state=1)
    w0 = _initial(MLPClassifier(**common), X.shape[1], 4)
    _, g = MLPClassifier(**common).fit(X, y)._objective_gradient(X, y, w0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        adam = MLPClassifier(solver="adam", learning_rate_init=0.01, **common).fit(Xin, y)
        nesterov = MLPClassifier(solver="sgd", learning_rate_init=0.1, momentum=0.9, **common).fit(Xin, y)
    m, v = 0.1 * g, 0.001 * g * g
    lr_t = 0.01 * np.sqrt(1 - 0.999) / (1 - 0.9)
    np.testing.assert_allclose(adam._weights, w0 - lr_t * m / (np.sqrt(v) + 1e-8), **tol)
    vel = -0.1 * g
    np.testing.assert_allclose(nesterov._weights, w0 + 0.9 * vel - 0.1 * g, **tol)


@pytest.mark.parametrize("dense", [True, False])
def test_loss_curve_is_the_exact_objective_and_training_lowers_it(dense):
    """Exact on sparse input; on dense input up to the float32 rounding of
    the batched products (the losses are summed in float64)."""
    X, _ = _problem("multiclass", 5, n=60)
    y = np.argmax(X[:, :4], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = MLPClassifier(hidden_layer_sizes=(8,), max_iter=30, random_state=0, learning_rate_init=0.01,
                            batch_size=10).fit(X if dense else sp.csr_matrix(X), y)
    assert len(est.loss_curve_) == est.n_iter_ == 30
    assert est.loss_curve_[-1] == pytest.approx(
        reference_objective(est, X, y, est.coefs_, est.intercepts_), rel=1e-5 if dense else 1e-10)
    assert est.loss_curve_[-1] < 0.5 * est.loss_curve_[0]
    assert est.best_loss_ == min(est.loss_curve_) and est.validation_scores_ is None


@pytest.mark.parametrize("cls", [MLPClassifier, MLPRegressor])
def test_check_estimator(cls):
    from sklearn.utils.estimator_checks import check_estimator
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(cls(hidden_layer_sizes=(20,), max_iter=150), on_fail=None)
    failed = [(r["check_name"], repr(r["exception"])) for r in results if r["status"] == "failed"]
    assert not failed
    assert sum(r["status"] == "passed" for r in results) >= 45


def test_deterministic_for_a_random_state_and_sparse_equals_dense():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 6))                  # no zeros: the CSR stores every value
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    kw = dict(hidden_layer_sizes=(7, 5), max_iter=5, batch_size=8, solver="sgd", average=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = MLPClassifier(random_state=7, **kw).fit(X, y)
        b = MLPClassifier(random_state=7, **kw).fit(X, y)
        c = MLPClassifier(random_state=8, **kw).fit(X, y)
        s = MLPClassifier(random_state=7, **kw).fit(sp.csr_matrix(X), y)
    assert a.to_bytes() == b.to_bytes()
    assert not np.array_equal(a._weights, c._weights)
    np.testing.assert_array_equal(a._weights, s._weights)
    np.testing.assert_array_equal(a.predict_proba(X), s.predict_proba(sp.csc_matrix(X)))


def test_feature_strings_embedding_bag():
    """Tokens described by feature strings: the first layer sums the rows of
    the active features; unknown features are dropped at prediction."""
    words = ["the", "a", "dog", "cat", "runs", "sleeps", "big", "small"]
    tags = ["DET", "DET", "NOUN", "NOUN", "VERB", "VERB", "ADJ", "ADJ"]
    X = [[f"w={w}", f"s1={w[-1]}", "bias"] for w in words] * 5
    y = tags * 5
    est = MLPClassifier(hidden_layer_sizes=(16,), max_iter=200, learning_rate_init=0.05, random_state=0).fit(X, y)
    assert est.score(X, y) == 1.0
    assert est.coefs_[0].shape == (len(est.feature_keys_), 16)
    assert list(est.predict([[f"w={w}", "never-seen"] for w in words])) == tags
    dicts = [{"w": w, "len": float(len(w))} for w in words]
    assert MLPRegressor(hidden_layer_sizes=(4,), max_iter=5, random_state=0).fit(dicts, np.arange(8.0)) \
        .predict(dicts).shape == (8,)


def test_early_stopping_keeps_the_best_validation_epoch():
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    X = X[:600] / 16.0
    y = y[:600]
    est = MLPClassifier(hidden_layer_sizes=(32,), early_stopping=True, n_iter_no_change=3, max_iter=200,
                        random_state=0, learning_rate_init=0.01).fit(X, y)
    assert est.n_iter_ < 200 and len(est.validation_scores_) == len(est.loss_curve_) == est.n_iter_
    assert est.best_validation_score_ == max(est.validation_scores_) > 0.85
    assert est.best_loss_ is None
    # the kept weights are those of the best epoch, not the last one
    assert est.validation_scores_.index(max(est.validation_scores_)) < est.n_iter_ - 1 or est.n_iter_ == 200


def test_model_file_round_trip_and_corrupt_files(tmp_path):
    X, y = _problem("multiclass", 2, n=30)
    labels = np.array(["a", "b", "c", "d"])[y]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = MLPClassifier(hidden_layer_sizes=(6, 4), activation="tanh", max_iter=5, random_state=0,
                            early_stopping=True).fit(X, labels)
    path = tmp_path / "mlp.ftm"
    est.save(path)
    back = fasttag.load(path)
    assert type(back) is MLPClassifier and back.get_params() == est.get_params()
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))
    assert back.loss_curve_ == est.loss_curve_ and back.validation_scores_ == est.validation_scores_
    assert back.to_bytes() == est.to_bytes()
    reg = MLPRegressor(hidden_layer_sizes=(3,), max_iter=2, random_state=0).fit(X, X[:, 0])
    np.testing.assert_array_equal(fasttag.loads(reg.to_bytes()).predict(X), reg.predict(X))

    from fasttag.model import modelfile
    header, arrays = est._parts()

    def corrupt(h=None, a=None):
        hh, aa = dict(header), dict(arrays)
        hh.update(h or {})
        aa.update(a or {})
        with pytest.raises(ModelFormatError) as info:
            fasttag.loads(modelfile.dumps(hh, aa))
        assert "\n" not in str(info.value)
        return str(info.value)

    assert "sizes" in corrupt({"sizes": [5, 6, 5, 4]})
    assert "weights" in corrupt(a={"weights": arrays["weights"][:-1]})
    bad = arrays["weights"].copy()
    bad[3] = np.nan
    assert "NaN" in corrupt(a={"weights": bad})
    assert "classes" in corrupt({"classes": ["a", "b", "c"]})
    assert "unknown" in corrupt({"extra": 1})
    assert "hidden_layer_sizes" in corrupt({"params": {**header["params"], "hidden_layer_sizes": [0]}})
    assert "curves" in corrupt({"validation_scores": None})


def test_bad_parameters_are_one_line_errors():
    X, y = _problem("binary", 0)
    for params in ({"hidden_layer_sizes": (0,)}, {"hidden_layer_sizes": ()}, {"activation": "softsign"},
                   {"solver": "lbfgs"}, {"momentum": 1.5}, {"validation_fraction": 1.0},
                   {"batch_size": 0}, {"average": -1}, {"learning_rate_init": 0.0}):
        with pytest.raises(ValueError) as info:
            MLPClassifier(**params).fit(X, y)
        assert "\n" not in str(info.value) and next(iter(params)) in str(info.value)
    with pytest.raises(ValueError, match="diverged"):
        MLPRegressor(solver="sgd", learning_rate_init=1e3, max_iter=50, hidden_layer_sizes=(3,),
                     random_state=0).fit(X * 1e3, y * 1e3)


def test_mutated_model_files_load_cleanly_or_not_at_all():
    """Model files may come from anyone: every mutation of a header entry
    or an array either loads into a model that predicts, or is a
    ModelFormatError (never another error, never a crash)."""
    from fasttag.model import modelfile
    rng = np.random.default_rng(0)
    X, y = _problem("multiclass", 3, n=20)
    feats = [[f"f{j}={round(v)}" for j, v in enumerate(row)] for row in X]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = [MLPClassifier(hidden_layer_sizes=(4, 3), max_iter=2, random_state=0).fit(X, y),
                  MLPClassifier(hidden_layer_sizes=(3,), max_iter=2, random_state=0, n_features=64).fit(feats, y),
                  MLPRegressor(hidden_layer_sizes=(2,), max_iter=2, random_state=0, early_stopping=True).fit(X, X[:, 0])]
    pool = [-1, 0, 1, 2, 3, 4, 5, 2 ** 40, 1.5, "x", None, [], [3], [5, 4, 4], [20, 3, 4], {}, True, "numeric",
            "features", float("inf")]
    loaded = 0
    for case in range(150):
        est = models[case % 3]
        inputs = feats if case % 3 == 1 else X
        header, arrays = est._parts()
        header = {k: (dict(v) if isinstance(v, dict) else v) for k, v in header.items()}
        arrays = dict(arrays)
        if rng.random() < 0.6:
            target = header
            if rng.random() < 0.3:
                target = header["params"]
            key = list(target)[rng.integers(len(target))]
            target[key] = pool[rng.integers(len(pool))]
        else:
            name = list(arrays)[rng.integers(len(arrays))]
            arr = arrays[name].copy()
            choice = rng.integers(4)
            if choice == 0:
                arr = arr[: rng.integers(len(arr) + 1)]
            elif choice == 1:
                arr = arr.astype(np.float32 if arr.dtype == np.float64 else np.int64)
            elif choice == 2 and len(arr):
                arr[rng.integers(len(arr))] = np.array(np.nan if arr.dtype.kind == "f" else 2 ** 63).astype(arr.dtype)
            elif len(arr):
                arr = arr[::-1].copy()
            arrays[name] = arr
        try:
            data = modelfile.dumps(header, arrays)
        except (ValueError, TypeError):
            continue
        try:
            back = fasttag.loads(data)
        except ModelFormatError as exc:
            assert "\n" not in str(exc)
            continue
        back.predict(inputs)
        loaded += 1
    assert loaded > 10
