"""fasttag.text.formats: streaming readers, verbatim writers, and their error reports."""
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasttag.text import formats as ftio
from fasttag.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE_CONLLU = DATA / "sample.conllu"
SAMPLE_CONLL = DATA / "sample.conll"

BROWN_STYLE = (
    "# source = ca01 (news)\n"
    "The\tat\n"
    "Fulton\tnp-tl\n"
    "County\tnn-tl\n"
    "#\t#\n"
    ".\t.\n"
    "\n"
    "# source = ca01 (news)\n"
    "It\tpps\n"
    "said\tvbd\n"
    ".\t.\n"
    "\n"
)

CONLLU_WORD = "{i}\tw{i}\tw{i}\tNOUN\tNN\t_\t0\troot\t0:root\t_"


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def conllu_text(n_words, start=1):
    return "".join(CONLLU_WORD.format(i=i) + "\n" for i in range(start, start + n_words))


def write_all(writer, sentences, *args, **kwargs):
    out = io.StringIO()
    for sentence, tags in sentences:
        writer(sentence, tags, out, *args, **kwargs)
    return out.getvalue()


# ---------------------------------------------------------------- CoNLL-U


def test_conllu_sample_words_tags_and_line_map():
    sents = list(ftio.read_conllu(SAMPLE_CONLLU))
    assert [len(s.words) for s in sents] == [7, 7, 10]
    first, second, third = sents
    # the multiword token "don't" is not a word; its parts are
    assert first.words == ["I", "do", "n't", "like", "green", "eggs", "."]
    assert "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_" in first.lines
    assert first.tags == ["PRON", "AUX", "PART", "VERB", "ADJ", "NOUN", "PUNCT"]
    assert first.start_line == 1 and first.lines[0] == "# newdoc id = sample-doc"
    # the empty node 4.1 is kept in lines but is not a word
    assert second.words == ["Sam", "reads", "books", "and", "Kim", "papers", "."]
    assert any(line.startswith("4.1\treads") for line in second.lines)
    assert second.start_line == 13
    assert third.words[0] == "Zoë" and third.words[5] == "#" and third.start_line == 24
    for s in sents:
        assert s.tags == [row[3] for row in s.rows]
        assert all(len(row) == 10 for row in s.rows)
        assert len(s.word_lines) == len(s.words)
        for word, row, li in zip(s.words, s.rows, s.word_lines):
            assert s.lines[li].split("\t") == row and row[1] == word
    xpos = list(ftio.read_conllu(SAMPLE_CONLLU, column="xpos"))
    assert xpos[0].tags == ["PRP", "VBP", "RB", "VB", "JJ", "NNS", "."]
    assert list(ftio.read_conllu(SAMPLE_CONLLU, column=2))[1].tags[1] == "read"


@pytest.mark.parametrize("column", ["upos", "xpos"])
def test_conllu_round_trip_gold_is_byte_identical(column):
    sents = [(s, s.tags) for s in ftio.read_conllu(SAMPLE_CONLLU, column)]
    assert write_all(ftio.write_conllu, sents, column=column).encode() == SAMPLE_CONLLU.read_bytes()


def test_conllu_write_changes_only_the_chosen_column():
    original = SAMPLE_CONLLU.read_text(encoding="utf-8").split("\n")
    sents = [(s, [f"T{i}" for i in range(len(s.words))]) for s in ftio.read_conllu(SAMPLE_CONLLU)]
    written = write_all(ftio.write_conllu, sents, column="upos").split("\n")
    assert len(written) == len(original)
    changed = 0
    for old, new in zip(original, written):
        old_f, new_f = old.split("\t"), new.split("\t")
        if len(old_f) == 10 and old_f[0].isdigit():
            assert new_f[:3] == old_f[:3] and new_f[4:] == old_f[4:]
            assert new_f[3].startswith("T")
            changed += 1
        else:
            assert new == old
    assert changed == 24


