"""Label schemes: IOB1, IOB2 and BIOES for spans, BMES for words
(docs/formats.md, label schemes): spans read as ``conlleval.pl`` reads
them, conversions, and the masks of valid transitions for constrained Viterbi.
"""
from __future__ import annotations

import warnings
from typing import Iterable, List, Optional, Sequence, Set, Tuple

import numpy as np

__all__ = [
    "SCHEMES",
    "LabelledSpan",
    "check_scheme",
    "DecodedTags",
    "split_tag",
    "spans",
    "encode",
    "convert",
    "detect_scheme",
    "is_allowed",
    "is_allowed_end",
    "allowed_transitions",
    "allowed_mask",
    "to_scheme",
    "BMES",
    "bmes_allowed",
    "bmes_ids",
]

SCHEMES = ("iob1", "iob2", "bioes")

LabelledSpan = Tuple[str, int, int]
"""A span of a sequence: ``(label, start, end)``, token indices, ``end``
exclusive (not :class:`fasttag.text.rawtext.Span`, a span of raw text)."""


def __getattr__(name):
    if name == "Span":          # the alias's old name
        warnings.warn("fasttag.text.schemes.Span is deprecated: use fasttag.text.schemes.LabelledSpan",
                      DeprecationWarning, stacklevel=2)
        return LabelledSpan
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")


def split_tag(tag: str) -> Tuple[str, str]:
    """Split a tag into (prefix, type) at its first hyphen; "O" gives ("O", "")."""
    prefix, sep, typ = tag.partition("-")
    if not sep:
        return tag, ""
    return prefix, typ


# --- conlleval's chunk boundaries -------------------------------------------------

