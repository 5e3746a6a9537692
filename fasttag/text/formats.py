"""Reading and writing tagging data: CoNLL-U, CoNLL column files, plain text.

Why this module looks the way it does:

* **Streaming.**  Readers are generators that read one line at a time, so a
  corpus of any size is tagged in constant memory (only the current sentence
  is held).  Files are opened in binary and every line is decoded as UTF-8
  strictly, so a bad byte is reported as ``file:line: ...``
  (:class:`fasttag.errors.InputError`) instead of a bare
  ``UnicodeDecodeError`` far from its cause.  A UTF-8 byte order mark at the
  start and CRLF line endings are accepted and stripped.
* **Verbatim writing.**  Each :class:`Sentence` keeps its original lines
  (comments, ``-DOCSTART-`` lines, multiword-token and empty-node lines
  included) and, per word, the index of its line.  The writers reproduce
  those lines byte for byte, changing only the tag column, so tagging a file
  and diffing it against the input shows exactly the predicted tags.  Writing
  the gold tags back reproduces the input exactly (with LF line endings and no
  BOM), provided sentences are separated by single blank lines and the file
  ends with one.

``source`` is a path (``str``, ``bytes`` or ``os.PathLike``) or an open file
object, binary or text.  A text stream with an underlying binary buffer (such
as ``sys.stdin`` or a file from ``open(path)``) is read through that buffer,
line by line, strictly: ``sys.stdin`` as UTF-8 whatever the locale says,
another text stream in its declared encoding (paths and binary streams are
UTF-8 unless :func:`input_encoding` says otherwise); if it is seekable the
buffer is first moved to the text layer's position, so lines the caller
already read with ``readline()`` are skipped and none are lost.  (Do not
``readline()`` from a non-seekable text stream such as a piped ``sys.stdin``
before handing it over: its read-ahead cannot be recovered.)  A text stream
without a buffer (``io.StringIO``), or one whose position is unknowable
because it was iterated with ``next()``, is read as text.  Paths are opened
lazily, when the first sentence is requested, and closed when the reader is
exhausted or closed; file objects are never closed.

**Comment rule for column files.**  A CoNLL token may itself be ``#``
(CoNLL-2000 has the line ``# # B-NP``), while the Brown corpus has comment
lines such as ``# source = ca01 (news)``.  The reader therefore fixes the
file's *reference line*: its first non-blank line that starts neither with
``#`` nor with ``-DOCSTART-`` (lines before it are buffered, so this stays
streaming).  A line starting with ``#`` is a **word** if it has the reference
line's number of columns and the same separator kind (tabs or spaces);
otherwise it is a **comment**.  So ``# # B-NP`` in a 3-column space-separated
file is a word, and ``# source = ca01 (news)`` in a ``word<TAB>tag`` file is a
comment (no tab, 5 columns).  The one ambiguous case, a ``#`` line that happens
to match the reference line's shape, is read as a word.  Lines starting with
``-DOCSTART-`` are never words.  Comment and ``-DOCSTART-`` lines are kept in
the ``lines`` of the sentence that follows them (with any blank lines between
them and it, so writers reproduce them); such lines at the end of a file,
after the last sentence, are dropped.
"""
from __future__ import annotations

import codecs
import contextlib
import contextvars
import io
import itertools
import operator
import os
import re
import sys
from dataclasses import dataclass
from typing import Iterator

from ..errors import InputError
from ..parallel import batches as batches_of

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
    "guess_format",
    "tagging_format",
    "open_tagging_input",
    "parse_lines",
    "write_conllu",
    "write_conll",
    "write_text",
    "CONLLU_FIELDS",
    "FORMATS",
]

#: The ten CoNLL-U fields, in order.
CONLLU_FIELDS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")

#: The format names :func:`read` and :func:`guess_format` use.
FORMATS = ("conllu", "conll", "text")

# A multiword-token range ("3-4") or an empty node ("8.1", "0.1").
_CONLLU_RANGE = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
_CONLLU_EMPTY = re.compile(r"(?:0|[1-9][0-9]*)\.[1-9][0-9]*")
_NON_SPACE = re.compile(r"[^ ]+")


