"""Feature templates over token attributes, evaluated as hashes, and the
word featurizer that caches each word type's hashed attributes
(docs/architecture.md, features).
"""
import re
import threading

import numpy as np

from .._core.weights import hash_bytes, hash_string, hash_strings
from .._core.features import extract
from .._core.wordtypes import lookup_ids
from .clusters import PREFIXES, prefix_values
from ..display import quote

MAX_PARTS = 4
MAX_OFFSET = 1024          # context offsets are small; the bound keeps them int32
# Every token gets one uint64 key per template, so the count bounds the
# memory of tagging: far above any real set, it keeps a small model file
# from needing gigabytes to tag.
MAX_TEMPLATES = 1024
TEMPLATE_PART = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\[(-?\d+)\]$")


class Templates:
    """A parsed list of templates, as the arrays the Cython extractor reads."""

    def split(self, n_type_attributes):
        """(type-only templates, the others): type-only templates read offset 0
        of the first ``n_type_attributes`` attributes alone, so their features
        can be scored once per word type."""
        type_only, rest = [], []
        for t, name in enumerate(self.names):
            parts = range(self.n_parts[t])
            if all(self.offsets[t, p] == 0 and self.attr_ids[t, p] < n_type_attributes for p in parts):
                type_only.append(name)
            else:
                rest.append(name)
        return (Templates(type_only, self.attribute_names), Templates(rest, self.attribute_names))

    def __init__(self, templates, attribute_names):
        self.names = list(templates)
        self.attribute_names = list(attribute_names)
        if len(self.names) > MAX_TEMPLATES:
            raise ValueError(f"{len(self.names)} feature templates: at most {MAX_TEMPLATES}")
        if len(set(self.names)) != len(self.names):
            raise ValueError("duplicate feature templates")
        index = {name: i for i, name in enumerate(attribute_names)}
        n = len(self.names)
        self.offsets = np.zeros((n, MAX_PARTS), dtype=np.int32)
        self.attr_ids = np.zeros((n, MAX_PARTS), dtype=np.int32)
        self.n_parts = np.zeros(n, dtype=np.int32)
        for t, name in enumerate(self.names):
            parts = [] if name == "bias" else name.split("|")
            if len(parts) > MAX_PARTS:
                raise ValueError(f"template {quote(name)}: at most {MAX_PARTS} parts")
            for p, part in enumerate(parts):
                m = TEMPLATE_PART.match(part.strip())
                if not m:
                    raise ValueError(f"template {quote(name)}: {quote(part)} is not of the form attribute[offset]")
                if m.group(1) not in index:
                    raise ValueError(f"template {quote(name)}: unknown attribute {quote(m.group(1))} "
                                     f"(known: {', '.join(attribute_names)})")
                self.attr_ids[t, p] = index[m.group(1)]
                offset = int(m.group(2))
                if not -MAX_OFFSET <= offset <= MAX_OFFSET:
                    raise ValueError(f"template {quote(name)}: offset {offset} is beyond +-{MAX_OFFSET}")
                self.offsets[t, p] = offset
            self.n_parts[t] = len(parts)
        self.seeds = hash_strings([f"template:{name}" for name in self.names])

    def __len__(self):
        return len(self.names)

    def keys(self, attrs, bounds):
        """Feature keys ``uint64[n_tokens, n_templates]``."""
        return extract(attrs, bounds, self.offsets, self.attr_ids, self.n_parts, self.seeds)


def word_shape(word):
    """spaCy-style shape: X for upper, x for lower, d for digit, other
    characters kept; runs longer than four are cut to four.  A long word
    is shaped in arrays or in pieces, not a list entry per character: a
    form of any length costs about its own size."""
    if len(word) > _LONG_WORD and word.isascii():
        codes = np.frombuffer(word.translate(_ASCII_SHAPE).encode("ascii"), dtype=np.uint8)
        cut = np.zeros(len(codes), dtype=bool)          # the fifth character of a run and after
        cut[4:] = codes[4:] == codes[3:-1]
        for k in (2, 3, 4):
            cut[4:] &= codes[4 - k + 1:len(codes) - k + 1] == codes[4 - k:len(codes) - k]
        return codes[~cut].tobytes().decode("ascii")
    out, piece = [], []
    last, run = "", 0
    for ch in word:
        c = "X" if ch.isupper() else "x" if ch.isalpha() else "d" if ch.isdigit() else ch
        run = run + 1 if c == last else 1
        last = c
        if run <= 4:
            piece.append(c)
            if len(piece) >= 4096:
                out.append("".join(piece))
                piece = []
    out.append("".join(piece))
    return "".join(out)


