"""Span tagging: chunking (CoNLL-2000) and named entities (CoNLL-2003).

A :class:`SpanTagger` is a sequence model whose tags encode spans.  Files
come in IOB1 (the original CoNLL-2003 files), IOB2 or BIOES; the tagger
learns with BIOES internally (E- and S- tags tell the model where a span
ends, which helps both tasks), decodes with Viterbi constrained to valid
BIOES sequences, and converts its output back to the scheme of the training
files.  Scores follow conlleval (:func:`fasttag.spans.score_spans`).

Features (per token, hashed templates, see :func:`span_templates`):

* the POS tagger's word features: word, lowercase, digit-normalised form,
  prefixes and suffixes, word shape and orthographic flags, a +-2 window;
* every extra input column (POS tags, chunk tags, ...) as ``c1 .. cN`` over
  a +-2 window, with n-grams and word conjunctions for the first one;
* document-level features (off by default for NER and chunking: raw
  text has no documents; on for a span tagger trained with no task): how
  the word's lowercase form is written elsewhere in its document (``doc``: lowercase,
  capitalised away from a sentence start, all capitals), whether the
  sentence is written in capitals (``headline``), and the roles the word
  takes elsewhere in runs of capitalised words (``docrun``: alone, first,
  middle, last: "Clinton" after "Bill Clinton") with its own role here
  (``caprole``).  Documents are delimited by ``-DOCSTART-`` lines; without
  them each sentence is its own document;
* optional gazetteers (``gaz``): the longest entry of each type that covers
  the token, as a BIOES tag of the type (``B-LOC``);
* with ``clusters``, the POS tagger's cluster features; with the document
  features, a word in capitals with no cluster of its own takes that of
  its capitalised form (``capitals_fallback``, stored in the featurizer
  entry of the model);
* ambiguity classes (``amb``, on by default for NER): the span types the word took
  in the training data, jackknifed on the training data itself
  (:mod:`fasttag.features.ambiguity`), over a +-1 window with its bigrams.

Columns follow ``fasttag train pos``: 0-based indices, the word in column 0
and the tag in the last column unless told otherwise, every other column a
feature column unless ``feature_columns`` is given; NER reads none unless
it is given, so that its model tags raw text (which has no columns).
"""
from __future__ import annotations

import itertools
import os
from collections import Counter
from operator import itemgetter, methodcaller
from typing import Iterable

import numpy as np

from ..text import formats as ftio
from ..model import confidence, inspection
from ..text import metrics, output, rawtext, schemes
from .. import parallel
from ..features.ambiguity import FOLDS, UNKNOWN, AmbiguityClasses
from .._core.documents import CAPROLE_SHIFT, DOCRUN_SHIFT, document_codes
from .._core.wordtypes import column_values
from ..errors import InputError, ModelFormatError
from ..features.clusters import as_clusters
from ..features.words import CLUSTER_TEMPLATES, WordFeaturizer, bad_token, hash_texts, one_sentence, token_lists
from ..model.sequence import SequenceModel, tag_fault
from .base import SequenceTask, closed_after, tokenizer_of
from .pos import cluster_arrays, cluster_spec, read_pairs, stored_clusters

INTERNAL_SCHEME = "bioes"      # the default scheme learned with
DOCUMENT_EXTRAS = ("doc", "headline", "docrun", "caprole")
_EXTRAS_LAYOUTS = [base + amb for amb in ([], ["amb"])
                   for base in ([], list(DOCUMENT_EXTRAS), ["gaz"], list(DOCUMENT_EXTRAS) + ["gaz"])]

__all__ = ["SpanTagger", "SpanFeaturizer", "span_templates", "default_templates", "read_gazetteer", "Gazetteer"]


# ---------------------------------------------------------------- features

class SpanFeaturizer:
    """Word attributes (cached per word type, as the POS tagger's) plus
    per-token attributes handed over as columns: the input's feature
    columns ``c1 .. cN``, then the derived ``extras`` (``doc``, ``headline``,
    ``docrun``, ``caprole``, ``gaz``), in that order.

    The ambiguity class ``amb`` (``ambiguity``) depends on the word alone
    once trained, so it is a word-type attribute, the last of them: looked
    up once per type, and its offset-0 templates scored once per type.
    In training, where a sentence sees the classes of the other folds
    (jackknifing), each token's class comes as one more column, the last,
    and takes the type's place.  Either way it hashes as the column value
    ``amb=CLASS``, so the keys do not depend on the route."""

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
        # the word attributes come first and depend on the word type alone:
        # the sequence model scores their offset-0 templates once per type
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


