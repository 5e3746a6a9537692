"""Character features for Chinese word segmentation, computed with numpy
for a whole batch of lines at once; the "tokens" are a line's characters
without its whitespace.  Attributes, one 64-bit value per character:

``c``      the width-folded character; ``t`` its class
           (:mod:`fasttag.features.normalize`);
``rep``    whether it repeats the previous character (AA) and/or the one
           before that (ABA);
``db``, ``de``, ``dm``  the length of the longest dictionary word
           starting at, ending at, strictly containing it (0: none);
``cl2`` .. ``cl``  with character clusters only (:class:`CharClusters`):
           the prefixes of its bit string;
``ub``, ``ue``, ``um``  with word candidates only (:func:`word_candidates`):
           as ``db``/``de``/``dm``.

The featurizer also works out which B/M/E/S tags remain possible per
character: whitespace, protected runs and force words (docs/tasks.md).
"""
import numpy as np

from .._core.charfeatures import dictionary_lengths
from .._core.weights import hash_strings
from ..errors import InputError
from ..text.schemes import BMES
from .chars import (MAX_WORD, Batch, WordSet, attached_marks, bmp_lookup, bmp_tables, classes_of, codepoints,
                    fold_codepoints, hash_finish, hash_step, match_lengths, mix)
from .normalize import atomic_runs, normalize_text, run_letters

TAGS = BMES
B, M, E, S = range(4)

# boundary before / after a character: 1 required, -1 forbidden, 0 free; a character's
# candidate class is at (before + 1) * 3 + (after + 1) in _GRID (free/free: open, -1)
_BEGIN = {1: {B, S}, -1: {M, E}, 0: {B, M, E, S}}
_END = {1: {E, S}, -1: {B, M}, 0: {B, M, E, S}}
CANDIDATE_CLASSES = []
_GRID = np.full(9, -1, dtype=np.int32)
for _b in (-1, 0, 1):
    for _a in (-1, 0, 1):
        if _b == 0 and _a == 0:
            continue
        _GRID[(_b + 1) * 3 + (_a + 1)] = len(CANDIDATE_CLASSES)
        CANDIDATE_CLASSES.append(tuple(sorted(_BEGIN[_b] & _END[_a])))


# ---------------------------------------------------------------- featurizer

ATTRIBUTES = ("c", "t", "rep", "db", "de", "dm")

SEG_TEMPLATES = (
    "bias",
    "c[-2]", "c[-1]", "c[0]", "c[1]", "c[2]",
    "c[-2]|c[-1]", "c[-1]|c[0]", "c[0]|c[1]", "c[1]|c[2]", "c[-1]|c[1]",
    "c[-1]|c[0]|c[1]",
    "t[0]", "t[-1]|t[0]|t[1]", "t[-2]|t[-1]|t[0]|t[1]", "t[-1]|t[0]|t[1]|t[2]",
    "rep[0]", "rep[1]",
    "db[0]", "de[0]", "dm[0]", "db[0]|de[0]|dm[0]",
    "db[0]|c[0]", "de[0]|c[0]", "dm[0]|c[0]",
    "de[-1]", "db[1]",
)
"""Default segmentation templates."""

CLUSTER_PREFIXES = (2, 4, 6, 8, 10)
CLUSTER_ATTRIBUTES = tuple(f"cl{k}" for k in CLUSTER_PREFIXES) + ("cl",)
"""Attributes of character clusters: bit-string prefixes, then the whole string."""

CLUSTER_TEMPLATES = tuple(f"{a}[0]" for a in CLUSTER_ATTRIBUTES) + (
    "cl[-1]", "cl[1]", "cl[-1]|cl[0]", "cl[0]|cl[1]")
"""Templates added to the defaults when a segmenter has character clusters."""


CANDIDATE_ATTRIBUTES = ("ub", "ue", "um")
"""Lengths of the longest word candidate starting at, ending at and containing each character."""


