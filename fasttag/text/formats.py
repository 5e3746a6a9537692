"""Reading tagging data: the front the tasks, the CLI and users call.

:func:`read` and :func:`read_all` read CoNLL-U, CoNLL column files or plain
text, guessing the format when it is not given.  The sibling modules'
parts are re-exported here.
"""
from __future__ import annotations

import itertools
import os
from typing import Iterator

from ..errors import InputError
from ..parallel import batches as batches_of, input_would_wait
from .conllu import UDDocument, read_document, write_document
from .guessing import guess_format, guess_from_lines, guess_prefix, input_prefix, is_conllu, tagging_format
from .parsers import (CONLLU_FIELDS, Sentence, column_index, conllu_field, parse_conll, parse_conllu,
                      parse_text, read_conll, read_conllu, read_text, sentence_text, surface_tokens)
from .sources import (input_encoding, is_path, is_source, open_lines, read_lines, read_segmented,
                      read_word_list)
from .writers import write_conll, write_conllu, write_text

__all__ = [
    "Sentence",
    "read_conllu",
    "read_conll",
    "read_text",
    "read_lines",
    "read_segmented",
    "read_raw_text",
    "is_conllu",
    "sentence_text",
    "surface_tokens",
    "read_word_list",
    "input_encoding",
    "read",
    "read_all",
    "read_pairs",
    "guess_format",
    "tagging_format",
    "open_tagging_input",
    "parse_lines",
    "write_conllu",
    "write_conll",
    "write_text",
    "CONLLU_FIELDS",
    "FORMATS",
    "UDDocument",
    "read_document",
    "write_document",
]

#: The format names :func:`read` and :func:`guess_format` use.
FORMATS = ("conllu", "conll", "text")


def batches(sentences, size=5000):
    """Lists of up to ``size`` items of an iterable, read lazily, a list
    ended early where the input pauses (:func:`fasttag.parallel.input_would_wait`)."""
    batch = []
    for item in sentences:
        batch.append(item)
        if len(batch) >= size or input_would_wait():
            yield batch
            batch = []
    if batch:
        yield batch


def iter_texts(texts, method, single):
    """``iter(texts)`` for ``method`` (say "segment_lines()"), which takes
    an iterable of str texts; a TypeError naming ``single`` (the method
    for one text) when it is given one text, or not an iterable."""
    if isinstance(texts, (str, bytes, bytearray)):
        raise TypeError(f"{method} takes an iterable of texts, not one {type(texts).__name__}: "
                        f"use {single} for one text")
    try:
        return iter(texts)
    except TypeError:
        raise TypeError(f"{method} takes an iterable of str texts, not {type(texts).__name__}") from None


def not_str(what, value, several=""):
    """The TypeError for a text argument of ``what`` that is not a str
    (``several``: the hint for a list given where one text goes)."""
    hint = ""
    if isinstance(value, (bytes, bytearray)):
        hint = " (decode bytes to str first)"
    elif isinstance(value, (list, tuple)) and several:
        hint = f" ({several})"
    return TypeError(f"{what} takes a str, not {type(value).__name__}{hint}")


def text_batches(texts, what, limit=50_000):
    """Lists of str texts of about ``limit`` characters in all, read
    lazily from an iterable; a text that is not a str is a TypeError
    naming it (``what`` and its 1-based number)."""
    return batches_of(_checked_texts(texts, what), limit, size=len)


def _checked_texts(texts, what):
    for number, text in enumerate(texts, start=1):
        if not isinstance(text, str):
            raise not_str(f"{what} {number}", text)
        yield text


def read_raw_text(source, what="input"):
    """The lines of the raw text of a command that reads raw text, as
    :func:`read_lines` reads them; for CoNLL-U input, the text of each of
    its sentences, one a line."""
    if not is_source(source):
        yield from read_lines(source, what)
        return
    name, lines, close = open_lines(source)
    try:
        prefix, lines = input_prefix(lines)
        if is_conllu(prefix, name):
            yield from map(sentence_text, parse_conllu(lines, name, 3))
        else:
            yield from lines
    finally:
        close()


def open_tagging_input(source, format=None):
    """``(name, format, lines, close)`` of the input of a tagging command:
    its str lines (none lost to the look-ahead) and its format, ``format``
    when given, else :func:`tagging_format` of its first lines."""
    name, lines, close = open_lines(source)
    if format is None:
        try:
            prefix, lines = input_prefix(lines)
            format = tagging_format(prefix, name)
        except BaseException:
            close()
            raise
    return name, format, lines, close


