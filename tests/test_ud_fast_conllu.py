"""Raw text to CoNLL-U straight from the tokens and the tag lists
(:func:`fasttag.text.conllu.tokens_lines`): the same bytes, or the same
error, as the document model's writer, on one or many threads."""
import io

import pytest
from hypothesis import given, strategies as st

from fasttag import Pipeline
from fasttag.pipeline import pipeline as pipeline_module
from fasttag.text.goldtext import SurfaceToken, read_conllu_text
from fasttag.text.conllu import WORD_COLUMNS, UDDocument, UDWord, document_lines, format_document, tokens_lines

from test_ud_pipeline import RAW, SAMPLE


@pytest.fixture(scope="module")
def pipe():
    return Pipeline.train(SAMPLE, epochs=3, verbose=False)


def _document_lines(text, sentences, columns):
    """What the document model writes of the same tokens and columns."""
    built = []
    for i, s in enumerate(sentences):
        k, toks = 0, []
        for t in s:
            words = []
            for w in t.words:
                words.append(UDWord(k + 1, w, **{c: v[i][k] for c, v in columns.items()}))
                k += 1
            toks.append(t._replace(words=words))
        built.append(toks)
    return list(document_lines(UDDocument.from_tokens(text, built)))


def _outcome(fn):
    try:
        return list(fn())
    except (ValueError, TypeError) as exc:
        return type(exc), str(exc)


PIECES = st.sampled_from(["a", "b", "É", "don't", "x y", "", "\t", "1.5", "Space", "SpaceAfter=No", "_", "é\u00a0"])
GAPS = st.sampled_from([" ", "", "  ", "\n", " \n\n ", "\t", "\u00a0", "\u2028"])


@st.composite
def tokenized(draw):
    """A text, its sentences of Tokens (some of several words, some empty)
    and random values of some columns."""
    text, sentences = draw(st.sampled_from(["", " ", "\n"])), []
    for _ in range(draw(st.integers(1, 4))):
        toks = []
        for _ in range(draw(st.integers(0, 4))):
            form = draw(st.text(alphabet="ab.é'", min_size=1, max_size=4))
            if text and not text[-1].isspace() and (toks or sentences):
                text += draw(GAPS)
            start = len(text)
            text += form
            words = (form,) if draw(st.booleans()) else tuple(draw(st.lists(PIECES, min_size=1, max_size=3)))
            toks.append(SurfaceToken(start, len(text), form, words))
        sentences.append(toks)
        text += draw(GAPS)
    n_words = [sum(len(t.words) for t in s) for s in sentences]
    names = draw(st.lists(st.sampled_from(WORD_COLUMNS), unique=True))
    columns = {c: [[draw(PIECES) for _ in range(n)] for n in n_words] for c in names}
    return text, sentences, columns


@given(tokenized())
def test_tokens_lines_write_what_the_document_model_writes(case):
    text, sentences, columns = case
    assert _outcome(lambda: tokens_lines(text, sentences, columns)) == \
        _outcome(lambda: _document_lines(text, sentences, columns))


def test_tokens_lines_number_sentences_from_first_id():
    text = "I'm here.\nGo"
    sentences = [[SurfaceToken(0, 3, "I'm", ("I", "'m")), SurfaceToken(4, 8, "here", ("here",)),
                  SurfaceToken(8, 9, ".", (".",))],
                 [SurfaceToken(10, 12, "Go", ("Go",))]]
    lines = list(tokens_lines(text, sentences, {"upos": [["PRON", "AUX", "ADV", "PUNCT"], ["VERB"]]}, 7))
    assert lines == ["# newpar", "# sent_id = 7", "# text = I'm here.", "1-2\tI'm\t_\t_\t_\t_\t_\t_\t_\t_",
                     "1\tI\t_\tPRON\t_\t_\t_\t_\t_\t_", "2\t'm\t_\tAUX\t_\t_\t_\t_\t_\t_",
                     "3\there\t_\tADV\t_\t_\t_\t_\t_\tSpaceAfter=No", "4\t.\t_\tPUNCT\t_\t_\t_\t_\t_\t_", "",
                     "# newpar", "# sent_id = 8", "# text = Go", "1\tGo\t_\tVERB\t_\t_\t_\t_\t_\tSpaceAfter=No", ""]
    with pytest.raises(ValueError, match="columns: 'gloss' is not one of lemma, upos, xpos, feats, head, deprel, "
                                         "deps, misc"):
        list(tokens_lines(text, sentences, {"gloss": []}))
    with pytest.raises(ValueError, match="columns: deprel has values for 0 sentences, not 2"):
        list(tokens_lines(text, sentences, {"deprel": []}))
    lines = list(tokens_lines(text, sentences, {"head": [["0", "1", "1", "1"], ["0"]], "misc": [list("abcd"), ["e"]]}))
    assert lines[6] == "2\t'm\t_\t_\t_\t_\t1\t_\t_\tb" and lines[7] == "3\there\t_\t_\t_\t_\t1\t_\t_\tc|SpaceAfter=No"
    with pytest.raises(ValueError, match="columns: upos has 1 values for the 4 words of sentence 1"):
        list(tokens_lines(text, sentences, {"upos": [["X"], ["VERB"]]}))


def test_pipeline_conllu_is_the_document_models_on_the_sample(pipe):
    for text in (RAW, read_conllu_text(SAMPLE).text, "  \n\n" + RAW + "\n\n  "):
        assert pipe.to_conllu(text) == format_document(pipe.annotate(text))


@given(st.text(alphabet="ab A.,'\n\t-é", max_size=60))
def test_pipeline_conllu_is_the_document_models_on_random_text(pipe, text):
    assert pipe.to_conllu(text) == format_document(pipe.annotate(text))


def test_many_batches_on_two_threads_give_the_same_bytes(pipe, monkeypatch):
    monkeypatch.setattr(pipeline_module, "RAW_BATCH_CHARS", 60)         # a batch every line or two
    raw = (RAW + "\n\n" + read_conllu_text(SAMPLE).text + "\n").encode()
    outs = []
    for n in (1, 2):
        out = io.StringIO()
        pipe.tag_file(io.BytesIO(raw), out, to="conllu", n_threads=n)
        outs.append(out.getvalue())
    assert outs[0] == outs[1]
    ids = [line for line in outs[0].split("\n") if line.startswith("# sent_id = ")]
    assert ids == [f"# sent_id = {i}" for i in range(1, len(ids) + 1)] and len(ids) > 10
    assert outs[0].count("# newdoc") == 1


def test_cli_threads_2_gives_the_same_bytes(run_cli, tmp_path, pipe):
    model, raw = tmp_path / "ud.ftm", tmp_path / "raw.txt"
    pipe.save(model)
    raw.write_text(RAW + "\n\n" + read_conllu_text(SAMPLE).text + "\n", encoding="utf-8")
    one = run_cli("tag", "-m", model, raw, "--to", "conllu")
    two = run_cli("tag", "-m", model, raw, "--to", "conllu", "--threads", "2")
    assert one.returncode == 0 and two.returncode == 0, two.stderr
    assert one.stdout == two.stdout and one.stdout.count(b"# sent_id") > 10
