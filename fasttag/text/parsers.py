"""The three formats fasttag reads, parsed from lines into :class:`Sentence`
objects: CoNLL-U, CoNLL column files and plain text (one sentence a line).

Each :class:`Sentence` keeps its original lines, so that the writers
reproduce the input byte for byte but for the tag column.

**Comment rule for column files.**  A token may itself be ``#`` (CoNLL-2000's
``# # B-NP``), so a line starting with ``#`` is a word if it has the
columns and separator kind (tabs or spaces) of the file's *reference line*
(its first line that starts neither with ``#`` nor ``-DOCSTART-``), else a
comment.  ``-DOCSTART-`` lines are never words.  Comment and ``-DOCSTART-``
lines are kept in the ``lines`` of the sentence that follows them; after the
last sentence they are dropped.
"""
from __future__ import annotations

import itertools
import operator
import re
from dataclasses import dataclass
from typing import Iterator

from ..errors import InputError
from .sources import read_parsed

#: The ten CoNLL-U fields, in order.
CONLLU_FIELDS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")

# A multiword-token range ("3-4") or an empty node ("8.1", "0.1").
CONLLU_RANGE = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
CONLLU_EMPTY = re.compile(r"(?:0|[1-9][0-9]*)\.[1-9][0-9]*")


@dataclass
class Sentence:
    """One sentence as read, with what a writer needs to reproduce it.

    ``words``: the tokens to tag (for CoNLL-U only the syntactic words).
    ``tags``: the chosen tag column per word, or None.  ``rows``: per word,
    all of its fields as read.  ``lines``: the sentence's original lines,
    without terminators, non-word lines included.  ``word_lines``: for each
    word the index into ``lines`` of its line.  ``start_line``: the 1-based
    line number of ``lines[0]`` in the file.
    """

    words: list[str]
    tags: list[str] | None
    rows: list[list[str]]
    lines: list[str]
    word_lines: list[int]
    start_line: int


# --------------------------------------------------------------------------
# CoNLL-U


def conllu_field(column):
    """The field number (0-9) of a CoNLL-U ``column`` given by name or number."""
    if isinstance(column, str):
        key = column.upper()
        if key in CONLLU_FIELDS:
            return CONLLU_FIELDS.index(key)
        raise ValueError(f"unknown CoNLL-U column {column!r}: use 'upos', 'xpos', another field "
                         f"name or a field index 0-9")
    try:
        index = operator.index(column)
    except TypeError:
        raise ValueError(f"CoNLL-U column must be a field name or an index, not {column!r}") from None
    if isinstance(column, bool) or not -10 <= index < 10:
        raise ValueError(f"CoNLL-U column index {column!r} out of range 0-9")
    return index % 10


def read_conllu(source, column="upos") -> Iterator[Sentence]:
    """Sentences of a CoNLL-U file; ``tags`` are the ``column`` field of each
    word: "upos" (default), "xpos", any other field name, or a 0-based field
    index.  Multiword-token lines ("3-4") and empty nodes ("8.1") are kept in
    ``lines`` but are not words.  Malformed lines raise :class:`InputError`
    naming the file and line."""
    col = conllu_field(column)
    return read_parsed(source, parse_conllu, col)