@dataclass
class Sentence:
    """One sentence as read, with what a writer needs to reproduce it.

    ``words``: the tokens to tag (for CoNLL-U only the syntactic words, not
    multiword-token ranges nor empty nodes).  ``tags``: the chosen tag column
    per word, or None when the input has no tags.  ``rows``: per word, all of
    its fields as read.  ``lines``: the sentence's original lines, without
    line terminators, in order (comments, ``-DOCSTART-``, multiword and
    empty-node lines included; blank lines only between carried-over
    non-word lines and the sentence).  ``word_lines``: for each word the
    index into ``lines`` of its line.  ``start_line``: the 1-based line number
    of ``lines[0]`` in the file.
    """

    words: list[str]
    tags: list[str] | None
    rows: list[list[str]]
    lines: list[str]
    word_lines: list[int]
    start_line: int


# --------------------------------------------------------------------------
# Sources


def is_path(source):
    """Whether ``source`` names a file (str, bytes or os.PathLike): the one
    test of "is this a path?" in fasttag."""
    return isinstance(source, (str, bytes)) or hasattr(source, "__fspath__")


def is_source(source):
    """Whether ``source`` is a path or an open file (not Python objects)."""
    return is_path(source) or hasattr(source, "read")


def _stream_name(f):
    if f is sys.stdin or f is getattr(sys.stdin, "buffer", None):
        return "<stdin>"
    name = getattr(f, "name", None)
    if isinstance(name, bytes):
        return os.fsdecode(name)
    if isinstance(name, str) and name:
        return name
    return "<input>"


_ENCODING = contextvars.ContextVar("fasttag_input_encoding", default=None)


@contextlib.contextmanager
def input_encoding(encoding):
    """Within the ``with`` block, files and binary streams are read in
    ``encoding`` ("gbk", "gb18030", "big5", "utf-16" ...) instead of UTF-8,
    still strictly: a bad byte is an InputError naming the file and line.
    The command line's ``--encoding``.  (A text stream opened with an
    encoding, ``open(path, encoding="gbk")``, is read in that encoding
    anyway.)"""
    name = check_encoding(encoding)
    token = _ENCODING.set(name)
    try:
        yield
    finally:
        _ENCODING.reset(token)


def check_encoding(encoding):
    """The codec name of ``encoding``; ValueError for an unknown one or one
    that is not a text encoding."""
    if not isinstance(encoding, str):
        raise TypeError(f"an encoding is a str, not {type(encoding).__name__}")
    try:
        info = codecs.lookup(encoding)
    except LookupError:
        raise ValueError(f"unknown encoding {encoding!r}") from None
    if not getattr(info, "_is_text_encoding", True):
        raise ValueError(f"{encoding!r} is not a text encoding")
    return info.name


def _ascii_lines(encoding):
    """Whether ``encoding`` writes a newline as the byte 0x0A that no other
    character contains, so lines can be split before decoding."""
    return encoding not in ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be") \
        and "\n\r".encode(encoding) == b"\n\r"


def _line(line, lineno, name):
    """A line without its terminator (nor, on line 1, a BOM); a carriage
    return left inside it is an InputError."""
    if line.endswith("\n"):
        line = line[:-2] if line.endswith("\r\n") else line[:-1]
    if lineno == 1 and line.startswith("\ufeff"):
        line = line[1:]
    if "\r" in line:
        raise InputError("stray carriage return inside a line", name, lineno)
    return line


def _decode_binary(f, name, encoding="utf-8"):
    """Lines of a binary stream, decoded strictly (UTF-8 unless told
    otherwise), without terminators."""
    if encoding not in ("utf-8", None) and not _ascii_lines(encoding):
        yield from _strip_text(io.TextIOWrapper(f, encoding=encoding, errors="strict", newline=""), name)
        return
    utf8 = encoding in ("utf-8", None)
    encoding = encoding or "utf-8"
    for lineno, raw in enumerate(f, 1):
        try:
            line = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            kind = _binary_kind(raw) if lineno == 1 else None
            if kind:
                raise InputError(kind, name, lineno) from None
            err = InputError(
                f"invalid {_codec_text(encoding)}: byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of the line",
                name, lineno)
            err.undecodable = True
            raise err from None
        if utf8 and "\x00" in line:        # never in text: UTF-16 without a byte order mark, or a binary file
            raise InputError("a NUL byte in the line: not text (UTF-16 without a byte order mark? name it: "
                             "option encoding='utf-16')", name, lineno)
        yield _line(line, lineno, name)


