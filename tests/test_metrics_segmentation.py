"""SIGHAN segmentation scores against hand-computed cases."""
import pytest
from hypothesis import given, settings, strategies as st

from fasttag.errors import InputError
from fasttag.text.formats import read_segmented, read_word_list
from fasttag.text.metrics import score_segmentation


def test_hand_computed_prf_and_oov():
    gold = [["我们", "在", "北京", "大学"], ["你好"]]
    pred = [["我们", "在", "北京大学"], ["你", "好"]]
    # gold spans: (0,2) (2,3) (3,5) (5,7) | (0,2); pred: (0,2) (2,3) (3,7) | (0,1) (1,2)
    words = {"我们", "在", "大学", "你", "好"}  # OOV gold tokens: 北京, 你好
    r = score_segmentation(gold, pred, words)
    assert (r["gold_words"], r["pred_words"], r["correct_words"], r["lines"]) == (5, 5, 2, 2)
    assert r["precision"] == pytest.approx(0.4)
    assert r["recall"] == pytest.approx(0.4)
    assert r["f1"] == pytest.approx(0.4)
    assert r["oov_rate"] == pytest.approx(2 / 5)
    assert r["oov_recall"] == 0.0
    assert r["iv_recall"] == pytest.approx(2 / 3)  # 我们 在 right, 大学 wrong


def test_oov_recall_nonzero():
    gold = [["张三", "说", "了", "话"]]
    pred = [["张三", "说了", "话"]]
    r = score_segmentation(gold, pred, words=["说", "了", "话"])  # any iterable
    assert r["precision"] == pytest.approx(2 / 3)
    assert r["recall"] == pytest.approx(2 / 4)
    assert r["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert r["oov_rate"] == pytest.approx(1 / 4)
    assert r["oov_recall"] == 1.0
    assert r["iv_recall"] == pytest.approx(1 / 3)


def test_identical_segmentation():
    gold = [["中国", "人民", "银行"], [], ["好"]]
    r = score_segmentation(gold, gold, words={"中国", "人民"})
    assert r["precision"] == r["recall"] == r["f1"] == 1.0
    assert r["oov_recall"] == r["iv_recall"] == 1.0
    assert r["oov_rate"] == pytest.approx(2 / 4)
    assert r["lines"] == 3


def test_completely_wrong_segmentation():
    gold = [["中国", "人民"]]
    pred = [["中", "国人", "民"]]
    r = score_segmentation(gold, pred, words=set())
    assert r["correct_words"] == 0
    assert r["precision"] == r["recall"] == r["f1"] == 0.0
    assert r["oov_rate"] == 1.0 and r["oov_recall"] == 0.0
    assert r["iv_recall"] is None                  # no in-vocabulary word to recall


def test_no_word_list_gives_none():
    r = score_segmentation([["a", "b"]], [["ab"]])
    assert r["oov_rate"] is None and r["oov_recall"] is None and r["iv_recall"] is None


def test_empty_input():
    r = score_segmentation([], [])
    assert r["precision"] == r["recall"] == r["f1"] == 0.0 and r["lines"] == 0


def test_mismatch_names_the_line():
    gold = [["我们"], ["北京", "大学"], ["好"]]
    pred = [["我们"], ["北京", "大", "雪"], ["好"]]
    with pytest.raises(InputError, match="line 2") as e:
        score_segmentation(gold, pred)
    assert e.value.line == 2
    with pytest.raises(InputError, match="line 2"):
        score_segmentation([["a"], ["b"]], [["a"]])


def test_whitespace_inside_words_is_ignored():
    r = score_segmentation([["北京 ", "大学"]], [["北京", "\u3000大学"]])
    assert r["f1"] == 1.0 and r["gold_words"] == 2


def test_read_segmented_lines_and_file(tmp_path):
    lines = ["\ufeff共同  创造  美好", "", "迈向 新 世纪\r\n"]
    assert read_segmented(lines) == [["共同", "创造", "美好"], [], ["迈向", "新", "世纪"]]
    p = tmp_path / "gold.utf8"
    p.write_bytes("\ufeff共同  创造\r\n\n新\u3000世纪\n".encode("utf-8"))
    assert read_segmented(p) == [["共同", "创造"], [], ["新", "世纪"]]
    assert read_segmented(str(p)) == read_segmented(p)


def test_read_word_list(tmp_path):
    p = tmp_path / "words.utf8"
    p.write_bytes("\ufeff中国\n 人民 \n\n银行\r\n".encode("utf-8"))
    assert read_word_list(p) == {"中国", "人民", "银行"}
    bad = tmp_path / "bad.utf8"
    bad.write_bytes("中国\n".encode("utf-8") + b"\xff\xfe\n")
    with pytest.raises(InputError) as e:
        read_word_list(bad)
    assert e.value.line == 2


sentences = st.lists(
    st.lists(st.text(alphabet="中国人民银行北京大学", min_size=1, max_size=4), max_size=6),
    max_size=5,
)


@settings(max_examples=100, deadline=None)
@given(sentences, st.sets(st.sampled_from(["中", "国人", "北京", "大学"])))
def test_self_score_is_perfect(gold, words):
    r = score_segmentation(gold, gold, words)
    n = sum(len(s) for s in gold)
    assert r["gold_words"] == r["pred_words"] == r["correct_words"] == n
    if n:
        assert r["precision"] == r["recall"] == r["f1"] == 1.0
        assert r["oov_recall"] == (1.0 if r["oov_rate"] > 0 else None)
        assert r["iv_recall"] == (1.0 if r["oov_rate"] < 1 else None)


@settings(max_examples=100, deadline=None)
@given(sentences, st.data())
def test_resegmenting_keeps_scores_in_range(gold, data):
    # any re-segmentation of the same characters scores within [0, 1]
    pred = []
    for words in gold:
        text = "".join(words)
        cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)))) if len(text) > 1 else set())
        bounds = [0] + [c for c in cuts if 0 < c < len(text)] + [len(text)]
        pred.append([text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a])
    r = score_segmentation(gold, pred)
    assert 0.0 <= r["precision"] <= 1.0 and 0.0 <= r["recall"] <= 1.0
    assert r["correct_words"] <= min(r["gold_words"], r["pred_words"])


def test_sighan2005_pku_gold(shared_data):
    """The PKU gold scores 1.0 against itself; its OOV rate is the bakeoff's 5.8%."""
    folder = shared_data / "sighan2005"
    gold_path, words_path = folder / "pku_test_gold.utf8", folder / "pku_training_words.utf8"
    if not (gold_path.is_file() and words_path.is_file()):
        pytest.skip("SIGHAN 2005 PKU files not found")
    gold = read_segmented(gold_path)
    words = read_word_list(words_path)
    raw_path = folder / "pku_test.utf8"
    if raw_path.is_file():
        raw = read_segmented(raw_path)
        assert len(raw) == len(gold)
    r = score_segmentation(gold, gold, words)
    assert r["f1"] == 1.0 and r["lines"] == len(gold)
    assert r["oov_rate"] == pytest.approx(0.058, abs=0.0015)
    one_char = [[ch for ch in "".join(s)] for s in gold]
    r = score_segmentation(gold, one_char, words)
    assert 0.0 < r["f1"] < 1.0