@pytest.mark.parametrize("bad_line, message", [
    ("1\tw1\tw1\tNOUN\tNN\t_\t0\troot\t_", "found 9"),                 # 9 fields
    ("1 w1 w1 NOUN NN _ 0 root _ _", "separated by tabs"),              # spaces, not tabs
    ("1\tw1\tw1\tNOUN\tNN\t_\t0\troot\t_\t_\t_", "found 11"),
    ("1\t\tw1\tNOUN\tNN\t_\t0\troot\t_\t_", "empty FORM"),
    ("1\tw1\tw1\t\tNN\t_\t0\troot\t_\t_", "empty UPOS"),
    ("x\tw1\tw1\tNOUN\tNN\t_\t0\troot\t_\t_", "malformed ID 'x'"),
    ("3-\tw1\t_\t_\t_\t_\t_\t_\t_\t_", "malformed ID '3-'"),
    ("1.2.3\tw1\t_\t_\t_\t_\t_\t_\t_\t_", "malformed ID '1.2.3'"),
    ("0\tw1\tw1\tNOUN\tNN\t_\t0\troot\t_\t_", "malformed ID '0'"),
    ("-1\tw1\tw1\tNOUN\tNN\t_\t0\troot\t_\t_", "malformed ID '-1'"),
    ("4-3\tw1\t_\t_\t_\t_\t_\t_\t_\t_", "malformed multiword-token range"),
    ("2\tw2\tw2\tNOUN\tNN\t_\t0\troot\t_\t_", "does not follow word ID 2"),  # repeated id
    ("1\tw1\tw1\tNOUN\tNN\t_\t0\troot\t_\t_", "does not follow word ID 2"),  # missing blank line
])
def test_conllu_bad_line_names_file_and_line(tmp_path, bad_line, message):
    # lines 1-2 comments, 3-4 words, 5 the bad line, 6 a good word
    content = "# sent_id = 1\n# text = w1 w2\n" + conllu_text(2) + bad_line + "\n" + \
        CONLLU_WORD.format(i=9) + "\n\n"
    path = write(tmp_path, "bad.conllu", content)
    with pytest.raises(InputError) as info:
        list(ftio.read_conllu(path))
    assert "bad.conllu:5: " in str(info.value)
    assert message in str(info.value)
    assert info.value.line == 5 and info.value.path.endswith("bad.conllu")


def test_conllu_invalid_utf8_names_line(tmp_path):
    good = conllu_text(3).encode()
    content = good + b"\n" + b"1\tcaf\xe9\tcafe\tNOUN\tNN\t_\t0\troot\t_\t_\n\n"
    path = write(tmp_path, "latin1.conllu", content)
    with pytest.raises(InputError, match=r"latin1\.conllu:5: invalid UTF-8: byte 0xe9"):
        list(ftio.read_conllu(path))
    # the error is raised lazily: the first sentence is read fine
    reader = ftio.read_conllu(path)
    assert next(reader).words == ["w1", "w2", "w3"]
    with pytest.raises(InputError):
        next(reader)


def test_conllu_only_multiword_lines_is_an_error(tmp_path):
    path = write(tmp_path, "mwt.conllu", conllu_text(2) + "\n# c\n1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n\n")
    with pytest.raises(InputError, match=r"mwt\.conllu:5: sentence has no words"):
        list(ftio.read_conllu(path))


def test_conllu_no_final_blank_line_and_many_blank_lines(tmp_path):
    content = "\n\n" + conllu_text(2) + "\n\n\n\n" + conllu_text(3) + "\n\n" + conllu_text(1)
    sents = list(ftio.read_conllu(write(tmp_path, "x.conllu", content)))
    assert [len(s.words) for s in sents] == [2, 3, 1]
    assert [s.start_line for s in sents] == [3, 9, 14]


def test_conllu_comment_only_block_is_carried_to_next_sentence(tmp_path):
    content = "# global.columns = ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC\n\n" + \
        "# sent_id = 1\n" + conllu_text(2) + "\n"
    path = write(tmp_path, "carry.conllu", content)
    (s,) = list(ftio.read_conllu(path))
    assert s.start_line == 1 and s.lines[1] == "" and s.words == ["w1", "w2"]
    assert write_all(ftio.write_conllu, [(s, s.tags)]) == content


