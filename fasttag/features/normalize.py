"""Character normalisation (width folding, one character to one, so
offsets stay valid), character classes and the runs a segmenter keeps
whole, for Chinese word segmentation (docs/tasks.md).
"""
from __future__ import annotations

import functools
import re
import unicodedata
from typing import List, Optional, Tuple

__all__ = [
    "OTHER",
    "CJK",
    "NUMERAL",
    "LATIN",
    "DIGIT",
    "PUNCT",
    "SPACE",
    "DATE",
    "CLASS_NAMES",
    "NUMERALS",
    "DATE_CHARS",
    "normalize_char",
    "normalize_text",
    "char_class",
    "char_classes",
    "atomic_runs",
    "run_letters",
]

# --- normalisation ---------------------------------------------------------------

# Full-width ASCII -> ASCII except U+FF0C "，", the Chinese comma (folded, "１，２" would be
# the number "1,2", which People's Daily splits); U+3000 -> " "; U+FFE0..U+FFE6 -> narrow forms.
_FOLD = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F) if cp != 0xFF0C}
_FOLD[0x3000] = 0x20
_FOLD.update({
    0xFFE0: 0x00A2,
    0xFFE1: 0x00A3,
    0xFFE2: 0x00AC,
    0xFFE3: 0x00AF,
    0xFFE4: 0x00A6,
    0xFFE5: 0x00A5,
    0xFFE6: 0x20A9,
})


def normalize_char(c: str) -> str:
    """The width-folded form of one character (the character itself if none)."""
    cp = _FOLD.get(ord(c))
    return c if cp is None else chr(cp)


def normalize_text(s: str) -> str:
    """Fold the widths of a text character by character; same length as `s`."""
    return s.translate(_FOLD)


# --- character classes -----------------------------------------------------------

OTHER = 0    #: anything else: emoji, control characters, kana, hangul, other scripts
CJK = 1      #: a Chinese character (CJK ideograph) not in NUMERAL or DATE
NUMERAL = 2  #: a Chinese numeral, see NUMERALS
LATIN = 3    #: an ASCII letter, after width folding (so also full-width letters)
DIGIT = 4    #: 0-9, after width folding (so also full-width digits)
PUNCT = 5    #: Unicode categories P* and S* (Chinese punctuation included)
SPACE = 6    #: Unicode space separators (Zs, Zl, Zp) and \t \n \v \f \r \x85
DATE = 7     #: a date or time unit, see DATE_CHARS

CLASS_NAMES = {
    OTHER: "OTHER", CJK: "CJK", NUMERAL: "NUMERAL", LATIN: "LATIN",
    DIGIT: "DIGIT", PUNCT: "PUNCT", SPACE: "SPACE", DATE: "DATE",
}

#: Chinese numerals (with the traditional forms of 万, 亿 and 两).
NUMERALS = frozenset("〇零一二三四五六七八九十百千万亿两萬億兩")
#: Date and time units (with the traditional form of 时).
DATE_CHARS = frozenset("年月日时分秒時")

# Ranges of CJK ideographs: every code point in them is CJK (assigned or not).
_IDEOGRAPH_RANGES = (
    (0x3400, 0x4DBF),    # Extension A
    (0x4E00, 0x9FFF),    # CJK Unified Ideographs
    (0xF900, 0xFAFF),    # Compatibility Ideographs
    (0x20000, 0x2FA1F),  # Extensions B-F, Compatibility Supplement
    (0x30000, 0x323AF),  # Extensions G-H
)
# Other CJK blocks: their letters (Lo, Lm: 々 〆 〻 〼) are CJK too; their
# punctuation and symbols (。 《 》 〜, radicals, strokes) are PUNCT.
_CJK_BLOCKS = (
    (0x2E80, 0x2FDF),    # Radicals Supplement, Kangxi Radicals
    (0x2FF0, 0x303F),    # Ideographic Description, CJK Symbols and Punctuation
    (0x31C0, 0x31EF),    # CJK Strokes
    (0x3200, 0x33FF),    # Enclosed CJK Letters and Months, CJK Compatibility
    (0xFE30, 0xFE4F),    # CJK Compatibility Forms
)
# Emoji are symbols (So) but not punctuation: they are OTHER.
_EMOJI_RANGES = ((0x1F000, 0x1FAFF),)
_LINE_SPACES = frozenset("\t\n\v\f\r\x85")


def _in(cp: int, ranges) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def _classify(c: str) -> int:
    c = normalize_char(c)
    if "0" <= c <= "9":
        return DIGIT
    if ("a" <= c <= "z") or ("A" <= c <= "Z"):
        return LATIN
    if c in NUMERALS:
        return NUMERAL
    if c in DATE_CHARS:
        return DATE
    cp = ord(c)
    cat = unicodedata.category(c)
    if c in _LINE_SPACES or cat in ("Zs", "Zl", "Zp"):
        return SPACE
    if _in(cp, _IDEOGRAPH_RANGES):
        return CJK
    if cat in ("Lo", "Lm") and _in(cp, _CJK_BLOCKS):
        return CJK
    if cat[0] in ("P", "S") and not _in(cp, _EMOJI_RANGES):
        return PUNCT
    return OTHER


_BMP_TABLE: Optional[bytes] = None


def _bmp_table() -> bytes:
    global _BMP_TABLE
    if _BMP_TABLE is None:
        _BMP_TABLE = bytes(
            _classify(chr(cp)) if not 0xD800 <= cp <= 0xDFFF else OTHER
            for cp in range(0x10000)
        )
    return _BMP_TABLE


