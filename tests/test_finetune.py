"""Fine-tuning a trained model on new data (``init=``, ``--init``), through
the public API and the console script."""
import random
from pathlib import Path

import numpy as np
import pytest

import fasttag
from fasttag import InputError, Segmenter, SpanTagger, Tagger

DATA = Path(__file__).resolve().parent.parent / "data"
LEXICON = {"the": "DET", "a": "DET", "dog": "NOUN", "cat": "NOUN", "runs": "VERB", "sees": "VERB", ".": "PUNCT"}


def _pairs(n, seed, lexicon=LEXICON):
    rng = random.Random(seed)
    words = sorted(lexicon)
    out = []
    for _ in range(n):
        ws = [rng.choice(words) for _ in range(rng.randint(2, 6))]
        out.append((ws, [lexicon[w] for w in ws]))
    return out


@pytest.fixture(scope="module")
def base():
    return Tagger.train(_pairs(60, 0), epochs=5, seed=0, verbose=False)


def test_data_the_model_already_tags_leaves_it_unchanged(base):
    """Fine-tuning starts from the model's weights, and they count in the
    average from the first step: without a mistake there is no update, so
    the fine-tuned model is the model."""
    assert base.tag_sents([w for w, _ in _pairs(30, 1)]) == [t for _, t in _pairs(30, 1)]
    tuned = Tagger.train(_pairs(30, 1), init=base, epochs=3, verbose=False)
    assert tuned.model.training_info["best_epoch"] == 3
    for name in ("emit.keys", "emit.labels", "emit.weights", "transitions"):
        np.testing.assert_array_equal(tuned._parts()[1][name], base._parts()[1][name])
    assert tuned.meta["fine_tuned"] == 1 and "fine_tuned" not in base.meta


def test_fine_tuning_learns_the_new_data_and_keeps_the_old(base):
    # new data: "runs" is now a noun after "the"
    new = [(["the", "runs", "sees", "a", "dog"], ["DET", "NOUN", "VERB", "DET", "NOUN"])] * 10
    assert base.tag(["the", "runs", "sees", "a", "dog"])[1] == "VERB"
    tuned = Tagger.train(new, init=base, epochs=3, verbose=False)
    assert tuned.tag(["the", "runs", "sees", "a", "dog"]) == new[0][1]
    assert tuned.tag(["a", "cat", "sees", "the", "dog", "."]) == ["DET", "NOUN", "VERB", "DET", "NOUN", "PUNCT"]
    # the original is untouched: fine-tuning works on a copy
    assert base.tag(["the", "runs", "sees", "a", "dog"])[1] == "VERB"


def test_new_tags_are_refused_unless_allowed(base):
    new = [(["the", "dog", "wags"], ["DET", "NOUN", "WAG"])] * 5 + _pairs(20, 3)
    with pytest.raises(InputError, match=r"tags the model does not know \(WAG\).*allow_new_tags"):
        Tagger.train(new, init=base, epochs=1, verbose=False)
    tuned = Tagger.train(new, init=base, epochs=3, allow_new_tags=True, verbose=False)
    assert tuned.tags[:len(base.tags)] == base.tags and tuned.tags[-1] == "WAG"
    assert tuned.tag(["the", "dog", "wags"]) == ["DET", "NOUN", "WAG"]
    again = fasttag.loads(tuned.to_bytes())
    assert again.tag(["the", "dog", "wags"]) == ["DET", "NOUN", "WAG"]
    assert again.tag(["a", "cat", "runs"]) == ["DET", "NOUN", "VERB"]


def test_structure_options_and_wrong_models_are_refused(base, tmp_path):
    with pytest.raises(InputError, match="templates cannot change"):
        Tagger.train(_pairs(5, 2), init=base, templates=["w"], verbose=False)
    with pytest.raises(InputError, match="Segmenter model cannot be fine-tuned as a Tagger"):
        Tagger.train(_pairs(5, 2), init=fasttag.load("zh"), verbose=False)
    with pytest.raises(TypeError):
        Tagger.train(_pairs(5, 2), init=42, verbose=False)
    base.save(tmp_path / "base.ftm")
    tuned = Tagger.train(_pairs(5, 2), init=str(tmp_path / "base.ftm"), epochs=1, verbose=False)
    assert tuned.tags == base.tags