def test_conllu_bom_and_crlf(tmp_path):
    content = "\ufeff# sent_id = 1\r\n" + conllu_text(2).replace("\n", "\r\n") + "\r\n"
    (s,) = list(ftio.read_conllu(write(tmp_path, "crlf.conllu", content)))
    assert s.lines[0] == "# sent_id = 1"
    assert not any("\r" in line or "\ufeff" in line for line in s.lines)
    assert not any("\r" in f for row in s.rows for f in row)
    assert s.tags == ["NOUN", "NOUN"] and s.rows[1][9] == "_"


def test_stray_carriage_return_is_an_error(tmp_path):
    path = write(tmp_path, "cr.conllu", conllu_text(1) + "2\tw\rx\tw\tX\tX\t_\t0\troot\t_\t_\n")
    with pytest.raises(InputError, match=r"cr\.conllu:2: stray carriage return"):
        list(ftio.read_conllu(path))


def test_long_sentence_conllu(tmp_path):
    content = conllu_text(10_000) + "\n"
    path = write(tmp_path, "long.conllu", content)
    (s,) = list(ftio.read_conllu(path))
    assert len(s.words) == 10_000 and s.words[-1] == "w10000"
    assert write_all(ftio.write_conllu, [(s, s.tags)]) == content


def test_bad_conllu_column_argument():
    with pytest.raises(ValueError):
        ftio.read_conllu(SAMPLE_CONLLU, column="pos")
    with pytest.raises(ValueError):
        ftio.read_conllu(SAMPLE_CONLLU, column=10)


# ---------------------------------------------------------------- CoNLL columns


def test_conll_sample_docstart_and_hash_token():
    sents = list(ftio.read_conll(SAMPLE_CONLL))
    assert [len(s.words) for s in sents] == [6, 8, 2, 7]
    assert not any(w.startswith("-DOCSTART-") for s in sents for w in s.words)
    # -DOCSTART- and the blank line after it belong to the next sentence's lines
    assert sents[0].lines[:2] == ["-DOCSTART- -X- -X- O", ""] and sents[0].start_line == 1
    assert sents[0].word_lines[0] == 2
    assert sents[2].lines[:2] == ["-DOCSTART- -X- -X- O", ""] and sents[2].start_line == 19
    # "# # I-NP O" has the file's column count: a word, not a comment
    assert sents[1].words[:2] == ["#", "5"] and sents[1].rows[0] == ["#", "#", "I-NP", "O"]
    assert sents[0].tags == ["I-PER", "O", "I-LOC", "O", "O", "O"]
    assert [s.tags for s in ftio.read_conll(SAMPLE_CONLL, tag_column=1)][3][5] == "NNPS"
    assert [s.tags for s in ftio.read_conll(SAMPLE_CONLL, tag_column=None)] == [None] * 4
    assert list(ftio.read_conll(SAMPLE_CONLL, word_column=1, tag_column=2))[0].words[0] == "NNP"


def test_conll_round_trip_replace_is_byte_identical():
    sents = [(s, s.tags) for s in ftio.read_conll(SAMPLE_CONLL)]
    out = write_all(ftio.write_conll, sents, mode="replace")
    assert out.encode() == SAMPLE_CONLL.read_bytes()
    sents = [(s, ["X"] * len(s.words)) for s in ftio.read_conll(SAMPLE_CONLL, tag_column=2)]
    out = write_all(ftio.write_conll, sents, mode="replace", column=2)
    expected = [line if len(line.split()) != 4 or line.startswith("-DOCSTART-")
                else " ".join(line.split()[:2] + ["X"] + line.split()[3:])
                for line in SAMPLE_CONLL.read_text().split("\n")]
    assert out.split("\n") == expected


def test_conll_append_mode_reproduces_the_tag_column(tmp_path):
    # drop the NER column, read without tags, append the gold NER tags
    lines = SAMPLE_CONLL.read_text().split("\n")
    stripped = "\n".join(line.rsplit(" ", 1)[0] if len(line.split()) == 4 and
                         not line.startswith("-DOCSTART-") else line for line in lines)
    gold = [s.tags for s in ftio.read_conll(SAMPLE_CONLL)]
    sents = list(ftio.read_conll(write(tmp_path, "three.conll", stripped), tag_column=None))
    out = write_all(ftio.write_conll, zip(sents, gold), mode="append")
    assert out.encode() == SAMPLE_CONLL.read_bytes()


