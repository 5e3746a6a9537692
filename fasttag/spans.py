"""Chunk encoding schemes (IOB1, IOB2, BIOES) and conlleval-style span scoring.

Chunkers and NER taggers predict one tag per token, but they are judged on the
chunks (spans) those tags encode. This module turns tag sequences into spans
the way the CoNLL shared tasks' ``conlleval.pl`` does (including its handling
of ill-formed sequences), converts between schemes, tells Viterbi which tag
transitions are valid, and computes conlleval's precision, recall and F1.

Tags are strings such as ``"B-NP"``, ``"I-PER"`` or ``"O"``. A tag is split on
its *first* hyphen: ``"B-ADVP-TMP"`` has prefix ``"B"`` and type
``"ADVP-TMP"``. A tag without a hyphen (``"O"``) has the empty type.

Schemes:

``"iob1"``
    Original CoNLL-2003: tokens inside a chunk are ``I-X``; ``B-X`` is used
    only for the first token of a chunk that directly follows another chunk
    of the same type.
``"iob2"``
    Every chunk starts with ``B-X`` and continues with ``I-X``.
``"bioes"``
    ``B-X`` begins, ``I-X`` continues and ``E-X`` ends a chunk of two or more
    tokens; ``S-X`` is a one-token chunk.

Spans are ``(type, start, end)`` tuples with ``end`` exclusive.
"""
from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Set, Tuple

from .errors import InputError

__all__ = [
    "SCHEMES",
    "split_tag",
    "spans",
    "encode",
    "convert",
    "detect_scheme",
    "is_allowed",
    "is_allowed_end",
    "allowed_transitions",
    "score_spans",
]

SCHEMES = ("iob1", "iob2", "bioes")

Span = Tuple[str, int, int]


def _check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")


def split_tag(tag: str) -> Tuple[str, str]:
    """Split a tag into (prefix, type) at its first hyphen; "O" gives ("O", "")."""
    prefix, sep, typ = tag.partition("-")
    if not sep:
        return tag, ""
    return prefix, typ


# --- conlleval's chunk boundaries -------------------------------------------------
#
# _end_iob/_start_iob are conlleval.pl's endOfChunk/startOfChunk, line for line
# (B, I, O, E, "[", "]" and "." tags). _end_bioes/_start_bioes are the usual
# extension to S- and E- tags (as in the Python ports of conlleval): a chunk
# always ends after E-/S- and always starts at B-/S-.


def _end_iob(prev_tag: str, tag: str, prev_type: str, typ: str) -> bool:
    """conlleval.pl endOfChunk: does a chunk end between prev and current?"""
    end = False
    if prev_tag == "B" and tag == "B":
        end = True
    if prev_tag == "B" and tag == "O":
        end = True
    if prev_tag == "I" and tag == "B":
        end = True
    if prev_tag == "I" and tag == "O":
        end = True
    if prev_tag == "E" and tag == "E":
        end = True
    if prev_tag == "E" and tag == "I":
        end = True
    if prev_tag == "E" and tag == "O":
        end = True
    if prev_tag != "O" and prev_tag != "." and prev_type != typ:
        end = True
    if prev_tag == "]" or prev_tag == "[":
        end = True
    return end


def _start_iob(prev_tag: str, tag: str, prev_type: str, typ: str) -> bool:
    """conlleval.pl startOfChunk: does a chunk start at the current token?"""
    start = False
    if prev_tag == "B" and tag == "B":
        start = True
    if prev_tag == "I" and tag == "B":
        start = True
    if prev_tag == "O" and tag == "B":
        start = True
    if prev_tag == "O" and tag == "I":
        start = True
    if prev_tag == "E" and tag == "E":
        start = True
    if prev_tag == "E" and tag == "I":
        start = True
    if prev_tag == "O" and tag == "E":
        start = True
    if tag != "O" and tag != "." and prev_type != typ:
        start = True
    if tag == "[" or tag == "]":
        start = True
    return start


def _end_bioes(prev_tag: str, tag: str, prev_type: str, typ: str) -> bool:
    """endOfChunk extended to BIOES: E-/S- always close their chunk."""
    if prev_tag in ("E", "S"):
        return True
    if prev_tag in ("B", "I") and tag in ("B", "S", "O"):
        return True
    return prev_tag != "O" and prev_tag != "." and prev_type != typ


def _start_bioes(prev_tag: str, tag: str, prev_type: str, typ: str) -> bool:
    """startOfChunk extended to BIOES: B-/S- always open a chunk; I-/E- open
    one after O, E-, S- or a tag of another type."""
    if tag in ("B", "S"):
        return True
    if tag in ("I", "E") and prev_tag in ("O", "E", "S"):
        return True
    return tag != "O" and tag != "." and prev_type != typ


