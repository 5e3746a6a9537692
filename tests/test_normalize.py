"""Width folding, character classes and atomic runs."""
import pytest
from hypothesis import given, settings, strategies as st

from fasttag.features.normalize import (
    CJK,
    DATE,
    DIGIT,
    LATIN,
    NUMERAL,
    OTHER,
    PUNCT,
    SPACE,
    atomic_runs,
    char_class,
    char_classes,
    normalize_char,
    normalize_text,
)


# --- normalisation -------------------------------------------------------------


@pytest.mark.parametrize("full, half", [
    ("１９９８年", "1998年"),
    ("ＡＢＣ", "ABC"),
    ("ｈｔｔｐ：／／ｅｘａｍｐｌｅ．ｃｏｍ", "http://example.com"),
    ("今年是１９９８年，ＧＤＰ增长８．５％。", "今年是1998年，GDP增长8.5%。"),
    ("比分３∶０", "比分3∶0"),
    ("全角\u3000空格", "全角 空格"),
    ("￥１００", "¥100"),
])
def test_full_and_half_width_normalise_alike(full, half):
    assert normalize_text(full) == normalize_text(half) == half


def test_chinese_punctuation_unchanged():
    punct = "，。、“”‘’《》「」『』〈〉【】…—·"
    assert normalize_text(punct) == punct
    # the full-width ASCII variants other than the Chinese comma fold
    assert normalize_text("；：！？（）") == ";:!?()"
    for c in "，。、“”《》…—":
        assert normalize_char(c) == c
    assert normalize_text("中文汉字，我们") == "中文汉字，我们"


def test_normalize_char_ranges():
    assert normalize_char("\uff01") == "!"
    assert normalize_char("\uff5e") == "~"
    assert normalize_char("\u3000") == " "
    assert normalize_char("\uff5f") == "\uff5f"  # just past the folded range
    assert normalize_char("ｱ") == "ｱ"           # half-width katakana untouched


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_normalisation_preserves_length(s):
    out = normalize_text(s)
    assert len(out) == len(s)
    assert out == "".join(normalize_char(c) for c in s)
    assert normalize_text(out) == out  # idempotent


# --- classes -------------------------------------------------------------------


@pytest.mark.parametrize("chars, cls", [
    ("中国汉字㐀豈𠀀々〆", CJK),
    ("〇零一二三四五六七八九十百千万亿两", NUMERAL),
    ("年月日时分秒", DATE),
    ("aZｂＺ", LATIN),
    ("09０９", DIGIT),
    ("，。、“”《》！？.,!?%＄￥+", PUNCT),
    (" \t\n\u3000\u00a0", SPACE),
    ("😀\x00\x1fαあ한é", OTHER),
])
def test_char_class(chars, cls):
    for c in chars:
        assert char_class(c) == cls, c
    assert char_classes(chars) == [cls] * len(chars)


def test_char_classes_sentence():
    assert char_classes("１９９８年ＧＤＰ增长８．５％") == [
        DIGIT, DIGIT, DIGIT, DIGIT, DATE, LATIN, LATIN, LATIN, CJK, CJK,
        DIGIT, PUNCT, DIGIT, PUNCT]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_char_classes_agree_with_char_class(s):
    classes = char_classes(s)
    assert classes == [char_class(c) for c in s]
    assert classes == char_classes(normalize_text(s))
    assert all(0 <= k <= 7 for k in classes)


# --- atomic runs -----------------------------------------------------------------


def runs(text, **kw):
    return [text[a:b] for a, b in atomic_runs(text, **kw)]


def test_runs_urls_and_emails():
    assert runs("请访问http://www.example.com/a?b=1。") == ["http://www.example.com/a?b=1"]
    assert runs("见www.pku.edu.cn，谢谢") == ["www.pku.edu.cn"]
    assert runs("网址：https://x.org/p_(1)).") == ["https://x.org/p_(1)"]
    assert runs("ｈｔｔｐ：／／ｅｘａｍｐｌｅ．ｃｏｍ") == ["ｈｔｔｐ：／／ｅｘａｍｐｌｅ．ｃｏｍ"]
    assert runs("来信请寄zhang.san@pku.edu.cn。") == ["zhang.san@pku.edu.cn"]
    assert runs("ｍａｉｌ＠ｅｘａｍｐｌｅ．ｃｏｍ好") == ["ｍａｉｌ＠ｅｘａｍｐｌｅ．ｃｏｍ"]


def test_runs_numbers():
    assert runs("圆周率约3.14。") == ["3.14"]
    assert runs("共1,000人，12:30开会，增长50%，") == ["1,000", "12:30", "50%"]
    assert runs("１９９８年") == ["１９９８"]
    assert runs("３．１４") == ["３．１４"]
    assert runs("到了3.") == ["3"]  # a separator must be followed by a digit
    assert runs("一九九八年") == []
    assert runs("以３∶０获胜") == ["３∶０"]
    assert runs("１，２名") == ["１", "２"]  # the Chinese comma ends a number


def test_runs_latin_and_mixed():
    assert runs("我买了iPhone12和一台MP3。") == ["iPhone12", "MP3"]
    assert runs("我买了iPhone12", digits=False) == ["iPhone"]
    assert runs("我买了iPhone12", latin=False) == ["12"]
    assert runs("我买了iPhone12", latin=False, digits=False) == []
    assert runs("ＡＢＣ公司") == ["ＡＢＣ"]
    assert runs("http://a.com", urls=False) == ["http", "a", "com"]
    assert runs("a@b.com", emails=False) == ["a", "b", "com"]


def test_runs_of_other_alphabets():
    """Alphabets written with spaces form runs, with all their combining
    marks (Hebrew points, Arabic vowels); scripts written without spaces,
    and Han and kana, are what a segmenter splits: no runs."""
    assert runs("他去Zürich了，Москва和서울") == ["Zürich", "Москва", "서울"]
    assert runs("他说שָׁלוֹם和مَرْحَبًا") == ["שָׁלוֹם", "مَرْحَبًا"]
    assert runs("Zu\u0308rich12") == ["Zu\u0308rich12"]
    assert runs("一二三〇年ポケモン") == []
    assert runs("ฉันกินข้าว") == [] and runs("रामकिताबपढ़ता") == []


def test_runs_spans_are_offsets_into_the_original():
    text = "２０２０年ＣＯＶＩＤ病毒"
    assert atomic_runs(text) == [(0, 4), (5, 10)]


PIECES = list("ab1２.:,，∶%@/w中。 ｈｔｐ：") + ["http://", "www.", ".com", "@x.cn"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=20).map("".join),
       st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_runs_sorted_disjoint_inside(text, latin, digits, urls, emails):
    got = atomic_runs(text, latin=latin, digits=digits, urls=urls, emails=emails)
    prev_end = 0
    for start, end in got:
        assert 0 <= prev_end <= start < end <= len(text)
        prev_end = end


@settings(max_examples=100, deadline=None)
@given(st.text())
def test_runs_on_any_text(text):
    prev_end = 0
    for start, end in atomic_runs(text):
        assert prev_end <= start < end <= len(text)
        prev_end = end
