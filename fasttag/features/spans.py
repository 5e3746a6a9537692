"""The features of a span tagger (:class:`fasttag.tasks.spans.SpanTagger`):
its featurizer, its default templates and its document features.  The
features are listed in docs/tasks.md (span tagger).
"""
from __future__ import annotations

import numpy as np

from .._core.documents import CAPROLE_SHIFT, DOCRUN_SHIFT, document_codes
from .._core.wordtypes import column_values
from ..errors import InputError
from .ambiguity import UNKNOWN
from .words import CLUSTER_TEMPLATES, POS_TEMPLATES, WordFeaturizer, hash_texts

DOCUMENT_EXTRAS = ("doc", "headline", "docrun", "caprole")
EXTRAS_LAYOUTS = [base + amb for amb in ([], ["amb"])     # the extras a model file may list
                  for base in ([], list(DOCUMENT_EXTRAS), ["gaz"], list(DOCUMENT_EXTRAS) + ["gaz"])]


class SpanFeaturizer:
    """Word attributes (cached per word type, as the POS tagger's) plus
    per-token columns: the input's feature columns ``c1 .. cN``, then the
    derived ``extras`` (``doc``, ``headline``, ``docrun``, ``caprole``, ``gaz``).
    The ambiguity class ``amb`` is the last word-type attribute; in training
    (jackknifed) it comes as one more column and takes the type's place,
    hashed alike (``amb=CLASS``) either way."""

    MAX_CACHE = 100_000        # values per column cache before it starts over
    takes_columns = True       # a training token's class comes as a column, even with no others

    def __init__(self, n_input_columns=0, extras=(), clusters=None, capitals_fallback=False, ambiguity=None):
        if ("amb" in extras) != (ambiguity is not None):
            raise ValueError("the amb extra and the ambiguity classes go together")
        classes = None if ambiguity is None else ("amb", ambiguity.classes, UNKNOWN)
        self.words = WordFeaturizer(clusters=clusters, capitals_fallback=capitals_fallback, word_classes=classes)
        self.n_input_columns = int(n_input_columns)
        self.extras = tuple(extras)
        self.column_names = [f"c{j + 1}" for j in range(self.n_input_columns)] + \
            [e for e in self.extras if e != "amb"]
        self.n_columns = len(self.column_names)
        self.attribute_names = self.words.attribute_names + self.column_names
        given = self.column_names + (["amb"] if classes else [])    # a training token's columns
        self._caches = [{} for _ in given]
        self._seeds = [f"{name}=" for name in given]
        # the word attributes depend on the word type alone: scored once per type
        self.n_type_attributes = self.words.n_type_attributes

    def lookup(self, words):
        return self.words.lookup(words)

    def type_ids(self, words):
        return self.words.type_ids(words)

    def type_rows(self, ids, rows=None):
        return self.words.type_rows(ids, rows)

    def attributes(self, words, columns=None, ids=None, rows=None):
        rows = self.words.attributes(words, ids=ids, rows=rows)
        if columns is None or len(columns) != len(words):
            if not self.n_columns:
                return rows
            raise ValueError(f"this featurizer needs {self.n_columns} columns per token")
        if type(columns) is not list:
            columns = list(columns)
        # training hands each token's jackknifed class over as a last column
        jackknifed = self.words.word_classes is not None and bool(columns) \
            and len(columns[0]) == self.n_columns + 1
        n_given = self.n_columns + jackknifed
        if not n_given:
            return rows
        n_word = rows.shape[1]
        out = np.empty((len(words), n_word + n_given), dtype=np.uint64)
        out[:, :n_word] = rows
        # a cache is never cleared while in use, only replaced (other
        # threads may be reading it); entries only ever get added
        caches = self._caches[:n_given]
        if column_values(columns, caches, out, n_word):
            for j in range(n_given):
                cache = caches[j]
                values = {c[j] for c in columns}
                missing = [v for v in values if v not in cache]
                if not missing:
                    continue
                for v in missing:
                    if not isinstance(v, str):
                        raise TypeError(f"feature column {self._seeds[j][:-1]}: a value must "
                                        f"be a str, not {type(v).__name__}")
                if len(cache) > self.MAX_CACHE:
                    cache = self._caches[j] = {}
                    missing = list(values)
                seed = self._seeds[j]
                cache.update(zip(missing, hash_texts([seed + v for v in missing]).tolist()))
                caches[j] = cache
            if column_values(columns, caches, out, n_word):
                raise RuntimeError("column values missing from their caches")
        if jackknifed:
            out[:, n_word - 1] = out[:, -1]         # the class attribute is the last word attribute
            out = np.ascontiguousarray(out[:, :-1])
        return out


