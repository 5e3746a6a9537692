"""CoNLL-U documents (fasttag.text.conllu): what the reader keeps (comments,
tokens with offsets, words, multiword ranges, empty nodes), what the writer
writes (checked by a strict validator written here, and read back by
UDPipe's and spaCy's readers), and round trips of the real UD files."""
import io
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from fasttag.errors import InputError
from fasttag.text.goldtext import SurfaceToken, read_conllu_text
from fasttag.text.conllu import UDDocument, UDWord, format_document, read_document, write_document

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample_tok.conllu"


# ---------------------------------------------------------------- a strict validator

_ESC = {"s": " ", "t": "\t", "n": "\n", "r": "\r", "p": "|", "\\": "\\"}


def _spaces(value):
    return re.sub(r"\\(u[0-9A-Fa-f]{4}|.)", lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) == 5
                  else _ESC[m.group(1)], value)


def validate(text):
    """Fail unless ``text`` is strictly valid CoNLL-U: LF lines, sentences
    of comments then word lines, each followed by one blank line; 10
    tab-separated non-empty fields; word IDs 1, 2, ... with ranges a-b that
    start at the next word and are followed by exactly their words, empty
    nodes n.k after word n; range lines with only FORM and MISC; SpaceAfter
    (only "No") and SpacesAfter only on a token's line, never on a word of
    a range or an empty node; one ``# text`` per sentence, equal to the
    tokens' forms with the spacing MISC gives; unique sent_ids.  Returns
    the number of sentences."""
    assert "\r" not in text and text.endswith("\n"), "LF line ends, the last line terminated"
    assert text.endswith("\n\n"), "a blank line after the last sentence"
    blocks = text[:-2].split("\n\n")
    sent_ids = set()
    for b, block in enumerate(blocks):
        lines = block.split("\n")
        where = f"sentence {b + 1}"
        comments = [ln for ln in lines if ln.startswith("#")]
        words = lines[len(comments):]
        assert lines[:len(comments)] == comments, f"{where}: comments come first"
        assert words, f"{where}: no word lines"
        texts = [c for c in comments if c.startswith("# text = ")]
        assert len(texts) == 1, f"{where}: one # text"
        for c in comments:
            if re.match(r"# new(doc|par)( |=|$)", c):
                assert re.fullmatch(r"# new(doc|par)( id = \S.*)?", c), c
            if c.startswith("# sent_id"):
                m = re.fullmatch(r"# sent_id = (\S+)", c)
                assert m and m.group(1) not in sent_ids, c
                sent_ids.add(m.group(1))
        next_id, range_end, last_empty = 1, 0, (0, 0)
        rebuilt, spacing = [], None
        for line in words:
            fields = line.split("\t")
            assert len(fields) == 10, f"{where}: 10 fields in {line!r}"
            assert all(fields), f"{where}: an empty field in {line!r}"
            for i in (0, 3, 4, 5, 6, 7, 8):
                assert " " not in fields[i], f"{where}: a space in field {i + 1} of {line!r}"
            wid, misc = fields[0], fields[9]
            items = [] if misc == "_" else misc.split("|")
            spacing_items = [x for x in items if x.startswith(("SpaceAfter=", "SpacesAfter="))]
            assert len(spacing_items) <= 1, line
            for x in spacing_items:
                assert x == "SpaceAfter=No" or x.startswith("SpacesAfter="), line
            m = re.fullmatch(r"([1-9][0-9]*)-([1-9][0-9]*)", wid)
            e = re.fullmatch(r"(0|[1-9][0-9]*)\.([1-9][0-9]*)", wid)
            if m:
                a, z = int(m.group(1)), int(m.group(2))
                assert a == next_id and z > a and range_end < next_id, f"{where}: range {wid}"
                assert fields[2:9] == ["_"] * 7, f"{where}: a range line has only FORM and MISC"
                range_end = z
                token_line = True
            elif e:
                n, k = int(e.group(1)), int(e.group(2))
                assert n == next_id - 1, f"{where}: empty node {wid} after word {next_id - 1}"
                assert (n, k) == ((last_empty[0], last_empty[1] + 1) if last_empty[0] == n else (n, 1)), wid
                last_empty = (n, k)
                assert not spacing_items, f"{where}: spacing on an empty node"
                continue
            else:
                assert wid == str(next_id), f"{where}: word {wid} where {next_id} was expected"
                next_id += 1
                token_line = next_id - 1 > range_end
                head = fields[6]
                assert head == "_" or 0 <= int(head), f"{where}: HEAD {head}"
            if not token_line:
                assert not spacing_items, f"{where}: SpaceAfter on word {wid} of a multiword token"
                continue
            if spacing is not None:
                rebuilt.append(spacing)
            rebuilt.append(fields[1])
            spacing = " "
            for x in spacing_items:
                spacing = "" if x == "SpaceAfter=No" else _spaces(x[len("SpacesAfter="):])
        assert range_end < next_id, f"{where}: range {range_end} without all its words"
        tokens_text = " ".join("".join(rebuilt).splitlines())
        assert texts[0][len("# text = "):] == tokens_text, f"{where}: # text is not the tokens' text"
    return len(blocks)


