"""fasttag.linear: the algorithms against their definitions."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasttag.errors import ModelFormatError
from fasttag.linear import (AveragedPerceptron, Neuron, PassiveAggressiveClassifier, Perceptron,
                            SGDClassifier, SGDRegressor)
from fasttag.linear.losses import LOSSES, dloss, loss
from fasttag.linear._weights import mira_tau


# ---------------------------------------------------------------- averaged perceptron

def naive_averaged_perceptron(X, y, n_classes, epochs, fit_intercept):
    """The notes' algorithm, literally: one vector per class; on a mistake
    w_gold += x, w_pred -= x; a <- a + w after every example; a / T."""
    if fit_intercept:
        X = np.hstack([X, np.ones((len(X), 1))])
    w = np.zeros((n_classes, X.shape[1]))
    a = np.zeros_like(w)
    T = 0
    for _ in range(epochs):
        for x, gold in zip(X, y):
            pred = int(np.argmax(w @ x))          # ties: lowest index
            if pred != gold:
                w[gold] += x
                w[pred] -= x
            a += w
            T += 1
    return a / T


def _check_equal_to_naive(X, y, K, epochs, fit_intercept):
    est = AveragedPerceptron(max_iter=epochs, tol=None, shuffle=False, fit_intercept=fit_intercept)
    est.fit(X, y)
    ref = naive_averaged_perceptron(X, y, K, epochs, fit_intercept)
    d = X.shape[1]
    if K == 2:   # binary: one vector, (w_1 - w_0) / 2 of the two-vector algorithm
        ref = (ref[1:2] - ref[0:1]) / 2
    scale = max(np.abs(ref).max(), 1.0)
    np.testing.assert_allclose(est.coef_, ref[:, :d], rtol=1e-9, atol=1e-9 * scale)
    if fit_intercept:
        np.testing.assert_allclose(est.intercept_, ref[:, d], rtol=1e-9, atol=1e-9 * scale)
    else:
        assert np.all(est.intercept_ == 0)
    assert est.n_iter_ == epochs and est.t_ == epochs * len(X)


@st.composite
def labelled_data(draw, min_classes=3):
    K = draw(st.integers(min_classes, 5 if min_classes > 2 else 2))
    n = draw(st.integers(K, 25))
    d = draw(st.integers(1, 6))
    X = np.array(draw(st.lists(st.integers(-3, 3), min_size=n * d, max_size=n * d)),
                 dtype=np.float64).reshape(n, d)
    y = np.array(list(range(K)) + draw(st.lists(st.integers(0, K - 1), min_size=n - K, max_size=n - K)))
    perm = np.array(draw(st.permutations(range(n))))
    return X, y[perm], K


@settings(max_examples=60, deadline=None)
@given(labelled_data(), st.integers(1, 4), st.booleans())
def test_averaged_perceptron_equals_naive_multiclass(data, epochs, fit_intercept):
    X, y, K = data
    _check_equal_to_naive(X, y, K, epochs, fit_intercept)


@settings(max_examples=30, deadline=None)
@given(labelled_data(min_classes=2), st.integers(1, 4), st.booleans())
def test_averaged_perceptron_equals_naive_binary(data, epochs, fit_intercept):
    X, y, K = data
    _check_equal_to_naive(X, y, K, epochs, fit_intercept)


@pytest.mark.parametrize("seed", range(4))
def test_averaged_perceptron_equals_naive_real_valued(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((60, 7))
    y = rng.integers(0, 4, size=60)
    y[:4] = np.arange(4)
    _check_equal_to_naive(X, y, 4, 3, True)


# ---------------------------------------------------------------- Novikoff

@pytest.mark.parametrize("seed", range(5))
def test_perceptron_mistake_bound_on_separable_data(seed):
    rng = np.random.default_rng(seed)
    d = 5
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    X = rng.standard_normal((2000, d))
    margin = X @ u
    keep = np.abs(margin) >= 0.25
    X, margin = X[keep][:400], margin[keep][:400]
    y = (margin > 0).astype(int)
    gamma = np.abs(margin).min()
    R = np.linalg.norm(X, axis=1).max()
    est = Perceptron(fit_intercept=False, max_iter=10000, tol=0.0, n_iter_no_change=10000,
                     shuffle=True, random_state=seed).fit(X, y)
    bound = R ** 2 / gamma ** 2
    assert est.n_mistakes_ <= bound
    assert est.mistakes_curve_[-1] == 0          # stopped on an error-free epoch
    assert est.n_iter_ < 10000
    assert est.score(X, y) == 1.0
    assert est.n_mistakes_ > 0


def test_perceptron_learning_rate_scales_weights_only():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 4))
    y = rng.integers(0, 3, 80)
    a = Perceptron(eta0=1.0, tol=None, max_iter=3, shuffle=False).fit(X, y)
    b = Perceptron(eta0=0.1, tol=None, max_iter=3, shuffle=False).fit(X, y)
    np.testing.assert_allclose(b.coef_, 0.1 * a.coef_, rtol=1e-12)
    c = Perceptron(init="random", random_state=3, tol=None, max_iter=3).fit(X, y)
    d = Perceptron(init="random", random_state=3, tol=None, max_iter=3).fit(X, y)
    np.testing.assert_array_equal(c.coef_, d.coef_)
    assert not np.array_equal(c.coef_, a.coef_)


# ---------------------------------------------------------------- PA / MIRA

@pytest.mark.parametrize("seed", range(6))
def test_mira_step_solves_the_quadratic_programme(seed):
    scipy_opt = pytest.importorskip("scipy.optimize")
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 6))
    s = rng.normal(0, 1.0, K)
    g = int(rng.integers(0, K))
    A = float(rng.uniform(0.3, 4.0))
    C = float(rng.choice([0.05, 0.5, 10.0]))
    tau = mira_tau(s, g, A, C)
    assert abs(tau.sum()) < 1e-12
    assert tau[g] <= C + 1e-12 and np.all(np.delete(tau, g) <= 1e-12)

    def f(t):   # the primal with the optimal slack for the changes t_r x
        worst = max(1 - (s[g] + A * t[g]) + (s[r] + A * t[r]) for r in range(K) if r != g)
        return 0.5 * A * np.sum(t ** 2) + C * max(0.0, worst)

    best = f(tau)
    for _ in range(300):   # convex: no nearby point does better
        assert best <= f(tau + rng.normal(0, 0.05, K)) + 1e-12
    cons = [{"type": "ineq", "fun": (lambda z, r=r: (s[g] + A * z[g]) - (s[r] + A * z[r]) - 1 + z[K])}
            for r in range(K) if r != g]
    cons.append({"type": "ineq", "fun": lambda z: z[K]})
    res = scipy_opt.minimize(lambda z: 0.5 * A * np.sum(z[:K] ** 2) + C * z[K], np.zeros(K + 1),
                             constraints=cons, method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
    assert best <= f(res.x[:K]) + 1e-9
    if res.success:
        np.testing.assert_allclose(tau, res.x[:K], atol=1e-5)


def test_mira_no_update_when_margin_met():
    assert np.all(mira_tau(np.array([3.0, 1.0, 0.5]), 0, 1.0, 1.0) == 0)


@pytest.mark.parametrize("variant", ["PA", "PA-I", "PA-II", "MIRA"])
def test_pa_variants_separate_separable_data(variant):
    rng = np.random.default_rng(0)
    centers = np.array([[4, 0], [-4, 0], [0, 4.0]])
    y = rng.integers(0, 3, 300)
    X = centers[y] + rng.normal(0, 0.5, (300, 2))
    est = PassiveAggressiveClassifier(variant=variant, C=1.0, random_state=0).fit(X, y)
    assert est.score(X, y) == 1.0
    Xb, yb = X[y < 2], y[y < 2]
    assert PassiveAggressiveClassifier(variant=variant, random_state=0).fit(Xb, yb).score(Xb, yb) == 1.0


def test_pa1_binary_step_is_capped_by_C():
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([1, 0])
    est = PassiveAggressiveClassifier(variant="PA-I", C=0.1, fit_intercept=False, max_iter=1, tol=None,
                                      shuffle=False).fit(X, y)
    np.testing.assert_allclose(est.coef_, [[0.1, -0.1]])
    est = PassiveAggressiveClassifier(variant="PA", fit_intercept=False, max_iter=1, tol=None,
                                      shuffle=False).fit(X, y)
    np.testing.assert_allclose(est.coef_, [[1.0, -1.0]])       # loss 1 / ||x||^2 = 1
    est = PassiveAggressiveClassifier(variant="PA-II", C=0.5, fit_intercept=False, max_iter=1, tol=None,
                                      shuffle=False).fit(X, y)
    np.testing.assert_allclose(est.coef_, [[0.5, -0.5]])       # 1 / (1 + 1/(2C))


# ---------------------------------------------------------------- losses and SGD

CLASSIF = {"hinge", "log_loss", "modified_huber", "perceptron"}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_gradient_matches_finite_differences(name):
    rng = np.random.default_rng(0)
    p = rng.uniform(-3, 3, 400)
    y = rng.choice([-1.0, 1.0], 400) if name in CLASSIF else rng.uniform(-3, 3, 400)
    eps = 0.1
    z, r = p * y, p - y
    kinks = {"hinge": [np.abs(z - 1)], "perceptron": [np.abs(z)],
             "modified_huber": [np.abs(z - 1), np.abs(z + 1)],
             "huber": [np.abs(np.abs(r) - eps)], "epsilon_insensitive": [np.abs(np.abs(r) - eps)],
             "squared_epsilon_insensitive": [np.abs(np.abs(r) - eps)]}.get(name, [])
    ok = np.all([k > 1e-3 for k in kinks], axis=0) if kinks else np.ones(400, bool)
    p, y = p[ok], y[ok]
    h = 1e-6
    fd = (loss(name, p + h, y, eps) - loss(name, p - h, y, eps)) / (2 * h)
    np.testing.assert_allclose(dloss(name, p, y, eps), fd, atol=1e-5)
    assert np.any(dloss(name, p, y, eps) != 0)


def reference_dloss(name, p, y):
    """scikit-learn's loss derivatives (sgd_fast.pyx), literally: an update
    at a hinge's threshold too, so the perceptron leaves zero weights."""
    z = p * y
    if name == "hinge":
        return -y if z <= 1.0 else 0.0
    if name == "perceptron":
        return -y if z <= 0.0 else 0.0
    if name == "log_loss":
        return -y / (np.exp(z) + 1.0)
    if name == "modified_huber":
        return 0.0 if z >= 1.0 else -2.0 * (1.0 - z) * y if z >= -1.0 else -4.0 * y
    assert name == "squared_error"
    return p - y