def test_brown_style_tab_file_with_source_comments(tmp_path):
    path = write(tmp_path, "brown.conll", BROWN_STYLE)
    sents = list(ftio.read_conll(path))
    assert [s.words for s in sents] == [["The", "Fulton", "County", "#", "."], ["It", "said", "."]]
    assert sents[0].tags == ["at", "np-tl", "nn-tl", "#", "."]
    assert sents[0].lines[0] == "# source = ca01 (news)" and sents[0].word_lines[0] == 1
    assert sents[1].start_line == 8
    assert ftio.guess_format(path) == "conll"
    assert write_all(ftio.write_conll, [(s, s.tags) for s in sents], mode="replace") == BROWN_STYLE
    # appending uses the tab separator the input used
    out = io.StringIO()
    ftio.write_conll(sents[1], ["A", "B", "C"], out)
    assert out.getvalue() == "# source = ca01 (news)\nIt\tpps\tA\nsaid\tvbd\tB\n.\t.\tC\n\n"


def test_hash_token_on_the_first_line_of_a_space_file(tmp_path):
    # the reference line comes after the "#" line: it is still recognised as a word
    content = "# # B-NP\n5 CD I-NP\n\n# comment with five columns\nHe PRP B-NP\n\n"
    sents = list(ftio.read_conll(write(tmp_path, "c2000.txt", content)))
    assert [s.words for s in sents] == [["#", "5"], ["He"]]
    assert sents[1].lines[0] == "# comment with five columns"
    assert sents[0].start_line == 1 and sents[0].word_lines == [0, 1]


def test_comment_with_wrong_separator_is_a_comment(tmp_path):
    # two space-separated columns in a tab file: the separator differs, so a comment
    content = "dog\tnn\n# note\ncat\tnn\n\n"
    (s,) = list(ftio.read_conll(write(tmp_path, "tabs.conll", content)))
    assert s.words == ["dog", "cat"] and s.lines[1] == "# note"


def test_conll_runs_of_spaces_and_replace_keeps_spacing(tmp_path):
    content = "The  DT   B-NP\ncat NN I-NP  \n\n"
    (s,) = list(ftio.read_conll(write(tmp_path, "spaces.conll", content)))
    assert s.rows == [["The", "DT", "B-NP"], ["cat", "NN", "I-NP"]]
    out = io.StringIO()
    ftio.write_conll(s, ["X", "Y"], out, mode="replace", column=1)
    assert out.getvalue() == "The  X   B-NP\ncat Y I-NP  \n\n"


@pytest.mark.parametrize("content, line, message", [
    ("a DT B-NP\nb NN\n\n", 2, "expected 3 columns (as on line 1), found 2"),
    ("a DT B-NP\n\nb NN I-NP O\n", 3, "found 4"),
    ("# source = x\na\tDT\n\tNN\n", 3, "empty column 1"),
    ("a\tDT\nb\t\n", 2, "empty column 2"),
])
def test_conll_bad_lines(tmp_path, content, line, message):
    path = write(tmp_path, "bad.conll", content)
    with pytest.raises(InputError) as info:
        list(ftio.read_conll(path))
    assert f"bad.conll:{line}: " in str(info.value) and message in str(info.value)


def test_conll_tag_column_out_of_range(tmp_path):
    path = write(tmp_path, "two.conll", "-DOCSTART- O\n\na DT\n")
    with pytest.raises(InputError, match=r"two\.conll:3: tag column 5 is out of range"):
        list(ftio.read_conll(path, tag_column=5))
    assert list(ftio.read_conll(path, tag_column=-1))[0].tags == ["DT"]
    with pytest.raises(InputError, match=r"two\.conll:3: the word column and the tag column are both column 0"):
        list(ftio.read_conll(path, tag_column=-2))


