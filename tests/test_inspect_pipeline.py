"""``fasttag inspect`` of a UD pipeline: a line per part, ``--part NAME``
inspecting one part exactly as the part saved on its own is inspected, and
the same from Python (:func:`fasttag.model.inspection.describe`)."""
import json
from pathlib import Path

import pytest

import fasttag
from fasttag.model import inspection

DATA = Path(__file__).resolve().parent.parent / "data"
NAMES = {"tok", "upos", "xpos", "feats", "lemma"}
KINDS = {"tok": "tokenizer", "upos": "tagger", "xpos": "tagger", "feats": "morphologizer", "lemma": "lemmatizer"}
FILLS = {"tok": "tokens, sentences", "upos": "UPOS", "xpos": "XPOS", "feats": "FEATS", "lemma": "LEMMA"}


@pytest.fixture(scope="module")
def pipe():
    return fasttag.load("en-ud")


@pytest.fixture(scope="module")
def order(pipe):
    """The part names in the order the pipeline runs them, the order inspect lists them."""
    names = list(inspection.parts_of(pipe))
    assert set(names) == NAMES and names[0] == "tok"
    assert repr(pipe) == f"Pipeline({', '.join(names)})"          # the pipeline's own order
    return names


def _part(pipe, name):
    return pipe.tokenizer if name == "tok" else pipe.parts[name]


def _one_error_line(r):
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 2 and r.stdout == b"", err
    assert len(err.splitlines()) == 1 and err.startswith("fasttag: error: ") and "Traceback" not in err, err
    return err


def test_cli_lists_every_part_with_its_kind_column_and_tag_count(run_cli, pipe, order):
    r = run_cli("inspect", "en-ud")
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines[0].split() == ["kind", "pipeline"]
    assert lines[1].split() == ["parts", "5:"] + order
    assert f"corpus            {pipe.meta['corpus']}" in lines and f"licence           {pipe.meta['licence']}" in lines
    at = next(i for i, line in enumerate(lines) if line.startswith("part "))
    assert lines[at].split() == ["part", "kind", "fills", "tags", "templates", "features", "weights", "decoder",
                                 "temperature"]
    rows = lines[at + 1:]
    assert [row.split()[0] for row in rows] == order
    for row in rows:
        name = row.split()[0]
        model = _part(pipe, name).model
        fills = FILLS[name].split()
        cells = row.split()
        assert cells[1] == KINDS[name] and cells[2:2 + len(fills)] == fills
        tags, templates, features, weights, decoder = cells[2 + len(fills):7 + len(fills)]
        assert int(tags) == len(model.tags) and int(templates) == len(model.templates.names)
        assert int(features.replace(",", "")) == len(model.emit)
        assert int(weights.replace(",", "")) == model.emit.n_weights and decoder == model.decoder
    # the real label sets: the UPOS tagger's 17 tags, the XPOS tagger's Penn tags, ...
    count = {row.split()[0]: int(row.split()[3]) for row in rows if row.split()[2] in ("UPOS", "XPOS")}
    assert count == {"upos": len(pipe.parts["upos"].tags), "xpos": len(pipe.parts["xpos"].tags)}
    assert count["upos"] == 17 and count["xpos"] > 40


def test_cli_json_of_a_pipeline(run_cli, pipe, order):
    r = run_cli("inspect", "en-ud", "--json")
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    desc = json.loads(r.stdout)
    assert list(desc) == ["kind", "parts", "missing", "meta"]
    assert desc["kind"] == "pipeline" and desc["missing"] == [] and desc["meta"]["licence"] == pipe.meta["licence"]
    assert list(desc["parts"]) == order
    for name, d in desc["parts"].items():
        part = _part(pipe, name)
        assert d["kind"] == KINDS[name] == part.kind and d["fills"] == FILLS[name]
        assert d["tags"] == list(part.model.tags) and d["templates"] == list(part.model.templates.names)
        assert d["features"] == len(part.model.emit) and "transitions" not in d
    assert desc["parts"]["upos"]["tags"] == list(pipe.parts["upos"].tags)
    assert set(desc["parts"]["upos"]["tags"]) == {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM",
                                                  "PART", "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X"}
    assert desc["parts"]["xpos"]["tags"] == list(pipe.parts["xpos"].tags) and "NN" in desc["parts"]["xpos"]["tags"]


@pytest.mark.parametrize("name", sorted(NAMES))
def test_cli_part_is_inspected_as_that_model_on_its_own(run_cli, pipe, tmp_path, name):
    path = tmp_path / f"{name}.ftm"
    _part(pipe, name).save(path)
    for extra in ([], ["--json"]):
        got = run_cli("inspect", "en-ud", "--part", name, *extra)
        want = run_cli("inspect", path, *extra)
        assert got.returncode == 0 and got.stderr == b"", got.stderr
        assert got.stdout == want.stdout
    desc = json.loads(got.stdout)
    assert desc["kind"] == KINDS[name] and desc["tags"] == list(_part(pipe, name).model.tags)
    assert len(desc["transitions"]) == len(desc["tags"]) + 2