def test_the_validator_refuses_what_it_should():
    good = "# text = ab\n1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\t_\t_\t_\t_\t0\t_\t_\t_\n2\tb\t_\t_\t_\t_\t1\t_\t_\t_\n\n"
    assert validate(good) == 1
    for bad in (good.replace("\n\n", "\n"),                                    # no final blank line
                good.replace("# text = ab", "# text = a b"),                   # text not the tokens'
                good.replace("1\ta\t_\t_\t_\t_\t0\t_\t_\t_", "1\ta\t_\t_\t_\t_\t0\t_\t_\tSpaceAfter=No"),
                good.replace("1-2\tab", "1-3\tab"),                            # range without its words
                good.replace("2\tb", "3\tb"),                                  # IDs skip
                good.replace("\t0\t", "\t\t")):                                # empty field
        with pytest.raises(AssertionError):
            validate(bad)


# ---------------------------------------------------------------- reading

def test_reads_comments_tokens_words_and_offsets():
    doc = read_document(SAMPLE)
    s = doc.sentences
    assert len(s) == 6
    assert (s[0].newdoc, s[0].newpar, s[0].sent_id) == ("sample-1", "", "sample-1-1")
    assert s[0].text_comment == "I don't like it, Mr. Smith." == doc.sentence_text(s[0])
    assert (s[1].newdoc, s[1].newpar) == (None, None) and s[2].newpar == "" and s[4].newdoc == "sample-2"
    dont = s[0].tokens[1]
    assert (dont.form, dont.start, dont.end, dont.multiword) == ("don't", 2, 7, True)
    assert [w.fields() for w in dont.words] == [["2", "do", "do", "AUX", "VBP", "_", "4", "aux", "_", "_"],
                                                ["3", "n't", "not", "PART", "RB", "_", "4", "advmod", "_", "_"]]
    it = s[0].tokens[3]
    assert (it.form, it.spacing, it.space_after, it.words[0].misc) == ("it", "", False, "_")   # SpaceAfter read
    for t in doc.tokens:
        assert doc.text[t.start:t.end] == t.form
    # the empty node "2.1" of sentence 4 is kept aside, not a word
    assert s[3].empty_nodes == [["2.1", "go", "go", "VERB", "VB", "_", "_", "_", "0:root", "_"]]
    assert [w.form for w in s[3].words] == ["Why", "not", "?"]


def test_the_tokenizer_reads_the_same_text():
    doc, gold = read_document(SAMPLE), read_conllu_text(SAMPLE)
    assert gold.text == doc.text
    assert gold.tokens == [SurfaceToken(t.start, t.end, t.form, tuple(w.form for w in t.words)) for t in doc.tokens]


def test_spaces_after_and_other_misc_kept(tmp_path):
    path = tmp_path / "x.conllu"
    path.write_text("1\ta\t_\t_\t_\t_\t_\t_\t_\tSpacesAfter=\\s\\n|Foo=1\n"
                    "2\tb\t_\t_\t_\t_\t_\t_\t_\tBar=2|SpaceAfter=No\n"
                    "3\tc\t_\t_\t_\t_\t_\t_\t_\t_\n\n", encoding="utf-8")
    doc = read_document(path)
    a, b, c = doc.tokens
    assert (a.spacing, a.words[0].misc, b.spacing, b.words[0].misc) == (" \n", "Foo=1", "", "Bar=2")
    assert doc.text == "a \nbc"
    out = format_document(doc)
    validate(out)
    assert "SpacesAfter=\\s\\n|Foo=1" not in out and "Foo=1|SpacesAfter=\\s\\n" in out
    assert "# text = a  bc\n" in out         # the line break of the text as a space
    assert read_document(io.StringIO(out)).text == doc.text