def naive_sgd(X, targets, name, lr, eta0, power_t, alpha, epochs, avg_start, opt_init=0.0):
    """scikit-learn's plain SGD, literally, on one binary/regression problem."""
    w, b, t = np.zeros(X.shape[1]), 0.0, 1
    S, Sb, na = np.zeros_like(w), 0.0, 0
    for _ in range(epochs):
        for x, yv in zip(X, targets):
            if lr == "constant":
                eta = eta0
            elif lr == "invscaling":
                eta = eta0 / t ** power_t
            else:
                eta = 1.0 / (alpha * (opt_init + t - 1))
            upd = -eta * reference_dloss(name, w @ x + b, yv)
            w = w * max(0.0, 1 - eta * alpha) + upd * x
            b += upd
            if avg_start and t >= avg_start:
                S, Sb, na = S + w, Sb + b, na + 1
            t += 1
    return (S / na, Sb / na) if na else (w, b)


@pytest.mark.parametrize("name,lr,average", [("hinge", "constant", 0), ("perceptron", "constant", 0),
                                              ("log_loss", "invscaling", 5),
                                              ("modified_huber", "constant", 1),
                                              ("squared_error", "invscaling", 7)])
def test_sgd_classifier_equals_naive_sgd(name, lr, average):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 5))
    y = rng.integers(0, 3, 40)
    est = SGDClassifier(loss=name, learning_rate=lr, eta0=0.05, power_t=0.5, alpha=0.01, average=average,
                        max_iter=3, tol=None, shuffle=False).fit(X, y)
    for k in range(3):
        w, b = naive_sgd(X, np.where(y == k, 1.0, -1.0), name, lr, 0.05, 0.5, 0.01, 3, average)
        np.testing.assert_allclose(est.coef_[k], w, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(est.intercept_[k], b, rtol=1e-9, atol=1e-12)


def test_sgd_wscale_rescaling_keeps_weights_exact():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((30, 4))
    y = X @ np.array([1.0, -2, 0.5, 3])
    # eta * alpha = 0.5: the scale falls below the 1e-6 threshold every 20 steps
    est = SGDRegressor(learning_rate="constant", eta0=0.05, alpha=10.0, average=3, max_iter=4, tol=None,
                       shuffle=False).fit(X, y)
    w, b = naive_sgd(X, y, "squared_error", "constant", 0.05, 0.25, 10.0, 4, 3)
    assert est._state["wscale"][0] > 1e-6 and est.t_ == 121
    np.testing.assert_allclose(est.coef_, w, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(est.intercept_[0], b, rtol=1e-8, atol=1e-12)


def test_sgd_optimal_schedule_equals_naive():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((50, 3))
    y = (X[:, 0] > 0).astype(int)
    est = SGDClassifier(alpha=0.01, max_iter=2, tol=None, shuffle=False).fit(X, y)
    typw = np.sqrt(1 / np.sqrt(0.01))
    opt_init = 1 / (typw / max(1.0, float(dloss("hinge", -typw, 1.0)[0])) * 0.01)
    w, b = naive_sgd(X, np.where(y == 1, 1.0, -1.0), "hinge", "optimal", 0, 0, 0.01, 2, 0, opt_init)
    np.testing.assert_allclose(est.coef_[0], w, rtol=1e-9)


def toy_problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 100))
    return X, X @ np.ones(100)


