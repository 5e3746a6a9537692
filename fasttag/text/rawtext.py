"""Raw text in: the sentences a word tagger sees in text, with offsets.

Memory stays bounded: a long line is cut into the pieces the tokenizer
decodes one at a time anyway (so its tokens are the same), and a long
pretokenized line is tagged in pieces, written back on one line.
"""
import re
from functools import partial
from typing import NamedTuple

from .. import parallel

MAX_TOKENS = 1000          # a pretokenized line is tagged in pieces of at most this many tokens
PIECE_CHARS = 50_000       # the longest piece of raw text a tokenizer decodes as one sequence
RAW_BATCH_CHARS = 200_000  # raw text tokenized and tagged in one batch
BATCH_TOKENS = 50_000      # tokens tagged in one call
BATCH_SENTENCES = 5000

_TOKEN = re.compile(r"\S+")


class Token(NamedTuple):
    """A tagged token of raw text: its ``text``, its ``tag``, and its
    character offsets ``start`` and ``end`` (exclusive) in the text."""
    text: str
    tag: str
    start: int
    end: int


class Span(NamedTuple):
    """A span found in raw text (an entity, a chunk): its ``label``, its
    ``text`` and its character offsets ``start`` and ``end`` (exclusive)."""
    label: str
    text: str
    start: int
    end: int


class TextSentence(NamedTuple):
    """A sentence of text input: ``line``, the 1-based number of its line;
    ``text``, that line; ``words``; ``offsets``, the (start, end) of each
    word in ``text``; ``ends_line``, False for a piece of a long line that
    more pieces follow (its output goes on the same line as theirs);
    ``multiword``, when asked for, the surface tokens of several words as
    (first word, end word, token text) triples."""
    line: int
    text: str
    words: list
    offsets: list
    ends_line: bool = True
    multiword: list = None


# ---------------------------------------------------------------- cutting

def cuts(text, limit=PIECE_CHARS):
    """(start, end) pieces covering ``text``, each at most ``limit``
    characters, cut after a line break where one lies in the second half
    of the window, else after whitespace, else anywhere.  Each piece is
    decoded alone, so a cut is always a sentence break."""
    n = len(text)
    if n <= limit:
        return [(0, n)]
    out, a = [], 0
    while n - a > limit:
        lo, hi = a + limit // 2, a + limit
        cut = max(text.rfind("\n", lo, hi), text.rfind("\r", lo, hi), text.rfind("\u2028", lo, hi)) + 1
        if cut <= 0:
            m = None
            for m in re.finditer(r"\s", text[lo:hi]):
                pass
            cut = lo + m.end() if m is not None else hi
        out.append((a, cut))
        a = cut
    out.append((a, n))
    return out


# ---------------------------------------------------------------- sentences

def pretokenized_sentences(lines, max_tokens=MAX_TOKENS, blank_lines=False):
    """:class:`TextSentence` of str ``lines``: one per non-blank line (every
    line with ``blank_lines``), words split at whitespace; a longer line
    than ``max_tokens`` words in pieces, all but the last with ``ends_line`` False."""
    for number, line in enumerate(lines, start=1):
        if len(line) <= max_tokens:                 # at most max_tokens words: split at once
            words = line.split()
            if words or blank_lines:
                offsets, at, find = [], 0, line.find
                for w in words:                     # only whitespace lies between at and w
                    a = find(w, at)
                    at = a + len(w)
                    offsets.append((a, at))
                yield TextSentence(number, line, words, offsets)
            continue
        words, offsets = [], []                     # a long line: its words a few at a time
        for m in _TOKEN.finditer(line):
            if len(words) == max_tokens:            # a full piece, and more words follow
                yield TextSentence(number, line, words, offsets, False)
                words, offsets = [], []
            words.append(m.group())
            offsets.append(m.span())
        if words:
            yield TextSentence(number, line, words, offsets)


def _piece_batches(lines):
    """Lists of ``(line number, line, shift, piece)`` of str ``lines``, each
    line cut once into the pieces a tokenizer decodes alone (:func:`cuts`),
    about RAW_BATCH_CHARS characters a list (less where the input pauses:
    :func:`fasttag.parallel.input_would_wait`), read lazily."""
    batch, n = [], 0
    for number, line in enumerate(lines, start=1):
        if not isinstance(line, str):
            raise TypeError(f"line {number} is a {type(line).__name__}, not a str")
        for a, b in cuts(line):
            batch.append((number, line, a, line if b - a == len(line) else line[a:b]))
            n += b - a
            if n >= RAW_BATCH_CHARS or parallel.input_would_wait():
                yield batch
                batch, n = [], 0
    if batch:
        yield batch