@pytest.mark.parametrize("body, line, message", [
    ("1\ta\t_\t_\t_\t_\t_\t_\t_\n", 1, "10 tab-separated fields"),
    ("1\ta\t_\t_\t_\t_\t_\t_\t_\t_\n3\tb\t_\t_\t_\t_\t_\t_\t_\t_\n", 2, "word ID 3"),
    ("1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\t_\t_\t_\t_\t_\t_\t_\t_\n\n", 1, "lacks its words"),
    ("1\ta\t_\t_\t_\t_\t_\t_\t_\t_\n# c\n", 2, "comment line"),
    ("1\ta\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=Yes\n", 1, "SpaceAfter=Yes"),
    ("1\ta\t_\t_\t_\t_\t_\t_\t_\tSpacesAfter=x\n", 1, "not whitespace"),
    ("1\ta\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No|SpacesAfter=\\s\n", 1, "both SpaceAfter and SpacesAfter"),
    ("x\ta\t_\t_\t_\t_\t_\t_\t_\t_\n", 1, "malformed ID"),
    ("1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\t_\t_\t_\t_\t_\t_\t_\t_\n2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_\n", 3,
     "begins inside 1-2"),
    ("1\t \t_\t_\t_\t_\t_\t_\t_\t_\n", 1, "whitespace"),
])
def test_malformed_input_names_file_and_line(tmp_path, body, line, message):
    path = tmp_path / "bad.conllu"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_document(path)
    assert str(info.value).startswith(f"{path}:{line}:") and message in str(info.value)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------- writing

TEXT = "Hello, world!  I don't\tknow.\nNew par."


def built():
    """A document as a tokenizer makes it: two paragraphs, a multiword token."""
    def t(a, b, *words):
        return SurfaceToken(a, b, TEXT[a:b], words or (TEXT[a:b],))
    sents = [[t(0, 5), t(5, 6), t(7, 12), t(12, 13)],
             [t(15, 16), t(17, 22, "do", "n't"), t(23, 27), t(27, 28)],
             [t(29, 32), t(33, 36), t(36, 37)]]
    return UDDocument.from_tokens(TEXT, sents)


EXPECTED = """\
# newdoc
# newpar
# sent_id = 1
# text = Hello, world!
1\tHello\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No
2\t,\t_\t_\t_\t_\t_\t_\t_\t_
3\tworld\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No
4\t!\t_\t_\t_\t_\t_\t_\t_\tSpacesAfter=\\s\\s

# sent_id = 2
# text = I don't\tknow.
1\tI\t_\t_\t_\t_\t_\t_\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\tSpacesAfter=\\t
2\tdo\t_\t_\t_\t_\t_\t_\t_\t_
3\tn't\t_\t_\t_\t_\t_\t_\t_\t_
4\tknow\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No
5\t.\t_\t_\t_\t_\t_\t_\t_\t_

# newpar
# sent_id = 3
# text = New par.
1\tNew\t_\t_\t_\t_\t_\t_\t_\t_
2\tpar\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No
3\t.\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No

"""


def test_writes_a_tokenized_text():
    doc = built()
    out = format_document(doc)
    assert out == EXPECTED
    # "# text" holds the tab the text has: allowed in a comment, and it is the tokens' text
    assert validate(out) == 3


def test_written_text_reads_back_as_the_same_document():
    doc = built()
    back = read_document(io.StringIO(format_document(doc)))
    assert back.text == TEXT[:-0 or None].replace("\n", "\n") and back.text == TEXT
    assert [[w.form for w in s.words] for s in back.sentences] == [[w.form for w in s.words] for s in doc.sentences]
    assert [(t.start, t.end) for t in back.tokens] == [(t.start, t.end) for t in doc.tokens]


def test_filled_columns_are_written():
    doc = built()
    w = doc.sentences[0].words[0]
    w.lemma, w.upos, w.xpos, w.feats = "hello", "INTJ", "UH", "Foo=Bar"
    line = format_document(doc).split("\n")[4]
    assert line == "1\tHello\thello\tINTJ\tUH\tFoo=Bar\t_\t_\t_\tSpaceAfter=No"
    w.lemma = ""                      # empty: "_"
    assert format_document(doc).split("\n")[4].split("\t")[2] == "_"


def test_unwritable_field_is_refused_and_nothing_written(tmp_path):
    doc = built()
    doc.sentences[1].words[0].lemma = "a\tb"
    path = tmp_path / "out.conllu"
    with pytest.raises(ValueError, match=r"sentence 2: LEMMA 'a\\tb' holds a tab"):
        write_document(doc, path)
    assert not path.exists()