# the POS tagger's templates of the word and its neighbours' forms, then the span tagger's own
_WORD_TEMPLATES = POS_TEMPLATES[:POS_TEMPLATES.index("norm[2]") + 1] + (
    "word[-1]", "word[1]",
    "suffix3[-1]", "suffix3[1]", "suffix2[-1]", "suffix2[1]",
    "short_shape[-1]", "short_shape[1]", "short_shape[-2]", "short_shape[2]",
    "flags[-1]", "flags[1]",
    "norm[-1]|norm[0]", "norm[0]|norm[1]", "norm[-1]|norm[1]",
    "norm[-2]|norm[-1]", "norm[1]|norm[2]",
    "suffix3[0]|norm[-1]", "suffix3[0]|norm[1]",
    "short_shape[-1]|short_shape[0]", "short_shape[0]|short_shape[1]",
    "short_shape[-1]|short_shape[0]|short_shape[1]",
    "norm[-1]|short_shape[0]", "short_shape[0]|norm[1]",
)


def span_templates(n_input_columns=0, extras=()):
    """The default templates for ``n_input_columns`` feature columns and
    the derived attributes ``extras``."""
    out = list(_WORD_TEMPLATES)
    for j in range(1, n_input_columns + 1):
        c = f"c{j}"
        out += [f"{c}[{o}]" for o in (-2, -1, 0, 1, 2)]
        out += [f"{c}[-1]|{c}[0]", f"{c}[0]|{c}[1]", f"{c}[-2]|{c}[-1]", f"{c}[1]|{c}[2]",
                f"{c}[-1]|{c}[1]",
                f"{c}[-2]|{c}[-1]|{c}[0]", f"{c}[-1]|{c}[0]|{c}[1]", f"{c}[0]|{c}[1]|{c}[2]",
                f"norm[0]|{c}[0]", f"{c}[0]|short_shape[0]"]
        if j == 1:
            # the first column is usually the POS tag: conjunctions with words
            out += [f"norm[-1]|{c}[0]", f"{c}[0]|norm[1]", f"norm[-1]|{c}[-1]", f"norm[1]|{c}[1]",
                    f"{c}[-1]|norm[0]", f"norm[0]|{c}[1]", f"norm[-1]|{c}[-1]|{c}[0]",
                    f"{c}[0]|{c}[1]|norm[1]"]
    for j in range(2, n_input_columns + 1):
        out += [f"c1[0]|c{j}[0]", f"c1[-1]|c{j}[-1]|c1[0]|c{j}[0]", f"c1[0]|c{j}[0]|c1[1]|c{j}[1]"]
    if "doc" in extras:
        out += ["doc[0]", "doc[-1]", "doc[1]", "doc[0]|short_shape[0]", "doc[0]|lower[0]",
                "doc[-1]|doc[0]", "doc[0]|doc[1]"]
    if "headline" in extras:
        out += ["headline[0]|short_shape[0]", "headline[0]|lower[0]", "headline[0]|doc[0]"]
    if "docrun" in extras:
        out += ["docrun[0]", "docrun[0]|short_shape[0]", "docrun[-1]|docrun[0]", "docrun[0]|docrun[1]",
                "docrun[0]|caprole[0]", "caprole[0]", "caprole[0]|lower[0]"]
    if "gaz" in extras:
        out += ["gaz[0]", "gaz[-1]", "gaz[1]", "gaz[0]|short_shape[0]", "gaz[-1]|gaz[0]|gaz[1]"]
    if "amb" in extras:
        # a +-1 window and its bigrams: as good as a feature column's 18, cheaper (docs/lab-notes.md)
        out += ["amb[-1]", "amb[0]", "amb[1]", "amb[-1]|amb[0]", "amb[0]|amb[1]", "amb[0]|short_shape[0]"]
    return out


CHUNK_TEMPLATES = (
    "c1[-3]", "c1[3]", "c1[-2]|c1[-1]|c1[0]|c1[1]", "c1[-1]|c1[0]|c1[1]|c1[2]", "c1[-3]|c1[-2]|c1[-1]",
    "norm[0]|c1[-1]|c1[0]", "norm[0]|c1[0]|c1[1]", "norm[-2]|c1[0]", "c1[0]|norm[2]", "lower[0]|c1[-2]|c1[-1]",
)
"""Templates the chunk task adds when it learns with MIRA and has a
feature column (the POS tag): phrases are decided by the POS context, so
a window of +-3 tags, tag 4-grams, and words with the tags around them."""

