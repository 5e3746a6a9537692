"""The candidate tokenizer's featurizer: the model decides only at the
boundaries :mod:`fasttag._core.tokenizer` finds worth deciding (punctuation,
symbols, class and script changes, every boundary of scripts written
without spaces, learned multiword suffixes inside letter runs, whitespace
where a sentence may end); everything else is fixed by the text.  The
scan, the attributes and the assembly of tokens are compiled and run
without the GIL.
"""
from __future__ import annotations

import re
from collections import Counter

import numpy as np

from .._core import tokenizer as _scan
from .chars import Batch, mix

__all__ = ["CandidateFeaturizer", "CAND_TAGS", "CAND_CLASSES", "candidate_allowed", "CAND_ATTRIBUTES", "CAND_TEMPLATES", "learn_suffixes",
           "candidate_labels", "MAX_SUFFIX", "SEEDS"]

CAND_TAGS = ("N", "T", "W", "S")
"""Labels of a candidate: nothing, a new token, a new word of the same
token, a new token that begins a sentence (at a whitespace gap N, T and W
all mean a token only)."""
NOTHING, TOKEN, WORD, SENTENCE = range(4)
CAND_CLASSES = ((TOKEN, SENTENCE), (NOTHING, TOKEN, WORD, SENTENCE))
"""The labels a candidate may take: at a whitespace gap, inside a chunk."""
GAP = 3                  # the kind of a whitespace gap

CAND_ATTRIBUTES = ("kind", "l1", "l2", "l3", "r1", "r2", "r3", "kl1", "kl2", "kr1", "kr2", "wl", "wr",
                   "left", "right", "chunk", "pchunk", "shape", "pshape", "pos", "pw")
"""Per candidate: its kind (with the gap's width), the characters before
(l) and after (r) it and their categories (k), the lowercased letter runs
ending and starting there, the chunk's parts before and after it (8
characters), the chunk after (and at a gap the chunk before) it and their
shapes, the position in the chunk, the word before the punctuation that
ends the left part."""

CAND_TEMPLATES = (
    "bias", "kind[0]", "kind[0]|l1[0]", "kind[0]|r1[0]", "kind[0]|l1[0]|r1[0]",
    "l2[0]|l1[0]|r1[0]", "l1[0]|r1[0]|r2[0]", "l2[0]|l1[0]|r1[0]|r2[0]", "l3[0]|l2[0]|l1[0]", "r1[0]|r2[0]|r3[0]",
    "kl1[0]|kr1[0]", "kind[0]|kl2[0]|kl1[0]|kr1[0]", "kl1[0]|kr1[0]|kr2[0]", "kl1[0]|r1[0]", "l1[0]|kr1[0]",
    "wl[0]", "wr[0]", "wl[0]|r1[0]", "l1[0]|wr[0]", "wl[0]|wr[0]", "wl[0]|l1[0]|r1[0]", "l1[0]|r1[0]|wr[0]",
    "left[0]", "right[0]", "left[0]|r1[0]", "l1[0]|right[0]", "left[0]|right[0]",
    "chunk[0]", "chunk[0]|pos[0]", "pchunk[0]|kind[0]", "pchunk[0]|r1[0]", "pchunk[0]|wr[0]",
    "shape[0]", "shape[0]|pos[0]", "pshape[0]|shape[0]", "pshape[0]|kind[0]|r1[0]", "pos[0]|l1[0]|r1[0]",
    "kind[-1]|kind[0]", "kind[0]|kind[1]", "l1[0]|r1[0]|kind[1]", "l1[0]|r1[0]|kind[-1]",
    "pw[0]|l1[0]", "pw[0]|l1[0]|kr1[0]", "pw[0]|l1[0]|wr[0]",
)
"""Default templates of the candidate tokenizer."""

MAX_SUFFIX = 4           # the longest learned multiword suffix (the scan's limit)
#: the seed of each attribute, mixed into its values
SEEDS = mix(np.arange(1, len(CAND_ATTRIBUTES) + 1, dtype=np.uint64) * np.uint64(0x7C0DE5))


