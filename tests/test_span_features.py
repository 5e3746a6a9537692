"""Span tagger features beyond the words: ambiguity classes (jackknifed,
against a slow reference) and the cluster of a word written in capitals
(headlines); both stored in and checked at model load."""
import random

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasttag
from fasttag import SpanTagger
from fasttag.model import modelfile
from fasttag.features.ambiguity import FOLDS, AmbiguityClasses
from fasttag.features.clusters import Clusters
from fasttag.errors import InputError, ModelFormatError
from fasttag.features.words import WordFeaturizer


def _reference_cluster(bits, word):
    """The cluster a span model gives ``word``: as written, else its
    lowercase form, else (for a word in capitals) its capitalised form as
    written or lowercased; "" when none."""
    for form in (word, word.lower()):
        if form in bits:
            return bits[form]
    if word.isupper():
        for form in (word.capitalize(), word.capitalize().lower()):
            if form in bits:
                return bits[form]
    return ""


_WORDS = st.text(alphabet="aAbBéÉ-'1", min_size=1, max_size=5)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_WORDS, st.text(alphabet="01", min_size=1, max_size=8), max_size=12),
       st.lists(_WORDS, max_size=12))
def test_cluster_of_matches_the_reference(bits, words):
    featurizer = WordFeaturizer(clusters=Clusters(bits), capitals_fallback=True)
    plain = WordFeaturizer(clusters=Clusters(bits))
    for w in list(bits) + words:
        assert featurizer.cluster_of(w) == _reference_cluster(bits, w)
        assert plain.cluster_of(w) == (bits.get(w) or bits.get(w.lower(), ""))


def _headline_data(seed=3):
    """Places and people told apart by their clusters alone; the clusters
    know the capitalised forms only."""
    rng = random.Random(seed)
    words = set()
    while len(words) < 40:
        words.add("".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(3)).title())
    words = sorted(words)
    rng.shuffle(words)
    places, people = words[:20], words[20:]
    clusters = {w: "0000" + format(i, "05b") for i, w in enumerate(places)}
    clusters.update({w: "1111" + format(i, "05b") for i, w in enumerate(people)})
    train = []
    for _ in range(300):
        w = rng.choice(places[:15] + people[:15])
        train.append(([w, "came", "."], ["B-LOC" if w in places else "B-PER", "O", "O"]))
    return train, clusters, places[15:], people[15:]


def test_words_in_capitals_take_the_cluster_of_their_capitalised_form():
    train, clusters, new_places, new_people = _headline_data()
    model = SpanTagger.train(train, clusters=clusters, epochs=3, verbose=False, task="ner",
                             document_features=True)
    loaded = SpanTagger.from_bytes(model.to_bytes())
    assert loaded.model.featurizer.words.capitals_fallback
    for w in new_places:
        assert loaded.tag([w.upper(), "came", "."]) == model.tag([w.upper(), "came", "."]) \
            == ["B-LOC", "O", "O"]
    for w in new_people:
        assert loaded.tag([w.upper(), "came", "."]) == ["B-PER", "O", "O"]


def test_the_fallback_goes_with_clusters_and_document_features():
    train, clusters, new_places, _ = _headline_data()
    header, _ = modelfile.loads(SpanTagger.train(train[:50], epochs=1, verbose=False).to_bytes())
    assert "capitals_fallback" not in header["featurizer"]
    chunker = SpanTagger.train(train, clusters=clusters, epochs=1, verbose=False, task="chunk")
    assert "capitals_fallback" not in modelfile.loads(chunker.to_bytes())[0]["featurizer"]
    assert chunker.model.featurizer.words.cluster_of(new_places[0].upper()) == ""


def _model_parts():
    train, clusters, _, _ = _headline_data()
    header, arrays = modelfile.loads(SpanTagger.train(train[:50], clusters=clusters, epochs=1,
                                                      verbose=False).to_bytes())
    header.pop("arrays", None)
    assert header["featurizer"]["capitals_fallback"] is True
    return header, arrays


def test_models_from_before_the_fallback_load_without_it():
    header, arrays = _model_parts()
    del header["featurizer"]["capitals_fallback"]
    loaded = SpanTagger.from_bytes(modelfile.dumps(header, arrays))
    assert not loaded.model.featurizer.words.capitals_fallback
    assert loaded.model.featurizer.words.cluster_of("JAPAN") == ""


