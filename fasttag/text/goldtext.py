"""The raw text of a CoNLL-U file with its gold segmentation, as a
tokenizer learns and is scored on it: surface tokens with their offsets
into the rebuilt text (:mod:`fasttag.text.conllu` rebuilds it), sentence
and paragraph starts, and the pieces the tokenizer trains on.  How the
text is rebuilt: docs/tasks.md.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .conllu import paused_gc, read_document

__all__ = ["SurfaceToken", "GoldText", "read_conllu_text", "gold_text", "gold_flags", "piece_spans",
           "labelled_pieces", "first_sentences"]


class SurfaceToken(NamedTuple):
    """A surface token of a text (gold, or as a tokenizer finds it):
    offsets ``start``/``end`` into its text, ``form`` and ``words`` (one,
    or those of a multiword token)."""
    start: int
    end: int
    form: str
    words: tuple


class GoldText:
    """The raw text of a CoNLL-U file and its gold segmentation: ``text``,
    ``tokens`` (:class:`SurfaceToken` in text order), ``sentence_starts``
    (each sentence's first token index, then the token count),
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
        """The tokens of each sentence (lists of :class:`SurfaceToken`)."""
        b = self.sentence_starts
        return [self.tokens[b[i]:b[i + 1]] for i in range(len(b) - 1)]

    def sentence_spans(self):
        """(start, end) character offsets of each sentence."""
        b = self.sentence_starts
        return [(self.tokens[b[i]].start, self.tokens[b[i + 1] - 1].end) for i in range(len(b) - 1)]

    def words(self):
        """The words of each sentence (multiword tokens split), as
        :meth:`fasttag.tasks.tok.Tokenizer.tokenize` gives them."""
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
        tokens.extend([SurfaceToken(t.start, t.end, t.form, (t.words[0].form,) if len(t.words) == 1
                                    else tuple(w.form for w in t.words)) for t in sent.tokens])
        if sent.text_comment is not None and sent.text_comment != doc.sentence_text(sent):
            mismatches.append(sent.text_line)
    sentence_starts.append(len(tokens))
    return GoldText(doc.text, tokens, sentence_starts, paragraph_starts, mismatches, doc.path)


def gold_flags(gold):
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


def piece_spans(gold, size):
    """(start, end) pieces of about ``size`` characters, cut between
    sentences (the whitespace at a cut is left out)."""
    out = []
    spans = gold.sentence_spans()
    i = 0
    while i < len(spans):
        j = i
        while j + 1 < len(spans) and spans[j][1] - spans[i][0] < size:
            j += 1
        out.append((spans[i][0], spans[j][1]))
        i = j + 1
    return out


def labelled_pieces(gold, labels, size):
    """(text, labels) pieces of about ``size`` characters, cut between
    sentences (the whitespace at a cut is dropped); ``labels``: one per
    character of the text."""
    return [(gold.text[a:b], labels[a:b]) for a, b in piece_spans(gold, size)]


def first_sentences(gold, n):
    """The first ``n`` sentences of a :class:`GoldText` (spans unchanged)."""
    if n >= len(gold.sentence_starts) - 1:
        return gold
    end_tok = gold.sentence_starts[n]
    end = gold.tokens[end_tok - 1].end
    return GoldText(gold.text[:end], gold.tokens[:end_tok], gold.sentence_starts[:n + 1],
                    [p for p in gold.paragraph_starts if p < n], gold.mismatches, gold.path)