class CandidateFeaturizer:
    """Texts in, one row of attributes per candidate out.  ``cat`` and
    ``lower``: the tokenizer's BMP category and lowercase tables;
    ``suffixes``: (suffix, code point after the run or 0) pairs.  The
    context of an input is None or its protected (starts, ends) spans.
    No state: one featurizer serves any number of threads."""

    attribute_names = list(CAND_ATTRIBUTES)
    n_columns = 0

    def __init__(self, cat, lower, suffixes=()):
        self.cat = np.ascontiguousarray(cat, dtype=np.uint8)
        self.lower = np.ascontiguousarray(lower, dtype=np.uint32)
        self.suffixes = sorted({(str(s), int(a)) for s, a in suffixes})
        # the sorted keys, then a bit per last letter (its lowercased code point modulo 64): a quick
        # rejection of letter runs that end in no suffix's letter
        last = 0
        for s, _ in self.suffixes:
            last |= 1 << (int(self.lower[ord(s[-1])]) if ord(s[-1]) < 0x10000 else ord(s[-1])) % 64
        keys = sorted({_scan.suffix_key(s, a, self.lower) for s, a in self.suffixes})
        self.keys = np.array(keys + [last], dtype=np.uint64)

    def batch(self, inputs, columns=None):
        """Featurize a list of texts (``columns``: per text None or its
        protected spans)."""
        protected = None if columns is None or all(c is None for c in columns) else list(columns)
        attrs, bounds, kinds = _scan.featurize(list(inputs), self.cat, self.lower, self.keys, SEEDS, protected)
        return Batch(attrs, bounds, (kinds != GAP).astype(np.int32))

    def candidates(self, text, protected=None):
        """(left ends, positions, kinds) of the candidates of ``text``."""
        return _scan.candidates(text, self.cat, self.lower, self.keys, protected)

    def assemble(self, text, labels, protected=None):
        """(token starts, ends, sentence-start flags, word splits) of
        ``text`` from its candidates' labels."""
        return _scan.assemble(text, np.ascontiguousarray(labels, dtype=np.int32), self.cat, self.lower,
                              self.keys, protected)

    def words(self, texts, labels, bounds, offsets=False, forms=(), expanded=None, protected=None):
        """The sentences of words of each text from the labels of a batch
        (text i's are ``labels[bounds[i]:bounds[i + 1]]``), multiword
        tokens cut at their splits; ``offsets``: (word, start, end).  A
        token without splits that may be one of ``forms`` (compared
        lowercased) gives the items of ``expanded(form, start, end,
        offsets)``.  ``protected``: per text None or its protected spans, as
        the batch was featurized with."""
        keys = np.array(sorted({_scan.expansion_key(f, self.lower) for form in forms
                                for f in (form, form.lower())}), dtype=np.uint64) if forms else None
        return _scan.words_batch(list(texts), np.ascontiguousarray(labels, dtype=np.int32),
                                 np.ascontiguousarray(bounds, dtype=np.int64), self.cat, self.lower, self.keys,
                                 offsets, keys, expanded,
                                 None if protected is None or all(p is None for p in protected) else list(protected))


def learn_suffixes(text, splits, cat, min_count=2, min_share=0.05):
    """The (suffix, code point after the run or 0) pairs of the word splits
    of multiword tokens that fall inside a letter run (``do|n't``), seen
    ``min_count`` times and splitting at least ``min_share`` of the letter
    runs that end so (a suffix that rarely splits costs a decision at every
    run it ends)."""
    found = Counter()
    n = len(text)

    def kind(i):
        c = ord(text[i])
        return _scan.scan_class(c, int(cat[c]) if c < 0x10000 else 21)
    for s in splits:
        if s <= 0 or s >= n or kind(s - 1) not in (0, 2) or kind(s) != 0:
            continue
        e = s
        while e < n and kind(e) in (0, 2):
            e += 1
        if e - s > MAX_SUFFIX:
            continue
        after = ord(text[e]) if e < n and kind(e) == 6 else 0
        found[(text[s:e].lower(), after)] += 1
    found = {k: v for k, v in found.items() if v >= min_count}
    if not found:
        return []
    runs = Counter()
    for m in _LETTER_RUN.finditer(text):
        e = m.end()
        after = ord(text[e]) if e < n and kind(e) == 6 else 0
        run = m.group().lower()
        for k in range(1, min(MAX_SUFFIX, len(run) - 1) + 1):
            if (run[-k:], after) in found:
                runs[(run[-k:], after)] += 1
    return sorted(k for k, v in found.items() if v >= min_share * max(runs[k], 1))


_LETTER_RUN = re.compile(r"[^\W\d_]+")


def candidate_labels(positions, kinds, token_start, sentence_start, split):
    """Gold labels of candidates from per-character flags of a text (a gap
    always begins a token, even inside a gold token with a space)."""
    labels = np.where(sentence_start[positions], SENTENCE,
                      np.where(token_start[positions] | (kinds == GAP), TOKEN,
                               np.where(split[positions], WORD, NOTHING)))
    return labels.astype(np.int32)


def candidate_allowed():
    """The transition mask of the candidate labels: every transition (the
    constraints are per candidate, :data:`CAND_CLASSES`)."""
    T = len(CAND_TAGS)
    return np.ones((T + 2) * T, dtype=np.uint8)