def parse_conllu(lines, name, col):
    buf, words, tags, rows, word_lines = [], [], [], [], []
    start = 0
    last_id = 0
    nonword_line = 0  # line number of a multiword/empty-node line of a block without words yet
    sentences = comments = 0
    for lineno, line in enumerate(lines, 1):
        if not line or line.isspace():
            if words:
                sentences += 1
                yield Sentence(words, tags, rows, buf, word_lines, start)
                buf, words, tags, rows, word_lines = [], [], [], [], []
                last_id = 0
            elif nonword_line:
                raise InputError("sentence has no words (only multiword-token or empty-node lines)",
                                 name, nonword_line)
            elif buf:
                buf.append(line)  # comments waiting for their sentence
            continue
        if not buf:
            start = lineno
        if line[0] == "#":
            comments += 1
            buf.append(line)
            continue
        fields = line.split("\t")
        if len(fields) != 10:
            hint = " (fields must be separated by tabs)" if len(fields) < 10 and " " in line else ""
            raise InputError(f"expected 10 tab-separated fields, found {len(fields)}{hint}",
                             name, lineno)
        if "" in fields:
            field = CONLLU_FIELDS[fields.index("")]
            raise InputError(f"empty {field} field", name, lineno)
        wid = fields[0]
        if wid.isdigit() and wid.isascii() and wid[0] != "0":
            n = int(wid)
            if n <= last_id:
                raise InputError(f"word ID {n} does not follow word ID {last_id} "
                                 f"(IDs must increase within a sentence; missing blank line?)",
                                 name, lineno)
            last_id = n
            word_lines.append(len(buf))
            words.append(fields[1])
            tags.append(fields[col])
            rows.append(fields)
            nonword_line = 0
        else:
            m = CONLLU_RANGE.fullmatch(wid)
            if m is not None:
                if int(m.group(1)) >= int(m.group(2)):
                    raise InputError(f"malformed multiword-token range {wid!r}", name, lineno)
            elif CONLLU_EMPTY.fullmatch(wid) is None:
                raise InputError(f"malformed ID {wid!r} (expected a word number like 3, "
                                 f"a range like 3-4 or an empty node like 3.1)", name, lineno)
            if not words and not nonword_line:
                nonword_line = lineno
        buf.append(line)
    if words:
        yield Sentence(words, tags, rows, buf, word_lines, start)
    elif nonword_line:
        raise InputError("sentence has no words (only multiword-token or empty-node lines)",
                         name, nonword_line)
    elif comments and not sentences:
        raise InputError(COMMENTS_ONLY, name)


#: The error of a CoNLL-U file without a word line: nothing to read, tag or score.
COMMENTS_ONLY = "a CoNLL-U file of comments only: no sentences (no word lines)"


def surface_tokens(sentence):
    """``(form, space_after)`` of each token of a CoNLL-U ``sentence`` as
    written: a multiword token's form ("zum"), not its words ("zu dem");
    empty nodes left out; ``space_after`` False where MISC says
    ``SpaceAfter=No``."""
    tokens, inside = [], 0
    for line in sentence.lines:
        fields = line.split("\t")
        if len(fields) != 10 or line.startswith("#") or "." in fields[0]:
            continue                                    # comments, empty nodes
        first, _, last = fields[0].partition("-")
        if last or int(first) > inside:
            tokens.append((fields[1], "SpaceAfter=No" not in fields[9].split("|")))
            if last:
                inside = int(last)
    return tokens


def sentence_text(sentence):
    """The text of a CoNLL-U ``sentence``: its ``# text =`` comment, else
    its tokens as written, spaced as MISC's ``SpaceAfter=No`` says."""
    for line in sentence.lines:
        if line.startswith("#"):
            key, eq, value = line[1:].partition("=")
            if eq and key.strip() == "text":
                return value.strip()
    tokens = surface_tokens(sentence)
    return "".join(form + (" " if space else "") for form, space in tokens).rstrip()


# --------------------------------------------------------------------------
# CoNLL column files


def split_columns(line):
    """Columns of a column-file line: on tabs if it has any, else on runs of spaces."""
    if "\t" in line:
        return line.split("\t")
    fields = line.split(" ")
    if "" in fields:
        fields = [f for f in fields if f]
    return fields


def column_index(value, what):
    if value is None:
        return None
    try:
        index = operator.index(value)
    except TypeError:
        raise ValueError(f"{what} must be an integer column index, not {value!r}") from None
    if isinstance(value, bool):
        raise ValueError(f"{what} must be an integer column index, not {value!r}")
    return index


def read_conll(source, word_column=0, tag_column=-1) -> Iterator[Sentence]:
    """Sentences of a CoNLL column file (``word POS chunk``, ``word<TAB>tag``,
    ...), split on tabs if the line has one, else on runs of spaces; negative
    column indices count from the end; ``tag_column=None`` gives ``tags=None``.
    See the module docstring for the comment and ``-DOCSTART-`` rules."""
    wi = column_index(word_column, "word_column")
    if wi is None:
        raise ValueError("word_column must be an integer column index, not None")
    ti = column_index(tag_column, "tag_column")
    return read_parsed(source, parse_conll, wi, ti)


