"""The character tagger's engine: the tokenizer of earlier releases
(``tokchars`` in model files), which labels every character, and the
character tables both tokenizers share.

:func:`char_tables` classes each BMP code point by its general category
(and whitespace, line breaks); the candidate tokenizer
(:mod:`fasttag.features.candidates`) scans with the same tables.  The
character tagger's labels (:data:`TAGS`), their transitions
(:func:`tok_allowed`) and gold labels (:func:`char_labels`) are here with
its featurizer (:class:`TokFeaturizer`), as the candidate engine's are with
its own; :class:`fasttag.tasks.tok.Tokenizer` decodes them.  Features:
docs/tasks.md.
"""
from __future__ import annotations

import unicodedata

import numpy as np

from .chars import HASH_BASE, HASH_BASE_INVERSE, Batch, bmp_lookup, codepoints, mix, powers_of

__all__ = ["TokFeaturizer", "ATTRIBUTES", "TOK_TEMPLATES", "TAGS", "tok_allowed", "char_labels", "char_tables",
           "lower_table", "char_kinds", "lowered", "SliceHashes", "CATEGORIES", "SPACE_CLASS", "NEWLINE_CLASS"]

# ---------------------------------------------------------------- labels

TAGS = ("O", "X", "SB", "SU", "B", "U", "I", "E", "W")
"""The character tagger's labels: whitespace inside a sentence (O) and
between sentences (X); a token that begins a sentence (SB, or SU of one
character), a token (B, or U of one character); inside a token (I), its
last character (E), the first character of each later word of a multiword
token (W)."""
O, X, SB, SU, B, U, I, E, W = range(len(TAGS))
TOKEN_STARTS = (SB, SU, B, U)            # labels that begin a token
TOKEN_ENDS = (SU, U, E, W)               # labels a token may end with


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
    for p in (O, X) + TOKEN_ENDS:
        allowed[(T + 1) * T + p] = 1        # these may end a text
    return allowed


# ---------------------------------------------------------------- characters

CATEGORIES = ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
              "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So",
              "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn")
"""The Unicode general categories, in the order of their class indices
(which the compiled scan of :mod:`fasttag._core.tokenizer` relies on)."""
_CAT_INDEX = {c: i for i, c in enumerate(CATEGORIES)}
SPACE_CLASS = len(CATEGORIES)           # whitespace that does not break lines
NEWLINE_CLASS = SPACE_CLASS + 1         # whitespace that does ("\n", "\r", U+2028, ...)
_WORDLIKE = 9                           # classes below this (letters, marks, Nd) are collapsed in shapes
_TABLES = {}


def char_tables():
    """The BMP tables of the tokenizers, built once: (class of each code
    point: its general category's index in :data:`CATEGORIES`, or
    :data:`SPACE_CLASS` / :data:`NEWLINE_CLASS`; whether it is whitespace;
    whether it breaks lines)."""
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


def lower_table():
    """The lowercase of each BMP code point (itself where its lowercase is
    not one character), as the tokenizers' features fold case."""
    char_tables()
    return _TABLES["lower"]


def lowered(cp):
    """The code points ``cp`` lowercased (:func:`lower_table`; beyond the BMP unchanged)."""
    char_tables()
    return bmp_lookup(_TABLES["lower"], cp, lambda rest: rest)


def char_kinds(cp):
    """(class, is-space, is-newline) arrays (no whitespace lies outside the BMP)."""
    cls_t, space_t, nl_t = char_tables()
    return (bmp_lookup(cls_t, cp, lambda rest: [_CAT_INDEX[unicodedata.category(chr(int(c)))] for c in rest]),
            bmp_lookup(space_t, cp, lambda rest: False), bmp_lookup(nl_t, cp, lambda rest: False))


class SliceHashes:
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
        cls, space, newline = char_kinds(cp)
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
        seg = SliceHashes(cp64)
        # long chunks are all one "long": a feature unique to one place in training teaches nothing
        chunk_hash = seg(starts, ends)
        long_chunk = ends - starts > MAX_CHUNK
        chunk_hash[long_chunk] = _LONG
        # shapes: letters, marks and digits by class, anything else as itself, runs collapsed
        sym = np.where(cls < _WORDLIKE, cls.astype(np.uint64), cp64 + np.uint64(256))
        keep = ns & (cstart | np.concatenate(([True], sym[1:] != sym[:-1])))
        ck = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(keep, out=ck[1:])
        shape_hash = SliceHashes(sym[keep])(ck[starts], ck[ends])
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
        low = SliceHashes(lowered(cp).astype(np.uint64))
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


# ---------------------------------------------------------------- gold labels

def char_labels(gold):
    """The gold label (:data:`TAGS`) of each character of a gold text
    (:class:`fasttag.text.goldtext.GoldText`): what the character tagger
    learns."""
    text = gold.text
    n = len(text)
    _, space, _ = char_kinds(codepoints(text))
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
