"""fasttag.linear model files from untrusted sources.

Loading must validate everything the compiled loops index: every malformed
file is a one-line ModelFormatError at load, never a segfault, garbage
scores, or another exception type later; and every model that loads works
(predict, decision_function, score, partial_fit, to_bytes).  Hostile files
are built with ``modelfile.dumps``, which writes valid checksums.  Crash
reproductions run in a subprocess so that a segfault fails the test instead
of killing pytest.
"""
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import fasttag
from fasttag.model import modelfile
from fasttag.errors import ModelFormatError
from fasttag.linear import (HAVE_SKLEARN, AveragedPerceptron, Neuron, PassiveAggressiveClassifier,
                            Perceptron, SGDClassifier, SGDRegressor)

CLASSIFIERS = {
    "Perceptron": lambda: Perceptron(random_state=0, max_iter=5, tol=None),
    "AveragedPerceptron": lambda: AveragedPerceptron(random_state=0, max_iter=5, tol=None),
    "PA-I": lambda: PassiveAggressiveClassifier(random_state=0, max_iter=5, tol=None),
    "MIRA-avg": lambda: PassiveAggressiveClassifier(variant="MIRA", average=True, random_state=0,
                                                    max_iter=5, tol=None),
    "SGDClassifier": lambda: SGDClassifier(random_state=0, max_iter=5, tol=None),
    "SGD-log-avg": lambda: SGDClassifier(loss="log_loss", average=True, random_state=0, max_iter=5,
                                         tol=None),
}
REGRESSORS = {
    "SGDRegressor": lambda: SGDRegressor(random_state=0, max_iter=5, tol=None),
    "SGDRegressor-avg": lambda: SGDRegressor(average=3, random_state=0, max_iter=5, tol=None),
    "Neuron": lambda: Neuron("tanh", max_iter=20, tol=None),
}
ALL = {**CLASSIFIERS, **REGRESSORS}
# every learner with training state the compiled epochs read
STATEFUL = [name for name in ALL if name != "Neuron"]

RNG = np.random.default_rng(0)
XNUM = RNG.standard_normal((40, 5))
Y3 = np.array(["a", "b", "c"])[RNG.integers(0, 3, 40)]
Y2 = (XNUM[:, 0] > 0).astype(int)
YREG = XNUM @ np.arange(5.0) / 10
WORDS = ["the", "a", "dog", "cat", "runs", "sleeps", "big"]
XFEAT = [[f"w={w}", f"s={w[-1]}"] for w in RNG.choice(WORDS, 40)]


def fitted(name, inputs="numeric", n_classes=3):
    est = ALL[name]()
    X = XNUM if inputs == "numeric" else XFEAT
    if name in REGRESSORS:
        y = YREG
    else:
        y = Y3 if n_classes == 3 else Y2
    return est.fit(X, y), X, y


def parts(est):
    return modelfile.loads(est.to_bytes())


def reject(cls, header, arrays, match=None):
    """Loading these parts must raise a one-line ModelFormatError."""
    with pytest.raises(ModelFormatError) as info:
        cls.from_bytes(modelfile.dumps(header, arrays))
    msg = str(info.value)
    assert "\n" not in msg and len(msg) < 500, msg
    if match is not None:
        assert match in msg, msg
    return msg


def run_python(code):
    """Run code in a fresh interpreter on the fasttag under test."""
    root = Path(fasttag.__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)


# ---------------------------------------------------------------- the reported crashes

def test_state_cut_to_zero_rows_is_a_load_error_not_a_segfault():
    """State arrays cut to 0 rows made partial_fit index past them (pa_epoch
    segfaulted); now the load refuses them.  One interpreter for every
    kind (importing scikit-learn is most of its time): a crash fails it."""
    code = """
        import numpy as np
        from fasttag.model import modelfile
        from fasttag.errors import ModelFormatError
        import fasttag.linear as L
        make = {"Perceptron": lambda: L.Perceptron(random_state=0),
                "AveragedPerceptron": lambda: L.AveragedPerceptron(random_state=0),
                "PA-I": lambda: L.PassiveAggressiveClassifier(random_state=0),
                "SGDClassifier": lambda: L.SGDClassifier(random_state=0),
                "SGDRegressor": lambda: L.SGDRegressor(random_state=0)}
        X = np.random.default_rng(0).standard_normal((50, 4))
        y = (X[:, 0] > 0).astype(int)
        for name, new in make.items():
            m = new().fit(X, y)
            header, arrays = modelfile.loads(m.to_bytes())
            for k in list(arrays):
                if k.startswith("state.") and arrays[k].ndim == 2 and arrays[k].shape[0] == 4:
                    arrays[k] = arrays[k][:0]
            try:
                m2 = type(m).from_bytes(modelfile.dumps(header, arrays))
            except ModelFormatError as exc:
                print(name, "ModelFormatError:", exc, flush=True)
            else:
                m2.partial_fit(X, y)
                print(name, "loaded and trained", flush=True)
    """
    proc = run_python(code)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["Perceptron", "AveragedPerceptron", "PA-I", "SGDClassifier",
                                                   "SGDRegressor"], proc.stdout
    for line in lines:
        assert " ModelFormatError: " in line and "state." in line, line