def spans(tags: Sequence[str], scheme: str = "iob2") -> List[Span]:
    """The chunks of one tag sequence as sorted (type, start, end_exclusive).

    Ill-formed sequences are read as conlleval reads them: for "iob1" and
    "iob2" exactly conlleval.pl's rules (the two schemes decode alike), for
    "bioes" those rules extended to S- and E-. A chunk still open at the end of
    the sequence ends there.
    """
    _check_scheme(scheme)
    if scheme == "bioes":
        is_end, is_start = _end_bioes, _start_bioes
    else:
        is_end, is_start = _end_iob, _start_iob
    out: List[Span] = []
    prev_tag, prev_type = "O", ""
    open_type: Optional[str] = None
    open_start = 0
    for i, tag in enumerate(tags):
        cur_tag, cur_type = split_tag(tag)
        end = is_end(prev_tag, cur_tag, prev_type, cur_type)
        start = is_start(prev_tag, cur_tag, prev_type, cur_type)
        if open_type is not None and (end or start):
            out.append((open_type, open_start, i))
            open_type = None
        if start:
            open_type, open_start = cur_type, i
        prev_tag, prev_type = cur_tag, cur_type
    if open_type is not None:
        out.append((open_type, open_start, len(tags)))
    return out


def encode(chunks: Iterable[Span], length: int, scheme: str = "iob2") -> List[str]:
    """The tag sequence of `length` tokens encoding the given chunks in `scheme`.

    Chunks must be non-empty, inside [0, length) and must not overlap.
    """
    _check_scheme(scheme)
    tags = ["O"] * length
    prev_end, prev_type = -1, None
    for typ, start, end in sorted(chunks, key=lambda c: (c[1], c[2])):
        if not (0 <= start < end <= length):
            raise ValueError(f"chunk {(typ, start, end)!r} is empty or outside 0..{length}")
        if start < prev_end:
            raise ValueError(f"chunk {(typ, start, end)!r} overlaps the previous chunk")
        if scheme == "iob2":
            tags[start] = "B-" + typ
            for i in range(start + 1, end):
                tags[i] = "I-" + typ
        elif scheme == "iob1":
            first = "B-" if (start == prev_end and typ == prev_type) else "I-"
            tags[start] = first + typ
            for i in range(start + 1, end):
                tags[i] = "I-" + typ
        else:
            if end - start == 1:
                tags[start] = "S-" + typ
            else:
                tags[start] = "B-" + typ
                for i in range(start + 1, end - 1):
                    tags[i] = "I-" + typ
                tags[end - 1] = "E-" + typ
        prev_end, prev_type = end, typ
    return tags


def convert(tags: Sequence[str], source: str, target: str) -> List[str]:
    """Re-encode a tag sequence from scheme `source` into scheme `target`.

    Goes through `spans`, so ill-formed input is first read as conlleval
    would read it; the output is always a valid `target` sequence.
    """
    _check_scheme(target)
    return encode(spans(tags, source), len(tags), target)


def detect_scheme(tag_sequences: Iterable[Sequence[str]]) -> str:
    """Guess the scheme of a corpus of tag sequences.

    1. Any E- or S- tag: "bioes".
    2. Otherwise count the chunk starts that only one scheme writes: B-X not
       preceded by a non-O tag of type X (IOB2 evidence, impossible in IOB1)
       and I-X at a chunk start, i.e. at the sequence start, after O or after
       a tag of another type (IOB1 evidence, ill-formed in IOB2). "iob1" if
       there is more IOB1 evidence than IOB2 evidence, else "iob2" (also when
       there are no chunks at all).

    Counting rather than stopping at the first B-X makes the guess survive
    annotation slips: the IOB1 CoNLL-2003 training file has two B-MISC
    tags directly after O among some 23,000 IOB1 chunk starts.
    """
    b_starts = i_starts = 0
    for seq in tag_sequences:
        prev_prefix, prev_type = "O", ""
        for tag in seq:
            prefix, typ = split_tag(tag)
            if prefix in ("E", "S"):
                return "bioes"
            same_type_before = prev_prefix != "O" and prev_type == typ
            if prefix == "B" and not same_type_before:
                b_starts += 1
            elif prefix == "I" and not same_type_before:
                i_starts += 1
            prev_prefix, prev_type = prefix, typ
    return "iob1" if i_starts > b_starts else "iob2"


# --- valid transitions, for constrained decoding ----------------------------------

_PREFIXES = {"iob1": ("B", "I"), "iob2": ("B", "I"), "bioes": ("B", "I", "E", "S")}


def _valid_tag(prefix: str, scheme: str) -> bool:
    return prefix == "O" or prefix in _PREFIXES[scheme]