def read(source, format=None, column=None, word_column=0) -> Iterator[Sentence]:
    """Sentences of ``source`` in ``format`` ("conllu", "conll", "text"),
    guessed from the first lines when None.  ``column``: for CoNLL-U "upos"
    (default), "xpos", a field name or index; for column files the 0-based tag
    column (default: the last; negative counts from the end), with
    ``word_column`` the word column; ignored for text."""
    _check_reading(source, format, column, word_column)
    return _read_any(source, format, column, word_column)


def read_all(source, format=None, column=None, word_column=0):
    """``(format, sentences)``: the list of :func:`read`'s sentences and the
    format they were read in, given or guessed (a model keeps it for later input)."""
    _check_reading(source, format, column, word_column)
    name, lines, close = open_lines(source)
    try:
        format, lines = _guessed(format, lines)
        return format, list(parse_lines(lines, name, format, column, word_column))
    finally:
        close()


def read_pairs(data, format=None, column=None, word_column=0, what="data"):
    """(words, tags) pairs, empty sentences dropped, from a path or file
    (read by :func:`read`), from :class:`Sentence` objects, from (words,
    tags) pairs or from NLTK's tagged sentences (lists of (word, tag)
    tuples).  ``what`` names the data in errors."""
    if is_source(data):
        sentences = read(data, format=format, column=column, word_column=word_column)
        return [(s.words, s.tags) for s in sentences if s.words]
    if not hasattr(data, "__iter__"):
        raise TypeError(f"{what} must be a path or a list of sentences, not {type(data).__name__}")
    pairs = []
    for i, item in enumerate(data):
        if isinstance(item, Sentence):
            words, tags = item.words, item.tags
        elif isinstance(item, list) and item and all(isinstance(p, tuple) and len(p) == 2 for p in item):
            words, tags = [w for w, _ in item], [t for _, t in item]     # NLTK: [(word, tag), ...]
        else:
            try:
                words, tags = item
            except (TypeError, ValueError):
                raise TypeError(f"{what}: sentence {i} must be a (words, tags) pair or a list of "
                                f"(word, tag) tuples, not {type(item).__name__}") from None
            if isinstance(words, str) or isinstance(tags, str):
                raise TypeError(f"{what}: sentence {i}: words and tags must be lists of str, not str")
            words, tags = list(words), None if tags is None else list(tags)
        if tags is not None and len(tags) != len(words):
            raise InputError(f"{what}: sentence {i} has {len(words)} words and {len(tags)} tags")
        if words:
            pairs.append((words, tags))
    return pairs


def _check_reading(source, format, column, word_column):
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    if format == "conllu":
        conllu_field("upos" if column is None else column)
    elif format == "conll":
        if isinstance(column, str):
            raise InputError(f"for column files, the tag column must be an integer index, not {column!r}",
                             os.fsdecode(os.fspath(source)) if is_path(source) else None)
        column_index(column, "column")
    if column_index(word_column, "word_column") is None:
        raise ValueError("word_column must be an integer column index, not None")


def _guessed(format, lines):
    """``(format, lines)``: ``format`` guessed from the first ``lines`` when
    None, and lines that still start with those."""
    if format is None:
        prefix = guess_prefix(lines)
        format = guess_from_lines(prefix)
        lines = itertools.chain(prefix, lines)
    return format, lines


def _read_any(source, format, column, word_column):
    name, lines, close = open_lines(source)
    try:
        format, lines = _guessed(format, lines)
        yield from parse_lines(lines, name, format, column, word_column)
    finally:
        close()


def parse_lines(lines, name, format, column=None, word_column=0, tags=True) -> Iterator[Sentence]:
    """Sentences of the str ``lines`` (without line ends) of the input
    ``name`` in ``format``, as :func:`read` reads them; with
    ``tags=False`` a column file has no tag column (input to tag)."""
    if format == "conllu":
        if word_column:
            raise InputError(f"the file is CoNLL-U, whose words are its FORM column: a word column "
                             f"({word_column}) applies to column files only", name)
        parsed = parse_conllu(lines, name, conllu_field("upos" if column is None else column))
    elif format == "conll":
        if isinstance(column, str):
            raise InputError(f"the file looks like a column file: the tag column must be a 0-based index, "
                             f"not {column!r}", name)
        tag_column = None if not tags else -1 if column is None else column_index(column, "column")
        parsed = parse_conll(lines, name, column_index(word_column, "word_column"), tag_column,
                              ("word_column", "column"))
    else:
        parsed = parse_text(lines, name)
    yield from parsed
