"""Everyday mistakes in Python, and what a Python package must do.

The table: each wrong call raises one clear exception whose message names
what is wrong, never silent nonsense.  Then pickling and copying of every
task model, the segmenter's offsets and user words, and reading another
encoding.
"""
import copy
import io
import multiprocessing
import pickle
from pathlib import Path

import numpy as np
import pytest

import fasttag
from fasttag import InputError, Segmenter, SpanTagger, Tagger, Tokenizer
from fasttag.text.formats import input_encoding

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def models():
    return {
        "pos": Tagger.train(str(DATA / "sample.conllu"), epochs=2, verbose=False),
        "seg": Segmenter.train(str(DATA / "sample_zh_train.txt"), epochs=2, verbose=False),
        "ner": SpanTagger.train(str(DATA / "sample_ner.conll"), task="ner", epochs=2, feature_columns=[],
                               verbose=False),
        "tok": Tokenizer.train(str(DATA / "sample_tok.conllu"), epochs=2, verbose=False),
    }


# (id, model or None, call, exception, what the message must say)
MISTAKES = [
    ("segment-a-list", "seg", lambda m: m.segment(["我爱北京"]), TypeError, "segment_lines"),
    ("segment-bytes", "seg", lambda m: m.segment("我爱".encode()), TypeError, "decode"),
    ("segment-lines-one-str", "seg", lambda m: list(m.segment_lines("我爱北京")), TypeError, "segment()"),
    ("tokenize-offsets-not-str", "seg", lambda m: m.tokenize(["我"]), TypeError, "str"),
    ("tag-a-str", "pos", lambda m: m.tag("I saw her"), TypeError, "list of token strings"),
    ("tag-sents-a-str", "pos", lambda m: m.tag_sents("I saw her"), TypeError, "list of sentences"),
    ("tag-sents-an-int", "pos", lambda m: m.tag_sents(3), TypeError, "int"),
    ("tag-sents-token-int", "pos", lambda m: m.tag_sents([["I", 3]]), TypeError, "token 1"),
    ("evaluate-missing-path", "pos", lambda m: m.evaluate("no-such-test.conllu"), FileNotFoundError,
     "no-such-test.conllu"),
    ("evaluate-seg-missing-path", "seg", lambda m: m.evaluate("no-such-gold.txt"), FileNotFoundError,
     "no-such-gold.txt"),
    ("add-words-bad-mode", "seg", lambda m: m.add_words("区块链", mode="hard"), ValueError, "mode"),
    ("add-words-int", "seg", lambda m: m.add_words(3), TypeError, "int"),
    ("add-words-whitespace", "seg", lambda m: m.add_words("区块 链"), InputError, "whitespace"),
    ("add-words-non-str-word", "seg", lambda m: m.add_words(["区块链", 7]), TypeError, "int"),
    ("add-words-list-item-with-space", "seg", lambda m: m.add_words(["充满 希望"]), InputError, "'充满 希望'"),
    ("add-words-list-item-with-weight", "seg", lambda m: m.add_words(["希望的 10"]), InputError, "whitespace"),
    ("add-words-empty-list-item", "seg", lambda m: m.add_words([""]), InputError, "empty"),
    ("train-blank-tag", None, lambda _: Tagger.train([(["a", "b"], ["X", ""])], verbose=False), InputError,
     "without whitespace"),
    ("train-tag-with-space", None, lambda _: Tagger.train([(["a", "b"], ["X", "Y Z"])], verbose=False), InputError,
     "'Y Z'"),
    ("train-dict-token", None, lambda _: Tagger.train([(["a", {"w": "b"}], ["X", "Y"])], verbose=False), TypeError,
     "token 1"),
    ("load-userdict-missing", "seg", lambda m: m.load_userdict("no-such-dict.txt"), InputError,
     "no-such-dict.txt"),
    ("train-mismatched-lengths", None, lambda _: Tagger.train([(["a", "b"], ["X"])], verbose=False),
     InputError, "2 words and 1 tags"),
    ("train-words-as-str", None, lambda _: Tagger.train([("a b", "X Y")], verbose=False), TypeError, "str"),
    ("train-not-a-list", None, lambda _: Tagger.train(3, verbose=False), TypeError, "int"),
    ("train-no-sentences", None, lambda _: Tagger.train([], verbose=False), InputError, "no training"),
    ("train-negative-epochs", None, lambda _: Tagger.train([(["a"], ["X"])], epochs=-1), InputError, "epochs"),
    ("train-unknown-option", None, lambda _: Tagger.train([(["a"], ["X"])], epoch=3), TypeError, "epoch"),
    ("train-empty-dev", None, lambda _: Tagger.train([(["a", "b"], ["X", "Y"])], dev=[], verbose=False), InputError,
     "no dev"),
    ("train-a-none-tag", None, lambda _: Tagger.train([(["I", "run"], [None, "VERB"])], verbose=False),
     TypeError, "NoneType"),
    ("train-dev-of-another-tag-set", None,
     lambda _: Tagger.train([(["a", "b"], ["X", "Y"])], dev=[(["a", "b"], ["NN", "VB"])], verbose=False),
     InputError, "gold tags are not in the model's tag set"),
    ("train-conllu-tags-from-lemmas", None, lambda _: Tagger.train(str(DATA / "sample.conllu"), column=2,
                                                                   verbose=False), InputError, "(LEMMA)"),
    ("train-spans-on-conllu", None, lambda _: SpanTagger.train(str(DATA / "sample.conllu"), task="ner",
                                                               verbose=False), InputError, "not CoNLL-U"),
    ("evaluate-spans-on-conllu", "ner", lambda m: m.evaluate(str(DATA / "sample.conllu")), InputError,
     "not CoNLL-U"),
    ("nbest-too-many", "pos", lambda m: m.tag(["I", "saw"], n_best=10 ** 6), ValueError, "at most 1000"),
    ("nbest-spans-too-many", "ner", lambda m: m.tag_sents([["EU", "rejects"]], n_best=1001), ValueError,
     "at most 1000"),
    ("evaluate-seg-nothing", "seg", lambda m: m.evaluate([]), InputError, "no words"),
    ("seg-train-ints", None, lambda _: Segmenter.train([[1, 2]], verbose=False), TypeError, "int"),
    ("load-an-int", None, lambda _: fasttag.load(3), TypeError, "int"),
    ("loads-a-str", None, lambda _: fasttag.loads("FASTTAG"), TypeError, "str"),
    ("encoding-unknown", None, lambda _: input_encoding("klingon").__enter__(), ValueError, "klingon"),
]


