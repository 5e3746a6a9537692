"""User dictionaries for the Chinese segmenter (format: docs/formats.md).

From Python a str is always one word, never a path (a dictionary file is a
``pathlib.Path``): else a str would be read as a word or a path depending on
what happens to exist.
"""
import math
import os

from ..errors import InputError
from ..text.sources import is_path, read_lines


def read_userdict(source, str_is="path"):
    """{word: weight} from a path (a dictionary file), a dict or an iterable
    of words (each item one word: "充满 希望" is refused).  ``str_is``: what a
    bare str is, "path" or "word".  InputError for unreadable files, bad
    weights and words empty or holding whitespace; TypeError for other forms."""
    if isinstance(source, dict):
        return {_dict_word(w): _weight(v, None, None) for w, v in source.items()}
    if isinstance(source, str) and str_is == "word":
        return {_dict_word(source): 1.0}
    if is_path(source):
        path = os.fspath(source)
        try:
            lines = list(read_lines(path))
        except (OSError, ValueError) as exc:       # ValueError: a NUL in the name
            if isinstance(exc, InputError):
                raise
            raise InputError(f"cannot read the dictionary ({getattr(exc, 'strerror', None) or exc})",
                             path=os.fsdecode(path)) from None
        return _parse(lines, os.fsdecode(path))
    try:
        items = iter(source)
    except TypeError:
        raise TypeError(f"user words must be a word, an iterable of words, a {{word: weight}} dict or "
                        f"a pathlib.Path of a dictionary file, not {type(source).__name__}") from None
    words = {}
    for w in items:
        words[_dict_word(w)] = 1.0
    return words


def _dict_word(word):
    if not isinstance(word, str):
        raise TypeError(f"user words must be str, not {type(word).__name__} ({word!r})")
    if not word or any(c.isspace() for c in word):
        raise InputError(f"user word {word!r} is empty or holds whitespace (whitespace always separates words)")
    return word


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
        if not isinstance(line, str):
            raise TypeError(f"user words must be str, not {type(line).__name__} (item {i}: {line!r:.60})")
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