def test_sgd_regressor_solves_the_toy_problem():
    X, y = toy_problem()
    est = SGDRegressor(penalty=None, learning_rate="constant", eta0=0.005, fit_intercept=False, tol=None,
                       max_iter=30, random_state=0).fit(X, y)
    assert est.loss_curve_[-1] < 1e-6
    assert np.linalg.norm(est.coef_ - 1.0) < 1e-3
    one = SGDRegressor(penalty=None, learning_rate="constant", eta0=0.005, fit_intercept=False, tol=None,
                       max_iter=1, random_state=0).fit(X, y)
    assert 0.5 * np.mean((X @ one.coef_ - y) ** 2) == pytest.approx(one.loss_curve_[0], rel=1e-9)
    assert est.loss_curve_[0] > 1e3 * est.loss_curve_[5] > 0     # linear convergence


@pytest.mark.parametrize("alpha", [0.1, 1.0])
def test_sgd_regressor_shrinks_like_ridge(alpha):
    X, y = toy_problem()
    n, p = X.shape
    ridge = np.linalg.solve(X.T @ X / n + alpha * np.eye(p), X.T @ y / n)
    est = SGDRegressor(alpha=alpha, learning_rate="constant", eta0=0.0005, average=5 * n,
                       fit_intercept=False, tol=None, max_iter=40, random_state=0).fit(X, y)
    w = est.coef_
    assert np.linalg.norm(w - ridge) / np.linalg.norm(ridge) < 2e-2
    assert np.linalg.norm(w) < 0.95 * np.linalg.norm(np.ones(p))        # shrunk
    assert abs(np.linalg.norm(w) / np.linalg.norm(ridge) - 1) < 1e-2
    obj_ridge = 0.5 * np.mean((X @ ridge - y) ** 2) + alpha / 2 * ridge @ ridge
    assert obj_ridge <= est.loss_curve_[-1] < obj_ridge * 1.001