_LONG_WORD = 64
_ASCII_SHAPE = str.maketrans({chr(c): "X" if chr(c).isupper() else "x" if chr(c).isalpha() else
                              "d" if chr(c).isdigit() else chr(c) for c in range(128)})


def short_shape(word):
    """The shape with every run collapsed to one character ("Xx", "d.d")."""
    return _collapsed(word_shape(word))


def _collapsed(shape):
    """:func:`short_shape` of a word whose :func:`word_shape` is ``shape``."""
    if len(shape) > _LONG_WORD and shape.isascii():
        codes = np.frombuffer(shape.encode("ascii"), dtype=np.uint8)
        return codes[np.concatenate(([True], codes[1:] != codes[:-1]))].tobytes().decode("ascii")
    return _ANY_RUN.sub(r"\1", shape)


_ANY_RUN = re.compile(r"(.)\1+", re.DOTALL)


def word_flags(word):
    """Orthographic flags as one value: digit, hyphen, upper, all upper,
    title case, period, all punctuation."""
    return "".join((
        "D" if any(c.isdigit() for c in word) else "-",
        "H" if "-" in word else "-",
        "U" if any(c.isupper() for c in word) else "-",
        "A" if word.isupper() else "-",
        "T" if word.istitle() else "-",
        "P" if "." in word else "-",
        "N" if not any(c.isalnum() for c in word) else "-",
    ))


_DIGITS = re.compile(r"\d+")


def hash_texts(values):
    """``hash_strings(values)``, except that a str with lone surrogates
    (which has no strict UTF-8 form) hashes its 'surrogatepass' UTF-8
    bytes; every other str hashes as before, so models are unchanged."""
    try:
        return hash_strings(values)
    except UnicodeEncodeError:
        return np.array([hash_bytes(v.encode("utf-8", "surrogatepass")) for v in values],
                        dtype=np.uint64)


class TokenTypeError(TypeError):
    """A token that is not a str.  Raised where new word types are added
    (off the hot path); the taggers catch it and say where the token is."""


def _not_a_token(token):
    return TokenTypeError(f"a token must be a str, not {type(token).__name__}")


def token_lists(sentences, keep_sentences=False):
    """The sentences as lists, with a TypeError where a str stands for a
    sentence or for the list of sentences (else tagged character by
    character).  With ``keep_sentences``, objects with a ``words`` attribute
    (:class:`fasttag.text.formats.Sentence`) are kept as they are."""
    if isinstance(sentences, (str, bytes)):
        raise TypeError(f"expected a list of sentences (each a list of token strings), got "
                        f"{type(sentences).__name__}; split the text into tokens first")
    sentences = list(sentences)
    if not keep_sentences:          # the fast path: one comprehension
        try:
            out = [list(s) for s in sentences if not isinstance(s, (str, bytes))]
        except TypeError:
            out = None
        if out is not None and len(out) == len(sentences):
            return out
    out = []                        # find the sentence at fault, or keep Sentence objects
    for i, s in enumerate(sentences):
        if isinstance(s, (str, bytes)):
            raise TypeError(f"sentence {i}: expected a list of token strings, got "
                            f"{type(s).__name__} (to tag one sentence, pass its token list to "
                            "tag())")
        if keep_sentences and hasattr(s, "words"):
            out.append(s)
            continue
        try:
            out.append(list(s))
        except TypeError:
            raise TypeError(f"sentence {i}: expected a list of token strings, got "
                            f"{type(s).__name__}") from None
    return out


def one_sentence(tokens, method):
    """``tokens`` unless it is a str (a TypeError: ``method`` takes a list
    of token strings)."""
    if isinstance(tokens, (str, bytes)):
        raise TypeError(f"{method}() takes one sentence as a list of token strings, not a "
                        f"{type(tokens).__name__}; split the text into tokens first")
    return tokens


def bad_token(sentences):
    """A TypeError naming the first token that is not a str, or None: the
    slow check, for after tagging has failed."""
    for i, tokens in enumerate(sentences):
        for j, t in enumerate(tokens):
            if not isinstance(t, str):
                return TypeError(f"sentence {i}, token {j}: a token must be a str, not "
                                 f"{type(t).__name__} ({t!r:.60})")
    return None


class _TypeTable:
    """One generation of the word-type cache: ``index`` (word -> row id) and
    ``rows``.  Readers take no lock: rows are only appended (``rows`` replaced
    by a larger copy), ids published after their rows; clearing starts a new table."""

    __slots__ = ("index", "rows")

    def __init__(self, width, capacity=1024):
        self.index = {}
        self.rows = np.zeros((capacity, width), dtype=np.uint64)


CLUSTER_ATTRIBUTES = tuple(f"cluster{k}" for k in PREFIXES) + ("cluster",)
"""Word-type attributes of Brown clusters: bit-string prefixes, then the
whole bit string."""

