"""The writing system (script) of a text, and whether a model was trained
on it: Chinese text given to an English tagger, or German text to the
Chinese segmenter, runs without an error and gives nonsense; a warning
says so instead.

The model is asked nothing new: :func:`foreign_script` takes ``known``,
the model's own membership test of its training words (a tagger's word
hashes, a segmenter's words), and tries the text's own words and letters
of its main script.  A model that knows almost none of them was trained on
another script.  Only the opening :data:`SAMPLE_BYTES` of a file are
looked at, read without consuming a stream; texts given in memory are
sampled (:class:`ScriptCheck`).
"""
from __future__ import annotations

import codecs
import contextlib
import io
import os
import stat
import unicodedata
import warnings

from . import patterns

__all__ = ["script_of", "letter_scripts", "main_script", "foreign_script", "ScriptCheck", "opening_text",
           "SAMPLE_BYTES"]

#: How much of an input the check reads: a few kilobytes, whatever its size.
SAMPLE_BYTES = 4096
#: Fewer letters than this (in the main script) say too little to warn.
MIN_LETTERS = 8
#: The main script must hold more than this share of the letters.
MAJORITY = 0.5
#: The model "saw (almost) none" of a script: fewer than this share of the
#: text's words and letters in it are among its training words.
KNOWN_BELOW = 0.05
#: A model trained on fewer distinct words than this is not judged: a toy
#: vocabulary misses the words of any text, in its script or not.
MIN_VOCABULARY = 1000
#: At most this many distinct words and letters are tried.
MAX_PROBES = 400

#: Unicode name prefixes of letters -> their script, for the names whose
#: first word is not the script's own (CJK UNIFIED IDEOGRAPH, FULLWIDTH
#: LATIN ...); any other letter is of the script its name begins with.
_SCRIPT_OF_NAME = {
    "CJK": "Han", "FULLWIDTH": None, "HALFWIDTH": None, "KANGXI": "Han", "IDEOGRAPHIC": "Han",
    "HIRAGANA": "Kana", "KATAKANA": "Kana", "KATAKANA-HIRAGANA": "Kana", "HANGUL": "Hangul", "MODIFIER": None,
}
_cache: dict = {}


def script_of(ch):
    """The script of the letter ``ch`` ("Latin", "Han", "Cyrillic", "Kana"
    (hiragana and katakana), "Hangul", "Arabic" ...), or None for a
    character that is not a letter or whose script the name does not say."""
    got = _cache.get(ch, False)
    if got is not False:
        return got
    script = None
    if ch.isalpha():
        words = unicodedata.name(ch, "").split()
        if words and words[0] in ("FULLWIDTH", "HALFWIDTH") and len(words) > 1:
            words = words[1:]                   # FULLWIDTH LATIN CAPITAL LETTER A: Latin
        if words:
            script = _SCRIPT_OF_NAME.get(words[0], words[0].capitalize())
    if len(_cache) < 100_000:
        _cache[ch] = script
    return script


def letter_scripts(text):
    """{script: number of letters} of ``text``."""
    counts = {}
    for ch in text:
        script = script_of(ch)
        if script is not None:
            counts[script] = counts.get(script, 0) + 1
    return counts


def _probes(text, script):
    """The distinct words (runs of the script's letters) and letters of
    ``script`` in ``text``, with the words' lowercase, at most
    :data:`MAX_PROBES`."""
    found = {}
    run = []
    for ch in text + " ":
        if script_of(ch) == script:
            run.append(ch)
            found.setdefault(ch, None)
            continue
        if run:
            word = "".join(run)
            found.setdefault(word, None)
            found.setdefault(word.lower(), None)
            run = []
        if len(found) >= MAX_PROBES:
            break
    return list(found)[:MAX_PROBES]


def main_script(text):
    """``(script, letters in it, all letters)`` of the script holding most
    of the letters of ``text`` (comment lines, URLs, e-mail addresses,
    mentions and hashtags left out), or None where too few letters, or no
    clear majority, say which."""
    return _main(_language(text))


def _language(text):
    """``text`` without what is not language: comment lines (CoNLL-U's
    ``# sent_id``), the annotation columns of tab-separated lines (a word
    line of CoNLL-U keeps its FORM, of a column file its first field: a
    Chinese treebank's UPOS and DEPREL are Latin letters) and protected
    spans (a Chinese sentence citing a URL)."""
    lines = []
    for line in text.split("\n"):
        if line.startswith("#"):
            continue
        if "\t" in line:
            fields = line.split("\t")
            line = fields[1] if len(fields) >= 10 else fields[0]
        lines.append(line)
    return _without_protected("\n".join(lines))