def test_conll_trailing_docstart_and_crlf_bom(tmp_path):
    content = "\ufeff-DOCSTART- -X- O\r\n\r\nEU NNP B-ORG\r\n\r\n-DOCSTART- -X- O\r\n\r\n"
    sents = list(ftio.read_conll(write(tmp_path, "crlf.conll", content)))
    assert len(sents) == 1
    assert sents[0].lines == ["-DOCSTART- -X- O", "", "EU NNP B-ORG"]
    assert sents[0].rows == [["EU", "NNP", "B-ORG"]]


def test_long_sentence_conll(tmp_path):
    content = "".join(f"w{i} NN O\n" for i in range(10_000)) + "\n"
    (s,) = list(ftio.read_conll(write(tmp_path, "long.conll", content)))
    assert len(s.words) == 10_000 and s.tags == ["O"] * 10_000
    assert write_all(ftio.write_conll, [(s, s.tags)], mode="replace") == content


# ---------------------------------------------------------------- text


def test_read_text_and_write_text(tmp_path):
    content = "\ufeff共同  创造  美好\r\n\r\n  \nThe cat\tsat .\n"
    sents = list(ftio.read_text(write(tmp_path, "zh.txt", content)))
    assert [s.words for s in sents] == [["共同", "创造", "美好"], ["The", "cat", "sat", "."]]
    assert [s.start_line for s in sents] == [1, 4] and sents[0].tags is None
    assert sents[1].rows == [["The"], ["cat"], ["sat"], ["."]]
    assert sents[1].lines == ["The cat\tsat ."] and sents[1].word_lines == [0, 0, 0, 0]
    out = io.StringIO()
    ftio.write_text(sents[0], None, out)
    ftio.write_text(sents[1], ["DT", "NN", "VBD", "."], out)
    assert out.getvalue() == "共同 创造 美好\nThe/DT cat/NN sat/VBD ./.\n"


def test_read_text_invalid_utf8(tmp_path):
    path = write(tmp_path, "bad.txt", b"ok line\nsecond\nbad \xff\xfe here\n")
    with pytest.raises(InputError, match=r"bad\.txt:3: invalid UTF-8"):
        list(ftio.read_text(path))


@pytest.mark.parametrize("reader", [ftio.read_conllu, ftio.read_conll, ftio.read_text, ftio.read])
@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"\xef\xbb\xbf"])
def test_empty_files_yield_nothing(tmp_path, reader, content):
    assert list(reader(write(tmp_path, "empty", content))) == []


# ---------------------------------------------------------------- sources


def test_binary_and_text_file_objects():
    expected = [s.words for s in ftio.read_conllu(SAMPLE_CONLLU)]
    with open(SAMPLE_CONLLU, "rb") as f:
        assert [s.words for s in ftio.read_conllu(f)] == expected
        assert not f.closed
    with open(SAMPLE_CONLLU, encoding="utf-8") as f:
        assert [s.words for s in ftio.read_conllu(f)] == expected
    data = SAMPLE_CONLLU.read_bytes()
    assert [s.words for s in ftio.read_conllu(io.BytesIO(data))] == expected
    assert [s.words for s in ftio.read_conllu(io.StringIO(data.decode()))] == expected
    assert [s.words for s in ftio.read_conllu(os.fsencode(SAMPLE_CONLLU))] == expected
    assert [s.words for s in ftio.read_conllu(str(SAMPLE_CONLLU))] == expected


def test_text_file_object_after_reading_a_header(tmp_path):
    # the text layer reads ahead; reading must continue where the caller stopped
    path = write(tmp_path, "h.conll", "HEADER LINE\n" + "a DT O\nb NN O\n\n" * 2000)
    with open(path, encoding="utf-8") as f:
        assert f.readline() == "HEADER LINE\n"
        sents = list(ftio.read_conll(f))
    assert len(sents) == 2000 and sents[0].start_line == 1 and sents[0].words == ["a", "b"]


def test_text_file_object_iterated_with_next(tmp_path):
    # tell() is disabled after next(f): the reader stays on the text layer
    path = write(tmp_path, "n.conll", "HEADER LINE\n" + "a DT O\nb NN O\n\n" * 2000)
    with open(path, encoding="utf-8") as f:
        assert next(f) == "HEADER LINE\n"
        sents = list(ftio.read_conll(f))
    assert len(sents) == 2000 and sents[-1].words == ["a", "b"]


