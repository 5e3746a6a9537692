"""User dictionaries for the Chinese segmenter.

A user dictionary is a UTF-8 text file with one word per line, optionally
followed by whitespace and a weight (a number), optionally followed by
anything else (jieba's ``word freq tag`` lines read as they are)::

    北京大学
    区块链 10
    云计算 5 n

Blank lines are skipped.  A second field that is not a number is ignored
(``word tag`` lines work too).  Weights must be positive; a word without one
weighs 1.0.  See :class:`fasttag.Segmenter` for what the words do (the
"feature" and "force" semantics) and what weights change.
"""
import math
import os

from .errors import InputError


def read_userdict(source):
    """{word: weight} from a path, an iterable of lines, a dict (returned as
    floats) or an iterable of words.  Raises InputError for unreadable files
    and bad weights."""
    if isinstance(source, dict):
        return {str(w): _weight(v, None, None) for w, v in source.items() if str(w).strip()}
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        path = os.fspath(source)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise InputError(f"cannot read the dictionary ({exc.strerror})", path=path) from None
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        lines = []
        for i, raw in enumerate(data.split(b"\n"), start=1):
            try:
                lines.append(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 ({exc.reason})", path=path, line=i) from None
        return _parse(lines, path)
    return _parse(source, None)


def _weight(value, path, line):
    try:
        w = float(value)
    except (TypeError, ValueError):
        raise InputError(f"bad weight {value!r}", path=path, line=line) from None
    if not (w > 0 and math.isfinite(w)):
        raise InputError(f"weights must be positive numbers, not {value!r}", path=path, line=line)
    return w


def _parse(lines, path):
    words = {}
    for i, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        word = fields[0]
        weight = 1.0
        if len(fields) > 1:
            try:
                float(fields[1])
            except ValueError:
                pass               # "word tag": no weight
            else:
                weight = _weight(fields[1], path, i)
        words[word] = max(weight, words.get(word, 0.0))
    return words
