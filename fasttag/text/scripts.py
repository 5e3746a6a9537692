"""The writing system (script) of a text, and whether a model was trained
on it: Chinese text given to an English tagger, or German text to the
Chinese segmenter, runs without an error and gives nonsense; a warning
says so instead.

The model is asked nothing new: :func:`foreign_script` takes ``known``,
the model's own membership test of its training words (a tagger's word
hashes, a segmenter's words), and tries the text's own words and letters
of its main script.  A model that knows almost none of them was trained on
another script.  Only the opening :data:`SAMPLE_BYTES` of an input are
looked at, read without consuming a stream.
"""
from __future__ import annotations

import codecs
import io
import os
import stat
import unicodedata

__all__ = ["script_of", "letter_scripts", "foreign_script", "opening_text", "SAMPLE_BYTES"]

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


def foreign_script(text, known):
    """A warning's text when most letters of ``text`` are in a script of
    which the model knows (almost) nothing, else None.  ``known(strings)``:
    which of the strings are training words of the model (a sequence of
    bools), or None when the model cannot tell."""
    # comment lines (CoNLL-U's # sent_id, # newdoc id ...) are metadata, not the text
    text = "\n".join(line for line in text.split("\n") if not line.startswith("#"))
    counts = letter_scripts(text)
    total = sum(counts.values())
    if not counts:
        return None
    script, n = max(counts.items(), key=lambda kv: kv[1])
    if n < MIN_LETTERS or n <= MAJORITY * total:
        return None
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
