"""Character hashing shared by the segmenter's and the tokenizer's
featurizers, with numpy over whole batches: BMP code point tables, the
splitmix64 mixer, attached marks, and sets of words matched in text by a
rolling hash (:func:`word_hashes`) through a bitmap pre-filter.
"""
import unicodedata
from typing import NamedTuple, Optional

import numpy as np

from .normalize import NUMERAL, char_classes, normalize_text

MAX_WORD = 7            # longest dictionary word used for features
HASH_BASE = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_FILTER_BITS = 22


def mix(x):
    """splitmix64 finaliser over a uint64 array (a bijection)."""
    x = x ^ (x >> np.uint64(30))
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


# ---------------------------------------------------------------- tables

_TABLES = {}


def bmp_tables():
    """(class of every BMP code point after folding, isspace of every BMP
    code point, folded code point of every BMP code point), built once."""
    if not _TABLES:
        bmp = "".join(map(chr, range(0x10000)))
        cls = np.array(char_classes(bmp), dtype=np.uint8)
        # the zero of People's Daily years ("二○○一年") is U+25CB, a symbol used as a numeral
        for ch in "○〇零":
            cls[ord(ch)] = NUMERAL
        space = np.array([ch.isspace() for ch in bmp], dtype=bool)
        fold = codepoints(normalize_text(bmp)).astype(np.uint32)
        _TABLES.update(cls=cls, space=space, fold=fold)
    return _TABLES["cls"], _TABLES["space"], _TABLES["fold"]