def _main(text):
    counts = letter_scripts(text)
    if not counts:
        return None
    total = sum(counts.values())
    script, n = max(counts.items(), key=lambda kv: kv[1])
    if n < MIN_LETTERS or n <= MAJORITY * total:
        return None
    return script, n, total


def _without_protected(text):
    starts, ends, _ = patterns.protected_spans(text)
    if not len(starts):
        return text
    pieces, at = [], 0
    for a, b in zip(starts.tolist(), ends.tolist()):
        pieces.append(text[at:a])
        at = b
    pieces.append(text[at:])
    return " ".join(pieces)


def foreign_script(text, known):
    """A warning's text when most letters of ``text`` are in a script of
    which the model knows (almost) nothing, else None.  ``known(strings)``:
    which of the strings are training words of the model (a sequence of
    bools), or None when the model cannot tell."""
    text = _language(text)
    main = _main(text)
    return None if main is None else _verdict(text, main, known)


def _verdict(text, main, known):
    script, n, total = main
    probes = _probes(text, script)
    answers = known(probes)
    if answers is None or not len(probes):
        return None
    hits = int(sum(bool(a) for a in answers))
    if hits >= KNOWN_BELOW * len(probes):
        return None
    return (f"the text is in the {script} script ({100 * n / total:.0f}% of the letters at its start), but the "
            f"model was trained on almost none of it ({hits} of its {len(probes)} {script} words and letters "
            f"are training words): its output here is likely nonsense; is it the right model for this text?")


class ScriptCheck:
    """One model's script check of what it is given, as a warning.  Each
    script is judged once per model (one verdict, at most one warning).  A
    file is judged by its opening (:meth:`opening`); texts given in memory
    are looked at on calls 1, 2, 4, 8 ... only (:meth:`sampled`): a check on
    every call would cost as much as tagging a short sentence, one on the
    first call only would miss a text of another script given later."""

    def __init__(self, known):
        #: ``known(strings)``: which strings are the model's training words (bools), or None where it cannot tell
        self.known = known
        self._judged = set()
        self._calls = 0
        self._files = 0             # files being read: their openings decided

    def __call__(self, text, stacklevel=2):
        """Judge ``text`` (its first :data:`SAMPLE_BYTES` characters): a
        UserWarning if its script is foreign to the model and not judged
        before."""
        if not text:
            return
        text = _language(text[:SAMPLE_BYTES])
        main = _main(text)
        if main is None or main[0] in self._judged:
            return
        self._judged.add(main[0])
        try:
            message = _verdict(text, main, self.known)
        except (TypeError, ValueError):         # a check that only warns never stops the tagging
            return
        if message is not None:
            warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)

    def sampled(self, texts, stacklevel=2):
        """The check of an in-memory call, on calls 1, 2, 4, 8 ... only:
        ``texts`` (strings, e.g. a batch's sentences) joined up to
        :data:`SAMPLE_BYTES` characters; none while a file is read."""
        self._calls += 1
        if self._files or self._calls & (self._calls - 1):
            return
        sample, size = [], 0
        for text in texts:
            if not isinstance(text, str):           # the caller's checks name a wrong type
                continue
            sample.append(text)
            size += len(text) + 1
            if size >= SAMPLE_BYTES:
                break
        self("\n".join(sample), stacklevel + 1)

    @contextlib.contextmanager
    def opening(self, source, encoding=None, stacklevel=2):
        """Judge the opening of the file ``source`` (:func:`opening_text`),
        then read it in the block without sampling its sentences."""
        self(opening_text(source, encoding), stacklevel + 2)
        self._files += 1
        try:
            yield
        finally:
            self._files -= 1


def opening_text(source, encoding=None, size=SAMPLE_BYTES):
    """About the first ``size`` bytes of ``source`` (a path of a regular
    file, or a binary stream that can peek or seek back) decoded in
    ``encoding`` (UTF-8 by default), without consuming the stream; None
    where that cannot be done or the bytes do not decode."""
    data = None
    try:
        if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
            if stat.S_ISREG(os.stat(source).st_mode):          # a pipe's bytes would be lost
                with open(source, "rb") as f:
                    data = f.read(size)
        elif isinstance(source, io.TextIOBase):
            return None                                 # decoded already: not looked at
        elif hasattr(source, "peek"):
            data = source.peek(size)[:size]
        elif hasattr(source, "seekable") and hasattr(source, "read") and source.seekable():
            at = source.tell()
            try:
                data = source.read(size)
            finally:
                source.seek(at)
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    if not isinstance(data, (bytes, bytearray, memoryview)):
        return None
    try:
        decoder = codecs.getincrementaldecoder(encoding or "utf-8")("strict")
        return decoder.decode(bytes(data), final=False)     # a character cut at the end is left out
    except (UnicodeError, LookupError):                # UTF-16 without its mark: reading says so
        return None