def is_allowed(prev: Optional[str], cur: str, scheme: str) -> bool:
    """May tag `cur` follow tag `prev` in a valid `scheme` sequence?

    `prev` None means `cur` is the first tag of the sequence. Tags whose
    prefix the scheme does not use (E- in IOB2, say) are never allowed.

    - iob1: O and I-X may follow anything; B-X only B-X or I-X (same type).
    - iob2: O and B-X may follow anything; I-X only B-X or I-X (same type).
    - bioes: after the start, O, E-* or S-*: O, B-X or S-X; after B-X or
      I-X: only I-X or E-X of the same type.
    """
    _check_scheme(scheme)
    cur_prefix, cur_type = split_tag(cur)
    if not _valid_tag(cur_prefix, scheme):
        return False
    if prev is None:
        prev_prefix, prev_type = "O", ""
    else:
        prev_prefix, prev_type = split_tag(prev)
        if not _valid_tag(prev_prefix, scheme):
            return False
    inside_same = prev_prefix in ("B", "I") and prev_type == cur_type
    if scheme == "iob1":
        return cur_prefix != "B" or inside_same
    if scheme == "iob2":
        return cur_prefix != "I" or inside_same
    # bioes
    if prev_prefix in ("B", "I"):
        return cur_prefix in ("I", "E") and prev_type == cur_type
    return cur_prefix in ("O", "B", "S")


def is_allowed_end(last: Optional[str], scheme: str) -> bool:
    """May a valid `scheme` sequence end with tag `last`? (None: empty sequence.)

    In BIOES a sequence cannot end inside a chunk (on B- or I-); IOB1 and IOB2
    sequences may end on any tag the scheme uses.
    """
    _check_scheme(scheme)
    if last is None:
        return True
    prefix, _ = split_tag(last)
    if not _valid_tag(prefix, scheme):
        return False
    return not (scheme == "bioes" and prefix in ("B", "I"))


def allowed_transitions(labels: Iterable[str], scheme: str) -> Set[Tuple[Optional[str], str]]:
    """All pairs (prev, cur) of `labels` that `is_allowed` accepts, plus
    (None, cur) for the labels a sequence may start with."""
    labels = list(labels)
    out: Set[Tuple[Optional[str], str]] = set()
    for cur in labels:
        if is_allowed(None, cur, scheme):
            out.add((None, cur))
        for prev in labels:
            if is_allowed(prev, cur, scheme):
                out.add((prev, cur))
    return out


# --- scoring --------------------------------------------------------------------


def _prf(correct: int, gold: int, pred: int) -> Tuple[float, float, float]:
    precision = 100.0 * correct / pred if pred else 0.0
    recall = 100.0 * correct / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def score_spans(
    gold_sequences: Iterable[Sequence[str]],
    pred_sequences: Iterable[Sequence[str]],
    scheme: str = "iob2",
) -> dict:
    """conlleval's scores of predicted against gold tag sequences.

    A predicted chunk is correct when its type, start and end all equal a gold
    chunk's. Precision, recall and F1 (overall and per type) and token
    accuracy are percentages (0-100) as conlleval prints them; any division
    by zero gives 0.0. Returns a dict with keys precision, recall, f1,
    accuracy, tokens, gold_chunks, pred_chunks, correct_chunks and per_type
    ({type: {precision, recall, f1, gold, pred, correct}}).

    Raises InputError when the two sides have different numbers of sequences
    or a pair of sequences differs in length.
    """
    _check_scheme(scheme)
    gold_it = iter(gold_sequences)
    pred_it = iter(pred_sequences)
    tokens = correct_tags = 0
    counts: dict = {}  # type -> [gold, pred, correct]
    index = 0
    missing = object()
    while True:
        gold = next(gold_it, missing)
        pred = next(pred_it, missing)
        if gold is missing and pred is missing:
            break
        if gold is missing or pred is missing:
            side = "gold" if gold is missing else "prediction"
            raise InputError(f"the {side} has fewer sequences than the other side ({index})")
        if len(gold) != len(pred):
            raise InputError(
                f"sequence {index}: gold has {len(gold)} tags, prediction has {len(pred)}"
            )
        tokens += len(gold)
        correct_tags += sum(1 for g, p in zip(gold, pred) if g == p)
        gold_spans = spans(gold, scheme)
        pred_spans = spans(pred, scheme)
        pred_set = set(pred_spans)
        for typ, _, _ in gold_spans:
            counts.setdefault(typ, [0, 0, 0])[0] += 1
        for span in pred_spans:
            counts.setdefault(span[0], [0, 0, 0])[1] += 1
        for span in set(gold_spans) & pred_set:
            counts[span[0]][2] += 1
        index += 1

    per_type = {}
    for typ in sorted(counts):
        g, p, c = counts[typ]
        tp, tr, tf = _prf(c, g, p)
        per_type[typ] = {"precision": tp, "recall": tr, "f1": tf, "gold": g, "pred": p, "correct": c}
    gold_chunks = sum(v[0] for v in counts.values())
    pred_chunks = sum(v[1] for v in counts.values())
    correct_chunks = sum(v[2] for v in counts.values())
    precision, recall, f1 = _prf(correct_chunks, gold_chunks, pred_chunks)
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "accuracy": 100.0 * correct_tags / tokens if tokens else 0.0,
        "tokens": tokens,
        "gold_chunks": gold_chunks,
        "pred_chunks": pred_chunks,
        "correct_chunks": correct_chunks,
        "per_type": per_type,
    }
