"""fasttag components in real spaCy pipelines: build, tag, save, load,
train."""
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

spacy = pytest.importorskip("spacy", reason="spaCy is an optional extra: pip install spacy")

import fasttag  # noqa: E402
import fasttag.spacy  # noqa: E402,F401  (registers the factories where fasttag is not installed)
from fasttag import SpanTagger  # noqa: E402
from spacy.tokens import Doc, DocBin, Span  # noqa: E402
from spacy.training import Example  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data"
SENTS = [["The", "dog", "saw", "a", "big", "cat", "."], ["Anna", "visited", "Paris", "on", "Monday", "."]]


def _doc(nlp, words):
    return Doc(nlp.vocab, words=words)


@pytest.fixture(scope="module")
def ner_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("ner") / "ner.ftm"
    SpanTagger.train(DATA / "sample_ner.conll", task="ner", epochs=5, feature_columns=[], verbose=False).save(path)
    return path


def test_tagger_component_sets_pos_like_the_model():
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_tagger", config={"model": "en"})
    doc = nlp(" ".join(SENTS[0]))
    assert [t.pos_ for t in doc] == fasttag.load().tag(SENTS[0])
    docs = list(nlp.pipe([" ".join(s) for s in SENTS * 5], batch_size=3))
    assert [[t.pos_ for t in d] for d in docs] == fasttag.load().tag_sents(SENTS * 5)


