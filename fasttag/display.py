"""Text from a model file or an input shown to a person: escaped and capped.

A model's strings may hold control characters or be huge; every
human-readable output passes what it quotes through :func:`printable`, and
every error message through :func:`quote`.  Machine output is left as is.
"""

#: The most characters :func:`quote` shows of one quoted value.
QUOTE_LIMIT = 60


def _escape(ch):
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text, keep=""):
    """``text`` with every character that is not printable written as a
    Python-style escape (``\\x1b``); characters in ``keep`` are left as they are."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in keep else _escape(ch) for ch in text)


def cut(text, limit):
    """``text`` cut to about ``limit`` characters, the cut marked with
    ``...`` and the full length."""
    if len(text) <= limit:
        return text
    return f"{text[:max(limit - 4, 1)]} ... ({len(text):,} characters)"


def quote(value, limit=QUOTE_LIMIT):
    """``repr(value)`` made printable and cut to about ``limit`` characters:
    what an error message shows of a string it did not write itself."""
    return cut(printable(repr(value)), limit)