def test_written_by_word_objects():
    doc = UDDocument.from_tokens("ab", [[SurfaceToken(0, 2, "ab", (UDWord(0, "a", upos="X"), UDWord(0, "b")))]])
    out = format_document(doc)
    assert "1-2\tab\t" in out and "1\ta\t_\tX\t" in out and "2\tb\t" in out
    validate(out)


def test_spacing_in_misc_follows_the_token():
    doc = built()
    hello = doc.sentences[0].tokens[0]
    hello.words[0].misc = "SpaceAfter=No|Foo=1"          # stale: the token's spacing decides
    hello.spacing = " "
    doc.sentences[1].tokens[1].words[0].misc = "SpaceAfter=No"  # never on a word of a multiword token
    out = format_document(doc)
    assert "1\tHello\t_\t_\t_\t_\t_\t_\t_\tFoo=1\n" in out
    assert "2\tdo\t_\t_\t_\t_\t_\t_\t_\t_\n" in out


@pytest.mark.parametrize("change, message", [
    (lambda d: setattr(d.sentences[0].words[1], "upos", "A B"), "sentence 1: UPOS 'A B' holds a space"),
    (lambda d: setattr(d.sentences[2].words[0], "form", ""), "sentence 3: an empty FORM"),
    (lambda d: setattr(d.sentences[1], "sent_id", "a b"), "sentence 2: sent_id 'a b' is not a string without"),
    (lambda d: setattr(d.sentences[1].tokens[0], "spacing", "x"), "sentence 2: the spacing after token 'I' is not"),
    (lambda d: setattr(d.sentences[1], "tokens", []), "sentence 2 has no tokens"),
])
def test_what_conllu_cannot_hold_is_refused(change, message):
    doc = built()
    change(doc)
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        format_document(doc)


@pytest.mark.parametrize("tokens, message", [
    ([(0, 2), (1, 4)], "sentence 1, token 2 (1, 4): begins before the previous token ends (2)"),
    ([(0, 2), (4, 6)], "sentence 1, token 2 (4, 6): the text before it is not whitespace: ' c'"),
    ([(1, 2)], "sentence 1, token 1 (1, 2): the text before it is not whitespace: 'a'"),
    ([(0, 2), (3, 5)], "the text after the last token is not whitespace: 'e'"),
    ([(0, 2), (3, 3)], "sentence 1, token 2 (3, 3): not a non-empty span of the text of 6 characters"),
    ([(0, 2), (3, 9)], "sentence 1, token 2 (3, 9): not a non-empty span"),
])
def test_tokens_that_do_not_tile_the_text_are_refused(tokens, message):
    text = "ab cde"
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        UDDocument.from_tokens(text, [[SurfaceToken(a, b, text[a:b], (text[a:b] or "x",)) for a, b in tokens]])


def test_written_to_a_path(tmp_path):
    path = tmp_path / "out.conllu"
    write_document(built(), path)
    assert path.read_bytes() == EXPECTED.encode("utf-8")


SPACING = st.sampled_from(["", " ", " ", "  ", "\t", "\n", "\u00a0", " \n ", "\r\n", "\u2028", "\x0b"])
FORM = st.text(st.sampled_from("ab_é-'.#=|\\1"), min_size=1, max_size=4)
VALUE = st.text(st.sampled_from("aB_=|:é "), max_size=4)


@st.composite
def documents(draw):
    """A random text, tokenized into sentences with random spacing, some
    tokens multiword tokens of random words with random fields."""
    text, sentences = "", []
    for _ in range(draw(st.integers(1, 4))):
        sent = []
        for _ in range(draw(st.integers(1, 5))):
            form = draw(FORM)
            words = [form]
            if len(form) > 1 and draw(st.booleans()):
                words = draw(st.lists(FORM, min_size=2, max_size=3))
            words = [UDWord(0, w, lemma=draw(VALUE), upos=draw(VALUE).replace(" ", ""),
                            misc=draw(st.sampled_from(["_", "SpaceAfter=No", "A=b c"]))) for w in words]
            sent.append(SurfaceToken(len(text), len(text) + len(form), form, tuple(words)))
            text += form + draw(SPACING)
        sentences.append(sent)
    return UDDocument.from_tokens(text, sentences)


