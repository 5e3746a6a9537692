"""Morphological features (UFeats): the FEATS bundle of each word as one
tag, predicted from the POS tagger's word features and the word's UPOS
(gold in training, a tagger's at run time).

The bundle as one tag scored the best UFeats on every treebank measured,
ahead of a classifier per feature (at a tenth of its training time) and of
a joint UPOS+FEATS tag (docs/lab-notes.md).  A bundle
is written in UD order (features sorted case-insensitively) and is always
one the training data saw with the word's UPOS: a predicted bundle the
UPOS never took gives way to the best-scored one it did.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

import numpy as np

from ..errors import InputError, ModelFormatError
from ..features.words import WordFeaturizer, bad_token, one_sentence
from ..model import confidence, registry
from ..model.sequence import SequenceModel
from . import wordinput
from .base import SequenceTask

#: The universal features of the CoNLL 2018 shared task's UFeats score (the
#: rest, language-specific or layered like ``Number[psor]``, are left out).
UNIVERSAL_FEATURES = frozenset((
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy", "Number", "Case",
    "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice", "Evident", "Polarity", "Person",
    "Polite"))

NO_FEATURES = "_"
_FEATURE = re.compile(r"[A-Za-z0-9]+(\[[A-Za-z0-9]+\])?=[A-Za-z0-9]+(,[A-Za-z0-9]+)*")


def canonical(bundle):
    """``bundle`` (a FEATS string) in UD order: features sorted by name,
    case-insensitively, and the values of one feature too.  A ValueError for a string that is not ``_`` or
    ``Feat=Val|...``."""
    if bundle == NO_FEATURES:
        return bundle
    feats = bundle.split("|")
    if not all(_FEATURE.fullmatch(f) for f in feats):
        raise ValueError(f"FEATS {bundle!r} is not '_' or Feat=Val|Feat=Val...")
    names = [f.partition("=")[0] for f in feats]
    if len(set(names)) != len(names):
        raise ValueError(f"FEATS {bundle!r} names a feature twice")
    feats = [f"{name}={','.join(sorted(f.partition('=')[2].split(','), key=lambda v: (v.lower(), v)))}"
             for name, f in zip(names, feats)]
    return "|".join(sorted(feats, key=lambda f: (f.partition("=")[0].lower(), f)))


def universal(bundle):
    """The universal features of a bundle, as the shared-task script compares them."""
    return frozenset(f for f in bundle.split("|") if f.partition("=")[0] in UNIVERSAL_FEATURES)


@registry.task("morph", title="morphologizer", help="morphological features from CoNLL-U (FORM, UPOS, FEATS)",
               options=("templates", "allow_new_tags"), defaults={"epochs": 10})
class Morphologizer(SequenceTask):
    """Trained morphological features: :meth:`train` on CoNLL-U or
    :func:`fasttag.load`.  It reads each word's UPOS (gold in training, a
    tagger's at run time)."""

    task = "morph"
    kind = "morphologizer"
    commands = ("tag",)
    featurizer = ("word", 1)
    primary = "accuracy"
    local_features = True

    def __init__(self, model, meta=None, allowed=None):
        super().__init__(model, meta)
        self._allowed = {u: frozenset(ids) for u, ids in (allowed or {}).items()}   # UPOS -> tag ids seen

    # ------------------------------------------------------------ task hooks

    @classmethod
    def _read(cls, data, opts, what):
        examples = wordinput.read_examples(data, what, 5, "feats")
        for i, (_, _, bundles) in enumerate(examples):
            try:
                bundles[:] = [canonical(b) for b in bundles]
            except ValueError as exc:
                raise InputError(f"{what}: sentence {i + 1}: {exc}") from None
        return examples

    @classmethod
    def _build(cls, examples, opts):
        bad = bad_token([w for w, _, _ in examples])
        if bad is not None:
            raise TypeError(f"training data: {bad}")
        seen = Counter((u, b) for _, upos, bundles in examples for u, b in zip(upos, bundles))
        tags = sorted({b for _, b in seen})
        if tags == [NO_FEATURES]:
            raise InputError("the training data has no features: every FEATS is '_'")
        index = {t: i for i, t in enumerate(tags)}
        allowed = {}
        for u, b in seen:
            allowed.setdefault(u, set()).add(index[b])
        model = SequenceModel(tags, WordFeaturizer(n_columns=1), opts["templates"] or wordinput.UPOS_TEMPLATES,
                              decoder="greedy")
        return cls(model, {}, {u: sorted(ids) for u, ids in allowed.items()})

    def _gold_tags(self, examples):
        return {b for _, _, bundles in examples for b in bundles}

    def _learn_words(self, examples):
        """Fine-tuning: the bundles the new data gives each UPOS are allowed too."""
        index = self.model.tag_index
        allowed = {u: set(ids) for u, ids in self._allowed.items()}
        for _, upos, bundles in examples:
            for u, b in zip(upos, bundles):
                if b in index:
                    allowed.setdefault(u, set()).add(index[b])
        self._allowed = {u: frozenset(ids) for u, ids in allowed.items()}

    def _encode(self, examples, training=False):
        index = self.model.tag_index
        golds = [None if bundles is None else [index.get(b, -1) for b in bundles] for _, _, bundles in examples]
        return [(x, c, g) for (x, c), g in zip(wordinput.inputs(examples), golds)]

    def _fit_temperature(self, encoded):
        """Per token: hundreds of bundles make forward-backward too slow."""
        return confidence.fit_temperature(self.model, [(x, c) for x, c, _ in encoded], [g for _, _, g in encoded],
                                          per_token=True)

    def _decode(self, examples, ids):
        """Each word's bundle; a bundle its UPOS never took gives way to the
        best-scored one it did, the words that need it ranked in one pass."""
        tags = self.model.tags
        out, misfits = [], []
        for s, (example, row) in enumerate(zip(examples, ids)):
            row = np.asarray(row).tolist()
            for i, (u, t) in enumerate(zip(example[1], row)):
                allowed = self._allowed.get(u)
                if allowed is not None and t not in allowed:
                    misfits.append((s, i))
            out.append(row)
        for (s, i), classes in wordinput.ranked_words(self.model, examples, misfits):
            allowed = self._allowed[examples[s][1][i]]
            out[s][i] = next(c for c in classes if c in allowed)     # the best bundle this UPOS took
        return [[tags[t] for t in row] for row in out]

    def _score(self, examples, outputs, opts):
        if not examples:
            raise InputError("the evaluation data holds no sentences")
        tokens = exact = ufeats = tp = n_gold = n_pred = 0
        for (_, _, gold), pred in zip(examples, outputs):
            for g, p in zip(gold, pred):
                tokens += 1
                exact += g == p
                ufeats += universal(g) == universal(p)
                gs, ps = set(g.split("|")) - {NO_FEATURES}, set(p.split("|")) - {NO_FEATURES}
                tp += len(gs & ps)
                n_gold += len(gs)
                n_pred += len(ps)
        precision, recall = tp / max(n_pred, 1), tp / max(n_gold, 1)
        return {"accuracy": exact / tokens, "ufeats": ufeats / tokens, "tokens": tokens,
                "feature_precision": precision, "feature_recall": recall,
                "feature_f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0}

    def _records(self, source, json, n_threads, format=None, column=None, tokenizer=None, nbest=None):
        """The records of :meth:`tag_file`: CoNLL-U with its FEATS column
        filled from FORM and UPOS."""
        return wordinput.conllu_records(self._tagged, source, json, n_threads, self.analyze_sents, "feats",
                                        "morphologizer", format, column, tokenizer, nbest)

    # ------------------------------------------------------------ analysing

    def analyze(self, words: list[str], upos: list[str] | None = None) -> list[str]:
        """The FEATS bundle of each of ``words`` (one sentence), given their
        UPOS tags (a tagger's; None: unknown, which costs accuracy)."""
        return self.analyze_sents([one_sentence(words, "analyze")], None if upos is None else [upos])[0]

    def analyze_sents(self, sentences: Iterable[list[str]], upos: list | None = None,
                      n_threads: int = 1) -> list[list[str]]:
        """:meth:`analyze` of many sentences at once (``upos``: a UPOS list
        per sentence, or None); ``n_threads`` as :meth:`fasttag.Tagger.tag_sents`."""
        return wordinput.predict_words(self._predict, sentences, upos, n_threads)

    # ------------------------------------------------------------ storage

    def _task_parts(self):
        return {"featurizer": {"n_columns": 1},
                "allowed": {u: sorted(ids) for u, ids in sorted(self._allowed.items())}}, {}

    @classmethod
    def _featurizer_from(cls, spec, header, arrays, meta):
        if spec.get("n_columns") != 1:
            raise ModelFormatError("corrupt fasttag model: a morphologizer's featurizer reads one column (UPOS)")
        return WordFeaturizer(n_columns=1)

    @classmethod
    def _load(cls, header, arrays, model, meta):
        for tag in model.tags:
            try:
                if canonical(tag) != tag:
                    raise ValueError
            except ValueError:
                raise ModelFormatError(f"corrupt fasttag model: {tag!r} is not a FEATS bundle in UD order") from None
        allowed = header.get("allowed")
        n = len(model.tags)
        if not isinstance(allowed, dict) or not all(
                isinstance(ids, list) and ids and all(type(i) is int and 0 <= i < n for i in ids)
                for ids in allowed.values()):
            raise ModelFormatError("corrupt fasttag model: the bundles allowed per UPOS are not tag ids")
        return cls(model, meta, allowed)
