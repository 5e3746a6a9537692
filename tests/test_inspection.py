"""Model inspection: explain() against a recomputation from the weights,
and ``fasttag inspect`` through the console script."""
import json
from pathlib import Path

import numpy as np
import pytest

from fasttag import SpanTagger, Tagger
from fasttag.features import WordFeaturizer

DATA = Path(__file__).resolve().parent.parent / "data"
TRAIN = [(["the", "dog", "runs"], ["DET", "NOUN", "VERB"]), (["a", "cat", "sees", "the", "dog"],
                                                               ["DET", "NOUN", "VERB", "DET", "NOUN"])] * 10


@pytest.fixture(scope="module")
def tagger():
    return Tagger.train(TRAIN, epochs=3, verbose=False)


def test_explain_names_and_weights(tagger):
    tokens = ["the", "cat", "runs"]
    out = tagger.explain(tokens, top=50)
    assert [o["tag"] for o in out] == tagger.tag(tokens)
    assert [o["token"] for o in out] == tokens
    model = tagger.model
    keys = model.featurize([(tokens, None)])[0]
    names = model.templates.names
    for i, o in enumerate(out):
        assert o["runner_up"] != o["tag"] and o["probability"] >= o["runner_up_probability"]
        feats = dict(o["features"])
        t, r = model.tag_index[o["tag"]], model.tag_index[o["runner_up"]]
        for f, name in enumerate(names):
            if name == "norm[0]":        # readable name, and the weight difference of its key
                label = f"norm[0]={WordFeaturizer.word_attributes(tokens[i])[2]}"
                d = model.emit.get(int(keys[i, f]), t) - model.emit.get(int(keys[i, f]), r)
                assert feats.get(label, 0.0) == pytest.approx(d)
        diffs = [w for _, w in o["features"]]
        assert diffs == sorted(diffs, reverse=True)
    first = tagger.explain(tokens)[0]["features"]
    assert len(first) <= 5
    with pytest.raises(TypeError):
        tagger.explain("the cat")
    assert tagger.explain([]) == []


def test_span_tagger_explain_reads_columns():
    ner = SpanTagger.train(DATA / "sample_ner.conll", task="ner", epochs=2, verbose=False, feature_columns=[1, 2])
    words = ["EU", "rejects", "German", "call"]
    cols = [("NNP", "B-NP"), ("VBZ", "B-VP"), ("JJ", "B-NP"), ("NN", "I-NP")]
    out = ner.explain(words, columns=cols, top=200)
    assert len(out) == 4
    seen = 0
    for o, (pos, _) in zip(out, cols):
        for name, _ in o["features"]:
            for part in name.split("|"):
                if part.startswith("c1[0]="):
                    assert part == f"c1[0]={pos}"
                    seen += 1
    assert seen


def test_cli_inspect(run_cli, tmp_path, tagger):
    tagger.save(tmp_path / "m.ftm")
    r = run_cli("inspect", tmp_path / "m.ftm", "--data", DATA / "sample.conllu", "--top", "2", "--json")
    assert r.returncode == 0, r.stderr
    desc = json.loads(r.stdout)
    assert desc["tags"] == tagger.tags and desc["kind"] == "tagger"
    T = len(tagger.tags)
    np.testing.assert_allclose(np.array(desc["transitions"]).ravel(), tagger.model.trans, rtol=1e-6)
    assert np.array(desc["transitions"]).shape == (T + 2, T)
    assert set(desc["top_features"]) == set(tagger.tags)
    assert all(len(v) <= 2 for v in desc["top_features"].values())
    r = run_cli("inspect", tmp_path / "m.ftm")
    assert r.returncode == 0 and b"transitions" in r.stdout and b"NOUN" in r.stdout
    r = run_cli("inspect", DATA.parent / "fasttag" / "models" / "zh_pku_seg.ftm", "--data", DATA / "sample.conllu")
    assert r.returncode == 2 and b"word-level models only" in r.stderr and b"Traceback" not in r.stderr
    r = run_cli("inspect", tmp_path / "m.ftm", "--top", "0")
    assert r.returncode == 2 and b"--top" in r.stderr
