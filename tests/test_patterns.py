"""Protected patterns (fasttag.text.patterns): URLs, e-mail addresses,
@mentions, #hashtags, emoticons, emoji and numbers found whole in text of
several languages, nothing in ordinary prose, and spans that are always
inside the text, ordered, disjoint and free of whitespace."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasttag.text.patterns import KINDS, OUTCOMES, PATTERN, outcomes, protected_spans


def found(text):
    starts, ends, kinds = protected_spans(text)
    return [(text[a:b], KINDS[k]) for a, b, k in zip(starts.tolist(), ends.tolist(), kinds.tolist())]


@pytest.mark.parametrize("text, expected", [
    # English web text
    ("See https://example.com/a?b=c. It works", [("https://example.com/a?b=c", "url")]),
    ("Search http://www.google.com/search?q=foo, then stop", [("http://www.google.com/search?q=foo", "url")]),
    ("(see www.x.org/path).", [("www.x.org/path", "url")]),
    ("Read en.wikipedia.org/wiki/Foo_(bar).", [("en.wikipedia.org/wiki/Foo_(bar)", "url")]),
    ("I bought it on Amazon.com.", [("Amazon.com", "url")]),
    ("Write to john.doe@example.com, or mailto:amy@compaq.com!",
     [("john.doe@example.com", "email"), ("mailto:amy@compaq.com", "email")]),
    ("thanks @jack_b #blessed :-) ;) :D <3 ^_^ XD o_O -_-",
     [("@jack_b", "mention"), ("#blessed", "hashtag"), (":-)", "emoticon"), (";)", "emoticon"),
      (":D", "emoticon"), ("<3", "emoticon"), ("^_^", "emoticon"), ("XD", "emoticon"), ("o_O", "emoticon"),
      ("-_-", "emoticon")]),
    ("nice one:) see you.:(", [(":)", "emoticon"), (":(", "emoticon")]),
    ("It cost $1,000,000.50 at 10:30am on 2026-11-27, about 3.14 times more.",
     [("1,000,000.50", "number"), ("10:30", "time"), ("2026-11-27", "date"), ("3.14", "number")]),
    ("Call 713-853-3989 on 9/11", [("713-853-3989", "digits"), ("9/11", "digits")]),
    ("👍🏽 👨‍👩‍👧 🇩🇪🇫🇷 1️⃣ ❤️", [("👍🏽", "emoji"), ("👨‍👩‍👧", "emoji"), ("🇩🇪", "emoji"), ("🇫🇷", "emoji"),
                             ("1️⃣", "emoji"), ("❤️", "emoji")]),
    # German
    ("Am 27.11.2026 um 10:30 Uhr kostete es 1.000,50 €, siehe www.beispiel.de.",
     [("27.11.2026", "date"), ("10:30", "time"), ("1.000,50", "number"), ("www.beispiel.de", "url")]),
    # French (space before : and !, quotes)
    ("Voir «https://exemple.fr/page» : c'est 3,5 % ! #génial",
     [("https://exemple.fr/page", "url"), ("3,5", "number"), ("#génial", "hashtag")]),
    # Russian
    ("Пишите на info@example.ru! #привет @Маша 1 000 и 2,5 кг :)",
     [("info@example.ru", "email"), ("#привет", "hashtag"), ("@Маша", "mention"), ("2,5", "number"),
      (":)", "emoticon")]),
    # Turkish
    ("Ankara'da 1.250,75 TL ödedim, saat 14:45'te #mutluyum", [("1.250,75", "number"), ("14:45", "time"),
                                                             ("#mutluyum", "hashtag")]),
    # Japanese and Chinese: no spaces around
    ("詳しくはhttps://example.jp/を見てください。#東京", [("https://example.jp/", "url"), ("#東京", "hashtag")]),
    ("请发邮件到test@example.cn。价格是3.5元😂", [("test@example.cn", "email"), ("3.5", "number"), ("😂", "emoji")]),
])
def test_patterns_are_found_whole(text, expected):
    assert found(text) == expected


@pytest.mark.parametrize("text", [
    "The cat sat on the mat.",
    "Der Hund bellt, weil er Hunger hat; ich nicht.",
    "Il fait beau aujourd'hui : allons-y !",
    "Привет, как дела? Всё хорошо.",
    "Ankara'ya gittim ve çok beğendim.",
    "今日は良い天気です。",
    "我爱北京天安门。",
    "e.g. this, i.e. that, at 5 a.m. or 3 p.m. in the U.S.A. with Mr. Smith.",
    "It costs $5 or €10 or 20%.",
    "(see page 3): the end (and x):",
    "list:(a) first, ratio 1:3 here, Chapter 2:(b), score 3:1.",
    "It ended.It began.Then file.txt and Node.js, preprocessor.pl, good.at it.",
    "C# and F# and item #1 or &#123; and a < 3 and b > 2 and x=(a+b) and f(x:y)",
    "versions 5.0.2195 and 0.9.79, 192.168.0.1, and the list 1,2,3",
    "an e-mail address like name@ is not one, nor is @ alone",
])
def test_ordinary_text_has_no_spans(text):
    assert found(text) == []


def test_kinds_and_types():
    assert len(set(KINDS)) == len(KINDS) and set(PATTERN.groupindex) == set(KINDS)
    starts, ends, kinds = protected_spans("a 1,000 b")
    assert all(a.dtype == np.int64 and a.ndim == 1 for a in (starts, ends, kinds))
    starts, ends, kinds = protected_spans("")
    assert len(starts) == len(ends) == len(kinds) == 0 and starts.dtype == np.int64
    with pytest.raises(TypeError, match="protected_spans\\(\\) takes a str, not bytes"):
        protected_spans(b"www.x.org")


def test_outcomes_against_gold_tokens():
    text = "At 10:30 see 1969-1970 and 2.0:n"
    tokens = [(0, 2), (3, 8), (9, 12), (13, 17), (17, 18), (18, 22), (23, 26), (27, 32)]
    kinds, found_ = outcomes(text, tokens)
    assert [(KINDS[k], OUTCOMES[o]) for k, o in zip(kinds.tolist(), found_.tolist())] == [
        ("time", "whole"), ("digits", "split"), ("number", "inside")]
    kinds, found_ = outcomes("x 10:30", [(0, 4), (4, 7)])
    assert [OUTCOMES[o] for o in found_.tolist()] == ["crossed"]


# ---------------------------------------------------------------- properties

_PIECES = ["http://", "https://", "www.", ".com", ".org", "/", "?", "=", "@", "#", ":", ";", ")", "(", "-", "_",
           "^", "<3", ".", ",", "'", "a", "b", "x", "D", "P", "o", "T", "1", "2", "30", "000", "2026", " ", "  ",
           "\n", "\t", "\u00a0", "\u3000", "東京", "привет", "é", "😂", "🏽", "\u200d", "\ufe0f", "\u20e3", "🇩",
           "🇪", "«", "»", "mailto:", "¯\\_(ツ)_/¯"]
_TEXT = st.lists(st.sampled_from(_PIECES) | st.text(max_size=3), max_size=30).map("".join)


def _check(text):
    starts, ends, kinds = protected_spans(text)
    assert len(starts) == len(ends) == len(kinds)
    at = 0
    for a, b, k in zip(starts.tolist(), ends.tolist(), kinds.tolist()):
        assert at <= a < b <= len(text) and 0 <= k < len(KINDS)
        assert not any(c.isspace() for c in text[a:b]), text[a:b]
        at = b
    # the trigger only skips work: the whole pattern over the text finds the same
    assert [(m.start(), m.end(), KINDS.index(m.lastgroup)) for m in PATTERN.finditer(text)] == \
        list(zip(starts.tolist(), ends.tolist(), kinds.tolist()))
    for a, b, k in zip(starts.tolist(), ends.tolist(), kinds.tolist()):
        if KINDS[k] in ("url", "email"):            # found alone too, the same
            alone = protected_spans(f" {text[a:b]} ")
            assert [x.tolist() for x in alone] == [[1], [b - a + 1], [k]], text[a:b]


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_spans_are_ordered_disjoint_and_without_whitespace(text):
    _check(text)


@pytest.mark.parametrize("text", [
    "go to http://a.com/x). now", "x@y.com@z.org", "a.com@b.org", "www.a.com:80/p?q=1#f, ok",
    ":):):) ^_^^_^ <3<3", "1,000,000,000.5.6 1.000.000,5,5", "#1 #a1 ##x #東京#", "@@a a@b @a.b",
    "¯\\_(ツ)_/¯ :-)", "🇩🇪🇩", "1️⃣2️⃣#️⃣", "http://(a)(b)", "http://x.com/" + "a" * 5000 + ".",
])
def test_hard_cases_keep_the_properties(text):
    _check(text)


def test_shared_data_keeps_the_spans_whole(shared_data):
    """UD English EWT train keeps URLs, e-mail addresses, emoticons, numbers,
    times and dates found here as one token (the reason to protect them)."""
    from collections import Counter
    counts = Counter()
    text, forms = None, []
    for line in open(shared_data / "en_ewt" / "en_ewt-ud-train.conllu", encoding="utf-8"):
        if line.startswith("# text = "):
            text, forms, skip_to = line[9:].rstrip("\n"), [], 0
        elif line[:1].isdigit():
            cols = line.split("\t")
            if "-" in cols[0]:
                forms.append(cols[1])
                skip_to = int(cols[0].split("-")[1])
            elif "." not in cols[0] and int(cols[0]) > skip_to:
                forms.append(cols[1])
        elif not line.strip() and text is not None:
            tokens, at = [], 0
            for f in forms:
                a = text.find(f, at)
                at = a + len(f)
                tokens.append((a, at))
            if all(a >= 0 for a, _ in tokens):
                counts.update(zip(*(x.tolist() for x in outcomes(text, tokens))))
            text = None
    for kind in ("url", "email", "emoticon", "number", "time", "date"):
        k = KINDS.index(kind)
        kept = counts[k, 0] + counts[k, 1]
        assert kept >= 50 and kept >= 0.99 * sum(n for (kk, _), n in counts.items() if kk == k), kind
