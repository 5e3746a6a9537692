"""What a string must be to be written as one field: a CoNLL-U column, a
column file's tag, a word/TAG pair or a JSON string.

One rule, applied by training to what it learns and by loading to what a
model file holds, so that a model never writes what its output format
cannot hold and loading refuses exactly what training never makes.
"""
import unicodedata

#: The CoNLL-U columns that may hold a space.
SPACED = frozenset(("FORM", "LEMMA", "MISC"))

#: The line ends of ``str.splitlines`` outside the control characters.
_LINE_SEPARATORS = frozenset("\u2028\u2029")


def field_fault(value, spaces=False):
    """What is wrong with ``value`` as a field (``"holds a tab"``), or None.  A field is a
    non-empty str without tabs, line breaks (any of ``str.splitlines``'),
    other control characters or lone surrogates (which have no UTF-8);
    ``spaces``: it may hold whitespace (CoNLL-U's FORM, LEMMA and MISC),
    else none at all (a tag is one space-separated field)."""
    if not isinstance(value, str):
        return f"is a {type(value).__name__}, not a str"
    if not value:
        return "is empty"
    if value.isprintable() and (spaces or " " not in value):
        return None                             # the common case, at C speed
    for ch in value:
        category = unicodedata.category(ch)
        if ch == "\t":
            return "holds a tab"
        if category == "Cc" and len(("a" + ch + "b").splitlines()) > 1 or ch in _LINE_SEPARATORS:
            return f"holds the line break U+{ord(ch):04X}"
        if category == "Cc":
            return f"holds the control character U+{ord(ch):04X}"
        if category == "Cs":
            return f"holds the lone surrogate U+{ord(ch):04X}"
        if not spaces and ch.isspace():
            return "holds whitespace"
    return None


def column_fault(value, column):
    """:func:`field_fault` of ``value`` as the CoNLL-U ``column`` (``"LEMMA"``)."""
    return field_fault(value, spaces=column in SPACED)