@pytest.mark.parametrize("kind,call,exc,says", [pytest.param(k, c, e, s, id=i) for i, k, c, e, s in MISTAKES])
def test_api_mistake(models, kind, call, exc, says):
    model = copy.deepcopy(models[kind]) if kind else None
    with pytest.raises(exc) as info:
        call(model)
    assert says in str(info.value)


def test_failed_add_words_changes_nothing(models):
    seg = copy.deepcopy(models["seg"])
    before = seg.segment("区块链技术和云计算")
    with pytest.raises(TypeError):
        seg.add_words(["区块链", None])
    assert seg.user_words == {"force": {}, "feature": {}}
    assert seg.segment("区块链技术和云计算") == before


# ---------------------------------------------------------------- pickling

def _tag_with(blob, text):
    model = pickle.loads(blob)
    return model.segment(text)


@pytest.mark.parametrize("kind", ["pos", "seg", "ner", "tok"])
def test_pickle_and_deepcopy_through_model_bytes(models, kind):
    model = models[kind]
    for clone in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model), copy.copy(model)):
        assert type(clone) is type(model) and clone is not model
        assert clone.to_bytes() == model.to_bytes()
        assert clone.meta == model.meta                     # the run's timings travel too
    # a pickle holds the model file's bytes, not the compiled objects
    assert model.to_bytes() in pickle.dumps(model)


def test_pickled_models_predict_the_same(models):
    pos, ner, tok = (pickle.loads(pickle.dumps(models[k])) for k in ("pos", "ner", "tok"))
    sents = [["I", "like", "green", "eggs", "."], ["EU", "rejects", "German", "call"]]
    assert pos.tag_sents(sents) == models["pos"].tag_sents(sents)
    assert ner.tag_sents(sents) == models["ner"].tag_sents(sents)
    assert tok.tokenize("I don't like it. Do you?") == models["tok"].tokenize("I don't like it. Do you?")


def test_spawn_pool_carries_a_segmenter(models):
    seg = copy.deepcopy(models["seg"])
    seg.add_words(["天安门"])
    text = "我爱北京天安门广场"
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        got = pool.apply(_tag_with, (pickle.dumps(seg), text))
    assert got == seg.segment(text) and "天安门" in got


# ---------------------------------------------------------------- Chinese