def test_sgd_classifier_probabilities():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    est = SGDClassifier(loss="log_loss", random_state=0).fit(X, y)
    P = est.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.mean(est.classes_[P.argmax(axis=1)] == est.predict(X)) > 0.95
    assert not hasattr(SGDClassifier(loss="hinge").fit(X, y), "predict_proba")


# ---------------------------------------------------------------- partial_fit, inputs

ALL_CLASSIFIERS = [
    lambda: Perceptron(shuffle=False, tol=None, max_iter=1),
    lambda: AveragedPerceptron(shuffle=False, tol=None, max_iter=1),
    lambda: PassiveAggressiveClassifier(variant="MIRA", average=True, shuffle=False, tol=None, max_iter=1),
    lambda: PassiveAggressiveClassifier(variant="PA-II", shuffle=False, tol=None, max_iter=1),
    lambda: SGDClassifier(loss="log_loss", average=10, shuffle=False, tol=None, max_iter=1),
]


@pytest.mark.parametrize("make", ALL_CLASSIFIERS)
@pytest.mark.parametrize("n_classes", [2, 4])
def test_partial_fit_over_batches_equals_fit(make, n_classes):
    rng = np.random.default_rng(n_classes)
    X = rng.standard_normal((90, 6))
    y = rng.integers(0, n_classes, 90)
    full = make().fit(X, y)
    part = make()
    for lo in range(0, 90, 30):
        part.partial_fit(X[lo:lo + 30], y[lo:lo + 30], classes=np.arange(n_classes))
    np.testing.assert_allclose(part.coef_, full.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(part.intercept_, full.intercept_, rtol=1e-12, atol=1e-12)
    assert part.n_iter_ == 3


def test_partial_fit_regressor_equals_fit():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 6))
    y = X @ rng.standard_normal(6)
    full = SGDRegressor(shuffle=False, tol=None, max_iter=1, average=True).fit(X, y)
    part = SGDRegressor(shuffle=False, tol=None, max_iter=1, average=True)
    for lo in range(0, 90, 30):
        part.partial_fit(X[lo:lo + 30], y[lo:lo + 30])
    np.testing.assert_allclose(part.coef_, full.coef_, rtol=1e-12)


def random_feature_lists(rng, n, vocab):
    return [list(rng.choice(vocab, size=rng.integers(0, 6), replace=False)) for _ in range(n)]


@pytest.mark.parametrize("make", [ALL_CLASSIFIERS[1], ALL_CLASSIFIERS[2], ALL_CLASSIFIERS[4]])
def test_feature_strings_equal_one_hot_arrays(make):
    sp = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(0)
    vocab = np.array([f"f{i}" for i in range(30)])
    F = random_feature_lists(rng, 120, vocab)
    y = rng.integers(0, 3, 120)
    col = {f: i for i, f in enumerate(vocab)}
    onehot = np.zeros((120, 30))
    for i, feats in enumerate(F):
        onehot[i, [col[f] for f in feats]] = 1.0
    a = make().fit(F, y)
    b = make().fit(onehot, y)
    c = make().fit(sp.csr_matrix(onehot), y)
    Ft = random_feature_lists(rng, 50, np.append(vocab, ["unseen1", "unseen2"]))
    onehot_t = np.zeros((50, 30))
    for i, feats in enumerate(Ft):
        onehot_t[i, [col[f] for f in feats if f in col]] = 1.0
    np.testing.assert_allclose(a.decision_function(Ft), b.decision_function(onehot_t), atol=1e-12)
    np.testing.assert_allclose(c.decision_function(sp.csr_matrix(onehot_t)), b.decision_function(onehot_t),
                               atol=1e-12)
    seen = sorted({f for feats in F for f in feats})
    for f in seen[:10]:
        assert a.get_weight(f, label=1) == pytest.approx(b.coef_[1, col[f]], abs=1e-12)
    assert a.get_weight("never-seen", label=0) == 0.0
    assert a.coef_.shape == (3, len(seen)) and len(a.feature_keys_) == len(seen)
    # dicts with value 1 are the same input
    d = make().fit([{f: 1 for f in feats} for feats in F], y)
    np.testing.assert_allclose(d.coef_, a.coef_)


