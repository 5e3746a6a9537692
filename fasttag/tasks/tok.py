"""Tokenization and sentence splitting trained from the raw text of
CoNLL-U (:func:`read_conllu_text`).  Models trained now use the candidate
engine (:mod:`fasttag.features.candidates`: the model decides only at the
boundaries worth deciding, in compiled code); model files of the
character tagger of earlier releases (every character labelled, decoded
under a transition mask) still load and tokenize as before.  Labels,
features and how the text is rebuilt: docs/tasks.md.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from typing import Iterable, Iterator, NamedTuple

import numpy as np

from ..text import formats as ftio
from .. import parallel
from ..features.chars import HASH_BASE, HASH_BASE_INVERSE, Batch, attached_marks, bmp_lookup, codepoints, mix, powers_of
from ..errors import InputError, ModelFormatError, shown
from ..text.conllu import paused_gc, read_document
from ..text.fieldcheck import column_fault, field_fault
from ..text import output
from ..text import patterns
from ..text.metrics import score_tokenization
from ..text.rawtext import PIECE_CHARS, cuts, raw_sentences
from ..model.sequence import SequenceModel
from ..features.candidates import (CAND_CLASSES, CAND_TAGS, CAND_TEMPLATES, MAX_SUFFIX, CandidateFeaturizer,
                                   candidate_allowed, candidate_labels, learn_suffixes)
from ..model import registry
from .base import SequenceTask, check_fixed_labels
from . import spaceless

__all__ = ["Tokenizer", "TokFeaturizer", "GoldText", "Token", "read_conllu_text", "score_tokenization",
           "tok_allowed", "TAGS", "TOK_TEMPLATES"]

BATCH_CHARS = PIECE_CHARS    # the longest text decoded as one sequence
_SEVERAL = "tokenize_lines() takes several texts"
TRAIN_PIECE = 1_000           # training texts are cut into pieces of about this many characters

TAGS = ("O", "X", "SB", "SU", "B", "U", "I", "E", "W")
O, X, SB, SU, B, U, I, E, W = range(len(TAGS))
_STARTS = (SB, SU, B, U)                 # labels that begin a token
_ENDS = (SU, U, E, W)                    # labels a token may end with
CANDIDATE_CLASSES = ((O, X), (SB, SU, B, U, I, E, W))      # whitespace, anything else


def tok_allowed():
    """The transition mask of the tokenizer's labels (layout in
    :mod:`fasttag._core.sequence`)."""
    T = len(TAGS)
    allowed = np.zeros((T + 2) * T, dtype=np.uint8)
    after_token = (O, X, SB, SU, B, U)
    nxt = {O: (O, B, U), X: (X, SB, SU), SB: (I, E, W), B: (I, E, W), I: (I, E, W),
           E: after_token, SU: after_token, U: after_token, W: (I, E, W) + after_token}
    for p, ts in nxt.items():
        for t in ts:
            allowed[p * T + t] = 1
    for t in (X, SB, SU):
        allowed[T * T + t] = 1              # start -> X, SB, SU
    for p in (O, X) + _ENDS:
        allowed[(T + 1) * T + p] = 1        # these may end a text
    return allowed


_ALLOWED = tok_allowed()


# ---------------------------------------------------------------- characters

_CATEGORIES = ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
               "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So",
               "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn")
_CAT_INDEX = {c: i for i, c in enumerate(_CATEGORIES)}
SPACE_CLASS = len(_CATEGORIES)          # whitespace that does not break lines
NEWLINE_CLASS = SPACE_CLASS + 1         # whitespace that does ("\n", "\r", U+2028, ...)
_WORDLIKE = 9                           # classes below this (letters, marks, Nd) are collapsed in shapes
_TABLES = {}


def _char_tables():
    if not _TABLES:
        bmp = [chr(i) for i in range(0x10000)]
        cls = np.array([_CAT_INDEX[unicodedata.category(ch)] for ch in bmp], dtype=np.uint8)
        space = np.array([ch.isspace() for ch in bmp], dtype=bool)
        newline = np.array([len(("a" + ch + "b").splitlines()) == 2 for ch in bmp], dtype=bool)
        cls[space] = SPACE_CLASS
        cls[newline] = NEWLINE_CLASS
        lower = np.array([ord(low) if len(low) == 1 else i for i, low in enumerate(ch.lower() for ch in bmp)],
                         dtype=np.uint32)
        _TABLES.update(cls=cls, space=space, newline=newline, lower=lower)
    return _TABLES["cls"], _TABLES["space"], _TABLES["newline"]


def _lowered(cp):
    _char_tables()
    return bmp_lookup(_TABLES["lower"], cp, lambda rest: rest)


def _classes(cp):
    """(class, is-space, is-newline) arrays (no whitespace lies outside the BMP)."""
    cls_t, space_t, nl_t = _char_tables()
    return (bmp_lookup(cls_t, cp, lambda rest: [_CAT_INDEX[unicodedata.category(chr(int(c)))] for c in rest]),
            bmp_lookup(space_t, cp, lambda rest: False), bmp_lookup(nl_t, cp, lambda rest: False))


class _Segments:
    """Hashes of arbitrary slices ``values[a:b]`` in a few vector passes,
    from prefix sums of values[k] * P**-k (modulo 2**64)."""

    def __init__(self, values):
        n = len(values)
        self.powers = powers_of(HASH_BASE, n + 1)
        self.prefix = np.zeros(n + 1, dtype=np.uint64)
        np.cumsum(values.astype(np.uint64) * powers_of(HASH_BASE_INVERSE, n), out=self.prefix[1:])

    def __call__(self, a, b):
        h = self.powers[b] * (self.prefix[b] - self.prefix[a])
        return mix(h ^ ((b - a).astype(np.uint64) << np.uint64(48)))


# ---------------------------------------------------------------- featurizer

ATTRIBUTES = ("c", "k", "chunk", "left", "right", "pos", "shape", "prev", "next",
              "gap", "pc", "nc", "pk", "nk", "pshape", "nshape", "wl", "wr", "cpre", "clen")

TOK_TEMPLATES = (
    "bias",
    "c[0]", "c[-1]", "c[1]", "c[-2]", "c[2]", "c[-3]", "c[3]",
    "c[-1]|c[0]", "c[0]|c[1]", "c[-2]|c[-1]", "c[1]|c[2]",
    "c[-2]|c[-1]|c[0]", "c[-1]|c[0]|c[1]", "c[0]|c[1]|c[2]",
    "k[0]", "k[-1]|k[0]", "k[0]|k[1]", "k[-1]|k[0]|k[1]",
    "k[-2]|k[-1]|k[0]|k[1]", "k[-1]|k[0]|k[1]|k[2]",
    "chunk[0]", "chunk[0]|pos[0]", "left[0]|right[0]", "left[0]", "right[0]",
    "left[0]|c[0]", "c[-1]|right[0]",
    "pos[0]", "pos[0]|c[0]", "pos[0]|k[0]",
    "shape[0]", "shape[0]|pos[0]", "shape[0]|c[0]",
    "prev[0]", "next[0]", "pc[0]", "nc[0]", "pk[0]|nk[0]", "pc[0]|nk[0]", "pc[0]|nc[0]",
    "pshape[0]", "nshape[0]", "pshape[0]|nshape[0]",
    "gap[0]", "gap[0]|k[0]", "gap[0]|pos[0]|c[0]",
    "prev[0]|nk[0]", "pk[0]|next[0]", "right[0]|nc[0]", "right[0]|nshape[0]",
    "wl[0]|c[0]", "wr[0]|c[0]", "wl[0]|c[0]|wr[0]", "wl[0]|c[-1]|c[0]", "wr[0]|c[-1]|c[0]",
    "wl[0]|wr[0]", "wl[0]|k[0]|wr[0]", "wl[0]|nc[0]",
    "c[-2]|c[-1]|c[0]|c[1]", "c[-1]|c[0]|c[1]|c[2]",
    "cpre[0]|k[-1]|k[0]", "clen[0]|k[-1]|k[0]", "cpre[0]|c[0]",
    "pc[0]|nc[0]|gap[0]", "pshape[0]|shape[0]",
)
"""Default templates (docs/tasks.md, Features)."""


_NONE = np.uint64(0x6E6F6E65)          # "no such chunk" before hashing
_LONG = np.uint64(0x6C6F6E67)          # a chunk longer than MAX_CHUNK
MAX_CHUNK = 24                         # longer chunks are all the same to the chunk features
MAX_SHAPE = 12                         # so are longer shapes
MAX_PART = 8                           # the parts of a chunk around a character, and its
                                       # letter runs, are cut to this many characters


class TokFeaturizer:
    """The tokenizer's batch featurizer: texts in, per-character attributes
    out.  No state: one featurizer serves any number of threads."""

    attribute_names = list(ATTRIBUTES)
    n_columns = 0

    def __init__(self):
        seeds = mix(np.arange(1, len(ATTRIBUTES) + 1, dtype=np.uint64) * np.uint64(0x70C3A9))
        self._seeds = [np.uint64(int(v)) for v in seeds]

    def batch(self, inputs, columns=None):
        """Featurize a list of texts (str; ``columns`` is ignored)."""
        lens = np.fromiter((len(s) for s in inputs), dtype=np.int64, count=len(inputs))
        bounds = np.zeros(len(inputs) + 1, dtype=np.int64)
        np.cumsum(lens, out=bounds[1:])
        n = int(bounds[-1])
        A = len(ATTRIBUTES)
        if n == 0:
            return Batch(np.zeros((0, A), dtype=np.uint64), bounds, np.zeros(0, dtype=np.int32))
        cp = codepoints("".join(inputs))
        cls, space, newline = _classes(cp)
        doc = np.repeat(np.arange(len(inputs), dtype=np.int64), lens)
        first = np.zeros(n, dtype=bool)
        first[bounds[:-1][lens > 0]] = True
        last = np.zeros(n, dtype=bool)
        last[bounds[1:][lens > 0] - 1] = True
        ns = ~space
        prev_space = np.concatenate(([True], space[:-1]))
        next_space = np.concatenate((space[1:], [True]))
        cstart = ns & (prev_space | first)
        cend = ns & (next_space | last)
        starts = np.flatnonzero(cstart)
        ends = np.flatnonzero(cend) + 1
        m = len(starts)
        # chunk of a character; for whitespace, the last chunk before it
        cid = np.cumsum(cstart) - 1
        chunk_doc = doc[starts]
        has_prev_chunk = np.zeros(m, dtype=bool)         # a chunk before it in the same text
        has_prev_chunk[1:] = chunk_doc[1:] == chunk_doc[:-1]
        has_next_chunk = np.zeros(m, dtype=bool)
        has_next_chunk[:-1] = has_prev_chunk[1:]

        cp64 = cp.astype(np.uint64)
        seg = _Segments(cp64)
        # long chunks are all one "long": a feature unique to one place in training teaches nothing
        chunk_hash = seg(starts, ends)
        long_chunk = ends - starts > MAX_CHUNK
        chunk_hash[long_chunk] = _LONG
        # shapes: letters, marks and digits by class, anything else as itself, runs collapsed
        sym = np.where(cls < _WORDLIKE, cls.astype(np.uint64), cp64 + np.uint64(256))
        keep = ns & (cstart | np.concatenate(([True], sym[1:] != sym[:-1])))
        ck = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(keep, out=ck[1:])
        shape_hash = _Segments(sym[keep])(ck[starts], ck[ends])
        shape_hash[ck[ends] - ck[starts] > MAX_SHAPE] = _LONG
        nl_count = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(newline, out=nl_count[1:])
        # whitespace before each chunk: 0 text start, 1 spaces, 2 a line break, 3 more; after: 0 text end
        before = np.zeros(m, dtype=np.int64)
        j = np.flatnonzero(has_prev_chunk)
        before[j] = 1 + np.minimum(nl_count[starts[j]] - nl_count[ends[j - 1]], 2)
        after = np.zeros(m, dtype=np.int64)
        after[j - 1] = before[j]

        def nb(values, which, ok):
            out = np.full(len(which), _NONE, dtype=np.uint64)
            out[ok] = values[which[ok]]
            return out

        last_cp = cp64[ends - 1]
        first_cp = cp64[starts]
        last_k = cls[ends - 1].astype(np.uint64)
        first_k = cls[starts].astype(np.uint64)
        attrs = np.empty((n, A), dtype=np.uint64)
        col = {name: i for i, name in enumerate(ATTRIBUTES)}

        def put(name, values):
            attrs[:, col[name]] = mix(values.astype(np.uint64) ^ self._seeds[col[name]])

        put("c", cp64)
        put("k", cls)
        # per-character values of chunk characters (c) and whitespace (w)
        c_at = np.flatnonzero(ns)
        w_at = np.flatnonzero(space)
        cc = cid[c_at]
        wc = cid[w_at]                  # the chunk before the whitespace (-1: none)
        w_prev_ok = wc >= 0
        w_prev_ok[w_prev_ok] = chunk_doc[wc[w_prev_ok]] == doc[w_at[w_prev_ok]]
        w_next = wc + 1
        w_next_ok = w_next < m
        w_next_ok[w_next_ok] = chunk_doc[w_next[w_next_ok]] == doc[w_at[w_next_ok]]
        # each whitespace run's line breaks and whether chunks lie on both sides (padded: a text may have none)
        run_lo = np.where(w_prev_ok, np.append(ends, 0)[np.clip(wc, 0, m)], bounds[doc[w_at]])
        run_hi = np.where(w_next_ok, np.append(starts, n)[np.clip(w_next, 0, m)], bounds[doc[w_at] + 1])
        run_kind = (np.uint64(1 << 20) + (w_prev_ok * 2 + w_next_ok) * 3
                    + np.minimum(nl_count[run_hi] - nl_count[run_lo], 2)).astype(np.uint64)
        first_in_run = w_at == run_lo
        last_in_run = w_at == run_hi - 1

        def per_char(c_values, w_values):
            out = np.empty(n, dtype=np.uint64)
            out[c_at] = c_values
            out[w_at] = w_values
            return out

        put("chunk", per_char(chunk_hash[cc], run_kind))
        put("left", per_char(seg(np.maximum(starts[cc], c_at - MAX_PART), c_at), np.full(len(w_at), _NONE)))
        put("right", per_char(seg(c_at, np.minimum(ends[cc], c_at + MAX_PART)), np.full(len(w_at), _NONE)))
        put("pos", per_char(np.minimum(c_at - starts[cc], 3) * 4 + np.minimum(ends[cc] - 1 - c_at, 3),
                            16 + first_in_run * 2 + last_in_run))
        put("shape", per_char(shape_hash[cc], np.full(len(w_at), _NONE)))
        put("gap", per_char(before[cc] * 4 + after[cc], run_kind))
        # neighbouring chunks: of a chunk character, around its own; of whitespace, around its run
        c_prev, c_prev_ok = cc - 1, has_prev_chunk[cc]
        c_next, c_next_ok = cc + 1, has_next_chunk[cc]
        prev_i = per_char(c_prev, wc)
        next_i = per_char(c_next, w_next)
        prev_ok = per_char(c_prev_ok, w_prev_ok).astype(bool)
        next_ok = per_char(c_next_ok, w_next_ok).astype(bool)
        put("prev", nb(chunk_hash, prev_i, prev_ok))
        put("next", nb(chunk_hash, next_i, next_ok))
        put("pc", nb(last_cp, prev_i, prev_ok))
        put("nc", nb(first_cp, next_i, next_ok))
        put("pk", nb(last_k, prev_i, prev_ok))
        put("nk", nb(first_k, next_i, next_ok))
        put("pshape", nb(shape_hash, prev_i, prev_ok))
        put("nshape", nb(shape_hash, next_i, next_ok))
        # the letter-and-digit runs (lowercased) ending at or before and starting at or after each character
        wordlike = ns & (cls < _WORDLIKE)
        rstart = wordlike & ~np.concatenate(([False], wordlike[:-1]) ) | (wordlike & cstart)
        rend = wordlike & ~np.concatenate((wordlike[1:], [False])) | (wordlike & cend)
        run_starts = np.flatnonzero(rstart)
        run_ends = np.flatnonzero(rend) + 1
        low = _Segments(_lowered(cp).astype(np.uint64))
        run_tail = low(np.maximum(run_starts, run_ends - MAX_PART), run_ends)
        run_head = low(run_starts, np.minimum(run_ends, run_starts + MAX_PART))
        run_chunk = cid[run_starts]
        li = np.searchsorted(run_ends, c_at, side="right") - 1
        ri = np.searchsorted(run_starts, c_at, side="left")
        l_ok = li >= 0
        l_ok[l_ok] = run_chunk[li[l_ok]] == cc[l_ok]
        r_ok = ri < len(run_starts)
        r_ok[r_ok] = run_chunk[ri[r_ok]] == cc[r_ok]
        none_w = np.full(len(w_at), _NONE, dtype=np.uint64)
        put("wl", per_char(nb(run_tail, li, l_ok), none_w))
        put("wr", per_char(nb(run_head, ri, r_ok), none_w))
        # the chunk's first characters (lowercased) and its length
        pre_end = np.minimum(starts + 4, ends)
        put("cpre", per_char(low(starts, pre_end)[cc], none_w))
        length = ends - starts
        bucket = np.searchsorted(np.array([2, 3, 4, 5, 7, 10, 15, 25]), length, side="right")
        put("clen", per_char(bucket[cc], np.full(len(w_at), 99)))
        classes = ns.astype(np.int32)          # 0 whitespace, 1 anything else
        return Batch(attrs, bounds, classes)


# ---------------------------------------------------------------- reading

class Token(NamedTuple):
    """A token: offsets ``start``/``end`` into its text, ``form`` and
    ``words`` (one, or those of a multiword token)."""
    start: int
    end: int
    form: str
    words: tuple


class GoldText:
    """The raw text of a CoNLL-U file and its gold segmentation: ``text``,
    ``tokens`` (:class:`Token` in text order), ``sentence_starts`` (each
    sentence's first token index, then the token count),
    ``paragraph_starts`` (sentence indices), ``mismatches`` (line numbers of
    ``# text`` comments that disagree with the tokens) and ``path``."""

    def __init__(self, text, tokens, sentence_starts, paragraph_starts, mismatches, path):
        self.text = text
        self.tokens = tokens
        self.sentence_starts = sentence_starts
        self.paragraph_starts = paragraph_starts
        self.mismatches = mismatches
        self.path = path

    @property
    def n_sentences(self):
        """The number of sentences (progress lines)."""
        return len(self.sentence_starts) - 1

    @property
    def sentences(self):
        """The tokens of each sentence (lists of :class:`Token`)."""
        b = self.sentence_starts
        return [self.tokens[b[i]:b[i + 1]] for i in range(len(b) - 1)]

    def sentence_spans(self):
        """(start, end) character offsets of each sentence."""
        b = self.sentence_starts
        return [(self.tokens[b[i]].start, self.tokens[b[i + 1] - 1].end) for i in range(len(b) - 1)]

    def words(self):
        """The words of each sentence (multiword tokens split), as
        :meth:`Tokenizer.tokenize` gives them."""
        return [[w for t in s for w in t.words] for s in self.sentences]


def read_conllu_text(source):
    """Read a CoNLL-U file (a path or a file object) as a :class:`GoldText`
    (the text as :mod:`fasttag.text.conllu` rebuilds it).  A malformed line
    raises :class:`fasttag.InputError` naming the file and the line."""
    with paused_gc():
        return gold_text(read_document(source))


def gold_text(doc):
    """The :class:`GoldText` of a :class:`fasttag.text.conllu.UDDocument`."""
    tokens, sentence_starts, paragraph_starts, mismatches = [], [], [], []
    for i, sent in enumerate(doc.sentences):
        if sent.opens_paragraph or i == 0:
            paragraph_starts.append(i)
        sentence_starts.append(len(tokens))
        tokens.extend([Token(t.start, t.end, t.form, (t.words[0].form,) if len(t.words) == 1
                             else tuple(w.form for w in t.words)) for t in sent.tokens])
        if sent.text_comment is not None and sent.text_comment != doc.sentence_text(sent):
            mismatches.append(sent.text_line)
    sentence_starts.append(len(tokens))
    return GoldText(doc.text, tokens, sentence_starts, paragraph_starts, mismatches, doc.path)


# ---------------------------------------------------------------- gold labels

def _gold_labels(gold):
    text = gold.text
    n = len(text)
    _, space, _ = _classes(codepoints(text))
    lab = np.full(n, O, dtype=np.int32)
    if not gold.tokens:
        return lab
    starts = np.fromiter((t.start for t in gold.tokens), dtype=np.int64, count=len(gold.tokens))
    ends = np.fromiter((t.end for t in gold.tokens), dtype=np.int64, count=len(gold.tokens))
    inside = np.zeros(n + 1, dtype=np.int64)
    np.add.at(inside, starts, 1)
    np.add.at(inside, ends, -1)
    in_token = np.cumsum(inside[:n]) > 0
    lab[in_token] = I
    lab[starts] = B
    for t in gold.tokens:                  # split points of multiword tokens
        if len(t.words) > 1 and "".join(t.words) == t.form:
            at = t.start
            for w in t.words[:-1]:
                at += len(w)
                lab[at] = W
    sb = np.asarray(gold.sentence_starts, dtype=np.int64)
    first = starts[sb[:-1]]
    lab[first] = SB
    last_end = ends[sb[1:-1] - 1]
    gaps = np.zeros(n + 1, dtype=np.int64)
    np.add.at(gaps, last_end, 1)
    np.add.at(gaps, first[1:], -1)
    lab[(np.cumsum(gaps[:n]) > 0) & space] = X
    # whitespace inside a gold token is still whitespace, and what follows it begins a token
    lab[space & in_token] = O
    after_space = np.zeros(n, dtype=bool)
    after_space[1:] = space[:-1] & in_token[:-1]
    lab[after_space & ~space & ((lab == I) | (lab == W))] = B
    begin = (lab == B) | (lab == SB)
    last = ~space & np.concatenate((space[1:] | begin[1:], [True]))
    lab[begin & last & (lab == B)] = U
    lab[begin & last & (lab == SB)] = SU
    lab[last & (lab == I)] = E
    return lab


def _gold_flags(gold):
    """Per character of the gold text: token starts, sentence starts (but
    the first) and word splits of multiword tokens whose words concatenate."""
    n = len(gold.text) + 1
    token_start = np.zeros(n, dtype=bool)
    sentence_start = np.zeros(n, dtype=bool)
    split = np.zeros(n, dtype=bool)
    if not gold.tokens:
        return token_start, sentence_start, split
    starts = np.fromiter((t.start for t in gold.tokens), dtype=np.int64, count=len(gold.tokens))
    token_start[starts] = True
    sentence_start[starts[np.asarray(gold.sentence_starts[:-1], dtype=np.int64)]] = True
    for t in gold.tokens:
        if len(t.words) > 1 and "".join(t.words) == t.form:
            at = t.start
            for w in t.words[:-1]:
                at += len(w)
                split[at] = True
    return token_start, sentence_start, split


def _train_spans(gold):
    """(start, end) pieces of about TRAIN_PIECE characters, cut between
    sentences."""
    out = []
    spans = gold.sentence_spans()
    i = 0
    while i < len(spans):
        j = i
        while j + 1 < len(spans) and spans[j][1] - spans[i][0] < TRAIN_PIECE:
            j += 1
        out.append((spans[i][0], spans[j][1]))
        i = j + 1
    return out


def _train_pieces(gold, labels):
    """(text, labels) pieces of about TRAIN_PIECE characters, cut between
    sentences (the whitespace at a cut is dropped)."""
    return [(gold.text[a:b], labels[a:b]) for a, b in _train_spans(gold)]


# ---------------------------------------------------------------- decoding

def _decode(labels):
    """(token starts, token ends, sentence-start flags, word split
    positions) of a label array."""
    labels = np.asarray(labels)
    n = len(labels)
    begin = np.isin(labels, _STARTS)
    starts = np.flatnonzero(begin)
    # a token runs from its start over the following I, E and W
    stop = np.flatnonzero(~np.isin(labels, (I, E, W)))
    after = np.searchsorted(stop, starts + 1)
    ends = np.where(after < len(stop), stop[np.minimum(after, len(stop) - 1)], n)
    sent = np.isin(labels[starts], (SB, SU))
    if len(sent):
        sent[0] = True
    splits = np.flatnonzero(labels == W)
    return starts, ends, sent, splits


_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")     # str.splitlines' line ends


def _lines_end_sentences(text, starts, ends, sent):
    """Flag every token after a line break as a sentence start: a line is a
    paragraph, as the command line (a line at a time) reads it."""
    if len(starts) < 2:
        return
    breaks = np.fromiter((m.start() for m in _LINE_BREAK.finditer(text)), dtype=np.int64)
    if not len(breaks):
        return
    k = np.searchsorted(breaks, ends[:-1])          # the first break after each token ...
    sent[1:] |= (k < len(breaks)) & (breaks[np.minimum(k, len(breaks) - 1)] < starts[1:])   # ... before the next


_CONTINUED = {U: B, SU: SB, E: I, W: W, I: I, B: B, SB: SB}     # a token's label when more of it follows
_GOES_ON = {U: E, SU: E, B: I, SB: I}                            # a start label that now continues a token


def _attach_marks(text, labels):
    """``labels`` with no token starting at an attached mark after a token
    character (:func:`fasttag.features.chars.attached_marks`), whatever the
    model says of a mark it rarely saw in training."""
    labels = np.asarray(labels)
    if not len(labels):
        return labels
    cp = codepoints(text)[:len(labels)]
    at = np.flatnonzero(attached_marks(cp) & np.isin(labels, _STARTS))
    at = at[at > 0]
    if not len(at):
        return labels
    labels = labels.copy()
    for p in at.tolist():
        if labels[p - 1] in _CONTINUED and labels[p] in _GOES_ON:    # not after whitespace
            labels[p - 1] = _CONTINUED[labels[p - 1]]
            labels[p] = _GOES_ON[labels[p]]
    return labels


# ---------------------------------------------------------------- the tokenizer

@registry.task("tok", title="tokenizer", help="tokenizer and sentence splitter from CoNLL-U",
               options=("templates", "tokenization"), defaults={"epochs": 20, "algorithm": "mira"})
class Tokenizer(SequenceTask):
    """A trained tokenizer and sentence splitter.  Create with
    :meth:`train` (CoNLL-U data; dev score ``mean_f1``, the mean of token
    and sentence F1) or :func:`fasttag.load`.  Safe to share by threads."""

    task = "tok"
    kind = "tokenizer"
    commands = ("tokenize",)
    featurizer = ("tokcands", 1)
    older_featurizers = (("tokchars", 1),)      # the character tagger of earlier releases
    primary = "mean_f1"

    def __init__(self, model, expansions=None, meta=None, protected=()):
        super().__init__(model, meta)
        self.candidates = isinstance(model.featurizer, CandidateFeaturizer)
        # the kinds of protected patterns (fasttag.text.patterns) this model keeps whole: learned at
        # training, stored in the model file (files without the field: none)
        self.protected = patterns.Protector(protected).kinds if self.candidates else ()
        # the candidate engine's hook for patterns kept whole: None, or a function of a text giving
        # (starts, ends, ...) arrays of spans inside which no boundary is decided
        self.protect = patterns.Protector(self.protected) if self.protected else None
        # scripts without spaces: the segmenter that decides inside their runs, or None (fasttag.tasks.spaceless)
        self.segmenter = None
        if not self.candidates:
            self.featurizer = self.older_featurizers[0]     # an old file saves as it was
        self.expansions = dict(expansions or {})
        self._lower = {}
        for form, words in sorted(self.expansions.items()):
            self._lower.setdefault(form.lower(), tuple(w.lower() for w in words))
        _char_tables()

    # ------------------------------------------------------------ task hooks

    @classmethod
    def _read(cls, data, opts, what):
        """The one example of a CoNLL-U file: its :class:`GoldText`."""
        gold = read_conllu_text(data)
        if what == "training data" and opts.get("max_sentences") is not None:
            gold = _first_sentences(gold, opts["max_sentences"])
        return [gold] if gold.tokens else []

    @classmethod
    def _build(cls, examples, opts):
        gold = examples[0]
        cat, _, _ = _char_tables()
        _, _, splits = _gold_flags(gold)
        suffixes = learn_suffixes(gold.text, np.flatnonzero(splits), cat)
        featurizer = CandidateFeaturizer(cat, _TABLES["lower"], suffixes)
        model = SequenceModel(CAND_TAGS, featurizer, opts["templates"] or CAND_TEMPLATES,
                              allowed=candidate_allowed(), tagdict_classes=CAND_CLASSES)
        # multiword tokens split where no candidate lies (Portuguese "ao" = "a" + "o") are expanded
        _, positions, _ = featurizer.candidates(gold.text)
        # the kinds of protected patterns the training data does not split are kept whole
        protected = patterns.kept_kinds(gold.text, [(t.start, t.end) for t in gold.tokens])
        tok = cls(model, _expansions(gold.tokens, set(positions.tolist())), protected=protected)
        tok.segmenter = spaceless.train_segmenter(featurizer, gold, opts.get("verbose"))
        tok.meta.update({"train_chars": len(gold.text), "train_sentences": len(gold.sentence_starts) - 1,
                         "text_mismatches": len(gold.mismatches)})
        return tok

    def _encode(self, examples, training=False):
        """Training texts in pieces with gold labels; others in their decoding
        pieces, with gold labels when they have tokens (for the temperature)."""
        if self.candidates:
            return self._encode_candidates(examples, training)
        out = []
        for gold in examples:
            if isinstance(gold, str):
                out.extend((gold[a:b], None, None) for a, b in cuts(gold))
            elif training:
                out.extend((text, None, lab) for text, lab in _train_pieces(gold, _gold_labels(gold)))
            else:
                labels = _gold_labels(gold) if gold.tokens else np.zeros(len(gold.text), np.int32)
                out.extend((gold.text[a:b], None, labels[a:b]) for a, b in cuts(gold.text))
        return out

    def _decode(self, examples, ids):
        """Sentences of :class:`Token` of each text, from its pieces' labels."""
        outputs, at = [], 0
        for example in examples:
            text = getattr(example, "text", example)
            pieces = cuts(text)
            n = len(pieces)
            if self.candidates:
                outputs.append(self._candidate_sentences(text, pieces, ids[at:at + n]))
            else:
                outputs.append(self._sentences(text, ids[at:at + n]))
            at += n
        if self.segmenter is not None:
            outputs = spaceless.resegment(self.segmenter, self.model.featurizer,
                                          [getattr(ex, "text", ex) for ex in examples], outputs,
                                          self._protected, self._expand)
        return outputs

    def _encode_candidates(self, examples, training):
        fz = self.model.featurizer
        out = []
        for gold in examples:
            if isinstance(gold, str):
                out.extend((gold[a:b], self._protected(gold[a:b]), None) for a, b in cuts(gold))
                continue
            flags = _gold_flags(gold)
            if training:
                spans = _train_spans(gold)
            else:
                spans = cuts(gold.text)
            for a, b in spans:
                piece = gold.text[a:b]
                protected = self._protected(piece)
                if gold.tokens:
                    _, pos, kinds = fz.candidates(piece, protected)
                    labels = candidate_labels(pos + a, kinds, *flags)
                else:
                    labels = None
                out.append((piece, protected, labels))
        return out

    def _protected(self, text):
        """The (starts, ends) of the spans of ``text`` kept whole, or None."""
        if self.protect is None:
            return None
        spans = self.protect(text)
        return spans[0], spans[1]

    def _arrays(self, text, pieces, pred):
        """(token starts, ends, sentence-start flags, word splits) of a text
        from its pieces' candidate labels."""
        fz = self.model.featurizer
        if len(pieces) == 1:
            return fz.assemble(text, pred[0], self._protected(text))
        parts = [fz.assemble(text[a:b], p, self._protected(text[a:b])) for (a, b), p in zip(pieces, pred)]
        return tuple(np.concatenate([part[i] + (a if i != 2 else 0) for part, (a, _) in zip(parts, pieces)])
                     for i in range(4))

    def _candidate_sentences(self, text, pieces, pred):
        starts, ends, sent, splits = self._arrays(text, pieces, pred)
        return self._tokens(text, starts, ends, sent, splits)

    def _score(self, examples, outputs, opts):
        if not examples:
            raise InputError("the evaluation data holds no sentences")
        gold_sents = [s for gold in examples for s in gold.sentences]
        system = [s for sents in outputs for s in sents]
        if len(examples) > 1:
            raise InputError("a tokenizer is evaluated on one CoNLL-U text at a time")
        out = score_tokenization(gold_sents, system)
        out["mean_f1"] = (out["token_f1"] + out["sentence_f1"]) / 2
        out["chars"] = sum(len(gold.text) for gold in examples)
        out["text_mismatches"] = sum(len(gold.mismatches) for gold in examples)
        return out

    def _records(self, source, json, n_threads):
        """Records of :meth:`tag_file`: each line a paragraph, a sentence of
        words a line; in JSON Lines an object per sentence.  Long lines in
        bounded memory (:mod:`fasttag.text.rawtext`)."""
        sentences = raw_sentences(ftio.read_raw_text(source), self, n_threads, blank_lines=not json, tokens=json)
        return (output.Record(s.words, line=s.line, offsets=s.offsets, multiword=s.multiword) for s in sentences), \
            {"style": "json" if json else "paragraphs"}

    # ------------------------------------------------------------ tokenizing

    def tokenize(self, text: str, offsets: bool = False) -> list[list]:
        """Split ``text`` (a str) into sentences of words, multiword tokens
        split ("don't" -> "do", "n't"); [] for blank text.  With
        ``offsets=True`` each word is ``(word, start, end)`` with
        ``text[start:end] == word``, except that the words of an expanded
        multiword token all carry the token's span."""
        if not isinstance(text, str):
            raise ftio.not_str("tokenize()", text, _SEVERAL)
        return self._words(self._predict([text])[0], offsets)

    def spans(self, text):
        """The tokens of ``text``: a list of sentences, each a list of
        :class:`Token` (``start``, ``end``, ``form``, ``words``)."""
        if not isinstance(text, str):
            raise ftio.not_str("spans()", text, _SEVERAL)
        return self._predict([text])[0]

    def tokenize_lines(self, texts: Iterable[str], offsets: bool = False,
                       n_threads: int = 1, tokens: bool = False) -> Iterator[list[list]]:
        """Tokenize texts lazily, yielding what :meth:`tokenize` gives for each
        (with ``offsets`` as there): much faster for short texts.  ``n_threads``: batches on that many
        threads (0: every core), same output (:mod:`fasttag.parallel`).  With ``tokens=True``, what
        :meth:`spans` gives instead: the surface tokens, each with its words."""
        it = ftio.iter_texts(texts, "tokenize_lines()", "tokenize()")
        if not isinstance(tokens, bool):
            raise TypeError(f"tokenize_lines(): tokens is True or False, not {tokens!r}")
        return self._lines(it, offsets, parallel.check_threads(n_threads), tokens)

    def _lines(self, it, offsets, n_threads=1, tokens=False):
        def tokenized(batch):
            if tokens:
                return self._predict(batch)
            if self.candidates and self.segmenter is None and all(len(t) <= PIECE_CHARS for t in batch):
                return self._fast_words(batch, offsets)
            return [self._words(sents, offsets) for sents in self._predict(batch)]
        batches = ftio.text_batches(it, "tokenize_lines(): text", BATCH_CHARS)
        for words in parallel.ordered_map(tokenized, batches, n_threads):
            yield from words

    def _fast_words(self, texts, offsets):
        """What :meth:`_words` gives of each text's tokens, from the decoded
        labels to the words in compiled code (texts of one piece, a model
        without expansions)."""
        fz = self.model.featurizer
        out = []
        forms = list(self.expansions)
        spans = self._batch_protected(texts)
        for ids, bounds, _ in self.model.predict_chunks(list(zip(texts, spans))):
            n = len(bounds) - 1
            chunk, texts = texts[:n], texts[n:]
            protected, spans = spans[:n], spans[n:]
            out.extend(fz.words(chunk, ids, bounds, offsets, forms, self._expanded, protected))
        return out

    def _batch_protected(self, texts):
        """Each text's protected (starts, ends), or None, from one call of
        :attr:`protect` on the whole batch joined by line breaks (a call
        per line would cost more than the tokenizing of most lines)."""
        out = [None] * len(texts)
        if self.protect is None or not texts:
            return out
        spans = self.protect("\n".join(texts))
        starts = np.asarray(spans[0], dtype=np.int64)
        if not len(starts):
            return out
        ends = np.asarray(spans[1], dtype=np.int64)
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        firsts = np.zeros(len(texts) + 1, dtype=np.int64)       # where each text starts in the joined text
        np.cumsum(lengths + 1, out=firsts[1:])
        which = np.searchsorted(firsts, starts, side="right") - 1
        at = np.searchsorted(which, np.arange(len(texts) + 1))
        for i in np.unique(which).tolist():
            a, b, base = at[i], at[i + 1], firsts[i]
            # a span of a custom hook that runs past its text's end is cut there
            out[i] = (starts[a:b] - base, np.minimum(ends[a:b], base + lengths[i]) - base)
        return out

    def _expanded(self, form, start, end, offsets):
        """The word items of a token that may be an expanded multiword token,
        as :meth:`_words` gives them."""
        words = self._expand(form)
        return self._words([[Token(start, end, form, words)]], offsets)[0]

    @staticmethod
    def _words(sentences, offsets):
        if not offsets:
            return [[w for t in s for w in t.words] for s in sentences]
        out = []
        for s in sentences:
            words = []
            for t in s:
                if len(t.words) == 1:
                    words.append((t.form, t.start, t.end))
                elif "".join(t.words) == t.form:
                    at = t.start
                    for w in t.words:
                        words.append((w, at, at + len(w)))
                        at += len(w)
                else:
                    words.extend((w, t.start, t.end) for w in t.words)
            out.append(words)
        return out

    def _sentences(self, text, pred):
        """Sentences of :class:`Token` from the labels of a text's pieces
        (each decoded alone: its first token begins a sentence)."""
        labels = np.concatenate([np.asarray(p) for p in pred]) if len(pred) != 1 else np.asarray(pred[0])
        starts, ends, sent, splits = _decode(_attach_marks(text, labels))
        if not len(starts):
            return []
        _lines_end_sentences(text, starts, ends, sent)
        return self._tokens(text, starts, ends, sent, splits)

    def _tokens(self, text, starts, ends, sent, splits):
        """Sentences of :class:`Token` from token offsets, sentence-start
        flags and word split positions."""
        if not len(starts):
            return []
        expand = self._expand
        tokens = []
        if len(splits):
            token_of = np.searchsorted(starts, splits, side="right") - 1
            by_token = defaultdict(list)
            for t, p in zip(token_of.tolist(), splits.tolist()):
                by_token[t].append(p)
        else:
            by_token = {}
        for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
            form = text[a:b]
            cut = by_token.get(i)
            if cut:
                bounds = [a] + cut + [b]
                words = tuple(text[x:y] for x, y in zip(bounds[:-1], bounds[1:]))
            else:
                words = expand(form)
            tokens.append(Token(a, b, form, words))
        firsts = np.flatnonzero(sent).tolist() + [len(tokens)]
        return [tokens[firsts[i]:firsts[i + 1]] for i in range(len(firsts) - 1)]

    def _expand(self, form):
        words = self.expansions.get(form)
        if words is not None:
            return words
        if self._lower:
            words = self._lower.get(form.lower())
            if words is not None:
                return _recase(form, words)
        return (form,)

    def to_conllu(self, text):
        """The tokenization of ``text`` as CoNLL-U (``# text``, ``# newpar``,
        multiword ranges, ``SpaceAfter=No``; columns but ID and FORM ``_``)."""
        if not isinstance(text, str):
            raise ftio.not_str("to_conllu()", text, _SEVERAL)
        lines = []
        sentences = self._predict([text])[0]
        starts = [t.start for s in sentences for t in s][1:] + [None]
        n_before = 0
        prev_end = 0
        for s in sentences:
            gap = text[prev_end:s[0].start]
            if lines and _LINE_BREAK.search(gap):
                lines.append("# newpar")
            lines.append("# text = " + " ".join(text[s[0].start:s[-1].end].split()))
            wid = 1
            for i, t in enumerate(s):
                nxt = starts[n_before + i]
                misc = "SpaceAfter=No" if nxt is not None and nxt == t.end else "_"
                if len(t.words) > 1:
                    lines.append(f"{wid}-{wid + len(t.words) - 1}\t{t.form}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
                    for w in t.words:
                        lines.append(f"{wid}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_")
                        wid += 1
                else:
                    lines.append(f"{wid}\t{t.form}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
                    wid += 1
            lines.append("")
            prev_end = s[-1].end
            n_before += len(s)
        return "\n".join(lines) + ("\n" if lines else "")

    # ------------------------------------------------------------ storage

    def _task_parts(self):
        header = {"expansions": {form: list(words) for form, words in sorted(self.expansions.items())}}
        if self.candidates:
            header["featurizer"] = {"suffixes": [list(p) for p in self.model.featurizer.suffixes]}
            header["protected"] = list(self.protected)
        arrays = {}
        if self.segmenter is not None:
            header["segmenter"], arrays = spaceless.segmenter_parts(self.segmenter)
        return header, arrays

    @classmethod
    def _featurizer_from(cls, spec, header, arrays, meta):
        if spec["name"] == "tokchars":
            check_fixed_labels(header, arrays, "tokenizer", TAGS, CANDIDATE_CLASSES, _ALLOWED)
            return TokFeaturizer()
        check_fixed_labels(header, arrays, "tokenizer", CAND_TAGS, CAND_CLASSES, candidate_allowed())
        suffixes = spec.get("suffixes")
        if not isinstance(suffixes, list) or not all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and 0 < len(p[0]) <= MAX_SUFFIX
                and type(p[1]) is int and 0 <= p[1] < 0x110000 for p in suffixes):
            raise ModelFormatError("corrupt fasttag model: the tokenizer's multiword suffixes are malformed")
        cat, _, _ = _char_tables()
        return CandidateFeaturizer(cat, _TABLES["lower"], [tuple(p) for p in suffixes])

    @classmethod
    def _load(cls, header, arrays, model, meta):
        expansions = header.get("expansions", {})
        if not isinstance(expansions, dict):
            raise ModelFormatError("corrupt fasttag model: the multiword expansions are malformed")
        if len(expansions) > MAX_EXPANSIONS:
            raise ModelFormatError(f"corrupt fasttag model: {len(expansions):,} multiword expansions, over the "
                                   f"{MAX_EXPANSIONS:,} a tokenizer may hold")
        for f, ws in expansions.items():
            fault = expansion_fault(f, ws)
            if fault:
                raise ModelFormatError(f"corrupt fasttag model: the multiword expansion of {shown(f)} {fault}")
        protected = header.get("protected", [])        # files before protected patterns: none
        if not isinstance(protected, list) or not all(isinstance(k, str) and k in patterns.KINDS
                                                      for k in protected) or len(set(protected)) != len(protected):
            raise ModelFormatError("corrupt fasttag model: the tokenizer's protected kinds are malformed")
        tok = cls(model, {f: tuple(ws) for f, ws in expansions.items()}, meta, protected)
        tok.segmenter = spaceless.stored_segmenter(header, arrays)
        if tok.segmenter is not None and not tok.candidates:
            raise ModelFormatError("corrupt fasttag model: a character-tagger tokenizer holds a segmenter")
        return tok


#: The most words a multiword token expands to (UD's hold two or three).
MAX_EXPANSION_WORDS = 16
#: The most characters an expansion's words hold beyond twice its form's
#: ("du" -> "de le": 4 of at most 20), so a text is never expanded into
#: more than a few times its length.
EXPANSION_SLACK = 16
#: The most multiword expansions a tokenizer holds (a treebank gives a few thousand).
MAX_EXPANSIONS = 200_000


def expansion_fault(form, words):
    """What is wrong with ``form`` -> ``words`` as a multiword expansion,
    or None: the rule training keeps its expansions to and loading checks
    a file's with.  The words are CoNLL-U FORMs
    (:func:`fasttag.text.fieldcheck.column_fault`), bounded in number and
    length (:data:`MAX_EXPANSION_WORDS`, :data:`EXPANSION_SLACK`)."""
    fault = field_fault(form)
    if fault:
        return f"has a form that {fault}"
    if not isinstance(words, (list, tuple)) or len(words) < 2:
        return "is not a list of two or more words"
    if len(words) > MAX_EXPANSION_WORDS:
        return f"has {len(words):,} words, over the {MAX_EXPANSION_WORDS} an expansion may have"
    for w in words:
        fault = column_fault(w, "FORM")
        if not fault and any(ch.isspace() and ch != " " for ch in w):
            fault = "holds whitespace other than a space"
        if fault:
            return f"has the word {shown(w)}, which {fault}"
    chars = sum(len(w) for w in words)
    limit = 2 * len(form) + EXPANSION_SLACK
    if chars > limit:
        return (f"holds {chars:,} characters, over the {limit} an expansion of its form may hold (twice the "
                f"form's plus {EXPANSION_SLACK})")
    return None


def _recase(form, words):
    if len(form) > 1 and form.isupper():
        return tuple(w.upper() for w in words)
    if form[:1].isupper():
        return (words[0][:1].upper() + words[0][1:],) + tuple(words[1:])
    return tuple(words)


def _expansions(tokens, candidates=None):
    """form -> most frequent words, of forms whose words do not concatenate
    to them (or, given the set of ``candidates`` positions, are split
    where no candidate lies) and that were multiword tokens in most
    occurrences."""
    multi = defaultdict(Counter)
    plain = Counter()
    plain_lower = Counter()
    multi_lower = Counter()
    concatenated = set()
    for t in tokens:
        if len(t.words) == 1:
            plain[t.form] += 1
            plain_lower[t.form.lower()] += 1
        elif any(ch.isspace() for ch in t.form):
            continue
        elif "".join(t.words) != t.form or (candidates is not None and not _splits_at(t, candidates)):
            multi[t.form][t.words] += 1
            multi_lower[t.form.lower()] += 1
            if "".join(t.words) == t.form:
                concatenated.add(t.form)
    out = {}
    for form, counts in multi.items():
        # a form whose words concatenate is expanded (and looked up lowercased) only where its
        # lowercase was mostly a multiword token too ("its" is rarely "it s", even if "ITS" was)
        if sum(counts.values()) > plain[form] and (
                form not in concatenated or multi_lower[form.lower()] > plain_lower[form.lower()]):
            words = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
            if expansion_fault(form, words) is None:        # else the form stays one word
                out[form] = words
    if len(out) > MAX_EXPANSIONS:                           # the most frequent kept
        out = dict(sorted(out.items(), key=lambda kv: (-sum(multi[kv[0]].values()), kv[0]))[:MAX_EXPANSIONS])
    return out


def _splits_at(token, candidates):
    """Whether every split of a concatenating multiword token is a candidate."""
    at = token.start
    for w in token.words[:-1]:
        at += len(w)
        if at not in candidates:
            return False
    return True


def _first_sentences(gold, n):
    """The first ``n`` sentences of a GoldText (spans unchanged)."""
    if n >= len(gold.sentence_starts) - 1:
        return gold
    end_tok = gold.sentence_starts[n]
    end = gold.tokens[end_tok - 1].end
    return GoldText(gold.text[:end], gold.tokens[:end_tok], gold.sentence_starts[:n + 1],
                    [p for p in gold.paragraph_starts if p < n], gold.mismatches, gold.path)
