"""Lemmatization as tagging: per word an edit script (prefix, suffix and
casing, :mod:`fasttag.features.editscripts`) learned from CoNLL-U's FORM,
UPOS and LEMMA columns, predicted from the POS tagger's word features, the
word's UPOS and its suffixes.

Words the training data saw with one lemma for their UPOS keep it; a
predicted script that does not fit the form gives way to the best-scored
one that does, so a lemma is never made of a script that cannot apply.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable

import numpy as np

from ..errors import InputError, ModelFormatError, shown
from ..features.editscripts import STORED, apply, parse, script_for
from ..features.words import WordFeaturizer, bad_token, one_sentence
from ..model import confidence, registry
from ..model.modelfile import header_int
from ..model.sequence import SequenceModel
from ..text.fieldcheck import column_fault
from . import wordinput
from .base import SequenceTask

#: A script seen fewer times is learned as :data:`STORED` (the lexicon's lemma):
#: a once-seen script is mostly one word's irregularity.
MIN_SCRIPT_COUNT = 2
#: The most forms whose fitting scripts, and (form, UPOS, class) whose lemmas, are kept
#: (then the memo starts again).
MAX_FORMS = 200_000
_UNKNOWN = object()         # not yet in the memo of lemmas


def _annotated(form, lemma):
    """Whether a gold ``lemma`` is one (CoNLL-U's ``_`` is none, but for the word ``_``)."""
    return lemma != "_" or form == "_"


def _learned(examples):
    """The (form, UPOS, lemma) of each annotated word of ``examples``; an
    InputError for a lemma the model could not write (the rule loading
    checks its lexicon with: empty, a tab, a line break...)."""
    for i, (words, upos, lemmas) in enumerate(examples):
        for w, u, lemma in zip(words, upos, lemmas):
            if not _annotated(w, lemma):
                continue
            fault = column_fault(lemma, "LEMMA")
            if fault:
                raise InputError(f"sentence {i + 1}: the lemma {shown(lemma)} of {shown(w)} {fault}, "
                                 f"which a lemmatizer cannot write")
            yield w, u, lemma


def script_fault(script):
    """What is wrong with an edit-script tag as a lemmatizer's class, or
    None: what it adds to a form must be part of a lemma it can write."""
    try:
        parsed = parse(script)
    except ValueError:
        return "is not an edit script"
    if parsed is None:
        return None
    for added in (parsed[2], parsed[4]):
        fault = added and column_fault(added, "LEMMA")
        if fault:
            return f"adds {shown(added)}, which {fault}"
    return None


@registry.task("lemma", title="lemmatizer", help="lemmatizer from CoNLL-U (FORM, UPOS, LEMMA)",
               options=("templates",), defaults={"epochs": 10})
class Lemmatizer(SequenceTask):
    """A trained lemmatizer: :meth:`train` on CoNLL-U or :func:`fasttag.load`.
    It reads each word's UPOS (gold in training, a tagger's at run time)."""

    task = "lemma"
    kind = "lemmatizer"
    commands = ("tag",)
    featurizer = ("word", 1)
    primary = "accuracy"
    local_features = True

    def __init__(self, model, meta=None, lexicon=()):
        super().__init__(model, meta)
        self._fitting = None                # (tag count, the scripts by what they strip ...) of _candidate_sets
        self._set_lexicon(lexicon)
        model.candidate_sets = self._candidate_sets

    def _set_lexicon(self, lexicon):
        """Keep ``lexicon`` ((form, upos, lemma, count) entries) and its lookups."""
        self._lexicon = [tuple(e) for e in lexicon]
        by_pos, by_form = defaultdict(Counter), defaultdict(Counter)
        for form, upos, lemma, count in self._lexicon:
            by_pos[form, upos][lemma] += count
            by_form[form][lemma] += count
        self._unique = {k: next(iter(c)) for k, c in by_pos.items() if len(c) == 1}
        self._by_pos = {k: c.most_common(1)[0][0] for k, c in by_pos.items()}
        self._by_form = {k: c.most_common(1)[0][0] for k, c in by_form.items()}
        self._fits_of = {}                  # form -> the ids of the classes that fit it (the stored lemma: by_form)
        self._lemma_of = {}                 # (form, upos, class) -> its lemma, or None where the class does not fit

    # ------------------------------------------------------------ task hooks

    @classmethod
    def _read(cls, data, opts, what):
        return wordinput.read_examples(data, what, 2, "lemma")

    @classmethod
    def _build(cls, examples, opts):
        bad = bad_token([w for w, _, _ in examples])
        if bad is not None:
            raise TypeError(f"training data: {bad}")
        counts, scripts = Counter(), Counter()
        for w, u, lemma in _learned(examples):
            counts[w, u, lemma] += 1
            scripts[script_for(w, lemma)] += 1
        if not counts:
            raise InputError("the training data has no lemmas: every LEMMA is '_'")
        tags = sorted({s for s, c in scripts.items() if c >= MIN_SCRIPT_COUNT} | {STORED, "L||||", "K||||"})
        model = SequenceModel(tags, WordFeaturizer(n_columns=1), opts["templates"] or wordinput.UPOS_TEMPLATES,
                              decoder="greedy")
        return cls(model, {}, [(f, u, lemma, c) for (f, u, lemma), c in sorted(counts.items())])

    def _learn_words(self, examples):
        """Fine-tuning: the new data's lemmas join the lexicon."""
        counts = Counter({(f, u, lemma): c for f, u, lemma, c in self._lexicon})
        counts.update(_learned(examples))
        self._set_lexicon([(f, u, lemma, c) for (f, u, lemma), c in sorted(counts.items())])

    def _encode(self, examples, training=False):
        index = self.model.tag_index
        # training: an unseen script or no lemma is the lexicon's class; else the model has none for it
        other = index[STORED] if training else -1
        golds = [None if lemmas is None else
                 [index.get(script_for(w, lemma), other) if _annotated(w, lemma) else other
                  for w, lemma in zip(words, lemmas)] for words, _, lemmas in examples]
        return [(x, c, g) for (x, c), g in zip(wordinput.inputs(examples), golds)]

    def _fit_temperature(self, encoded):
        """Per token: thousands of scripts make forward-backward too slow."""
        return confidence.fit_temperature(self.model, [(x, c) for x, c, _ in encoded], [g for _, _, g in encoded],
                                          per_token=True)

    def _decode(self, examples, ids):
        """Each word's lemma, computed once per (form, UPOS, class) while
        the lexicon stays (and at most MAX_FORMS are kept); the words whose
        script does not fit are ranked in one pass."""
        tags = self.model.tags
        if len(self._lemma_of) >= MAX_FORMS:
            self._lemma_of = {}
        memo, out, misfits = self._lemma_of, [], []
        for s, (example, row) in enumerate(zip(examples, ids)):
            lemmas = []
            for i, key in enumerate(zip(example[0], example[1], np.asarray(row).tolist())):
                lemma = memo.get(key, _UNKNOWN)
                if lemma is _UNKNOWN:
                    w, u, t = key
                    lemma = self._unique.get((w, u))
                    if lemma is None:
                        lemma = self._applied(tags[t], w, u)
                    memo[key] = lemma
                if lemma is None:
                    misfits.append((s, i))
                lemmas.append(lemma)
            out.append(lemmas)
        for (s, i), classes in wordinput.ranked_words(self.model, examples, misfits):
            w, u = examples[s][0][i], examples[s][1][i]
            for c in classes:           # the script does not fit: the best one that does
                lemma = memo.get((w, u, c), _UNKNOWN)
                if lemma is _UNKNOWN:   # (w, u) has no unique lemma, or it would not be here
                    lemma = memo[w, u, c] = self._applied(tags[c], w, u)
                if lemma is not None:
                    break
            else:
                lemma = w
            out[s][i] = lemma
        return out

    def _candidate_sets(self, chunk):
        """Per word of a chunk of model inputs, the classes that can give
        it a lemma: the scripts that fit its form, and the stored lemma
        where the lexicon has the form.  The decoder scores only those: a
        lemmatizer has thousands of scripts, of which a form fits a few."""
        if self._fitting is None or self._fitting[0] != len(self.model.tags):
            self._index_scripts()                   # (the tags grew: fine-tuning)
        cache, out = self._fits_of, []
        for words, _ in chunk:
            for w in words:
                ids = cache.get(w)
                if ids is None:
                    ids = self._fitting_ids(w)
                    if len(cache) >= MAX_FORMS:
                        cache.clear()
                    cache[w] = ids
                out.append(ids)
        return out

    def _index_scripts(self):
        """The scripts by their casing and what they strip at the start and end."""
        by_strip, starts, ends = {}, set(), set()
        for i, tag in enumerate(self.model.tags):
            parsed = parse(tag)
            if parsed is None:
                continue
            casing, strip_start, _, strip_end, _ = parsed
            by_strip.setdefault((casing == "K", strip_start, strip_end), []).append(i)
            starts.add(strip_start)
            ends.add(strip_end)
        self._fits_of = {}
        self._fitting = (len(self.model.tags), by_strip, starts, ends, self.model.tag_index[STORED],
                         max(map(len, starts), default=0), max(map(len, ends), default=0))

    def _fitting_ids(self, form):
        """The ascending ids of the classes :meth:`_applied` gives ``form`` a lemma by."""
        _, by_strip, starts, ends, stored, longest_start, longest_end = self._fitting
        ids = [stored] if form in self._by_form else []
        lower = form.lower()
        for src, kinds in (((lower, (False, True)),) if lower == form else ((lower, (False,)), (form, (True,)))):
            n = len(src)
            heads = [src[:k] for k in range(min(n, longest_start + 1)) if src[:k] in starts]
            tails = [src[n - k:] for k in range(min(n, longest_end + 1)) if src[n - k:] in ends]
            for head in heads:
                for tail in tails:
                    if len(head) + len(tail) < n:
                        for kept in kinds:
                            ids.extend(by_strip.get((kept, head, tail), ()))
        return tuple(sorted(set(ids)))

    def _applied(self, script, form, upos):
        """The lemma of ``form`` by ``script``, or None where it does not fit."""
        if script == STORED:
            return self._by_pos.get((form, upos)) or self._by_form.get(form)
        return apply(script, form)

    def _check_gold(self, examples):
        if not any(_annotated(w, lemma) for words, _, lemmas in examples if lemmas is not None
                   for w, lemma in zip(words, lemmas)):
            raise InputError("the evaluation data has no lemmas: every LEMMA is '_'")

    def _score(self, examples, outputs, opts):
        if not examples:
            raise InputError("the evaluation data holds no sentences")
        self._check_gold(examples)
        tokens = correct = unannotated = 0
        for (words, _, gold), pred in zip(examples, outputs):
            for w, g, p in zip(words, gold, pred):
                if not _annotated(w, g):
                    unannotated += 1
                    continue
                tokens += 1
                correct += g == p
        return {"accuracy": correct / tokens, "tokens": tokens, "correct": correct,
                "unannotated_tokens": unannotated}

    def _records(self, source, json, n_threads, format=None, column=None, tokenizer=None, nbest=None):
        """The records of :meth:`tag_file`: CoNLL-U with its LEMMA column
        filled from FORM and UPOS."""
        return wordinput.conllu_records(self._tagged, source, json, n_threads, self.lemmatize_sents, "lemma",
                                        "lemmatizer", format, column, tokenizer, nbest)

    # ------------------------------------------------------------ lemmatizing

    def lemmatize(self, words: list[str], upos: list[str] | None = None) -> list[str]:
        """The lemma of each of ``words`` (one sentence), given their UPOS
        tags (a tagger's; None: unknown, which costs accuracy)."""
        return self.lemmatize_sents([one_sentence(words, "lemmatize")], None if upos is None else [upos])[0]

    def lemmatize_sents(self, sentences: Iterable[list[str]], upos: list | None = None,
                        n_threads: int = 1) -> list[list[str]]:
        """:meth:`lemmatize` of many sentences at once (``upos``: a UPOS list
        per sentence, or None); ``n_threads`` as :meth:`fasttag.Tagger.tag_sents`."""
        return wordinput.predict_words(self._predict, sentences, upos, n_threads)

    # ------------------------------------------------------------ storage

    def _task_parts(self):
        return {"featurizer": {"n_columns": 1}, "lexicon": [list(e) for e in self._lexicon]}, {}

    @classmethod
    def _featurizer_from(cls, spec, header, arrays, meta):
        if spec.get("n_columns") != 1:
            raise ModelFormatError("corrupt fasttag model: a lemmatizer's featurizer reads one column (UPOS)")
        return WordFeaturizer(n_columns=1)

    @classmethod
    def _load(cls, header, arrays, model, meta):
        if STORED not in model.tag_index:
            raise ModelFormatError("corrupt fasttag model: the lemmatizer has no stored-lemma class")
        for tag in model.tags:
            fault = script_fault(tag)
            if fault:
                raise ModelFormatError(f"corrupt fasttag model: the lemmatizer's class {shown(tag)} {fault}")
        lexicon = header.get("lexicon")
        if not isinstance(lexicon, list) or not all(
                isinstance(e, list) and len(e) == 4 and all(isinstance(v, str) for v in e[:3])
                and header_int(e[3], 1) for e in lexicon):
            raise ModelFormatError("corrupt fasttag model: the lemmatizer's lexicon is not "
                                   "[form, upos, lemma, count] entries")
        for form, _, lemma, _ in lexicon:
            fault = column_fault(lemma, "LEMMA")
            if fault:
                raise ModelFormatError(f"corrupt fasttag model: the lemmatizer's lexicon gives {shown(form)} the "
                                       f"lemma {shown(lemma)}, which {fault}")
        return cls(model, meta, lexicon)
