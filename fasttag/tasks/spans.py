"""Span tagging: chunking (CoNLL-2000) and named entities (CoNLL-2003).

A :class:`SpanTagger` reads IOB1, IOB2 or BIOES, learns BIOES, decodes
with Viterbi constrained to valid sequences and writes the training files'
scheme back (docs/tasks.md; features: :mod:`fasttag.features.spans`).
"""
from __future__ import annotations

import itertools
import os
from collections import Counter
from operator import itemgetter, methodcaller
from typing import Iterable

import numpy as np

from ..text import formats as ftio
from ..text.formats import read_pairs
from ..model import confidence, inspection
from ..text import metrics, output, rawtext, schemes, scripts
from .. import parallel
from ..features.ambiguity import FOLDS, UNKNOWN, AmbiguityClasses
from ..errors import InputError, ModelFormatError
from ..features.clusters import as_clusters, cluster_arrays, cluster_spec, stored_clusters
from ..features.gazetteers import Gazetteer, read_gazetteer
from ..features.spans import (DOCUMENT_EXTRAS, EXTRAS_LAYOUTS, SpanFeaturizer, default_templates, document_extras,
                              resolve_columns)
from ..features.words import bad_token, one_sentence, token_lists
from ..model.modelfile import header_int
from ..model.sequence import SequenceModel, tag_fault
from ..model import registry
from .base import SequenceTask
from .rawtext_tokenizer import tokenizer_of
from .records import closed_after

INTERNAL_SCHEME = "bioes"      # the default scheme learned with

__all__ = ["SpanTagger"]


# ---------------------------------------------------------------- reading

_IS_DOCSTART = methodcaller("startswith", "-DOCSTART-")


def _read_sentences(data, word_column=0, tag_column=-1):
    """(Sentence list, document id per sentence) from a path or file,
    Sentence objects, or (words, tags) pairs (each a document of its own)."""
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
    starts = [any(map(_IS_DOCSTART, s.lines)) for s in sents]
    doc_ids = list(itertools.accumulate(map(int, starts))) if any(starts) else list(range(len(sents)))
    return sents, doc_ids


def _typed_words(sents):
    """(words, span type or "O" per token): what ambiguity classes are collected from."""
    return [(s.words, [schemes.split_tag(t)[1] or "O" for t in s.tags]) for s in sents]


def _check_stored_columns(meta):
    """A ModelFormatError unless the stored columns are distinct and within
    ``n_columns`` (new files are read by them)."""
    n = meta.get("n_columns")
    if not header_int(n, 1, 100_000):
        raise ModelFormatError(f"corrupt fasttag model: n_columns {n!r}")
    used = [meta.get("word_column", 0), meta.get("tag_column", n - 1)] + list(meta.get("feature_columns", []))
    if not all(header_int(v, 0, n - 1) for v in used) or len(set(used)) != len(used):
        raise ModelFormatError("corrupt fasttag model: the word, tag and feature columns do not add up")


def _bad_input(sentences, columns=None):
    """A TypeError naming the first token or feature column value that is
    not a str, or None: the slow check, for after tagging has failed."""
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


#: The option groups of span tasks (chunk, ner, and "spans": one trained with no task named).
SPAN_OPTIONS = ("templates", "tag set", "columns", "spans", "clusters")


@registry.task("ner", title="named-entity", help="named-entity tagger from column files", options=SPAN_OPTIONS,
               defaults={"epochs": 15, "algorithm": "mira", "k": 3, "feature_columns": (), "document_features": False,
                         "ambiguity_classes": True}, task="ner")
@registry.task("chunk", title="chunker", help="chunker from column files", options=SPAN_OPTIONS,
               defaults={"epochs": 8, "algorithm": "mira", "k": 3, "document_features": False,
                         "ambiguity_classes": False}, task="chunk")
@registry.task("spans", title="span tagger", options=SPAN_OPTIONS,
               defaults={"document_features": True, "ambiguity_classes": False})
