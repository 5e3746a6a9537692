"""fasttag as an NLTK tagger, against the real NLTK."""
from pathlib import Path

import pytest

nltk = pytest.importorskip("nltk", reason="NLTK is an optional extra: pip install nltk")

import fasttag  # noqa: E402
from fasttag.text import formats as ftio
from fasttag.nltk import PerceptronTagger, dependency_graphs, pos_tag  # noqa: E402

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


#: A hand-made treebank with trees (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL, MISC after): enough to parse itself.
TREES = """\
# text = The dog saw a big cat.
1 The the DET DT PronType=Art 2 det _
2 dog dog NOUN NN Number=Sing 3 nsubj _
3 saw see VERB VBD Tense=Past 0 root _
4 a a DET DT PronType=Art 6 det _
5 big big ADJ JJ Degree=Pos 6 amod _
6 cat cat NOUN NN Number=Sing 3 obj SpaceAfter=No
7 . . PUNCT . _ 3 punct _

# text = Anna sleeps in the park.
1 Anna Anna PROPN NNP Number=Sing 2 nsubj _
2 sleeps sleep VERB VBZ Tense=Pres 0 root _
3 in in ADP IN _ 5 case _
4 the the DET DT PronType=Art 5 det _
5 park park NOUN NN Number=Sing 2 obl SpaceAfter=No
6 . . PUNCT . _ 2 punct _

"""


@pytest.fixture(scope="module")
def parser_pipeline(tmp_path_factory):
    path = tmp_path_factory.mktemp("dep") / "trees.conllu"
    rows = [line if not line or line[0] == "#" else "\t".join(line.split()[:8] + ["_", line.split()[8]])
            for line in TREES.split("\n")]
    path.write_text("\n".join(rows) * 4, encoding="utf-8")
    return fasttag.Pipeline.train(path, verbose=False)


def test_dependency_graphs_are_nltk_graphs_of_the_pipelines_parse(parser_pipeline):
    """Raw text or pretokenized sentences, each an NLTK DependencyGraph
    whose nodes hold the columns of fasttag's own CoNLL-U."""
    text = "The dog saw a big cat. Anna sleeps in the park."
    graphs = dependency_graphs(text, parser_pipeline)
    assert all(isinstance(g, nltk.parse.DependencyGraph) for g in graphs) and len(graphs) == 2
    blocks = parser_pipeline.to_conllu(text).strip().split("\n\n")
    for graph, block in zip(graphs, blocks):
        rows = [line.split("\t") for line in block.split("\n") if line[0].isdigit()]
        nodes = [graph.nodes[i] for i in range(1, len(rows) + 1)]
        assert [(n["word"], n["lemma"], n["ctag"], n["tag"], n["feats"], n["head"], n["rel"]) for n in nodes] == \
            [(r[1], r[2], r[3], r[4], r[5], int(r[6]), r[7]) for r in rows]
        assert not graph.contains_cycle()
    assert graphs[0].root["word"] == "saw" and graphs[1].root["word"] == "sleeps"
    assert graphs[0].tree() == nltk.Tree("saw", [nltk.Tree("dog", ["The"]), nltk.Tree("cat", ["a", "big"]), "."])
    assert (("saw", "VERB"), "obj", ("cat", "NOUN")) in list(graphs[0].triples())      # triples show UPOS
    words = [["The", "dog", "saw", "a", "big", "cat", "."], ["Anna", "sleeps", "in", "the", "park", "."], []]
    pretokenized = dependency_graphs(words, parser_pipeline)
    assert [g.to_conll(10) for g in pretokenized[:2]] == [g.to_conll(10) for g in graphs]
    assert pretokenized[2].root is None and len(pretokenized) == 3


def test_dependency_graphs_need_a_parser_and_lists_of_words(parser_pipeline):
    with pytest.raises(ValueError, match="not a UD pipeline with a parser"):
        dependency_graphs("The dog barks.", "en-ud")
    with pytest.raises(ValueError, match="not a UD pipeline with a parser"):
        dependency_graphs("The dog barks.", "en")
    with pytest.raises(TypeError, match="sentence 2 is a str"):
        dependency_graphs([["The", "dog"], "a cat"], parser_pipeline)