def test_partial_fit_with_new_feature_strings_equals_fit():
    rng = np.random.default_rng(1)
    vocab = np.array([f"f{i}" for i in range(40)])
    F = random_feature_lists(rng, 150, vocab)
    y = rng.integers(0, 3, 150)
    for make in (ALL_CLASSIFIERS[1], ALL_CLASSIFIERS[4]):
        full = make().fit(F, y)
        part = make()
        for lo in range(0, 150, 50):
            part.partial_fit(F[lo:lo + 50], y[lo:lo + 50], classes=[0, 1, 2])
        np.testing.assert_array_equal(part.feature_keys_, full.feature_keys_)
        np.testing.assert_allclose(part.coef_, full.coef_, rtol=1e-12, atol=1e-12)


def test_dict_values_and_hash_space():
    X = [{"len": 3.0, "w": "the"}, {"len": 5.0, "w": "house"}, {"len": 1.0, "w": "a"}, {"len": 6, "w": "garden"}]
    y = [0, 1, 0, 1]
    est = Perceptron(random_state=0).fit(X, y)
    assert est.score(X, y) == 1.0
    assert est.get_weight("w=house") != 0
    small = Perceptron(n_features=4, random_state=0).fit(X, y)
    assert np.all(small.feature_keys_ < 4)
    with pytest.raises(ValueError):
        est.predict(np.zeros((2, 3)))


def test_get_weight_refuses_columns_and_labels_it_does_not_have():
    """A negative column used to wrap around to the last column's weight."""
    X = np.array([[1.0, 0, 2], [0, 1, 0], [2, 0, 1], [0, 2, 0]])
    est = Perceptron(random_state=0).fit(X, [0, 1, 2, 1])
    assert est.get_weight(2, label=1) == est.coef_[1, 2]
    for col in (-1, 3):
        with pytest.raises(ValueError, match="outside"):
            est.get_weight(col, label=1)
    with pytest.raises(ValueError, match="classes_"):
        est.get_weight(0, label=7)


# ---------------------------------------------------------------- persistence

@pytest.mark.parametrize("make", [lambda: AveragedPerceptron(random_state=0),
                                  lambda: PassiveAggressiveClassifier(variant="MIRA", random_state=0),
                                  lambda: SGDClassifier(loss="log_loss", random_state=0),
                                  lambda: SGDRegressor(random_state=0), lambda: Neuron("tanh")])
def test_save_and_load_round_trip(make, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, 60)]
    est = make()
    if not hasattr(est, "predict_proba") and isinstance(est, (SGDRegressor, Neuron)):
        y = X @ np.arange(4.0) / 10
    est.fit(X, y)
    again = type(est).from_bytes(est.to_bytes())
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    est.save(tmp_path / "m.ftm")
    loaded = type(est).load(tmp_path / "m.ftm")
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    assert loaded.get_params() == est.get_params()
    with pytest.raises(ModelFormatError):
        (Perceptron if not isinstance(est, Perceptron) else SGDRegressor).from_bytes(est.to_bytes())


def test_feature_string_model_round_trip():
    F = [["w=a", "p=x"], ["w=b"], ["w=c", "p=x"], ["w=a"]]
    y = ["N", "V", "N", "N"]
    est = AveragedPerceptron(random_state=0).fit(F, y)
    again = AveragedPerceptron.from_bytes(est.to_bytes())
    assert list(again.predict(F)) == list(est.predict(F))
    # training can go on from a loaded model (the state is saved)
    again.partial_fit(F, y)
    assert again.t_ == est.t_ + 4 if hasattr(again, "t_") else True


# ---------------------------------------------------------------- neuron

def test_identity_neuron_is_linear_regression():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 4))
    y = X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 + 0.1 * rng.standard_normal(200)
    est = Neuron("identity", eta0=0.2, tol=1e-8, max_iter=20000, random_state=0).fit(X, y)
    coef, *_ = np.linalg.lstsq(np.hstack([X, np.ones((200, 1))]), y, rcond=None)
    np.testing.assert_allclose(est.coef_, coef[:4], atol=1e-6)
    assert est.intercept_[0] == pytest.approx(coef[4], abs=1e-6)
    assert est.grad_norm_ < 1e-8 and est.n_iter_ < 20000
    assert np.all(np.diff(est.loss_curve_) <= 1e-15)       # GD on a quadratic: monotone


