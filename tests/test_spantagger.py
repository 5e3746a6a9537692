"""SpanTagger: chunking and NER over column files, schemes, features, CLI."""
import json
import random
from pathlib import Path

import numpy as np

import pytest

import fasttag
from fasttag.text import metrics
from fasttag.text import schemes as ftspans
from fasttag.text.schemes import from_bioes
from fasttag.cli import main
from fasttag.errors import FasttagError, ModelFormatError
from fasttag.features.gazetteers import Gazetteer
from fasttag.features.spans import cap_runs, document_extras, span_templates
from fasttag.tasks.spans import SpanTagger

DATA = Path(__file__).resolve().parents[1] / "data"
NER = DATA / "sample_ner.conll"
CHUNK = DATA / "sample_chunk.conll"


@pytest.fixture(scope="module")
def ner_tagger():
    # without the (jackknifed) ambiguity classes: the tests below expect the training set learned;
    # with the POS and chunk columns and the document features, which NER takes on request only
    return SpanTagger.train(NER, task="ner", epochs=8, verbose=False, ambiguity_classes=False,
                            feature_columns=[1, 2], document_features=True)


@pytest.fixture(scope="module")
def chunk_tagger():
    return SpanTagger.train(CHUNK, task="chunk", epochs=8, verbose=False)


def _random_bioes(rng, n):
    chunks, i = [], 0
    while i < n:
        if rng.random() < 0.5:
            L = min(rng.randint(1, 3), n - i)
            chunks.append((rng.choice("AB"), i, i + L))
            i += L
        else:
            i += 1
    return ftspans.encode(chunks, n, "bioes")


def test_from_bioes_matches_convert_and_round_trips():
    rng = random.Random(0)
    for _ in range(3000):
        tags = _random_bioes(rng, rng.randint(0, 9))
        for scheme in ftspans.SCHEMES:
            out = from_bioes(tags, scheme)
            assert out == ftspans.convert(tags, "bioes", scheme)
            assert ftspans.convert(out, scheme, "bioes") == tags


def test_decoded_tags_of_many_sentences_match_the_one_sentence_conversion():
    """DecodedTags converts a chunk of sentences at once in numpy: the same
    tags as converting each sentence alone, sentence borders included (an
    IOB1 B- never follows the previous sentence's chunk)."""
    rng = random.Random(1)
    tags = ["O"] + [f"{p}-{t}" for t in "AB" for p in "BIES"]
    index = {t: i for i, t in enumerate(tags)}
    for _ in range(300):
        sents = [_random_bioes(rng, rng.randint(0, 6)) for _ in range(rng.randint(0, 6))]
        ids = np.array([index[t] for s in sents for t in s], dtype=np.int32)
        bounds = np.cumsum([0] + [len(s) for s in sents])
        for scheme in ftspans.SCHEMES:
            want = [from_bioes(s, scheme) for s in sents]
            assert ftspans.DecodedTags(tags, "bioes", scheme)(ids, bounds) == want
    iob2 = ["O", "B-A", "I-A", "B-B", "I-B"]
    sents = [["B-A", "I-A", "B-A", "O", "B-B"], ["B-A"]]
    ids = np.array([iob2.index(t) for s in sents for t in s])
    assert ftspans.DecodedTags(iob2, "iob2", "iob1")(ids, [0, 5, 6]) == \
        [["I-A", "I-A", "B-A", "O", "I-B"], ["I-A"]]
    assert ftspans.DecodedTags(iob2, "iob2", "iob2")(ids, [0, 5, 6]) == sents