def test_a_tag_dictionary_word_can_learn_a_new_tag():
    """A word closed to its training tags in the base model's tag
    dictionary is opened when the new data gives it another: the tuned
    model tags the new data as taught (it used to keep "dog" a NOUN while
    reporting 100% training accuracy)."""
    old = [(["the", "dog", "runs"], ["DET", "NOUN", "VERB"]), (["the", "cat", "sleeps"], ["DET", "NOUN", "VERB"])] * 10
    base = Tagger.train(old, tagdict_min_count=2, epochs=3, verbose=False)
    assert "dog" in base.model.tagdict
    new = [(["the", "dog", "runs"], ["DET", "PROPN", "VERB"])] * 20
    tuned = Tagger.train(new, init=base, allow_new_tags=True, epochs=5, verbose=False)
    assert tuned.tag(["the", "dog", "runs"]) == ["DET", "PROPN", "VERB"]
    assert tuned.evaluate(new)["accuracy"] == 1.0
    assert "dog" not in tuned.model.tagdict and "cat" in tuned.model.tagdict     # only the word that changed
    assert "dog" in base.model.tagdict                                           # the base model is untouched
    again = Tagger.train([(["the", "dog", "runs"], ["DET", "VERB", "VERB"])] * 20, init=base, epochs=5,
                         verbose=False)                                          # a known tag, outside its class
    assert again.tag(["the", "dog", "runs"])[1] == "VERB"


def test_a_span_tagger_is_fine_tuned_on_its_own_tag_column(tmp_path, run_cli):
    """A chunker trained on column 2 of a four-column file reads column 2
    of the new data too (it used to read the last, NER, column)."""
    base, tuned = tmp_path / "base.ftm", tmp_path / "tuned.ftm"
    sample = DATA / "sample_ner.conll"
    assert run_cli("train", "chunk", sample, "--column", "2", "-o", base, "--epochs", "2", "--quiet").returncode == 0
    done = run_cli("train", "chunk", sample, "--init", base, "-o", tuned, "--epochs", "2", "--quiet")
    assert done.returncode == 0, done.stderr
    model = fasttag.load(tuned)
    assert model.meta["tag_column"] == 2 and "NP" in model.types and "LOC" not in model.types
    assert model.evaluate(str(sample))["f1"] > 0.9
    with pytest.raises(InputError, match="ambiguity_classes cannot change"):
        SpanTagger.train(str(sample), task="ner", init=SpanTagger.train(str(sample), task="ner", epochs=1,
                                                                         verbose=False),
                         ambiguity_classes=False, verbose=False)


def test_span_tagger_new_entity_type():
    train = [(["Anna", "visited", "Paris"], ["B-PER", "O", "B-LOC"])] * 8
    base = SpanTagger.train(train, epochs=3, verbose=False)
    new = [(["Anna", "joined", "Acme", "Corp"], ["B-PER", "O", "B-ORG", "I-ORG"])] * 8
    with pytest.raises(InputError, match="ORG"):
        SpanTagger.train(new, init=base, epochs=1, verbose=False)
    tuned = SpanTagger.train(new, init=base, epochs=3, allow_new_tags=True, verbose=False)
    assert set(tuned.types) == {"PER", "LOC", "ORG"}
    assert tuned.spans(["Anna", "joined", "Acme", "Corp"]) == [("PER", 0, 1), ("ORG", 2, 4)]
    assert fasttag.loads(tuned.to_bytes()).spans(["Anna", "visited", "Paris"]) == [("PER", 0, 1), ("LOC", 2, 3)]


def test_segmenter_fine_tuning_learns_a_word():
    seg = Segmenter.train(DATA / "sample_zh_train.txt", epochs=3, verbose=False)
    line = "我们喜欢北京烤鸭"
    new = [["我们", "喜欢", "北京烤鸭"]] * 10
    tuned = Segmenter.train(new, init=seg, epochs=3, verbose=False)
    assert tuned.segment(line) == ["我们", "喜欢", "北京烤鸭"]
    with pytest.raises(InputError, match="allow_new_tags does not apply to segmenter"):
        Segmenter.train(new, init=seg, epochs=1, allow_new_tags=True, verbose=False)