def test_add_words_takes_a_word_a_list_or_a_path(models, tmp_path):
    seg = copy.deepcopy(models["seg"])
    text = "区块链技术和云计算"
    assert seg.add_words("区块链") == 1                     # a str is one word, never a path
    assert "区块链" in seg.segment(text)
    assert seg.add_words(["云计算", "技术和"]) == 2
    assert seg.segment(text) == ["区块链", "技术和", "云计算"]
    seg.clear_words()
    (tmp_path / "words.txt").write_text("区块链 10\n云计算\n", encoding="utf-8")
    assert seg.add_words(tmp_path / "words.txt") == 2         # a Path is a dictionary file
    assert seg.user_words["force"] == {"区块链": 10.0, "云计算": 1.0}
    seg.clear_words()
    assert seg.load_userdict(str(tmp_path / "words.txt")) == 2
    assert set(seg.user_words["force"]) == {"区块链", "云计算"}
    # a str naming an existing file is still a word
    assert seg.add_words(str(tmp_path / "words.txt"), mode="feature") == 1
    assert seg.user_words["feature"] == {str(tmp_path / "words.txt"): 1.0}


def test_user_words_are_saved_with_the_model(models, tmp_path):
    seg = copy.deepcopy(models["seg"])
    seg.add_words({"区块链": 5.0, "云计算": 2.0})
    seg.add_words(["人工智能"], mode="feature")
    seg.save(tmp_path / "user.ftm")
    loaded = fasttag.load(tmp_path / "user.ftm")
    assert loaded.user_words == seg.user_words
    for text in ("区块链技术和云计算", "人工智能的发展"):
        assert loaded.segment(text) == seg.segment(text)
    assert models["seg"].user_words == {"force": {}, "feature": {}}


def _reference_offsets(text, words):
    """Offsets the slow way: the i-th non-space character's position."""
    positions = [i for i, c in enumerate(text) if not c.isspace()]
    out, k = [], 0
    for w in words:
        out.append((w, positions[k], positions[k + len(w) - 1] + 1))
        k += len(w)
    return out


@pytest.mark.parametrize("text", ["迈向充满希望的新世纪", "  我爱 北京\t天安门\n", "", "   ", "iPhone12 很好。"])
def test_tokenize_offsets(models, text):
    seg = models["seg"]
    got = seg.tokenize(text)
    assert [w for w, _, _ in got] == seg.segment(text)
    assert all(text[a:b] == w for w, a, b in got)
    assert got == _reference_offsets(text, seg.segment(text))


def test_reading_another_encoding(models, tmp_path):
    seg = models["seg"]
    lines = ["我们 今天 去 北京 。", "他 在 大学 学习 。"]
    (tmp_path / "gold.txt").write_bytes(("\n".join(lines) + "\n").encode("gb18030"))
    with pytest.raises(InputError, match=r"gold\.txt:1: invalid UTF-8"):
        seg.evaluate(tmp_path / "gold.txt")
    expected = seg.evaluate(lines)
    with input_encoding("gb18030"):
        got = seg.evaluate(tmp_path / "gold.txt")
    assert got["f1"] == expected["f1"] and got["gold_words"] == expected["gold_words"]
    with open(tmp_path / "gold.txt", encoding="gb18030") as f:     # a text stream in its own encoding
        assert seg.evaluate(f)["gold_words"] == expected["gold_words"]
    (tmp_path / "bad.txt").write_bytes("我们\n".encode("gbk") + b"\xff\xff\n")
    with input_encoding("gbk"), pytest.raises(InputError, match=r"bad\.txt:2: invalid GBK"):
        seg.evaluate(tmp_path / "bad.txt")


def test_training_progress_lines(tmp_path, capsys):
    Tagger.train(str(DATA / "sample.conllu"), epochs=2, verbose=True)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("[fasttag pos] reading ") and err[0].endswith("sample.conllu")
    assert sum(" epoch " in line for line in err) == 2
    Tagger.train(str(DATA / "sample.conllu"), epochs=2, verbose=False)
    assert capsys.readouterr().err == ""


def test_slices_train_the_same_model():
    """The epoch runs in slices (for the bar and Ctrl-C): the model is the
    one a single pass over the same order gives, byte for byte."""
    from fasttag.model import training as trainer
    from fasttag.model.progress import Progress
    pairs = [(s.words, s.tags) for s in fasttag.text.formats.read(DATA / "sample.conllu")] * 3
    models = []
    for slices in (1, 7, 100):
        t = Tagger.train(pairs, epochs=1, verbose=False)
        data = t._encode(pairs, training=True)
        trainer.fit(t.model, data, epochs=3, progress=Progress("pos", False), slices=slices)
        models.append(t.to_bytes())
    assert models[0] == models[2]
    assert models[0] == models[1]