def test_conlleval_semantics_by_hand():
    # IOB1: I- starts a chunk after O; B- only between two chunks of a type
    gold = [["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "O"]]
    pred = [["I-PER", "I-PER", "O", "I-LOC", "I-LOC", "O"]]
    r = metrics.score_spans(gold, pred, "iob1")
    assert (r["gold_chunks"], r["pred_chunks"], r["correct_chunks"]) == (3, 2, 1)
    assert r["precision"] == pytest.approx(0.5) and r["recall"] == pytest.approx(1 / 3)
    # ill-formed IOB2: I- after O starts a chunk, a type change ends one
    gold = [["B-NP", "I-NP", "O", "B-VP"]]
    pred = [["O", "I-NP", "I-VP", "I-VP"]]
    r = metrics.score_spans(gold, pred, "iob2")
    assert ftspans.spans(pred[0], "iob2") == [("NP", 1, 2), ("VP", 2, 4)]
    assert r["correct_chunks"] == 0 and r["f1"] == 0.0
    assert r["per_type"]["VP"]["pred"] == 1


def test_train_keeps_the_input_scheme(ner_tagger):
    assert ner_tagger.scheme == "iob1"
    assert ner_tagger.types == ["LOC", "MISC", "ORG", "PER"]
    assert set(ner_tagger.model.tags) == {"O"} | {f"{p}-{t}" for p in "BIES" for t in ner_tagger.types}
    sents = list(fasttag.text.formats.read_conll(NER))
    pred = ner_tagger.tag_sents(sents)
    # the training set is learned, and written back in IOB1 ("B-LOC" after
    # a LOC chunk, "I-" elsewhere)
    assert pred == [s.tags for s in sents]
    assert any("B-LOC" in p for p in pred)
    r = ner_tagger.evaluate(NER)
    assert r["f1"] == pytest.approx(1.0)
    assert set(r["per_type"]) == {"LOC", "MISC", "ORG", "PER"}
    assert r["scheme"] == "iob1"


def test_predictions_are_valid_sequences(ner_tagger):
    words = ["Werner", "Zwingmann", "of", "the", "European", "Union", "and", "Bonn", "."]
    cols = [("NNP", "B-NP")] * len(words)
    tags = ner_tagger.tag(words, cols)
    assert len(tags) == len(words)
    assert ftspans.convert(tags, "iob1", "iob1") == tags
    assert ner_tagger.spans(words, cols) == ftspans.spans(tags, "iob1")


def test_feature_columns_required(ner_tagger, chunk_tagger):
    with pytest.raises(FasttagError):
        ner_tagger.tag(["Peter", "Blackburn"])
    assert chunk_tagger.feature_columns == [1]
    assert chunk_tagger.tag(["the", "pound"], [["DT"], ["NN"]]) == ["B-NP", "I-NP"]
    assert chunk_tagger.tag([], []) == []


def test_save_load_round_trip(ner_tagger, tmp_path):
    path = tmp_path / "ner.ftm"
    ner_tagger.save(path)
    loaded = fasttag.load(str(path))
    assert isinstance(loaded, SpanTagger)
    sents = list(fasttag.text.formats.read_conll(NER))
    assert loaded.tag_sents(sents) == ner_tagger.tag_sents(sents)
    again = SpanTagger.from_bytes(ner_tagger.to_bytes())
    assert again.to_bytes() == ner_tagger.to_bytes()
    assert loaded.meta["scheme"] == "iob1" and loaded.meta["feature_columns"] == [1, 2]


def test_not_a_span_model(tmp_path):
    tagger = SpanTagger.train(CHUNK, epochs=1, verbose=False)
    header, arrays = fasttag.model.modelfile.loads(tagger.to_bytes())
    header["kind"] = "tagger"
    with pytest.raises(ModelFormatError, match="not a SpanTagger model"):
        SpanTagger.from_bytes(fasttag.model.modelfile.dumps(header, arrays))
    header["kind"] = "spans"
    header["featurizer"]["extras"] = ["nonsense"]
    with pytest.raises(ModelFormatError, match="extras"):
        fasttag.loads(fasttag.model.modelfile.dumps(header, arrays))


def test_scheme_option_and_bioes_files(tmp_path):
    sents = list(fasttag.text.formats.read_conll(NER))
    path = tmp_path / "bioes.conll"
    with open(path, "w") as out:
        for s in sents:
            fasttag.text.formats.write_conll(s, ftspans.convert(s.tags, "iob1", "bioes"), out, mode="replace")
    tagger = SpanTagger.train(path, epochs=8, verbose=False)
    assert tagger.scheme == "bioes"
    assert tagger.evaluate(path)["f1"] == pytest.approx(1.0)
    with pytest.raises(FasttagError):
        SpanTagger.train(path, scheme="iob2", epochs=1, verbose=False)


def test_mira_training(chunk_tagger):
    for k in (1, 3):
        tagger = SpanTagger.train(CHUNK, task="chunk", epochs=8, algorithm="mira", k=k,
                                  verbose=False)
        assert tagger.model.training_info["algorithm"] == "mira"
        assert tagger.evaluate(CHUNK)["f1"] == pytest.approx(1.0)


def test_document_features():
    sents = [["Clinton", "met", "Bill", "Clinton", "today"],
             ["THE", "WHITE", "HOUSE", "SAID"],
             ["The", "house", "said", "Clinton"]]
    extras = ["doc", "headline", "docrun", "caprole"]
    rows = document_extras(sents, [0, 0, 0], extras)
    # "Clinton" at the start: seen capitalised elsewhere, never in lowercase
    assert rows[0][0] == ("-t-0", "-", "AL", "A")
    # "Bill Clinton": a run of two
    assert rows[0][2][3] == "F" and rows[0][3][3] == "L"
    assert rows[0][3][2] == "A"       # elsewhere "Clinton" stands alone
    # the headline is marked and does not count as "elsewhere"
    assert [r[1] for r in rows[1]] == ["H"] * 4
    assert rows[1][2][0] == "l--"     # "HOUSE": "house" is written in lowercase elsewhere
    assert rows[2][1][0] == "---"     # its own occurrence does not count
    # separate documents do not see each other
    alone = document_extras(sents, [0, 1, 2], extras)
    assert alone[0][0][0] == "-t-0" and alone[2][3][0] == "---"
    assert cap_runs(["a", "B", "C", "d", "E"]) == ["", "F", "L", "", "A"]


def test_gazetteer_longest_match(tmp_path):
    gaz = Gazetteer({"LOC": ["New York", "New York City", "York"], "ORG": ["New York Times"]})
    assert gaz.tags(["in", "New", "York", "City", "today"]) == ["-", "B-LOC", "I-LOC", "E-LOC", "-"]
    assert gaz.tags(["New", "York", "Times"]) == ["B-LOC|B-ORG", "E-LOC|I-ORG", "E-ORG"]
    assert gaz.tags(["York"]) == ["S-LOC"]
    path = tmp_path / "loc.txt"
    path.write_text("# a comment\nBrussels\nBonn\n\n")
    tagger = SpanTagger.train(NER, task="ner", epochs=4, gazetteers={"LOC": str(path)}, verbose=False)
    assert "gaz" in tagger.meta["extras"]
    assert any(t.startswith("gaz[") for t in tagger.model.templates.names)
    again = SpanTagger.from_bytes(tagger.to_bytes())
    assert again.gazetteer.lists == {"LOC": ["Bonn", "Brussels"]}


def test_templates_cover_columns():
    names = span_templates(2, ["doc", "headline"])
    assert "c1[-1]|c1[0]|c1[1]" in names and "c2[0]" in names and "doc[0]" in names
    assert len(names) == len(set(names))


def test_chunk_defaults_are_mira_with_the_chunk_templates():
    """A chunker learns with 3-best MIRA and the POS-context templates (with
    clusters, POS with clusters too); with the perceptron, without them;
    a NER model never has them."""
    from fasttag.features.spans import CHUNK_CLUSTER_TEMPLATES, CHUNK_TEMPLATES
    from fasttag.features.words import CLUSTER_TEMPLATES
    clusters = DATA / "sample_clusters.txt"
    mira = SpanTagger.train(CHUNK, task="chunk", epochs=1, verbose=False)
    info = mira.model.training_info
    assert (info["algorithm"], info["k"]) == ("mira", 3)
    assert mira.model.templates.names == span_templates(1, []) + list(CHUNK_TEMPLATES)
    with_clusters = SpanTagger.train(CHUNK, task="chunk", epochs=1, verbose=False, clusters=clusters)
    assert with_clusters.model.templates.names == \
        span_templates(1, []) + list(CLUSTER_TEMPLATES) + list(CHUNK_CLUSTER_TEMPLATES) + list(CHUNK_TEMPLATES)
    perceptron = SpanTagger.train(CHUNK, task="chunk", algorithm="perceptron", epochs=1, verbose=False)
    assert perceptron.model.templates.names == span_templates(1, [])
    ner = SpanTagger.train(CHUNK, task="ner", epochs=1, verbose=False, ambiguity_classes=False,
                           document_features=False)
    assert not set(CHUNK_TEMPLATES) & set(ner.model.templates.names)


def test_cli_train_tag_eval(tmp_path, capsys, dev_copy):
    model = tmp_path / "ner.ftm"
    # dev: a copy of the training file (training refuses the file itself); the test is not about held-out data
    assert main(["train", "ner", str(NER), "-o", str(model), "--dev", str(dev_copy(NER)),
                 "--epochs", "6", "--quiet", "--ambiguity-classes", "off"]) == 0
    out = tmp_path / "tagged.conll"
    assert main(["tag", "-m", str(model), str(NER), "-o", str(out), "--format", "conll"]) == 0
    lines_in = NER.read_text().splitlines()
    lines_out = out.read_text().splitlines()
    assert len(lines_in) == len(lines_out)
    for a, b in zip(lines_in, lines_out):
        if a and not a.startswith("-DOCSTART-"):
            assert b.startswith(a + " ")
            assert b.split()[-1] == a.split()[-1]      # the training set is learned
        else:
            assert a == b
    capsys.readouterr()
    assert main(["eval", str(model), str(NER), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    for key in ("precision", "recall", "f1", "per_type"):
        assert key in result
    assert result["f1"] == pytest.approx(1.0)
    assert main(["eval", str(model), str(NER)]) == 0
    assert "FB1" in capsys.readouterr().out


def test_cli_columns_and_mira(tmp_path, capsys):
    # word and tag columns moved: tag first, word last, POS in the middle
    src = tmp_path / "moved.conll"
    with open(src, "w") as f:
        for line in CHUNK.read_text().splitlines():
            if line:
                w, pos, tag = line.split(" ")
                f.write(f"{tag} {pos} {w}\n")
            else:
                f.write("\n")
    model = tmp_path / "chunk.ftm"
    assert main(["train", "chunk", str(src), "-o", str(model), "--column", "0", "--word-column", "2",
                 "--feature-columns", "1", "--epochs", "8", "--algorithm", "mira", "--k", "2",
                 "--C", "0.5", "--quiet"]) == 0
    tagger = fasttag.load(str(model))
    assert tagger.meta["feature_columns"] == [1] and tagger.meta["tag_column"] == 0
    assert tagger.model.training_info["k"] == 2
    capsys.readouterr()
    assert main(["eval", str(model), str(src), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["f1"] == pytest.approx(1.0)
    # no feature column: words only
    model2 = tmp_path / "words.ftm"
    assert main(["train", "chunk", str(CHUNK), "-o", str(model2), "--feature-columns", "",
                 "--epochs", "2", "--quiet"]) == 0
    assert fasttag.load(str(model2)).feature_columns == []
    assert main(["train", "chunk", str(CHUNK), "-o", str(model2), "--gazetteer", "nonsense"]) == 2


# ---------------------------------------------------------------- real corpora

def test_conll2000_chunking(shared_data):
    folder = shared_data / "conll2000"
    tagger = SpanTagger.train(folder / "train.txt", task="chunk", epochs=4, verbose=False)
    r = tagger.evaluate(folder / "test.txt")
    assert r["f1"] > 0.938, r["f1"]
    assert r["per_type"]["NP"]["f1"] > 0.94


def test_conll2003_ner(shared_data):
    folder = shared_data / "conll2003"
    tagger = SpanTagger.train(folder / "eng.train", dev=folder / "eng.testa", task="ner",
                              epochs=6, verbose=False)
    assert tagger.model.training_info["dev_score"] > 0.89
    r = tagger.evaluate(folder / "eng.testb")
    assert r["scheme"] == "iob1"
    assert r["f1"] > 0.85, r["f1"]
    assert set(r["per_type"]) == {"LOC", "MISC", "ORG", "PER"}


# ---------------------------------------------------------------- inputs

def test_a_token_that_is_not_a_str_is_a_type_error_saying_where(ner_tagger, chunk_tagger):
    cols = [("NNP", "B-NP")] * 3
    # document features and gazetteer read the words before the model does
    with pytest.raises(TypeError, match=r"sentence 1, token 2: .*not NoneType"):
        ner_tagger.tag_sents([["EU", "rejects", "German"], ["Peter", "Blackburn", None]],
                             columns=[cols, cols])
    with pytest.raises(TypeError, match=r"sentence 0, token 0: .*not int"):
        chunk_tagger.tag([7, "pound"], [["DT"], ["NN"]])
    with pytest.raises(TypeError, match=r"sentence 0, token 1: feature column value 0 .*not float"):
        chunk_tagger.tag(["the", "pound"], [["DT"], [1.5]])
    assert chunk_tagger.tag(["the", "pound"], [["DT"], ["NN"]]) == ["B-NP", "I-NP"]


def test_a_str_where_a_list_of_tokens_belongs_is_a_type_error(chunk_tagger):
    with pytest.raises(TypeError, match="list of token strings"):
        chunk_tagger.tag("the pound", [["DT"], ["NN"]])
    with pytest.raises(TypeError, match="list of token strings"):
        chunk_tagger.spans("the pound", [["DT"], ["NN"]])
    with pytest.raises(TypeError, match="list of sentences"):
        chunk_tagger.tag_sents("the pound")
    with pytest.raises(TypeError, match=r"sentence 0: expected a list of token strings, got str"):
        chunk_tagger.tag_sents(["the", "pound"], columns=[[["DT"]], [["NN"]]])
    # Sentence objects and token tuples still work
    sents = list(fasttag.text.formats.read_conll(CHUNK))
    assert chunk_tagger.tag_sents(sents) == [s.tags for s in sents]
    assert chunk_tagger.tag_sents([("the", "pound")], [[["DT"], ["NN"]]]) == [["B-NP", "I-NP"]]


def test_lone_surrogates_in_words_and_columns_are_tagged(ner_tagger):
    words = ["Peter", "Blackburn", "\udcff", "in", "Bonn", "\ud800x"]
    cols = [("NNP", "B-NP"), ("NNP", "I-NP"), ("\udcff", "O"), ("IN", "B-PP"), ("NNP", "B-NP"),
            ("NN", "B-NP")]
    tags = ner_tagger.tag(words, cols)
    assert len(tags) == len(words)
    assert ftspans.convert(tags, "iob1", "iob1") == tags
    assert SpanTagger.from_bytes(ner_tagger.to_bytes()).tag(words, cols) == tags


def test_eval_reads_gold_in_its_own_scheme(tmp_path):
    """A model trained on IOB2 and scored on IOB1 gold (the same chunks)
    compares tags in IOB1: the same accuracy as on the IOB2 copy, where
    reading the IOB1 gold as IOB2 would count every I- chunk start wrong."""
    sents = list(fasttag.text.formats.read_conll(NER))
    iob2 = tmp_path / "iob2.conll"
    with open(iob2, "w", encoding="utf-8") as out:
        for s in sents:
            fasttag.text.formats.write_conll(s, ftspans.convert(s.tags, "iob1", "iob2"), out, mode="replace")
    model = SpanTagger.train(iob2, task="ner", epochs=3, verbose=False, ambiguity_classes=False)
    assert model.scheme == "iob2"
    on_iob1, on_iob2 = model.evaluate(NER), model.evaluate(iob2)
    assert (on_iob1["scheme"], on_iob2["scheme"]) == ("iob1", "iob2")
    assert on_iob1["f1"] == on_iob2["f1"]
    assert on_iob1["accuracy"] == on_iob2["accuracy"]


@pytest.mark.parametrize("key, value", [("word_column", -5), ("word_column", 1), ("tag_column", 9),
                                        ("n_columns", 0), ("feature_columns", [0])])
def test_a_stored_column_layout_that_does_not_add_up_is_refused(key, value):
    """Evaluation and tagging of column files read the stored layout: a
    model file whose columns are out of range or overlap is corrupt."""
    import fasttag
    model = SpanTagger.train(CHUNK, task="chunk", epochs=1, verbose=False)
    assert fasttag.loads(model.to_bytes()).meta["feature_columns"] == [1]
    model.meta[key] = value
    with pytest.raises(fasttag.ModelFormatError, match="columns|n_columns"):
        fasttag.loads(model.to_bytes())


def test_a_scheme_named_against_the_tags_is_refused(tmp_path):
    """Scores of gold read in a scheme it is not in are silently off (token
    accuracy 98.6 -> 89.1 on CoNLL-2003 read as IOB2): naming a scheme the
    tags plainly are not in is an error; IOB2 read as IOB1 gives the same
    chunks and is allowed."""
    from fasttag.errors import InputError
    sample = Path(__file__).resolve().parents[1] / "data" / "sample_ner.conll"     # IOB1
    model = SpanTagger.train(sample, task="ner", epochs=2, verbose=False)
    for scheme in ("iob2", "bioes"):
        with pytest.raises(InputError, match=f"option scheme='{scheme}': the gold tags read as IOB1"):
            model.evaluate(sample, scheme=scheme)
        with pytest.raises(InputError, match=f"option scheme='{scheme}': the gold tags read as IOB1"):
            SpanTagger.train(sample, task="ner", epochs=1, verbose=False, scheme=scheme)
    assert model.evaluate(sample, scheme="iob1")["f1"] == model.evaluate(sample)["f1"]


def test_a_new_entity_type_gets_its_scheme_transitions(tmp_path):
    """Fine-tuning with a type the model did not know: the grown tag set's
    transition mask is the scheme's mask of the new tags (an I- of the new
    type may follow only its own B-/I-), also for a model read from a file."""
    base = SpanTagger.train(NER, task="ner", epochs=2, verbose=False)
    path = tmp_path / "ner.ftm"
    base.save(path)
    extra = tmp_path / "extra.conll"
    extra.write_text("Acme NNP B-NP B-PROD\nWidget NNP I-NP I-PROD\nsells VBZ B-VP O\n\n", encoding="utf-8")
    for model in (base, fasttag.load(path)):
        tuned = SpanTagger.train(extra, task="ner", init=model, allow_new_tags=True, epochs=1, verbose=False)
        tags = tuned.model.tags
        assert any(t.endswith("-PROD") for t in tags) and len(tags) > len(base.model.tags)
        assert np.array_equal(tuned.model.allowed, ftspans.allowed_mask(tags, tuned.internal_scheme))
        T = len(tags)
        mask = tuned.model.allowed.reshape(T + 2, T)
        b_org, i_prod = tags.index("B-ORG"), tags.index("I-PROD")
        assert not mask[b_org, i_prod] and mask[tags.index("B-PROD"), i_prod]