@settings(max_examples=150)
@given(documents())
def test_any_document_is_written_valid_and_read_back(doc):
    out = format_document(doc)
    assert validate(out) == len(doc.sentences)
    back = read_document(io.StringIO(out))
    assert [[w.fields() for w in s.words] for s in back.sentences] == \
        [[[str(i + 1)] + [_underscore(v) for v in w.fields()[1:9]] + [_misc_of(w.misc)]
          for i, w in enumerate(s.words)] for s in doc.sentences]
    assert [[(t.form, [w.form for w in t.words]) for t in s.tokens] for s in back.sentences] == \
        [[(t.form, [w.form for w in t.words]) for t in s.tokens] for s in doc.sentences]
    # the text between tokens of a sentence is kept, as a sentence's text
    assert [back.sentence_text(s) for s in back.sentences] == [doc.sentence_text(s) for s in doc.sentences]
    assert format_document(back) == out


def _underscore(v):
    return v or "_"


def _misc_of(misc):
    return "_" if misc in ("_", "SpaceAfter=No") else misc


# ---------------------------------------------------------------- other readers

def udpipe_sentences(text):
    udpipe = pytest.importorskip("ufal.udpipe", reason="ufal.udpipe is not installed (pip install ufal.udpipe)")
    fmt = udpipe.InputFormat.newInputFormat("conllu")
    fmt.setText(text)
    err = udpipe.ProcessingError()
    out = []
    s = udpipe.Sentence()
    while fmt.nextSentence(s, err):
        words = [(w.form, w.lemma or "_", w.upostag or "_") for w in list(s.words)[1:]]      # UDPipe reads "_" as ""
        mwts = [(m.idFirst, m.idLast, m.form) for m in s.multiwordTokens]
        out.append((s.getText(), words, mwts, s.getSentId()))
        s = udpipe.Sentence()
    assert not err.occurred(), err.message
    return out


def ours(doc):
    out = []
    for s in doc.sentences:
        words = [(w.form, w.lemma, w.upos) for w in s.words]
        mwts = [(t.words[0].id, t.words[-1].id, t.form) for t in s.tokens if t.multiword]
        out.append((doc.sentence_text(s), words, mwts, s.sent_id or ""))
    return out


def spacy_sentences(text):
    pytest.importorskip("spacy", reason="spaCy is not installed")
    from spacy.training.converters import conllu_to_docs
    docs = conllu_to_docs(text, n_sents=1, merge_subtokens=True, no_print=True)
    return [[(t.text, bool(t.whitespace_)) for t in d] for d in docs]


def our_tokens(doc):
    """What spaCy keeps of our tokens: forms, and a space after or not."""
    return [[(t.form, t.space_after) for t in s.tokens] for s in doc.sentences]


def test_udpipe_reads_what_we_write():
    doc = built()
    doc.sentences[0].words[0].lemma = "hello"
    assert udpipe_sentences(format_document(doc)) == ours(doc)


def test_spacy_reads_what_we_write():
    doc = read_document(SAMPLE)
    assert spacy_sentences(format_document(doc)) == our_tokens(doc)


# ---------------------------------------------------------------- the real UD files

def _ud_files():
    root = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    names = ["en_ewt/en_ewt-ud-test.conllu", "ud/UD_Finnish-TDT/fi_tdt-ud-test.conllu",
             "ud/UD_Japanese-GSD/ja_gsd-ud-test.conllu", "ud/UD_Portuguese-Bosque/pt_bosque-ud-test.conllu",
             "ud/UD_Turkish-IMST/tr_imst-ud-test.conllu"]
    return [root / n for n in names]


def _state(doc):
    out = []
    for s in doc.sentences:
        out.append((s.newdoc, s.newpar, s.sent_id, s.comments, s.empty_nodes, s.start, s.end,
                    [(t.form, t.start, t.end, t.spacing, t.misc, [w.fields() for w in t.words]) for t in s.tokens]))
    return out


@pytest.mark.parametrize("path", _ud_files(), ids=lambda p: p.name)
def test_round_trip_of_ud_files(path):
    if not path.is_file():
        pytest.skip(f"{path} not found (the real corpora beside the repository)")
    doc = read_document(path)
    out = format_document(doc)
    assert validate(out) == len(doc.sentences)
    back = read_document(io.StringIO(out))
    assert back.text == doc.text
    assert _state(back) == _state(doc)
    assert all(s.text_comment == back.sentence_text(s) for s in back.sentences)
    assert format_document(back) == out
    # UDPipe reads the same sentences, words and multiword tokens
    assert udpipe_sentences(out) == ours(doc)
    if path.name.startswith("pt_"):         # spaCy's reader is slow: the first 300 sentences, 200 contractions
        head = "".join(block + "\n\n" for block in out.split("\n\n")[:300])
        assert spacy_sentences(head) == our_tokens(doc)[:300]