def test_progress_bar_only_on_a_terminal():
    from fasttag.model.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    out = Terminal()
    p = Progress("seg", stream=out)
    p.bar("epoch 1/2", 5, 10, 0.0, 500, "positions")
    p.line("epoch 1/2 done")
    text = out.getvalue()
    assert "\r[fasttag seg] epoch 1/2 [" in text and "50%" in text and "ETA" in text
    assert text.endswith("\r[fasttag seg] epoch 1/2 done\n")
    plain = io.StringIO()
    q = Progress("seg", stream=plain)
    q.bar("epoch 1/2", 5, 10, 0.0, 500, "positions")
    q.line("epoch 1/2 done")
    assert plain.getvalue() == "[fasttag seg] epoch 1/2 done\n"


def test_public_api_is_typed_and_documented():
    """Type hints resolve (py.typed promises them) and every parameter of
    the public methods is named in its docstring."""
    import inspect
    import typing
    root = Path(fasttag.__file__).resolve().parent
    assert (root / "py.typed").is_file()
    methods = [fasttag.load, fasttag.loads, fasttag.default_model_path, Tagger.train, Tagger.evaluate,
               Tagger.tag, Tagger.tag_sents, Segmenter.segment, Segmenter.segment_lines, Segmenter.tokenize,
               Segmenter.add_words, Segmenter.load_userdict, Segmenter.evaluate, SpanTagger.tag,
               SpanTagger.tag_sents, SpanTagger.spans, Tokenizer.tokenize, Tokenizer.tokenize_lines]
    for f in methods:
        hints = typing.get_type_hints(f)
        assert "return" in hints or f in (fasttag.load, fasttag.loads), f
        doc = inspect.getdoc(f) or ""
        for name in inspect.signature(f).parameters:
            if name in ("self", "cls", "options", "options_"):
                continue
            assert name in doc, (f.__qualname__, name)


def test_errors_name_the_method_called_and_the_sentence_given():
    ner = fasttag.load("en-ner")
    with pytest.raises(TypeError, match=r"^entities\(\) takes a str, not list"):
        ner.entities(["Angela"])
    with pytest.raises(TypeError, match=r"^spans\(\) takes one sentence as a list of token strings"):
        ner.spans("Angela Merkel")
    with pytest.raises(InputError, match=r"tag 'Q-Y' \(sentence 1, 0-based\) is not a tag of the IOB2 scheme"):
        SpanTagger.train([(["a", "b"], ["B-X", "O"]), (["a", "b"], ["B-X", "Q-Y"])], task="ner", verbose=False)


def test_nbest_of_a_greedy_model_and_bad_prune_thresholds_are_refused(tmp_path, run_cli):
    """A greedy model's best tags are not the first of an exact k-best list
    (they differed on 29 of 100 EWT sentences): n-best is refused, not
    inconsistent.  prune() takes a finite threshold >= 0."""
    pairs = [(["the", "dog", "runs"], ["DET", "NOUN", "VERB"]), (["a", "cat", "sleeps"], ["DET", "NOUN", "VERB"])]
    greedy = Tagger.train(pairs * 5, epochs=2, decoder="greedy", verbose=False)
    with pytest.raises(InputError, match="n-best lists need Viterbi decoding"):
        greedy.tag(["the", "cat"], n_best=2)
    greedy.save(tmp_path / "g.ftm")
    r = run_cli("tag", "-m", tmp_path / "g.ftm", "--pretokenized", "--json", "--nbest", "2", input=b"the cat\n")
    assert r.returncode == 2 and r.stderr.decode().count("\n") == 1 and "Viterbi" in r.stderr.decode()
    for bad in (float("nan"), -1.0, "1", None, True):
        with pytest.raises(ValueError, match="finite threshold of at least 0"):
            greedy.prune(bad)


def test_span_tagger_per_sentence_arguments_and_numpy_tokens():
    """columns and documents give one entry per sentence (a short list was
    a bare IndexError, a long one silently cut); numpy str tokens are
    tokens with document features too."""
    model = SpanTagger.train(str(DATA / "sample_ner.conll"), task="ner", epochs=1, verbose=False,
                             feature_columns=[1, 2], document_features=True)
    cols = [("NNP", "I-NP"), ("VBZ", "B-VP")]
    for kwargs in ({"columns": [cols]}, {"columns": [cols, cols], "documents": [0]},
                   {"columns": [cols, cols, cols]}):
        with pytest.raises(ValueError, match="entries for 2 sentences: give one per sentence"):
            model.tag_sents([["Paris", "is"], ["Anna", "runs"]], **kwargs)
    assert model.tag(np.array(["Paris", "is"]), columns=cols) == model.tag(["Paris", "is"], columns=cols)