CHUNK_CLUSTER_TEMPLATES = (
    "c1[0]|cluster4[0]", "c1[0]|cluster6[0]", "c1[-1]|cluster4[0]", "cluster4[0]|c1[1]",
    "c1[-1]|c1[0]|cluster4[0]", "c1[0]|c1[1]|cluster4[0]",
    "cluster4[-1]|c1[0]", "c1[0]|cluster4[1]", "cluster6[-1]|c1[-1]|c1[0]", "c1[0]|c1[1]|cluster6[1]",
)
"""With clusters, the chunk task's POS tags with the clusters of the word
and its neighbours (a tag refined by the kind of word it is on)."""


def default_templates(task, n_input_columns, extras, clusters, algorithm):
    """The templates of a span tagger trained without ``templates``: those
    of :func:`span_templates`, the cluster templates with ``clusters``, and
    for the chunk task learned by MIRA with a POS column, its own (the
    perceptron gains nothing from them: docs/lab-notes.md)."""
    out = span_templates(n_input_columns, extras) + (list(CLUSTER_TEMPLATES) if clusters else [])
    if task == "chunk" and algorithm == "mira" and n_input_columns:
        out += (list(CHUNK_CLUSTER_TEMPLATES) if clusters else []) + list(CHUNK_TEMPLATES)
    return out


def cap_runs(words):
    """Per token: its role in the maximal run of capitalised tokens it is
    in (A alone, F first, M middle, L last; "" when not capitalised)."""
    if not words:
        return []
    codes = document_codes([list(words)], _ONE, _ONE_DOC).tolist()
    return [_ROLE_NAMES[c >> CAPROLE_SHIFT] for c in codes]


_ONE = np.zeros(1, dtype=np.int64)
_ONE_DOC = np.array([0, 1], dtype=np.int64)
_ROLE_NAMES = ("", "A", "F", "M", "L")


def document_extras(sentences, doc_ids, extras):
    """Per sentence, per token: a tuple of the document-level ``extras``
    (docs/tasks.md): ``doc`` as flags l, t, a or "-" (plus "0" at a sentence
    start), ``headline`` H or -, ``docrun`` the roles A, F, M, L (see
    ``cap_runs``) found elsewhere (not in headlines), ``caprole`` the token's
    own (or "-")."""
    want = tuple(e in extras for e in ("doc", "headline", "docrun"))
    if want[2] != ("caprole" in extras):
        raise ValueError("docrun and caprole go together")
    sentences = [s if type(s) is list else list(s) for s in sentences]
    by_doc = {}
    for i, d in enumerate(doc_ids):
        by_doc.setdefault(d, []).append(i)
    order = np.fromiter((i for members in by_doc.values() for i in members), dtype=np.int64,
                        count=len(sentences))
    doc_starts = np.zeros(len(by_doc) + 1, dtype=np.int64)
    np.cumsum([len(m) for m in by_doc.values()], out=doc_starts[1:])
    codes = document_codes(sentences, order, doc_starts).tolist()
    table = _extras_table(want)
    rows = [table[c] for c in codes]
    out, start = [], 0
    for s in sentences:
        out.append(rows[start:start + len(s)])
        start += len(s)
    return out


_EXTRAS_TABLES = {}


def _extras_table(want):
    """The tuple of extras values of every packed code (see
    :mod:`fasttag._core.documents`), for the extras ``want`` (doc, headline,
    docrun with caprole)."""
    table = _EXTRAS_TABLES.get(want)
    if table is None:
        table = []
        for c in range(1 << (CAPROLE_SHIFT + 3)):
            row = []
            if want[0]:
                row.append("".join(f if c & bit else "-" for f, bit in (("l", 1), ("t", 2), ("a", 4)))
                           + ("0" if c & 8 else ""))
            if want[1]:
                row.append("H" if c & 16 else "-")
            if want[2]:
                row.append("".join(r for k, r in enumerate("AFML") if c >> (DOCRUN_SHIFT + k) & 1) or "-")
                row.append(_ROLE_NAMES[c >> CAPROLE_SHIFT] or "-" if c >> CAPROLE_SHIFT < 5 else "-")
            table.append(tuple(row))
        table = _EXTRAS_TABLES[want] = table
    return table


def resolve_columns(n_cols, word_column, tag_column, feature_columns):
    """Absolute feature column indices (the tag column may be None)."""
    w = word_column % n_cols
    t = None if tag_column is None else tag_column % n_cols
    if feature_columns is None:
        return [j for j in range(n_cols) if j != w and j != t]
    out = []
    for j in feature_columns:
        if not -n_cols <= j < n_cols:
            raise InputError(f"feature column {j} is out of range: the file has {n_cols} columns")
        j %= n_cols
        if j == w or j == t:
            raise InputError(f"feature column {j} is the word or the tag column")
        out.append(j)
    return out