# conlleval.pl's (previous prefix, current prefix) pairs that end or start a chunk
_IOB_ENDS = {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"), ("E", "E"), ("E", "I"), ("E", "O")}
_IOB_STARTS = {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"), ("E", "E"), ("E", "I"), ("O", "E")}


def _end_iob(prev_tag: str, tag: str, prev_type: str, typ: str) -> bool:
    """conlleval.pl endOfChunk: does a chunk end between prev and current?"""
    return ((prev_tag, tag) in _IOB_ENDS or (prev_tag not in ("O", ".") and prev_type != typ)
            or prev_tag in ("]", "["))


def _start_iob(prev_tag: str, tag: str, prev_type: str, typ: str) -> bool:
    """conlleval.pl startOfChunk: does a chunk start at the current token?"""
    return ((prev_tag, tag) in _IOB_STARTS or (tag not in ("O", ".") and prev_type != typ)
            or tag in ("[", "]"))


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


def spans(tags: Sequence[str], scheme: str = "iob2") -> List[LabelledSpan]:
    """The chunks of one tag sequence as sorted (type, start, end_exclusive).

    Ill-formed sequences are read as conlleval.pl reads them ("iob1" and
    "iob2" decode alike; "bioes" extends its rules to S- and E-).
    """
    check_scheme(scheme)
    if scheme == "bioes":
        is_end, is_start = _end_bioes, _start_bioes
    else:
        is_end, is_start = _end_iob, _start_iob
    out: List[LabelledSpan] = []
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


def encode(chunks: Iterable[LabelledSpan], length: int, scheme: str = "iob2") -> List[str]:
    """The tag sequence of `length` tokens encoding the given chunks in
    `scheme`; chunks must be non-empty, inside [0, length) and not overlap."""
    check_scheme(scheme)
    tags = ["O"] * length
    prev_end, prev_type = -1, None
    for typ, start, end in sorted(chunks, key=lambda c: (c[1], c[2])):
        if not (0 <= start < end <= length):
            raise ValueError(f"chunk {(typ, start, end)!r} is empty or outside 0..{length}")
        if start < prev_end:
            raise ValueError(f"chunk {(typ, start, end)!r} overlaps the previous chunk")
        if scheme != "bioes":
            # IOB1 begins with B- only a chunk right after one of its type
            first = "B-" if scheme == "iob2" or (start == prev_end and typ == prev_type) else "I-"
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
    """Re-encode a tag sequence from scheme `source` into scheme `target`:
    ill-formed input is read as conlleval reads it; the output is valid."""
    check_scheme(target)
    return encode(spans(tags, source), len(tags), target)


def detect_scheme(tag_sequences: Iterable[Sequence[str]]) -> str:
    """Guess the scheme of a corpus of tag sequences: "bioes" at any E- or
    S- tag; else "iob1" when more chunks open with I-X than with B-X (after
    O or another type), else "iob2".  Counting, not stopping at the first
    B-X, survives annotation slips (CoNLL-2003's IOB1 file has a few)."""
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
    """May tag `cur` follow tag `prev` (None: the start) in a valid `scheme`
    sequence?  Tags whose prefix the scheme does not use are never allowed."""
    check_scheme(scheme)
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
    if prev_prefix in ("B", "I"):
        return cur_prefix in ("I", "E") and prev_type == cur_type
    return cur_prefix in ("O", "B", "S")


def is_allowed_end(last: Optional[str], scheme: str) -> bool:
    """May a valid `scheme` sequence end with tag `last` (None: empty)?
    Not in BIOES inside a chunk (on B- or I-)."""
    check_scheme(scheme)
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


def allowed_mask(tags: Sequence[str], scheme: str) -> np.ndarray:
    """The transition mask of valid ``scheme`` sequences over ``tags``, laid
    out as :mod:`fasttag._core.sequence` reads it: ``prev * T + cur``, then the
    start row, then the end row."""
    T = len(tags)
    mask = np.zeros((T + 2) * T, dtype=np.uint8)
    for t, cur in enumerate(tags):
        mask[T * T + t] = is_allowed(None, cur, scheme)
        mask[(T + 1) * T + t] = is_allowed_end(cur, scheme)
        for p, prev in enumerate(tags):
            mask[p * T + t] = is_allowed(prev, cur, scheme)
    return mask


def from_bioes(tags: Sequence[str], scheme: str) -> List[str]:
    """A valid BIOES sequence (as the constrained decoder produces) in
    ``scheme``; equal to ``convert(tags, "bioes", scheme)`` for valid input,
    without going through spans."""
    if scheme == "bioes":
        return list(tags)
    out = []
    prev_end_type = None       # type of a chunk that ended on the previous token
    for t in tags:
        p = t[0]
        if p == "O":
            out.append(t)
            prev_end_type = None
            continue
        typ = t[2:]
        if (p == "B" or p == "S") and (scheme == "iob2" or prev_end_type == typ):
            out.append("B-" + typ)
        else:
            out.append("I-" + typ)
        prev_end_type = typ if p in ("E", "S") else None
    return out


def to_scheme(tags: Sequence[str], internal: str, scheme: str) -> List[str]:
    """A valid ``internal`` sequence (as the decoder produces) in ``scheme``."""
    if internal == "bioes":
        return from_bioes(tags, scheme)
    if internal == scheme:
        return list(tags)
    return convert(tags, internal, scheme)


class DecodedTags:
    """Tag ids of valid ``internal`` sequences (as the constrained decoder
    produces them) to tag strings in ``scheme``: :func:`to_scheme` in numpy
    over many sentences at once, where a loop per token is slow."""

    def __init__(self, tags: Sequence[str], internal: str, scheme: str):
        self.tags, self.internal, self.scheme = list(tags), internal, scheme
        self.direct = internal == scheme
        if self.direct or internal != "bioes":
            self.names = np.array(self.tags, dtype=object)
            return
        types = sorted({split_tag(t)[1] for t in self.tags} - {""})
        index = {t: i for i, t in enumerate(types)}
        # per tag id: its prefix (O B I E S as 0..4) and its type's index
        self.prefix = np.array(["OBIES".index(split_tag(t)[0]) for t in self.tags], dtype=np.int64)
        self.type = np.array([index.get(split_tag(t)[1], 0) for t in self.tags], dtype=np.int64)
        # output ids: 0 is O, 1 + 2 * type is B-type, 2 + 2 * type is I-type
        self.names = np.array(["O"] + [f"{p}-{t}" for t in types for p in "BI"], dtype=object)

    def __call__(self, ids: np.ndarray, bounds: Sequence[int]) -> List[List[str]]:
        """The tags of the sentences ``ids[bounds[i]:bounds[i + 1]]``."""
        ids = np.asarray(ids, dtype=np.int64)
        b = [int(x) for x in bounds]
        if self.direct:
            out = self.names[ids].tolist()
        elif self.internal != "bioes":
            return [to_scheme([self.tags[i] for i in ids[i:j].tolist()], self.internal, self.scheme)
                    for i, j in zip(b[:-1], b[1:])]
        else:
            prefix, typ = self.prefix[ids], self.type[ids]
            begins = (prefix == 1) | (prefix == 4)
            if self.scheme == "iob1":
                # B- only where a chunk of the same type ended on the token before
                after_same = np.zeros(len(ids), dtype=bool)
                after_same[1:] = ((prefix[:-1] == 3) | (prefix[:-1] == 4)) & (typ[:-1] == typ[1:])
                starts = np.array(b[:-1], dtype=np.int64)
                after_same[starts[starts < len(ids)]] = False
                begins &= after_same
            out_ids = np.where(prefix == 0, 0, np.where(begins, 1, 2) + 2 * typ)
            out = self.names[out_ids].tolist()
        return [out[i:j] for i, j in zip(b[:-1], b[1:])]


#: Word segmentation's tags: a character begins (B), continues (M) or ends
#: (E) a word of two or more characters, or is a word by itself (S).
BMES = ("B", "M", "E", "S")


def bmes_allowed() -> np.ndarray:
    """The transition mask of BMES tagging: BIOES's over one word type."""
    return allowed_mask(["B-w", "I-w", "E-w", "S-w"], "bioes")


def bmes_ids(word_lengths) -> np.ndarray:
    """Flat int32 BMES tag ids (indices into :data:`BMES`) of words of the
    given lengths (all at least 1)."""
    lens = np.asarray(word_lengths, dtype=np.int64)
    tags = np.full(int(lens.sum()), 1, dtype=np.int32)        # M
    ends = np.cumsum(lens)
    starts = ends - lens
    tags[starts] = 0                                          # B
    tags[ends - 1] = 2                                        # E
    tags[starts[lens == 1]] = 3                               # S
    return tags