def accessor_variety(lines, lengths=range(2, MAX_WORD + 1)):
    """(hashes, lengths, AV) of every character n-gram of ``lines`` (folded,
    no whitespace) of each length in ``lengths``: AV (Feng et al. 2004) is the
    fewer of the distinct characters seen before and after (a line end counts)."""
    text = "\n".join(lines)
    cp = codepoints(text)
    n = len(cp)
    breaks = np.concatenate((np.flatnonzero(cp == 10), [n]))
    line_end = breaks[np.searchsorted(breaks, np.arange(n))]
    out_h, out_l, out_av = [], [], []
    h = np.zeros(n, dtype=np.uint64)
    for L in range(1, max(lengths) + 1):
        if n - L + 1 <= 0:
            break
        h = hash_step(h[: n - L + 1], cp[L - 1:])
        if L not in lengths:
            continue
        at = np.flatnonzero(np.arange(n - L + 1) + L <= line_end[: n - L + 1])
        if not len(at):
            continue
        grams = hash_finish(h[at], L)
        before = np.where(at > 0, cp[np.maximum(at - 1, 0)], 10).astype(np.uint64)
        after = np.where(at + L < n, cp[np.minimum(at + L, n - 1)], 10).astype(np.uint64)
        counts = []
        for ctx in (before, after):
            pairs = np.unique(np.rec.fromarrays([grams, ctx]))
            counts.append(np.unique(pairs.f0, return_counts=True))
        (g, left), (_, right) = counts
        out_h.append(g)
        out_l.append(np.full(len(g), L, dtype=np.int64))
        out_av.append(np.minimum(left, right))
    if not out_h:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(out_h), np.concatenate(out_l), np.concatenate(out_av)


MIN_AV = 4
"""Accessor variety a string needs (on both sides) to be a word candidate."""

CANDIDATE_TEMPLATES = ("ub[0]", "ue[0]", "um[0]", "ub[0]|ue[0]|um[0]", "ue[-1]", "ub[1]")
"""Templates added to the defaults when a segmenter has word candidates."""


def word_candidates(lines, min_av=MIN_AV):
    """The word candidates of unlabeled text (str lines) as a
    :class:`WordSet`: every string of 2 to MAX_WORD characters whose
    accessor variety is at least ``min_av`` (Zhao and Kit 2008)."""
    folded = ["".join(chars) for chars in character_sentences(lines)]
    hashes, lengths, av = accessor_variety(folded)
    keep = av >= min_av
    return WordSet.from_hashes(hashes[keep], lengths[keep])


def character_sentences(lines):
    """The characters of each line, width-folded, without whitespace: the
    sentences to learn character clusters from."""
    out = []
    for line in lines:
        chars = list(normalize_text("".join(line.split())))
        if chars:
            out.append(chars)
    return out


class CharClusters:
    """Brown clusters of single characters, looked up by folded code point.
    ``clusters``: a :class:`fasttag.features.clusters.Clusters` of one-character
    words (else ``error``, InputError by default).  Characters that fold to
    one share the folded character's entry, else the smallest's."""

    def __init__(self, clusters, error=InputError):
        chosen = {}
        for ch in sorted(clusters):
            if len(ch) != 1:
                raise error(f"clusters: {ch[:20]!r} is not one character: a segmenter takes "
                            f"clusters of characters")
            f = normalize_text(ch)
            if len(f) != 1:
                raise error(f"clusters: {ch!r} is not one character after width folding")
            if f not in chosen or ch == f:
                chosen[f] = ch
        self.clusters = clusters
        keys = sorted(chosen)
        self.keys = codepoints("".join(keys)).astype(np.int64)
        codes = np.zeros((len(keys) + 1, len(CLUSTER_ATTRIBUTES)), dtype=np.uint64)   # last row: no cluster
        for j, k in enumerate(CLUSTER_PREFIXES + (None,)):
            prefixes = [clusters[chosen[f]][:k] for f in keys]
            codes[:-1, j] = hash_strings(prefixes) | np.uint64(1)
        self.codes = codes
        self.row_of_bmp = np.full(0x10000, len(keys), dtype=np.int32)
        bmp = self.keys < 0x10000
        self.row_of_bmp[self.keys[bmp]] = np.flatnonzero(bmp).astype(np.int32)

    def __len__(self):
        return len(self.keys)

    def attributes(self, folded):
        """uint64[len(folded), len(CLUSTER_ATTRIBUTES)]: the prefix values."""
        def beyond(cp):
            at = np.searchsorted(self.keys, cp.astype(np.int64))
            found = at < len(self.keys)
            found[found] = self.keys[at[found]] == cp[found]
            return np.where(found, at, len(self.keys)).astype(np.int32)
        return self.codes[bmp_lookup(self.row_of_bmp, folded, beyond)]


