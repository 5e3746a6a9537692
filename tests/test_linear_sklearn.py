"""fasttag.linear inside scikit-learn: check_estimator, clone, pipelines, search;
and the estimators without scikit-learn installed."""
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

from fasttag.linear import (AveragedPerceptron, Neuron, PassiveAggressiveClassifier,  # noqa: E402
                            Perceptron, SGDClassifier, SGDRegressor)

ESTIMATORS = [Perceptron(), AveragedPerceptron(), PassiveAggressiveClassifier(),
              PassiveAggressiveClassifier(variant="MIRA", average=True), SGDClassifier(),
              SGDClassifier(loss="log_loss"), SGDRegressor(), Neuron()]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: repr(e))
def test_check_estimator(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = [(r["check_name"], repr(r["exception"])) for r in results if r["status"] == "failed"]
    assert not failed
    assert sum(r["status"] == "passed" for r in results) >= 45


def test_pipeline_grid_search_and_cross_validation():
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), AveragedPerceptron(random_state=0))
    search = GridSearchCV(pipe, {"averagedperceptron__max_iter": [1, 5]}, cv=3).fit(X, y)
    assert search.best_score_ > 0.8
    scores = cross_val_score(SGDClassifier(random_state=0), StandardScaler().fit_transform(X), y, cv=3)
    assert scores.mean() > 0.8
    est = clone(PassiveAggressiveClassifier(variant="MIRA", C=0.5))
    assert est.get_params()["C"] == 0.5 and not hasattr(est, "coef_")


def test_feature_strings_in_grid_search():
    rng = np.random.default_rng(0)
    words = ["the", "a", "dog", "cat", "runs", "sleeps"]
    tags = {"the": "D", "a": "D", "dog": "N", "cat": "N", "runs": "V", "sleeps": "V"}
    X = [[f"w={w}", f"s1={w[-1]}"] for w in rng.choice(words, 90)]
    y = [tags[f[0][2:]] for f in X]
    search = GridSearchCV(Perceptron(random_state=0), {"eta0": [0.5, 1.0]}, cv=3).fit(X, y)
    assert search.best_score_ == 1.0


def test_without_scikit_learn():
    """The estimators work (numeric and string inputs) when sklearn cannot be imported."""
    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "import numpy as np\n"
        "from fasttag.linear import AveragedPerceptron, SGDRegressor, HAVE_SKLEARN\n"
        "assert not HAVE_SKLEARN\n"
        "X = np.array([[0., 1], [1, 0], [0, 2], [2, 0]]); y = np.array([0, 1, 0, 1])\n"
        "m = AveragedPerceptron(random_state=0).fit(X, y); assert m.score(X, y) == 1.0\n"
        "assert m.get_params()['random_state'] == 0\n"
        "m = AveragedPerceptron().fit([['a'], ['b'], ['a', 'c'], ['b']], y)\n"
        "assert list(m.predict([['a'], ['b']])) == [0, 1]\n"
        "Z = np.random.default_rng(0).standard_normal((100, 2)); t = Z @ [1., 2.]\n"
        "r = SGDRegressor(random_state=0).fit(Z, t); assert r.score(Z, t) > 0.9, r.score(Z, t)\n"
        "try:\n    m.predict(np.zeros((1, 3)))\nexcept ValueError:\n    pass\nelse:\n    raise SystemExit(1)\n"
    )
    import fasttag
    root = Path(fasttag.__file__).resolve().parents[1]    # the fasttag under test (installed or in-tree)
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_pickles_carry_the_model_file_bytes():
    """Pickling and deep copies go through the model file (data, checked on
    the way back), never through the estimators' arrays."""
    import copy
    import pickle
    from fasttag.linear import AveragedPerceptron, MLPClassifier, SGDRegressor
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    for est in (AveragedPerceptron(max_iter=3), SGDRegressor(max_iter=3), MLPClassifier((4,), max_iter=3)):
        est.fit(X, y)
        state = est.__getstate__()
        assert set(state) == {"params", "model"} and state["model"] == est.to_bytes()
        for twin in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
            np.testing.assert_array_equal(twin.predict(X), est.predict(X))
            assert twin.get_params() == est.get_params()
        blank = pickle.loads(pickle.dumps(type(est)(max_iter=2)))
        assert blank.get_params()["max_iter"] == 2 and "model" not in blank.__getstate__()


@pytest.mark.parametrize("make", [lambda: SGDClassifier(random_state=0), lambda: SGDRegressor(random_state=0),
                                  lambda: __import__("fasttag.linear").linear.MLPClassifier((4,), max_iter=5)],
                         ids=["SGDClassifier", "SGDRegressor", "MLPClassifier"])
def test_dataframe_column_names_survive_pickles_and_model_files(make, tmp_path):
    """A model fitted on a DataFrame refuses its columns in another order,
    after a pickle or a model file too (scikit-learn's pickles keep
    ``feature_names_in_``); a later fit on feature strings drops them."""
    import pickle
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    import fasttag
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(80, 4)), columns=list("abcd"))
    y = (df["a"] > 0).astype(int)
    est = make().fit(df, y)
    est.save(tmp_path / "m.ftm")
    for twin in (est, pickle.loads(pickle.dumps(est)), fasttag.load(tmp_path / "m.ftm")):
        assert twin.feature_names_in_.tolist() == list("abcd")
        np.testing.assert_array_equal(twin.predict(df), est.predict(df))
        with pytest.raises(ValueError, match="feature names"):
            twin.predict(df[list("dcba")])
    est.fit([["w=a"], ["w=b"]] * 40, y)
    assert not hasattr(est, "feature_names_in_")
