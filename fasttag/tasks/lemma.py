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

from ..errors import InputError, ModelFormatError
from ..features.editscripts import STORED, apply, parse, script_for
from ..features.words import POS_TEMPLATES, WordFeaturizer, bad_token, one_sentence, token_lists
from ..model import confidence, registry
from ..model.modelfile import header_int
from ..model.sequence import SequenceModel
from ..text import formats as ftio, output
from .base import Examples, SequenceTask, closed_after

#: A script seen fewer times is learned as :data:`STORED` (the lexicon's lemma):
#: a once-seen script is mostly one word's irregularity.
MIN_SCRIPT_COUNT = 2

#: Beside the POS tagger's templates: the UPOS (``col1``) alone, with the
#: word's affixes and with its neighbours' UPOS.
LEMMA_TEMPLATES = POS_TEMPLATES + (
    "col1[0]", "col1[-1]|col1[0]", "col1[0]|col1[1]",
    "col1[0]|suffix1[0]", "col1[0]|suffix2[0]", "col1[0]|suffix3[0]", "col1[0]|suffix4[0]",
    "col1[0]|suffix5[0]", "col1[0]|lower[0]", "col1[0]|prefix1[0]", "col1[0]|prefix2[0]",
    "col1[0]|short_shape[0]",
)

NO_UPOS = "_"


def _annotated(form, lemma):
    """Whether a gold ``lemma`` is one (CoNLL-U's ``_`` is none, but for the word ``_``)."""
    return lemma != "_" or form == "_"