def test_error_names_of_streams(tmp_path):
    bad = b"1\tw\tw\tX\tX\t_\t0\troot\t_\n"
    with pytest.raises(InputError, match=r"^<input>:1: "):
        list(ftio.read_conllu(io.BytesIO(bad)))
    path = write(tmp_path, "named.conllu", bad)
    with open(path, "rb") as f, pytest.raises(InputError, match=r"named\.conllu:1: "):
        list(ftio.read_conllu(f))
    with pytest.raises(InputError, match=r"^<input>:2: invalid UTF-8"):
        list(ftio.read_text(io.BytesIO(b"fine\n\xc3(\n")))


def test_stdin_is_read_as_utf8_and_named(tmp_path):
    script = ("import sys\nfrom fasttag.text import formats as ftio\n"
              "for s in ftio.read(sys.stdin): print(len(s.words))\n")
    import fasttag
    env = dict(os.environ, PYTHONPATH=str(Path(fasttag.__file__).resolve().parents[1]))
    ok = subprocess.run([sys.executable, "-c", script], input=SAMPLE_CONLLU.read_bytes(),
                        capture_output=True, env=env)
    assert ok.returncode == 0 and ok.stdout.split() == [b"7", b"7", b"10"]
    bad = subprocess.run([sys.executable, "-c", script], input=b"one line\ntwo \xe9\n",
                         capture_output=True, env=env)
    assert bad.returncode != 0 and b"<stdin>:2: invalid UTF-8" in bad.stderr


def test_pipe_stream_read_guesses_without_losing_lines():
    r, w = os.pipe()
    with open(w, "wb") as wf:
        wf.write(SAMPLE_CONLL.read_bytes())
    with open(r, "rb") as rf:
        with pytest.raises(ValueError):
            ftio.guess_format(rf)
        sents = list(ftio.read(rf))
    assert [len(s.words) for s in sents] == [6, 8, 2, 7]


def test_guess_format_and_read_dispatch(tmp_path):
    assert ftio.guess_format(SAMPLE_CONLLU) == "conllu"
    assert ftio.guess_format(SAMPLE_CONLL) == "conll"
    text = write(tmp_path, "t.txt", "The cat sat .\nA dog ran .\n")
    assert ftio.guess_format(text) == "text"
    assert ftio.guess_format(write(tmp_path, "e.txt", "")) == "text"
    assert ftio.guess_format(write(tmp_path, "p.txt", "The cat sat .\n\nA dog ran .\n")) == "text"
    assert ftio.guess_format(write(tmp_path, "c.txt", "# # B-NP\nx NN I-NP\n\n")) == "conll"
    assert ftio.guess_format(write(tmp_path, "d.txt", "".join(f"w{i} NN\n" for i in range(6)))) == "conll"
    assert [s.words for s in ftio.read(text)] == [["The", "cat", "sat", "."], ["A", "dog", "ran", "."]]
    assert list(ftio.read(SAMPLE_CONLLU, column="xpos"))[0].tags[0] == "PRP"
    assert list(ftio.read(SAMPLE_CONLL, column=1))[0].tags[0] == "NNP"
    assert list(ftio.read(SAMPLE_CONLL, format="text"))[0].words == ["-DOCSTART-", "-X-", "-X-", "O"]
    with open(SAMPLE_CONLLU, "rb") as f:
        f.readline()
        pos = f.tell()
        assert ftio.guess_format(f) == "conllu" and f.tell() == pos
    with pytest.raises(ValueError):
        ftio.read(SAMPLE_CONLL, format="conll", column="upos")
    with pytest.raises(ValueError):
        ftio.read(SAMPLE_CONLL, format="csv")


# ---------------------------------------------------------------- writers