def test_cli_part_reads_data_as_the_model_on_its_own(run_cli, pipe, tmp_path):
    path = tmp_path / "upos.ftm"
    pipe.parts["upos"].save(path)
    args = ["--data", DATA / "sample.conllu", "--top", "3", "--json"]
    got = run_cli("inspect", "en-ud", "--part", "upos", *args)
    assert got.returncode == 0, got.stderr
    assert got.stdout == run_cli("inspect", path, *args).stdout
    top = json.loads(got.stdout)["top_features"]
    assert set(top) == set(pipe.parts["upos"].tags) and all(len(v) <= 3 for v in top.values())


def test_cli_errors_name_the_flag(run_cli, order):
    err = _one_error_line(run_cli("inspect", "en-ud", "--part", "deprel"))
    assert err.startswith("fasttag: error: --part: ") and "'deprel'" in err and ", ".join(order) in err
    err = _one_error_line(run_cli("inspect", "en", "--part", "upos"))
    assert err.startswith("fasttag: error: --part: ") and "UD pipeline" in err and "tagger" in err
    err = _one_error_line(run_cli("inspect", "en-ud", "--data", DATA / "sample.conllu"))
    assert "--data" in err and "--part" in err
    err = _one_error_line(run_cli("inspect", "en-ud", "--part", "upos", "--top", "0"))
    assert "--top" in err


def test_single_models_are_inspected_as_before(run_cli):
    r = run_cli("inspect", "en")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines[0].split() == ["kind", "tagger"] and lines[1].startswith("tags              17: ADJ ADP")
    assert "transitions (row: previous tag, column: tag)" in lines and "parts" not in r.stdout.decode()


def test_a_pipeline_without_a_tokenizer_and_with_a_missing_part(run_cli, pipe, tmp_path):
    partial = fasttag.Pipeline(parts={"upos": pipe.parts["upos"], "lemma": pipe.parts["lemma"]},
                               meta={"missing": ["xpos"]})
    desc = inspection.describe(partial)
    assert set(desc["parts"]) == {"upos", "lemma"} and desc["missing"] == ["xpos"] and "missing" not in desc["meta"]
    with pytest.raises(ValueError, match="interrupted"):
        inspection.part_of(partial, "xpos")
    path = tmp_path / "partial.ftm"
    partial.save(path)
    r = run_cli("inspect", path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines[1].split() == ["parts", "2:"] + list(desc["parts"]) and lines[2].split() == ["missing", "xpos"]
    assert [line.split()[0] for line in lines[-2:]] == list(desc["parts"])
    err = _one_error_line(run_cli("inspect", path, "--part", "tok"))
    assert "'tok'" in err and ", ".join(desc["parts"]) in err


# ---------------------------------------------------------------- Python

def test_describe_accepts_a_pipeline_and_its_parts(pipe, order):
    desc = inspection.describe(pipe)
    assert desc["kind"] == "pipeline" and list(desc["parts"]) == order
    for name in NAMES:
        part = _part(pipe, name)
        assert inspection.part_of(pipe, name) is part
        alone = inspection.describe(part, with_transitions=False)
        assert inspection.describe(pipe, part=name, with_transitions=False) == alone
        assert desc["parts"][name] == {"kind": alone["kind"], "fills": FILLS[name],
                                       **{k: v for k, v in alone.items() if k != "kind"}}
        assert len(desc["parts"][name]["tags"]) == len(part.model.tags)
    whole = inspection.describe(pipe, part="feats")
    assert len(whole["transitions"]) == len(pipe.parts["feats"].model.tags) + 2
    text = inspection.report(desc)
    assert text.splitlines()[1].split() == ["parts", "5:"] + order
    assert inspection.report(inspection.describe(pipe, part="upos")) == \
        inspection.report(inspection.describe(pipe.parts["upos"]))
    with_data = inspection.describe(pipe, DATA / "sample.conllu", top=2, part="upos", with_transitions=False)
    assert set(with_data["top_features"]) == set(pipe.parts["upos"].tags)


def test_describe_errors(pipe, order):
    with pytest.raises(ValueError, match=f"no part 'deprel'.*{', '.join(order)}"):
        inspection.describe(pipe, part="deprel")
    with pytest.raises(ValueError, match="only a UD pipeline has parts"):
        inspection.describe(pipe.parts["upos"], part="upos")
    with pytest.raises(TypeError, match="one part of a pipeline"):
        inspection.describe(pipe, DATA / "sample.conllu")