CLUSTER_TEMPLATES = tuple(f"{a}[0]" for a in CLUSTER_ATTRIBUTES) + (
    "cluster4[-1]", "cluster4[1]", "cluster[-1]", "cluster[1]",
)
"""Templates added to a word task's defaults when it is trained with
clusters: every prefix of the word's cluster, and the coarsest and the
finest cluster of its neighbours."""


class WordFeaturizer:
    """Word-level attributes, hashed once per word type and cached; safe to
    share between threads (new types are added under a lock).

    ``n_columns`` extra per-token columns become attributes ``col1 .. colN``.
    With ``clusters`` (:class:`fasttag.features.clusters.Clusters`), the
    word's cluster prefixes (:data:`CLUSTER_ATTRIBUTES`) follow
    :attr:`ATTRIBUTES`; with ``capitals_fallback``, a word in capitals with no
    cluster takes that of its capitalised form (headlines are in capitals,
    clustered text mostly is not).  ``word_classes`` (name, {word: class},
    class of other words) adds the word's class as the last attribute.
    """

    ATTRIBUTES = ("word", "lower", "norm",
                  "prefix1", "prefix2", "prefix3", "prefix4",
                  "suffix1", "suffix2", "suffix3", "suffix4", "suffix5",
                  "shape", "short_shape", "flags", "length",
                  "hyphen_first", "hyphen_last")
    MAX_CACHE = 1_000_000

    def __init__(self, n_columns=0, clusters=None, capitals_fallback=False, word_classes=None):
        self.n_columns = n_columns
        self.clusters = clusters
        self.capitals_fallback = bool(capitals_fallback) and clusters is not None
        self.word_classes = word_classes
        names = self.ATTRIBUTES + (CLUSTER_ATTRIBUTES if clusters is not None else ())
        if word_classes is not None:
            names += (word_classes[0],)
        self.n_type_attributes = len(names)
        self.attribute_names = list(names) + [f"col{i + 1}" for i in range(n_columns)]
        self._table = _TypeTable(len(names))
        self._lock = threading.Lock()      # taken only to add types
        self._seeds = [hash_string(f"attr:{name}") for name in names]
        if word_classes is not None:
            self._seeds[-1] = 0             # hashed as the column value "name=class" (see word_classes)

    def share_types(self, other) -> bool:
        """Use ``other``'s cache of word types (and its lock) where both
        compute the same word-type attributes (no clusters, no word
        classes): the taggers of one pipeline then hash each word once.
        Returns whether they now share it."""
        if type(self) is not type(other) or self._seeds != other._seeds or any(
                f.clusters is not None or f.word_classes is not None for f in (self, other)):
            return False
        with other._lock:
            self._table, self._lock = other._table, other._lock
        return True

    def attribute_values(self, word):
        """The string value of every word-type attribute: :meth:`word_attributes`,
        the cluster prefixes, the word's class."""
        values = self.word_attributes(word)
        if self.clusters is not None:
            values += prefix_values(self.cluster_of(word))
        if self.word_classes is not None:
            _, table, unknown = self.word_classes
            values += (table.get(word, unknown),)
        return values

    def _hashed_values(self, word):
        """:meth:`attribute_values` as hashed: the word's class as ``name=class``,
        as the same value handed over as a (jackknifed) training column hashes."""
        values = self.attribute_values(word)
        if self.word_classes is not None:
            values = values[:-1] + (f"{self.word_classes[0]}={values[-1]}",)
        return values

    def cluster_of(self, word):
        """The bit string of the word's cluster ("" when none)."""
        bits = self.clusters.lookup(word)
        if not bits and self.capitals_fallback and word.isupper():
            bits = self.clusters.lookup(word.capitalize())
        return bits

    @staticmethod
    def word_attributes(word):
        """The string value of every word-level attribute."""
        lower = word.lower()
        shape = word_shape(word)
        first, _, rest = lower.partition("-")
        last = rest.rpartition("-")[2] if rest else ""
        return (word, lower, _DIGITS.sub("0", lower),
                word[:1], word[:2], word[:3], word[:4],
                word[-1:], word[-2:], word[-3:], word[-4:], word[-5:],
                shape, _collapsed(shape), word_flags(word),
                str(min(len(word), 8)),
                first if rest else "", last)

    def lookup(self, words):
        """(ids, rows): each word's type id (adding new types) and the array
        of hashed attributes they index.  Take both from one call: ``rows``
        stays right for these ids even if another thread clears the cache."""
        table = self._table
        if type(words) is not list:
            words = list(words)
        try:
            ids, missing = lookup_ids(table.index, words)
        except TypeError:           # an unhashable token
            for w in words:
                if not isinstance(w, str):
                    raise _not_a_token(w) from None
            raise
        if missing:
            return self._add_types(words, ids, table)
        return ids, table.rows

    def _add_types(self, words, ids, seen):
        """``lookup`` for a batch with new types: ``ids`` were read from the
        table ``seen`` (-1: not there)."""
        new = list(dict.fromkeys(w for w, i in zip(words, ids.tolist()) if i < 0))
        for w in new:               # only the new types are checked
            if not isinstance(w, str):
                raise _not_a_token(w)
        with self._lock:
            table = self._table
            if table is not seen:   # cleared meanwhile: the words found may be gone
                new = list(dict.fromkeys(words))
            index = table.index
            missing = [w for w in new if w not in index]
            if len(index) + len(missing) > self.MAX_CACHE:
                # a new table for this batch's types; readers keep the old one
                table = _TypeTable(table.rows.shape[1])
                self._append(table, list(dict.fromkeys(words)))
                self._table = table
            elif missing:
                self._append(table, missing)
            rows = table.rows
        index = table.index
        return np.array([index[w] for w in words], dtype=np.int64), rows

    def _append(self, table, words):
        """Add new types to ``table`` (under the lock): rows first, then the
        ids that point at them."""
        values = []
        for w in words:
            values.extend(self._hashed_values(w))
        hashed = hash_texts(values).reshape(len(words), -1)
        # "s" as suffix1 and as prefix1 are different values
        for a, seed in enumerate(self._seeds):
            hashed[:, a] ^= np.uint64(seed)
        start = len(table.index)
        need = start + len(words)
        rows = table.rows
        if need > len(rows):
            grown = np.zeros((max(need, 2 * len(rows)), rows.shape[1]), dtype=np.uint64)
            grown[:start] = rows[:start]
            rows = grown
        rows[start:need] = hashed
        table.rows = rows
        index = table.index
        for i, w in enumerate(words):
            index[w] = start + i

    def type_ids(self, words):
        """Row index of each word's cached attributes (adding new types);
        concurrent callers use :meth:`lookup`."""
        return self.lookup(words)[0]

    def type_rows(self, ids, rows=None):
        """The word-level attribute rows of the given type ids (``rows``:
        from the :meth:`lookup` that gave the ids)."""
        return np.ascontiguousarray((self._table.rows if rows is None else rows)[ids])

    def attributes(self, words, columns=None, ids=None, rows=None):
        """``attrs[n_tokens, n_attributes]`` for a flat list of tokens, with
        per-token ``columns`` (``ids``, ``rows``: the words' :meth:`lookup`, if known)."""
        if ids is None:
            ids, rows = self.lookup(words)
        elif rows is None:
            rows = self._table.rows
        rows = rows[ids]
        if not self.n_columns:
            return np.ascontiguousarray(rows)
        if columns is None or len(columns) != len(words):
            raise ValueError(f"this featurizer needs {self.n_columns} extra columns per token")
        extra = None
        if self.n_columns == 1:         # a UPOS column takes few values: each distinct one hashed once
            codes = {}
            index = np.fromiter((codes.setdefault(c[0], len(codes)) for c in columns), dtype=np.int64,
                                count=len(columns))
            if all(type(v) is str for v in codes):      # (1, 1.0 and True would share a code)
                extra = hash_texts([f"col1={v}" for v in codes])[index]
        if extra is None:
            extra = hash_texts([f"col{j + 1}={c[j]}" for c in columns for j in range(self.n_columns)])
        return np.ascontiguousarray(np.hstack([rows, extra.reshape(len(words), self.n_columns)]))


POS_TEMPLATES = (
    "bias",
    "word[0]", "lower[0]", "norm[0]",
    "prefix1[0]", "prefix2[0]", "prefix3[0]", "prefix4[0]",
    "suffix1[0]", "suffix2[0]", "suffix3[0]", "suffix4[0]", "suffix5[0]",
    "shape[0]", "short_shape[0]", "flags[0]", "length[0]|short_shape[0]",
    "norm[-1]", "norm[1]", "norm[-2]", "norm[2]",
    "suffix3[-1]", "suffix3[1]", "suffix2[-1]", "suffix2[1]",
    "short_shape[-1]", "short_shape[1]",
    "norm[-1]|norm[0]", "norm[0]|norm[1]", "norm[-1]|norm[1]",
    "norm[-2]|norm[-1]", "norm[1]|norm[2]",
    "suffix3[0]|norm[-1]", "suffix3[0]|norm[1]",
    "short_shape[-1]|short_shape[0]|short_shape[1]",
    "hyphen_first[0]", "hyphen_last[0]",
)
"""Default POS templates: Ratnaparkhi's word, affix and shape features with
a +-2 window, word bigrams around the token, and the parts of hyphenated
words (each template earned its place on the EWT dev set)."""