class SpanTagger(SequenceTask):
    """A trained chunker or named-entity tagger.  Create with :meth:`train`
    or :func:`fasttag.load`."""

    task = "spans"
    kind = "spans"
    commands = ("tag", "ner")
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

    # ------------------------------------------------------------ task hooks

    def _known_words(self, words):
        table = getattr(self.ambiguity, "classes", None)        # the words of its ambiguity classes
        return [w in table for w in words] if table and len(table) >= scripts.MIN_VOCABULARY else None

    @classmethod
    def _prepare_options(cls, options_):
        """Word clusters, and the gazetteers read before any work:
        ``gazetteers`` maps each type to a file's path, to several paths
        (``pathlib.Path`` objects, their entries joined) or to its entries."""
        options_ = super()._prepare_options(options_)
        given = options_.get("gazetteers")
        if given:
            if not isinstance(given, dict):
                raise TypeError(f"gazetteers must be a dict type -> file path or entries, not {type(given).__name__}")
            lists = {}
            for typ, src in given.items():
                if ftio.is_path(src):
                    lists[typ] = read_gazetteer(src)
                elif isinstance(src, (list, tuple)) and src and all(isinstance(e, os.PathLike) for e in src):
                    lists[typ] = [e for path in src for e in read_gazetteer(path)]
                else:
                    lists[typ] = [" ".join(str(e).split()) for e in src]
            options_["gazetteers"] = lists
        return options_

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
        feats = resolve_columns(n_cols, word_column, tag_column, opts["feature_columns"])
        if opts["scheme"]:
            _check_declared_scheme([s.tags for s in sents], opts["scheme"])
        scheme = opts["scheme"] or schemes.detect_scheme(s.tags for s in sents)
        _check_tags(sents, scheme)
        gaz = Gazetteer(opts["gazetteers"]) if opts["gazetteers"] else None
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
        # a cluster for words in capitals too, beside the document features (which know headlines)
        fallback = bool(opts["document_features"])
        model = SequenceModel(tags, SpanFeaturizer(len(feats), extras, clusters, capitals_fallback=fallback,
                                                   ambiguity=ambiguity),
                              templates,
                              allowed=schemes.allowed_mask(tags, internal_scheme), decoder=opts["decoder"])
        model.allowed_scheme = internal_scheme
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
        from ..text.metrics import foreign_tags
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
        (``jackknifed``: the training folds' ambiguity classes as a last
        column); None per sentence when the model takes none."""
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
            derived = document_extras(words, doc_ids, doc_extras)
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
        sentences, in place in a list with None for empty ones."""
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
        ``columns``: per sentence, per token, the feature column values (for
        token lists, when the model has feature columns).  ``documents``: a
        document id per sentence (default: each sentence alone, or the
        ``-DOCSTART-`` lines of Sentence objects).  ``n_best=k``: per
        sentence the k best ``(tags, score)`` pairs, best first.
        ``n_threads``: as :meth:`fasttag.Tagger.tag_sents` (0: every core)."""
        n_threads = parallel.check_threads(n_threads)

        def predict(sents, inputs):
            self.script_check.sampled((" ".join(getattr(s, "words", s)) for s in sents), stacklevel=4)
            return self._predict(sents, n_threads, n_best, inputs)
        pred = self._for_sentences(sentences, columns, documents, predict)
        if n_best is None:
            return [[] if p is None else p for p in pred]
        return [[([], 0.0)] if p is None else p for p in pred]

    def tag(self, tokens: list[str], columns: list | None = None, n_best: int | None = None) -> list:
        """Tags of one sentence (in :attr:`scheme`): ``tokens`` a list of
        token strings or a Sentence object; ``columns`` (per token) and
        ``n_best`` as in :meth:`tag_sents`."""
        return self.tag_sents([one_sentence(tokens, "tag")], None if columns is None else [columns],
                              n_best=n_best)[0]

    def marginals(self, sentences, columns=None, documents=None):
        """Per sentence an ``n x T`` array of tag probabilities (columns: the
        internal scheme's ``self.model.tags``), calibrated by :attr:`temperature`."""
        T = len(self.model.tags)
        pred = self._for_sentences(sentences, columns, documents,
                                   lambda sents, inputs: self._marginals(sents, inputs))
        return [np.zeros((0, T)) if p is None else p for p in pred]

    def explain(self, tokens, columns=None, top=5):
        """Why each token got its (internal-scheme) tag: as :meth:`fasttag.Tagger.explain`."""
        tokens = one_sentence(tokens, "explain")
        context = self._columns([tokens], None, None if columns is None else [columns])[0]
        return inspection.explain(self.model, list(tokens), context, self.temperature, top)

    def spans(self, tokens: list[str], columns: list | None = None, with_confidence: bool = False) -> list:
        """The predicted spans of one sentence (``tokens`` and ``columns`` as
        for :meth:`tag`): (type, start, end) with end exclusive;
        ``with_confidence`` adds the calibrated probability of this span
        exactly, over every tag sequence."""
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
        in :attr:`scheme`, offsets into ``text``.  ``tokenizer``: a
        :class:`fasttag.Tokenizer` or model path (default: the bundled
        English one).  Each sentence is a document of its own."""
        return rawtext.tag_text(self.tag_sents, text, tokenizer_of(tokenizer))

    def entities(self, text, tokenizer=None):
        """The spans found in raw ``text``, in order: :class:`fasttag.text.rawtext.Span`
        ``(label, text, start, end)`` with character offsets into ``text``."""
        out = []
        for tokens in rawtext.tag_text(self.tag_sents, text, tokenizer_of(tokenizer), "entities"):
            for label, i, j in schemes.spans([t.tag for t in tokens], self.scheme):
                a, b = tokens[i].start, tokens[j - 1].end
                out.append(rawtext.Span(label, text[a:b], a, b))
        return out

    def _records(self, source, json, n_threads, format=None, tokenizer=None, entities=False, nbest=None):
        """The records of :meth:`tag_file`: raw text (``format`` None or "raw"),
        pretokenized ("text") or a column file ("conll", documents tagged
        whole); JSON records have IOB2 tags whatever :attr:`scheme` is."""
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
                return output.Record(sent.words, tags, getattr(sent, "line", None), sentence=sent,
                                     ends_line=getattr(sent, "ends_line", True))
            found = schemes.spans(tags, self.scheme)
            if not json:
                return output.Record(sent.words, tags, sent.line, sent.offsets, sent.text, found)
            alternatives = None if nbest is None else output.alternatives(
                [(self._json_tags(ts), score) for ts, score in result],
                lambda ts: schemes.spans(ts, output.SPAN_SCHEME))
            return output.Record(sent.words, self._json_tags(tags, found), line or sent.line,
                                 getattr(sent, "offsets", None), getattr(sent, "text", None), found, alternatives,
                                 scheme=output.SPAN_SCHEME, multiword=getattr(sent, "multiword", None))
        if fmt == "conll":
            sentences = ftio.parse_lines(lines, name, "conll", None, self.meta.get("word_column", 0), tags=False)
            records = self._tagged(self._column_batches(sentences), self.tag_sents,
                                   lambda sent, tags: make(sent, tags, sent.start_line), n_threads)
        else:
            records = self._text_records(lines, fmt, tokenizer, json, nbest, n_threads, make, self.tag_sents)
        style = "json" if json else "conll" if fmt == "conll" else "entities" if entities else output.text_style(fmt)
        return closed_after(records, close), {"style": style}

    def _json_tags(self, tags, found=None):
        """``tags`` (in :attr:`scheme`, their spans ``found``) in IOB2, the
        scheme of JSON records: what spaCy and most readers expect."""
        if found is None:
            found = schemes.spans(tags, self.scheme)
        return schemes.encode(found, len(tags), output.SPAN_SCHEME)

    def _column_batches(self, sentences):
        """Lists of the sentences of a column file, read lazily, cut at
        document starts so that document features see whole documents."""
        batch, documents = [], False
        for sent in sentences:
            starts_doc = any(map(_IS_DOCSTART, sent.lines))
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
        if not header_int(n_in, 0, 64):
            raise ModelFormatError(f"corrupt fasttag model: bad span tagger header (n_input_columns {n_in!r})")
        extras = spec.get("extras", [])
        if not isinstance(meta.get("feature_columns", []), list):
            raise ModelFormatError("corrupt fasttag model: feature_columns is not a list")
        # train() writes the extras in one of these orders, once in the
        # featurizer and once in meta (which the column code reads)
        if extras not in EXTRAS_LAYOUTS or meta.get("extras", []) != extras:
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
        model.allowed_scheme = internal
        return cls(model, meta, gaz, ambiguity)


def _span_set(sequences, scheme):
    """Spans of many sequences as one set of (sentence, type, start, end)."""
    return {(i,) + sp for i, seq in enumerate(sequences) for sp in schemes.spans(seq, scheme)}


def _id_span_set(pred_ids, tags):
    """``_span_set`` of valid BIOES tag-id sequences in numpy (None when one is not valid)."""
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
        raise InputError(f"option scheme={scheme!r}: the gold tags read as {found.upper()}, not {scheme.upper()}: "
                         f"give option scheme={found!r}, or leave option scheme out to detect it")


def _scoring_scheme(gold, trained):
    """The scheme gold tags are written in, or, where no chunk tells IOB1
    from IOB2, the model's (the token accuracy compares tags in it)."""
    detected = schemes.detect_scheme(gold)
    if detected != "iob2" or any(t != "O" for ts in gold for t in ts):
        return detected
    return trained if trained in ("iob1", "iob2") else detected

