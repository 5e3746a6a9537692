"""The UD pipeline: one model file holding a tokenizer and the taggers of
CoNLL-U's word columns, trained from one CoNLL-U file, run on raw text
(tokens, sentences, then every column) or on CoNLL-U with gold tokens.

Each part is optional and declared once in :data:`PARTS` (its CoNLL-U
column, how it learns from a treebank's sentences and how it predicts);
a new part is one more entry.  The model file nests each part's own
header under ``parts`` and prefixes its arrays with ``NAME/``; loading
builds every part through the registry of model kinds and checks it is
the class its entry names, so a file holds data, never code.
"""
from __future__ import annotations

import io
import json as jsonlib
import os
import sys
import time
import warnings
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable

from .. import parallel
from ..errors import InputError, ModelFormatError, TrainingInterrupted
from ..features.words import WordFeaturizer
from ..model import loading, modelfile, options, registry
from ..model.progress import Progress
from ..text import formats as ftio, output
from ..text.conll18 import METRICS, Annotation, evaluate_annotations
from ..text.conllu import WORD_COLUMNS as _WORD_COLUMNS, UDDocument, UDWord, read_document, tokens_lines
from ..text.parsers import CONLLU_FIELDS
from ..text.rawtext import RAW_BATCH_CHARS
from .base import closed_after, tokenizer_for
from .lemma import Lemmatizer
from .morph import Morphologizer
from .pos import Tagger
from .tok import Token, Tokenizer

#: The columns a part may fill, as :class:`fasttag.text.conllu.UDWord` names them (defined with the writer).
WORD_COLUMNS = _WORD_COLUMNS


# ---------------------------------------------------------------- the parts

def _column_examples(field):
    """A part's training data: (words, that column) of each sentence."""
    def examples(sentences):
        return [(s.words, [row[field] for row in s.rows]) for s in sentences]
    return examples


def _column_tags(model, words, predicted):
    """A column tagger's prediction: its tags of each sentence's words."""
    return model.tag_sents(words)


def _column_present(field):
    """Whether the treebank fills the column (not every value ``_``)."""
    def present(sentences):
        return any(row[field] != "_" for s in sentences for row in s.rows)
    return present


@dataclass(frozen=True)
class Part:
    """One part of a pipeline.  ``name``: its key in the model file and in
    results (the lower-case CoNLL-U field name); ``field``: its CoNLL-U
    field number; ``cls``: its model class; ``examples(sentences)``: its
    training data of CoNLL-U sentences; ``present(sentences)``: whether
    the treebank annotates it; ``predict(model, words, predicted)``: its
    values of each sentence, ``predicted`` holding the earlier parts' values;
    ``rule``: its learning rule where the call names none (BENCHMARKS.md,
    "Defaults chosen by cross-validation")."""
    name: str
    field: int
    cls: type
    examples: Callable
    present: Callable
    predict: Callable = _column_tags
    rule: tuple = ()


def column_part(name, cls=Tagger, rule=()):
    """The part that tags CoNLL-U field ``name`` with a ``cls`` tagger."""
    field = CONLLU_FIELDS.index(name.upper())
    return Part(name, field, cls, _column_examples(field), _column_present(field), rule=tuple(rule))


def upos_part(name, cls, method):
    """The part that fills CoNLL-U field ``name`` with a ``cls`` model that
    reads each word's UPOS: trained on (form, gold UPOS, value) triples,
    run with ``model.method(words, upos)`` on the UPOS predicted before it."""
    field = CONLLU_FIELDS.index(name.upper())

    def examples(sentences):
        return [[(r[1], r[3], r[field]) for r in s.rows] for s in sentences]

    def predict(model, words, predicted):
        return getattr(model, method)(words, predicted.get("upos"))
    return Part(name, field, cls, examples, _column_present(field), predict)


#: The word columns a pipeline predicts, in the order they are predicted
#: (a later part may read the earlier ones' values).
PARTS = (column_part("upos", rule={"algorithm": "mira", "k": 3}.items()), column_part("xpos"), upos_part("feats", Morphologizer, "analyze_sents"),
         upos_part("lemma", Lemmatizer, "lemmatize_sents"))