@pytest.mark.parametrize("corrupt", [
    lambda h, a: h["featurizer"].__setitem__("capitals_fallback", 1),
    lambda h, a: h["featurizer"].__setitem__("capitals_fallback", "yes"),
    lambda h, a: (h["featurizer"].pop("clusters"), a.pop("clusters")),
])
def test_a_corrupt_fallback_entry_is_a_format_error(corrupt):
    header, arrays = _model_parts()
    corrupt(header, arrays)
    with pytest.raises(ModelFormatError):
        SpanTagger.from_bytes(modelfile.dumps(header, arrays))


# ---------------------------------------------------------------- ambiguity classes

def _reference_classes(sentences, keep=lambda i: True):
    """word -> "|"-joined sorted set of the types it took, over the
    sentences i with keep(i)."""
    seen = {}
    for i, (words, types) in enumerate(sentences):
        if keep(i):
            for w, t in zip(words, types):
                seen.setdefault(w, set()).add(t)
    return {w: "|".join(sorted(ts)) for w, ts in seen.items()}


_SENTENCE = st.lists(st.tuples(st.sampled_from(["a", "b", "C", "d-e", "é"]),
                               st.sampled_from(["O", "LOC", "PER"])), min_size=1, max_size=5)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_SENTENCE, st.integers(0, 30)), max_size=25))
def test_classes_and_their_jackknife_folds_match_the_reference(data):
    sentences = [([w for w, _ in s], [t for _, t in s]) for s, _ in data]
    docs = [d for _, d in data]
    full, folds = AmbiguityClasses.collect(sentences, docs)
    assert full.classes == _reference_classes(sentences)
    assert len(folds) == FOLDS
    for f, table in enumerate(folds):
        assert table.classes == _reference_classes(sentences, lambda i: docs[i] % FOLDS != f)
        # a sentence of fold f never sees its own labels
        for i, (words, _) in enumerate(sentences):
            if docs[i] % FOLDS == f:
                assert table.values(words) == [table.classes.get(w, "-") for w in words]
    assert AmbiguityClasses.from_array(full.to_array()).classes == full.classes


def _ner_data(n_docs=30, seed=5):
    """Documents of three-word sentences: a name, a verb, a full stop."""
    rng = random.Random(seed)
    names = {"LOC": ["Paris", "Oslo", "Lima", "Kyiv"], "PER": ["Ann", "Bob", "Eve"],
             "ORG": ["Acme", "Paris"]}         # Paris: a place and a company
    sents = []
    for d in range(n_docs):
        for _ in range(4):
            typ = rng.choice(sorted(names))
            w = rng.choice(names[typ])
            sents.append(fasttag.text.formats.Sentence([w, "said", "."], [f"B-{typ}", "O", "O"],
                                             [[w, f"B-{typ}"], ["said", "O"], [".", "O"]],
                                             ["-DOCSTART- O"] if not sents or len(sents) % 4 == 0 else [],
                                             [0, 1, 2], 1))
    return sents


def test_ner_models_store_the_classes_of_their_training_data():
    sents = _ner_data()
    model = SpanTagger.train(sents, task="ner", epochs=2, verbose=False)
    assert "amb" in model.meta["extras"] and "amb[0]" in model.model.templates.names
    want = _reference_classes([(s.words, [t[2:] if t != "O" else "O" for t in s.tags]) for s in sents])
    assert model.ambiguity.classes == want and want["Paris"] == "LOC|ORG"
    loaded = SpanTagger.from_bytes(model.to_bytes())
    assert loaded.ambiguity.classes == want
    test = [["Paris", "said", "."], ["Zed", "said", "."], ["Eve", "said", "."]]
    assert loaded.tag_sents(test) == model.tag_sents(test)
    # training is deterministic, the jackknife included
    assert SpanTagger.train(sents, task="ner", epochs=2, verbose=False).to_bytes() == model.to_bytes()