class CharFeaturizer:
    """Batch featurizer of a segmenter.  ``dictionary``: a WordSet for
    db/de/dm (``fold_dictionaries`` in jackknifed training); ``force``: a
    WordSet kept whole; ``runs``: options of
    :func:`fasttag.features.normalize.atomic_runs` (None: none);
    ``clusters``: :class:`CharClusters`; ``candidates``: a WordSet of
    :func:`word_candidates`."""

    n_columns = 0

    def __init__(self, dictionary=None, runs=None, force=None, clusters=None, candidates=None):
        self.dictionary = dictionary
        self.fold_dictionaries = None
        self.runs = runs
        self.force = force
        self.clusters = clusters
        self.candidates = candidates
        self.attribute_names = list(ATTRIBUTES) + (list(CLUSTER_ATTRIBUTES) if clusters is not None else []) \
            + (list(CANDIDATE_ATTRIBUTES) if candidates is not None else [])
        n = len(self.attribute_names)
        self._seeds = [np.uint64(int(v)) for v in mix(np.arange(1, n + 1, dtype=np.uint64)
                                                       * np.uint64(0x51ED27))]

    def _attr(self, i, values):
        return mix(values.astype(np.uint64) ^ self._seeds[i])

    def batch(self, lines, contexts=None):
        """Featurize a list of lines (str).  A line's context is its
        jackknife fold while training, or None."""
        dict_ids = None
        if contexts is not None and any(c is not None for c in contexts):
            if any(c is None for c in contexts):
                raise ValueError("a batch mixes jackknifed and plain lines")
            dict_ids = list(contexts)
        _, space_table, _ = bmp_tables()
        lens = np.fromiter((len(s) for s in lines), dtype=np.int64, count=len(lines))
        joined = "\n".join(lines)
        cpj = codepoints(joined)
        space = bmp_lookup(space_table, cpj, lambda rest: False)
        keep = ~space
        # line of every joined position ("\n" separators belong to the line before)
        line_of = np.repeat(np.arange(len(lines), dtype=np.int64), lens + 1)[: len(cpj)]
        kept_pos = np.flatnonzero(keep)
        cp = cpj[kept_pos]
        n = len(cp)
        kept_line = line_of[kept_pos]
        counts = np.bincount(kept_line, minlength=len(lines)) if n else np.zeros(len(lines), np.int64)
        bounds = np.zeros(len(lines) + 1, dtype=np.int64)
        np.cumsum(counts, out=bounds[1:])
        text = "".join(joined.split()) if n else ""
        if n == 0:
            return Batch(np.zeros((0, len(self.attribute_names)), dtype=np.uint64), bounds, None, text)
        sent_start = bounds[kept_line]
        sent_end = bounds[kept_line + 1]
        folded = fold_codepoints(cp)
        cls = classes_of(folded)

        attrs = np.empty((n, len(self.attribute_names)), dtype=np.uint64)
        attrs[:, 0] = self._attr(0, folded)
        attrs[:, 1] = self._attr(1, cls)
        idx = np.arange(n, dtype=np.int64)
        rep = np.zeros(n, dtype=np.uint64)
        same1 = np.zeros(n, dtype=bool)
        same1[1:] = folded[1:] == folded[:-1]
        same1 &= idx - 1 >= sent_start
        same2 = np.zeros(n, dtype=bool)
        same2[2:] = folded[2:] == folded[:-2]
        same2 &= idx - 2 >= sent_start
        rep[same1] += np.uint64(1)
        rep[same2] += np.uint64(2)
        attrs[:, 2] = self._attr(2, rep)

        db = np.zeros(n, dtype=np.int64)
        de = np.zeros(n, dtype=np.int64)
        dm = np.zeros(n, dtype=np.int64)
        dictionary = self.dictionary if dict_ids is None else self.fold_dictionaries
        if dictionary is not None and dict_ids is None:
            _longest_words(folded, sent_end, dictionary, db, de, dm)
        elif dictionary is not None:        # training: each line's own fold dictionary
            lengths = sorted({L for ws in dictionary for L in ws.lengths if 2 <= L <= MAX_WORD})
            groups = np.asarray(dict_ids, dtype=np.int64)[kept_line]
            hits = match_lengths(folded, sent_end, dictionary, lengths, groups)
            for L in lengths:
                if L not in hits:
                    break
                at = np.flatnonzero(hits[L])
                if not len(at):
                    continue
                db[at] = L                      # lengths ascend: longest wins
                de[at + L - 1] = np.maximum(de[at + L - 1], L)
                for off in range(1, L - 1):
                    dm[at + off] = L
        attrs[:, 3] = self._attr(3, db)
        attrs[:, 4] = self._attr(4, de)
        attrs[:, 5] = self._attr(5, dm)
        col = len(ATTRIBUTES)
        if self.clusters is not None:
            values = self.clusters.attributes(folded)
            for j in range(values.shape[1]):
                attrs[:, col] = self._attr(col, values[:, j])
                col += 1
        if self.candidates is not None:
            ub, ue, um = (np.zeros(n, dtype=np.int64) for _ in range(3))
            _longest_words(folded, sent_end, self.candidates, ub, ue, um)
            for values in (ub, ue, um):
                attrs[:, col] = self._attr(col, values)
                col += 1
        return Batch(attrs, bounds, self._constraints(joined, keep, kept_pos, idx, sent_start, sent_end, folded),
                     text)

    # ------------------------------------------------------------ constraints

    def _constraints(self, joined, keep, kept_pos, idx, sent_start, sent_end, folded):
        n = len(kept_pos)
        bnd = np.zeros(n + 1, dtype=np.int8)     # the boundary before each character (see _GRID)
        # whitespace inside a line: a gap between consecutive kept positions
        gap = np.zeros(n, dtype=bool)
        gap[1:] = (kept_pos[1:] - kept_pos[:-1] > 1) & (idx[1:] > sent_start[1:])
        if self.runs is not None:
            sp = _runs(joined, self.runs)
            sp = sp[sp[:, 1] - sp[:, 0] >= 2]
            if len(sp):
                kept_index = np.cumsum(keep) - 1
                s = kept_index[sp[:, 0]]
                e = kept_index[sp[:, 1] - 1] + 1
                bnd[_interior(s, e, n)] = -1
        bnd[:n][attached_marks(folded) & (idx > sent_start)] = -1
        bnd[:n][gap] = 1
        if self.force is not None and len(self.force):
            self._force_words(folded, sent_end, gap, bnd)
        if not bnd.any():
            return None
        return _GRID[(bnd[:-1].astype(np.int64) + 1) * 3 + (bnd[1:].astype(np.int64) + 1)]

    def _force_words(self, folded, sent_end, gap, bnd):
        ws = self.force
        hits = match_lengths(folded, sent_end, ws, ws.lengths, with_hashes=True)
        gapcum = np.cumsum(gap)
        found = []
        for L, (hit, fin) in hits.items():
            at = np.flatnonzero(hit)
            if L > 1 and len(at):
                # no whitespace inside the word
                at = at[gapcum[at + L - 1] - gapcum[at] == 0]
            if len(at):
                found.extend(zip((-ws.weight_of(fin[at])).tolist(), [-int(L)] * len(at), at.tolist()))
        if not found:
            return
        # overlaps: heavier first, then longer, then leftmost; a word that overlaps no other is kept
        found.sort()
        taken = np.zeros(len(folded), dtype=bool)
        for _, L, a in found:
            L = -L
            if taken[a:a + L].any():
                continue
            taken[a:a + L] = True
            bnd[a] = 1
            bnd[a + L] = 1
            bnd[a + 1:a + L] = -1