def raw_sentences(lines, tokenizer, n_threads=1, tag_sents=None, blank_lines=False, tokens=False):
    """:class:`TextSentence` of str ``lines`` of raw text, each line cut
    into sentences by ``tokenizer`` (anything with ``tokenize_lines``),
    lazily; with ``tag_sents``, ``(sentence, tags)`` pairs.  With
    ``blank_lines``, a line without sentences (blank) gives one sentence
    of no words, so that output can keep every input line; with
    ``tokens``, each sentence knows its multiword tokens (``multiword``).
    Each batch is tokenized and tagged on one thread: one level of threads."""
    def work(batch):
        pieces = [piece for *_, piece in batch]
        if tokens:
            sents = [[_token_sentence(number, line, shift, s) for s in piece]
                     for (number, line, shift, _), piece in zip(batch, tokenizer.tokenize_lines(pieces, tokens=True))]
        else:
            sents = [[TextSentence(number, line, [w for w, _, _ in s], [(a + shift, b + shift) for _, a, b in s])
                      for s in piece]
                     for (number, line, shift, _), piece in zip(batch, tokenizer.tokenize_lines(pieces, offsets=True))]
        if tag_sents is not None:
            tags = iter(tag_sents([s.words for piece in sents for s in piece]))
            sents = [[(s, next(tags)) for s in piece] for piece in sents]
        return list(zip(batch, sents))
    last = None                                     # the line of the last sentence yielded
    for done in parallel.ordered_map(work, _piece_batches(lines), n_threads):
        for (number, line, shift, piece), found in done:
            if found:
                last = number
                yield from found
            elif blank_lines and last != number and shift + len(piece) == len(line):   # a line's last piece
                last = number
                empty = TextSentence(number, line, [], [])
                yield empty if tag_sents is None else (empty, [])


def _token_sentence(number, line, shift, tokens):
    """The :class:`TextSentence` of a sentence of surface tokens (anything
    with ``start``, ``end``, ``form``, ``words``): the words of a multiword
    token that spell it get their own offsets, others the token's."""
    words, offsets, multiword = [], [], []
    for t in tokens:
        a, b = t.start + shift, t.end + shift
        if len(t.words) > 1:
            multiword.append((len(words), len(words) + len(t.words), t.form))
        if len(t.words) > 1 and "".join(t.words) == t.form:
            for w in t.words:
                offsets.append((a, a + len(w)))
                a += len(w)
        else:
            offsets.extend((a, b) for _ in t.words)
        words.extend(t.words)
    return TextSentence(number, line, words, offsets, multiword=multiword)


def sentence_batches(sentences):
    """Lists of ``sentences`` (anything with ``words``) of at most
    BATCH_TOKENS tokens or BATCH_SENTENCES sentences (less where the input
    pauses), read lazily."""
    it = iter(sentences)
    while True:
        batch, n = [], 0
        for s in it:
            batch.append(s)
            n += len(s.words)
            if n >= BATCH_TOKENS or len(batch) >= BATCH_SENTENCES or parallel.input_would_wait():
                break
        if not batch:
            return
        yield batch


def tag_batches(tag_sents, sentences, n_threads=1):
    """(sentence, tags) pairs of ``sentences`` (anything with ``words``),
    in order, tagged by ``tag_sents`` a bounded batch at a time, batches
    on ``n_threads`` threads (:mod:`fasttag.parallel`)."""
    def tagged(batch):
        return list(zip(batch, tag_sents([s.words for s in batch])))
    for pairs in parallel.ordered_map(tagged, sentence_batches(sentences), n_threads):
        yield from pairs


def whole_lines(tagged):
    """``tag_batches``' (sentence, tags) pairs with the pieces of each long
    pretokenized line joined back into one (JSON: one record per input line)."""
    pending = None
    for sent, tags in tagged:
        if pending is not None:
            first, before = pending
            sent = TextSentence(first.line, first.text, first.words + sent.words, first.offsets + sent.offsets,
                                sent.ends_line)
            tags = list(before) + list(tags)
        if sent.ends_line:
            pending = None
            yield sent, tags
        else:
            pending = (sent, tags)
    if pending is not None:
        yield pending


def tag_text(tag_sents, text, tokenizer, method="tag_text"):
    """Sentences of :class:`Token` of the raw ``text`` (a str), cut by
    ``tokenizer`` and tagged by ``tag_sents``, offsets into ``text``;
    ``method``: the public method that a TypeError names."""
    if not isinstance(text, str):
        raise TypeError(f"{method}() takes a str, not {type(text).__name__}"
                        + (" (decode bytes to str first)" if isinstance(text, (bytes, bytearray)) else ""))
    # the tuples made straight from their fields: a Token's own __new__ is a Python call per token
    make = partial(tuple.__new__, Token)
    return [list(map(make, zip(s.words, tags, *zip(*s.offsets)))) if s.words else []
            for s, tags in raw_sentences([text], tokenizer, tag_sents=tag_sents)]
