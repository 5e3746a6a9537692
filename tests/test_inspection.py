"""Model inspection: explain() against a recomputation from the weights,
and ``fasttag inspect`` through the console script."""
import json
from pathlib import Path

import numpy as np
import pytest

from fasttag import SpanTagger, Tagger
from fasttag.features.words import WordFeaturizer

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


# ---------------------------------------------------------------- many tags

def _many_tags(model, n_tags, path):
    """``model`` (a Tagger) with ``n_tags`` tags, random transitions, saved
    at ``path``: a model with the shape of one of thousands of tags."""
    from fasttag.model import modelfile
    header, arrays = modelfile.loads(model.to_bytes())
    header["tags"] = header["tags"] + [f"T{i}" for i in range(n_tags - len(header["tags"]))]
    arrays["transitions"] = np.random.default_rng(1).standard_normal((n_tags + 2) * n_tags).astype(np.float32)
    arrays.pop("allowed", None)
    modelfile.write(path, header, arrays)
    return path


@pytest.fixture(scope="module")
def sample_tagger():
    return Tagger.train(str(DATA / "sample.conllu"), epochs=2, verbose=False)


def test_inspect_of_many_tags_shows_the_largest_transitions(run_cli, tmp_path, sample_tagger):
    import fasttag
    path = _many_tags(sample_tagger, 600, tmp_path / "many.ftm")
    model = fasttag.load(path)
    T = len(model.tags)
    trans = np.asarray(model.model.trans).reshape(T + 2, T)
    r = run_cli("inspect", path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    at = lines.index(f"(largest 20 of {T} x {T})")
    shown = [line.split() for line in lines[at + 1:at + 21]]
    order = np.argsort(-trans[:T].ravel(), kind="stable")[:20]
    assert shown == [[model.tags[i // T], "->", model.tags[i % T], f"{trans[:T].ravel()[i]:.2f}"] for i in order]
    r = run_cli("inspect", path, "--json", "--data", DATA / "sample.conllu", "--top", "3")
    assert r.returncode == 0, r.stderr
    desc = json.loads(r.stdout)
    assert list(desc) == ["kind", "tags", "templates", "features", "weights", "decoder", "temperature",
                          "training", "meta", "transitions", "top_features"]
    np.testing.assert_array_equal(np.array(desc["transitions"]), trans)
    # the top features per tag: the largest positive weights of the features in the data
    keys, words = set(), []
    for line in (DATA / "sample.conllu").read_text(encoding="utf-8").splitlines() + [""]:
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            words.append(cols[1])
        elif not line.strip() and words:
            keys.update(model.model.featurize([(words, None)])[0].ravel().tolist())
            words = []
    keys = np.array(sorted(keys), dtype=np.uint64)
    scores = model.model.emit.score_batch(keys, np.arange(len(keys) + 1, dtype=np.int64), n_classes=T)
    for t, tag in enumerate(model.tags):
        best = sorted((w for w in scores[:, t].tolist() if w > 0), reverse=True)[:3]
        assert [w for _, w in desc["top_features"][tag]] == pytest.approx(best), tag


def test_inspect_of_many_tags_needs_no_tag_by_tag_structures(tmp_path, sample_tagger, cli_command):
    """Memory: inspecting a model of 2,000 tags (4 million transitions)
    adds little to what loading it takes."""
    import subprocess
    import sys
    path = _many_tags(sample_tagger, 2000, tmp_path / "many.ftm")
    code = f"""
import resource, sys
import fasttag
from fasttag import cli
fasttag.load({str(path)!r})
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert cli.main(["inspect", {str(path)!r}]) in (0, None)
used = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("KB", used - loaded, file=sys.stderr)
"""
    _, env = cli_command
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    grown_kb = int(proc.stderr.split("KB")[-1].split()[0])
    assert grown_kb < 100_000, f"inspect took {grown_kb:,} KB more than loading the model"