def test_neuron_gd_stops_on_gradient_norm_and_tol_none_runs_max_iter():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((100, 3))
    y = X @ np.array([0.5, 1.0, -1.0])
    a = Neuron(tol=1e-3, max_iter=5000, random_state=0).fit(X, y)
    b = Neuron(tol=1e-5, max_iter=5000, random_state=0).fit(X, y)
    assert a.n_iter_ < b.n_iter_ < 5000 and a.grad_norm_ < 1e-3 and b.grad_norm_ < 1e-5
    assert Neuron(tol=None, max_iter=37, random_state=0).fit(X, y).n_iter_ == 37


@pytest.mark.parametrize("activation", ["logistic", "tanh", "relu", "heaviside"])
@pytest.mark.parametrize("solver", ["gd", "sgd"])
def test_neuron_activations_learn(activation, solver):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((150, 2))
    target = (X @ np.array([2.0, -1.0]) > 0).astype(float)
    est = Neuron(activation, solver=solver, eta0=0.5 if solver == "gd" else 0.05, max_iter=300, tol=None,
                 random_state=0).fit(X, target)
    out = est.predict(X)
    assert np.mean((out > 0.5) == (target > 0.5)) > 0.9
    if activation == "logistic":
        assert np.all((out > 0) & (out < 1))
        assert est.loss_curve_[-1] < est.loss_curve_[0]


def _offset_and_scaled(X):
    """X with columns in other units and far from zero."""
    return X * np.array([1e3, 1e-3, 50.0]) + np.array([5e3, -2.0, 300.0])


