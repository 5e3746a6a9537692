"""One CoNLL-U validator: every reader (tagging, evaluation, training,
tokenizer and segmenter data, the document model) refuses the same
malformed files with one line naming the file, the line and the rule, and
reads the same valid ones.  The rules are the structural ones of the UD
format: word IDs 1..n in order, ranges that start at the next word and
cover existing words without overlap, empty nodes after their word, ten
fields, no whitespace-only form, no line break inside a field, the MISC
spacing items fasttag itself writes."""
import io

import pytest

import fasttag
from fasttag import Tokenizer
from fasttag.errors import InputError
from fasttag.text import formats as ftio
from fasttag.text.conllu import read_document
from fasttag.text.conll18 import evaluate_documents


def row(wid, form, misc="_"):
    return f"{wid}\t{form}\t_\tX\t_\t_\t_\t_\t_\t{misc}\n"


GOOD = row(1, "a") + row(2, "b") + "\n"

# (body, the line at fault, a phrase of the message)
MALFORMED = {
    "ids start at 2": (row(2, "a") + row(3, "b") + "\n", 1, "word ID 2 where 1 was expected"),
    "a gap": (row(1, "a") + row(3, "b") + "\n", 2, "word ID 3 where 2 was expected"),
    "a repeated id": (row(1, "a") + row(1, "b") + "\n", 2, "does not follow word ID 1"),
    "overlapping ranges": (row("1-2", "ab") + row("1-2", "ab") + row(1, "a") + row(2, "b") + "\n", 2,
                           "begins inside 1-2"),
    "nested ranges": (row("1-3", "abc") + row("2-3", "bc") + row(1, "a") + row(2, "b") + row(3, "c") + "\n", 2,
                      "begins inside 1-3"),
    "a range after its words": (row(1, "a") + row(2, "b") + row("1-2", "ab") + "\n", 3,
                                "does not start at the next word (3)"),
    "a range before a gap": (row(1, "a") + row("3-4", "cd") + row(2, "b") + "\n", 2,
                             "does not start at the next word (2)"),
    "a range past the end": (row(1, "a") + row("2-3", "bc") + row(2, "b") + "\n", 2, "lacks its words"),
    "a reversed range": (row("2-1", "ab") + row(1, "a") + "\n", 1, "malformed multiword-token range"),
    "an empty node out of place": (row(1, "a") + row("2.1", "e") + row(2, "b") + "\n", 2,
                                   "empty node 2.1 where 1.1 was expected"),
    "an empty node's count skips": (row(1, "a") + row("1.2", "e") + row(2, "b") + "\n", 2,
                                    "empty node 1.2 where 1.1 was expected"),
    "SpaceAfter=Yes": (row(1, "a", "SpaceAfter=Yes") + row(2, "b") + "\n", 1, "the only value CoNLL-U allows"),
    "SpacesAfter not whitespace": (row(1, "a", "SpacesAfter=x") + row(2, "b") + "\n", 1, "is not whitespace"),
    "a whitespace-only form": (row(1, "a") + row(2, "\u00a0 ") + "\n", 2, "FORM of only whitespace"),
    "a whitespace-only range": (row("1-2", " ") + row(1, "a") + row(2, "b") + "\n", 1, "FORM of only whitespace"),
    "a comment among words": (row(1, "a") + "# c\n" + row(2, "b") + "\n", 2, "comment line among word lines"),
    "nine fields": (row(1, "a") + "2\tb\t_\t_\t_\t_\t_\t_\t_\n\n", 2, "expected 10 tab-separated fields"),
    "an empty field": (row(1, "a") + "2\tb\t\t_\t_\t_\t_\t_\t_\t_\n\n", 2, "empty LEMMA field"),
    "U+2028 in a form": (row(1, "a") + row(2, "b\u2028c") + "\n", 2, "FORM holds the line break character U+2028"),
    "\\x85 in a lemma": (row(1, "a") + "2\tb\tb\x85\t_\t_\t_\t_\t_\t_\t_\n\n", 2, "LEMMA holds the line break"),
    "\\x0b in a form": (row(1, "a\x0b") + row(2, "b") + "\n", 1, "U+000B"),
    "\\x1c in misc": (row(1, "a", "X=\x1c") + row(2, "b") + "\n", 1, "MISC holds the line break character"),
}


def _write(tmp_path, body):
    path = tmp_path / "bad.conllu"
    path.write_text("# sent_id = 1\n" + body, encoding="utf-8")
    return path


READERS = {
    "read_conllu": lambda p: list(ftio.read_conllu(p)),
    "read": lambda p: list(ftio.read(p)),
    "read_document": read_document,
    "evaluate_conllu": lambda p: fasttag.evaluate_conllu(p, p),
    "tokenizer training text": lambda p: Tokenizer.train(p, epochs=1, verbose=False),
    "raw text of CoNLL-U": lambda p: list(ftio.read_raw_text(p)),
}


