"""The segmenter a tokenizer carries for scripts written without spaces.

The candidate tokenizer decides every boundary between two characters of
such scripts (Han, Kana, Thai ...) from its character features alone; the
segmenter (:class:`fasttag.Segmenter`) decides them better, with its word
and dictionary features.  A tokenizer whose training text is mostly of such
scripts trains one on the tokens of the same sentences; at tokenization the
segmenter decides the candidate boundaries inside each whitespace-free
chunk that holds such characters (numbers among Han too: on Chinese GSDSimp
that is half a point of words F1 over deciding the spaceless boundaries
alone) and the tokenizer the whitespace gaps, the other chunks and the
sentences.  Stored inside the tokenizer's model file: its header
under ``segmenter``, its arrays prefixed ``segmenter/``.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

from .._core.tokenizer import KIND_NAMES
from ..errors import InputError, ModelFormatError
from ..model import loading
from .seg import Segmenter

__all__ = ["MIN_SHARE", "MIN_BOUNDARIES", "PREFIX", "spaceless_boundaries", "decided_boundaries",
           "train_segmenter", "resegment", "segmenter_parts", "stored_segmenter"]

SPACELESS = KIND_NAMES.index("spaceless")
GAP = KIND_NAMES.index("gap")
MIN_SHARE = 0.5          # spaceless boundaries per non-whitespace character of the training text
MIN_BOUNDARIES = 50      # and at least this many: too few to learn words from otherwise
SEGMENTER = "segmenter"     # its name in the tokenizer's model file (header key and array prefix)
PREFIX = SEGMENTER + "/"    # of the segmenter's arrays in the tokenizer's model file


def spaceless_boundaries(featurizer, text, protected=None):
    """The positions of ``text`` between two characters of a script without
    spaces, as the candidate ``featurizer`` scans them (an int64 array)."""
    _, positions, kinds = featurizer.candidates(text, protected)
    return np.asarray(positions, dtype=np.int64)[np.asarray(kinds) == SPACELESS]


def decided_boundaries(featurizer, text, protected=None):
    """The candidate positions the segmenter decides: every one inside a
    whitespace-free chunk that holds a boundary between two spaceless
    characters (numbers and Latin words among Han are its words too)."""
    _, positions, kinds = featurizer.candidates(text, protected)
    positions, kinds = np.asarray(positions, dtype=np.int64), np.asarray(kinds)
    inside = positions[kinds != GAP]
    spaceless = positions[kinds == SPACELESS]
    if not len(spaceless):
        return spaceless
    # the chunk of a position: how many whitespace characters precede it
    space = np.zeros(len(text) + 1, dtype=np.int64)
    space[1:] = np.cumsum(np.fromiter(map(str.isspace, text), dtype=bool, count=len(text)))
    return inside[np.isin(space[inside], space[spaceless])]


def train_segmenter(featurizer, gold, verbose=None):
    """A :class:`Segmenter` trained on the tokens of ``gold`` (a
    :class:`fasttag.text.goldtext.GoldText`) when its text is mostly of scripts
    without spaces (:data:`MIN_SHARE`, :data:`MIN_BOUNDARIES`) and its
    tokens are words to learn from, else None."""
    n = len(spaceless_boundaries(featurizer, gold.text))
    chars = len(gold.text) - sum(ch.isspace() for ch in gold.text)
    if n < MIN_BOUNDARIES or n < MIN_SHARE * chars:
        return None
    sentences = [[t.form for t in s] for s in gold.sentences]
    try:
        return Segmenter.train(sentences, verbose=verbose)
    except InputError:
        # tokens no segmenter learns from (no word boundaries): the tokenizer decides alone, as before
        return None


def resegment(segmenter, featurizer, texts, outputs, protected=None, expand=None):
    """The tokenizer's sentences of each of ``texts`` (``outputs``: per
    text a list of sentences of tokens with ``start``, ``end``, ``form``,
    ``words``) with the boundaries inside chunks of spaceless characters
    (:func:`decided_boundaries`) decided by ``segmenter``: a token begins
    there where the segmenter starts a word.  Sentences and every other
    boundary stay; unchanged tokens are kept as they are, a new token's
    words are ``expand(form)`` (default: the form alone).  The segmenter
    reads each sentence's text whole, all of them in one call."""
    expand = expand or (lambda form: (form,))
    todo = []               # (text index, sentence index, decided positions, start, end)
    for k, (text, sentences) in enumerate(zip(texts, outputs)):
        if not sentences:
            continue
        inside = decided_boundaries(featurizer, text, protected(text) if protected is not None else None)
        if not len(inside):
            continue
        spans = [(s[0].start, s[-1].end) for s in sentences]
        first = np.searchsorted(inside, [a for a, _ in spans], side="right")
        last = np.searchsorted(inside, [b for _, b in spans], side="left")
        todo.extend((k, i, inside[first[i]:last[i]].tolist(), *spans[i])
                    for i in range(len(sentences)) if last[i] > first[i])
    if not todo:
        return outputs
    out = [list(sentences) for sentences in outputs]
    words = segmenter.segment_lines([texts[k][a:b] for k, _, _, a, b in todo])
    for (k, i, decided, a, _), sent_words in zip(todo, words):
        text, sentence = texts[k], outputs[k][i]
        starts = set(_word_starts(text, a, sent_words))
        out[k][i] = _rebuilt(text, sentence, decided, starts, type(sentence[0]), expand)
    return out


def _word_starts(text, at, words):
    """The offsets of the segmenter's ``words`` of the text from ``at``."""
    for w in words:
        while text[at].isspace():
            at += 1
        yield at
        at += len(w)


def _rebuilt(text, sentence, decided, starts, token_cls, expand):
    """The tokens of ``sentence`` with the boundaries at ``decided``
    positions (sorted) replaced by the segmenter's word ``starts``."""
    cuts = []               # (start, end) of the new tokens
    at = set(decided)
    for t in sentence:
        inner = [p for p in decided[bisect_right(decided, t.start):bisect_left(decided, t.end)] if p in starts]
        if cuts and cuts[-1][1] == t.start and t.start in at and t.start not in starts:
            a, _ = cuts.pop()               # the segmenter joins it to the token before
        else:
            a = t.start
        for p in inner:
            cuts.append((a, p))
            a = p
        cuts.append((a, t.end))
    by_span = {(t.start, t.end): t for t in sentence}
    return [by_span.get((a, b)) or token_cls(a, b, text[a:b], tuple(expand(text[a:b]))) for a, b in cuts]


def segmenter_parts(segmenter):
    """(header, arrays) of a segmenter inside a tokenizer's model file
    (:func:`fasttag.model.loading.nested_parts`)."""
    headers, arrays = loading.nested_parts({SEGMENTER: segmenter._parts()})
    return headers[SEGMENTER], arrays


def stored_segmenter(header, arrays):
    """The segmenter a tokenizer's model file holds (checked), or None."""
    sub = header.get(SEGMENTER)
    own = loading.nested_arrays(SEGMENTER, arrays)
    if sub is None:
        if own:
            raise ModelFormatError(f"corrupt fasttag model: array {PREFIX + next(iter(own))!r:.60} belongs "
                                   f"to no segmenter")
        return None
    return loading.nested_model("the tokenizer", SEGMENTER, sub, own, Segmenter)
