"""fasttag as an NLTK tagger, against the real NLTK."""
from pathlib import Path

import pytest

nltk = pytest.importorskip("nltk", reason="NLTK is an optional extra: pip install nltk")

import fasttag  # noqa: E402
from fasttag.text import formats as ftio
from fasttag.nltk import PerceptronTagger, pos_tag  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture(scope="module")
def gold():
    return [list(zip(s.words, s.tags)) for s in ftio.read(DATA / "sample.conllu", format="conllu")]


def test_is_an_nltk_tagger_returning_pairs():
    tagger = PerceptronTagger()
    assert isinstance(tagger, nltk.tag.api.TaggerI)
    out = tagger.tag(["I", "saw", "her", "duck", "."])
    assert [w for w, _ in out] == ["I", "saw", "her", "duck", "."]
    assert [t for _, t in out] == fasttag.load().tag(["I", "saw", "her", "duck", "."])
    assert pos_tag(["The", "dog", "barks", "."]) == tagger.tag(["The", "dog", "barks", "."])


def test_nltk_scoring_matches_fasttag(gold):
    tagger = PerceptronTagger()
    words = [[w for w, _ in s] for s in gold]
    tags = fasttag.load().tag_sents(words)
    expected = sum(p == g for s, ts in zip(gold, tags) for (_, g), p in zip(s, ts)) / sum(map(len, gold))
    assert tagger.accuracy(gold) == pytest.approx(expected)
    matrix = tagger.confusion(gold)        # NLTK's ConfusionMatrix over our output
    assert sum(matrix[g, g] for g in {t for s in gold for _, t in s}) == round(expected * sum(map(len, gold)))


def test_tag_sents_and_regexp_parser():
    tagger = PerceptronTagger()
    sents = [["The", "dog", "saw", "a", "big", "cat", "."], ["Cats", "sleep", "."]]
    tagged = tagger.tag_sents(sents)
    assert [[w for w, _ in s] for s in tagged] == sents
    assert [[t for _, t in s] for s in tagged] == fasttag.load().tag_sents(sents)
    tree = nltk.RegexpParser("NP: {<DET>?<ADJ>*<NOUN>}").parse(tagged[0])
    assert [" ".join(w for w, _ in st.leaves()) for st in tree.subtrees() if st.label() == "NP"] == ["The dog", "a big cat"]


def test_train_on_nltk_tagged_sentences(tmp_path):
    train = [[("I", "PRP"), ("sleep", "VBP")], [("You", "PRP"), ("run", "VBP")]] * 20
    tagger = PerceptronTagger(load=False)
    with pytest.raises(ValueError):
        tagger.tag(["I"])
    tagger.train(train, save_loc=tmp_path / "m.ftm", nr_iter=3)
    assert tagger.tag(["You", "sleep"]) == [("You", "PRP"), ("sleep", "VBP")]
    assert tagger.accuracy(train) == 1.0
    reloaded = PerceptronTagger(model=str(tmp_path / "m.ftm"))
    assert reloaded.tag(["I", "run"]) == [("I", "PRP"), ("run", "VBP")]


def test_pairs_as_lists_train_as_tuples_do():
    """(word, tag) pairs that are lists (from JSON) are pairs too: a
    two-word sentence used to read as one (words, tags) pair."""
    tuples = [[("I", "PRON"), ("run", "VERB")], [("dogs", "NOUN"), ("bark", "VERB")]] * 10
    lists = [[list(p) for p in s] for s in tuples]
    a, b = PerceptronTagger(load=False), PerceptronTagger(load=False)
    a.train(tuples, nr_iter=3)
    b.train(lists, nr_iter=3)
    assert b.tag(["I", "run"]) == a.tag(["I", "run"]) == [("I", "PRON"), ("run", "VERB")]
    assert b.model.tags == ["NOUN", "PRON", "VERB"]
    with pytest.raises(TypeError, match="sentence 0, token 1"):
        PerceptronTagger(load=False).train([[("I", "PRON"), ("run", "VERB", "x")]])


def test_a_string_is_not_a_sentence():
    with pytest.raises(TypeError):
        PerceptronTagger().tag("a string")


def test_nltk_signatures_tagset_lang_and_confidences():
    """NLTK's own arguments: pos_tag(tokens, tagset, lang) and
    tag(tokens, return_conf, use_tagdict)."""
    words = ["The", "dog", "and", "Anna", "barked", "."]
    upos = pos_tag(words)
    universal = pos_tag(words, "universal")
    assert [t for _, t in universal] == ["DET", "NOUN", "CONJ", "NOUN", "VERB", "."]
    assert [w for w, _ in universal] == [w for w, _ in upos] == words
    assert pos_tag(words, lang="eng") == upos
    with pytest.raises(NotImplementedError, match="'rus'"):
        pos_tag(words, lang="rus")
    with pytest.raises(ValueError, match="tagset must be"):
        pos_tag(words, "en")
    tagger = PerceptronTagger()
    triples = tagger.tag(words, return_conf=True)
    assert [(w, t) for w, t, _ in triples] == tagger.tag(words)
    assert all(0 < c <= 1 for _, _, c in triples)
    with pytest.raises(ValueError, match="use_tagdict"):
        tagger.tag(words, use_tagdict=False)