def char_class(c: str) -> int:
    """The class (OTHER, CJK, NUMERAL, LATIN, DIGIT, PUNCT, SPACE, DATE) of a
    character; full-width forms get the class of their half-width forms."""
    cp = ord(c)
    if cp < 0x10000:
        return _bmp_table()[cp]
    return _classify(c)


def char_classes(text: str) -> List[int]:
    """The class of every character of `text`."""
    table = _bmp_table()
    return [table[ord(ch)] if ord(ch) < 0x10000 else _classify(ch) for ch in text]


# --- atomic runs -----------------------------------------------------------------

# All patterns run on the width-folded text, so they see only ASCII forms.
_URL_CHARS = r"A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%"
_URL = re.compile(
    r"(?P<url>(?<![A-Za-z0-9])(?:[Hh][Tt][Tt][Pp][Ss]?://|[Ww][Ww][Ww]\.)[A-Za-z0-9][" + _URL_CHARS + r"]*)"
)
_EMAIL = re.compile(
    r"(?P<email>(?<![A-Za-z0-9._%+\-])[A-Za-z0-9_%+\-][A-Za-z0-9._%+\-]*"
    r"@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+)"
)
_SPECIAL = re.compile(_URL.pattern + "|" + _EMAIL.pattern)
_NUMBER = r"[0-9]+(?:[.,:\u2236][0-9]+)*%?"
# Letters of the alphabets that write words between spaces (Latin, Greek, Cyrillic, Armenian,
# Georgian, Hebrew, Arabic, Hangul): their runs stay whole; scripts without spaces form none.
_ALPHABET_BLOCKS = ((0x00C0, 0x024F), (0x0250, 0x02AF), (0x0370, 0x03FF), (0x0400, 0x052F), (0x0531, 0x058F),
                    (0x05D0, 0x05F2), (0x0620, 0x06FF), (0x0750, 0x077F), (0x08A0, 0x08C9), (0x10A0, 0x10FF),
                    (0x1100, 0x11FF), (0x1C80, 0x1CBF), (0x1E00, 0x1FFF), (0x2C60, 0x2C7F), (0x2D00, 0x2D2F),
                    (0x3130, 0x318F), (0xA640, 0xA69F), (0xA720, 0xA7FF), (0xAB30, 0xAB6F), (0xAC00, 0xD7AF),
                    (0xFB1D, 0xFB4F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFC))


def _char_class(code_points):
    parts, start, prev = [], None, None
    for cp in list(code_points) + [None]:
        if start is not None and cp == prev + 1:
            prev = cp
            continue
        if start is not None:
            parts.append(f"\\U{start:08x}" + (f"-\\U{prev:08x}" if prev > start else ""))
        start = prev = cp
    return "".join(parts)


@functools.lru_cache(maxsize=None)
def run_letters():
    """(letters of the spaced alphabets, combining marks): the code points
    besides ASCII letters that a Latin run may hold, as sorted tuples."""
    letters = tuple(cp for a, b in _ALPHABET_BLOCKS for cp in range(a, b + 1)
                    if unicodedata.category(chr(cp)).startswith("L"))
    marks = tuple(cp for cp in range(0x10000) if unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me"))
    return letters, marks


@functools.lru_cache(maxsize=None)
def _word_patterns():
    letters, marks = run_letters()
    run = f"(?:[A-Za-z{_char_class(letters)}][{_char_class(marks)}]*)+"
    return (re.compile(run), re.compile(_NUMBER),
            re.compile(f"(?:{run}|[0-9]+(?:[.,:\u2236][0-9]+)*)+(?:(?<=[0-9])%)?"))


_URL_TRAILING = ".,;:!?'\""
_CLOSERS = {")": "(", "]": "["}


def _trim_url(url: str) -> str:
    """Drop the sentence punctuation a URL match swallowed at its end."""
    while url:
        last = url[-1]
        if last in _URL_TRAILING:
            url = url[:-1]
        elif last in _CLOSERS and url.count(last) > url.count(_CLOSERS[last]):
            url = url[:-1]
        else:
            break
    return url


def atomic_runs(
    text: str,
    latin: bool = True,
    digits: bool = True,
    urls: bool = True,
    emails: bool = True,
) -> List[Tuple[int, int]]:
    """Spans (start, end exclusive) that a segmenter must not split inside,
    sorted, never overlapping, found on the width-folded text.  By precedence:
    ``urls`` (``http(s)://`` or ``www.``, trailing punctuation and unbalanced
    ) ] left out), ``emails``, then in the rest ``digits`` (numbers such as
    "3.14", "1,000", "12:30", "３∶０", "50%") and ``latin`` (runs of letters of
    alphabets written with spaces, marks included); with both, letters and
    numbers that touch form one run ("iPhone12")."""
    norm = normalize_text(text)
    special: List[Tuple[int, int]] = []
    if urls or emails:
        pattern = _SPECIAL if (urls and emails) else (_URL if urls else _EMAIL)
        for m in pattern.finditer(norm):
            start, end = m.span()
            if m.lastgroup == "url":
                end = start + len(_trim_url(m.group()))
            special.append((start, end))

    if not (latin or digits):
        return special
    latin_re, digits_re, alnum_re = _word_patterns()
    word_re = alnum_re if latin and digits else latin_re if latin else digits_re

    out: List[Tuple[int, int]] = []
    pos = 0
    for s, e in special + [(len(norm), len(norm))]:
        for m in word_re.finditer(norm, pos, s):
            out.append(m.span())
        if e > s:
            out.append((s, e))
        pos = e
    return out
