"""The segmenter a tokenizer carries for scripts written without spaces
(fasttag.tasks.spaceless): trained when the training text is mostly such
scripts, deciding inside their runs, stored in the tokenizer's file."""
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fasttag
from fasttag.errors import ModelFormatError
from fasttag.model import modelfile
from fasttag.tasks.tok import Tokenizer, read_conllu_text
from fasttag.text.goldtext import SurfaceToken
from fasttag.text.metrics import score_tokenization

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = DATA / "sample_spaceless.conllu"          # Japanese and Chinese, no spaces
TEXTS = ["今日は天気がいいです。私は毎朝コーヒーを飲みます。", "我们今天去北京参观博物馆。他在大学学习计算机科学。",
         "ok, 東京駅で友達に会いました!  中国经济 hello 2024年。\n\n这是一个美丽的城市"]


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.train(SAMPLE, verbose=False)


def words_f1(tokenizer, path):
    return tokenizer.evaluate(path)["word_f1"]


def test_a_spaceless_training_text_gives_a_tokenizer_with_a_segmenter(tok):
    assert isinstance(tok.segmenter, fasttag.Segmenter)
    with_segmenter = words_f1(tok, SAMPLE)
    segmenter, tok.segmenter = tok.segmenter, None
    try:
        alone = words_f1(tok, SAMPLE)
    finally:
        tok.segmenter = segmenter
    assert with_segmenter > alone
    assert tok.tokenize("我们今天去北京参观博物馆。") == [["我们", "今天", "去", "北京", "参观", "博物馆", "。"]]


def test_a_spaced_training_text_gives_none():
    tok = Tokenizer.train(DATA / "sample_tok.conllu", epochs=2, verbose=False)
    assert tok.segmenter is None
    header, arrays = modelfile.loads(tok.to_bytes())
    assert "segmenter" not in header and not any(k.startswith("segmenter/") for k in arrays)


def test_save_load_round_trip(tok, tmp_path):
    path = tmp_path / "tok.ftm"
    tok.save(path)
    again = Tokenizer.load(path)
    assert isinstance(again.segmenter, fasttag.Segmenter)
    assert [again.sentence_tokens(t) for t in TEXTS] == [tok.sentence_tokens(t) for t in TEXTS]
    assert again.to_bytes() == tok.to_bytes()


def test_tokenize_lines_and_to_conllu_use_the_segmenter(tok):
    # the tokenizer alone cuts コーヒー (coffee) in two: its character features know no words
    assert list(tok.tokenize_lines(TEXTS[:1])) == [[["今日", "は", "天気", "が", "いい", "です", "。"],
                                                  ["私", "は", "毎朝", "コーヒー", "を", "飲み", "ます", "。"]]]
    assert list(tok.tokenize_lines(TEXTS)) == [tok.tokenize(t) for t in TEXTS]
    assert list(tok.tokenize_lines(TEXTS, offsets=True)) == [tok.tokenize(t, offsets=True) for t in TEXTS]
    assert list(tok.tokenize_lines(TEXTS * 50, n_threads=2)) == [tok.tokenize(t) for t in TEXTS] * 50
    conllu = tok.to_conllu(TEXTS[1])
    forms = [line.split("\t")[1] for line in conllu.splitlines() if line and not line.startswith("#")]
    assert forms == [w for s in tok.tokenize(TEXTS[1]) for w in s]


@pytest.mark.parametrize("change", [
    lambda h, a: h.pop("segmenter"),                                  # its arrays then belong to nothing
    lambda h, a: h.update(segmenter=[]),
    lambda h, a: h["segmenter"].update(kind="tokenizer"),
    lambda h, a: a.pop(next(k for k in a if k.startswith("segmenter/"))),
    lambda h, a: h["segmenter"].update(tags=["B", "E"]),
])
def test_a_tampered_segmenter_raises_model_format_error(tok, change):
    header, arrays = modelfile.loads(tok.to_bytes())
    change(header, arrays)
    with pytest.raises(ModelFormatError):
        Tokenizer.from_bytes(modelfile.dumps(header, arrays))


_CHARS = "今日は天気がいです。私毎朝コーヒを飲みま我们去北京参观博物馆他在大学习计算机科、!?.,ab1 \n\u3000"


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=_CHARS, max_size=60))
def test_tokens_cover_the_text_without_whitespace(tok, text):
    sentences = tok.sentence_tokens(text)
    covered = np.zeros(len(text), dtype=bool)
    last = 0
    for s in sentences:
        assert s
        for t in s:
            assert isinstance(t, SurfaceToken)
            assert last <= t.start < t.end <= len(text) and text[t.start:t.end] == t.form
            assert not any(ch.isspace() for ch in t.form) and t.words and all(t.words)
            covered[t.start:t.end] = True
            last = t.end
    assert all(covered[i] != ch.isspace() for i, ch in enumerate(text))
    assert [w for s in tok.tokenize(text) for w in s] == [w for s in sentences for t in s for w in t.words]


def _segmenter_alone(segmenter, gold):
    """The segmenter's words over each gold sentence's raw text, as tokens."""
    spans = gold.sentence_spans()
    out = []
    for (a, b), words in zip(spans, segmenter.segment_lines(gold.text[a:b] for a, b in spans)):
        sent = []
        for w in words:
            while gold.text[a].isspace():
                a += 1
            sent.append(SurfaceToken(a, a + len(w), w, (w,)))
            a += len(w)
        out.append(sent)
    return out


def test_japanese_gsd_words_reach_the_segmenters(shared_data):
    folder = shared_data / "ud" / "UD_Japanese-GSD"
    if not (folder / "ja_gsd-ud-test.conllu").exists():
        pytest.skip("UD Japanese GSD not found in the shared data")
    tok = Tokenizer.train(folder / "ja_gsd-ud-dev.conllu", epochs=5, max_sentences=300, verbose=False)
    assert tok.segmenter is not None
    gold = read_conllu_text(folder / "ja_gsd-ud-test.conllu")
    alone = score_tokenization(gold.sentences, _segmenter_alone(tok.segmenter, gold))["word_f1"]
    assert tok.evaluate(folder / "ja_gsd-ud-test.conllu")["word_f1"] >= alone - 0.005


def test_unsegmented_tokens_train_a_tokenizer_without_a_segmenter(tmp_path):
    # every sentence one token: nothing to learn words from, so the tokenizer decides alone
    lines = []
    for n, s in enumerate(read_conllu_text(SAMPLE).sentences, 1):
        form = "".join(t.form for t in s)
        lines += [f"# text = {form}", f"1\t{form}\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No", ""]
    path = tmp_path / "whole.conllu"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tok = Tokenizer.train(path, epochs=2, verbose=False)
    assert tok.segmenter is None
    assert tok.tokenize("我们今天去北京参观博物馆。")


def test_a_pipeline_keeps_its_tokenizers_segmenter(tok):
    from fasttag.pipeline import Pipeline
    again = Pipeline.from_bytes(Pipeline(tok).to_bytes())
    assert isinstance(again.tokenizer.segmenter, fasttag.Segmenter)
    assert [again.tokenizer.sentence_tokens(t) for t in TEXTS] == [tok.sentence_tokens(t) for t in TEXTS]
