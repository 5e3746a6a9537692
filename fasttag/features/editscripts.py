"""Edit scripts: how a word's form turns into its lemma, as one class a
tagger can learn (:class:`fasttag.tasks.lemma.Lemmatizer`).

A script is a casing step (``L``: the form lowercased, ``U``: lowercased
with an upper-case first letter, ``K``: kept as written) and, on the cased
form, the characters stripped and added at its start and at its end around
a stem of at least one character they share.  Scripts are written as tags,
``L|||ies|y`` ("studies" -> "study"), their strings escaped so that a tag
has no whitespace, ``|`` or ``%`` of its own.  A pair that shares no
characters (``went`` -> ``go``) gets :data:`STORED`: the lemma as the
training data stored it.  Stripped strings are part of the script, so a
script *fits* only forms that start and end with them.
"""
from __future__ import annotations

from difflib import SequenceMatcher
from functools import lru_cache
from urllib.parse import unquote

#: The class of a lemma that no script reaches: the training data's lemma of the form.
STORED = "*"

CASINGS = ("L", "U", "K")


def _escape(text):
    """``text`` with whitespace, control characters, ``|`` and ``%``
    percent-encoded (UTF-8), so a tag stays one printable field."""
    return "".join(c if c.isprintable() and not c.isspace() and c not in "|%"
                   else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in text)


def _cased(casing, form):
    return form if casing == "K" else form.lower()


def _recased(casing, text):
    return text[:1].upper() + text[1:] if casing == "U" else text


def _casings(lemma):
    """The casing steps to try for ``lemma``, most general first."""
    lower = lemma.lower()
    if lemma == lower:
        return ("L", "K")
    if lemma == lower[:1].upper() + lower[1:]:
        return ("U", "K")
    return ("K",)


@lru_cache(maxsize=200_000)
def script_for(form: str, lemma: str) -> str:
    """The script that turns ``form`` into ``lemma`` (:data:`STORED` when
    none does); ``apply(script_for(f, l), f) == l`` for every pair."""
    if not form or not lemma:
        return STORED
    for casing in _casings(lemma):
        src = _cased(casing, form)
        tgt = lemma.lower() if casing == "U" else _cased(casing, lemma)
        p = 0
        while p < len(src) and p < len(tgt) and src[p] == tgt[p]:
            p += 1
        if p:
            i = j = 0
            size = p
        else:                       # a prefix changes: around the longest shared substring
            i, j, size = SequenceMatcher(None, src, tgt, autojunk=False).find_longest_match(
                0, len(src), 0, len(tgt))
            if not size:
                continue
        script = "|".join((casing, _escape(src[:i]), _escape(tgt[:j]),
                           _escape(src[i + size:]), _escape(tgt[j + size:])))
        if apply(script, form) == lemma:
            return script
    return STORED


@lru_cache(maxsize=20_000)
def parse(script: str):
    """``(casing, strip at start, add at start, strip at end, add at end)``
    of a script tag; None for :data:`STORED`.  A ValueError for a string
    that is not a script."""
    if script == STORED:
        return None
    parts = script.split("|")
    if len(parts) != 5 or parts[0] not in CASINGS:
        raise ValueError(f"not an edit script: {script!r}")
    return (parts[0],) + tuple(unquote(p, errors="strict") for p in parts[1:])


def apply(script: str, form: str) -> str | None:
    """The lemma ``script`` makes of ``form``, or None when it does not fit
    (the form does not start or end with what it strips, or nothing of the
    form would be left; :data:`STORED` fits no form by itself)."""
    parsed = parse(script)
    if parsed is None:
        return None
    casing, strip_start, add_start, strip_end, add_end = parsed
    src = _cased(casing, form)
    if len(src) <= len(strip_start) + len(strip_end) or not src.startswith(strip_start) \
            or not src.endswith(strip_end):
        return None
    return _recased(casing, add_start + src[len(strip_start):len(src) - len(strip_end)] + add_end)