def _binary_kind(first_line):
    """What a first line that is not UTF-8 says the file is, when its
    opening bytes tell: gzip, or UTF-16 or UTF-32 with a byte order mark."""
    if first_line.startswith(b"\x1f\x8b"):
        return "a gzip-compressed file: decompress it first (zcat FILE | fasttag ... -)"
    if first_line.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16 or UTF-32 (it opens with a byte order mark): name it, e.g. option encoding='utf-16'"
    return None


def _codec_text(encoding):
    return {"utf-8": "UTF-8", "gbk": "GBK", "gb18030": "GB18030", "big5": "Big5"}.get(encoding, encoding)


def _strip_text(f, name):
    """Lines of a text stream read as text, without terminators."""
    lineno = 0
    try:
        for line in f:
            lineno += 1
            if not isinstance(line, str):
                raise TypeError(f"{name}: the stream yielded {type(line).__name__}, not str")
            yield _line(line, lineno, name)
    except UnicodeError as exc:
        # The text layer decodes ahead, so the bad byte is on this line or a
        # later one.  A plain UnicodeError is the codec's own complaint (UTF-16
        # without a byte order mark) and names no byte.
        encoding = getattr(exc, "encoding", None) or getattr(f, "encoding", "the encoding")
        reason = getattr(exc, "reason", None) or str(exc)
        err = InputError(f"cannot decode the input as {encoding} ({reason}) "
                         f"on this line or soon after", name, lineno + 1)
        err.undecodable = True
        raise err from None


def _open_lines(source):
    """(name, line iterator, close) for a path or a file object.  Paths and
    binary streams are decoded in the :func:`input_encoding` (UTF-8 by
    default); text streams other than standard input in their own."""
    encoding = _ENCODING.get()
    if is_path(source):
        path = os.fspath(source)
        name = os.fsdecode(path)
        f = open(path, "rb")
        return name, _decode_binary(f, name, encoding), f.close
    if not hasattr(source, "read") and not hasattr(source, "__iter__"):
        raise TypeError(f"expected a path or a file object, not {type(source).__name__}")
    name = _stream_name(source)
    if isinstance(source, io.TextIOBase):
        buffer = getattr(source, "buffer", None)
        if buffer is not None:
            # Read through the binary buffer, to decode (and report errors)
            # line by line.  On a seekable stream, first move the buffer to the
            # text layer's position, so text the wrapper read ahead is not lost.
            # Standard input is UTF-8 whatever the locale says; another text
            # stream was opened with an encoding on purpose.
            if encoding is None and source is not sys.stdin:
                try:
                    encoding = check_encoding(source.encoding)
                except (TypeError, ValueError):
                    encoding = None
            try:
                if source.seekable():
                    source.seek(source.tell())
                return name, _decode_binary(buffer, name, encoding), _no_op
            except (OSError, ValueError):
                pass  # tell() is disabled after next(f): stay on the text layer
        return name, _strip_text(source, name), _no_op
    if isinstance(source, (io.RawIOBase, io.BufferedIOBase)):
        return name, _decode_binary(source, name, encoding), _no_op
    # Some other file-like object: look at what its lines are.
    it = iter(source)
    first = next(it, None)
    if first is None:
        return name, iter(()), _no_op
    rest = itertools.chain([first], it)
    if isinstance(first, bytes):
        return name, _decode_binary(rest, name, encoding), _no_op
    return name, _strip_text(rest, name), _no_op


def _no_op():
    pass


def _reader(source, parse, *args):
    name, lines, close = _open_lines(source)
    try:
        yield from parse(lines, name, *args)
    finally:
        close()


def _is_blank(line):
    return not line or line.isspace()


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
    return _reader(source, _parse_conllu, col)


def _parse_conllu(lines, name, col):
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
            m = _CONLLU_RANGE.fullmatch(wid)
            if m is not None:
                if int(m.group(1)) >= int(m.group(2)):
                    raise InputError(f"malformed multiword-token range {wid!r}", name, lineno)
            elif _CONLLU_EMPTY.fullmatch(wid) is None:
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


def _split_columns(line):
    """Columns of a column-file line: on tabs if it has any, else on runs of spaces."""
    if "\t" in line:
        return line.split("\t")
    fields = line.split(" ")
    if "" in fields:
        fields = [f for f in fields if f]
    return fields