def parse_conll(lines, name, word_column, tag_column, names=("word_column", "tag_column")):
    """Sentences of a column file's lines, refused when the word column
    counts the tokens (1, 2, 3 ...), as the ID column of CoNLL-U does."""
    sentences = _parse_columns(lines, name, word_column, tag_column, names)
    head = list(itertools.islice(sentences, 50))
    long = [s.words for s in head if len(s.words) >= 3][:5]
    if long and all(map(_counts_tokens, long)):
        raise InputError(f"column {word_column} numbers the tokens (1, 2, 3 ...), as CoNLL-U's ID column does: "
                         f"the words must be in column {word_column}; a CoNLL-U file is not a column file", name)
    yield from head
    yield from sentences


def _counts_tokens(words):
    ids = [w for w in words if "-" not in w and "." not in w]
    return ids == [str(i) for i in range(1, len(ids) + 1)] and 2 * len(ids) >= len(words)


def _parse_columns(lines, name, word_column, tag_column, names):
    # Find the reference line, buffering the lines before it.
    head = []
    ncols = None
    tabbed = False
    ref_lineno = 0
    for line in lines:
        head.append(line)
        if line and line[0] != "#" and not line.isspace() and not line.startswith("-DOCSTART-"):
            fields = split_columns(line)
            ncols = len(fields)
            tabbed = "\t" in line
            ref_lineno = len(head)
            break
    if ncols is None:
        return  # no word line at all: comments, -DOCSTART- and blank lines only
    wi, ti = word_column, tag_column
    for what, index, option in (("word column", wi, names[0]), ("tag column", ti, names[1])):
        if index is not None and not -ncols <= index < ncols:
            raise InputError(f"{what} {index} is out of range: the file has {ncols} columns "
                             f"(option {option} names the {what}, 0-based)", name, ref_lineno)
    wi %= ncols
    if ti is not None:
        ti %= ncols
        if ti == wi:
            raise InputError(f"the word column and the tag column are both column {wi}: "
                             f"tags would be learned from the words themselves", name, ref_lineno)
    with_tags = ti is not None

    buf, words, tags, rows, word_lines = [], [], [], [], []
    start = 0
    for lineno, line in enumerate(itertools.chain(head, lines), 1):
        if not line or line.isspace():
            if words:
                yield Sentence(words, tags if with_tags else None, rows, buf, word_lines, start)
                buf, words, tags, rows, word_lines = [], [], [], [], []
            elif buf:
                buf.append(line)  # comments / -DOCSTART- waiting for their sentence
            continue
        if not buf:
            start = lineno
        first = line[0]
        if first == "-" and line.startswith("-DOCSTART-"):
            buf.append(line)
            continue
        tab = "\t" in line
        fields = split_columns(line)
        if len(fields) != ncols:
            if first == "#":
                buf.append(line)  # a comment: not shaped like a word line
                continue
            raise InputError(f"expected {ncols} columns (as on line {ref_lineno}), "
                             f"found {len(fields)}", name, lineno)
        if first == "#" and tab != tabbed:
            buf.append(line)
            continue
        if tab and "" in fields:
            raise InputError(f"empty column {fields.index('') + 1} (tab-separated)", name, lineno)
        word_lines.append(len(buf))
        words.append(fields[wi])
        if with_tags:
            tags.append(fields[ti])
        rows.append(fields)
        buf.append(line)
    if words:
        yield Sentence(words, tags if with_tags else None, rows, buf, word_lines, start)


# --------------------------------------------------------------------------
# Plain text


def read_text(source) -> Iterator[Sentence]:
    """One sentence per non-blank line, tokens separated by whitespace
    (``str.split()``); ``tags`` is None."""
    return read_parsed(source, parse_text)


def parse_text(lines, name):
    for lineno, line in enumerate(lines, 1):
        words = line.split()
        if words:
            yield Sentence(words, None, [[w] for w in words], [line], [0] * len(words), lineno)