@pytest.mark.parametrize("name", list(ALL))
def test_wide_coef_with_short_intercept_is_a_load_error_not_garbage(name):
    """coef with 100,000 weight vectors and a 1-entry intercept made
    csr_scores read past the intercept (scores around 1e252, no error)."""
    code = f"""
        import numpy as np
        from fasttag.model import modelfile
        from fasttag.errors import ModelFormatError
        import fasttag.linear as L
        make = {{"Perceptron": L.Perceptron, "AveragedPerceptron": L.AveragedPerceptron,
                "PA-I": L.PassiveAggressiveClassifier, "MIRA-avg": L.PassiveAggressiveClassifier,
                "SGDClassifier": L.SGDClassifier, "SGD-log-avg": L.SGDClassifier,
                "SGDRegressor": L.SGDRegressor, "SGDRegressor-avg": L.SGDRegressor,
                "Neuron": L.Neuron}}[{name!r}]
        X = np.random.default_rng(0).standard_normal((50, 4))
        y = (X[:, 0] > 0).astype(int)
        m = make().fit(X, y)
        header, arrays = modelfile.loads(m.to_bytes())
        arrays["coef"] = np.zeros((4, 100000))
        arrays["intercept"] = np.zeros(1)
        try:
            m2 = type(m).from_bytes(modelfile.dumps(header, arrays))
        except ModelFormatError as exc:
            print("ModelFormatError:", exc)
        else:
            s = np.asarray(m2.predict(X))
            print("loaded; predictions", s[:3])
    """
    proc = run_python(code)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert "ModelFormatError: " in proc.stdout, proc.stdout


# ---------------------------------------------------------------- what loads, works