def _column_index(value, what):
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
    ...).  Columns are split on tabs if the line has a tab, else on runs of
    spaces; negative column indices count from the end; ``tag_column=None``
    gives ``tags=None``.  Every word line must have the column count of the
    file's first word line.  See the module docstring for the comment and
    ``-DOCSTART-`` rules."""
    wi = _column_index(word_column, "word_column")
    if wi is None:
        raise ValueError("word_column must be an integer column index, not None")
    ti = _column_index(tag_column, "tag_column")
    return _reader(source, _parse_conll, wi, ti)


def _parse_conll(lines, name, word_column, tag_column, names=("word_column", "tag_column")):
    """Sentences of a column file's lines, refused when the word column
    counts the tokens: the first sentences of three tokens or more read
    1, 2, 3 ... (multiword ranges and empty nodes aside), as the ID column
    of CoNLL-U and CoNLL-X does."""
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
            fields = _split_columns(line)
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
        fields = _split_columns(line)
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
    return _reader(source, _parse_text)


def _parse_text(lines, name):
    for lineno, line in enumerate(lines, 1):
        words = line.split()
        if words:
            yield Sentence(words, None, [[w] for w in words], [line], [0] * len(words), lineno)


def read_lines(source, what="input") -> Iterator[str]:
    """The lines of a text source, without line ends: a path or file
    object (UTF-8, BOM and CRLF accepted, a bad byte an InputError naming
    the line), or an iterable of str lines (a non-str line is a TypeError
    naming it).  The one way fasttag reads plain text."""
    if is_source(source):
        name, lines, close = _open_lines(source)
        try:
            yield from lines
        finally:
            close()
        return
    if isinstance(source, (bytes, bytearray)) or not hasattr(source, "__iter__"):
        raise TypeError(f"{what} must be a path, a file or str lines, not {type(source).__name__}")
    for number, line in enumerate(source, start=1):
        if not isinstance(line, str):
            raise TypeError(f"{what}: line {number} is a {type(line).__name__}, not a str")
        if line.endswith("\n"):
            line = line[:-2] if line.endswith("\r\n") else line[:-1]
        yield line[1:] if number == 1 and line.startswith("\ufeff") else line


def read_segmented(source, what="input") -> list:
    """Word lists of a segmented text (one sentence per line, words
    separated by whitespace; an empty line gives []).  Equal words share
    one str object: a corpus has far fewer distinct words than words
    (PD 1998: 55k of 1.8M), 8 bytes a word instead of about 80."""
    shared = {}
    one = shared.setdefault
    return [[one(w, w) for w in line.split()] for line in read_lines(source, what)]


def read_word_list(source) -> set:
    """The words of a word list: one per line, stripped, blanks skipped."""
    return {w for w in (line.strip() for line in read_lines(source, "the word list")) if w}


def batches(sentences, size=5000):
    """Lists of up to ``size`` items of an iterable, read lazily."""
    iterator = iter(sentences)
    while True:
        batch = list(itertools.islice(iterator, size))
        if not batch:
            return
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


# --------------------------------------------------------------------------
# Format guessing and dispatch

_GUESS_CONTENT_LINES = 20
_GUESS_MAX_LINES = 2000


def _guess_prefix(lines):
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


def _guess_from_lines(prefix):
    # The reference line: the first non-blank line not starting with "#".
    ref = next((line for line in prefix if not _is_blank(line) and line[0] != "#"), None)
    if ref is None:
        return "conllu" if prefix and any(line[:1] == "#" for line in prefix) else "text"
    if ref.startswith("-DOCSTART-"):
        return "conll"
    if "\t" in ref:
        fields = ref.split("\t")
        if len(fields) == 10 and (fields[0].isdigit() or _CONLLU_RANGE.fullmatch(fields[0])
                                  or _CONLLU_EMPTY.fullmatch(fields[0])):
            return "conllu"
        return "conll"
    n = len(_split_columns(ref))
    if n < 2:
        return "text"
    # Space-separated: a column file if every content line (a "#" line of
    # the reference line's shape, like "# # B-NP", counts as one) has n
    # columns, and there is enough evidence: 5 lines, or a finished
    # blank-line-terminated block of 2 or more lines.
    content = 0
    block = 0
    complete_block = False
    for line in prefix:
        if _is_blank(line):
            complete_block = complete_block or block >= 2
            block = 0
            continue
        count = len(_split_columns(line))
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
    lines.  CoNLL-U: the first such line has 10 tab-separated fields and a
    CoNLL-U ID.  CoNLL: it starts with ``-DOCSTART-`` or has a tab, or all the
    word lines looked at (up to 20) have the same number (2 or more) of
    space-separated columns, and there are at least 5 of them or a
    blank-line-terminated block of 2 or more.  Text otherwise.  A heuristic:
    pass ``format=`` explicitly when it matters.  A seekable file object is rewound to where it
    was; a non-seekable one (a pipe) cannot be peeked at and raises
    ValueError (:func:`read` guesses without losing lines)."""
    if is_path(source):
        name, lines, close = _open_lines(source)
        try:
            return _guess_from_lines(_guess_prefix(lines))
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
        name, lines, close = _open_lines(source)
        return _guess_from_lines(_guess_prefix(lines))
    finally:
        source.seek(pos)


