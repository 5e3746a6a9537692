"""Raw text in: the sentences a word tagger sees in text, with offsets.

Taggers take token lists; people have text.  Text is cut into sentences of
tokens by a trained tokenizer (the bundled ``en-tok`` unless another is
given) or, pretokenized, one sentence per line split at whitespace; every
token keeps its character offsets in its line.  Memory stays bounded: a
long line is cut into the pieces the tokenizer decodes one at a time anyway
(so its tokens are the same), and a pretokenized line of more than
:data:`MAX_TOKENS` tokens is tagged in pieces, written back on one line.
"""
import re
import threading
from collections import deque
from typing import NamedTuple

from . import formats as ftio
from .. import parallel
from ..errors import InputError

MAX_TOKENS = 1000          # a pretokenized line is tagged in pieces of at most this many tokens
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
    ``text``, that line; ``words``; ``offsets``, the (start, end) of
    each word in ``text``; and ``ends_line``, False for a piece of a long
    pretokenized line that more pieces of the same sentence follow (its
    output goes on the same line as theirs)."""
    line: int
    text: str
    words: list
    offsets: list
    ends_line: bool = True


# ---------------------------------------------------------------- tokenizers

_BUNDLED = {}
_LOCK = threading.Lock()


def tokenizer_of(tokenizer):
    """The tokenizer to use: a :class:`fasttag.Tokenizer`, a model path,
    or None for the bundled English tokenizer (loaded once)."""
    from ..store import load
    from ..tasks.tok import Tokenizer
    if tokenizer is None:
        with _LOCK:
            if "en-tok" not in _BUNDLED:
                _BUNDLED["en-tok"] = load("en-tok")
            return _BUNDLED["en-tok"]
    if ftio.is_path(tokenizer):
        model = load(tokenizer)
        if not isinstance(model, Tokenizer):
            kind = getattr(model, "kind", None)
            what = f"a {kind} model" if kind else f"the estimator {type(model).__name__}"
            raise InputError(f"{tokenizer}: {what}, not a tokenizer")
        return model
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"tokenizer must be a fasttag Tokenizer or a model path, not {type(tokenizer).__name__}")
    return tokenizer


# ---------------------------------------------------------------- sentences

def pretokenized_sentences(lines, max_tokens=MAX_TOKENS, blank_lines=False):
    """:class:`TextSentence` of str ``lines``: one per non-blank line (per
    line with ``blank_lines``, a blank one an empty sentence, so that
    output lines match input lines), words split at whitespace; a line of
    more than ``max_tokens`` words is tagged in pieces of ``max_tokens``
    words, all but the last with ``ends_line`` False."""
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


def raw_sentences(lines, tokenizer, n_threads=1):
    """:class:`TextSentence` of str ``lines`` of raw text, each line cut
    into sentences by ``tokenizer`` (on ``n_threads`` threads), lazily and
    in bounded memory."""
    from ..tasks.tok import _cuts
    where = deque()               # (line number, line, shift) of each piece given to the tokenizer

    def pieces():
        for number, line in enumerate(lines, start=1):
            if not isinstance(line, str):
                raise TypeError(f"line {number} is a {type(line).__name__}, not a str")
            for a, b in _cuts(line):
                where.append((number, line, a))
                yield line if b - a == len(line) else line[a:b]

    for sentences in tokenizer.tokenize_lines(pieces(), offsets=True, n_threads=n_threads):
        number, line, shift = where.popleft()
        for s in sentences:
            yield TextSentence(number, line, [w for w, _, _ in s], [(a + shift, b + shift) for _, a, b in s])


def text_sentences(lines, tokenizer=None, pretokenized=False, n_threads=1, blank_lines=False):
    """The sentences of text lines: pretokenized (``blank_lines``: see
    :func:`pretokenized_sentences`), or tokenized by ``tokenizer`` (see
    :func:`tokenizer_of`) on ``n_threads`` threads."""
    if pretokenized:
        return pretokenized_sentences(lines, blank_lines=blank_lines)
    return raw_sentences(lines, tokenizer_of(tokenizer), n_threads)


def sentence_batches(sentences):
    """Lists of ``sentences`` (anything with ``words``) of at most
    BATCH_TOKENS tokens or BATCH_SENTENCES sentences, read lazily."""
    it = iter(sentences)
    while True:
        batch, n = [], 0
        for s in it:
            batch.append(s)
            n += len(s.words)
            if n >= BATCH_TOKENS or len(batch) >= BATCH_SENTENCES:
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
    pretokenized line joined back into one (JSON output: one record per
    input line; the pieces were tagged apart, which the tags still show)."""
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


def tag_text(tag_sents, text, tokenizer=None, method="tag_text"):
    """Sentences of :class:`Token` of the raw ``text`` (a str), tagged by
    ``tag_sents``, offsets into ``text``; ``method``: the public method
    that a TypeError names."""
    if not isinstance(text, str):
        raise TypeError(f"{method}() takes a str, not {type(text).__name__}"
                        + (" (decode bytes to str first)" if isinstance(text, (bytes, bytearray)) else ""))
    sentences = raw_sentences([text], tokenizer_of(tokenizer))
    return [[Token(w, t, a, b) for w, t, (a, b) in zip(s.words, tags, s.offsets)]
            for s, tags in tag_batches(tag_sents, sentences)]


def spans_of(sentence, token_spans):
    """:class:`Span` of a TextSentence from its (label, first token, end
    token) spans."""
    out = []
    for label, i, j in token_spans:
        a, b = sentence.offsets[i][0], sentence.offsets[j - 1][1]
        out.append(Span(label, sentence.text[a:b], a, b))
    return out