#: The options of a learning rule: a call naming one overrides every part's rule.
RULE_OPTIONS = {"algorithm", "k", "C"}
#: The part names, with the tokenizer's.
TOKENIZER = "tok"


def _part(name):
    return next(p for p in PARTS if p.name == name)


# ---------------------------------------------------------------- the pipeline

@registry.task("ud", title="UD pipeline", help="UD pipeline from CoNLL-U: tokenizer, sentence splitter, UPOS, "
               "XPOS, FEATS and lemmas in one model", options=("allow_new_tags",))
class Pipeline(modelfile.Stored):
    """A tokenizer and the taggers of CoNLL-U's word columns in one model
    (:data:`PARTS`): :meth:`train` from one CoNLL-U file, or
    :func:`fasttag.load`; :meth:`annotate` raw text, :meth:`to_conllu`."""

    kind = "pipeline"
    commands = ("tag",)
    primary = "upos"            # the score ``fasttag eval`` leads with, as the POS tagger's

    def __init__(self, tokenizer=None, parts=None, meta=None):
        parts = dict(parts or {})
        unknown = sorted(set(parts) - {p.name for p in PARTS})
        if unknown:
            raise ValueError(f"unknown pipeline part {unknown[0]!r}: one of {', '.join(p.name for p in PARTS)}")
        for p in PARTS:
            if p.name in parts and not isinstance(parts[p.name], p.cls):
                raise TypeError(f"the {p.name} part must be a {p.cls.__name__}, not {type(parts[p.name]).__name__}")
        if tokenizer is not None and not isinstance(tokenizer, Tokenizer):
            raise TypeError(f"tokenizer must be a fasttag Tokenizer, not {type(tokenizer).__name__}")
        if tokenizer is None and not parts:
            raise ValueError("a pipeline needs a tokenizer or a tagger")
        self.tokenizer = tokenizer
        self.parts = {p.name: parts[p.name] for p in PARTS if p.name in parts}
        self.meta = dict(meta or {})
        _share_word_types(self.parts.values())

    @property
    def columns(self):
        """The CoNLL-U columns the pipeline predicts, in prediction order."""
        return list(self.parts)

    @property
    def missing(self):
        """The parts its training data annotated that an interrupted
        training left untrained (``"tokenizer"`` or column names)."""
        return list(self.meta.get("missing", ()))

    def __repr__(self):
        missing = f"; missing: {', '.join(self.missing)}" if self.missing else ""
        return f"Pipeline({', '.join(([TOKENIZER] if self.tokenizer else []) + self.columns)}{missing})"

    def _warn_missing(self):
        """A warning naming the parts an interrupted training left out: their columns are written ``_``."""
        if self.missing:
            warnings.warn(f"the pipeline lacks its {' and '.join(self.missing)} part"
                          f"{'s' if len(self.missing) > 1 else ''} (its training was interrupted before "
                          f"{'they were' if len(self.missing) > 1 else 'it was'} trained): "
                          f"{'those columns are' if len(self.missing) > 1 else 'that column is'} written _ and "
                          f"not scored; train it again to complete it", UserWarning, stacklevel=3)

    # ------------------------------------------------------------ training

    @classmethod
    def train(cls, train, dev=None, **options_) -> Pipeline:
        """Train every part the CoNLL-U file ``train`` annotates (a path or
        a binary file) on it, each keeping its best epoch on ``dev`` (same
        forms, or None).  ``options_``: the shared training options
        (``help(fasttag.model.options)``), given to every part; a part's
        own defaults hold where none is given (the tokenizer trains 20
        epochs, the taggers 10; UPOS with 3-best MIRA unless the call names
        a learning rule).  ``init``: a pipeline (or its path) to
        fine-tune, part by part.  Ctrl-C raises TrainingInterrupted whose
        ``model`` holds the parts trained so far, or None."""
        options.resolve(cls.task, "train", options_, "Pipeline.train")       # the call's errors first
        given = {k: v for k, v in options_.items() if v is not None}
        init = given.pop("init", None)
        if init is not None:
            init = cls._init_pipeline(init)
        verbose = given.pop("verbose", None)
        report = Progress(cls.task, sys.stderr.isatty() if verbose is None else verbose)
        train_data = _rereadable(train, "train")
        dev_data = None if dev is None else _rereadable(dev, "dev")
        sentences = _sentences(train_data, "training data")
        if not sentences:
            raise InputError("no training sentences", path=_name(train))
        dev_sentences = None if dev is None else _sentences(dev_data, "dev data")
        if dev is not None and not dev_sentences:
            raise InputError("no dev sentences", path=_name(dev))
        done, tokenizer, current = {}, None, TOKENIZER
        t0 = time.perf_counter()
        shared = {k: v for k, v in given.items() if k != "allow_new_tags"}
        try:
            report.line("training the tokenizer")
            tok_init = {} if init is None or init.tokenizer is None else {"init": init.tokenizer}
            tokenizer = Tokenizer.train(_reopened(train_data), None if dev is None else _reopened(dev_data),
                                        verbose=verbose, **shared, **tok_init)
            for p in PARTS:
                base = None if init is None else init.parts.get(p.name)
                if not p.present(sentences):
                    if base is not None:
                        done[p.name] = base         # the data does not annotate it: kept as it was
                    continue
                current = p.name
                report.line(f"training the {p.name} tagger")
                own = {k: v for k, v in given.items() if k in shared or base is not None
                       and options.BY_NAME[k].applies(p.cls.task)}
                if base is not None:
                    own["init"] = base
                elif not RULE_OPTIONS & set(given):
                    own.update(p.rule)
                done[p.name] = p.cls.train(p.examples(sentences), dev=None if dev is None else
                                           p.examples(dev_sentences), verbose=verbose, **own)
        except TrainingInterrupted as exc:
            if exc.model is not None:
                if current == TOKENIZER:
                    tokenizer = exc.model
                else:
                    done[current] = exc.model
            meta = _meta(given)
            # what the data annotates that was not trained: the model says so wherever it is used
            missing = ([TOKENIZER] if tokenizer is None else []) + [
                p.name for p in PARTS if p.name not in done and p.present(sentences)]
            if missing:
                meta["missing"] = missing
            exc.model = cls(tokenizer, done, meta) if tokenizer is not None or done else None
            raise
        except InputError as exc:
            if exc.path is None and _name(train) is not None:
                raise InputError(str(exc), path=_name(train)) from None
            raise
        meta = _meta(given)
        meta["train_seconds"] = time.perf_counter() - t0
        if init is not None:
            meta["fine_tuned"] = init.meta.get("fine_tuned", 0) + 1
        return cls(tokenizer, done, meta)

    @classmethod
    def _init_pipeline(cls, init):
        if isinstance(init, Pipeline):
            return init
        if isinstance(init, (str, bytes)) or hasattr(init, "__fspath__"):
            model = loading.load(init)
            if not isinstance(model, Pipeline):
                raise InputError(f"init: a {type(model).__name__} model cannot be fine-tuned as a Pipeline")
            return model
        raise TypeError(f"init must be a Pipeline or a model path, not {type(init).__name__}")

    def calibrate(self, data) -> dict:
        """Fit each part's temperature on gold CoNLL-U ``data``
        (:meth:`fasttag.tasks.base.SequenceTask.calibrate`); predictions do
        not change.  Returns the temperatures by part."""
        source = _rereadable(data, "data")
        sentences = _sentences(source, "calibration data")
        out = {}
        if self.tokenizer is not None:
            out[TOKENIZER] = self.tokenizer.calibrate(_reopened(source))
        for name, model in self.parts.items():
            out[name] = model.calibrate(_part(name).examples(sentences))
        return out

    # ------------------------------------------------------------ annotating

    def annotate(self, text: str) -> UDDocument:
        """The document of raw ``text`` (a str), tokenized by the model's
        tokenizer and tagged by all its taggers: its ``sentences``, each of
        ``tokens`` (offsets into ``text``) and ``words`` (a
        :class:`fasttag.text.conllu.UDWord` with every predicted column).
        A line break always ends a sentence and opens a paragraph."""
        self._warn_missing()
        if not isinstance(text, str):
            raise ftio.not_str("annotate()", text)
        return self._document(text, self._raw_tokenizer().spans(text))

    __call__ = annotate

    def to_conllu(self, text: str) -> str:
        """The CoNLL-U of raw ``text``: ``# newdoc``, ``# newpar``, ``# sent_id``,
        ``# text``, multiword ranges, ``SpaceAfter=No``, every predicted column."""
        self._warn_missing()
        if not isinstance(text, str):
            raise ftio.not_str("to_conllu()", text)
        return self._conllu(text, self._raw_tokenizer().spans(text))

    def _conllu(self, text, found, first_id=1):
        """The CoNLL-U of ``text`` cut into ``found`` (as :meth:`_document`
        takes it), sentences numbered from ``first_id``: what
        :func:`fasttag.text.conllu.document_lines` writes of the annotated
        document, straight from the tokens and the tag lists."""
        return "".join(line + "\n" for line in tokens_lines(text, found, self._tag_found(found), first_id))

    def _tag_found(self, found):
        """:meth:`tag_words` of the words of ``found``, sentences of tokens."""
        return self.tag_words([[w for t in s for w in t.words] for s in found])

    def tag_words(self, sentences) -> dict:
        """Every column of pretokenized ``sentences`` (lists of words): a
        dict column -> per sentence the list of values."""
        words = [list(s) for s in sentences]
        predicted = {}
        for name, model in self.parts.items():
            predicted[name] = _part(name).predict(model, words, predicted) if words else []
        return predicted

    def _raw_tokenizer(self, tokenizer=None):
        if self.tokenizer is not None:
            if tokenizer is not None:
                raise InputError("option tokenizer: the model has its own tokenizer, which it always uses")
            return self.tokenizer
        return tokenizer_for(self, tokenizer)

    def _document(self, text, found):
        """The annotated document of ``text`` cut into ``found``, sentences
        of :class:`fasttag.tasks.tok.Token`."""
        predicted = self._tag_found(found)
        sentences = []
        for i, s in enumerate(found):
            k, tokens = 0, []
            for t in s:
                words = []
                for w in t.words:
                    words.append(UDWord(k + 1, w, **{c: values[i][k] for c, values in predicted.items()}))
                    k += 1
                tokens.append(t._replace(words=words))
            sentences.append(tokens)
        return UDDocument.from_tokens(text, sentences)

    # ------------------------------------------------------------ files

    def tag_file(self, source, out, *, json=False, nbest=None, n_threads=1, format=None, column=None,
                 tokenizer=None, to=None):
        """Tag a file (a path or binary stream) into the text stream ``out``:
        raw text (default, or CoNLL-U when unmistakable) is tokenized by
        the model's tokenizer; CoNLL-U gets every predicted column filled.
        ``to``: "tagged" (word/UPOS, the default for text), "json" (as
        ``json=True``) or "conllu" (the default for CoNLL-U input)."""
        self._warn_missing()
        n_threads = parallel.check_threads(n_threads)
        if nbest is not None:
            raise InputError("option nbest: a pipeline writes its best annotation only")
        if column is not None:
            raise InputError("option column: a pipeline fills every column it predicts")
        if format not in (None, "raw", "text", "conllu"):
            raise InputError(f"a pipeline reads raw text, pretokenized text or CoNLL-U, not {format!r} (option format)")
        if to not in (None, "tagged", "json", "conllu"):
            raise InputError(f"option to must be tagged, json or conllu, not {to!r}")
        if json and to not in (None, "json"):
            raise InputError(f"option json writes JSON, not option to {to}: give one")
        to = "json" if json else to
        name, fmt, lines, close = ftio.open_tagging_input(source, format)
        try:
            if fmt == "conll":
                raise InputError("a pipeline reads raw text, pretokenized text or CoNLL-U, not a column file "
                                 "(option format)", name)
            if fmt == "conllu":
                if tokenizer is not None:
                    raise InputError("option tokenizer applies to raw text, not to CoNLL-U input", name)
                if to == "tagged":
                    raise InputError("CoNLL-U input is written back as CoNLL-U or JSON, not option to tagged", name)
                sentences = ftio.parse_lines(lines, name, "conllu", tags=False)
                records = self._conllu_records(sentences, n_threads, to == "json")
                style = to or "conllu"
            else:
                tok = None if fmt == "text" else self._raw_tokenizer(tokenizer)
                records = self._text_records(lines, tok, n_threads, to or "tagged")
                style = to or "tagged"
        except BaseException:
            close()
            raise
        records = closed_after(records, close)
        try:
            if style == "tagged":
                # raw text: a block of sentences per input line, as every tagger writes it; pretokenized: a line each
                output.write(out, records, "tagged" if fmt == "text" else "paragraphs")
            else:
                for text in records:
                    out.write(text)
        finally:
            records.close()

    def _conllu_records(self, sentences, n_threads, json):
        def tag(batch):
            return batch, self.tag_words([s.words for s in batch])
        for batch, predicted in parallel.ordered_map(tag, ftio.batches(sentences), n_threads):
            for i, s in enumerate(batch):
                columns = {c: v[i] for c, v in predicted.items()}
                if json:
                    yield self._json(s.words, columns, s.start_line)
                    continue
                buf = io.StringIO()
                ftio.write_conllu(s, None, buf, columns=columns)
                yield buf.getvalue()

    def _json(self, words, columns, line, offsets=None, multiword=None):
        """The JSON Lines record of a sentence: ``tags`` UPOS, then the other columns."""
        obj = output.record(words, columns.get("upos", ["_"] * len(words)), line, offsets)
        obj.update((c, list(v)) for c, v in columns.items() if c != "upos")
        if multiword:
            obj["multiword"] = [{"start": i, "end": j, "text": form} for i, j, form in multiword]
        return jsonlib.dumps(obj, ensure_ascii=False) + "\n"

    def _text_records(self, lines, tokenizer, n_threads, to):
        """Per batch of lines, what ``to`` writes of them: a line is a
        paragraph; a blank line is kept as an empty line in word/TAG output."""
        def work(batch):
            text = "\n".join(line for _, line in batch)
            found = _pretokenized(text) if tokenizer is None else tokenizer.spans(text)
            if to == "conllu":
                return batch, (text, found, self._tag_found(found))
            return batch, self._document(text, found)
        sent_id = 0
        for batch, doc in parallel.ordered_map(work, _line_batches(lines), n_threads):
            if to == "conllu":
                # one document, sentences numbered across batches; each batch, as each line, opens a paragraph
                text, found, predicted = doc
                yield "".join(line + "\n" for line in tokens_lines(text, found, predicted, sent_id + 1))
                sent_id += sum(1 for s in found if s)
                continue
            starts = [0]
            for _, line in batch:
                starts.append(starts[-1] + len(line) + 1)
            by_line = {}
            for sent in doc.sentences:
                by_line.setdefault(bisect_right(starts, sent.start) - 1, []).append(sent)
            for k, (number, line) in enumerate(batch):
                if k not in by_line:
                    if to == "tagged":
                        yield output.Record([], [], number, [])
                    continue
                for sent in by_line[k]:
                    words = sent.words
                    offsets = [(a - starts[k], b - starts[k]) for t in sent.tokens for a, b in _word_spans(t)]
                    forms = [w.form for w in words]
                    if to == "json":
                        yield self._json(forms, {c: [getattr(w, c) for w in words] for c in self.parts}, number,
                                         offsets, _multiword(sent.tokens))
                    else:
                        yield output.Record(forms, [w.upos for w in words], number, offsets)

    # ------------------------------------------------------------ evaluation

    def evaluate(self, data, gold_tokens=False, n_threads=1) -> dict:
        """The CoNLL 2018 shared task's scores on gold CoNLL-U ``data``
        (:mod:`fasttag.text.conll18`), F1 as fractions: Tokens, Sentences,
        Words and the columns the model predicts (UPOS, XPOS, UFeats,
        AllTags, Lemmas), from its raw text (the default) or with its gold
        tokens (``gold_tokens=True``); under ``scores`` each one's counts,
        precision, recall and aligned accuracy."""
        self._warn_missing()
        n_threads = parallel.check_threads(n_threads)
        if gold_tokens not in (True, False):
            raise TypeError(f"gold_tokens must be True or False, not {gold_tokens!r}")
        gold = read_document(data)
        if not gold.sentences:
            raise InputError("the evaluation data holds no sentences", path=_name(data))
        if not gold_tokens and self.tokenizer is None:
            raise InputError("the model has no tokenizer: evaluate it with gold tokens (option gold_tokens)")
        found = None
        if gold_tokens:
            found = [[Token(t.start, t.end, t.form, tuple(w.form for w in t.words)) for t in s.tokens]
                     for s in gold.sentences]
        # the document's objects go once its columns are taken: a long text is scored in a small multiple of its size
        text, gold = gold.text, Annotation.of_document(gold, "gold")
        t0 = time.perf_counter()
        if found is None:
            found = self.tokenizer.spans(text)
        system = Annotation.of_tokens(text, found, self._tag_found(found))
        seconds = time.perf_counter() - t0
        del found
        scores = evaluate_annotations(gold, system)
        names = [m for m in METRICS if m in ("Tokens", "Sentences", "Words") or _METRIC_PARTS[m] <= set(self.parts)]
        result = {"mode": "gold tokens" if gold_tokens else "raw text"}
        result.update({_KEYS[m]: scores[m].f1 for m in names})
        result["scores"] = {m: scores[m].as_dict() for m in names}
        result["words"] = scores["Words"].system
        result["seconds"] = seconds
        result["words_per_second"] = result["words"] / seconds if seconds > 0 else 0.0
        return result

    @staticmethod
    def report(result):
        """The text of an :meth:`evaluate` result, as ``fasttag eval`` prints it:
        the shared task's table."""
        lines = [f"from {result['mode']} (CoNLL 2018 shared task scores, in %)",
                 f"{'Metric':<11}| {'Precision':>9} | {'Recall':>9} | {'F1 Score':>9} | {'AligndAcc':>9}",
                 "-----------+-----------+-----------+-----------+-----------"]
        for name, s in result["scores"].items():
            acc = "" if s["aligned_accuracy"] is None else f"{100 * s['aligned_accuracy']:9.2f}"
            lines.append(f"{name:<11}| {100 * s['precision']:9.2f} | {100 * s['recall']:9.2f} | "
                         f"{100 * s['f1']:9.2f} | {acc:>9}")
        lines.append(f"speed      {result['words_per_second']:,.0f} words/s")
        return "\n".join(lines)

    # ------------------------------------------------------------ storage

    def _parts(self):
        header = {"kind": self.kind, "meta": modelfile.stored_meta(self.meta), "parts": {}}
        arrays = {}
        named = ([(TOKENIZER, self.tokenizer)] if self.tokenizer is not None else []) + list(self.parts.items())
        for name, model in named:
            sub_header, sub_arrays = model._parts()
            header["parts"][name] = sub_header
            arrays.update({f"{name}/{key}": value for key, value in sub_arrays.items()})
        return header, arrays

    @classmethod
    def _from_parts(cls, header, arrays):
        """Each part checked as its own model file is, and of the class its
        entry names; an array of no part is a corrupt file."""
        if header.get("kind") != cls.kind:
            raise ModelFormatError(f"not a Pipeline model (kind {header.get('kind')!r})")
        meta = header.get("meta", {})
        if not isinstance(meta, dict):
            raise ModelFormatError("corrupt fasttag model: the pipeline's meta is not an object")
        missing = meta.get("missing", [])
        if not isinstance(missing, list) or not set(missing) <= {TOKENIZER, *(p.name for p in PARTS)} \
                or len(set(missing)) != len(missing):
            raise ModelFormatError("corrupt fasttag model: the pipeline's missing parts are not a list of its part "
                                   "names")
        stored = header.get("parts")
        if not isinstance(stored, dict) or not stored:
            raise ModelFormatError("corrupt fasttag model: the pipeline has no parts")
        classes = {TOKENIZER: Tokenizer, **{p.name: p.cls for p in PARTS}}
        unknown = sorted(set(stored) - set(classes))
        if unknown:
            raise ModelFormatError(f"the pipeline has a part {unknown[0][:40]!r} this fasttag does not know "
                                   f"(a newer fasttag's model?)")
        strays = [k for k in arrays if k.partition("/")[0] not in stored or "/" not in k]
        if strays:
            raise ModelFormatError(f"corrupt fasttag model: array {strays[0][:60]!r} belongs to no pipeline part")
        built = {}
        for name, sub in stored.items():
            if not isinstance(sub, dict) or "arrays" in sub:
                raise ModelFormatError(f"corrupt fasttag model: the pipeline's {name} part is malformed")
            prefix = name + "/"
            own = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
            want = classes[name]
            if sub.get("kind") != want.kind:
                raise ModelFormatError(f"corrupt fasttag model: the pipeline's {name} part is of kind "
                                       f"{str(sub.get('kind'))[:40]!r}, not {want.kind!r}")
            try:
                built[name] = loading.build(sub, own)
            except ModelFormatError as exc:
                raise ModelFormatError(f"the pipeline's {name} part: {exc}") from None
        tokenizer = built.pop(TOKENIZER, None)
        return cls(tokenizer, built, meta)


