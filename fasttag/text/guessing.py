"""Telling an input's format from its first lines.

:func:`guess_format` picks "conllu", "conll" or "text" for the readers;
:func:`tagging_format` and :func:`is_conllu` tell a tagging command's input
(CoNLL-U or raw text), refusing what is neither beyond doubt.  Heuristics that
look only at a prefix of the input, so reading stays streaming.
"""
from __future__ import annotations

import itertools
import re

from .. import parallel
from ..errors import InputError
from .parsers import COMMENTS_ONLY, CONLLU_EMPTY, CONLLU_RANGE, split_columns
from .sources import is_blank, is_path, open_lines


_GUESS_CONTENT_LINES = 20
_GUESS_MAX_LINES = 2000


def guess_prefix(lines):
    """Read lines until enough content lines are seen to guess; return them."""
    prefix = []
    content = 0
    for line in lines:
        prefix.append(line)
        if line and line[0] != "#" and not line.isspace():
            content += 1
            if content >= _GUESS_CONTENT_LINES:
                break
        if len(prefix) >= _GUESS_MAX_LINES:
            break
    return prefix


def guess_from_lines(prefix):
    # The reference line: the first non-blank line not starting with "#".
    ref = next((line for line in prefix if not is_blank(line) and line[0] != "#"), None)
    if ref is None:
        return "conllu" if prefix and any(line[:1] == "#" for line in prefix) else "text"
    if ref.startswith("-DOCSTART-"):
        return "conll"
    if "\t" in ref:
        fields = ref.split("\t")
        if len(fields) == 10 and (fields[0].isdigit() or CONLLU_RANGE.fullmatch(fields[0])
                                  or CONLLU_EMPTY.fullmatch(fields[0])):
            return "conllu"
        return "conll"
    n = len(split_columns(ref))
    if n < 2:
        return "text"
    # space-separated: a column file if every content line has n columns, in
    # 5 lines or more, or a finished block of 2 or more
    content = 0
    block = 0
    complete_block = False
    for line in prefix:
        if is_blank(line):
            complete_block = complete_block or block >= 2
            block = 0
            continue
        count = len(split_columns(line))
        if line[0] == "#" and (count != n or "\t" in line):
            continue  # a comment
        if line.startswith("-DOCSTART-"):
            continue
        if count != n:
            return "text"
        content += 1
        block += 1
    return "conll" if content >= 5 or complete_block else "text"


def guess_format(source) -> str:
    """Guess "conllu", "conll" or "text" from the first non-blank, non-comment
    lines (a heuristic: pass ``format=`` explicitly when it matters).  A
    seekable file object is rewound to where it was; a non-seekable one (a
    pipe) raises ValueError (:func:`read` guesses without losing lines)."""
    if is_path(source):
        name, lines, close = open_lines(source)
        try:
            return guess_from_lines(guess_prefix(lines))
        finally:
            close()
    try:
        seekable = source.seekable()
    except (AttributeError, OSError, ValueError):
        seekable = False
    if not seekable:
        raise ValueError("guess_format needs a path or a seekable file object; "
                         "read(source) guesses the format of a stream itself")
    pos = source.tell()
    try:
        name, lines, close = open_lines(source)
        return guess_from_lines(guess_prefix(lines))
    finally:
        source.seek(pos)


_TAGGING_PREFIX_LINES = 20


def _is_conllu_line(line):
    fields = line.split("\t")
    return len(fields) == 10 and bool(fields[0].isascii() and fields[0].isdigit() and fields[0][0] != "0"
                                      or CONLLU_RANGE.fullmatch(fields[0]) or CONLLU_EMPTY.fullmatch(fields[0]))


def tagging_format(prefix, name=None):
    """The format of a tagging command's input from its first lines
    (``prefix``): "conllu" when :func:`is_conllu`, else "raw".  Column files
    are never guessed: one beyond doubt is an InputError asking for a format."""
    if is_conllu(prefix, name, "read it as text with option format='text', or as CoNLL-U with "
                               "option format='conllu'"):
        return "conllu"
    content = [line for line in prefix if not is_blank(line) and line[0] != "#"]
    if content and content[0].startswith("-DOCSTART-"):
        raise InputError("this looks like a CoNLL column file (it opens with -DOCSTART-): tag it "
                         "with option format='conll', or as text with option format='text'", name)
    columns = _column_layout(prefix)
    if columns:
        raise InputError(f"this looks like a column file ({columns} columns on every line, sentences separated "
                         f"by blank lines): tag it with option format='conll', or pass option format='raw' to "
                         f"read it as raw text", name)
    return "raw"


# the comments CoNLL-U files open with (raw text may open with a "# Title" line)
_CONLLU_COMMENT = re.compile(r"#\s*(?:sent_id|text|newdoc|newpar)\b")


def is_conllu(prefix, name=None, way_out=""):
    """Whether an input whose first lines are ``prefix`` is unmistakably
    CoNLL-U: it has a word line, and every non-comment line is one.  An
    InputError when only some are (a damaged CoNLL-U file is not text;
    ``way_out``: how to read it anyway), or for CoNLL-U comments only."""
    numbered = [(i, line) for i, line in enumerate(prefix, start=1) if not is_blank(line) and line[0] != "#"]
    conllu = [_is_conllu_line(line) for _, line in numbered]
    if any(conllu) and not all(conllu):
        first = next(i for (i, _), c in zip(numbered, conllu) if c)
        bad = next(i for (i, _), c in zip(numbered, conllu) if not c)
        raise InputError(f"line {first} is a CoNLL-U word line but line {bad} is not"
                         + (f": {way_out}" if way_out else ": a damaged CoNLL-U file?"), name)
    if not numbered and any(_CONLLU_COMMENT.match(line) for line in prefix):
        raise InputError(COMMENTS_ONLY, name)
    return bool(numbered) and all(conllu)


def input_prefix(lines):
    """``(prefix, lines)``: the first lines of an input, enough to tell its
    format (20, or up to its first content line; fewer where the input
    pauses after a content line), and all its lines."""
    prefix = []
    for line in lines:
        prefix.append(line)
        if (len(prefix) >= _TAGGING_PREFIX_LINES or parallel.input_would_wait()) \
                and any(not is_blank(x) and x[0] != "#" for x in prefix):
            break           # enough lines, or a content line and the input pauses (a pipe given a line at a time)
    return prefix, itertools.chain(prefix, lines)


def _column_layout(prefix):
    """The number of columns when the lines ``prefix`` look like a column
    file beyond doubt (5 lines or more of the same 2+ columns, in finished
    blocks of 2 or more); else 0."""
    counts = [len(split_columns(x)) for x in prefix if not is_blank(x) and x[0] != "#"]
    if len(counts) < 5 or counts[0] < 2 or len(set(counts)) != 1:
        return 0
    blocks, block = [], 0
    for line in prefix:
        if is_blank(line):
            if block:
                blocks.append(block)
            block = 0
        elif line[0] != "#":
            block += 1
    return counts[0] if blocks and min(blocks) >= 2 else 0