def test_cli_init(run_cli, tmp_path, base):
    base.save(tmp_path / "base.ftm")
    train = tmp_path / "new.tsv"
    train.write_text("the\tDET\nruns\tNOUN\nsees\tVERB\n\n" * 10, encoding="utf-8")
    r = run_cli("train", "pos", str(train), "-o", str(tmp_path / "tuned.ftm"), "--init",
                str(tmp_path / "base.ftm"), "--epochs", "3", "--quiet")
    assert r.returncode == 0, r.stderr
    assert fasttag.load(str(tmp_path / "tuned.ftm")).tag(["the", "runs", "sees"]) == ["DET", "NOUN", "VERB"]
    train.write_text("the\tDET\ndog\tWAG\n\n", encoding="utf-8")
    r = run_cli("train", "pos", str(train), "-o", str(tmp_path / "t2.ftm"), "--init", str(tmp_path / "base.ftm"),
                "--quiet")
    err = r.stderr.decode()
    assert r.returncode == 2 and "--allow-new-tags" in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert not (tmp_path / "t2.ftm").exists()
    r = run_cli("train", "pos", str(train), "-o", str(tmp_path / "t2.ftm"), "--init", str(tmp_path / "base.ftm"),
                "--allow-new-tags", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "WAG" in fasttag.load(str(tmp_path / "t2.ftm")).tags


# ---------------------------------------------------------------- online updates

def test_updates_in_batches_equal_one_pass(base):
    data = _pairs(40, 5)
    one = Tagger.untrained(data)
    one.update(data)
    parts = Tagger.untrained(data)
    for i in range(0, 40, 7):
        parts.update(data[i:i + 7])
    for name, arr in one._parts()[1].items():
        np.testing.assert_array_equal(parts._parts()[1][name], arr, err_msg=name)


def test_untrained_model_learns_from_updates():
    data = _pairs(40, 6)
    model = Tagger.untrained(data)
    assert model.tags == sorted(set(LEXICON.values()))
    wrong = [model.update(data) for _ in range(4)]
    assert wrong[0] > 0 and wrong[-1] == 0.0
    assert model.tag_sents([w for w, _ in data]) == [t for _, t in data]
    again = fasttag.loads(model.to_bytes())
    assert again.tag_sents([w for w, _ in data]) == [t for _, t in data]


def test_updates_keep_a_model_that_is_right(base):
    before = base.to_bytes()
    copy = fasttag.loads(before)
    assert copy.update(_pairs(20, 1)) == 0.0
    for name, arr in base._parts()[1].items():
        np.testing.assert_array_equal(copy._parts()[1][name], arr, err_msg=name)


def test_update_tag_rules():
    data = _pairs(10, 7)
    model = Tagger.untrained(data)
    new = [(["the", "dog", "wags"], ["DET", "NOUN", "WAG"])]
    with pytest.raises(InputError, match="WAG"):
        model.update(new)
    model.update(new, allow_new_tags=True)
    assert model.tags[-1] == "WAG"
    with pytest.raises(InputError, match="before the first update"):
        model.update([(["the", "dog", "yelps"], ["DET", "NOUN", "YELP"])], allow_new_tags=True)


def test_fine_tuning_keeps_the_base_models_algorithm(base):
    """Perceptron steps on a MIRA model's weights undo it (the bundled NER
    model fell from F1 0.91 to 0.67): fine-tuning keeps the algorithm, k
    and C the model was trained with, unless the call names another."""
    mira = Tagger.train(_pairs(60, 0), epochs=3, algorithm="mira", k=2, C=0.5, verbose=False)
    tuned = Tagger.train(_pairs(20, 1), init=mira, epochs=1, verbose=False)
    info = tuned.model.training_info
    assert (info["algorithm"], info["k"], info["C"]) == ("mira", 2, 0.5)
    other = Tagger.train(_pairs(20, 1), init=mira, epochs=1, algorithm="perceptron", verbose=False)
    assert other.model.training_info["algorithm"] == "perceptron"
    assert Tagger.train(_pairs(20, 1), init=base, epochs=1, verbose=False).model.training_info["algorithm"] == \
        base.model.training_info["algorithm"]


def test_fine_tuning_and_updates_grow_the_training_vocabulary(base):
    """Words of the new data are known words afterwards: evaluate's
    unknown-word counts, and the segmenter's vocabulary."""
    new = [(["the", "zebra", "runs", "."], ["DET", "NOUN", "VERB", "PUNCT"])] * 5
    assert base.evaluate(new)["unknown_tokens"] == 5
    tuned = Tagger.train(new, init=base, epochs=1, verbose=False)
    assert tuned.evaluate(new)["unknown_tokens"] == 0
    assert fasttag.loads(tuned.to_bytes()).evaluate(new)["unknown_tokens"] == 0
    online = Tagger.untrained(_pairs(10, 0))
    online.update(new)
    assert online.evaluate(new)["unknown_tokens"] == 0
    seg = Segmenter.train(DATA / "sample_zh_train.txt", epochs=1, verbose=False)
    assert "北京烤鸭" not in seg.vocabulary()
    tuned = Segmenter.train([["我们", "喜欢", "北京烤鸭"]] * 3, init=seg, epochs=1, verbose=False)
    assert "北京烤鸭" in tuned.vocabulary() and "北京烤鸭" in fasttag.loads(tuned.to_bytes()).vocabulary()


def test_fine_tuning_without_dev_keeps_the_temperature(base):
    calibrated = Tagger.from_bytes(base.to_bytes())
    tau = calibrated.calibrate(_pairs(30, 5))
    assert tau != 1.0
    assert Tagger.train(_pairs(10, 6), init=calibrated, epochs=1, verbose=False).temperature == tau
    assert Tagger.train(_pairs(10, 6), epochs=1, verbose=False).temperature == 1.0
