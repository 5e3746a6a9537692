"""Long sentences in bounded memory: a sentence longer than
``LONG_SENTENCE`` words is decoded in overlapping pieces, and scoring keeps
columns, not objects per word.  The pieces must give what decoding the
whole sentence gives (the reference: the same code with no limit), and the
evaluation of columns what the evaluation of documents gives."""
from pathlib import Path

import pytest

import fasttag
from fasttag.tasks import base
from fasttag.text import formats as ftio
from fasttag.text.conll18 import Annotation, evaluate_annotations, evaluate_documents
from fasttag.text.conllu import UDDocument, UDWord, read_document

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.conllu"


@pytest.mark.parametrize("n", [0, 1, 2047, 2048, 2049, 4000, 5888, 10_000, 123_457])
def test_pieces_tile_the_sentence_with_their_margins(n):
    pieces = base.long_pieces(n)
    if n <= base.LONG_SENTENCE:
        assert pieces == [(0, n, 0, n)]
        return
    kept = [i for _, _, a, b in pieces for i in range(a, b)]
    assert kept == list(range(n))
    for start, end, a, b in pieces:
        assert end - start <= base.LONG_SENTENCE and start <= a < b <= end
        assert a - start == min(a, base.PIECE_MARGIN) and end - b == min(n - b, base.PIECE_MARGIN)


@pytest.fixture(scope="module")
def long_sentence():
    """The sample's words as one sentence of about 7,000 words (four pieces)."""
    words = [w for s in ftio.read_conllu(SAMPLE) for w in s.words]
    return (words * (7000 // len(words) + 1))[:7000]


def _whole(monkeypatch, tag):
    """``tag()`` with no limit on the length decoded at once: the reference."""
    with monkeypatch.context() as m:
        m.setattr(base, "LONG_SENTENCE", 10 ** 9)
        return tag()


def test_pieces_tag_as_the_whole_sentence(monkeypatch, long_sentence):
    tagger = fasttag.load("en")
    short = long_sentence[:50]
    tag = lambda: tagger.tag_sents([short, long_sentence, short])     # noqa: E731
    pieces = tag()
    assert pieces == _whole(monkeypatch, tag)
    assert [len(t) for t in pieces] == [50, 7000, 50] and pieces[0] == pieces[2]


def test_pieces_fill_every_column_as_the_whole_sentence(monkeypatch, long_sentence):
    pipe = fasttag.load("en-ud")
    tag = lambda: pipe.tag_words([long_sentence[:30], long_sentence])     # noqa: E731
    pieces = tag()
    assert set(pieces) == {"upos", "xpos", "feats", "lemma"}
    assert pieces == _whole(monkeypatch, tag)


def test_columns_score_as_documents():
    pipe = fasttag.load("en-ud")
    gold = read_document(SAMPLE)
    for i, w in enumerate(gold.words):     # wrong gold fields, so that the scores have something to count
        if i % 3 == 0:
            w.upos, w.lemma, w.feats = "X", w.lemma.upper(), "Foo=Bar"
    found = pipe.tokenizer.sentence_tokens(gold.text)
    predicted = pipe.tag_words([[w for t in s for w in t.words] for s in found])
    system = UDDocument.from_tokens(gold.text, [
        [t._replace(words=[UDWord(1, w, **{c: predicted[c][i][k] for c in predicted}) for k, w in
                           enumerate(t.words, sum(len(u.words) for u in s[:j]))]) for j, t in enumerate(s)]
        for i, s in enumerate(found)])
    by_documents = evaluate_documents(gold, system)
    by_columns = evaluate_annotations(Annotation.of_document(gold, "gold"),
                                      Annotation.of_tokens(gold.text, found, predicted))
    assert by_columns == by_documents
    assert 0.5 < by_columns["UPOS"].f1 < 0.7 and by_columns["UFeats"].f1 < 0.8
    assert by_columns["Lemmas"].aligned == by_columns["Words"].correct


def _reference_shape(word):
    """The shape character by character: the definition."""
    out, last, run = [], "", 0
    for ch in word:
        c = "X" if ch.isupper() else "x" if ch.isalpha() else "d" if ch.isdigit() else ch
        run = run + 1 if c == last else 1
        last = c
        if run <= 4:
            out.append(c)
    return "".join(out)


def test_shapes_of_long_and_short_words_are_the_definitions():
    import random

    from fasttag.features.words import short_shape, word_shape
    rnd = random.Random(0)
    for i in range(20_000):
        chars = "aAzZ09._-\t xXdD\\\x00\x7f" if i % 2 else "aAzZ09._ xX\u00e9\u00c9\u0661\u4e2d\U0001F600\u2028"
        # runs of one character as often as mixtures, around the lengths where the arrays take over
        word = "".join(rnd.choice(chars) * rnd.choice((1, 1, 2, 4, 5, 9)) for _ in range(rnd.randrange(0, 40)))
        shape = _reference_shape(word)
        assert word_shape(word) == shape, word
        assert short_shape(word) == "".join(c for k, c in enumerate(shape) if k == 0 or shape[k - 1] != c), word