_RUN_CHARS = None


def _runs(joined, options):
    """atomic_runs(joined, **options) as an int64[n, 2] array, computed only
    on the stretches that can hold a run (folded printable ASCII, U+2236 or
    run letters: the patterns look at nothing else)."""
    global _RUN_CHARS
    if _RUN_CHARS is None:
        _, _, fold = bmp_tables()
        f = fold.astype(np.int64)
        is_letter = np.zeros(0x10000, dtype=bool)
        for cps in run_letters():
            is_letter[list(cps)] = True
        letters = is_letter[f]
        ok = ((f >= 0x21) & (f <= 0x7E)) | (f == 0x2236) | letters
        alnum = ((f >= 48) & (f <= 57)) | ((f >= 65) & (f <= 90)) | ((f >= 97) & (f <= 122)) | letters
        _RUN_CHARS = (ok.astype(np.uint8) + alnum.astype(np.uint8))    # 0 no, 1 ascii, 2 alnum
    cp = codepoints(joined)
    kind = np.zeros(len(cp), dtype=np.uint8)
    bmp = cp < 0x10000
    kind[bmp] = _RUN_CHARS[cp[bmp]]
    ok = kind > 0
    if not ok.any():
        return np.zeros((0, 2), np.int64)
    edge = np.diff(np.concatenate(([False], ok, [False])).astype(np.int8))
    starts = np.flatnonzero(edge == 1)
    ends = np.flatnonzero(edge == -1)
    n_alnum = np.concatenate(([0], np.cumsum(kind == 2)))
    has = n_alnum[ends] - n_alnum[starts] > 0
    starts, ends = starts[has], ends[has]
    if not len(starts):
        return np.zeros((0, 2), np.int64)
    pieces = [joined[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
    spans = atomic_runs("\n".join(pieces), **options)
    if not spans:
        return np.zeros((0, 2), np.int64)
    sp = np.array(spans, dtype=np.int64)
    # offsets of the pieces in the "\n"-joined string -> joined positions
    piece_start = np.zeros(len(pieces), dtype=np.int64)
    np.cumsum((ends - starts + 1)[:-1], out=piece_start[1:])
    which = np.searchsorted(piece_start, sp[:, 0], side="right") - 1
    return sp + (starts[which] - piece_start[which])[:, None]


def _interior(starts, ends, n):
    """Positions p with start < p < end for any (start, end) pair."""
    mark = np.zeros(n + 1, dtype=np.int64)
    np.add.at(mark, starts + 1, 1)
    np.add.at(mark, ends, -1)
    return np.flatnonzero(np.cumsum(mark[:n]) > 0)


def _longest_words(folded, sent_end, words, starting, ending, containing):
    """Fill the lengths (2..MAX_WORD) of the longest word of ``words`` at each character, compiled."""
    want = np.zeros(MAX_WORD + 1, dtype=np.uint8)
    want[[L for L in words.lengths if 2 <= L <= MAX_WORD]] = 1
    dictionary_lengths(np.ascontiguousarray(folded, dtype=np.uint32), sent_end, words.hashes,
                       words.bits, want, starting, ending, containing)
