"""Model files of the release before the Python layer's redesign
(tests/data/previous/, written by ``python tests/test_previous_release.py
DIR`` from that release) load and predict exactly as they did, and
training the same recipe with the same seed gives the same bytes."""
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import fasttag
from fasttag import linear
from fasttag.sklearn import SequenceTagger

HERE = Path(__file__).resolve().parent
PREVIOUS = HERE / "data" / "previous"
DATA = HERE.parent / "data"

SENTS = [["The", "cat", "sat", "on", "the", "mat", "."], ["John", "lives", "in", "New", "York", "."],
         ["Stocks", "fell", "sharply", "yesterday", "in", "London", "."]]
POS = [["DT", "NN", "VBD", "IN", "DT", "NN", "."], ["NNP", "VBZ", "IN", "NNP", "NNP", "."],
       ["NNS", "VBD", "RB", "NN", "IN", "NNP", "."]]
ZH = "我爱北京天安门。今天天气很好"
TEXT = "Mr. Smith went to Washington. He didn't stay long!"
FEATURES = [[{"w": w.lower(), "cap": w[:1].isupper()} for w in s] for s in SENTS]
FEATURE_TAGS = [["D", "N", "V", "P", "D", "N", "."], ["N", "V", "P", "N", "N", "."], ["N", "V", "A", "N", "P", "N", "."]]
NUMBERS = np.random.RandomState(0).randn(60, 5)


def _sequence_models():
    d = str(DATA)
    return {
        "tagger": lambda: fasttag.Tagger.train(f"{d}/sample.conllu", epochs=3, seed=0),
        "tagger-mira-clusters": lambda: fasttag.Tagger.train(f"{d}/sample.conllu", epochs=3, seed=1, algorithm="mira",
                                                              k=2, clusters=f"{d}/sample_clusters.txt"),
        "segmenter": lambda: fasttag.Segmenter.train(f"{d}/sample_zh_train.txt", epochs=3, seed=0),
        "chunker": lambda: fasttag.SpanTagger.train(f"{d}/sample_chunk.conll", task="chunk", epochs=3, seed=0),
        "ner": lambda: fasttag.SpanTagger.train(f"{d}/sample_ner.conll", task="ner", epochs=3, seed=0,
                                                gazetteers={"LOC": f"{d}/sample_gazetteer.txt"}),
        "tokenizer": lambda: fasttag.Tokenizer.train(f"{d}/sample_tok.conllu", epochs=3, seed=0),
        "feature-tagger": lambda: SequenceTagger(epochs=3, seed=0).fit(FEATURES * 5, FEATURE_TAGS * 5).model_,
    }


LINEAR = {
    "Perceptron": lambda: linear.Perceptron(max_iter=5, random_state=0),
    "AveragedPerceptron": lambda: linear.AveragedPerceptron(max_iter=5, random_state=0),
    "PassiveAggressiveClassifier": lambda: linear.PassiveAggressiveClassifier(max_iter=5, random_state=0),
    "SGDClassifier": lambda: linear.SGDClassifier(max_iter=5, random_state=0),
    "SGDRegressor": lambda: linear.SGDRegressor(max_iter=5, random_state=0),
    "MLPClassifier": lambda: linear.MLPClassifier(hidden_layer_sizes=(4,), max_iter=5, random_state=0),
    "MLPRegressor": lambda: linear.MLPRegressor(hidden_layer_sizes=(4,), max_iter=5, random_state=0),
}


def _train_linear(name):
    target = NUMBERS @ np.arange(5.0) if name.endswith("Regressor") else (NUMBERS[:, 0] + NUMBERS[:, 1] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LINEAR[name]().fit(NUMBERS, target)


def recipes():
    """Every fixture's name and how to train it."""
    out = dict(_sequence_models())
    out.update({f"linear-{name}": (lambda name=name: _train_linear(name)) for name in LINEAR})
    return out


def predictions(name, model):
    """What the fixture ``name`` predicts, in JSON's terms."""
    if name.startswith("linear-"):
        return {"predict": np.asarray(model.predict(NUMBERS[:10])).round(6).tolist()}
    if name == "feature-tagger":
        return {"tag_sents": model.tag_sents(FEATURES)}
    if name == "segmenter":
        return {"segment": model.segment(ZH), "lines": list(model.segment_lines([ZH, "他说的确实在理"]))}
    if name == "tokenizer":
        return {"tokenize": model.tokenize(TEXT),
                "offsets": [[list(t) for t in s] for s in model.tokenize(TEXT, offsets=True)]}
    if name.startswith("tagger"):
        return {"tag_sents": model.tag_sents(SENTS),
                "nbest": [[list(map(str, t)), round(float(s), 4)] for t, s in model.tag(SENTS[0], n_best=3)],
                "marginals": [np.round(a, 5).tolist() for a in model.marginals(SENTS[:1])]}
    cols = [[[t] for t in s] for s in POS] if name == "chunker" else [None] * len(SENTS)
    return {"tag_sents": model.tag_sents(SENTS, columns=None if cols[0] is None else cols),
            "spans": [list(map(list, model.spans(s, columns=c))) for s, c in zip(SENTS, cols)],
            "marginals": [np.round(a, 5).tolist()
                          for a in model.marginals(SENTS[:1], columns=None if cols[0] is None else cols[:1])]}


NAMES = sorted(recipes())


@pytest.fixture(scope="module")
def expected():
    return json.loads((PREVIOUS / "predictions.json").read_text(encoding="utf-8"))


def test_every_fixture_is_recorded(expected):
    assert sorted(expected) == NAMES
    assert sorted(p.stem for p in PREVIOUS.glob("*.ftm")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_a_previous_release_file_predicts_as_it_did(name, expected):
    model = fasttag.load(PREVIOUS / f"{name}.ftm")
    assert json.loads(json.dumps(predictions(name, model), ensure_ascii=False)) == expected[name]


# the tokenizer's trainer now builds the candidate engine: its old files still load and
# predict as before (above), but the same recipe no longer gives the old engine's bytes
RETRAINED_DIFFERENTLY = {"tokenizer"}


@pytest.mark.parametrize("name", [n for n in NAMES if n not in RETRAINED_DIFFERENTLY])
def test_training_the_same_recipe_gives_the_same_bytes(name):
    assert recipes()[name]().to_bytes() == (PREVIOUS / f"{name}.ftm").read_bytes()


if __name__ == "__main__":          # write the fixtures with the fasttag importable here
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    record = {}
    for name, train in recipes().items():
        train().save(out / f"{name}.ftm")
        record[name] = predictions(name, fasttag.load(out / f"{name}.ftm"))
    (out / "predictions.json").write_text(json.dumps(record, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                                          encoding="utf-8")
