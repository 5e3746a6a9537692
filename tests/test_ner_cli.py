"""NER trained from the command line: the defaults give a model that tags
raw text (words alone, no document features), the old column and
document features come back on request, and ``--json`` writes IOB2 tags
whatever scheme the training files used (CoNLL-2003's are IOB1)."""
import json

import pytest

import fasttag
from fasttag import SpanTagger
from fasttag.text import schemes

# CoNLL-2003 style: word POS chunk NER, IOB1 (a span opens with I-; B- only
# between two adjacent spans of one type), documents after -DOCSTART- lines
_DOCUMENTS = [
    [("EU NNP I-NP I-ORG", "rejects VBZ I-VP O", "German JJ I-NP I-MISC", "call NN I-NP O", ". . O O"),
     ("Peter NNP I-NP I-PER", "Blackburn NNP I-NP I-PER", "visited VBD I-VP O", "Brussels NNP I-NP I-LOC",
      ". . O O")],
    [("Angela NNP I-NP I-PER", "Merkel NNP I-NP I-PER", "met VBD I-VP O", "Peter NNP I-NP I-PER",
      "Blackburn NNP I-NP I-PER", "in IN I-PP O", "Paris NNP I-NP I-LOC", ". . O O"),
     ("The DT I-NP O", "European NNP I-NP I-ORG", "Commission NNP I-NP I-ORG", "said VBD I-VP O",
      "on IN I-PP O", "Thursday NNP I-NP O", ". . O O"),
     ("He PRP I-NP O", "gave VBD I-VP O", "France NNP I-NP I-LOC", "Germany NNP I-NP B-LOC",
      "and CC O O", "Italy NNP I-NP I-LOC", "a DT I-NP O", "call NN I-NP O", ". . O O")],
]
RAW = "Angela Merkel visited Brussels.\nThe European Commission met Peter Blackburn in Paris.\n"


def _conll(path, copies=4):
    """A small CoNLL-2003-style file: ``copies`` times the documents."""
    lines = []
    for _ in range(copies):
        for doc in _DOCUMENTS:
            lines += ["-DOCSTART- -X- -X- O", ""]
            for sent in doc:
                lines += list(sent) + [""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _ok(result):
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


@pytest.fixture(scope="module")
def trained(run_cli, tmp_path_factory):
    """(training file, model trained by 'fasttag train ner' with its defaults)."""
    folder = tmp_path_factory.mktemp("ner")
    train = _conll(folder / "eng.train")
    model = folder / "m.ftm"
    _ok(run_cli("train", "ner", train, "-o", model, "--epochs", "4", "--quiet", cwd=folder))
    return train, model


@pytest.fixture(scope="module")
def words_only(run_cli, trained):
    """A model trained on the words alone by explicit options (the same
    on the code of before these defaults)."""
    train, model = trained
    model = model.with_name("words.ftm")
    _ok(run_cli("train", "ner", train, "-o", model, "--epochs", "4", "--quiet", "--feature-columns", "",
                "--document-features", "off", cwd=model.parent))
    return train, model


def test_train_ner_defaults_give_a_model_that_tags_raw_text(run_cli, trained):
    _, model = trained
    out = _ok(run_cli("ner", "-m", model, input=RAW.encode()))
    found = {tuple(line.split("\t")[3:]) for line in out.splitlines()}
    assert ("PER", "Peter Blackburn") in found and ("LOC", "Paris") in found
    loaded = fasttag.load(model)
    assert loaded.feature_columns == [] and loaded.meta["document_features"] is False
    # pretokenized text too, and the entities of the Python API
    assert _ok(run_cli("ner", "-m", model, "--pretokenized", input=b"Peter Blackburn visited Paris .\n"))
    assert ("PER", "Peter Blackburn") in {(s.label, s.text) for s in loaded.entities(RAW)}


def test_train_ner_old_features_by_explicit_options(run_cli, trained, tmp_path):
    train, _ = trained
    model = tmp_path / "cols.ftm"
    _ok(run_cli("train", "ner", train, "-o", model, "--epochs", "2", "--quiet", "--feature-columns", "1,2",
                "--document-features", "on", cwd=tmp_path))
    loaded = fasttag.load(model)
    assert loaded.feature_columns == [1, 2] and loaded.meta["document_features"] is True
    assert set(loaded.meta["extras"]) >= {"doc", "headline", "docrun", "caprole"}
    # such a model reads column files, and says so to raw text in one line
    tagged = _ok(run_cli("tag", "-m", model, "--format", "conll", train))
    rows = [line.split() for line in tagged.splitlines() if line.strip() and not line.startswith("-DOCSTART-")]
    assert len(rows) == 4 * sum(len(s) for doc in _DOCUMENTS for s in doc) and all(len(r) == 5 for r in rows)
    refused = run_cli("ner", "-m", model, input=RAW.encode())
    err = refused.stderr.decode()
    assert refused.returncode == 2 and "feature column" in err and len(err.strip().splitlines()) == 1


def test_python_ner_defaults_agree_with_the_command(trained):
    train, model = trained
    api = SpanTagger.train(str(train), task="ner", epochs=4, verbose=False)
    assert api.feature_columns == [] and api.meta["document_features"] is False
    assert api.to_bytes() == fasttag.load(model).to_bytes()


def _check_iob2(record):
    tags, spans = record["tags"], record["spans"]
    for s in spans:
        assert tags[s["start"]] == "B-" + s["label"]
    assert tags == schemes.encode([(s["label"], s["start"], s["end"]) for s in spans], len(tags), "iob2")
    assert record["scheme"] == "iob2"


def test_json_tags_are_iob2_for_an_iob1_model(run_cli, words_only):
    train, model = words_only
    assert fasttag.load(model).scheme == "iob1"
    records = [json.loads(x) for x in _ok(run_cli("ner", "-m", model, "--json", input=RAW.encode())).splitlines()]
    assert len(records) == 2 and sum(len(r["spans"]) for r in records) >= 3
    for r in records:
        _check_iob2(r)
    # the keys of before stay, the scheme is added
    assert set(records[0]) == {"line", "tokens", "tags", "scheme", "offsets", "spans"}
    nbest = json.loads(_ok(run_cli("ner", "-m", model, "--json", "--nbest", "3",
                                   input=b"Peter Blackburn visited Paris.\n")))
    _check_iob2(nbest)
    assert nbest["nbest"][0]["tags"] == nbest["tags"]
    for alt in nbest["nbest"]:
        _check_iob2({"scheme": "iob2", "tags": alt["tags"], "spans": alt["spans"]})
    # column files too; their column output keeps the training files' scheme
    columns = [json.loads(x) for x in _ok(run_cli("tag", "-m", model, "--format", "conll", "--json",
                                                   train)).splitlines()]
    assert any(r["spans"] for r in columns)
    for r in columns:
        _check_iob2(r)
    appended = [line.split()[-1] for line in _ok(run_cli("tag", "-m", model, "--format", "conll",
                                                         train)).splitlines() if line.strip()]
    assert "I-PER" in appended and "B-PER" not in appended