@pytest.mark.parametrize("inputs", ["numeric", "features"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", list(ALL))
def test_loaded_model_works_and_resaves_identically(name, inputs, n_classes):
    """A valid file loads into a model that predicts, scores and trains on
    exactly like the original, and saves to the same bytes."""
    if name in REGRESSORS and n_classes == 2:
        pytest.skip("one regression case is enough")
    est, X, y = fitted(name, inputs, n_classes)
    data = est.to_bytes()
    again = type(est).from_bytes(data)
    assert again.to_bytes() == data
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    assert again.score(X, y) == est.score(X, y)
    assert again.get_params() == est.get_params()
    if hasattr(est, "decision_function"):
        np.testing.assert_array_equal(again.decision_function(X), est.decision_function(X))
    if isinstance(est, (Perceptron, PassiveAggressiveClassifier)):
        assert again.mistakes_curve_ == est.mistakes_curve_ and again.n_mistakes_ > 0
    if isinstance(est, Neuron):
        assert again.grad_norm_ == est.grad_norm_
    if hasattr(est, "partial_fit"):
        assert again.t_ == est.t_
        args = {} if name in REGRESSORS else {"classes": np.unique(y)}
        est.partial_fit(X, y, **args)
        again.partial_fit(X, y, **args)
        np.testing.assert_array_equal(again.coef_, est.coef_)
        np.testing.assert_array_equal(again.intercept_, est.intercept_)
        if isinstance(est, (Perceptron, PassiveAggressiveClassifier)):
            assert again.n_mistakes_ == est.n_mistakes_
        assert again.to_bytes() == est.to_bytes()
        type(est).from_bytes(again.to_bytes())


def test_partial_fit_after_load_grows_new_feature_strings():
    est, X, y = fitted("AveragedPerceptron", "features")
    again = AveragedPerceptron.from_bytes(est.to_bytes())
    more = [["w=zebra", "s=a"], ["w=the"]]
    again.partial_fit(more, ["a", "b"])
    est.partial_fit(more, ["a", "b"])
    np.testing.assert_array_equal(again.feature_keys_, est.feature_keys_)
    np.testing.assert_array_equal(again.coef_, est.coef_)
    AveragedPerceptron.from_bytes(again.to_bytes())


def test_numpy_scalar_params_survive_saving():
    """Grid searches set numpy scalars; to_bytes used to drop them silently,
    so the loaded model came back with the defaults."""
    est = SGDClassifier(max_iter=np.int64(7), alpha=np.float64(0.01), average=np.int64(3),
                        shuffle=np.bool_(False), random_state=np.int64(4), tol=None)
    est.fit(XNUM, Y3)
    params = SGDClassifier.from_bytes(est.to_bytes()).get_params()
    assert (params["max_iter"], params["alpha"], params["average"], params["shuffle"],
            params["random_state"]) == (7, 0.01, 3, False, 4)


@pytest.mark.parametrize("labels", [np.array([b"x", b"yy", b"\xe9"]),
                                    np.array([3, 10, 200], dtype=np.uint8),
                                    np.array([-1.0, 0.0, 2.0], dtype=np.float32),
                                    np.array([7, 8, 9], dtype=object),
                                    np.array(["pos", "neg", "zéro"], dtype=object),
                                    np.array([False, True])])
def test_class_labels_of_every_dtype_round_trip(labels):
    """bytes labels were saved as "b'x'" and came back truncated; object
    arrays of ints came back as strings."""
    y = labels[np.arange(40) % len(labels)]
    est = Perceptron(random_state=0, max_iter=3, tol=None)
    try:
        est.fit(XNUM, y)
    except (TypeError, ValueError):
        if not HAVE_SKLEARN:
            raise
        pytest.skip("scikit-learn's target checks refuse these labels")
    again = Perceptron.from_bytes(est.to_bytes())
    assert again.classes_.dtype == est.classes_.dtype
    assert again.classes_.tolist() == est.classes_.tolist()
    assert again.predict(XNUM).tolist() == est.predict(XNUM).tolist()


def test_a_diverged_model_refuses_to_save():
    """Weights that overflowed in training would be refused at load: to_bytes
    says so instead of writing a file that cannot be read back."""
    X = np.random.default_rng(0).standard_normal((50, 3))
    est = SGDRegressor(learning_rate="constant", eta0=1e300, max_iter=3, tol=None)
    with np.errstate(all="ignore"), pytest.raises(ValueError, match="SGDRegressor diverged"):
        est.fit(X, X @ [1.0, 2.0, 3.0])
    assert not np.all(np.isfinite(est.coef_))
    with pytest.raises(ValueError, match="NaN, infinity"):
        est.to_bytes()


def test_load_names_the_path(tmp_path):
    est, _, _ = fitted("Perceptron")
    header, arrays = parts(est)
    del arrays["state.W"]
    path = tmp_path / "m.ftm"
    modelfile.write(path, header, arrays)
    with pytest.raises(ModelFormatError, match="m.ftm: .*state.W"):
        Perceptron.load(path)


# ---------------------------------------------------------------- training state

@pytest.mark.parametrize("name", STATEFUL)
def test_every_missing_state_array_is_a_load_error(name):
    """Missing state used to load and fail only in partial_fit (KeyError)."""
    est, _, _ = fitted(name)
    header, arrays = parts(est)
    names = [k for k in arrays if k.startswith("state.")]
    assert len(names) >= 7
    for key in names:
        bad = {k: v for k, v in arrays.items() if k != key}
        reject(type(est), header, bad, match=key)


@pytest.mark.parametrize("inputs", ["numeric", "features"])
@pytest.mark.parametrize("name", STATEFUL)
def test_every_state_array_of_the_wrong_shape_or_dtype_is_a_load_error(name, inputs):
    est, _, _ = fitted(name, inputs)
    header, arrays = parts(est)
    for key in [k for k in arrays if k.startswith("state.")]:
        arr = arrays[key]
        wrong = [np.zeros(arr.shape + (1,), arr.dtype),                 # ndim
                 np.zeros((arr.shape[0] + 1,) + arr.shape[1:], arr.dtype),  # one row more
                 arr.reshape(-1)[:0],                                    # empty
                 arr.astype(np.float32 if arr.dtype.kind == "f" else np.int32),
                 arr.astype(np.int64 if arr.dtype.kind == "f" else np.float64)]
        if arr.ndim == 2:
            wrong.append(np.zeros((arr.shape[0], arr.shape[1] + 1), arr.dtype))   # one class more
        for w in wrong:
            reject(type(est), header, {**arrays, key: w}, match=key)


def test_perceptron_timestamps_and_step_are_checked():
    """The lazy averages weigh each weight by step - TS: a timestamp after
    the step, or a negative one, would silently distort every average."""
    est, _, _ = fitted("AveragedPerceptron")
    header, arrays = parts(est)
    step = int(arrays["state.step"][0])
    for key, value in [("state.step", np.array([-1])), ("state.step", np.array([2 ** 63 - 1]))]:
        reject(AveragedPerceptron, header, {**arrays, key: value}, match="step")
    for key in ("state.TS", "state.BTS"):
        for v in (-1, step + 1):
            ts = arrays[key].copy()
            ts.flat[0] = v
            reject(AveragedPerceptron, header, {**arrays, key: ts}, match=key[len("state."):])


def test_sgd_counters_and_scales_are_checked():
    est, _, _ = fitted("SGD-log-avg")
    header, arrays = parts(est)
    t, n_avg = arrays["state.counters"]
    assert n_avg > 0
    bad = [("state.counters", np.array([0, 0])),            # t is 1-based: eta0 / t**power_t
           ("state.counters", np.array([-5, 0])),
           ("state.counters", np.array([2 ** 63 - 1, 0])),    # would wrap to negative in training
           ("state.counters", np.array([t, t])),              # more averaged updates than updates
           ("state.counters", np.array([t, -1])),
           ("state.wscale", np.zeros(3)),                     # V / wscale
           ("state.wscale", np.full(3, 2.0)),
           ("state.cavg", -np.ones(3)),
           ("state.opt_init", np.array([0.0])),               # learning_rate='optimal'
           ("state.opt_init", np.array([-1.0]))]
    for key, value in bad:
        reject(SGDClassifier, header, {**arrays, key: value})


# the float state arrays whose values bound what a further epoch computes
# (wscale has its own range, [1e-6, 1]; a huge opt_init only makes steps tiny)
HUGE_STATE = [(name, key) for name in STATEFUL
              for key in (("V", "b", "U", "cavg", "bsum") if name.startswith("SGD")
                          else ("W", "TOT", "B", "BTOT"))]


@pytest.mark.parametrize("name,key", HUGE_STATE)
def test_training_state_no_training_saves_is_a_load_error(name, key):
    """Training state filled with 1e308 (finite) loaded, and partial_fit then
    overflowed ("diverged"): every weight of the state must stay within
    float32's range as coef does, and every sum of weights within that many
    steps of them, or loading names the array."""
    est, X, y = fitted(name)
    header, arrays = parts(est)
    for value in (1e308, -1e300):
        bad = np.full_like(arrays[f"state.{key}"], value)
        reject(type(est), header, {**arrays, f"state.{key}": bad}, match=f"state.{key} ")


@pytest.mark.parametrize("name", STATEFUL)
def test_training_state_within_the_bounds_loads_trains_and_saves(name):
    """The other side of the bounds: large weights that training can save
    (1e30) load, train further and save again."""
    est, X, y = fitted(name)
    header, arrays = parts(est)
    key = "state.W" if "state.W" in arrays else "state.V"
    big = {**arrays, key: np.full_like(arrays[key], 1e30)}
    again = type(est).from_bytes(modelfile.dumps(header, big))
    again.partial_fit(X, y)
    type(est).from_bytes(again.to_bytes()).predict(X)


def test_averages_beyond_their_step_count_are_a_load_error():
    """TOT sums the weights of the first TS steps: with TS = 1 it holds at
    most one weight (the averages then divide by step, not TS)."""
    est, X, y = fitted("AveragedPerceptron")
    header, arrays = parts(est)
    ts = np.ones_like(arrays["state.TS"])
    tot = np.full_like(arrays["state.TOT"], 1e39)        # one step's weight, beyond float32
    reject(AveragedPerceptron, header, {**arrays, "state.TS": ts, "state.TOT": tot}, match="state.TOT ")
    ok = type(est).from_bytes(modelfile.dumps(header, {**arrays, "state.TS": ts,
                                                       "state.TOT": np.full_like(tot, 1e38)}))
    ok.partial_fit(X, y)


def test_a_learning_rate_beyond_the_largest_weight_is_a_load_error():
    """The step of the next update (eta0; eta0 / t**power_t; 1 / (alpha *
    (opt_init + t - 1))) must not exceed the largest weight a file holds:
    eta0=1e308, power_t=-2**31 or opt_init=1e-300 at t=1 loaded, and the
    next partial_fit overflowed ("diverged")."""
    est, X, y = fitted("SGDClassifier")
    header, arrays = parts(est)
    tiny = {**arrays, "state.opt_init": np.array([1e-300]), "state.counters": np.array([1, 0])}
    reject(SGDClassifier, header, tiny, match="state.opt_init")
    fine = {**arrays, "state.counters": np.array([1, 0])}      # training's own opt_init
    SGDClassifier.from_bytes(modelfile.dumps(header, fine)).partial_fit(X, y)
    est, X, y = fitted("SGDRegressor")                        # learning_rate='invscaling'
    header, arrays = parts(est)
    for params, name in [({"eta0": 1e308}, "eta0"), ({"power_t": -2 ** 31}, "power_t"),
                         ({"learning_rate": "constant", "eta0": 1e308}, "eta0")]:
        reject(SGDRegressor, {**header, "params": {**header["params"], **params}}, arrays, match=name)
    ok = SGDRegressor.from_bytes(modelfile.dumps({**header, "params": {**header["params"], "power_t": -0.5}},
                                                 arrays))
    ok.partial_fit(X, y)
    for name in ("Perceptron", "AveragedPerceptron"):
        est, X, y = fitted(name)
        header, arrays = parts(est)
        reject(type(est), {**header, "params": {**header["params"], "eta0": 1e308}}, arrays, match="eta0")
        big = type(est).from_bytes(modelfile.dumps({**header, "params": {**header["params"], "eta0": 1e30}},
                                                   arrays))
        big.partial_fit(X, y)
        big.predict(X)


def test_sgd_averaging_sums_are_checked_against_their_count():
    """cavg sums n_avg wscales (each <= 1); U and bsum are zero before
    averaging begins."""
    est, X, y = fitted("SGD-log-avg")
    header, arrays = parts(est)
    t, n_avg = (int(v) for v in arrays["state.counters"])
    reject(SGDClassifier, header, {**arrays, "state.cavg": np.full(3, n_avg + 1.0)}, match="state.cavg")
    before = {**arrays, "state.counters": np.array([t, 0]), "state.cavg": np.zeros(3)}
    reject(SGDClassifier, header, before, match="state.U ")
    zeroed = {**before, "state.U": np.zeros_like(arrays["state.U"]), "state.cavg": np.zeros(3),
              "state.bsum": np.zeros(3)}
    SGDClassifier.from_bytes(modelfile.dumps(header, zeroed)).partial_fit(X, y)


@pytest.mark.parametrize("name", list(ALL))
def test_non_finite_weights_are_a_load_error(name):
    est, _, _ = fitted(name)
    header, arrays = parts(est)
    for key in [k for k, v in arrays.items() if v.dtype.kind == "f"]:
        for value in (np.nan, np.inf):
            arr = arrays[key].copy()
            arr.flat[0] = value
            reject(type(est), header, {**arrays, key: arr}, match="NaN or infinity")


# ---------------------------------------------------------------- weights, columns, classes

@pytest.mark.parametrize("name", list(ALL))
def test_coef_and_intercept_shapes_are_checked(name):
    est, _, _ = fitted(name)
    cls = type(est)
    header, arrays = parts(est)
    F, K = arrays["coef"].shape
    for coef in (np.zeros(F), np.zeros((F, K, 1)), np.zeros((F + 1, K)), np.zeros((F, K + 1)),
                 np.zeros((F, 0)), arrays["coef"].astype(np.float32)):
        reject(cls, header, {**arrays, "coef": coef})
    for icpt in (np.zeros(K + 1), np.zeros(0), np.zeros((1, K)), arrays["intercept"].astype(np.int64)):
        reject(cls, header, {**arrays, "intercept": icpt}, match="intercept")
    for key in ("coef", "intercept"):
        reject(cls, header, {k: v for k, v in arrays.items() if k != key}, match=key)


@pytest.mark.parametrize("name", ["AveragedPerceptron", "SGDClassifier", "SGDRegressor", "Neuron"])
def test_feature_keys_are_checked(name):
    """map_keys and partial_fit's merges binary-search feature_keys: they
    must be sorted and distinct, one per weight row, uint64."""
    est, _, _ = fitted(name, "features")
    cls = type(est)
    header, arrays = parts(est)
    keys = arrays["feature_keys"]
    assert len(keys) >= 3
    swapped = keys.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    dup = keys.copy()
    dup[1] = dup[0]
    for bad in (swapped, dup, keys[:-1], np.append(keys, keys[-1] + 1), keys.astype(np.int64),
                keys.reshape(1, -1)):
        reject(cls, header, {**arrays, "feature_keys": bad}, match="feature_keys")
    reject(cls, header, {k: v for k, v in arrays.items() if k != "feature_keys"}, match="feature_keys")
    reject(cls, {**header, "n_features_in": len(keys)}, arrays, match="n_features_in")
    reject(cls, {**header, "params": {**header["params"], "n_features": int(keys[-1])}}, arrays,
           match="n_features")
    reject(cls, {**header, "input_kind": "numeric", "n_features_in": len(keys)}, arrays)


@pytest.mark.parametrize("name", ["Perceptron", "SGDRegressor"])
def test_n_features_in_is_checked(name):
    est, _, _ = fitted(name)
    cls = type(est)
    header, arrays = parts(est)
    F = header["n_features_in"]
    for value in (F + 1, F - 1, -1, float(F), True, str(F), None):
        reject(cls, {**header, "n_features_in": value}, arrays, match="n_features_in")
    reject(cls, {k: v for k, v in header.items() if k != "n_features_in"}, arrays)
    reject(cls, header, {**arrays, "feature_keys": np.arange(F, dtype=np.uint64)},
           match="feature_keys")
    # no columns at all: fit refuses such inputs, so loading does too
    reject(cls, {**header, "n_features_in": 0}, {**arrays, "coef": arrays["coef"][:0]},
           match="at least one feature column")


@pytest.mark.parametrize("name", list(CLASSIFIERS))
def test_classes_are_checked(name):
    """partial_fit maps labels to weight vectors by binary search over
    classes: unsorted or repeated classes would index past the scores."""
    est, _, _ = fitted(name)
    cls = type(est)
    header, arrays = parts(est)
    assert header["classes"] == ["a", "b", "c"]
    bad = [(["b", "a", "c"], "<U1"), (["a", "a", "c"], "<U1"), (["a", "b"], "<U1"),
           (["a"], "<U1"), ([], "<U1"), (["a", "b", "c", "d"], "<U1"), ("abc", "<U1"),
           (["a", "b", "cc"], "<U1"), (["a", "b", "c"], "<U200000000"), (["a", "b", 3], "<U1"),
           ([1, 2, 300], "|i1"), ([1, 2, -3], "<u4"), ([1, 2, 3.5], "<i8"), ([False, True, 1], "|b1"),
           ([1.0, 2.0, math.nan], "<f8"), ([1.0, 2.0, 1e300], "<f4"), ([1, 2, 3], "<M8[s]"),
           ([1, 2, 3], "<i4,<i4"), ([1, 2, 3], "(2,)<i4"), ([1, 2, 3], "V8"), ([1, 2, 3], "nonsense"),
           (["a", "b", "c"], 7), (["a", "b", "c\x00"], "<U2"), (["a", "b", "\u20ac"], "|S1")]
    for classes, dtype in bad:
        reject(cls, {**header, "classes": classes, "classes_dtype": dtype}, arrays)
    for key in ("classes", "classes_dtype"):
        reject(cls, {k: v for k, v in header.items() if k != key}, arrays, match="classes")


def test_regressors_have_no_classes():
    for name in REGRESSORS:
        est, _, _ = fitted(name)
        header, arrays = parts(est)
        reject(type(est), {**header, "classes": [0, 1], "classes_dtype": "<i8"}, arrays,
               match="classes")


# ---------------------------------------------------------------- header and params

BAD_PARAMS = {
    "Perceptron": [("eta0", 0), ("eta0", "fast"), ("eta0", math.inf), ("eta0", math.nan),
                   ("eta0", 10 ** 400),
                   ("init", "ones"), ("n_iter_no_change", 0)],
    "AveragedPerceptron": [("eta0", -1.0), ("init", None)],
    "PA-I": [("C", 0.0), ("C", -1), ("variant", "PA-III"), ("variant", "pa"), ("average", -1),
             ("average", "yes")],
    "SGDClassifier": [("loss", "huber"), ("penalty", "l1"), ("learning_rate", "adaptive"),
                      ("alpha", -1e-4), ("alpha", 0.0), ("epsilon", -0.1), ("power_t", math.inf),
                      ("average", -1), ("average", 2 ** 63), ("average", 1.5), ("eta0", math.nan)],
    "SGDRegressor": [("loss", "hinge"), ("learning_rate", "constant", "eta0", 0.0),
                     ("n_iter_no_change", 1.5)],
    "Neuron": [("activation", "softmax"), ("solver", "lbfgs"), ("eta0", 0.0), ("learning_rate", "adaptive"),
               ("learning_rate", None)],
}
COMMON_BAD = [("max_iter", 0), ("max_iter", 1.5), ("max_iter", True), ("max_iter", None),
              ("tol", -1.0), ("tol", "x"), ("tol", math.nan), ("fit_intercept", "yes"),
              ("fit_intercept", 1), ("shuffle", None), ("random_state", -1),
              ("random_state", 2 ** 32), ("random_state", 1.5), ("random_state", "seed"),
              ("n_features", 0), ("n_features", 2 ** 64), ("n_features", 2.0),
              ("no_such_param", 1)]


@pytest.mark.parametrize("name", list(BAD_PARAMS))
def test_bad_params_are_a_load_error_and_a_fit_error(name):
    """Wrong types, unknown names and out-of-range values are a
    ModelFormatError at load (not a TypeError from the constructor or a
    failure in partial_fit), and fit refuses the same values."""
    est, X, y = fitted(name)
    cls = type(est)
    header, arrays = parts(est)
    for case in BAD_PARAMS[name] + COMMON_BAD:
        change = dict(zip(case[::2], case[1::2]))
        reject(cls, {**header, "params": {**header["params"], **change}}, arrays)
        if "no_such_param" not in change:
            with pytest.raises(ValueError):
                ALL[name]().set_params(**change).fit(X, y)
    for params in ([], "x", None, {"eta0": [1.0]}, {"eta0": {"a": 1}}):
        reject(cls, {**header, "params": params}, arrays, match="param")


def test_missing_params_take_their_defaults():
    est, X, _ = fitted("Perceptron")
    header, arrays = parts(est)
    again = Perceptron.from_bytes(modelfile.dumps({**header, "params": {}}, arrays))
    assert again.get_params() == Perceptron().get_params()
    np.testing.assert_array_equal(again.predict(X), est.predict(X))


@pytest.mark.parametrize("name", ["AveragedPerceptron", "SGDRegressor", "Neuron"])
def test_header_entries_are_checked(name):
    est, _, _ = fitted(name)
    cls = type(est)
    header, arrays = parts(est)
    for key, value in [("n_iter", 0), ("n_iter", -3), ("n_iter", 2.0), ("n_iter", "5"),
                       ("n_iter", True), ("n_iter", 2 ** 70), ("input_kind", "strings"),
                       ("input_kind", ["numeric"]), ("loss_curve", "low"), ("loss_curve", [1.0, "x"]),
                       ("loss_curve", {"a": 1}), ("loss_curve", [True]), ("surprise", 1)]:
        reject(cls, {**header, key: value}, arrays)
    for key in ("n_iter", "input_kind", "params"):
        reject(cls, {k: v for k, v in header.items() if k != key}, arrays)
    extras = {"AveragedPerceptron": ("mistakes_curve", [[-1], [1.5], "3", [True], 3]),
              "Neuron": ("grad_norm", [-1.0, "0", None, math.nan, [1.0], True])}
    for other, (key, values) in extras.items():
        for value in values:
            reject(cls, {**header, key: value}, arrays, match=key)
        if other != name:   # one class's extra entry is unknown to another
            valid = parts(fitted(other)[0])[0][key]
            reject(cls, {**header, key: valid}, arrays, match=key)
    reject(cls, header, {**arrays, "state.extra": np.zeros(3)}, match="state.extra")
    reject(cls, header, {**arrays, "extra": np.zeros(3)}, match="extra")
    reject(cls, {**header, "kind": "linear.Other"}, arrays, match="kind")


# ---------------------------------------------------------------- fuzzing

def test_random_corruptions_never_crash_or_load_garbage():
    """Hundreds of random edits of valid files (arrays dropped, resized,
    retyped, filled with extreme values; header entries changed) in a fresh
    interpreter: each is either a ModelFormatError or a model whose predict,
    partial_fit and to_bytes all work."""
    code = """
        import json, math, sys, warnings
        import numpy as np
        from fasttag.model import modelfile
        from fasttag.errors import ModelFormatError
        import fasttag.linear as L
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(1)
        X = rng.standard_normal((30, 4))
        F = [[f"w={w}", "b"] for w in rng.choice(list("abcdef"), 30)]
        y3 = np.array([0, 1, 2] * 10)
        yr = X[:, 0] * 2.0
        makers = [(L.Perceptron, y3), (L.AveragedPerceptron, y3), (L.PassiveAggressiveClassifier, y3),
                  (lambda: L.PassiveAggressiveClassifier(variant="MIRA", average=True), y3),
                  (lambda: L.SGDClassifier(average=True, tol=None, max_iter=3), y3),
                  (lambda: L.SGDRegressor(average=2, tol=None, max_iter=3), yr),
                  (lambda: L.Neuron(max_iter=5), yr)]
        ODD = [0, -1, 1, 2, 3, 2 ** 31, 2 ** 63 - 1, -2 ** 63, 0.5, -0.0, 1e308, math.nan, math.inf,
               "", "x", None, True, [], {}, [1, 2], "numeric", "features"]
        def mutate(header, arrays):
            header = json.loads(json.dumps(header))
            arrays = dict(arrays)
            what = rng.integers(0, 7)
            names = sorted(arrays)
            key = names[rng.integers(0, len(names))]
            a = arrays[key]
            if what == 0:
                del arrays[key]
            elif what == 1:     # resize one axis
                shape = list(a.shape) or [1]
                ax = rng.integers(0, len(shape))
                shape[ax] = max(0, shape[ax] + int(rng.choice([-1, 1, -shape[ax], 5])))
                arrays[key] = np.resize(a, shape).astype(a.dtype)
            elif what == 2:     # retype
                arrays[key] = a.astype(rng.choice(["<f4", "<f8", "<i8", "<i4", "<u8", "|u1"]))
            elif what == 3:     # extreme entry
                if a.size:
                    b = a.copy()
                    if b.dtype.kind == "f":
                        pool = [np.nan, np.inf, -1e308, 1e-320, -1.0]
                    else:
                        info = np.iinfo(b.dtype)
                        pool = [v for v in (-1, 0, 2 ** 40, info.max, info.min)
                                if info.min <= v <= info.max]
                    b.flat[rng.integers(0, b.size)] = pool[rng.integers(0, len(pool))]
                    arrays[key] = b
            elif what == 4:     # a header entry
                keys = sorted(header)
                k = keys[rng.integers(0, len(keys))]
                header[k] = ODD[rng.integers(0, len(ODD))]
            elif what == 5:     # a param
                p = header.get("params")
                if isinstance(p, dict) and p:
                    k = sorted(p)[rng.integers(0, len(p))]
                    p[k] = ODD[rng.integers(0, len(ODD))]
            else:               # the classes
                if isinstance(header.get("classes"), list):
                    c = header["classes"]
                    header["classes"] = c[::-1] if rng.random() < 0.5 else c + [c[0]]
                else:
                    header["classes"] = [0, 1]
                    header["classes_dtype"] = "<i8"
            return header, arrays
        loaded = rejected = diverged = 0
        for make, y in makers:
            for Xin in (X, F):
                m = make().fit(Xin, y)
                base = modelfile.loads(m.to_bytes())
                for _ in range(100):
                    h, a = base
                    for _ in range(rng.integers(1, 3)):
                        h, a = mutate(h, a)
                    try:
                        m2 = type(m).from_bytes(modelfile.dumps(h, a))
                    except ModelFormatError as exc:
                        assert "\\n" not in str(exc)
                        rejected += 1
                        continue
                    loaded += 1
                    m2.predict(Xin)
                    type(m).from_bytes(m2.to_bytes())
                    if hasattr(m2, "partial_fit"):
                        try:     # extreme but finite weights or steps may overflow in training
                            if hasattr(m2, "classes_"):
                                m2.partial_fit(Xin, m2.classes_[np.arange(len(y)) % len(m2.classes_)])
                            else:
                                m2.partial_fit(Xin, y)
                        except ValueError as exc:
                            assert "diverged" in str(exc), exc
                            diverged += 1
                            continue
                        m2.predict(Xin)
                        try:     # extreme but finite weights or steps may overflow in training
                            data = m2.to_bytes()
                        except ValueError as exc:
                            assert "training diverged" in str(exc), exc
                            diverged += 1
                        else:
                            type(m).from_bytes(data)
        print("loaded", loaded, "rejected", rejected, "diverged", diverged)
    """
    proc = run_python(code)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    loaded, rejected, diverged = (int(w) for w in proc.stdout.split()[1::2])
    assert rejected > 300 and loaded > 10 and diverged < loaded, proc.stdout


# ---------------------------------------------------------------- the compiled loops' edge cases

@pytest.mark.parametrize("make", [lambda: AveragedPerceptron(random_state=0, max_iter=3, tol=None),
                                  lambda: PassiveAggressiveClassifier(variant="MIRA", random_state=0,
                                                                      max_iter=3, tol=None),
                                  lambda: SGDClassifier(average=True, random_state=0, max_iter=3,
                                                        tol=None)])
def test_samples_without_features_train_and_predict(make):
    """Empty samples (trailing all-zero rows, or no known feature at all)
    leave nothing to index: the loops must not take the address of an
    element past the end (the debug build's bounds checks caught that)."""
    import scipy.sparse as sp
    X = sp.csr_matrix(np.vstack([np.eye(4)] * 3 + [np.zeros((12, 4))]))
    y = np.array([0, 1, 2, 0] * 3 + [1] * 12)
    est = make().fit(X, y)
    assert est.predict(X).shape == (24,)
    # only the intercepts separate samples without features
    empty = est.decision_function(sp.csr_matrix((3, 4)))
    np.testing.assert_array_equal(empty, np.tile(est.intercept_, (3, 1)))
    F = [["w=a"], ["w=b"], ["w=c"]] * 3
    est = make().fit(F, ["x", "y", "z"] * 3)
    before = est.coef_.copy()
    est.partial_fit([[]] * 10, ["x"] * 10)      # no features at all
    np.testing.assert_array_equal(est.coef_.shape, before.shape)
    assert est.predict([[], ["w=zzz"]]).shape == (2,)


def test_a_step_counter_at_its_limit_refuses_training_rather_than_save_unloadable_files():
    from fasttag.model import modelfile
    from fasttag.linear import Perceptron
    X = [["a", "b"], ["c"], ["a", "c"], ["b"]]
    y = ["x", "y", "x", "y"]
    h, a = modelfile.loads(Perceptron(max_iter=2).fit(X, y).to_bytes())
    a = dict(a)
    a["state.step"] = np.array([2**62 - 1], np.int64)
    a["state.TS"] = np.zeros_like(a["state.TS"])
    a["state.BTS"] = np.zeros_like(a["state.BTS"])
    est = Perceptron.from_bytes(modelfile.dumps(h, a))
    before = est.to_bytes()
    with pytest.raises(ValueError, match="step counter"):
        est.partial_fit(X, y)
    assert est.to_bytes() == before                       # untouched
    assert list(est.predict(X)) == list(Perceptron.from_bytes(before).predict(X))