def codepoints(text):
    """uint32 code points of a str (lone surrogates included)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def bmp_lookup(table, cp, rest):
    """``table[cp]`` for a table over the BMP; ``rest(cps)`` gives the
    values of the code points beyond it."""
    bmp = cp < 0x10000
    if bmp.all():
        return table[cp]
    out = np.empty(len(cp), dtype=table.dtype)
    out[bmp] = table[cp[bmp]]
    out[~bmp] = rest(cp[~bmp])
    return out


def fold_codepoints(cp):
    """Width-folded code points (as :func:`fasttag.features.normalize.normalize_text`)."""
    return bmp_lookup(bmp_tables()[2], cp, lambda rest: rest)


def classes_of(cp_folded):
    """Character class of every (folded) code point."""
    return bmp_lookup(bmp_tables()[0], cp_folded,
                      lambda rest: char_classes("".join(chr(int(c)) for c in rest)))


# ---------------------------------------------------------------- dictionaries

def hash_step(h, cp):
    return h * HASH_BASE + cp.astype(np.uint64)


def hash_finish(h, length):
    # the length's low byte goes into the top byte (longer words still differ by their characters)
    return mix(h ^ np.uint64((int(length) & 0xFF) << 56))


HASH_BASE_INVERSE = np.uint64(pow(int(HASH_BASE), -1, 1 << 64))     # HASH_BASE is odd: invertible modulo 2**64


def powers_of(base, n):
    """base**0 .. base**(n-1) modulo 2**64."""
    out = np.empty(n, dtype=np.uint64)
    if n:
        out[0] = 1
        np.cumprod(np.full(n - 1, base, dtype=np.uint64), out=out[1:])
    return out


def _window_hashes(cp, lengths):
    """{L: rolling hash of cp[i:i+L] for every i}: L steps of :func:`hash_step`
    in a few passes whatever L is, from prefix sums of cp[k] * P**-k."""
    if not lengths:
        return {}
    n = len(cp)
    powers = powers_of(HASH_BASE, n)
    prefix = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(cp.astype(np.uint64) * powers_of(HASH_BASE_INVERSE, n), out=prefix[1:])
    out = {}
    for L in lengths:
        m = n - L + 1
        out[L] = powers[L - 1: L - 1 + m] * (prefix[L: L + m] - prefix[:m])
    return out


def word_hashes(words):
    """Rolling hashes of words (folded), as the text matcher computes them;
    returns (hashes uint64, lengths int64) in the order of ``words``."""
    words = list(words)
    hashes = np.zeros(len(words), dtype=np.uint64)
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    for L in np.unique(lengths):
        if L == 0:
            continue
        idx = np.flatnonzero(lengths == L)
        cp = fold_codepoints(codepoints("".join(words[i] for i in idx))).reshape(len(idx), L)
        if L <= MAX_WORD:
            h = np.zeros(len(idx), dtype=np.uint64)
            for k in range(L):
                h = hash_step(h, cp[:, k])
        else:           # the same sum of cp[k] * P**(L-1-k), without L steps
            h = (cp.astype(np.uint64) * powers_of(HASH_BASE, int(L))[::-1]).sum(axis=1, dtype=np.uint64)
        hashes[idx] = hash_finish(h, int(L))
    return hashes, lengths


class WordSet:
    """A set of words for matching in text: sorted hashes, a bitmap filter
    and the lengths present."""

    def __init__(self, words=(), min_length=1, weights=None):
        words = [w for w in set(words) if len(w) >= min_length]
        hashes, lengths = word_hashes(words)
        self._set_hashes(hashes, lengths)
        # force-mode priorities, aligned with the sorted hashes
        if weights:
            first = np.unique(hashes, return_index=True)[1]
            self.weights = np.array([float(weights.get(words[i], 1.0)) for i in first], dtype=np.float64)
        self.size = len(words)

    def __len__(self):
        return self.size

    @classmethod
    def from_hashes(cls, hashes, lengths):
        """A set from :func:`word_hashes` output (no weights)."""
        self = cls.__new__(cls)
        self._set_hashes(np.asarray(hashes, dtype=np.uint64), np.asarray(lengths))
        self.size = len(self.hashes)
        return self

    def _set_hashes(self, hashes, lengths):
        self.hashes = np.unique(hashes)
        self.lengths = sorted(set(lengths.tolist()))
        self.filter = np.zeros(1 << _FILTER_BITS, dtype=bool)
        self.filter[(self.hashes & np.uint64((1 << _FILTER_BITS) - 1)).astype(np.int64)] = True
        self.bits = np.packbits(self.filter, bitorder="little")     # the same filter, 8 bits a byte
        self.weights = None

    def weight_of(self, hashes):
        """Weights of words known to be in the set (1.0 without weights)."""
        if self.weights is None:
            return np.ones(len(hashes))
        return self.weights[np.searchsorted(self.hashes, hashes)]

    def contains(self, hashes):
        mask = np.uint64((1 << _FILTER_BITS) - 1)
        hit = self.filter[(hashes & mask).astype(np.int64)]
        idx = np.flatnonzero(hit)
        if len(idx) and len(self.hashes):
            h = hashes[idx]
            pos = np.searchsorted(self.hashes, h)
            pos[pos == len(self.hashes)] = 0
            hit[idx] = self.hashes[pos] == h
        return hit


def match_lengths(cp, sent_end, wordset, lengths, groups=None, with_hashes=False):
    """{L: bool array over positions, True where the L characters starting
    there form a word of ``wordset`` within ``sent_end``}.  With ``groups``
    (each position's dictionary id), ``wordset`` is a list of WordSets."""
    n = len(cp)
    want = sorted(L for L in set(lengths) if 1 <= L <= n)
    # short lengths by the rolling hash; longer ones (force words) directly: a few passes, not one per character
    rolled = {L for L in want if L <= MAX_WORD}
    hashes = _window_hashes(cp, [L for L in want if L not in rolled])
    h = np.zeros(n, dtype=np.uint64)
    for L in range(1, max(rolled, default=0) + 1):
        h = hash_step(h[: n - L + 1], cp[L - 1:])
        if L in rolled:
            hashes[L] = h
    pos = np.arange(n, dtype=np.int64)
    out = {}
    for L in want:
        fin = hash_finish(hashes[L], L)
        valid = pos[: n - L + 1] + L <= sent_end[: n - L + 1]
        hit = np.zeros(n, dtype=bool)
        if groups is None:
            hit[: n - L + 1] = wordset.contains(fin) & valid
        else:
            g = groups[: n - L + 1]
            for gid, ws in enumerate(wordset):
                sel = np.flatnonzero((g == gid) & valid)
                if len(sel) and len(ws):
                    hit[sel] = ws.contains(fin[sel])
        out[L] = (hit, fin) if with_hashes else hit
    return out


class Batch(NamedTuple):
    """A batch featurizer's output: ``attrs`` (uint64[positions, attributes]),
    ``bounds`` (input starts and the end), ``classes`` (candidate class per
    position, or None) and, for segmentation, ``text`` (without whitespace)."""
    attrs: np.ndarray
    bounds: np.ndarray
    classes: Optional[np.ndarray]
    text: str = ""


_ZWJ = 0x200D
_ATTACH_TABLE = []    # whether each BMP code point attaches to the one before, built once


def _attaches(c):
    return (unicodedata.category(chr(c)) in ("Mn", "Mc", "Me") or c == _ZWJ
            or 0xFE00 <= c <= 0xFE0F or 0xE0100 <= c <= 0xE01EF       # variation selectors
            or 0x1F3FB <= c <= 0x1F3FF)                               # emoji skin tones


def attached_marks(cp):
    """Per code point of ``cp``: whether it belongs to the one before, so no
    word may begin there: a combining mark, variation selector, skin tone,
    zero-width joiner or the character after it, a flag's second half."""
    if not _ATTACH_TABLE:
        _ATTACH_TABLE.append(np.array([_attaches(c) for c in range(0x10000)], dtype=bool))
    out = bmp_lookup(_ATTACH_TABLE[0], cp, lambda rest: np.array([_attaches(int(c)) for c in rest], dtype=bool))
    out[1:] |= cp[:-1] == _ZWJ
    flag = (cp >= 0x1F1E6) & (cp <= 0x1F1FF)
    if flag.any():                  # in a run of regional indicators, every second one ends a flag
        at = np.arange(len(cp))
        first = np.maximum.accumulate(np.where(flag & ~np.concatenate(([False], flag[:-1])), at, 0))
        out |= flag & ((at - first) % 2 == 1)
    return out