def test_a_words_class_is_the_same_feature_by_type_and_as_a_training_column():
    """Tagging looks a word's class up once per type; training hands the
    (jackknifed) class over per token as a column.  Both must give the
    key the column gave before classes were type attributes, "amb=CLASS"
    hashed, or models trained then would be misread."""
    from fasttag.features.words import hash_texts
    sents = _ner_data()
    model = SpanTagger.train(sents, dev=sents, task="ner", epochs=2, verbose=False, document_features=True)
    featurizer = model.model.featurizer
    words = ["Paris", "Zed", "said", "Paris", "unseen"]
    sent = fasttag.text.formats.Sentence(words, None, [[w] for w in words], [], list(range(5)), 1)
    by_type = model._columns([sent])[0]
    classes = model.ambiguity.classes
    as_column = [c + (classes.get(w, "-"),) for c, w in zip(by_type, words)]
    a = featurizer.attributes(words, by_type)
    b = featurizer.attributes(words, as_column)
    assert np.array_equal(a, b)
    amb = featurizer.attribute_names.index("amb")
    assert a[:, amb].tolist() == hash_texts([f"amb={classes.get(w, '-')}" for w in words]).tolist()
    assert classes["Paris"] == "LOC|ORG" and "unseen" not in classes
    # the dev score of training (every template per token) is the score
    # of tagging (type templates once per type)
    assert model.evaluate(sents)["f1"] == pytest.approx(model.model.training_info["dev_score"])


def test_without_ambiguity_classes_nothing_is_stored():
    sents = _ner_data(10)
    for opts in ({"task": "chunk"}, {"task": "ner", "ambiguity_classes": False}, {}):
        model = SpanTagger.train(sents, epochs=1, verbose=False, **opts)
        header, arrays = modelfile.loads(model.to_bytes())
        assert "ambiguity" not in arrays and "amb" not in header["meta"]["extras"]
        assert not any("amb" in t for t in model.model.templates.names)
        assert model.ambiguity is None
    with pytest.raises(InputError, match="ambiguity_classes"):
        SpanTagger.train(sents, task="ner", epochs=1, verbose=False, ambiguity_classes="yes")


@pytest.mark.parametrize("corrupt", [
    lambda h, a: a.pop("ambiguity"),
    lambda h, a: a.__setitem__("ambiguity", np.frombuffer(b"LOC\tParis\nORG\tParis\n", dtype=np.uint8).copy()),
    lambda h, a: a.__setitem__("ambiguity", np.frombuffer(b"LOC Paris\n", dtype=np.uint8).copy()),
    lambda h, a: a.__setitem__("ambiguity", np.frombuffer(b"LOC\tParis", dtype=np.uint8).copy()),
    lambda h, a: a.__setitem__("ambiguity", np.frombuffer(b"\tParis\n", dtype=np.uint8).copy()),
    lambda h, a: a.__setitem__("ambiguity", np.frombuffer(b"\xff\n", dtype=np.uint8).copy()),
    lambda h, a: a.__setitem__("ambiguity", np.zeros(3, dtype=np.int32)),
    lambda h, a: (h["meta"]["extras"].remove("amb"), h["featurizer"]["extras"].remove("amb")),
])
def test_corrupt_ambiguity_classes_are_a_format_error(corrupt, reload_corrupted):
    tagger = SpanTagger.train(_ner_data(10), task="ner", epochs=1, verbose=False)
    with pytest.raises(ModelFormatError):
        reload_corrupted(tagger, corrupt)


def test_train_ner_command_stores_the_classes(run_cli, tmp_path):
    train = tmp_path / "train.txt"
    with open(train, "w", encoding="utf-8") as out:
        for s in _ner_data(10):
            out.write("".join(line + "\n\n" for line in s.lines))
            out.write("".join(" ".join(r) + "\n" for r in s.rows) + "\n")
    model = tmp_path / "m.ftm"
    result = run_cli("train", "ner", train, "-o", model, "--epochs", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert fasttag.load(model).ambiguity.classes["Paris"] == "LOC|ORG"


def test_train_command_switches_the_classes_off_or_names_a_bad_value(run_cli, tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("".join(" ".join(r) + "\n" for s in _ner_data(3) for r in s.rows + [[]]),
                     encoding="utf-8")
    model = tmp_path / "m.ftm"
    result = run_cli("train", "ner", train, "-o", model, "--epochs", "1", "--ambiguity-classes", "off",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert fasttag.load(model).ambiguity is None
    result = run_cli("train", "ner", train, "-o", tmp_path / "n.ftm", "--ambiguity-classes", "maybe",
                     cwd=tmp_path)
    err = result.stderr.decode()
    assert result.returncode == 2 and "--ambiguity-classes" in err
    assert len(err.strip().splitlines()) <= 2 and "Traceback" not in err
    assert not (tmp_path / "n.ftm").exists()
