"""The bundled English UD pipeline ``en-ud`` (issue 33): it loads by its
name, takes raw text to valid CoNLL-U with every column, fits the bundled
size limit, and the bundled names listed in errors include it."""
import json

import pytest

import fasttag
from fasttag import Pipeline
from test_ud_pipeline import check_conllu      # beside this file: pytest (import mode prepend) puts tests/ on sys.path

MAX_BYTES = 10 * 1024 * 1024
RAW = "I don't think so. The cats were sleeping on Mary's bed!\nShe walked home."


@pytest.fixture(scope="module")
def pipe():
    return fasttag.load("en-ud")


def test_the_bundled_pipeline_loads_with_every_part_and_its_licence(pipe):
    assert isinstance(pipe, Pipeline) and pipe.tokenizer is not None
    assert pipe.columns == ["upos", "xpos", "feats", "lemma"]
    assert pipe.meta["licence"] == "CC BY-SA 4.0" and "EWT" in pipe.meta["corpus"]
    assert set(pipe.meta["ewt_test"]) >= {"token_f1", "upos", "xpos", "ufeats", "alltags", "lemmas"}


def test_the_bundled_pipeline_fits_the_size_limit():
    assert fasttag.default_model_path("en-ud").stat().st_size <= MAX_BYTES


def test_raw_text_to_valid_conllu_with_every_column(pipe):
    text = pipe.to_conllu(RAW)
    sentences = check_conllu(text)
    assert len(sentences) == 3
    words = [w for _, rows, _ in sentences for w in rows]
    assert all(w[2] != "_" and w[3] != "_" and w[4] != "_" for w in words)
    assert ("do", "AUX") in [(w[2], w[3]) for w in words] and ("cat", "NOUN") in [(w[2], w[3]) for w in words]
    assert any(w[5] != "_" for w in words)


def test_the_command_line_tags_raw_text_with_it(run_cli, tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text(RAW + "\n", encoding="utf-8")
    r = run_cli("tag", "-m", "en-ud", raw, "--to", "conllu")
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    assert len(check_conllu(r.stdout.decode())) == 3
    records = [json.loads(x) for x in run_cli("tag", "-m", "en-ud", "--json", input=b"I don't know.\n").stdout.splitlines()]
    assert records[0]["multiword"] == [{"start": 1, "end": 3, "text": "don't"}]
    assert records[0]["lemma"][:3] == ["I", "do", "not"]


def test_conllu_without_a_model_is_the_bundled_pipelines(run_cli):
    """tag --to conllu asks for UD's columns: without -m it is en-ud's
    output (LEMMA and FEATS filled), not the UPOS tagger's one column."""
    r = run_cli("tag", "--to", "conllu", input=(RAW + "\n").encode())
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    assert r.stdout == run_cli("tag", "-m", "en-ud", "--to", "conllu", input=(RAW + "\n").encode()).stdout
    words = [line.split("\t") for line in r.stdout.decode().splitlines() if line[:1].isdigit()]
    assert any(w[2] != "_" for w in words) and any(w[5] != "_" for w in words)
    one_column = run_cli("tag", "-m", "en", "--to", "conllu", input=(RAW + "\n").encode()).stdout.decode()
    assert all(line.split("\t")[2] == "_" for line in one_column.splitlines() if line[:1].isdigit())


def test_the_bundled_names_in_errors_include_it(run_cli, tmp_path):
    with pytest.raises(FileNotFoundError, match="bundled: .*en-ud"):
        fasttag.load("en-US")
    r = run_cli("tag", "-m", "en-US", input=b"Hi.\n", cwd=tmp_path)
    assert r.returncode == 2 and b"en-ud" in r.stderr
    r = run_cli("tag", "--help")
    assert b"en-ud" in r.stdout