_TAGGING_PREFIX_LINES = 20


def _is_conllu_line(line):
    fields = line.split("\t")
    return len(fields) == 10 and bool(fields[0].isascii() and fields[0].isdigit() and fields[0][0] != "0"
                                      or _CONLLU_RANGE.fullmatch(fields[0]) or _CONLLU_EMPTY.fullmatch(fields[0]))


def tagging_format(prefix, name=None):
    """The format of a tagging command's input from its first lines
    (``prefix``): "conllu" when it is unmistakably CoNLL-U, that is when
    there is a word line and every non-blank line not starting with "#"
    has exactly 10 tab-separated fields and an integer, range (``1-2``) or
    decimal (``8.1``) ID; "raw" (text) when none does; an InputError when
    some do and some do not (a damaged CoNLL-U file is not text), or for
    CoNLL-U comments without a word line (:func:`is_conllu`, the test
    ``segment`` and ``tokenize`` share).  Column files are never
    guessed: a file opening with ``-DOCSTART-``, or that looks like one
    beyond doubt (:func:`_column_layout`), is an InputError asking for
    ``--format conll`` (or ``--format raw``)."""
    if is_conllu(prefix, name, "read it as text with option format='text', or as CoNLL-U with "
                               "option format='conllu'"):
        return "conllu"
    content = [line for line in prefix if not _is_blank(line) and line[0] != "#"]
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
    CoNLL-U: it has a word line, and every non-blank line not starting
    with "#" has exactly 10 tab-separated fields and an integer, range
    (``1-2``) or decimal (``8.1``) ID.  The one test of the commands that
    read raw text or CoNLL-U (tag, segment, tokenize).  An InputError when
    some lines are CoNLL-U word lines and some are not (a damaged CoNLL-U
    file is not text; ``way_out``: how to read it anyway), and for a
    CoNLL-U file of comments only (``# sent_id``, ``# text`` ...)."""
    numbered = [(i, line) for i, line in enumerate(prefix, start=1) if not _is_blank(line) and line[0] != "#"]
    conllu = [_is_conllu_line(line) for _, line in numbered]
    if any(conllu) and not all(conllu):
        first = next(i for (i, _), c in zip(numbered, conllu) if c)
        bad = next(i for (i, _), c in zip(numbered, conllu) if not c)
        raise InputError(f"line {first} is a CoNLL-U word line but line {bad} is not"
                         + (f": {way_out}" if way_out else ": a damaged CoNLL-U file?"), name)
    if not numbered and any(_CONLLU_COMMENT.match(line) for line in prefix):
        raise InputError(COMMENTS_ONLY, name)
    return bool(numbered) and all(conllu)


def _input_prefix(lines):
    """``(prefix, lines)``: the first lines of an input, enough to tell its
    format (20, or up to its first content line), and all its lines."""
    prefix = []
    for line in lines:
        prefix.append(line)
        if len(prefix) >= _TAGGING_PREFIX_LINES and any(not _is_blank(x) and x[0] != "#" for x in prefix):
            break
    return prefix, itertools.chain(prefix, lines)


def read_raw_text(source, what="input"):
    """The lines of the raw text of a command that reads raw text
    (segment, tokenize), as :func:`read_lines` reads them; when the input
    is CoNLL-U (:func:`is_conllu`, as ``fasttag tag`` tells), the text of
    each of its sentences (:func:`sentence_text`), one a line."""
    if not is_source(source):
        yield from read_lines(source, what)
        return
    name, lines, close = _open_lines(source)
    try:
        prefix, lines = _input_prefix(lines)
        if is_conllu(prefix, name):
            yield from map(sentence_text, _parse_conllu(lines, name, 3))
        else:
            yield from lines
    finally:
        close()


def _column_layout(prefix):
    """The number of columns when the lines ``prefix`` look like a column
    file beyond doubt: at least 5 lines, each with the same number (2 or
    more) of whitespace-separated columns, in blank-line-separated blocks
    of 2 or more, one of them finished; else 0.  Raw text is never read
    as columns, but is refused as raw text then."""
    counts = [len(_split_columns(x)) for x in prefix if not _is_blank(x) and x[0] != "#"]
    if len(counts) < 5 or counts[0] < 2 or len(set(counts)) != 1:
        return 0
    blocks, block = [], 0
    for line in prefix:
        if _is_blank(line):
            if block:
                blocks.append(block)
            block = 0
        elif line[0] != "#":
            block += 1
    return counts[0] if blocks and min(blocks) >= 2 else 0


def open_tagging_input(source, format=None):
    """``(name, format, lines, close)`` of the input of a tagging command:
    its str lines (none lost to the look-ahead) and its format, ``format``
    when given, else :func:`tagging_format` of its first lines."""
    name, lines, close = _open_lines(source)
    if format is None:
        try:
            prefix, lines = _input_prefix(lines)
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
    """``(format, sentences)``: the list of :func:`read`'s sentences and
    the format they were read in, given or guessed (a model trained on a
    pipe reads later input, and fills CoNLL-U columns, as it was trained)."""
    _check_reading(source, format, column, word_column)
    name, lines, close = _open_lines(source)
    try:
        format, lines = _guessed(format, lines)
        return format, list(parse_lines(lines, name, format, column, word_column))
    finally:
        close()


def _check_reading(source, format, column, word_column):
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    if format == "conllu":
        conllu_field("upos" if column is None else column)
    elif format == "conll":
        if isinstance(column, str):
            raise InputError(f"for column files, the tag column must be an integer index, not {column!r}",
                             os.fsdecode(os.fspath(source)) if is_path(source) else None)
        _column_index(column, "column")
    if _column_index(word_column, "word_column") is None:
        raise ValueError("word_column must be an integer column index, not None")


def _guessed(format, lines):
    """``(format, lines)``: ``format`` guessed from the first ``lines`` when
    None, and lines that still start with those."""
    if format is None:
        prefix = _guess_prefix(lines)
        format = _guess_from_lines(prefix)
        lines = itertools.chain(prefix, lines)
    return format, lines


def _read_any(source, format, column, word_column):
    name, lines, close = _open_lines(source)
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
        parsed = _parse_conllu(lines, name, conllu_field("upos" if column is None else column))
    elif format == "conll":
        if isinstance(column, str):
            raise InputError(f"the file looks like a column file: the tag column must be a 0-based index, "
                             f"not {column!r}", name)
        tag_column = None if not tags else -1 if column is None else _column_index(column, "column")
        parsed = _parse_conll(lines, name, _column_index(word_column, "word_column"), tag_column,
                              ("word_column", "column"))
    else:
        parsed = _parse_text(lines, name)
    yield from parsed


# --------------------------------------------------------------------------
# Writers


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


def write_conllu(sentence, tags, out, column="upos"):
    """Write ``sentence`` as CoNLL-U: its lines verbatim, except that the
    ``column`` field of each word is replaced by ``tags[i]`` (None: unchanged),
    then a blank line."""
    col = conllu_field(column)
    tags = _check_tags(sentence, tags, ("\t", "\n", "\r"))
    lines = sentence.lines
    if tags is not None:
        lines = list(lines)
        for tag, li in zip(tags, sentence.word_lines):
            fields = lines[li].split("\t")
            if len(fields) != 10:
                raise ValueError(f"line {sentence.start_line + li} is not a CoNLL-U word line")
            fields[col] = tag
            lines[li] = "\t".join(fields)
    _emit(out, "\n".join(lines) + "\n\n")


def write_conll(sentence, tags, out, mode="append", column=-1):
    """Write ``sentence`` as a column file, then a blank line.  ``mode``
    "append": each word line + separator + its tag; "replace": the ``column``
    (default: last) of each word line replaced by its tag, the rest of the
    line, spacing included, unchanged.  The separator is a tab if the line has
    tabs, else a space.  Non-word lines (comments, ``-DOCSTART-``) are
    reproduced verbatim; ``tags=None`` reproduces every line verbatim."""
    if mode not in ("append", "replace"):
        raise ValueError(f"mode must be 'append' or 'replace', not {mode!r}")
    col = _column_index(column, "column")
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