@pytest.mark.parametrize("activation", ["identity", "logistic", "tanh"])
def test_neuron_default_steps_do_not_depend_on_the_columns_units(activation):
    """The default (scaled) steps give the same model, as a function of
    the inputs, whatever the columns' units and offsets; constant steps
    diverge on the unscaled columns."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((80, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3
    if activation != "identity":
        y = np.tanh(y) if activation == "tanh" else (y > 0).astype(float)
    U = _offset_and_scaled(X)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Neuron(activation, max_iter=300, random_state=0).fit(X, y)
        b = Neuron(activation, max_iter=300, random_state=0).fit(U, y)
        np.testing.assert_allclose(b.predict(U), a.predict(X), rtol=1e-6, atol=1e-9)
        assert b.loss_curve_ == pytest.approx(a.loss_curve_, rel=1e-6, abs=1e-12)
        constant = Neuron(activation, learning_rate="constant", max_iter=300, random_state=0)
        if activation == "identity":
            with pytest.raises(ValueError, match="Neuron diverged"):
                constant.fit(U, y)
        else:       # the squashing units saturate instead: they stop learning
            constant.fit(U, y)
            assert np.mean((constant.predict(U) - y) ** 2) > 2 * np.mean((b.predict(U) - y) ** 2)


@pytest.mark.parametrize("solver", ["gd", "sgd"])
def test_neuron_without_intercept_default_steps_do_not_depend_on_the_columns_units(solver):
    """Without an intercept to absorb a centring, the columns are only
    divided by their root mean square: units still do not matter."""
    rng = np.random.default_rng(8)
    X = rng.standard_normal((40, 3)) + 1.0
    y = X @ np.array([1.0, -2.0, 0.5])
    kw = dict(solver=solver, fit_intercept=False, max_iter=100 if solver == "gd" else 10, random_state=0,
              shuffle=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Neuron(**kw).fit(X, y)
        b = Neuron(**kw).fit(X * np.array([1e4, 1e-3, 30.0]), y)
    np.testing.assert_allclose(b.coef_ * np.array([1e4, 1e-3, 30.0]), a.coef_, rtol=1e-6)
    assert a.intercept_[0] == b.intercept_[0] == 0.0 and a.score(X, y) > 0.99


@pytest.mark.parametrize("solver", ["gd", "sgd"])
def test_neuron_scaled_steps_never_raise_the_loss(solver):
    """A step (gd) or epoch (sgd) that raises J is taken back with eta0
    halved: even a far too large eta0 trains, with J never rising."""
    rng = np.random.default_rng(5)
    X = _offset_and_scaled(rng.standard_normal((40, 3)))
    y = X @ np.array([1e-3, 500.0, 0.02]) + 3.0
    est = Neuron(solver=solver, eta0=50.0, max_iter=200 if solver == "gd" else 30, tol=None,
                 random_state=0).fit(X, y)
    assert np.all(np.diff(est.loss_curve_) <= 0)
    assert est.score(X, y) > 0.99
    with np.errstate(all="ignore"):     # nor does a fit that ends on a step too large
        for max_iter in (1, 2, 5):
            est = Neuron(solver=solver, eta0=1e6, max_iter=max_iter, tol=None, random_state=0).fit(X, y)
            assert 0.5 * np.mean((est.predict(X) - y) ** 2) <= est.loss_curve_[0]


def test_neuron_scaled_steps_keep_sparse_inputs_sparse_and_equal_to_dense():
    sp = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(6)
    X = rng.standard_normal((60, 5)) * (rng.random((60, 5)) < 0.4) * 30.0 + np.array([0, 0, 0, 0, 100.0])
    y = X @ np.array([0.1, -0.2, 0.3, 0.0, 0.05]) + 1.0
    dense = Neuron(max_iter=200, random_state=0).fit(X, y)
    sparse = Neuron(max_iter=200, random_state=0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.predict(sp.csr_matrix(X)), dense.predict(X), rtol=1e-9, atol=1e-9)


def test_neuron_files_of_the_previous_version_load_with_constant_steps(tmp_path):
    """Files written before ``learning_rate`` existed (fixtures saved by that
    version) predict as they did and load with the constant steps they were
    trained with: refitting with their parameters gives the same model."""
    import json
    from pathlib import Path
    import fasttag
    data = Path(__file__).parent / "data"
    want = json.loads((data / "neuron-v1-predictions.json").read_text())
    rng = np.random.default_rng(7)
    X = np.round(rng.standard_normal((30, 3)), 3)
    y = X @ np.array([1.0, -0.5, 2.0]) + 0.25
    F = [[f"w={i % 5}", f"p={i % 3}"] for i in range(30)]
    t = np.array([float(i % 5 > 2) for i in range(30)])
    for name, inputs, target in (("numeric", X, y), ("features", F, t)):
        old = fasttag.load(data / f"neuron-v1-{name}.ftm")
        assert isinstance(old, Neuron) and old.get_params()["learning_rate"] == "constant"
        assert [float(v).hex() for v in old.predict(inputs)] == want[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            again = Neuron(**old.get_params()).fit(inputs, target)
        assert [float(v).hex() for v in again.predict(inputs)] == want[name]
        # a file written now records the parameter, whichever value it has
        again.set_params(learning_rate="scaled").save(tmp_path / "m.ftm")
        assert fasttag.load(tmp_path / "m.ftm").get_params()["learning_rate"] == "scaled"


# ---------------------------------------------------------------- compiled input paths

def test_hash_feature_lists_matches_the_general_path():
    from fasttag._core.weights import hash_strings
    from fasttag.linear._weights import hash_feature_lists
    from fasttag.linear.inputs import hash_features
    X = [["w=the", "p=t"], ("w=Straße", "s=ße", "w=日本"), [], ["b"]]
    indptr, keys = hash_feature_lists(X)
    np.testing.assert_array_equal(indptr, [0, 2, 5, 5, 6])
    np.testing.assert_array_equal(keys, hash_strings([f for row in X for f in row]))
    # anything else takes the general path, with the same result for dicts of 1s
    assert hash_feature_lists([{"a": 1}]) is None
    assert hash_feature_lists([["a", 3]]) is None
    assert hash_feature_lists(tuple(X)) is None
    a = hash_features(X, 1000)
    b = hash_features([{f: 1.0 for f in row} for row in X], 1000)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    with pytest.raises(TypeError):
        hash_features([["a", 3]])


@pytest.mark.parametrize("n,span", [(0, 1), (1, 1), (5000, 50), (200000, 60000)])
def test_index_keys_equals_unique(n, span):
    from fasttag.linear._weights import index_keys
    rng = np.random.default_rng(n)
    keys = (rng.integers(0, span, n).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(7)
    uniq, inv, counts = index_keys(keys, True)
    u2, i2, c2 = np.unique(keys, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(uniq, u2)
    np.testing.assert_array_equal(inv, i2.reshape(-1))
    np.testing.assert_array_equal(counts, c2)


def test_take_rows_copies_rows_in_order():
    from fasttag.linear._weights import take_rows
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 5, 30)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    idx = rng.integers(0, 100, indptr[-1]).astype(np.int64)
    val = rng.standard_normal(indptr[-1])
    order = rng.permutation(30).astype(np.int64)
    out = np.empty(31, np.int64), np.empty(len(idx), np.int64), np.empty(len(val))
    assert take_rows(indptr, idx, val, order, *out) == len(idx)
    for t, i in enumerate(order):
        np.testing.assert_array_equal(out[1][out[0][t]:out[0][t + 1]], idx[indptr[i]:indptr[i + 1]])
        np.testing.assert_array_equal(out[2][out[0][t]:out[0][t + 1]], val[indptr[i]:indptr[i + 1]])


@pytest.mark.parametrize("seed", range(3))
def test_shuffled_averaged_perceptron_equals_naive_on_the_same_orders(seed):
    from fasttag.linear._compat import check_random_state
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((50, 6))
    y = rng.integers(0, 4, 50)
    y[:4] = np.arange(4)
    est = AveragedPerceptron(max_iter=3, tol=None, shuffle=True, random_state=seed).fit(X, y)
    perms = check_random_state(seed)
    Xb = np.hstack([X, np.ones((50, 1))])
    w, a = np.zeros((4, 7)), np.zeros((4, 7))
    for _ in range(3):
        for i in perms.permutation(50):
            pred = int(np.argmax(w @ Xb[i]))
            if pred != y[i]:
                w[y[i]] += Xb[i]
                w[pred] -= Xb[i]
            a += w
    np.testing.assert_allclose(est.coef_, a[:, :6] / 150, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(est.intercept_, a[:, 6] / 150, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("average,name", [(False, "hinge"), (True, "hinge"), (4, "log_loss")])
def test_sgd_loss_curve_is_the_exact_objective(average, name):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((70, 5))
    y = rng.integers(0, 3, 70)
    est = SGDClassifier(loss=name, alpha=0.01, average=average, max_iter=3, tol=None,
                        random_state=0).fit(X, y)
    P = X @ est.coef_.T + est.intercept_
    T = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
    J = loss(name, P.ravel(), T.ravel()).reshape(P.shape).mean(axis=0).sum()
    J += 0.005 * np.sum(est.coef_ ** 2)
    assert est.loss_curve_[-1] == pytest.approx(J, rel=1e-9)


def test_regressor_coef_is_one_dimensional_as_in_scikit_learn():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = X @ np.array([1.0, -1.0, 0.5])
    for est in (SGDRegressor(random_state=0).fit(X, y), Neuron(random_state=0).fit(X, y)):
        assert est.coef_.shape == (3,) and est.intercept_.shape == (1,)
        np.testing.assert_allclose(est.predict(X), X @ est.coef_ + est.intercept_[0], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("make,scale", [(lambda: SGDRegressor(random_state=0), 1e200),
                                        (lambda: Neuron(learning_rate="constant", random_state=0), 10.0),
                                        (lambda: SGDClassifier(loss="log_loss", random_state=0), 1e200)],
                         ids=["SGDRegressor", "Neuron", "SGDClassifier"])
def test_a_diverged_fit_is_an_error_not_nan_weights(make, scale):
    """Steps too big for the inputs' scale: fit says so (scikit-learn's
    SGDRegressor raises too) instead of keeping NaN weights."""
    X = np.random.default_rng(0).standard_normal((100, 4)) * scale
    y = X @ np.array([1.0, 2.0, 3.0, 4.0])
    est = make()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="diverged: its weights became NaN or infinite; scale the inputs"):
            est.fit(X, y > 0 if isinstance(est, SGDClassifier) else y)


def test_changing_n_features_after_fit_is_refused_not_a_silent_rehash():
    F = [[f"w={i % 20}"] for i in range(300)]
    y = [i % 2 for i in range(300)]
    est = Perceptron(n_features=2 ** 18).fit(F, y)
    assert est.score(F, y) == 1.0
    est.set_params(n_features=2 ** 20)
    for call in (lambda: est.predict(F), lambda: est.to_bytes(), lambda: est.get_weight("w=1"),
                 lambda: est.partial_fit(F, y)):
        with pytest.raises(ValueError, match="n_features was 262144 when this Perceptron was fitted"):
            call()
    est.fit(F, y)                       # a new fit hashes into the new space
    assert est.score(F, y) == 1.0 and est.to_bytes()


def test_labels_a_model_file_cannot_keep_are_refused_at_fit():
    X = np.random.default_rng(0).standard_normal((20, 2))
    days = np.array(["2020-01-01", "2021-01-01"], dtype="datetime64[D]")[np.arange(20) % 2]
    with pytest.raises(ValueError, match="class labels of dtype datetime64.*cannot be kept in a model file"):
        Perceptron().fit(X, days)
    with pytest.raises(ValueError, match="cannot be kept in a model file"):
        Perceptron().partial_fit(X, days, classes=np.unique(days))


def test_feature_dicts_read_as_dictvectorizer_reads_them():
    """String values are one-hot, lists of strings one feature per item
    (DictVectorizer's reading), numbers are values; anything else is an
    error naming the sample and the feature."""
    pytest.importorskip("sklearn")
    from sklearn.feature_extraction import DictVectorizer
    X = [{"tok": ["a", "b"], "len": 2.0, "pos": "N"}, {"tok": ["b"], "len": 1.0, "pos": "V"},
         {"tok": ["c", "a"], "len": 3.0, "pos": "N"}] * 10
    y = [0, 1, 0] * 10
    ours = Perceptron(shuffle=False, max_iter=5).fit(X, y)
    theirs = Perceptron(shuffle=False, max_iter=5).fit(DictVectorizer(sparse=False).fit_transform(X), y)
    assert ours.decision_function(X).tolist() == pytest.approx(theirs.decision_function(
        DictVectorizer(sparse=False).fit_transform(X)).tolist())
    for bad, what in ((None, "NoneType"), (1j, "complex"), ([1, 2], "list")):
        with pytest.raises(TypeError, match=f"sample 1, feature 'f': a value must be .* not {what}"):
            Perceptron().fit([{"f": 1.0}, {"f": bad}], [0, 1])
