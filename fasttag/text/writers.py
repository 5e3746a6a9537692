"""Writing sentences back with their tags: CoNLL-U, column files, plain text.

The writers reproduce each sentence's original lines byte for byte, changing
only the tag column, so diffing the output against the input shows exactly
the predicted tags.
"""
from __future__ import annotations

import io
import re

from ..errors import InputError
from .parsers import column_index, conllu_field

_NON_SPACE = re.compile(r"[^ ]+")


def _emit(out, text):
    if isinstance(out, (io.RawIOBase, io.BufferedIOBase)):
        out.write(text.encode("utf-8"))
    else:
        out.write(text)


def _check_tags(sentence, tags, forbidden):
    if tags is None:
        return None
    tags = list(tags)
    if len(tags) != len(sentence.words):
        raise InputError(f"{len(tags)} tags for a sentence of {len(sentence.words)} words "
                         f"(the sentence starting on line {sentence.start_line})")
    try:
        joined = "".join(tags)
    except TypeError:
        joined = None
    if joined is not None and "" not in tags and not any(c in joined for c in forbidden):
        return tags
    for tag in tags:
        if not isinstance(tag, str) or not tag or any(c in tag for c in forbidden):
            raise InputError(f"invalid tag {tag!r} for the sentence starting on line "
                             f"{sentence.start_line}: tags must be non-empty strings "
                             f"without {' or '.join(map(repr, forbidden))}")
    return tags


def write_conllu(sentence, tags, out, column="upos", columns=None):
    """Write ``sentence`` as CoNLL-U: its lines verbatim, except that the
    ``column`` field of each word is replaced by ``tags[i]`` (None: unchanged),
    and each column of ``columns`` ({column: values}) by its values (a new
    MISC keeps the line's ``SpaceAfter``/``SpacesAfter``: the spacing is the
    text's, not a prediction); then a blank line."""
    changes = [] if tags is None else [(conllu_field(column), tags)]
    changes += [(conllu_field(c), v) for c, v in (columns or {}).items()]
    conllu_field(column)
    lines = sentence.lines
    if changes:
        lines = list(lines)
    for col, values in changes:
        values = _check_tags(sentence, values, ("\t", "\n", "\r"))
        for tag, li in zip(values, sentence.word_lines):
            fields = lines[li].split("\t")
            if len(fields) != 10:
                raise ValueError(f"line {sentence.start_line + li} is not a CoNLL-U word line")
            fields[col] = _kept_spacing(fields[col], tag) if col == _MISC and "Space" in fields[col] else tag
            lines[li] = "\t".join(fields)
    _emit(out, "\n".join(lines) + "\n\n")


_MISC = conllu_field("misc")


def _kept_spacing(old, new):
    """MISC ``new`` with the spacing items of MISC ``old``."""
    spacing = [x for x in old.split("|") if x.startswith(("SpaceAfter=", "SpacesAfter="))]
    items = [x for x in new.split("|") if x != "_" and not x.startswith(("SpaceAfter=", "SpacesAfter="))]
    return "|".join(items + spacing) or "_"


def write_conll(sentence, tags, out, mode="append", column=-1):
    """Write ``sentence`` as a column file, then a blank line.  ``mode``
    "append": each word line + separator + its tag; "replace": the ``column``
    (default: last) of each word line replaced by its tag, the rest of the
    line, spacing included, unchanged.  The separator is a tab if the line has
    tabs, else a space.  Non-word lines (comments, ``-DOCSTART-``) are
    reproduced verbatim; ``tags=None`` reproduces every line verbatim."""
    if mode not in ("append", "replace"):
        raise ValueError(f"mode must be 'append' or 'replace', not {mode!r}")
    col = column_index(column, "column")
    if col is None:
        raise ValueError("column must be an integer column index, not None")
    tags = _check_tags(sentence, tags, ("\t", "\n", "\r"))
    lines = sentence.lines
    if tags is not None:
        lines = list(lines)
        for tag, li in zip(tags, sentence.word_lines):
            line = lines[li]
            if "\t" in line:
                if mode == "append":
                    lines[li] = line + "\t" + tag
                else:
                    fields = line.split("\t")
                    fields[_in_range(col, len(fields), sentence, li)] = tag
                    lines[li] = "\t".join(fields)
            else:
                if " " in tag:
                    raise InputError(f"invalid tag {tag!r} for the space-separated line "
                                     f"{sentence.start_line + li}: tags must not contain spaces")
                if mode == "append":
                    lines[li] = line + " " + tag
                else:
                    spans = [m.span() for m in _NON_SPACE.finditer(line)]
                    a, b = spans[_in_range(col, len(spans), sentence, li)]
                    lines[li] = line[:a] + tag + line[b:]
    _emit(out, "\n".join(lines) + "\n\n")


def _in_range(col, n, sentence, li):
    if not -n <= col < n:
        raise ValueError(f"column {col} is out of range for line {sentence.start_line + li} "
                         f"({n} columns)")
    return col


def write_text(sentence, tags, out):
    """Write ``word/TAG word/TAG ...`` (just the words when ``tags`` is None)
    on one line."""
    tags = _check_tags(sentence, tags, ("\n", "\r", "\t", " "))
    if tags is None:
        text = " ".join(sentence.words)
    else:
        text = " ".join(f"{w}/{t}" for w, t in zip(sentence.words, tags))
    _emit(out, text + "\n")
