"""SIGHAN bakeoff scoring for Chinese word segmentation.

Segmenters are compared on the bakeoffs' measures: word precision, recall and
F1, plus the out-of-vocabulary (OOV) rate of the gold text and the recall of
OOV and in-vocabulary (IV) words with respect to the training word list. This
module computes them in Python, without the bakeoff's Perl ``score`` script,
and reads the bakeoff's file formats.

Words are compared as character spans: a predicted word is correct when it
covers exactly the same characters of the line as a gold word. All rates are
fractions between 0 and 1 (not percentages).
"""
from __future__ import annotations

import os
from typing import Iterable, List, Optional, Sequence, Set, Tuple, Union

from .errors import InputError

__all__ = ["score_segmentation", "read_word_list", "read_segmented"]


def _clean(words: Sequence[str]) -> List[str]:
    """The words with any whitespace inside removed, empty ones dropped."""
    out = []
    for w in words:
        w = "".join(w.split())
        if w:
            out.append(w)
    return out


def _word_spans(words: Sequence[str]) -> List[Tuple[int, int]]:
    """(start, end) character offsets of consecutive words within their line."""
    out = []
    pos = 0
    for w in words:
        out.append((pos, pos + len(w)))
        pos += len(w)
    return out


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


def score_segmentation(
    gold: Iterable[Sequence[str]],
    pred: Iterable[Sequence[str]],
    words: Optional[Iterable[str]] = None,
) -> dict:
    """Score a predicted segmentation against the gold one, line by line.

    `gold` and `pred` give one list of words per line. `words` is the training
    word list for the OOV measures; when it is None, oov_rate, oov_recall and
    iv_recall are None.

    Returns a dict of fractions in [0, 1] (not percent): precision, recall,
    f1, oov_rate (share of gold word tokens not in `words`), oov_recall (share
    of OOV gold tokens predicted exactly), iv_recall (the same for the other
    gold tokens); and counts: gold_words, pred_words, correct_words, lines.
    A division by zero gives 0.0.

    Raises InputError (naming the 1-based line number) when a line's words do
    not concatenate to the same characters on both sides (whitespace
    ignored), or when the two sides have different numbers of lines.
    """
    if words is not None and not isinstance(words, (set, frozenset, dict)):
        words = set(words)
    gold_it, pred_it = iter(gold), iter(pred)
    missing = object()
    lines = gold_words = pred_words = correct = 0
    oov = oov_correct = 0
    while True:
        g = next(gold_it, missing)
        p = next(pred_it, missing)
        if g is missing and p is missing:
            break
        lineno = lines + 1
        if g is missing or p is missing:
            side = "gold" if g is missing else "prediction"
            raise InputError(f"line {lineno}: the {side} has no line {lineno}", line=lineno)
        g, p = _clean(g), _clean(p)
        g_text, p_text = "".join(g), "".join(p)
        if g_text != p_text:
            raise InputError(
                f"line {lineno}: gold and predicted words spell different text "
                f"({g_text[:30]!r} vs {p_text[:30]!r})",
                line=lineno,
            )
        pred_spans = set(_word_spans(p))
        for w, span in zip(g, _word_spans(g)):
            hit = span in pred_spans
            correct += hit
            if words is not None and w not in words:
                oov += 1
                oov_correct += hit
        gold_words += len(g)
        pred_words += len(p)
        lines += 1

    precision = _ratio(correct, pred_words)
    recall = _ratio(correct, gold_words)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    result = {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "oov_rate": None,
        "oov_recall": None,
        "iv_recall": None,
        "gold_words": gold_words,
        "pred_words": pred_words,
        "correct_words": correct,
        "lines": lines,
    }
    if words is not None:
        result["oov_rate"] = _ratio(oov, gold_words)
        result["oov_recall"] = _ratio(oov_correct, oov)
        result["iv_recall"] = _ratio(correct - oov_correct, gold_words - oov)
    return result


def _decode_lines(path: Union[str, os.PathLike]) -> List[str]:
    """The lines of a UTF-8 file (BOM accepted), without line ends; a byte
    that is not UTF-8 raises InputError naming the line."""
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    out = []
    for i, raw in enumerate(data.split(b"\n"), start=1):
        try:
            out.append(raw.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError as e:
            raise InputError(f"not valid UTF-8 ({e.reason})", path=os.fspath(path), line=i) from None
    if out and out[-1] == "":
        out.pop()  # the final newline does not start another line
    return out


def read_word_list(path: Union[str, os.PathLike]) -> Set[str]:
    """The words of a word list file: one per line, stripped, blanks skipped."""
    return {w for w in (line.strip() for line in _decode_lines(path)) if w}


def read_segmented(path_or_lines: Union[str, os.PathLike, Iterable[str]]) -> List[List[str]]:
    """Read a segmented text: one sentence per line, words separated by any
    whitespace (one or two spaces in the bakeoff files); empty lines give [].

    A str or path-like argument is a file name (UTF-8, BOM accepted); anything
    else is taken as an iterable of lines.
    """
    if isinstance(path_or_lines, (str, os.PathLike)):
        lines: Iterable[str] = _decode_lines(path_or_lines)
    else:
        lines = path_or_lines
    out = []
    for i, line in enumerate(lines):
        if i == 0 and line.startswith("\ufeff"):
            line = line[1:]
        out.append(line.split())
    return out