def _read_python(data, what):
    """``(words, upos, lemmas)`` of sentences given as lists of
    ``(form, upos, lemma)`` triples or as CoNLL-U Sentence objects."""
    if not hasattr(data, "__iter__") or isinstance(data, (str, bytes)):
        raise TypeError(f"{what} must be a path or a list of sentences, not {type(data).__name__}")
    out = []
    for i, sent in enumerate(data):
        if isinstance(sent, ftio.Sentence):
            if any(len(r) != 10 for r in sent.rows):
                raise InputError(f"{what}: sentence {i} is not CoNLL-U (FORM, UPOS, LEMMA)")
            triples = [(r[1], r[3], r[2]) for r in sent.rows]
        else:
            try:
                triples = [tuple(t) for t in sent]
            except TypeError:
                raise TypeError(f"{what}: sentence {i} must be a list of (form, upos, lemma) triples, "
                                f"not {type(sent).__name__}") from None
            if any(len(t) != 3 or not all(isinstance(v, str) for v in t) for t in triples):
                raise TypeError(f"{what}: sentence {i} must be a list of (form, upos, lemma) triples of str")
        if triples:
            words, upos, lemmas = (list(c) for c in zip(*triples))
            out.append((words, upos, lemmas))
    return out


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

    def __init__(self, model, meta=None, lexicon=()):
        super().__init__(model, meta)
        self._lexicon = [tuple(e) for e in lexicon]      # (form, upos, lemma, count)
        by_pos, by_form = defaultdict(Counter), defaultdict(Counter)
        for form, upos, lemma, count in self._lexicon:
            by_pos[form, upos][lemma] += count
            by_form[form][lemma] += count
        self._unique = {k: next(iter(c)) for k, c in by_pos.items() if len(c) == 1}
        self._by_pos = {k: c.most_common(1)[0][0] for k, c in by_pos.items()}
        self._by_form = {k: c.most_common(1)[0][0] for k, c in by_form.items()}

    # ------------------------------------------------------------ task hooks

    @classmethod
    def _read(cls, data, opts, what):
        if not ftio.is_source(data):
            return _read_python(data, what)
        fmt, sentences = ftio.read_all(data, "conllu", "upos")
        return Examples([(s.words, s.tags, [r[2] for r in s.rows]) for s in sentences if s.words],
                        {})

    @classmethod
    def _build(cls, examples, opts):
        bad = bad_token([w for w, _, _ in examples])
        if bad is not None:
            raise TypeError(f"training data: {bad}")
        counts, scripts = Counter(), Counter()
        for words, upos, lemmas in examples:
            for w, u, lemma in zip(words, upos, lemmas):
                if _annotated(w, lemma):
                    counts[w, u, lemma] += 1
                    scripts[script_for(w, lemma)] += 1
        if not counts:
            raise InputError("the training data has no lemmas: every LEMMA is '_'")
        tags = sorted({s for s, c in scripts.items() if c >= MIN_SCRIPT_COUNT} | {STORED, "L||||", "K||||"})
        model = SequenceModel(tags, WordFeaturizer(n_columns=1), opts["templates"] or LEMMA_TEMPLATES,
                              decoder="greedy")
        return cls(model, {}, [(f, u, lemma, c) for (f, u, lemma), c in sorted(counts.items())])

    def _encode(self, examples, training=False):
        index = self.model.tag_index
        stored = index[STORED]
        out = []
        for words, upos, lemmas in examples:
            gold = None
            if lemmas is not None:
                if training:        # an unseen script or no lemma: the lexicon's
                    gold = [index.get(script_for(w, lemma), stored) if _annotated(w, lemma) else stored
                            for w, lemma in zip(words, lemmas)]
                else:               # the model has no class for it
                    gold = [index.get(script_for(w, lemma), -1) if _annotated(w, lemma) else -1
                            for w, lemma in zip(words, lemmas)]
            out.append((words, [(u,) for u in upos], gold))
        return out

    def _fit_temperature(self, encoded):
        """Per token: thousands of scripts make forward-backward too slow."""
        return confidence.fit_temperature(self.model, [(x, c) for x, c, _ in encoded], [g for _, _, g in encoded],
                                          per_token=True)

    def _decode(self, examples, ids):
        tags = self.model.tags
        out = []
        for example, row in zip(examples, ids):
            words, upos = example[0], example[1]
            lemmas, scores = [], None
            for i, (w, u, t) in enumerate(zip(words, upos, np.asarray(row).tolist())):
                lemma = self._unique.get((w, u))
                if lemma is None:
                    lemma = self._applied(tags[t], w, u)
                if lemma is None:           # the script does not fit: the best one that does
                    if scores is None:
                        scores = next(confidence.lattices(self.model, [(words, [(v,) for v in upos])])).E
                    for c in np.argsort(-scores[i], kind="stable").tolist():
                        lemma = self._applied(tags[c], w, u)
                        if lemma is not None:
                            break
                    else:
                        lemma = w
                lemmas.append(lemma)
            out.append(lemmas)
        return out

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
        if nbest is not None:
            raise InputError("option nbest: a lemmatizer gives one lemma per word")
        if tokenizer is not None:
            raise InputError("option tokenizer: a lemmatizer reads CoNLL-U with UPOS, not raw text")
        if column not in (None, "lemma"):
            raise InputError(f"option column {column}: a lemmatizer fills the LEMMA column")
        name, fmt, lines, close = ftio.open_tagging_input(source, format)
        if fmt != "conllu":
            close()
            raise InputError(f"a lemmatizer reads CoNLL-U (FORM and UPOS), not {fmt} input", name)
        sentences = ftio.parse_lines(lines, name, "conllu", "upos")
        records = self._tagged(ftio.batches(sentences),
                               lambda batch: self.lemmatize_sents([s.words for s in batch], [s.tags for s in batch]),
                               lambda sent, lemmas: output.Record(sent.words, lemmas, sent.start_line, sentence=sent),
                               n_threads)
        return closed_after(records, close), {"style": "json" if json else "conllu", "column": "lemma"}

    # ------------------------------------------------------------ lemmatizing

    def lemmatize(self, words: list[str], upos: list[str] | None = None) -> list[str]:
        """The lemma of each of ``words`` (one sentence), given their UPOS
        tags (a tagger's; None: unknown, which costs accuracy)."""
        return self.lemmatize_sents([one_sentence(words, "lemmatize")], None if upos is None else [upos])[0]

    def lemmatize_sents(self, sentences: Iterable[list[str]], upos: list | None = None,
                        n_threads: int = 1) -> list[list[str]]:
        """:meth:`lemmatize` of many sentences at once (``upos``: a UPOS list
        per sentence, or None); ``n_threads`` as :meth:`fasttag.Tagger.tag_sents`."""
        sents = token_lists(sentences)
        if upos is None:
            upos = [[NO_UPOS] * len(s) for s in sents]
        else:
            upos = list(upos)
            if len(upos) != len(sents):
                raise ValueError(f"upos has {len(upos)} entries for {len(sents)} sentences: give one per sentence")
            for i, (s, u) in enumerate(zip(sents, upos)):
                if isinstance(u, str) or len(u) != len(s) or not all(isinstance(t, str) for t in u):
                    raise ValueError(f"upos: sentence {i} needs a list of {len(s)} str tags, one per word")
        examples = [(s, list(u), None) for s, u in zip(sents, upos)]
        try:
            return self._predict(examples, n_threads)
        except TypeError:
            err = bad_token(sents)
            if err is None:
                raise
            raise err from None

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
            try:
                parse(tag)
            except ValueError:
                raise ModelFormatError(f"corrupt fasttag model: {tag!r} is not an edit script") from None
        lexicon = header.get("lexicon")
        if not isinstance(lexicon, list) or not all(
                isinstance(e, list) and len(e) == 4 and all(isinstance(v, str) for v in e[:3])
                and header_int(e[3], 1) for e in lexicon):
            raise ModelFormatError("corrupt fasttag model: the lemmatizer's lexicon is not "
                                   "[form, upos, lemma, count] entries")
        return cls(model, meta, lexicon)
