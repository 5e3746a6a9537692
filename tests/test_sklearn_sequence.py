"""fasttag.sklearn.SequenceTagger against the real scikit-learn."""
import copy
import pickle
import random

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, cross_validate  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

import joblib  # noqa: E402

from fasttag.sklearn import SequenceTagger  # noqa: E402

LEXICON = {"the": "DET", "a": "DET", "dog": "NOUN", "cat": "NOUN", "park": "NOUN",
           "runs": "VERB", "sees": "VERB", "in": "ADP", "big": "ADJ", ".": "PUNCT"}


def _data(n, seed):
    rng = random.Random(seed)
    X, y = [], []
    for _ in range(n):
        words = ["the", rng.choice(["dog", "cat"]), rng.choice(["runs", "sees"])]
        if rng.random() < 0.5:
            words += ["in", "the", "big", "park"]
        words.append(".")
        X.append(words)
        y.append([LEXICON[w] for w in words])
    return X, y


@pytest.fixture(scope="module")
def data():
    return _data(80, 0)


def test_fit_predict_score(data):
    X, y = data
    est = SequenceTagger(epochs=3).fit(X, y)
    assert est.predict(X[:5]) == y[:5]
    assert est.score(X, y) == 1.0
    assert est.classes_ == sorted(set(LEXICON.values()))
    assert est.predict_single(["a", "cat", "runs", "."]) == ["DET", "NOUN", "VERB", "PUNCT"]


def test_marginals_are_distributions_agreeing_with_predict(data):
    X, y = data
    est = SequenceTagger(epochs=3, calibrate=0.25).fit(X, y)
    assert est.temperature_ > 0 and est.temperature_ != 1.0
    margs = est.predict_marginals(X[:10])
    for sent, m, tags in zip(X[:10], margs, est.predict(X[:10])):
        assert len(m) == len(sent)
        for dist, tag in zip(m, tags):
            assert set(dist) == set(est.classes_)
            assert sum(dist.values()) == pytest.approx(1.0)
            assert max(dist, key=dist.get) == tag


def test_params_clone_and_grid_search(data):
    X, y = data
    est = SequenceTagger(epochs=2, algorithm="mira", k=2, C=0.5)
    params = est.get_params()
    assert params["algorithm"] == "mira" and params["k"] == 2 and params["C"] == 0.5
    twin = clone(est)
    assert twin.get_params() == params and not hasattr(twin, "model_")
    grid = GridSearchCV(SequenceTagger(), {"epochs": [1, 3], "decoder": ["viterbi", "greedy"]}, cv=2)
    grid.fit(X, y)
    assert grid.best_params_["epochs"] in (1, 3)
    assert grid.best_score_ == pytest.approx(1.0)
    grid = GridSearchCV(SequenceTagger(), {"epochs": np.arange(1, 3), "C": np.array([0.5]),
                                           "algorithm": ["mira"]}, cv=2).fit(X, y)   # numpy's numbers
    assert grid.best_params_["epochs"] in (1, 2) and grid.best_estimator_.model_.to_bytes()
    res = cross_validate(SequenceTagger(epochs=2), X, y, cv=KFold(3))
    assert len(res["test_score"]) == 3 and np.all(res["test_score"] > 0.9)


def test_set_params_takes_effect(data):
    X, y = data
    a = SequenceTagger(epochs=1, seed=0).fit(X, y)
    b = SequenceTagger(epochs=1, seed=0).set_params(epochs=4).fit(X, y)
    assert a.model_.model.training_info["epochs"] == 1
    assert b.model_.model.training_info["epochs"] == 4


def test_ensemble_is_the_taggers_ensemble(data):
    import fasttag
    X, y = data
    est = SequenceTagger(epochs=2, seed=3, ensemble=3).fit(X, y)
    ref = fasttag.Tagger.train(list(zip(X, y)), epochs=2, seed=3, ensemble=3, verbose=False)
    assert est.model_.to_bytes() == ref.to_bytes()
    assert est.model_.model.training_info["best_epochs"] == [2, 2, 2]
    assert clone(est).get_params()["ensemble"] == 3


def test_pickle_joblib_deepcopy_through_bytes(data, tmp_path):
    X, y = data
    est = SequenceTagger(epochs=2).fit(X, y)
    state = est.__getstate__()
    assert isinstance(state["model_"], bytes) and state["model_"] == est.model_.to_bytes()
    for twin in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
        assert twin.predict(X) == est.predict(X)
        assert twin.get_params() == est.get_params()
    joblib.dump(est, tmp_path / "est.joblib")
    assert joblib.load(tmp_path / "est.joblib").predict(X[:3]) == est.predict(X[:3])