def test_tagger_component_tag_attr_and_roundtrip(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_tagger", config={"model": "en", "attr": "tag"})
    doc = nlp(" ".join(SENTS[1]))
    assert [t.tag_ for t in doc] == fasttag.load().tag(SENTS[1]) and all(t.pos_ == "" for t in doc)
    nlp.to_disk(tmp_path / "pipe")
    assert (tmp_path / "pipe" / "fasttag_tagger" / "model.ftm").exists()
    again = spacy.load(tmp_path / "pipe")
    assert [t.tag_ for t in again(" ".join(SENTS[1]))] == [t.tag_ for t in doc]
    other = spacy.blank("en")
    other.add_pipe("fasttag_tagger", config={"model": None, "attr": "tag"})
    other.from_bytes(nlp.to_bytes())
    assert [t.tag_ for t in other(" ".join(SENTS[1]))] == [t.tag_ for t in doc]


def test_ud_component_defaults_to_the_bundled_en_ud_and_saves_it(tmp_path):
    """As fasttag_tagger defaults to the bundled "en", fasttag_ud defaults
    to "en-ud": every column as fasttag.load("en-ud") gives it, and the
    saved pipeline carries the model file."""
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_ud")
    assert nlp.get_pipe_config("fasttag_ud")["model"] == "en-ud"
    docs = [nlp(" ".join(words)) for words in SENTS]
    assert [[t.text for t in doc] for doc in docs] == SENTS
    want = fasttag.load("en-ud").tag_words(SENTS)
    assert set(want) == {"upos", "xpos", "feats", "lemma"}

    def seen(docs):
        return {"upos": [[t.pos_ for t in d] for d in docs], "xpos": [[t.tag_ for t in d] for d in docs],
                "feats": [[str(t.morph) or "_" for t in d] for d in docs],
                "lemma": [[t.lemma_ for t in d] for d in docs]}
    got = seen(docs)
    assert got == want
    assert got["lemma"][0][2] == "see" and got["upos"][1][0] == "PROPN" and "Tense=Past" in got["feats"][0][2]
    assert set(nlp.get_pipe("fasttag_ud").labels) == {"upos", "xpos", "feats", "lemma"}
    nlp.to_disk(tmp_path / "pipe")
    saved = tmp_path / "pipe" / "fasttag_ud" / "model.ftm"
    assert saved.read_bytes() == fasttag.load("en-ud").to_bytes()
    again = spacy.load(tmp_path / "pipe")
    assert seen([again(" ".join(words)) for words in SENTS]) == want
    other = spacy.blank("en")
    other.add_pipe("fasttag_ud")
    other.from_bytes(nlp.to_bytes())
    assert seen([other(" ".join(words)) for words in SENTS]) == want
    # the saved file is what a loaded pipeline runs, not the bundled model its config names
    fasttag.Pipeline(parts={"upos": fasttag.load("en-ud").parts["upos"]}).save(saved)
    assert spacy.load(tmp_path / "pipe").get_pipe("fasttag_ud").labels == ("upos",)


#: A hand-made English treebank with trees (one non-projective: "hearing ... on the issue"): per
#: sentence its text and its words' FORM LEMMA UPOS XPOS HEAD DEPREL.
TREES = [
    ("The dog saw a big cat.", "The the DET DT 2 det | dog dog NOUN NN 3 nsubj | saw see VERB VBD 0 root | "
     "a a DET DT 6 det | big big ADJ JJ 6 amod | cat cat NOUN NN 3 obj | . . PUNCT . 3 punct"),
    ("Anna visited Paris on Monday.", "Anna Anna PROPN NNP 2 nsubj | visited visit VERB VBD 0 root | "
     "Paris Paris PROPN NNP 2 obj | on on ADP IN 5 case | Monday Monday PROPN NNP 2 obl | . . PUNCT . 2 punct"),
    ("The old man sleeps in the park.", "The the DET DT 3 det | old old ADJ JJ 3 amod | man man NOUN NN 4 nsubj | "
     "sleeps sleep VERB VBZ 0 root | in in ADP IN 7 case | the the DET DT 7 det | park park NOUN NN 4 obl | "
     ". . PUNCT . 4 punct"),
    ("She likes green tea and cakes.", "She she PRON PRP 2 nsubj | likes like VERB VBZ 0 root | "
     "green green ADJ JJ 4 amod | tea tea NOUN NN 2 obj | and and CCONJ CC 6 cc | cakes cake NOUN NNS 4 conj | "
     ". . PUNCT . 2 punct"),
    ("A hearing is scheduled on the issue today.", "A a DET DT 2 det | hearing hearing NOUN NN 4 nsubj:pass | "
     "is be AUX VBZ 4 aux:pass | scheduled schedule VERB VBN 0 root | on on ADP IN 7 case | the the DET DT 7 det | "
     "issue issue NOUN NN 2 nmod | today today NOUN NN 4 obl:tmod | . . PUNCT . 4 punct"),
]


#: TREES' FEATS, by XPOS.
FEATS_OF_XPOS = {"DT": "PronType=Art", "NN": "Number=Sing", "NNS": "Number=Plur", "NNP": "Number=Sing",
                 "JJ": "Degree=Pos", "PRP": "Case=Nom|Person=3", "VBD": "Tense=Past|VerbForm=Fin",
                 "VBZ": "Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", "VBN": "Tense=Past|VerbForm=Part"}


def _trees_conllu(copies):
    """TREES as CoNLL-U, ``copies`` times (a decorated label is learned when seen twice)."""
    lines = []
    for c in range(copies):
        for n, (text, spec) in enumerate(TREES, 1):
            words = [w.split() for w in spec.split(" | ")]
            lines += [f"# sent_id = {c}-{n}", f"# text = {text}"]
            for i, (form, lemma, upos, xpos, head, deprel) in enumerate(words, 1):
                misc = "SpaceAfter=No" if i < len(words) and words[i][0] == "." else "_"
                feats = FEATS_OF_XPOS.get(xpos, "_")
                lines.append(f"{i}\t{form}\t{lemma}\t{upos}\t{xpos}\t{feats}\t{head}\t{deprel}\t_\t{misc}")
            lines.append("")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def parser_pipeline_path(tmp_path_factory):
    """A UD pipeline with a tokenizer and a parser, trained on TREES (which it then parses right)."""
    folder = tmp_path_factory.mktemp("dep")
    (folder / "trees.conllu").write_text(_trees_conllu(4), encoding="utf-8")
    model = fasttag.Pipeline.train(folder / "trees.conllu", verbose=False)
    assert "dep" in model.components
    model.save(folder / "dep.ftm")
    return folder / "dep.ftm"


def _parsing_nlp(path, tokenizer=True):
    config = {"nlp": {"tokenizer": {"@tokenizers": "fasttag.tokenizer.v1", "model": str(path)}}} if tokenizer else {}
    nlp = spacy.blank("en", config=config)
    nlp.add_pipe("fasttag_ud", config={"model": str(path)})
    return nlp


def _conllu_trees(text):
    """Per sentence of fasttag's CoNLL-U ``text``: (forms, heads, deprels)."""
    out = []
    for block in text.strip("\n").split("\n\n"):
        rows = [line.split("\t") for line in block.split("\n") if line and line[0].isdigit()]
        words = [r for r in rows if r[0].isdigit()]
        out.append(([r[1] for r in words], [int(r[6]) for r in words], [r[7] for r in words]))
    return out


def test_ud_component_sets_the_tree_fasttag_writes_in_conllu(parser_pipeline_path):
    """With a parser in the pipeline, each token's head and label are those
    of fasttag's own CoNLL-U of the same text (the root its own head,
    labelled "ROOT" as spaCy's parsers label it); whitespace tokens hang
    from a word of their sentence; the sentences stay the tokenizer's."""
    nlp = _parsing_nlp(parser_pipeline_path)
    text = "The dog saw a big cat.  Anna visited Paris on Monday.\nA hearing is scheduled on the issue today."
    before = [s.text for s in nlp.make_doc(text).sents]
    doc = nlp(text)
    expected = _conllu_trees(fasttag.load(str(parser_pipeline_path)).to_conllu(text))
    assert [s.text for s in doc.sents] == before and len(before) == len(expected) == 3
    for sent, (forms, heads, deprels) in zip(doc.sents, expected):
        words = [t for t in sent if not t.is_space]
        assert [t.text for t in words] == forms
        assert [t.head.i for t in words] == [t.i if h == 0 else words[h - 1].i for t, h in zip(words, heads)]
        assert [t.dep_ for t in words] == ["ROOT" if h == 0 else d for h, d in zip(heads, deprels)]
        assert all(sent.start <= t.head.i < sent.end for t in sent)
        assert [t.dep_ for t in sent if t.head == t] == ["ROOT"] and sent.root.dep_ == "ROOT"
    assert [(t.text, t.head.text, t.dep_) for t in doc if t.is_space] == [(" ", ".", "dep"), ("\n", ".", "dep")]
    assert doc[2].dep_ == "ROOT" and doc[2].head == doc[2] and doc[1].head == doc[2]
    # the non-projective arc of the training tree comes back
    assert [(t.text, t.head.text, t.dep_) for t in doc if t.text == "issue"] == [("issue", "hearing", "nmod")]
    assert {"token.dep", "token.head", "doc.sents"} <= set(nlp.analyze_pipes()["summary"]["fasttag_ud"]["assigns"])


def test_ud_component_noun_chunks_of_an_english_parse(parser_pipeline_path):
    """English's own noun chunk iterator reads spaCy's English labels
    (dobj, pobj), so that of UD labels it finds subjects only; the parsed
    docs use fasttag's UD iterator, which finds objects and obliques too."""
    nlp = _parsing_nlp(parser_pipeline_path)
    doc = nlp("The dog saw a big cat. The old man sleeps in the park. She likes green tea and cakes.")
    assert [c.text for c in doc.noun_chunks] == ["The dog", "a big cat", "The old man", "the park", "She",
                                                 "green tea", "cakes"]
    assert all(c.label_ == "NP" for c in doc.noun_chunks)
    assert [c.text for c in list(doc.sents)[1].noun_chunks] == ["The old man", "the park"]
    english = [doc[a:b].text for a, b, _ in spacy.blank("en").vocab.get_noun_chunks(doc)]
    assert english == ["The dog", "The old man", "She"]
    bare = spacy.blank("en")("The dog saw a cat")
    with pytest.raises(ValueError, match="dependency parse"):
        list(fasttag.spacy.ud_noun_chunks(bare))


def test_ud_component_parses_within_the_sentences_a_doc_has(parser_pipeline_path):
    """A sentencizer's sentences bound the trees as the tokenizer's do; a
    doc without sentence starts is one tree; a pipeline without a parser
    sets no tree."""
    nlp = _parsing_nlp(parser_pipeline_path, tokenizer=False)
    text = "The dog saw a big cat . The old man sleeps in the park ."
    assert len(list(nlp(text).sents)) == 1
    nlp.add_pipe("sentencizer", first=True)
    doc = nlp(text)
    assert [s.text for s in doc.sents] == ["The dog saw a big cat .", "The old man sleeps in the park ."]
    assert [s.root.text for s in doc.sents] == ["saw", "sleeps"]
    assert all(s.start <= t.head.i < s.end for s in doc.sents for t in s)
    assert [(t.text, t.dep_) for t in nlp("  ")] == [("  ", "ROOT")] and len(nlp("")) == 0
    untagged = spacy.blank("en")
    untagged.add_pipe("fasttag_ud")
    plain = untagged("The dog saw a cat .")
    assert not plain.has_annotation("DEP") and plain[1].pos_ == "NOUN"


def test_ner_component_sets_ents_or_spans(ner_path):
    model = fasttag.load(str(ner_path))
    words = ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."]
    expected = model.spans(words)
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_ner", config={"model": str(ner_path)})
    doc = nlp(_doc(nlp, words))
    assert [(e.label_, e.start, e.end) for e in doc.ents] == expected
    nlp2 = spacy.blank("en")
    nlp2.add_pipe("fasttag_ner", config={"model": str(ner_path), "spans_key": "sc"})
    doc = nlp2(_doc(nlp2, words))
    assert [(s.label_, s.start, s.end) for s in doc.spans["sc"]] == expected and not doc.ents


def test_span_group_component_is_scored_under_its_key(ner_path):
    """``fasttag_spans`` fills ``doc.spans["sc"]`` and, like spancat,
    declares the score weights that ``nlp.evaluate`` reports for it."""
    words = ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."]
    expected = fasttag.load(str(ner_path)).spans(words)
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_spans", config={"model": str(ner_path)})
    doc = nlp(_doc(nlp, words))
    assert [(s.label_, s.start, s.end) for s in doc.spans["sc"]] == expected and not doc.ents
    ref = _doc(nlp, words)
    ref.spans["sc"] = [Span(ref, s, e, label=t) for t, s, e in expected]
    scores = nlp.evaluate([Example(_doc(nlp, words), ref)])
    assert set(nlp.config["training"]["score_weights"]) == {"spans_sc_f", "spans_sc_p", "spans_sc_r"}
    assert scores["spans_sc_f"] == 1.0
    with pytest.raises(ValueError, match="give a spans_key"):
        spacy.blank("en").add_pipe("fasttag_spans", config={"model": str(ner_path), "spans_key": None})


def test_bundled_ner_component_on_raw_text():
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_ner")
    doc = nlp("Angela Merkel visited Paris on Monday .")
    assert [(e.text, e.label_) for e in doc.ents] == [("Angela Merkel", "PER"), ("Paris", "LOC")]


def test_ner_component_refuses_models_with_feature_columns(tmp_path):
    path = tmp_path / "cols.ftm"
    SpanTagger.train(DATA / "sample_ner.conll", task="ner", epochs=1, verbose=False,
                     feature_columns=[1, 2]).save(path)
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_ner", config={"model": str(path)})
    with pytest.raises(fasttag.InputError, match="feature columns"):
        nlp("EU rejects German call")


def test_chinese_segmenter_as_tokenizer(tmp_path):
    nlp = spacy.blank("zh", config={"nlp": {"tokenizer": {"@tokenizers": "fasttag.zh_segmenter.v1"}}})
    text = "迈向充满希望的新世纪 欢迎\n北京"
    doc = nlp(text)
    assert doc.text == text
    seg = fasttag.load("zh")
    words = [t.text for t in doc if not t.is_space]
    assert words == seg.segment("迈向充满希望的新世纪 欢迎") + seg.segment("北京")
    assert [t.text for t in doc if t.is_space] == ["\n"]
    nlp.to_disk(tmp_path / "zh")
    assert [t.text for t in spacy.load(tmp_path / "zh")(text)] == [t.text for t in doc]


def test_chinese_segmenter_splits_sentences_inside_a_line():
    """A line is a sentence, and so is each run ending at 。！？ with the
    closing quotes after the mark; an enumeration comma or a colon ends none."""
    nlp = spacy.blank("zh", config={"nlp": {"tokenizer": {"@tokenizers": "fasttag.zh_segmenter.v1"}}})
    doc = nlp("我们今天去北京。你好吗？他说：“好！”然后走了，再见\n第二行")
    assert [s.text for s in doc.sents] == ["我们今天去北京。", "你好吗？", "他说：“好！”", "然后走了，再见\n", "第二行"]
    assert [s.text for s in nlp("没有句号的一行").sents] == ["没有句号的一行"]


def _examples(nlp, pairs, attr):
    out = []
    for words, tags in pairs:
        ref = Doc(nlp.vocab, words=words)
        for t, tag in zip(ref, tags):
            setattr(t, attr, tag)
        out.append(Example(Doc(nlp.vocab, words=words), ref))
    return out


def test_whitespace_tokens_are_no_words_to_the_models():
    """spaCy keeps runs of spaces as tokens: the models read the words
    around them as neighbours, entities span them, and the tagger gives
    them spaCy's SPACE (an entity used to stop at "Barack" before two
    spaces, or start with one)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_tagger", config={"model": "en"})
    nlp.add_pipe("fasttag_ner")
    text = "Barack  Obama met Angela Merkel in New  York ."
    doc = nlp(text)
    words = [t.text for t in doc if not t.is_space]
    assert [t.pos_ for t in doc if not t.is_space] == fasttag.load().tag(words)
    assert [t.pos_ for t in doc if t.is_space] == ["SPACE", "SPACE"]
    expected = [(typ, " ".join(words[a:b])) for typ, a, b in fasttag.load("en-ner").spans(words)]
    assert [(e.label_, " ".join(e.text.split())) for e in doc.ents] == expected
    assert ("PER", "Barack  Obama") in [(e.label_, e.text) for e in doc.ents]
    assert all(not e[0].is_space and not e[-1].is_space for e in nlp("in New York  City").ents)


def test_entities_set_before_are_kept():
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "PRODUCT", "pattern": "iPhone"}])
    nlp.add_pipe("fasttag_ner")
    ents = [(e.text, e.label_) for e in nlp("Tim Cook showed the iPhone in Cupertino .").ents]
    assert ("iPhone", "PRODUCT") in ents and ("Tim Cook", "PER") in ents


def test_an_untrained_tagger_learns_upos_and_saves_before_initialize(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_tagger", config={"model": None})
    nlp.to_disk(tmp_path / "blank")                     # spaCy saves pipelines before training too
    again = spacy.load(tmp_path / "blank")              # used to fail: "the component has no model"
    assert not (tmp_path / "blank" / "fasttag_tagger" / "model.ftm").exists()
    examples = [Example.from_dict(nlp.make_doc(" ".join(w)), {"pos": t})
                for w, t in [(["I", "run", "fast"], ["PRON", "VERB", "ADV"]),
                             (["dogs", "bark"], ["NOUN", "VERB"])]] * 4
    for pipeline in (nlp, again):
        pipeline.initialize(lambda: examples)
        for _ in range(5):
            pipeline.update(examples)
        assert [t.pos_ for t in pipeline("I run fast")] == ["PRON", "VERB", "ADV"]


def test_training_from_spacy_initialize_and_update():
    lexicon = {"the": "DT", "a": "DT", "dog": "NN", "cat": "NN", "runs": "VBZ", "sees": "VBZ", ".": "."}
    pairs = [(["the", "dog", "runs", "."], ["DT", "NN", "VBZ", "."]),
             (["a", "cat", "sees", "the", "dog", "."], ["DT", "NN", "VBZ", "DT", "NN", "."])] * 5
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_tagger", config={"model": None, "attr": "tag"})
    examples = _examples(nlp, pairs, "tag_")
    nlp.initialize(lambda: examples)
    losses = [nlp.update(examples[i:i + 4], losses={})["fasttag_tagger"] for i in range(0, len(examples), 4)]
    assert losses[0] > 0 and losses[-1] == 0
    assert [t.tag_ for t in nlp("a dog sees the cat .")] == [lexicon[w] for w in "a dog sees the cat .".split()]
    scores = nlp.evaluate(examples)
    assert scores["tag_acc"] == 1.0


def test_ner_training_from_spacy():
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_ner", config={"model": None})
    examples = []
    for words, ents in [(["Anna", "visited", "Paris", "."], [("PER", 0, 1), ("LOC", 2, 3)]),
                        (["Bob", "left", "Rome", "today", "."], [("PER", 0, 1), ("LOC", 2, 3)])] * 6:
        ref = Doc(nlp.vocab, words=words)
        ref.ents = [Span(ref, s, e, label=t) for t, s, e in ents]
        examples.append(Example(Doc(nlp.vocab, words=words), ref))
    nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, losses={})
    doc = nlp(_doc(nlp, ["Anna", "left", "Rome", "."]))
    assert [(e.label_, e.start, e.end) for e in doc.ents] == [("PER", 0, 1), ("LOC", 2, 3)]
    assert nlp.evaluate(examples)["ents_f"] == 1.0


def _installed():
    names = {ep.name for ep in importlib.metadata.entry_points(group="spacy_factories")}
    return "fasttag_tagger" in names


@pytest.mark.skipif(not _installed(), reason="fasttag is not installed: its spaCy entry points are not registered")
def test_entry_points_need_no_import_and_spacy_train_runs(tmp_path):
    """A real ``spacy train`` run with the component named in its config,
    in a fresh interpreter that never imports fasttag itself (run outside
    the source tree, so that the installed package is the one found)."""
    nlp = spacy.blank("en")
    pairs = [(["the", "dog", "runs", "."], ["DT", "NN", "VBZ", "."]),
             (["a", "cat", "sees", "the", "dog", "."], ["DT", "NN", "VBZ", "DT", "NN", "."])] * 10
    db = DocBin()
    for words, tags in pairs:
        doc = Doc(nlp.vocab, words=words, tags=tags)
        db.add(doc)
    db.to_disk(tmp_path / "train.spacy")
    base = """
[paths]
train = null
dev = null
[nlp]
lang = "en"
pipeline = ["fasttag_tagger"]
batch_size = 100
[components]
[components.fasttag_tagger]
factory = "fasttag_tagger"
model = null
attr = "tag"
[training]
max_epochs = 3
max_steps = 0
eval_frequency = 5
[training.score_weights]
tag_acc = 1.0
"""
    (tmp_path / "base.cfg").write_text(base)
    fill = subprocess.run([sys.executable, "-m", "spacy", "init", "fill-config", str(tmp_path / "base.cfg"),
                           str(tmp_path / "config.cfg")], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert fill.returncode == 0, fill.stderr[-2000:]
    code = ("import sys, spacy; from spacy.cli.train import train; "
            "train(sys.argv[1], sys.argv[2], overrides={'paths.train': sys.argv[3], 'paths.dev': sys.argv[3]}); "
            "nlp = spacy.load(sys.argv[2] + '/model-last'); "
            "print([t.tag_ for t in nlp('a cat sees the dog .')])")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "config.cfg"), str(tmp_path / "out"),
                        str(tmp_path / "train.spacy")], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1].replace("'", '"')) == ["DT", "NN", "VBZ", "DT", "NN", "."]
    check = subprocess.run([sys.executable, "-c", "import spacy, sys; nlp = spacy.blank('en'); "
                            "nlp.add_pipe('fasttag_tagger'); print([t.pos_ for t in nlp('I like it .')]); "
                            "print('fasttag.spacy' in sys.modules)"], capture_output=True, text=True, timeout=120,
                           cwd=tmp_path)
    assert check.returncode == 0, check.stderr[-2000:]
    assert check.stdout.splitlines()[0] == str(fasttag.load().tag(["I", "like", "it", "."]))


def test_the_attribute_initialize_chose_survives_saving(tmp_path):
    """Trained on ``tags`` whose values are all UPOS, the tagger sets
    token.tag_, before and after spacy.load (it used to switch to pos_)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_tagger", config={"model": None})
    egs = [Example.from_dict(nlp.make_doc("I like green eggs"), {"tags": ["PRON", "VERB", "ADJ", "NOUN"]})] * 4
    nlp.initialize(lambda: egs)
    nlp.update(egs)
    before = [(t.tag_, t.pos_) for t in nlp("I like eggs")]
    assert before[0] == ("PRON", "")
    nlp.to_disk(tmp_path / "p")
    assert [(t.tag_, t.pos_) for t in spacy.load(tmp_path / "p")("I like eggs")] == before
    assert nlp.get_pipe("fasttag_tagger").labels == tuple(fasttag.loads(nlp.get_pipe("fasttag_tagger")
                                                                         .to_bytes()).tags)
    bare = Example.from_dict(nlp.make_doc("I run"), {})         # no tags: nothing to learn, no error
    assert nlp.get_pipe("fasttag_tagger")._gold(bare.reference) is None
    assert nlp.update([bare])["fasttag_tagger"] == 0.0


def test_ner_marks_other_tokens_outside_and_skips_missing_gold(ner_path):
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("fasttag_ner", config={"model": str(ner_path)})
    doc = nlp(_doc(nlp, ["I", "like", "cheese", "."]))
    assert doc.has_annotation("ENT_IOB") and all(t.ent_iob_ in ("O", "B", "I") for t in doc)
    assert set(ner.labels) == set(fasttag.load(str(ner_path)).types)
    unannotated = Example.from_dict(nlp.make_doc("Mary visits Rome"), {"entities": ["-", "-", "-"]})
    partial = Example.from_dict(nlp.make_doc("John likes Berlin"), {"entities": ["U-PER", "-", "U-LOC"]})
    assert ner._gold(unannotated.reference) is None and ner._gold(partial.reference) is None
    full = Example.from_dict(nlp.make_doc("John likes Berlin"), {"entities": ["U-PER", "O", "U-LOC"]})
    assert ner._gold(full.reference) == (["John", "likes", "Berlin"], ["B-PER", "O", "B-LOC"])


def test_overlapping_gold_spans_and_bad_config_values_are_clear_errors(ner_path):
    nlp = spacy.blank("en")
    spans = nlp.add_pipe("fasttag_spans", config={"model": str(ner_path)})
    ref = _doc(nlp, ["The", "New", "York", "Times", "."])
    ref.spans["sc"] = [Span(ref, 1, 4, "ORG"), Span(ref, 1, 3, "LOC")]
    with pytest.raises(ValueError, match="'New York' and 'New York Times' .* overlap"):
        spans._gold(ref)
    for config, says in (({"attr": "lemma"}, "attr must be"), ({"batch_size": 0}, "batch_size must be"),
                         ({"batch_size": True}, "batch_size"), ({"batch_size": "abc"}, "batch_size")):
        with pytest.raises(ValueError, match=says):
            spacy.blank("en").add_pipe("fasttag_tagger", config=config)
    tagger = spacy.blank("en").add_pipe("fasttag_tagger", config={"model": "no-such-model"})
    with pytest.raises(ValueError, match="config model 'no-such-model' is neither a bundled model nor a model file"):
        tagger(Doc(spacy.blank("en").vocab, words=["a"]))


def test_a_saved_pipeline_carries_its_models_whatever_became_of_their_paths(tmp_path):
    """Every fasttag component and tokenizer built from a model path loads
    from the saved folder alone, in a new process, after the path is gone."""
    source = tmp_path / "models"
    source.mkdir()
    for name in ("en-tok", "en", "en-ner", "en-ud"):
        fasttag.load(name).save(source / f"{name}.ftm")
    config = {"nlp": {"tokenizer": {"@tokenizers": "fasttag.tokenizer.v1", "model": str(source / "en-tok.ftm")}}}
    nlp = spacy.blank("en", config=config)
    nlp.add_pipe("fasttag_tagger", config={"model": str(source / "en.ftm"), "attr": "tag"})
    nlp.add_pipe("fasttag_ner", config={"model": str(source / "en-ner.ftm")})
    nlp.add_pipe("fasttag_ud", config={"model": str(source / "en-ud.ftm")})
    text = "Angela Merkel didn't visit Paris. She saw the Louvre."

    def seen(doc):
        return [[t.text, t.tag_, t.pos_, t.lemma_, str(t.morph), t.ent_type_, t.is_sent_start] for t in doc]
    before = seen(nlp(text))
    assert any(t[5] for t in before) and any(t[3] for t in before)
    nlp.to_disk(tmp_path / "saved")
    for file in source.iterdir():
        file.unlink()
    source.rmdir()
    code = ("import json, sys, spacy; nlp = spacy.load(sys.argv[1]); "
            "print(json.dumps([[t.text, t.tag_, t.pos_, t.lemma_, str(t.morph), t.ent_type_, t.is_sent_start] "
            "for t in nlp(sys.argv[2])]))")
    env = dict(os.environ, PYTHONPATH=str(Path(fasttag.__file__).resolve().parents[1]))    # the fasttag tested
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "saved"), text], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == before