def test_writers_check_tags_and_write_binary():
    s = next(ftio.read_conllu(SAMPLE_CONLLU))
    with pytest.raises(InputError, match="6 tags for a sentence of 7 words"):
        ftio.write_conllu(s, ["X"] * 6, io.StringIO())
    with pytest.raises(InputError, match="invalid tag"):
        ftio.write_conllu(s, ["X"] * 6 + ["a\tb"], io.StringIO())
    out = io.BytesIO()
    ftio.write_conllu(s, None, out)
    assert out.getvalue() == SAMPLE_CONLLU.read_bytes().split(b"\n\n")[0] + b"\n\n"
    c = next(ftio.read_conll(SAMPLE_CONLL))
    with pytest.raises(InputError, match="must not contain spaces"):
        ftio.write_conll(c, ["B PER"] + ["O"] * 5, io.StringIO())
    with pytest.raises(ValueError):
        ftio.write_conll(c, c.tags, io.StringIO(), mode="insert")


token = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")),
                min_size=1, max_size=6).filter(
    # a byte-order mark opening a file is read as one, not as a token
    lambda t: not t.startswith(("#", "-DOCSTART-", "\ufeff")))
sentence = st.lists(st.tuples(token, token), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(sentence, max_size=5), st.sampled_from(["\t", " "]))
def test_property_conll_and_conllu_round_trip(sents, sep):
    conll = "".join("".join(f"{w}{sep}{t}\n" for w, t in s) + "\n" for s in sents)
    back = list(ftio.read_conll(io.BytesIO(conll.encode())))
    assert [list(zip(s.words, s.tags)) for s in back] == sents
    assert write_all(ftio.write_conll, [(s, s.tags) for s in back], mode="replace") == conll
    conllu = "".join("".join(f"{i}\t{w}\t_\t{t}\t_\t_\t0\troot\t_\t_\n"
                             for i, (w, t) in enumerate(s, 1)) + "\n" for s in sents)
    back = list(ftio.read(io.StringIO(conllu)))
    assert [list(zip(s.words, s.tags)) for s in back] == sents
    assert write_all(ftio.write_conllu, [(s, s.tags) for s in back]) == conllu


# ---------------------------------------------------------------- real corpora
# These stream (count, then drop each sentence): holding a million rows in
# lists would mostly measure Python's garbage collector.


def test_ewt_train_counts_and_round_trip(shared_data):
    # how fast it reads belongs in benchmarks/, not in an assertion: a bound
    # on CPU seconds fails on a slower or busier machine without a bug
    path = shared_data / "en_ewt" / "en_ewt-ud-train.conllu"
    n_sents = n_words = 0
    for s in ftio.read(path):
        n_sents += 1
        n_words += len(s.words)
    assert (n_sents, n_words) == (12_544, 204_577)
    out = io.BytesIO()
    multiword = empty = 0
    for s in ftio.read_conllu(path, column="xpos"):
        ids = [line.split("\t", 1)[0] for line in s.lines if line[0] != "#"]
        multiword += sum("-" in i for i in ids)
        empty += sum("." in i for i in ids)
        ftio.write_conllu(s, s.tags, out, column="xpos")
    assert multiword > 0 and empty > 0
    assert out.getvalue() == path.read_bytes()


def test_conll2000_train(shared_data):
    path = shared_data / "conll2000" / "train.txt"
    n_words = hashes = 0
    for s in ftio.read(path):
        n_words += len(s.words)
        hashes += s.words.count("#")   # the "# # ..." lines are words
        assert all(len(row) == 3 for row in s.rows)
    assert n_words == 211_727 and hashes == 36


def test_conll2003_train_has_no_docstart_sentence(shared_data):
    path = shared_data / "conll2003" / "eng.train"
    out = io.StringIO()
    n_sents = n_words = docstarts = 0
    for s in ftio.read_conll(path):
        assert "-DOCSTART-" not in s.words
        n_sents += 1
        n_words += len(s.words)
        docstarts += s.lines[0].startswith("-DOCSTART-")
        ftio.write_conll(s, s.tags, out, mode="replace")
    assert (n_sents, n_words, docstarts) == (14_041, 203_621, 946)
    assert out.getvalue().encode() == path.read_bytes()


def test_brown(shared_data):
    n_sents = n_words = 0
    for s in ftio.read(shared_data / "brown" / "brown.conll"):
        n_sents += 1
        n_words += len(s.words)
        assert s.lines[0].startswith("# source = ") and s.word_lines[0] == 1
    assert (n_sents, n_words) == (57_340, 1_161_192)