_WORD_TEMPLATES = (
    "bias",
    "word[0]", "lower[0]", "norm[0]",
    "prefix1[0]", "prefix2[0]", "prefix3[0]", "prefix4[0]",
    "suffix1[0]", "suffix2[0]", "suffix3[0]", "suffix4[0]", "suffix5[0]",
    "shape[0]", "short_shape[0]", "flags[0]", "length[0]|short_shape[0]",
    "norm[-1]", "norm[1]", "norm[-2]", "norm[2]",
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
        # a +-1 window and its bigrams: as good on CoNLL-2003 testa as the 18
        # templates of a feature column (93.33 and 93.39), and cheaper to tag
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
    for the chunk task learned by MIRA with a POS column, its own.  They
    were chosen with 3-best MIRA, the chunk default, on held-out CoNLL-2000
    training sentences over three seeds: 95.26 F1 against 95.04 for the
    perceptron without them.  The perceptron gains nothing from them there
    (94.77 against 94.81 without clusters), so it goes without."""
    out = span_templates(n_input_columns, extras) + (list(CLUSTER_TEMPLATES) if clusters else [])
    if task == "chunk" and algorithm == "mira" and n_input_columns:
        out += (list(CHUNK_CLUSTER_TEMPLATES) if clusters else []) + list(CHUNK_TEMPLATES)
    return out


def _cap_runs(words):
    """Per token: its role in the maximal run of capitalised tokens it is
    in (A alone, F first, M middle, L last; "" when not capitalised)."""
    if not words:
        return []
    codes = document_codes([list(words)], _ONE, _ONE_DOC).tolist()
    return [_ROLE_NAMES[c >> CAPROLE_SHIFT] for c in codes]


_ONE = np.zeros(1, dtype=np.int64)
_ONE_DOC = np.array([0, 1], dtype=np.int64)
_ROLE_NAMES = ("", "A", "F", "M", "L")


def _document_extras(sentences, doc_ids, extras):
    """Per sentence, per token: a tuple of the document-level ``extras``.

    ``doc``: how the word's lowercase form appears elsewhere in the
    document: written in lowercase (l), capitalised away from a sentence
    start (t), all capitals (a), each flag a letter or "-"; plus whether
    the token itself is at a sentence start.  ``headline``: whether most of
    the sentence's letters are capitals (H or -).  ``docrun``: the roles
    (A, F, M, L: see ``_cap_runs``) the word takes in runs of capitalised
    words elsewhere in the document; ``caprole``: the token's own role (or
    "-"; always with ``docrun``).  Headline sentences are not counted as
    "elsewhere".  Computed by :func:`fasttag._core.documents.document_codes`.
    """
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


# ---------------------------------------------------------------- gazetteers

def read_gazetteer(source):
    """Entries of a gazetteer (a path, or lines): one per line, tokens
    separated by whitespace; blank lines and lines starting with ``#``
    are skipped."""
    entries = []
    for line in ftio.read_lines(source, "the gazetteer"):
        line = line.strip()
        if line and not line.startswith("#"):
            entries.append(" ".join(line.split()))
    return entries


class Gazetteer:
    """Longest-match lookup of multi-token entries, per type."""

    def __init__(self, lists):
        self.lists = {t: sorted(set(e)) for t, e in sorted(lists.items())}
        self.index = {}        # first token -> max length, per type
        self.entries = {}
        for typ, entries in self.lists.items():
            ents = set()
            first = {}
            for e in entries:
                toks = tuple(e.split(" "))
                ents.add(toks)
                first[toks[0]] = max(first.get(toks[0], 0), len(toks))
            self.entries[typ] = ents
            self.index[typ] = first

    def tags(self, words):
        """Per token: the gazetteer tags covering it ("-" when none)."""
        n = len(words)
        marks = [[] for _ in range(n)]
        for typ in self.lists:
            ents, first = self.entries[typ], self.index[typ]
            i = 0
            while i < n:
                longest = first.get(words[i], 0)
                found = 0
                for L in range(min(longest, n - i), 0, -1):
                    if tuple(words[i:i + L]) in ents:
                        found = L
                        break
                if found:
                    if found == 1:
                        marks[i].append("S-" + typ)
                    else:
                        marks[i].append("B-" + typ)
                        for j in range(i + 1, i + found - 1):
                            marks[j].append("I-" + typ)
                        marks[i + found - 1].append("E-" + typ)
                    i += found
                else:
                    i += 1
        return ["|".join(m) if m else "-" for m in marks]


# ---------------------------------------------------------------- reading

_IS_DOCSTART = methodcaller("startswith", "-DOCSTART-")


def _read_sentences(data, word_column=0, tag_column=-1):
    """(Sentence list, document id per sentence) from a path or file, from
    an iterable of Sentence objects, or from (words, tags) pairs or NLTK
    tagged sentences (each then a document of its own)."""
    if ftio.is_source(data):
        if ftio.is_path(data):
            name = os.fsdecode(os.fspath(data))
            if ftio.is_conllu(list(itertools.islice(ftio.read_lines(data), 20)), name):
                raise InputError("a span tagger learns from and scores column files (a word, its features "
                                 "and its tag on each line), not CoNLL-U", name)
        sents = list(ftio.read(data, "conll", tag_column, word_column))
    else:
        sents = list(data)
        if not all(isinstance(s, ftio.Sentence) for s in sents):
            sents = [ftio.Sentence(w, t, [[x] if t is None else [x, y] for x, y in zip(w, t or w)], [], [], 0)
                     for w, t in read_pairs(sents)]
    doc_ids = []
    doc = 0
    starts = [any(map(_IS_DOCSTART, s.lines)) for s in sents]
    seen_docstart = any(starts)
    for i, s in enumerate(sents):
        if seen_docstart:
            if starts[i]:
                doc += 1
        else:
            doc = i
        doc_ids.append(doc)
    return sents, doc_ids


def _typed_words(sents):
    """(words, span type or "O" per token) of tagged sentences: what
    ambiguity classes are collected from."""
    return [(s.words, [schemes.split_tag(t)[1] or "O" for t in s.tags]) for s in sents]


def _check_stored_columns(meta):
    """A ModelFormatError unless the stored column layout is one training
    writes: 0-based word, tag and feature columns of ``n_columns``, all
    distinct (new files are read by it)."""
    n = meta.get("n_columns")

    def index(v):
        return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n
    if not (isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 100_000):
        raise ModelFormatError(f"corrupt fasttag model: n_columns {n!r}")
    used = [meta.get("word_column", 0), meta.get("tag_column", n - 1)] + list(meta.get("feature_columns", []))
    if not all(index(v) for v in used) or len(set(used)) != len(used):
        raise ModelFormatError("corrupt fasttag model: the word, tag and feature columns do not add up")


def _resolve_columns(n_cols, word_column, tag_column, feature_columns):
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


def _bad_input(sentences, columns=None):
    """A TypeError naming the first token or feature column value that is
    not a str (sentence i, token j) and its type, or None.  The slow check,
    for after tagging has failed."""
    words = [s.words if hasattr(s, "words") else s for s in sentences]
    err = bad_token(words)
    if err is not None or columns is None:
        return err
    for i, cs in enumerate(columns):
        try:
            for j, c in enumerate(cs):
                for k, v in enumerate(c):
                    if not isinstance(v, str):
                        return TypeError(f"sentence {i}, token {j}: feature column value {k} must "
                                         f"be a str, not {type(v).__name__} ({v!r:.60})")
        except TypeError:
            return None
    return None



class SpanTagger(SequenceTask):
    """A trained chunker or named-entity tagger.  Create with :meth:`train`
    or :func:`fasttag.load`."""

    task = "spans"
    kind = "spans"
    featurizer = ("spans", 1)
    primary = "f1"
    def __init__(self, model, meta=None, gazetteer=None, ambiguity=None):
        super().__init__(model, meta)
        self.gazetteer = gazetteer
        self.ambiguity = ambiguity
        self._fold_ambiguity = None     # while training: the jackknifed tables, per fold

    # ------------------------------------------------------------ properties

    @property
    def scheme(self):
        """The scheme tags are read and written in (that of the training data)."""
        return self.meta.get("scheme", "iob2")

    @property
    def internal_scheme(self):
        """The scheme the model learns and decodes with ("bioes" or "iob2")."""
        return self.meta.get("internal_scheme", INTERNAL_SCHEME)

    @property
    def types(self):
        """The span types (NP, PER, ...), sorted."""
        return sorted({schemes.split_tag(t)[1] for t in self.model.tags} - {""})

    @property
    def feature_columns(self):
        return list(self.meta.get("feature_columns", []))

    # ------------------------------------------------------------ training


    # ------------------------------------------------------------ task hooks

    @classmethod
    def _task_name(cls, options):
        task = options.pop("task", None)
        if task not in (None, "chunk", "ner"):
            raise InputError(f"task must be 'chunk', 'ner' or None, not {task!r}")
        return task or "spans"

    @classmethod
    def _read(cls, data, opts, what):
        """(Sentence, document id) pairs of the non-empty sentences."""
        column = opts.get("column")
        if isinstance(column, str):
            raise InputError(f"a span tagger reads column files: the tag column is a number, not {column!r}")
        sents, docs = _read_sentences(data, opts.get("word_column", 0), -1 if column is None else column)
        return [(s, d) for s, d in zip(sents, docs) if s.words]

    @classmethod
    def _build(cls, examples, opts):
        sents = [s for s, _ in examples]
        if any(s.tags is None for s in sents):
            raise InputError("training data has no tag column")
        n_cols = len(sents[0].rows[0])
        word_column = opts["word_column"]
        tag_column = -1 if opts["column"] is None else opts["column"]
        feats = _resolve_columns(n_cols, word_column, tag_column, opts["feature_columns"])
        if opts["scheme"]:
            _check_declared_scheme([s.tags for s in sents], opts["scheme"])
        scheme = opts["scheme"] or schemes.detect_scheme(s.tags for s in sents)
        _check_tags(sents, scheme)
        gaz = None
        if opts["gazetteers"]:
            lists = {}
            for typ, src in dict(opts["gazetteers"]).items():
                lists[typ] = read_gazetteer(src) if ftio.is_path(src) \
                    else [" ".join(str(e).split()) for e in src]
            gaz = Gazetteer(lists)
        extras = list(DOCUMENT_EXTRAS) if opts["document_features"] else []
        if gaz is not None:
            extras.append("gaz")
        ambiguity = folds = None
        if opts["ambiguity_classes"]:
            extras.append("amb")
            ambiguity, folds = AmbiguityClasses.collect(_typed_words(sents), [d for _, d in examples])
        internal_scheme = opts["internal_scheme"]
        types = sorted({schemes.split_tag(t)[1] for s in sents
                        for t in schemes.convert(s.tags, scheme, internal_scheme)} - {""})
        prefixes = "BIES" if internal_scheme == "bioes" else "BI"
        tags = ["O"] + [f"{p}-{t}" for t in types for p in prefixes]
        clusters = None if opts["clusters"] is None else as_clusters(opts["clusters"], "option clusters")
        templates = opts["templates"] or default_templates(opts["task"], len(feats), extras, clusters is not None,
                                                          opts["algorithm"])
        # a cluster for words in capitals too, beside the document features (which
        # know headlines): +0.1 on CoNLL-2003 testa; none on CoNLL-2000 (no headlines)
        fallback = bool(opts["document_features"])
        model = SequenceModel(tags, SpanFeaturizer(len(feats), extras, clusters, capitals_fallback=fallback,
                                                   ambiguity=ambiguity),
                              templates,
                              allowed=schemes.allowed_mask(tags, internal_scheme), decoder=opts["decoder"])
        task = opts["task"]
        meta = {"task": None if task == "spans" else task, "scheme": scheme, "internal_scheme": internal_scheme,
                "word_column": word_column % n_cols, "tag_column": tag_column % n_cols,
                "n_columns": n_cols, "feature_columns": feats, "extras": extras,
                "document_features": bool(opts["document_features"])}
        self = cls(model, meta, gaz, ambiguity)
        self._fold_ambiguity = folds
        return self

    def _trained(self, opts):
        self._fold_ambiguity = None

    def _fold_tables(self, read_shards):
        if self._fold_ambiguity is None:
            return None
        examples = [e for shard in read_shards() for e in shard]    # document numbers count within a shard
        return AmbiguityClasses.collect(_typed_words([s for s, _ in examples]), [d for _, d in examples])[1]

    def _use_fold_tables(self, tables):
        self._fold_ambiguity = tables

    def _encode(self, examples, training=False):
        """Training sentences see the ambiguity classes of the other folds
        (first training only: fine-tuning data sees the stored ones)."""
        sents = [s for s, _ in examples]
        columns = self._columns(sents, [d for _, d in examples], jackknifed=training)
        index = self.model.tag_index
        tagged = [s.tags for s in sents if s.tags is not None]
        # gold ids are of the internal scheme's tags, from the scheme the
        # tags are written in (dev or test data may use another one)
        scheme = self.scheme if training or not tagged else _scoring_scheme(tagged, self.scheme)
        out = []
        for s, cols in zip(sents, columns):
            gold = None
            if s.tags is not None:
                gold = [index.get(t, -1) for t in schemes.convert(s.tags, scheme, self.internal_scheme)]
            out.append((s.words, cols, gold))
        return out

    def _gold_tags(self, examples):
        """Every tag of the entity types of ``examples`` (all prefixes of the
        internal scheme, so a new type can be decoded at any length)."""
        types = {schemes.split_tag(t)[1] for s, _ in examples if s.tags for t in s.tags} - {""}
        prefixes = "BIES" if self.internal_scheme == "bioes" else "BI"
        return {f"{p}-{t}" for t in types for p in prefixes} | {"O"}

    def _tags_added(self):
        self.model.allowed = schemes.allowed_mask(self.model.tags, self.internal_scheme)

    def _dev_scorer(self, examples):
        sents = [s for s, _ in examples]
        if any(s.tags is None for s in sents):
            raise InputError("development data has no tag column")
        gold = [list(s.tags) for s in sents]
        scheme = _scoring_scheme(gold, self.scheme)
        gold_spans = _span_set(gold, scheme)
        tags = self.model.tags

        def score(pred_ids):
            pred = _id_span_set(pred_ids, tags) if self.internal_scheme == "bioes" else None
            if pred is None:       # not a valid BIOES sequence: the slow way
                pred = _span_set([schemes.to_scheme([tags[i] for i in ids.tolist()], self.internal_scheme,
                                                    scheme) for ids in pred_ids], scheme)
            return metrics.span_f1(gold_spans, pred)
        return score

    def _reading_options(self, opts, given):
        out = dict(opts)
        if given.get("column") is None:
            out["column"] = self.meta.get("tag_column", -1)
        if given.get("word_column") is None:
            out["word_column"] = self.meta.get("word_column", 0)
        n = self.meta.get("n_columns")
        w = out["word_column"]
        if isinstance(w, int) and isinstance(n, int) and n > 0 and w % n in self.feature_columns:
            # the words would repeat a column the model reads beside them: a silent misreading
            raise InputError(f"the word column ({w}) is one of the feature columns the model reads "
                             f"beside the words ({', '.join(map(str, self.feature_columns))}, 0-based)")
        return out

    def _decode(self, examples, ids):
        """Tags in :attr:`scheme`, converted a whole batch at a time."""
        if not ids:
            return []
        bounds = np.concatenate(([0], np.cumsum([len(row) for row in ids])))
        return schemes.DecodedTags(self.model.tags, self.internal_scheme, self.scheme)(np.concatenate(ids), bounds)

    def _check_gold(self, examples):
        if any(s.tags is None for s, _ in examples):
            raise InputError("the evaluation data has no tag column")
        from .pos import foreign_tags
        # a tag with no type (PRON in a POS column) is counted as itself
        foreign_tags(Counter(schemes.split_tag(t)[1] or t for s, _ in examples for t in s.tags if t != "O"),
                     self.types, "span type")

    def _score(self, examples, outputs, opts):
        if not examples:
            raise InputError("the evaluation data holds no sentences")
        self._check_gold(examples)
        gold = [list(s.tags) for s, _ in examples]
        if opts.get("scheme"):
            _check_declared_scheme(gold, opts["scheme"])
        scheme = opts.get("scheme") or _scoring_scheme(gold, self.scheme)
        pred = [schemes.to_scheme(p, self.scheme, scheme) for p in outputs]
        result = metrics.score_spans(gold, pred, scheme)
        result["scheme"] = scheme
        result["sentences"] = len(examples)
        return result

    # ------------------------------------------------------------ tagging

    def _columns(self, sents, doc_ids=None, columns=None, jackknifed=False):
        """Per sentence, per token: the featurizer's column values
        (``jackknifed``: the ambiguity classes of the training folds, as a
        last column); None per sentence when the model takes none."""
        extras = self.meta.get("extras", [])
        feats = self.feature_columns
        if columns is None and not feats and (not extras or (extras == ["amb"] and not jackknifed)):
            return [None] * len(sents)      # the words are all (their classes: the featurizer's)
        words = [s.words if hasattr(s, "words") else list(s) for s in sents]
        if columns is None:
            if feats:
                pick = itemgetter(*feats)       # (a tuple of the columns: len(feats) > 1)
                columns = []
                for s in sents:
                    rows = getattr(s, "rows", None)
                    if rows is None:
                        raise InputError(f"this model needs {len(feats)} feature columns per token")
                    if rows and len(rows[0]) <= max(feats):
                        raise InputError(f"the sentence starting on line {s.start_line} has "
                                         f"{len(rows[0])} column(s); this model reads feature "
                                         f"columns {', '.join(map(str, feats))} (0-based)")
                    columns.append([pick(r) for r in rows] if len(feats) > 1
                                   else [(r[feats[0]],) for r in rows])
            else:
                columns = [[()] * len(w) for w in words]
        else:
            columns = [[tuple(c) for c in cs] for cs in columns]
            for w, cs in zip(words, columns):
                if len(cs) != len(w) or any(len(c) != len(feats) for c in cs):
                    raise InputError(f"this model needs {len(feats)} feature columns per token")
        if not extras:
            return columns
        if doc_ids is None:
            doc_ids = list(range(len(words)))
        gets = None                 # training: per sentence, the lookup of its ambiguity classes
        if "amb" in extras:
            if self.ambiguity is None:
                raise ModelFormatError("corrupt fasttag model: ambiguity class features without the classes")
            if jackknifed:          # else they are the featurizer's word-type attribute
                folds = self._fold_ambiguity
                gets = [self.ambiguity.classes.get] * len(words) if folds is None \
                    else [folds[d % FOLDS].classes.get for d in doc_ids]
        doc_extras = [e for e in extras if e in DOCUMENT_EXTRAS]
        if doc_extras:
            derived = _document_extras(words, doc_ids, doc_extras)
            if gets is not None and "gaz" not in extras:    # the classes too, in the same pass
                return [[(*c, *d, get(w, UNKNOWN)) for c, d, w in zip(cs, ds, ws)]
                        for cs, ds, ws, get in zip(columns, derived, words, gets)]
            columns = [[c + d for c, d in zip(cs, ds)] for cs, ds in zip(columns, derived)]
        if "gaz" in extras:
            if self.gazetteer is None:
                raise ModelFormatError("corrupt fasttag model: gazetteer features without a gazetteer")
            columns = [[c + (g,) for c, g in zip(cs, self.gazetteer.tags(w))]
                       for cs, w in zip(columns, words)]
        if gets is not None:
            columns = [[(*c, get(w, UNKNOWN)) for c, w in zip(cs, ws)]
                       for cs, ws, get in zip(columns, words, gets)]
        return columns

    def _model_inputs(self, sents, doc_ids=None, columns=None):
        """(words, feature columns) of each sentence, for the model."""
        cols = self._columns(sents, doc_ids, columns)
        words = [s.words if hasattr(s, "words") else list(s) for s in sents]
        return list(zip(words, cols))

    def _for_sentences(self, sentences, columns, documents, predict):
        """``predict(sentences, their model inputs)`` of the non-empty
        sentences, in place in a list with None for empty ones; inputs are
        checked here."""
        sentences = token_lists(sentences, keep_sentences=True)
        for name, per_sentence in (("columns", columns), ("documents", documents)):
            if per_sentence is not None and len(per_sentence) != len(sentences):
                raise ValueError(f"{name} has {len(per_sentence)} entries for {len(sentences)} sentences: "
                                 f"give one per sentence")
        if documents is None and sentences and all(isinstance(s, ftio.Sentence) for s in sentences):
            _, documents = _read_sentences(sentences)
        out = [None] * len(sentences)
        idx = [i for i, s in enumerate(sentences) if len(s.words if hasattr(s, "words") else s)]
        if not idx:
            return out
        sub = [sentences[i] for i in idx]
        docs = None if documents is None else [documents[i] for i in idx]
        cols = None if columns is None else [columns[i] for i in idx]
        try:
            pred = predict(sub, self._model_inputs(sub, docs, cols))
        except (TypeError, AttributeError):
            # inputs are checked only where a failure shows: find the culprit
            err = _bad_input(sentences, columns)
            if err is None:
                raise
            raise err from None
        for i, p in zip(idx, pred):
            out[i] = p
        return out

    def tag_sents(self, sentences: Iterable[list[str]], columns: list | None = None,
                  documents: list | None = None, n_best: int | None = None, n_threads: int = 1) -> list:
        """Tags (in :attr:`scheme`) of many sentences: lists of tokens or
        Sentence objects (whose rows give the feature columns).
        ``columns``: per sentence, per token, the feature column values
        (when the sentences are token lists and the model has feature
        columns).  ``documents``: a document id per sentence (default: each
        sentence alone, or ``-DOCSTART-`` lines of Sentence objects).  With
        ``n_best=k``: per sentence the k best tag sequences as ``(tags,
        score)`` pairs, best first.  ``n_threads``: tag chunks of about
        50,000 tokens on that many threads (0: every core), with the same
        output as one thread (:mod:`fasttag.parallel`); the document and
        column features are computed first, in the calling thread."""
        n_threads = parallel.check_threads(n_threads)
        pred = self._for_sentences(sentences, columns, documents,
                                   lambda sents, inputs: self._predict(sents, n_threads, n_best, inputs))
        if n_best is None:
            return [[] if p is None else p for p in pred]
        return [[([], 0.0)] if p is None else p for p in pred]

    def tag(self, tokens: list[str], columns: list | None = None, n_best: int | None = None) -> list:
        """Tags of one sentence (in :attr:`scheme`), ``tokens``: a list of
        token strings (a str is a TypeError) or a Sentence object;
        ``columns``: per token, its feature column values, and ``n_best``,
        as in :meth:`tag_sents`."""
        return self.tag_sents([one_sentence(tokens, "tag")], None if columns is None else [columns],
                              n_best=n_best)[0]

    def marginals(self, sentences, columns=None, documents=None):
        """Per sentence an ``n x T`` array of tag probabilities at each
        token, columns in the order of ``self.model.tags`` (the internal
        scheme's tags), with the calibrated :attr:`temperature`."""
        T = len(self.model.tags)
        pred = self._for_sentences(sentences, columns, documents,
                                   lambda sents, inputs: self._marginals(sents, inputs))
        return [np.zeros((0, T)) if p is None else p for p in pred]

    def explain(self, tokens, columns=None, top=5):
        """Why each token of one sentence got its (internal-scheme) tag: as
        :meth:`fasttag.Tagger.explain`."""
        tokens = one_sentence(tokens, "explain")
        context = self._columns([tokens], None, None if columns is None else [columns])[0]
        return inspection.explain(self.model, list(tokens), context, self.temperature, top)

    def spans(self, tokens: list[str], columns: list | None = None, with_confidence: bool = False) -> list:
        """The predicted spans of one sentence, ``tokens`` (and ``columns``
        as for :meth:`tag`): (type, start, end) with end exclusive.
        ``with_confidence``: (type, start, end, probability),
        the probability that the model gives this span exactly, over
        every tag sequence (calibrated by :attr:`temperature`)."""
        tokens = one_sentence(tokens, "spans")
        if not with_confidence:
            return schemes.spans(self.tag(tokens, columns), self.scheme)
        names = self.model.tags

        def spans_with_probability(inputs):
            out = []
            for ids, lat in zip(self.model.predict_ids(inputs), confidence.lattices(self.model, inputs)):
                internal = [names[i] for i in ids.tolist()]
                found = []
                for typ, start, end in schemes.spans(internal, self.internal_scheme):
                    fixed = {i: [int(ids[i])] for i in range(start, end)}
                    if self.internal_scheme != "bioes" and end < len(ids):
                        # IOB2: the span ends only where the next tag does not continue it
                        fixed[end] = [j for j, t in enumerate(names) if t != "I-" + typ]
                    found.append((typ, start, end, lat.probability(fixed, self.temperature)))
                out.append(found)
            return out
        cols = None if columns is None else [columns]
        return self._for_sentences([tokens], cols, None, lambda _, inputs: spans_with_probability(inputs))[0] or []

    SENTENCES_PER_BATCH = 5000
    DOCUMENT_BATCH = 1000

    def tag_text(self, text, tokenizer=None):
        """Tag raw ``text`` (a str): a list of sentences, each a list of
        :class:`fasttag.text.rawtext.Token` ``(text, tag, start, end)``, tags
        in :attr:`scheme`, offsets into ``text``.  Sentences and tokens
        come from ``tokenizer`` (a :class:`fasttag.Tokenizer` or a model
        path; default: the bundled English tokenizer).  Each sentence is
        tagged as a document of its own."""
        return rawtext.tag_text(self.tag_sents, text, tokenizer_of(tokenizer))

    def entities(self, text, tokenizer=None):
        """The spans found in raw ``text`` (a str), in text order: a list
        of :class:`fasttag.text.rawtext.Span` ``(label, text, start, end)``
        with character offsets into ``text``."""
        out = []
        for tokens in rawtext.tag_text(self.tag_sents, text, tokenizer_of(tokenizer), "entities"):
            for label, i, j in schemes.spans([t.tag for t in tokens], self.scheme):
                a, b = tokens[i].start, tokens[j - 1].end
                out.append(rawtext.Span(label, text[a:b], a, b))
        return out

    def _records(self, source, json, n_threads, format=None, tokenizer=None, entities=False, nbest=None):
        """The records of :meth:`tag_file`.  ``format``: None (or "raw")
        reads raw text cut by ``tokenizer`` (default: the bundled English
        tokenizer); "text": pretokenized, a sentence a line; "conll": a
        column file, written back with the predicted tag appended
        (documents, ``-DOCSTART-``, tagged whole).  Text gives ``word/TAG``
        tokens, or with ``entities`` a line per span.  JSON Lines have tags
        in IOB2, ``"scheme": "iob2"``, whatever :attr:`scheme` is;
        ``nbest`` applies to text input."""
        if format not in (None, "raw", "text", "conll"):
            raise InputError(f"a span tagger reads raw text, pretokenized text or column files "
                             f"(option format conll), not {format}")
        name, fmt, lines, close = ftio.open_tagging_input(source, format)
        try:
            if fmt == "conllu":
                raise InputError("a span tagger reads raw text, pretokenized text or column files "
                                 "(option format conll), not CoNLL-U", name)
            if fmt == "conll" and nbest is not None:
                raise InputError("option nbest applies to text input (raw or pretokenized)")
            if fmt == "conll" and entities:
                raise InputError("entity lines need text input: use option json or tag column files "
                                 "without entities")
            if fmt != "conll" and self.feature_columns:
                n = len(self.feature_columns)
                raise InputError(f"the model reads {n} feature column{'s' if n > 1 else ''} beside the words "
                                 f"(it was trained on a column file): tag a column file with "
                                 f"option format conll", name)
        except BaseException:
            close()
            raise

        def make(sent, result, line=None):
            tags = result if nbest is None else result[0][0]
            if not (json or entities):
                return output.Record(sent.words, tags, sentence=sent, ends_line=getattr(sent, "ends_line", True))
            found = schemes.spans(tags, self.scheme)
            if not json:
                return output.Record(sent.words, tags, sent.line, sent.offsets, sent.text, found)
            alternatives = None if nbest is None else output.alternatives(
                [(self._json_tags(ts), score) for ts, score in result],
                lambda ts: schemes.spans(ts, output.SPAN_SCHEME))
            return output.Record(sent.words, self._json_tags(tags, found), line or sent.line,
                                 getattr(sent, "offsets", None), getattr(sent, "text", None), found, alternatives,
                                 scheme=output.SPAN_SCHEME)
        if fmt == "conll":
            sentences = ftio.parse_lines(lines, name, "conll", None, self.meta.get("word_column", 0), tags=False)
            records = self._tagged(self._column_batches(sentences), self.tag_sents,
                                   lambda sent, tags: make(sent, tags, sent.start_line), n_threads)
        else:
            records = self._text_records(lines, fmt, tokenizer, json, nbest, n_threads, make)
        style = "json" if json else "conll" if fmt == "conll" else "entities" if entities else "tagged"
        return closed_after(records, close), {"style": style}

    def _json_tags(self, tags, found=None):
        """``tags`` (in :attr:`scheme`, their spans ``found``) in the scheme
        of JSON records, IOB2: what spaCy and most readers expect, where
        the training files may have been IOB1 or BIOES."""
        if found is None:
            found = schemes.spans(tags, self.scheme)
        return schemes.encode(found, len(tags), output.SPAN_SCHEME)

    def _column_batches(self, sentences):
        """Lists of the sentences of a column file, read lazily, cut at
        document starts so that document features see whole documents."""
        batch, documents = [], False
        for sent in sentences:
            starts_doc = any(line.startswith("-DOCSTART-") for line in sent.lines)
            if batch and ((starts_doc and len(batch) >= self.DOCUMENT_BATCH)
                          or (not documents and len(batch) >= self.SENTENCES_PER_BATCH)):
                yield batch
                batch = []
            documents = documents or starts_doc
            batch.append(sent)
        if batch:
            yield batch

    # ------------------------------------------------------------ storage

    def _task_parts(self):
        spec = {"n_input_columns": len(self.feature_columns), "extras": list(self.meta.get("extras", [])),
                **cluster_spec(self.model.featurizer)}
        if self.model.featurizer.words.capitals_fallback:
            spec["capitals_fallback"] = True       # absent: models from before it, unchanged
        arrays = cluster_arrays(self.model.featurizer)
        if self.ambiguity is not None:
            arrays["ambiguity"] = self.ambiguity.to_array()
        header = {"gazetteers": self.gazetteer.lists} if self.gazetteer is not None else {}
        return {**header, "featurizer": spec}, arrays

    @classmethod
    def _featurizer_from(cls, spec, header, arrays, meta):
        n_in = spec.get("n_input_columns")
        if not isinstance(n_in, int) or isinstance(n_in, bool) or not 0 <= n_in <= 64:
            raise ModelFormatError(f"corrupt fasttag model: bad span tagger header (n_input_columns {n_in!r})")
        extras = spec.get("extras", [])
        if not isinstance(meta.get("feature_columns", []), list):
            raise ModelFormatError("corrupt fasttag model: feature_columns is not a list")
        # train() writes the extras in one of these orders, once in the
        # featurizer and once in meta (which the column code reads)
        if extras not in _EXTRAS_LAYOUTS or meta.get("extras", []) != extras:
            raise ModelFormatError("corrupt fasttag model: span tagger extras do not add up")
        if len(meta.get("feature_columns", [])) != n_in or meta.get("scheme") not in schemes.SCHEMES \
                or meta.get("internal_scheme", INTERNAL_SCHEME) not in ("bioes", "iob2") \
                or meta.get("task") not in (None, "chunk", "ner"):
            raise ModelFormatError("corrupt fasttag model: span tagger settings do not add up")
        _check_stored_columns(meta)
        clusters = stored_clusters(spec, arrays)
        fallback = spec.get("capitals_fallback", False)
        if type(fallback) is not bool or (fallback and clusters is None):
            raise ModelFormatError("corrupt fasttag model: capitals_fallback without clusters or not a bool")
        if ("amb" in extras) != ("ambiguity" in arrays):
            raise ModelFormatError("corrupt fasttag model: the ambiguity classes and the features do not agree")
        ambiguity = AmbiguityClasses.from_array(arrays["ambiguity"]) if "ambiguity" in arrays else None
        return SpanFeaturizer(n_in, extras, clusters, capitals_fallback=fallback, ambiguity=ambiguity)

    @classmethod
    def _load(cls, header, arrays, model, meta):
        lists = header.get("gazetteers")
        gaz = Gazetteer({str(t): [str(e) for e in v] for t, v in lists.items()}) if lists else None
        if "gaz" in meta.get("extras", []) and gaz is None:
            raise ModelFormatError("corrupt fasttag model: gazetteer features without a gazetteer")
        classes = model.featurizer.words.word_classes        # read with the featurizer
        ambiguity = None if classes is None else AmbiguityClasses(classes[1])
        internal = meta.get("internal_scheme", INTERNAL_SCHEME)
        for t in model.tags:
            p, _ = schemes.split_tag(t)
            if p not in ("O", "B", "I", "E", "S") or (internal == "iob2" and p in ("E", "S")):
                raise ModelFormatError(f"corrupt fasttag model: {t!r} is not a {internal.upper()} tag")
        return cls(model, meta, gaz, ambiguity)


def _span_set(sequences, scheme):
    """Spans of many sequences as one set of (sentence, type, start, end)."""
    return {(i,) + sp for i, seq in enumerate(sequences) for sp in schemes.spans(seq, scheme)}


def _id_span_set(pred_ids, tags):
    """The spans of valid BIOES tag-id sequences as ``_span_set`` gives them
    (None when a sequence is not valid), computed with numpy."""
    if not pred_ids:
        return set()
    prefix = np.array([t[0] for t in tags])
    types = [t[2:] for t in tags]
    ids = np.concatenate(pred_ids)
    lengths = np.array([len(x) for x in pred_ids])
    sent = np.repeat(np.arange(len(pred_ids)), lengths)
    offset = np.repeat(np.cumsum(lengths) - lengths, lengths)
    p = prefix[ids]
    starts = np.flatnonzero((p == "B") | (p == "S"))
    ends = np.flatnonzero((p == "E") | (p == "S"))
    if len(starts) != len(ends) or np.any(ends < starts) or np.any(sent[starts] != sent[ends]):
        return None
    return {(int(sent[a]), types[ids[a]], int(a - offset[a]), int(b - offset[a]) + 1)
            for a, b in zip(starts.tolist(), ends.tolist())}


def _check_tags(sents, scheme):
    allowed = {"iob1": "BIO", "iob2": "BIO", "bioes": "BIOES"}[scheme]
    for i, s in enumerate(sents):
        for t in s.tags:
            p, typ = schemes.split_tag(t)
            fault = tag_fault(t)
            if p not in allowed or (p == "O") != (typ == "") or fault:
                where = f"sentence starting on line {s.start_line}" if s.start_line else f"sentence {i}, 0-based"
                raise InputError(f"tag {ascii(t) if fault else repr(t)} ({where}) "
                                 + (f"{fault}" if fault else f"is not a tag of the {scheme.upper()} scheme"))


def _check_declared_scheme(gold, scheme):
    """An InputError when gold tags plainly are not in the ``scheme`` the
    user named (scores read in the wrong scheme are silently off): IOB1
    read as IOB2 (most chunks open with I-), or IOB tags read as BIOES."""
    found = schemes.detect_scheme(gold)
    if (scheme, found) in (("iob2", "iob1"), ("bioes", "iob1"), ("bioes", "iob2")) and \
            any(t != "O" for ts in gold for t in ts):
        raise InputError(f"--scheme {scheme}: the gold tags read as {found.upper()}, not {scheme.upper()}: "
                         f"give --scheme {found}, or leave --scheme out to detect it")


def _scoring_scheme(gold, trained):
    """The scheme to read gold tags in: the one they are written in, or,
    for gold without a chunk to tell IOB1 from IOB2 by, the one the model
    was trained on.  (Span F1 is the same either way; the token accuracy
    compares tags in this scheme.)"""
    detected = schemes.detect_scheme(gold)
    if detected != "iob2" or any(t != "O" for ts in gold for t in ts):
        return detected
    return trained if trained in ("iob1", "iob2") else detected

