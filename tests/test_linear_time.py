"""Tokenizing is linear in the text, checked without a clock.

The compiled tokenizer counts the characters and candidates each of its
passes visits (``fasttag._core.tokenizer.work``): on adversarial inputs
(long runs without whitespace, full of punctuation, flags, marks ...) at
two sizes, each pass's count must grow like the text, and stay within a
constant per character.  The protected patterns are searched in windows
of bounded length (``fasttag.text.patterns``): every search the pattern
gets is checked to lie within a window, and their total length within a
constant times the text.
"""
import random

import numpy as np
import pytest

import fasttag
from fasttag._core import tokenizer as compiled
from fasttag.text import patterns

SIZE = 3000                  # characters of the smaller text; the larger is FACTOR times longer
FACTOR = 4
PER_CHAR = 400               # the most work a linear pass may do per character


def _repeat(unit):
    return lambda n: unit * max(1, n // len(unit))


def _base64(n):
    rng = random.Random(0)
    return "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") for _ in range(n))


FAMILIES = {
    "prose": _repeat("The cat (a tabby) sat on Mr. Smith's mat, didn't it? Yes: 3.5 kg at 10:30. "),
    "a.": _repeat("a."), "a@": _repeat("a@"), "#": _repeat("#"), ":": _repeat(":"), "/": _repeat("/"),
    ".": _repeat("."), "url dots": lambda n: "http://" + "a." * (n // 2) + "com",
    "1-": _repeat("1-"), "1/": _repeat("1/"), "1:": _repeat("1:"),
    "1'111": lambda n: "1" + "'111" * (n // 4) + "'1",
    "flags": _repeat("\U0001F1FA\U0001F1F8"), "odd flags": lambda n: "x" + "\U0001F1FA" * n,
    "zwj chain": _repeat("\U0001F468\u200d"),
    "json": _repeat('{"a":1,"b":[1,2,3]}'), "base64": _base64,
    "cjk": _repeat("\u4e2d\u6587\u5b57\u7b26\u4e32"),
    "marks": lambda n: "a" + "\u0301" * n, "letters": _repeat("abcdefghij"),
    "mixed case": _repeat("aB1-"), "suffixes": _repeat("don't"),
}


@pytest.fixture(scope="module")
def tok():
    return fasttag.load("en-tok")


def _work(tok, text):
    fz = tok.model.featurizer
    return compiled.work(text, fz.cat, fz.lower, fz.keys, tok._protected(text))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_pass_of_the_compiled_tokenizer_is_linear(tok, family):
    small_text = FAMILIES[family](SIZE)
    large_text = FAMILIES[family](SIZE * FACTOR)
    small, large = _work(tok, small_text), _work(tok, large_text)
    growth = large["chars"] / small["chars"]
    assert growth >= FACTOR * 0.9
    for name in compiled.PASS_NAMES:
        # a quadratic pass (a chunk walked for each of its candidates) grows like growth ** 2
        assert large[name] <= 1.25 * growth * small[name] + 100, (family, name, small[name], large[name])
        assert large[name] <= PER_CHAR * large["chars"], (family, name, large[name])
    assert large["candidates"] <= 2 * large["chars"]


def test_the_work_counts_see_every_pass(tok):
    counts = _work(tok, "Hello, world. It's 10:30 :) see http://x.org/a.b")
    assert set(compiled.PASS_NAMES) <= set(counts)
    assert all(counts[name] > 0 for name in compiled.PASS_NAMES)


class _Recorder:
    """The compiled pattern, recording the (pos, endpos) of each search."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.windows = []

    def finditer(self, text, pos=0, endpos=None):
        endpos = len(text) if endpos is None else endpos
        self.windows.append((pos, endpos))
        return self.pattern.finditer(text, pos, endpos)

    def __getattr__(self, name):
        return getattr(self.pattern, name)


PATTERN_FAMILIES = dict(FAMILIES, **{
    "long url": lambda n: "http://x.com/" + "a" * n + ".",
    "apostrophes": lambda n: "1" + "'1" * (n // 2),
    "emails": lambda n: "a." * (n // 2) + "@b",
    "hashtag digits": lambda n: "#" + "1" * n,
})


@pytest.mark.parametrize("family", sorted(PATTERN_FAMILIES))
def test_protected_patterns_search_bounded_windows(monkeypatch, family):
    recorder = _Recorder(patterns.PATTERN)
    monkeypatch.setattr(patterns, "PATTERN", recorder)
    n = 3 * patterns.WINDOW + 1234              # long enough for several windows
    text = PATTERN_FAMILIES[family](n)
    prose = PATTERN_FAMILIES["prose"](n)
    starts, ends, _ = patterns.protected_spans(text + " " + prose)
    assert np.all(starts[1:] >= ends[:-1])
    total = sum(b - a for a, b in recorder.windows)
    assert recorder.windows and all(0 < b - a <= patterns.WINDOW + 1 for a, b in recorder.windows)
    bound = 2 * patterns.WINDOW / (patterns.WINDOW - patterns.MAX_SPAN)
    assert total <= bound * (len(text) + len(prose) + 1) + patterns.WINDOW


def test_windows_keep_the_spans_of_short_pieces():
    """Pieces shorter than a window get the whole pattern's spans, also
    after a long piece (the windows never reach past it)."""
    text = "a." * patterns.WINDOW + " see http://x.org/a_b, 1,000 and :) 10:30 #tag @me"
    starts, ends, kinds = patterns.protected_spans(text)
    found = [text[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
    assert found == ["http://x.org/a_b", "1,000", ":)", "10:30", "#tag", "@me"]


def test_a_span_crossing_a_window_end_is_found_whole():
    """A span that starts before a window's last MAX_SPAN characters and
    ends after them is searched again from its start."""
    head = "a." * ((patterns.WINDOW - patterns.MAX_SPAN) // 2 + 10)
    url = "http://x.org/" + "b" * (patterns.MAX_SPAN // 2)
    text = head + '"' + url + '"' + "a." * patterns.WINDOW
    starts, ends, _ = patterns.protected_spans(text)
    assert (len(head) + 1, len(head) + 1 + len(url)) in set(zip(starts.tolist(), ends.tolist()))


def test_digit_groups_do_not_restart_inside_their_run():
    """A number of ' groups starts only at its run's start, never right
    after a digit and ' (each start would walk the rest of the run)."""
    text = "1" + "'111" * 50 + "'1"
    assert not len(patterns.protected_spans(text)[0])
    assert patterns.PATTERN.match("12345'111'000 ", 6) is None
    assert patterns.PATTERN.match("x'111'000 ", 2).group() == "111'000"
    starts, ends, _ = patterns.protected_spans("x 1'000'000 y")
    assert (starts.tolist(), ends.tolist()) == ([2], [11])