# ---------------------------------------------------------------- helpers

def _share_word_types(models):
    """The taggers' word featurizers share one cache of word types where
    they compute the same attributes: each new word is hashed once, not
    once per tagger."""
    first = None
    for model in models:
        featurizer = getattr(getattr(model, "model", None), "featurizer", None)
        if not isinstance(featurizer, WordFeaturizer):
            continue
        if first is None:
            first = featurizer
        else:
            featurizer.share_types(first)


#: The result keys of the shared task's metrics, and the parts a column metric needs.
_KEYS = {"Tokens": "token_f1", "Sentences": "sentence_f1", "Words": "word_f1", "UPOS": "upos", "XPOS": "xpos",
         "UFeats": "ufeats", "AllTags": "alltags", "Lemmas": "lemmas"}
_METRIC_PARTS = {"UPOS": {"upos"}, "XPOS": {"xpos"}, "UFeats": {"feats"}, "AllTags": {"upos", "feats"},
                 "Lemmas": {"lemma"}}


def _word_spans(token):
    """(start, end) of each word of ``token``: a multiword token's words that
    spell it ("don't": "do" "n't") their own, the others the token's."""
    forms = [w.form for w in token.words]
    if len(forms) == 1 or "".join(forms) != token.form:
        return [(token.start, token.end)] * len(forms)
    out, at = [], token.start
    for f in forms:
        out.append((at, at + len(f)))
        at += len(f)
    return out


