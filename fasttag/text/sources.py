"""Where tagging data comes from: paths and file objects opened as lines of text.

Files are read in binary, a line at a time, each line decoded strictly (UTF-8
unless :func:`input_encoding` says otherwise), so a corpus streams in
constant memory and a bad byte is an InputError naming ``file:line``.  A BOM
and CRLF line endings are stripped.  A text stream with a binary buffer is
read through it (``sys.stdin`` as UTF-8 whatever the locale); a seekable one
from the text layer's position, so lines already read are not lost.  File
objects are never closed.

A pipe or a terminal is read as it arrives (:class:`PipeLines`): it tells
:func:`fasttag.parallel.input_would_wait` when its next line is not there
yet, so output keeps up with input given a line at a time.
"""
from __future__ import annotations

import codecs
import contextlib
import contextvars
import io
import itertools
import os
import stat
import sys
from collections import deque
from typing import Iterator

from .. import parallel
from ..errors import InputError


def is_path(source):
    """Whether ``source`` names a file (str, bytes or os.PathLike)."""
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
    ``encoding`` ("gbk", "utf-16" ...) instead of UTF-8, still strictly (the
    command line's ``--encoding``)."""
    name = check_encoding(encoding)
    token = _ENCODING.set(name)
    try:
        yield
    finally:
        _ENCODING.reset(token)


def current_encoding():
    """The :func:`input_encoding` in force, or None (UTF-8)."""
    return _ENCODING.get()


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
    pipe = PipeLines.of(f)
    with parallel.streaming_input(pipe) if pipe is not None else contextlib.nullcontext():
        yield from _decoded(pipe or f, name, encoding, utf8)


def _decoded(f, name, encoding, utf8):
    for lineno, raw in enumerate(f, 1):
        if lineno == 1 and raw.startswith(MODEL_MAGIC):
            raise InputError("a fasttag model file, not text to read: give a model as option model", name, 1)
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


class PipeLines:
    """The byte lines (with their terminators) of a binary stream read
    from a pipe, a terminal or a socket as the data arrives, which knows
    whether its next line is there (:meth:`would_wait`).  Just before a
    read waits, :func:`fasttag.parallel.input_waits` runs (output flushed)."""

    CHUNK = 1 << 16

    def __init__(self, f, fd):
        self._read = f.read1 if isinstance(f, io.BufferedReader) else f.read
        self._fd = fd
        self._lines = deque()       # complete lines read, with their terminators
        self._rest = []             # the pieces of the line not complete yet
        self._eof = False
        # a buffered stream's first read takes all its buffer holds (read1(-1)), later ones read past it
        self._size = -1 if isinstance(f, io.BufferedReader) else self.CHUNK

    @classmethod
    def of(cls, f):
        """A reader of the binary stream ``f`` when it is a pipe, a
        terminal or a socket that select() can poll; else None."""
        if os.name != "posix" or not isinstance(f, (io.BufferedReader, io.FileIO)):
            return None
        try:
            fd = f.fileno()
            mode = os.fstat(fd).st_mode
        except (OSError, ValueError, io.UnsupportedOperation):
            return None
        if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)):
            return None
        return cls(f, fd)

    def __iter__(self):
        return self

    def __next__(self):
        lines = self._lines
        while not lines:
            if self._eof:
                raise StopIteration
            if not self._ready():
                parallel.input_waits()
            self._fill()
        return lines.popleft()

    def would_wait(self):
        """Whether no complete line holding more than whitespace is ready
        (the first few lines looked at), and the stream has nothing more to
        read now: the next line that makes output may wait."""
        while True:
            if self._eof:
                return False
            for k, line in enumerate(self._lines):
                if not line.isspace():
                    return False
                if k == 16:
                    return True     # many blank lines: a batch may end here
            if not self._ready():
                return True
            self._fill()

    def _ready(self):
        import select
        try:
            return bool(select.select([self._fd], [], [], 0)[0])
        except (OSError, ValueError):
            return True             # cannot tell: read (and wait) as before

    def _fill(self):
        chunk = self._read(self._size)
        self._size = self.CHUNK
        if not chunk:
            self._eof = True
            if self._rest:
                self._lines.append(b"".join(self._rest))
                self._rest = []
            return
        if b"\n" not in chunk:
            self._rest.append(chunk)
            return
        if self._rest:
            self._rest.append(chunk)
            chunk = b"".join(self._rest)
        parts = chunk.split(b"\n")
        last = parts.pop()
        self._rest = [last] if last else []
        self._lines.extend([p + b"\n" for p in parts])


#: The first bytes of every fasttag model file (the model layer's
#: ``modelfile.MAGIC``): a model given where text is read is named as such.
MODEL_MAGIC = b"FASTTAG\x00"


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
        # the text layer decodes ahead: the bad byte is on this line or a later one
        encoding = getattr(exc, "encoding", None) or getattr(f, "encoding", "the encoding")
        reason = getattr(exc, "reason", None) or str(exc)
        err = InputError(f"cannot decode the input as {encoding} ({reason}) "
                         f"on this line or soon after", name, lineno + 1)
        err.undecodable = True
        raise err from None


def open_lines(source):
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
            # decode (and report errors) line by line; standard input is UTF-8
            # whatever the locale says, another text stream kept its encoding
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


def read_parsed(source, parse, *args):
    """The sentences ``parse(lines, name, *args)`` yields from the lines of
    ``source``; a path is closed when they are read or the reader is closed."""
    name, lines, close = open_lines(source)
    try:
        yield from parse(lines, name, *args)
    finally:
        close()


def is_blank(line):
    """Whether a line is empty or whitespace only (a sentence break)."""
    return not line or line.isspace()


def read_lines(source, what="input") -> Iterator[str]:
    """The lines of a text source, without line ends: a path or file
    object, or an iterable of str lines (a non-str line is a TypeError
    naming it).  The one way fasttag reads plain text."""
    if is_source(source):
        name, lines, close = open_lines(source)
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
    one str object: a corpus has far fewer distinct words than words."""
    shared = {}
    one = shared.setdefault
    return [[one(w, w) for w in line.split()] for line in read_lines(source, what)]


def read_word_list(source) -> set:
    """The words of a word list: one per line, stripped, blanks skipped."""
    return {w for w in (line.strip() for line in read_lines(source, "the word list")) if w}