#: the readers that guess the format of their input from its first lines
GUESSING = ("raw text of CoNLL-U",)


@pytest.mark.parametrize("case", sorted(MALFORMED))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_refuses_the_same_malformed_file(tmp_path, case, reader):
    body, line, phrase = MALFORMED[case]
    path = _write(tmp_path, body)
    with pytest.raises(InputError) as info:
        READERS[reader](path)
    message = str(info.value)
    assert "\n" not in message
    if case == "nine fields" and reader in GUESSING:
        # the format is guessed from the first lines, and this one is not CoNLL-U's
        assert message == f"{path}: line 2 is a CoNLL-U word line but line 3 is not: a damaged CoNLL-U file?"
        return
    assert message.startswith(f"{path}:{line + 1}: ") and phrase in message, message


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_reads_valid_ids_ranges_and_empty_nodes(tmp_path, reader):
    body = ("# sent_id = 1\n# text = ab c\n" + row("0.1", "z") + row("1-2", "ab") + row(1, "a") + row(2, "b")
            + row("2.1", "e") + row("2.2", "f") + row(3, "c") + "\n"
            + "# text = d\n" + row(1, "d") + "\n")
    path = tmp_path / "good.conllu"
    path.write_text(body, encoding="utf-8")
    if reader == "tokenizer training text":
        pytest.skip("two sentences teach no tokenizer; read through read_document")
    READERS[reader](path)


def test_the_document_of_a_valid_file_keeps_ranges_and_empty_nodes(tmp_path):
    path = tmp_path / "good.conllu"
    path.write_text(row("0.1", "z") + row("1-2", "ab") + row(1, "a") + row(2, "b") + row("2.1", "e") + row(3, "c")
                    + "\n", encoding="utf-8")
    doc = read_document(path)
    (sent,) = doc.sentences
    assert [t.form for t in sent.tokens] == ["ab", "c"]
    assert [[w.form for w in t.words] for t in sent.tokens] == [["a", "b"], ["c"]]
    assert [f[0] for f in sent.empty_nodes] == ["0.1", "2.1"]
    scores = evaluate_documents(doc, read_document(path))
    assert scores["Words"].f1 == 1.0


def test_rows_are_split_from_the_lines(tmp_path):
    path = tmp_path / "x.conllu"
    path.write_text("# c\n" + row("1-2", "ab") + row(1, "a") + row(2, "b", "SpaceAfter=No") + "\n", encoding="utf-8")
    (sent,) = ftio.read_conllu(path)
    assert sent.rows == [row(1, "a").rstrip("\n").split("\t"), row(2, "b", "SpaceAfter=No").rstrip("\n").split("\t")]
    assert sent.rows[-1][9] == "SpaceAfter=No" and len(sent.rows) == 2 and sent.rows[0:1] == [sent.rows[0]]


def test_the_gold_file_is_blamed_for_what_raw_text_cannot_hold(tmp_path):
    gold = tmp_path / "gold.conllu"
    gold.write_text(row(1, "a") + row(2, "b\u2028c") + "\n", encoding="utf-8")
    system = tmp_path / "system.conllu"
    system.write_text(GOOD, encoding="utf-8")
    with pytest.raises(InputError, match=r"gold\.conllu:2: FORM holds the line break"):
        fasttag.evaluate_conllu(gold, system)


#: the reproducers that once gave a traceback or exit 0 (the readers above cover every rule)
CLI_CASES = ("overlapping ranges", "ids start at 2")


@pytest.mark.parametrize("case", CLI_CASES)
def test_the_commands_refuse_in_one_line_with_exit_2(run_cli, tmp_path, case):
    body, line, phrase = MALFORMED[case]
    path = _write(tmp_path, body)
    out = tmp_path / "out.conllu"
    for args in (("tag", "-m", "en-ud", "--to", "conllu", path, "-o", out), ("eval", "en-ud", path),
                 ("tag", path, "-o", out), ("train", "ud", path, "-o", tmp_path / "m.ftm", "--quiet")):
        proc = run_cli(*args)
        err = proc.stderr.decode()
        assert proc.returncode == 2, (args, err)
        assert len(err.strip().splitlines()) == 1 and f"{path}:{line + 1}:" in err and phrase in err, (args, err)
        assert not out.exists() and not (tmp_path / "m.ftm").exists()


def test_a_stream_is_named_as_such(tmp_path):
    body, _, phrase = MALFORMED["overlapping ranges"]
    with pytest.raises(InputError, match="begins inside"):
        list(ftio.read_conllu(io.StringIO(body)))
