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
from collections.abc import Sequence
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
    """Sentences of CoNLL-U ``lines`` read from ``name``, each checked
    against the structural rules of the format (:func:`check_conllu_line`
    and the order of IDs): the one validator of every CoNLL-U reader."""
    buf, words, tags, word_lines = [], [], [], []
    start = 0
    state = _SentenceState()
    sentences = comments = 0
    for lineno, line in enumerate(lines, 1):
        if not line or line.isspace():
            if words:
                state.close(name)
                sentences += 1
                yield Sentence(words, tags, _Rows(buf, word_lines), buf, word_lines, start)
                buf, words, tags, word_lines = [], [], [], []
                state = _SentenceState()
            elif state.nonword_line:
                raise InputError("sentence has no words (only multiword-token or empty-node lines)",
                                 name, state.nonword_line)
            elif buf:
                buf.append(line)  # comments waiting for their sentence
            continue
        if not buf:
            start = lineno
        if line[0] == "#":
            if words or state.nonword_line:
                raise InputError("a comment line among word lines (comments go before a sentence)", name, lineno)
            comments += 1
            buf.append(line)
            continue
        fields = check_conllu_line(line, name, lineno)
        if state.word(fields[0], name, lineno):
            word_lines.append(len(buf))
            words.append(fields[1])
            tags.append(fields[col])
        buf.append(line)
    if words:
        state.close(name)
        yield Sentence(words, tags, _Rows(buf, word_lines), buf, word_lines, start)
    elif state.nonword_line:
        raise InputError("sentence has no words (only multiword-token or empty-node lines)",
                         name, state.nonword_line)
    elif comments and not sentences:
        raise InputError(COMMENTS_ONLY, name)