def test_mistakes_are_clear_errors(data):
    X, y = data
    with pytest.raises(NotFittedError):
        SequenceTagger().predict(X)
    with pytest.raises(ValueError, match="sentence 0 has 3 tokens and 2 tags"):
        SequenceTagger().fit([["a", "b", "c"]], [["X", "Y"]])
    with pytest.raises(ValueError, match="2 sentences"):
        SequenceTagger().fit(X[:2], y[:1])
    with pytest.raises(TypeError):
        SequenceTagger().fit("the dog runs", y[:1])
    for bad in (1.5, "0.2", True):
        with pytest.raises(ValueError, match="calibrate must be a fraction in \\[0, 1\\)"):
            SequenceTagger(calibrate=bad).fit(X, y)
    for bad in ("VERB", [1, 2]):
        with pytest.raises(ValueError, match="classes must be a list of tags"):
            SequenceTagger().partial_fit(X, y, classes=bad)
    with pytest.raises(TypeError, match="token 1: a token must be a str, not dict"):
        SequenceTagger().fit([["a", {"w": "b"}]], [["X", "Y"]])
    with pytest.raises(ValueError, match="without whitespace"):
        SequenceTagger().fit([["a", "b"]], [["X", "Y Z"]])
    est = SequenceTagger(epochs=1).fit(X, y)
    with pytest.raises(TypeError):
        est.predict(["the", "dog"])         # a list of str is one sentence mistaken for many
    with pytest.raises(TypeError, match="y\\[0\\]"):
        est.score(X[:1], ["".join(y[0])])   # a str of one-letter tags is not a tag list


def test_partial_fit_streams_batches(data):
    X, y = data
    est = SequenceTagger()
    for _ in range(3):
        for i in range(0, len(X), 16):
            est.partial_fit(X[i:i + 16], y[i:i + 16], classes=list(LEXICON.values()) + ["X"])
    assert "X" in est.classes_ and est.score(X, y) == 1.0
    arrayed = SequenceTagger().partial_fit(X, y, classes=np.array(sorted(set(LEXICON.values())) + ["X"]))
    assert "X" in arrayed.classes_          # an array of classes, as scikit-learn passes them
    whole = SequenceTagger().partial_fit(X, y, classes=list(LEXICON.values()) + ["X"])
    split = SequenceTagger()
    for i in range(0, len(X), 16):
        split.partial_fit(X[i:i + 16], y[i:i + 16], classes=list(LEXICON.values()) + ["X"])
    assert whole.model_.to_bytes() == split.model_.to_bytes()
    twin = pickle.loads(pickle.dumps(est))
    assert twin.predict(X) == est.predict(X)


# ---------------------------------------------------------------- feature dicts

def word2features(sent, i):
    """sklearn-crfsuite's tutorial features."""
    word = sent[i]
    feats = {"bias": 1.0, "word.lower()": word.lower(), "word[-3:]": word[-3:], "word.istitle()": word.istitle(),
             "word.isdigit()": word.isdigit()}
    if i > 0:
        feats.update({"-1:word.lower()": sent[i - 1].lower(), "-1:word.istitle()": sent[i - 1].istitle()})
    else:
        feats["BOS"] = True
    if i < len(sent) - 1:
        feats.update({"+1:word.lower()": sent[i + 1].lower(), "+1:word.istitle()": sent[i + 1].istitle()})
    else:
        feats["EOS"] = True
    return feats


def _dicts(X):
    return [[word2features(s, i) for i in range(len(s))] for s in X]


def test_feature_dicts_like_sklearn_crfsuite(data, tmp_path):
    X, y = data
    Xd = _dicts(X)
    est = SequenceTagger(epochs=10).fit(Xd, y)
    assert type(est.model_).__name__ == "FeatureTagger"
    assert est.predict(Xd) == y and est.score(Xd, y) == 1.0
    margs = est.predict_marginals(Xd[:3])
    assert all(abs(sum(d.values()) - 1) < 1e-9 for m in margs for d in m)
    twin = pickle.loads(pickle.dumps(est))
    assert twin.predict(Xd[:5]) == y[:5]
    est.model_.save(tmp_path / "dicts.ftm")
    import fasttag
    assert fasttag.load(str(tmp_path / "dicts.ftm")).tag_sents(Xd[:5]) == y[:5]
    grid = GridSearchCV(SequenceTagger(), {"epochs": [1, 10]}, cv=2).fit(Xd, y)
    assert grid.best_score_ > 0.9 and len(grid.cv_results_["mean_test_score"]) == 2


def test_padding_scores_nothing(data):
    """Rows are padded to the batch's widest token: a sentence's tags and
    scores do not depend on what it is batched with."""
    X, y = data
    Xd = _dicts(X)
    est = SequenceTagger(epochs=2).fit(Xd, y)
    wide = [[dict(f, **{f"extra{j}": "x" for j in range(40)}) for f in Xd[0]]]
    alone = est.model_.tag_sents(Xd[1:2], n_best=3)
    batched = est.model_.tag_sents(wide + Xd[1:2], n_best=3)[1]
    assert [t for t, _ in alone[0]] == [t for t, _ in batched]
    np.testing.assert_allclose([s for _, s in alone[0]], [s for _, s in batched])


def test_false_and_zero_are_no_feature_and_reals_are_refused(data):
    X, y = data
    Xd = _dicts(X)
    noisy = [[dict(f, off=False, none=None, zero=0, nested={"a": False}) for f in s] for s in Xd]
    a = SequenceTagger(epochs=2).fit(Xd, y)
    b = SequenceTagger(epochs=2).fit(noisy, y)
    assert a.model_.to_bytes() == b.model_.to_bytes()
    import fasttag
    with pytest.raises(fasttag.InputError, match="real-valued"):
        SequenceTagger(epochs=1).fit([[{"len": 3.5}]], [["X"]])
    with pytest.raises(fasttag.InputError, match="does not apply"):
        SequenceTagger(epochs=1, prune_k=2).fit(Xd, y)
