"""Raw text in: the bundled tokenizer and NER model, tagging raw text from
the command line and from Python, --json, CoNLL-U columns, eval sanity,
and long lines in pieces."""
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasttag
from fasttag.text import rawtext

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = DATA / "sample.conllu"


@pytest.fixture(scope="module")
def tagger():
    return fasttag.load()


@pytest.fixture(scope="module")
def ner():
    return fasttag.load("en-ner")


@pytest.fixture(scope="module")
def tok():
    return fasttag.load("en-tok")


def ok(proc):
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode("utf-8")


def error_line(proc):
    """The one line of a clean error (exit 2, no traceback)."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    err = proc.stderr.decode()
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


def word_tags(line):
    return [tuple(tok.rsplit("/", 1)) for tok in line.split()]


# ---------------------------------------------------------------- bundled models

def test_bundled_models_record_corpus_and_terms():
    tok, ner = fasttag.load("en-tok"), fasttag.load("en-ner")
    assert tok.kind == "tokenizer" and "EWT" in tok.meta["corpus"] and tok.meta["licence"] == "CC BY-SA 4.0"
    assert ner.kind == "spans" and "CoNLL-2003" in ner.meta["corpus"]
    assert "research use only" in ner.meta["licence"]
    assert ner.feature_columns == [] and ner.meta.get("extras") == ["amb"]   # words only (and their classes)
    for name in ("en-tok", "en-ner"):
        assert fasttag.default_model_path(name).stat().st_size < 10 * 1024 * 1024


def test_bundled_confidences_are_calibrated():
    """Clear entities get confidences near 1 (a temperature fitted on
    gold of the wrong tags gave these two 0.44 and 0.47)."""
    ner = fasttag.load("en-ner")
    found = ner.spans(["Angela", "Merkel", "visited", "Paris", "."], with_confidence=True)
    assert [f[:3] for f in found] == [("PER", 0, 2), ("LOC", 3, 4)]
    assert all(p > 0.9 for *_, p in found), found
    assert 0.2 < ner.temperature < 0.6 and 5 < fasttag.load("en").temperature < 20


# ---------------------------------------------------------------- the command line

def test_raw_text_is_tokenized_and_tagged(run_cli):
    out = ok(run_cli("tag", input="I don't like it, do you?\n".encode()))
    pairs = word_tags(out)
    assert [w for w, _ in pairs] == ["I", "do", "n't", "like", "it", ",", "do", "you", "?"]
    assert pairs[0][1] == "PRON" and pairs[1][1] == "AUX" and pairs[2][1] == "PART"
    assert pairs[3][1] == "VERB" and pairs[5][1] == "PUNCT" and pairs[8][1] == "PUNCT"


def test_raw_text_is_split_into_sentences(run_cli):
    out = ok(run_cli("tag", input=b"I saw her. She did not see me.\n"))
    assert out.endswith("PUNCT\n\n")               # an empty line ends the input line
    lines = out.splitlines()[:-1]
    assert [[w for w, _ in word_tags(line)] for line in lines] == [
        ["I", "saw", "her", "."], ["She", "did", "not", "see", "me", "."]]


@pytest.mark.parametrize("text", ["Hello world\nGood morning\n\n",
                                  "the cat sat\na dog ran\nbirds fly south\nwe eat lunch\nthey read books\n",
                                  "a b\n\nc d\n\n"])
def test_lines_of_equal_word_counts_are_text_not_columns(run_cli, text):
    out = ok(run_cli("tag", input=text.encode()))
    words = [[w for w, _ in word_tags(line)] for line in out.splitlines() if line]    # empty lines end input lines
    assert words == [line.split() for line in text.splitlines() if line.strip()]


def test_pretokenized_keeps_whitespace_tokens(run_cli):
    out = ok(run_cli("tag", "--pretokenized", input=b"I don't like it , do you ?\nYes .\n"))
    lines = out.splitlines()
    assert [w for w, _ in word_tags(lines[0])] == "I don't like it , do you ?".split()
    assert [w for w, _ in word_tags(lines[1])] == ["Yes", "."]
    assert ok(run_cli("tag", "--format", "text", input=b"I don't like it , do you ?\nYes .\n")) == out


def test_pretokenized_output_lines_match_input_lines(run_cli):
    """A blank input line is a blank output line (JSON records, which name
    their line, skip it), so output pastes beside input."""
    text = b"I like it .\n\n  \nYes .\n"
    for command in (("tag",), ("tag", "-m", "en-ner")):
        lines = ok(run_cli(*command, "--pretokenized", input=text)).split("\n")
        assert len(lines) == 5 and lines[1] == lines[2] == lines[4] == "", lines
        assert [w for w, _ in word_tags(lines[3])] == ["Yes", "."]
    records = [json.loads(x) for x in ok(run_cli("tag", "--pretokenized", "--json", input=text)).splitlines()]
    assert [r["line"] for r in records] == [1, 4]


def blocks(out):
    """The blocks of plain raw-text output: each a list of sentence lines,
    closed by an empty line."""
    assert out == "" or out.endswith("\n\n") or out == "\n", out
    found, block = [], []
    for line in out.split("\n")[:-1]:
        if line:
            block.append(line)
        else:
            found.append(block)
            block = []
    assert block == []
    return found


#: input lines: blank ones (first, inside, last, of spaces) and lines of several sentences
LINES = ["", "I saw her. She did not see me.", "", "  ", "The end.", "One more. And two. And three!", "", ""]


@pytest.mark.parametrize("command", [("tag",), ("tag", "--threads", "2"), ("tag", "-m", "en-ner")])
def test_raw_text_output_has_a_block_per_input_line(run_cli, command):
    """docs/cli.md: each input line, blank ones included, is a block of its
    sentences one a line closed by an empty line; the blocks hold what the
    JSON records of that line hold."""
    text = "\n".join(LINES) + "\n"
    found = blocks(ok(run_cli(*command, input=text.encode())))
    assert len(found) == len(LINES)
    records = _json_lines(ok(run_cli(*command, "--json", input=text.encode())))
    for number, block in enumerate(found, start=1):
        assert block == [" ".join(f"{w}/{t}" for w, t in zip(r["tokens"], r["tags"]))
                         for r in records if r["line"] == number]
    assert [len(b) for b in found] == [0, 2, 0, 0, 1, 3, 0, 0]


def test_tokenize_output_has_a_block_per_input_line(run_cli):
    """The same blocks from ``tokenize``: blank lines before and between
    lines are kept."""
    text = "\n".join(LINES[:-2]) + "\n"
    found = blocks(ok(run_cli("tokenize", input=text.encode())))
    assert len(found) == len(LINES) - 2
    records = _json_lines(ok(run_cli("tokenize", "--json", input=text.encode())))
    for number, block in enumerate(found, start=1):
        assert block == [" ".join(r["tokens"]) for r in records if r["line"] == number]


def test_tokenize_keeps_trailing_blank_lines(run_cli):
    """Blank input lines at the end are blocks too (docs/cli.md), as in
    ``tag``: every input line maps to one block."""
    text = "\n".join(LINES) + "\n"
    found = blocks(ok(run_cli("tokenize", input=text.encode())))
    assert [len(b) for b in found] == [0, 2, 0, 0, 1, 3, 0, 0]
    records = _json_lines(ok(run_cli("tokenize", "--json", input=text.encode())))
    assert sorted({r["line"] for r in records}) == [2, 5, 6]      # JSON records name their line, none blank


def test_segment_and_pretokenized_output_has_a_line_per_input_line(run_cli):
    """Commands that do not cut lines into sentences write one line per line."""
    out = ok(run_cli("segment", input="\n我爱北京。今天天气很好。\n\n他来了\n\n".encode()))
    assert out.split("\n")[0] == "" and out.count("\n") == 5 and out.split("\n")[2] == ""
    out = ok(run_cli("tag", "--pretokenized", input=b"\nI saw her . She left .\n\n"))
    assert out.count("\n") == 3 and out.split("\n")[1].count("/") == 7


def test_conllu_is_read_when_unmistakable(run_cli):
    out = ok(run_cli("tag", SAMPLE))
    original = SAMPLE.read_text(encoding="utf-8").splitlines()
    tagged = out.splitlines()
    assert len(original) == len(tagged)
    for a, b in zip(original, tagged):
        fa, fb = a.split("\t"), b.split("\t")
        if len(fa) == 10 and fa[0].isdigit():
            assert fa[:3] == fb[:3] and fa[4:] == fb[4:] and fb[3] in fasttag.load().tags
        else:
            assert a == b


def test_tab_separated_text_that_is_not_conllu_is_raw_text(run_cli):
    # ten fields, but an ID that is not a CoNLL-U ID: raw text
    line = "x\t" + "\t".join("abcdefghi")
    out = ok(run_cli("tag", input=(line + "\n").encode()))
    assert [w for w, _ in word_tags(out)] == line.split()


def test_a_damaged_conllu_file_is_an_error_not_text(run_cli, tmp_path):
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("4\t"))
    lines[at] = lines[at].replace("\t", " ", 1)
    bad = tmp_path / "bad.conllu"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    err = error_line(run_cli("tag", bad))
    assert f"line {at + 1} is not" in err and "--format conllu" in err
    assert f"bad.conllu:{at + 1}:" in error_line(run_cli("tag", bad, "--format", "conllu"))


def test_a_column_file_is_never_guessed(run_cli, tmp_path):
    src = DATA / "sample_ner.conll"
    assert "--format conll" in error_line(run_cli("tag", "-m", "en-ner", src))
    out = ok(run_cli("tag", "-m", "en-ner", src, "--format", "conll"))
    first = next(line for line in out.splitlines() if line and not line.startswith("-DOCSTART-"))
    assert len(first.split()) == 5          # the four columns and the predicted tag


def test_ner_prints_entities_of_raw_text(run_cli):
    text = "Angela Merkel visited Paris on Monday.\n"
    out = ok(run_cli("ner", input=text.encode()))
    rows = [line.split("\t") for line in out.splitlines()]
    assert ["1", "0", "13", "PER", "Angela Merkel"] in rows
    assert ["1", "22", "27", "LOC", "Paris"] in rows
    for _, a, b, _, found in rows:
        assert text[int(a):int(b)] == found
    odd = "New  York met John\u00a0Smith and Angela\tMerkel .\n"       # spacing inside entities
    rows = [line.split("\t") for line in ok(run_cli("ner", "--pretokenized", input=odd.encode())).splitlines()]
    assert len(rows) == 3 and all(len(r) == 5 for r in rows), rows
    for _, a, b, _, found in rows:
        assert odd[int(a):int(b)].replace("\t", " ") == found           # as written; a tab would end the field
    # the same model through tag: word/TAG, IOB tags of the training files
    pairs = dict(word_tags(ok(run_cli("tag", "-m", "en-ner", input=text.encode()))))
    assert pairs["Merkel"].endswith("-PER") and pairs["Paris"].endswith("-LOC") and pairs["visited"] == "O"


def test_ner_refuses_a_pos_model(run_cli):
    assert "use 'fasttag tag'" in error_line(run_cli("ner", "-m", "en", input=b"Hello .\n"))


def _json_lines(text):
    return [json.loads(line) for line in text.splitlines()]


def _check_offsets(records, lines):
    for r in records:
        line = lines[r["line"] - 1]
        assert len(r["offsets"]) == len(r["tokens"])
        for token, (a, b) in zip(r["tokens"], r["offsets"]):
            assert 0 <= a < b <= len(line)
            assert line[a:b] == token or line[a:b] in ("don't", "won't", "can't")


def test_json_of_tag(run_cli):
    text = "I don't like it. Do you?\n\nThe end.\n"
    records = _json_lines(ok(run_cli("tag", "--json", input=text.encode())))
    assert [r["line"] for r in records] == [1, 1, 3]
    assert records[0]["tokens"] == ["I", "do", "n't", "like", "it", "."]
    assert all(set(r) - {"multiword"} == {"line", "tokens", "tags", "offsets"} for r in records)
    assert records[0]["multiword"] == [{"start": 1, "end": 3, "text": "don't"}]
    assert "multiword" not in records[1] and "multiword" not in records[2]
    assert all(len(r["tags"]) == len(r["tokens"]) for r in records)
    _check_offsets(records, text.splitlines())
    assert records[0]["offsets"][:3] == [[0, 1], [2, 4], [4, 7]]
    conllu = _json_lines(ok(run_cli("tag", "--json", SAMPLE)))
    assert len(conllu) == 3 and "offsets" not in conllu[0] and conllu[0]["tokens"][:3] == ["I", "do", "n't"]


def test_json_of_ner_and_span_models(run_cli):
    text = "Yesterday Angela Merkel met Barack Obama in New York.\n"
    for command in (("ner",), ("tag", "-m", "en-ner")):
        records = _json_lines(ok(run_cli(*command, "--json", input=text.encode())))
        assert len(records) == 1 and set(records[0]) == {"line", "tokens", "tags", "scheme", "offsets", "spans"}
        spans = records[0]["spans"]
        assert {(s["label"], s["text"]) for s in spans} >= {("PER", "Angela Merkel"), ("PER", "Barack Obama"),
                                                            ("LOC", "New York")}
        for s in spans:
            assert set(s) == {"start", "end", "label", "text", "start_char", "end_char"}
            assert text[s["start_char"]:s["end_char"]] == s["text"]
            assert records[0]["offsets"][s["start"]][0] == s["start_char"]
            assert records[0]["offsets"][s["end"] - 1][1] == s["end_char"]


def test_json_of_segment_and_tokenize(run_cli):
    text = "迈向充满希望的新世纪\n\n我爱 北京\n"
    records = _json_lines(ok(run_cli("segment", "--json", input=text.encode())))
    assert [r["line"] for r in records] == [1, 3] and set(records[0]) == {"line", "tokens", "offsets"}
    _check_offsets(records, text.splitlines())
    plain = ok(run_cli("segment", input=text.encode())).splitlines()
    assert [" ".join(r["tokens"]) for r in records] == [p for p in plain if p]

    text = "Hello there. How are you?\nFine.\n"
    records = _json_lines(ok(run_cli("tokenize", "--json", input=text.encode())))
    assert [r["tokens"] for r in records] == [["Hello", "there", "."], ["How", "are", "you", "?"], ["Fine", "."]]
    assert [r["line"] for r in records] == [1, 1, 2] and set(records[0]) == {"line", "tokens", "offsets"}
    _check_offsets(records, text.splitlines())
    assert ok(run_cli("tokenize", input=text.encode())) == "Hello there .\nHow are you ?\n\nFine .\n\n"


def test_options_that_do_not_apply_are_refused(run_cli, tmp_path):
    assert "--pretokenized" in error_line(run_cli("tag", "--pretokenized", "--format", "conllu", SAMPLE))
    assert "--tokenizer" in error_line(run_cli("tag", "--pretokenized", "--tokenizer", "en-tok", input=b"a\n"))
    assert "not a tokenizer" in error_line(run_cli("tag", "--tokenizer", "en", input=b"a\n"))
    assert "CoNLL-U" in error_line(run_cli("tag", "-m", "en-ner", SAMPLE))


# ---------------------------------------------------------------- CoNLL-U columns

@pytest.fixture(scope="module")
def xpos_model(tmp_path_factory, run_cli):
    model = tmp_path_factory.mktemp("xpos") / "xpos.ftm"
    ok(run_cli("train", "pos", SAMPLE, "-o", model, "--column", "xpos", "--epochs", "10", "--quiet"))
    return model


def _fields(text):
    return [line.split("\t") for line in text.splitlines() if line and line[0].isdigit()]


def test_an_xpos_model_fills_the_xpos_column(run_cli, xpos_model):
    original = _fields(SAMPLE.read_text(encoding="utf-8"))
    tagged = _fields(ok(run_cli("tag", "-m", xpos_model, SAMPLE)))
    assert len(original) == len(tagged)
    assert [f[:4] + f[5:] for f in tagged] == [f[:4] + f[5:] for f in original]     # only XPOS written
    words = [f for f in tagged if "-" not in f[0]]
    assert sum(f[4] == g[4] for f, g in zip(tagged, original) if "-" not in f[0]) > 0.9 * len(words)
    assert {f[4] for f in words} <= set(fasttag.load(xpos_model).tags)
    upos = _fields(ok(run_cli("tag", "-m", xpos_model, SAMPLE, "--column", "upos")))
    assert [f[4] for f in upos] == [f[4] for f in original]       # XPOS untouched when UPOS asked


@pytest.mark.parametrize("column", ["1", "0", "7", "-1"])
def test_a_non_tag_conllu_column_is_refused(run_cli, column, tmp_path):
    out = tmp_path / "out.conllu"
    err = error_line(run_cli("tag", SAMPLE, "--column", column, "-o", out))
    assert f"--column {column}" in err and "upos or xpos" in err
    assert not out.exists()


# ---------------------------------------------------------------- eval sanity

def test_eval_refuses_a_foreign_tag_set(run_cli, xpos_model):
    err = error_line(run_cli("eval", "en", SAMPLE, "--column", "xpos"))
    assert "sample.conllu" in err and "ADJ" in err and " CC " in err
    err = error_line(run_cli("eval", xpos_model, SAMPLE, "--column", "upos"))
    assert "gold" in err and "model" in err


@pytest.mark.parametrize("content", ["", "\n\n", "# just a comment\n"])
def test_eval_refuses_data_without_sentences(run_cli, tmp_path, content):
    empty = tmp_path / "empty.conllu"
    empty.write_text(content, encoding="utf-8")
    assert "no sentences" in error_line(run_cli("eval", "en", empty, "--format", "conllu"))
    ner_empty = tmp_path / "empty.conll"
    ner_empty.write_text(content, encoding="utf-8")
    assert "no sentences" in error_line(run_cli("eval", "en-ner", ner_empty))


# ---------------------------------------------------------------- Python

def test_tag_text_returns_tokens_with_tags_and_offsets(tagger):
    text = "I don't like it.\nDo you?"
    sents = tagger.tag_text(text)
    assert [[t.text for t in s] for s in sents] == [["I", "do", "n't", "like", "it", "."], ["Do", "you", "?"]]
    assert [t.tag for t in sents[0]] == tagger.tag(["I", "do", "n't", "like", "it", "."])
    for t in (t for s in sents for t in s):
        assert text[t.start:t.end] == t.text
    assert sents[1][0].start == text.index("Do")
    assert tagger.tag_text("   ") == [] and tagger.tag_text("") == []


def test_entities_of_raw_text(ner):
    text = "Yesterday Angela Merkel visited Paris. Then she flew to New York."
    found = ner.entities(text)
    assert ("PER", "Angela Merkel") in [(e.label, e.text) for e in found]
    assert {("LOC", "Paris"), ("LOC", "New York")} <= {(e.label, e.text) for e in found}
    for e in found:
        assert text[e.start:e.end] == e.text
    assert [e.start for e in found] == sorted(e.start for e in found)
    sents = ner.tag_text(text)
    assert len(sents) == 2 and [t.tag for t in sents[0]] == ner.tag([t.text for t in sents[0]])


def test_a_given_tokenizer_is_used(tagger, tok):
    assert tagger.tag_text("Hi there.", tokenizer=tok) == tagger.tag_text("Hi there.")
    with pytest.raises(TypeError):
        tagger.tag_text("Hi there.", tokenizer=42)
    with pytest.raises(fasttag.InputError):
        tagger.tag_text("Hi there.", tokenizer=fasttag.default_model_path("en"))


@pytest.mark.parametrize("which", ["tagger", "ner"])
def test_a_str_is_not_a_sentence(request, which):
    model = request.getfixturevalue(which)
    for call in (model.tag, model.tag_sents):
        with pytest.raises(TypeError):
            call("a string")
    with pytest.raises(TypeError):
        model.tag_text(b"bytes")
    with pytest.raises(TypeError):
        model.tag_text(["a", "list"])


# ---------------------------------------------------------------- long lines in pieces

@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=" \t\u00a0ab\u3000", max_size=30), max_size=6), st.integers(1, 5))
def test_pretokenized_pieces_are_the_words_of_each_line(lines, max_tokens):
    sents = list(rawtext.pretokenized_sentences(lines, max_tokens=max_tokens))
    for number, line in enumerate(lines, start=1):
        mine = [s for s in sents if s.line == number]
        assert [w for s in mine for w in s.words] == line.split()
        assert all(1 <= len(s.words) <= max_tokens for s in mine)
        assert all(line[a:b] == w for s in mine for w, (a, b) in zip(s.words, s.offsets))
        assert [s.ends_line for s in mine] == [False] * (len(mine) - 1) + [True] * bool(mine)


def test_long_pretokenized_lines_are_tagged_in_pieces(run_cli, tagger):
    ordinary = "The quick brown fox jumps over the lazy dog .\nI saw her duck .\n"
    out = ok(run_cli("tag", "--pretokenized", input=ordinary.encode()))
    assert [[t for _, t in word_tags(line)] for line in out.splitlines()] == \
        tagger.tag_sents([line.split() for line in ordinary.splitlines()])       # the unchunked path
    words = ("the dog saw a cat and the cat saw a dog " * 300).split()         # 3,300 words on one line
    out = ok(run_cli("tag", "--pretokenized", input=(" ".join(words) + "\n").encode()))
    pieces = [words[i:i + rawtext.MAX_TOKENS] for i in range(0, len(words), rawtext.MAX_TOKENS)]
    assert len(pieces) == 4
    lines = out.splitlines()
    assert len(lines) == 1                       # one sentence in, one line out, whatever its length
    assert [w for w, _ in word_tags(lines[0])] == words
    assert [t for _, t in word_tags(lines[0])] == [t for p in tagger.tag_sents(pieces) for t in p]
    two = " ".join(words) + "\nI saw her duck .\n"
    out = ok(run_cli("tag", "--pretokenized", input=two.encode()))
    assert [len(word_tags(line)) for line in out.splitlines()] == [len(words), 5]
    out = ok(run_cli("tag", "-m", "en-ner", "--pretokenized", input=two.encode()))     # a span tagger too
    assert [len(word_tags(line)) for line in out.splitlines()] == [len(words), 5]
    for model in ("en", "en-ner"):                 # JSON: one record per line too, offsets into the line
        records = [json.loads(x) for x in ok(run_cli("tag", "-m", model, "--pretokenized", "--json",
                                                     input=two.encode())).splitlines()]
        assert [(r["line"], len(r["tokens"]), len(r["tags"]), len(r["offsets"])) for r in records] == \
            [(1, len(words), len(words), len(words)), (2, 5, 5, 5)]
        first = " ".join(words)
        assert all(first[a:b] == w for w, (a, b) in zip(records[0]["tokens"], records[0]["offsets"]))
    records = [json.loads(x) for x in ok(run_cli("tag", "--pretokenized", "--json", "--nbest", "2",
                                                 input=two.encode())).splitlines()]
    assert [r["line"] for r in records] == [1, 1, 1, 1, 2]      # n-best lists are per piece


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="no /dev/stdout")
def test_output_to_dev_stdout_goes_to_standard_output(run_cli):
    out = ok(run_cli("tag", "--pretokenized", "-o", "/dev/stdout", input=b"I saw her duck .\n"))
    assert [w for w, _ in word_tags(out)] == ["I", "saw", "her", "duck", "."]


def test_a_long_raw_line_is_tokenized_as_the_tokenizer_does_in_one_piece(tok):
    line = "I don't know. " * 9000 + "Do you?"          # over 100,000 characters, so cut into pieces
    assert len(line) > 2 * 50_000
    sents = list(rawtext.raw_sentences([line], tok))
    expected = tok.tokenize(line, offsets=True)
    assert [list(zip(s.words, (a for a, _ in s.offsets), (b for _, b in s.offsets))) for s in sents] == \
        [[tuple(w) for w in s] for s in expected]
    assert all(s.line == 1 and s.text is line for s in sents)


def test_conllu_tag_columns_by_number(run_cli, tmp_path):
    """--column 4 is XPOS: the model trained on it fills XPOS, as one
    trained with --column xpos does; 3 and 4 name UPOS and XPOS when tagging."""
    model = tmp_path / "x4.ftm"
    ok(run_cli("train", "pos", SAMPLE, "-o", model, "--column", "4", "--epochs", "10", "--quiet"))
    assert fasttag.load(model).output_column() == "xpos"
    assert fasttag.load(model).output_column(3) == "upos"
    original = _fields(SAMPLE.read_text(encoding="utf-8"))
    tagged = _fields(ok(run_cli("tag", "-m", model, SAMPLE)))
    assert [f[:4] + f[5:] for f in tagged] == [f[:4] + f[5:] for f in original]     # only XPOS written
    piped = tmp_path / "x4_piped.ftm"                # the same training data through a pipe
    ok(run_cli("train", "pos", "-", "-o", piped, "--column", "4", "--epochs", "10", "--quiet",
               input=SAMPLE.read_bytes()))
    assert fasttag.load(piped).output_column() == "xpos"
    assert _fields(ok(run_cli("tag", "-m", piped, SAMPLE))) == tagged
    upos = _fields(ok(run_cli("tag", "-m", model, SAMPLE, "--column", "3")))
    assert [f[4] for f in upos] == [f[4] for f in original] and upos != original


# ---------------------------------------------------------------- the token level in JSON

def test_json_of_raw_text_gives_the_multiword_tokens(run_cli, tok):
    """--json of tokenize, tag and ner names the surface tokens of several
    words; the words and offsets are those of tokenize_lines."""
    lines = ["I don't like Google's new site. It's great.", "", "No contractions here.",
             "They'll say we can't, won't they?"]
    expected = [s for words in tok.tokenize_lines(lines, offsets=True) for s in words]
    spans = [s for sents in tok.tokenize_lines(lines, tokens=True) for s in sents]
    for command in (("tokenize",), ("tag",), ("ner",)):
        records = [json.loads(x) for x in ok(run_cli(*command, "--json", input="\n".join(lines).encode())).splitlines()]
        assert [r["tokens"] for r in records] == [[w for w, _, _ in s] for s in expected]
        assert [r["offsets"] for r in records] == [[[a, b] for _, a, b in s] for s in expected]
        for r, sent in zip(records, spans):
            multi = [t for t in sent if len(t.words) > 1]
            assert [m["text"] for m in r.get("multiword", [])] == [t.form for t in multi]
            for m in r.get("multiword", []):
                a, b = r["offsets"][m["start"]][0], r["offsets"][m["end"] - 1][1]
                assert lines[r["line"] - 1][a:b] == m["text"]
    assert any("multiword" in r for r in records) and not all("multiword" in r for r in records)