# Characters that end a line for str.splitlines besides CR and LF: a field
# holding one cannot be rebuilt into a sentence's text, nor its # text line.
_LINE_BREAK = re.compile("[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def check_conllu_line(line, name, lineno):
    """The ten fields of a word, range or empty-node line, or InputError
    naming the rule it breaks: ten tab-separated fields, none empty, a FORM
    that is not only whitespace, no line break character, the spacing
    items of MISC as CoNLL-U defines them."""
    fields = line.split("\t")
    if len(fields) != 10:
        hint = " (fields must be separated by tabs)" if len(fields) < 10 and " " in line else ""
        raise InputError(f"expected 10 tab-separated fields, found {len(fields)}{hint}", name, lineno)
    if "" in fields:
        raise InputError(f"empty {CONLLU_FIELDS[fields.index('')]} field", name, lineno)
    if fields[1].isspace():
        raise InputError("a FORM of only whitespace", name, lineno)
    m = _LINE_BREAK.search(line)
    if m is not None:
        field = CONLLU_FIELDS[line.count("\t", 0, m.start())]
        raise InputError(f"{field} holds the line break character U+{ord(m.group()):04X}, which a CoNLL-U "
                         f"field cannot hold", name, lineno)
    if "Space" in fields[9]:
        split_spacing(fields[9], name, lineno)
    return fields


class _SentenceState:
    """The IDs of one sentence so far: words 1, 2, ... n in order; a range
    a-b starts at the next word and ends before the next range starts and
    by the sentence's end; an empty node N.k follows word N (0 before the
    first) and its k counts 1, 2, ..."""
    __slots__ = ("last_id", "range_end", "range_id", "range_line", "empty", "nonword_line")

    def __init__(self):
        self.last_id = 0          # the last word's ID
        self.range_end = 0        # the last word of the open multiword token, 0 when none is open
        self.range_id = self.range_line = None
        self.empty = 0            # the k of the last empty node after word last_id
        self.nonword_line = 0     # the first range or empty-node line while no word has come

    def word(self, wid, name, lineno):
        """Whether ``wid`` is a word's ID (a range or an empty node is
        not); InputError where it is out of place."""
        if wid.isdigit() and wid.isascii() and wid[0] != "0":
            n = int(wid)
            if n != self.last_id + 1:
                if n <= self.last_id:
                    raise InputError(f"word ID {n} does not follow word ID {self.last_id} (IDs must increase "
                                     f"within a sentence; missing blank line?)", name, lineno)
                raise InputError(f"word ID {n} where {self.last_id + 1} was expected (IDs count 1, 2, 3 ... "
                                 f"in a sentence)", name, lineno)
            self.last_id = n
            self.empty = 0
            if n == self.range_end:
                self.range_end = 0
            return True
        m = CONLLU_RANGE.fullmatch(wid)
        if m is not None:
            a, b = int(m.group(1)), int(m.group(2))
            if a >= b:
                raise InputError(f"malformed multiword-token range {wid!r}", name, lineno)
            if self.range_end:
                raise InputError(f"multiword token {wid} begins inside {self.range_id}", name, lineno)
            if a != self.last_id + 1:
                raise InputError(f"multiword token range {wid} does not start at the next word "
                                 f"({self.last_id + 1})", name, lineno)
            self.range_end, self.range_id, self.range_line = b, wid, lineno
        elif CONLLU_EMPTY.fullmatch(wid) is not None:
            word, k = map(int, wid.split("."))
            if word != self.last_id or k != self.empty + 1:
                want = f"{self.last_id}.{self.empty + 1}"
                raise InputError(f"empty node {wid} where {want} was expected (an empty node N.k follows word "
                                 f"N, k counting 1, 2 ...)", name, lineno)
            self.empty = k
        else:
            raise InputError(f"malformed ID {wid!r} (expected a word number like 3, a range like 3-4 or an "
                             f"empty node like 3.1)", name, lineno)
        if not self.last_id and not self.nonword_line:
            self.nonword_line = lineno
        return False

    def close(self, name):
        """InputError when a multiword token reaches past the last word."""
        if self.range_end:
            raise InputError(f"multiword token {self.range_id} lacks its words (the sentence ends at word "
                             f"{self.last_id})", name, self.range_line)


class _Rows(Sequence):
    """A sentence's word fields, split from its lines when asked: holding
    every field of a long sentence as its own string would cost several
    times the file's size."""
    __slots__ = ("_lines", "_word_lines")

    def __init__(self, lines, word_lines):
        self._lines, self._word_lines = lines, word_lines

    def __len__(self):
        return len(self._word_lines)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._lines[k].split("\t") for k in self._word_lines[i]]
        return self._lines[self._word_lines[i]].split("\t")

    def __eq__(self, other):
        return isinstance(other, (Sequence, list)) and list(self) == list(other)

    def __repr__(self):
        return repr(list(self))


# ---------------------------------------------------------------- MISC spacing

_ESCAPES = {"s": " ", "t": "\t", "n": "\n", "r": "\r", "p": "|", "\\": "\\"}
_SPACES_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)")


def _spaces_after(value, name, lineno):
    def sub(m):
        e = m.group(1)
        if len(e) == 5:
            return chr(int(e[1:], 16))
        if e in _ESCAPES:
            return _ESCAPES[e]
        raise InputError(f"unknown escape \\{e} in SpacesAfter", name, lineno)
    out = _SPACES_ESCAPE.sub(sub, value)
    if not out or not out.isspace():
        raise InputError(f"SpacesAfter={value} is not whitespace", name, lineno)
    return out


def split_spacing(misc, name, lineno):
    """(the spacing after the token, MISC without ``SpaceAfter``/``SpacesAfter``)."""
    if misc == "_" or "Space" not in misc:
        return " ", misc
    if misc == "SpaceAfter=No":
        return "", "_"
    out = None
    rest = []
    for item in misc.split("|"):
        key, _, value = item.partition("=")
        if key == "SpaceAfter":
            if value != "No":
                raise InputError(f"SpaceAfter={value}: the only value CoNLL-U allows is No", name, lineno)
            new = ""
        elif key == "SpacesAfter":
            new = _spaces_after(value, name, lineno)
        else:
            rest.append(item)
            continue
        if out is not None and out != new:
            raise InputError("MISC gives both SpaceAfter and SpacesAfter", name, lineno)
        out = new
    return (" " if out is None else out), ("|".join(rest) or "_")


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