def _meta(given):
    return {k: given[k] for k in ("corpus", "licence") if given.get(k)}


def _name(data):
    if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__"):
        return os.fsdecode(os.fspath(data))
    name = getattr(data, "name", None)
    return name if isinstance(name, str) else None


class _Bytes(io.BytesIO):
    """A stream read once into memory, readable again, keeping its name."""

    def __init__(self, data, name):
        super().__init__(data)
        self.name = name


def _rereadable(data, what):
    """``data`` (a path or a binary file) as something each part can read
    from its start: a path, or the stream's bytes."""
    if ftio.is_path(data):
        return data
    if hasattr(data, "read"):
        raw = data.read()
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        return _Bytes(raw, _name(data) or "<stdin>")
    raise TypeError(f"{what} must be a CoNLL-U path or a binary file, not {type(data).__name__}")


def _reopened(data):
    if isinstance(data, _Bytes):
        data.seek(0)
    return data


def _sentences(data, what):
    """The CoNLL-U sentences of ``data``, every field kept."""
    try:
        _, sentences = ftio.read_all(_reopened(data), "conllu")
    except InputError as exc:
        if exc.path is None and _name(data) is not None:
            raise InputError(str(exc), path=_name(data)) from None
        raise
    return [s for s in sentences if s.words]


def _line_batches(lines):
    """Lists of (line number, line) of about RAW_BATCH_CHARS characters."""
    batch, n = [], 0
    for number, line in enumerate(lines, start=1):
        batch.append((number, line))
        n += len(line) + 1
        if n >= RAW_BATCH_CHARS:
            yield batch
            batch, n = [], 0
    if batch:
        yield batch


def _pretokenized(text):
    """Sentences of Token of text whose lines are sentences of words split at whitespace."""
    out, at = [], 0
    for line in text.split("\n"):
        toks, pos = [], 0
        for w in line.split():
            a = line.index(w, pos)
            pos = a + len(w)
            toks.append(Token(at + a, at + pos, w, (w,)))
        if toks:
            out.append(toks)
        at += len(line) + 1
    return out


def _multiword(tokens):
    """(first word, end word, form) of each token of several words."""
    out, at = [], 0
    for t in tokens:
        if len(t.words) > 1:
            out.append((at, at + len(t.words), t.form))
        at += len(t.words)
    return out
