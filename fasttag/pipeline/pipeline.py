"""The pipeline: a tokenizer and the components that fill CoNLL-U's word
columns, in one model file, trained from one CoNLL-U file, run on raw text
(tokens, sentences, then every column) or on CoNLL-U with gold tokens.

A pipeline knows its components only through the component contract
(:mod:`fasttag.pipeline.component`): each reads the columns filled before
it and fills its own; the model file nests each component's part under
``parts`` by its registered name (:func:`fasttag.model.loading.nested_parts`),
so a new component needs no edit here.
"""
from __future__ import annotations

import contextlib
import io
import json as jsonlib
import os
import sys
import time
import warnings
from bisect import bisect_right

from .. import parallel
from ..errors import InputError, ModelFormatError, TrainingInterrupted
from ..features.words import WordFeaturizer
from ..model import loading, modelfile, options, registry
from ..model.progress import Progress
from ..tasks.datafiles import refuse_dev_on_train
from ..tasks.rawtext_tokenizer import tokenizer_for
from ..tasks.records import closed_after
from ..tasks.tok import Tokenizer
from ..text import formats as ftio, output, scripts, sources
from ..text.conll18 import DEPENDENCY_METRICS, METRICS, Annotation, ScoresWithOldKeys, evaluate_annotations, \
    score_table
from ..text.conllu import UDDocument, UDWord, read_document, tokens_lines
from ..text.goldtext import SurfaceToken
from ..text.parsers import CONLLU_FIELDS
from ..text.rawtext import RAW_BATCH_CHARS
from .builtin import DEFAULT_COMPONENTS
from .component import Component, Treebank, component_class, registered

__all__ = ["Pipeline", "TOKENIZER"]

#: The built-in tokenizer's component name.
TOKENIZER = "tok"


@registry.task("ud", title="UD pipeline", help="UD pipeline from CoNLL-U: tokenizer, sentence splitter, UPOS, "
               "XPOS, FEATS and lemmas in one model", options=("allow_new_tags", "components", "gold_tokens"),
               shown_defaults={"epochs": "20 for the tokenizer, 10 for the taggers",
                               "algorithm": "mira for UPOS, perceptron for the others", "k": "3 for UPOS"})
class Pipeline(modelfile.Stored):
    """Components in one model: a tokenizer and the components that fill
    CoNLL-U's word columns (:mod:`fasttag.pipeline.component`).
    :meth:`train` from one CoNLL-U file, or :func:`fasttag.load`;
    :meth:`annotate` raw text, :meth:`to_conllu`."""

    kind = "pipeline"
    primary = "upos"            # the score ``fasttag eval`` leads with, as the POS tagger's
    composite = True            # several models trained one after the other: no Dask, no learning curves

    def __init__(self, tokenizer=None, parts=None, meta=None):
        """``tokenizer``: a Tokenizer (or a tokenizing component), or None
        (raw text then goes through the bundled English tokenizer);
        ``parts``: name -> a component, or a model the component registered
        under that name wraps (``{"upos": tagger}``)."""
        components = {}
        if tokenizer is not None:
            if isinstance(tokenizer, Tokenizer):
                tokenizer = component_class(TOKENIZER)(tokenizer)
            if not (isinstance(tokenizer, Component) and tokenizer.tokenizes):
                raise TypeError(f"tokenizer must be a fasttag Tokenizer, not {type(tokenizer).__name__}")
            components[tokenizer.name] = tokenizer
        for name, part in dict(parts or {}).items():
            components[name] = _component(name, part)
        if not components:
            raise ValueError("a pipeline needs a tokenizer or a tagger")
        self.components = _ordered(components)
        self.meta = dict(meta or {})
        _share_word_types(c.model for c in self.components.values())
        #: the check that text is in a script its models know (:class:`fasttag.text.scripts.ScriptCheck`), or None
        self.script_check = _shared_script_check([getattr(c, "model", None) for c in self.components.values()])

    @classmethod
    def of(cls, model, column=None):
        """``model`` as a pipeline: itself if it is one, else the pipeline of
        the one component that wraps it (a POS tagger fills ``column``, by
        default the column it was trained on), tokenizing raw text with the
        bundled tokenizer; an InputError when no component wraps it."""
        if isinstance(model, Pipeline):
            if column is not None:
                raise InputError("option column: a pipeline fills every column it predicts")
            return model
        if isinstance(model, Tokenizer):
            if column is not None:
                raise InputError("option column applies to POS tagger models, not to tokenizer models")
            return cls(model, meta=model.meta)      # the token level: tokens, multiword tokens, sentences
        if hasattr(model, "output_column"):
            column = model.output_column(column)
        elif column is not None:
            raise InputError(f"option column applies to POS tagger models, not to {model.kind} models")
        wraps = [c for c in map(component_class, registered()) if isinstance(getattr(c, "model_class", None), type)
                 and isinstance(model, c.model_class) and not c.tokenizes and (column is None or c.fills == (column,))]
        if not wraps:
            raise InputError(f"option to='conllu' writes the word columns of POS taggers, morphologizers, lemmatizers "
                             f"and UD pipelines, not of a {model.kind} model")
        return cls(parts={wraps[0].name: wraps[0](model)}, meta=model.meta)

    def _eval_task(self):
        """The option-table task of an evaluation (as a task model's): ``ud``."""
        return self.task

    @property
    def commands(self):
        """The ``fasttag`` commands that run it: ``tag``, and ``tokenize`` where it has a tokenizer."""
        return ("tag", "tokenize") if self._tokenizing() is not None else ("tag",)

    def for_command(self, command):
        """The model that runs ``fasttag COMMAND``: its tokenizer for ``tokenize``, else itself."""
        return self.tokenizer if command == "tokenize" else self

    def summary(self, interrupted=False):
        """What ``fasttag train`` says of the pipeline it saved (``interrupted``: of what it kept)."""
        return f"the parts trained so far ({self!r})" if interrupted else repr(self)

    @property
    def tokenizer(self):
        """The model of its tokenizing component, or None."""
        tok = self._tokenizing()
        return None if tok is None else tok.model

    def _tokenizing(self):
        return next((c for c in self.components.values() if c.tokenizes), None)

    @property
    def parts(self):
        """Name -> the model of each component that fills columns, in the order they run."""
        return {name: c.model for name, c in self.components.items() if not c.tokenizes}

    @property
    def columns(self):
        """The CoNLL-U columns the pipeline fills, in the order they are filled."""
        return [col for c in self.components.values() for col in c.fills]

    @property
    def missing(self):
        """The components its training data annotated that an interrupted
        training left untrained (their names)."""
        return list(self.meta.get("missing", ()))

    def __repr__(self):
        missing = f"; missing: {', '.join(self.missing)}" if self.missing else ""
        return f"Pipeline({', '.join(self.components)}{missing})"

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
        """Train every component the CoNLL-U file ``train`` annotates (a path
        or a binary file) on it, each keeping its best epoch on ``dev``
        (same forms, or None).  ``components``: their registered names or
        classes, in order (default: tokenizer, UPOS, XPOS, FEATS, lemmas).
        ``options_``: the shared training options
        (``help(fasttag.model.options)``), given to every component; a
        component's own defaults hold where none is given (the tokenizer
        trains 20 epochs, the taggers 10; UPOS with 3-best MIRA unless the
        call names a learning rule).  ``init``: a pipeline (or its path) to
        fine-tune, component by component.  Ctrl-C raises
        TrainingInterrupted whose ``model`` holds the components trained so
        far, or None."""
        options.resolve(cls.task, "train", options_, "Pipeline.train")       # the call's errors first
        refuse_dev_on_train(train, dev)
        given = {k: v for k, v in options_.items() if v is not None}
        classes = _component_classes(given.pop("components", DEFAULT_COMPONENTS))
        init = given.pop("init", None)
        if init is not None:
            init = cls._init_pipeline(init)
        verbose = given.pop("verbose", None)
        report = Progress(cls.task, sys.stderr.isatty() if verbose is None else verbose)
        tokenizing = any(c.tokenizes for c in classes)
        treebank = _treebank(train, "train", "training data", tokenizing)
        if not treebank.sentences:
            raise InputError("no training sentences", path=_name(train))
        dev_bank = None if dev is None else _treebank(dev, "dev", "dev data", tokenizing)
        if dev is not None and not dev_bank.sentences:
            raise InputError("no dev sentences", path=_name(dev))
        done, current = {}, None
        t0 = time.perf_counter()
        taught = [c for c in classes if c.annotated(treebank)]
        try:
            for comp in classes:
                base = None if init is None else init.components.get(comp.name)
                if comp not in taught:
                    if base is not None:
                        done[comp.name] = base          # the data does not annotate it: kept as it was
                    continue
                current = comp.name
                report.line(f"part {taught.index(comp) + 1} of {len(taught)}: training the "
                            + ("tokenizer" if comp.tokenizes else f"{comp.name} tagger"))
                done[comp.name] = comp.learn(treebank, dev_bank, init=base, verbose=verbose, **given)
        except TrainingInterrupted as exc:
            if exc.model is not None:
                done[current] = _component(current, exc.model)
            meta = _meta(given, treebank)
            # what the data annotates that was not trained: the model says so wherever it is used
            missing = [c.name for c in taught if c.name not in done]
            if missing:
                meta["missing"] = missing
            exc.model = cls(parts=done, meta=meta) if done else None
            raise
        except InputError as exc:
            if exc.path is None and _name(train) is not None:
                raise InputError(str(exc), path=_name(train)) from None
            raise
        meta = _meta(given, treebank)
        meta["train_seconds"] = time.perf_counter() - t0
        if init is not None:
            meta["fine_tuned"] = init.meta.get("fine_tuned", 0) + 1
        return cls(parts=done, meta=meta)

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
        """Fit each component's temperature on gold CoNLL-U ``data``
        (:meth:`fasttag.tasks.base.SequenceTask.calibrate`); predictions do
        not change.  Returns the temperatures by component (those that have one)."""
        treebank = _treebank(data, "data", "calibration data", self._tokenizing() is not None)
        out = {}
        for name, comp in self.components.items():
            temperature = comp.calibrate(treebank)
            if temperature is not None:
                out[name] = temperature
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
        self._refuse_unfilled("raw text")
        return self._document(text, self._raw_tokenizer().sentence_tokens(text))

    __call__ = annotate

    def to_conllu(self, text: str) -> str:
        """The CoNLL-U of raw ``text``: ``# newdoc``, ``# newpar``, ``# sent_id``,
        ``# text``, multiword ranges, ``SpaceAfter=No``, every predicted column."""
        self._warn_missing()
        if not isinstance(text, str):
            raise ftio.not_str("to_conllu()", text)
        self._refuse_unfilled("raw text")
        return self._conllu(text, self._raw_tokenizer().sentence_tokens(text))

    def _conllu(self, text, found, first_id=1):
        """The CoNLL-U of ``text`` cut into ``found`` (as :meth:`_document`
        takes it), sentences numbered from ``first_id``: what
        :func:`fasttag.text.conllu.document_lines` writes of the annotated
        document, straight from the tokens and the tag lists."""
        return "".join(line + "\n" for line in tokens_lines(text, found, self._tag_found(found), first_id))

    def _tag_found(self, found, given=None):
        """:meth:`tag_words` of the words of ``found``, sentences of tokens
        (``given``: as tag_words takes it)."""
        return self.tag_words([[w for t in s for w in t.words] for s in found], given)

    def tag_words(self, sentences, given=None) -> dict:
        """Every column of pretokenized ``sentences`` (lists of words): a
        dict column -> per sentence the list of values.  ``given``: columns
        known beforehand (column -> per sentence the values, the UPOS of a
        CoNLL-U input), read by the components that need a column no
        component before them fills; the result holds only what they fill."""
        words = [list(s) for s in sentences]
        known, predicted = dict(given or {}), {}
        for comp in self.components.values():
            if comp.fills:
                filled = comp.fill(words, known) if words else dict.fromkeys(comp.fills, [])
                known.update(filled)
                predicted.update(filled)
        return predicted

    def _unfilled_reads(self):
        """The columns its components read that none of them fills."""
        filled = set(self.columns)
        return [c for comp in self.components.values() for c in comp.reads if c not in filled]

    def _refuse_unfilled(self, what, path=None):
        """An InputError where a part that needs its reads (a parser) would
        run on ``what`` (text), which cannot give the columns no part fills."""
        filled = set(self.columns)
        for comp in self.components.values():
            missing = [c for c in comp.reads if c not in filled]
            if comp.needs_reads and missing:
                raise InputError(f"the pipeline's {comp.name} part reads {', '.join(missing)}, which none of its "
                                 f"parts fills: give it CoNLL-U holding them, not {what}", path)

    def _raw_tokenizer(self, tokenizer=None):
        """What cuts raw text: its tokenizing component, else ``tokenizer`` or the bundled one."""
        own = self._tokenizing()
        if own is not None:
            if tokenizer is not None:
                raise InputError("option tokenizer: the model has its own tokenizer, which it always uses")
            return own.model
        return tokenizer_for(self, tokenizer)

    def _document(self, text, found):
        """The annotated document of ``text`` cut into ``found``, sentences
        of :class:`fasttag.text.goldtext.SurfaceToken`."""
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
        check = contextlib.nullcontext() if self.script_check is None else \
            self.script_check.opening(source, sources.current_encoding())
        with check:
            self._tag_file(source, out, n_threads, format, tokenizer, to)

    def _tag_file(self, source, out, n_threads, format, tokenizer, to):
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
                self._refuse_unfilled("pretokenized text" if fmt == "text" else "raw text", name)
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
        fields = {c: CONLLU_FIELDS.index(c.upper()) for c in self._unfilled_reads()}

        def tag(batch):         # a column read that no component fills: the input's (a lemmatizer's UPOS)
            given = {c: [[row[f] for row in s.rows] for s in batch] for c, f in fields.items()}
            return batch, self.tag_words([s.words for s in batch], given)
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
            found = _pretokenized(text) if tokenizer is None else tokenizer.sentence_tokens(text)
            if to == "conllu":
                return batch, (text, found, self._tag_found(found))
            return batch, self._document(text, found)
        sent_id = 0
        for batch, doc in parallel.ordered_map(work, _line_batches(lines), n_threads):
            if to == "conllu":
                # one document, sentences numbered across batches; each batch, as each line, opens a paragraph
                text, found, predicted = doc
                # every line ends with its line break (a space after its last token, whatever follows)
                yield "".join(line + "\n" for line in tokens_lines(text + "\n", found, predicted, sent_id + 1))
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
                        yield self._json(forms, {c: [getattr(w, c) for w in words] for c in self.columns}, number,
                                         offsets, _multiword(sent.tokens))
                    else:
                        yield output.Record(forms, [w.upos for w in words], number, offsets)

    # ------------------------------------------------------------ evaluation

    def evaluate(self, data, gold_tokens=False, n_threads=1) -> dict:
        """The CoNLL 2018 shared task's scores on gold CoNLL-U ``data``
        (:mod:`fasttag.text.conll18`), F1 as fractions: Tokens, Sentences,
        Words and the columns the model predicts (UPOS, XPOS, UFeats,
        AllTags, Lemmas; UAS, LAS, MLAS and BLEX where it predicts heads and
        the gold data has them), from its raw text (the default) or with its gold
        tokens (``gold_tokens=True``); under each metric's name (as
        :func:`fasttag.text.conll18.evaluate_conllu` gives them) its counts,
        precision, recall, F1 and aligned accuracy; also ``words``,
        ``seconds`` and ``words_per_second``."""
        self._warn_missing()
        n_threads = parallel.check_threads(n_threads)
        if gold_tokens not in (True, False):
            raise TypeError(f"gold_tokens must be True or False, not {gold_tokens!r}")
        gold = read_document(data)
        if not gold.sentences:
            raise InputError("the evaluation data holds no sentences", path=_name(data))
        if not gold_tokens and self.tokenizer is None:
            raise InputError("the model has no tokenizer: evaluate it with gold tokens (option gold_tokens)")
        found, given = None, None
        if gold_tokens:
            found = [[SurfaceToken(t.start, t.end, t.form, tuple(w.form for w in t.words)) for t in s.tokens]
                     for s in gold.sentences]
            # the columns its parts read that none fills: the gold ones (a parser alone, on gold tags)
            given = {c: [[getattr(w, c) for w in s.words] for s in gold.sentences] for c in self._unfilled_reads()}
        else:
            self._refuse_unfilled("raw text (evaluate it with gold tokens: option gold_tokens)", _name(data))
        # the document's objects go once its columns are taken: a long text is scored in a small multiple of its size
        columns = self.columns
        extra = [c for c in columns if c not in _SCORED]
        text, gold = gold.text, Annotation.of_document(gold, "gold", extra)
        t0 = time.perf_counter()
        if found is None:
            found = self._tokenizing().tokenize(text)
        # the system's words hold what it read too (a parser's MLAS compares its words' UPOS and features)
        system = Annotation.of_tokens(text, found, {**(given or {}), **self._tag_found(found, given)})
        seconds = time.perf_counter() - t0
        del found
        scorers = [c.scores for c in self.components.values() if c.metrics]
        scores = evaluate_annotations(gold, system, scorers)
        names = [m for m in METRICS if m in ("Tokens", "Sentences", "Words") or _METRIC_COLUMNS[m] <= set(columns)]
        names += [m for m in DEPENDENCY_METRICS if m in scores]       # where it predicts heads and the gold has them
        names += [m for c in self.components.values() for m in c.metrics]
        missing = [m for m in names if m not in scores]
        if missing:
            raise ValueError(f"a component's scores() gave no {missing[0]!r}, one of its metrics")
        result = ScoresWithOldKeys({"mode": "gold tokens" if gold_tokens else "raw text"})
        result.update({m: scores[m].as_dict() for m in names})
        result["words"] = scores["Words"].system
        result["seconds"] = seconds
        result["words_per_second"] = result["words"] / seconds if seconds > 0 else 0.0
        # the keys of releases before one set of metric keys: still there (JSON output), deprecated in Python
        result.old_keys({_KEYS.get(m, m.lower()): (m, "f1") for m in names}, scores={m: result[m] for m in names})
        return result

    @staticmethod
    def report(result):
        """The text of an :meth:`evaluate` result, as ``fasttag eval`` prints it:
        the shared task's table."""
        return score_table(result)

    # ------------------------------------------------------------ storage

    def _parts(self):
        headers, arrays = loading.nested_parts({name: c.to_parts() for name, c in self.components.items()})
        return {"kind": self.kind, "meta": modelfile.stored_meta(self.meta), "parts": headers}, arrays

    @classmethod
    def _from_parts(cls, header, arrays):
        """Each component read by the class registered under its name,
        checked as its own model file is; an array of no component is a
        corrupt file."""
        if header.get("kind") != cls.kind:
            raise ModelFormatError(f"not a Pipeline model (kind {header.get('kind')!r})")
        meta = header.get("meta", {})
        if not isinstance(meta, dict):
            raise ModelFormatError("corrupt fasttag model: the pipeline's meta is not an object")
        missing = meta.get("missing", [])
        if not isinstance(missing, list) or not all(isinstance(m, str) and _known(m) for m in missing) \
                or len(set(missing)) != len(missing):
            raise ModelFormatError("corrupt fasttag model: the pipeline's missing parts are not a list of its part "
                                   "names")
        stored = header.get("parts")
        if not isinstance(stored, dict) or not stored:
            raise ModelFormatError("corrupt fasttag model: the pipeline has no parts")
        classes = {name: component_class(name) for name in stored}
        stray = loading.stray_array(arrays, stored)
        if stray is not None:
            raise ModelFormatError(f"corrupt fasttag model: array {stray[:60]!r} belongs to no pipeline part")
        built = {}
        for name, comp in classes.items():
            sub = stored[name]
            if not isinstance(sub, dict) or "arrays" in sub:
                raise ModelFormatError(f"corrupt fasttag model: the pipeline's {name} part is malformed")
            try:
                built[name] = comp.from_parts(sub, loading.nested_arrays(name, arrays))
            except ModelFormatError as exc:
                text = str(exc)
                raise ModelFormatError(text if text.startswith(("corrupt fasttag model: the pipeline's",
                                                                "the pipeline's")) else
                                       f"the pipeline's {name} part: {text}") from None
            if not isinstance(built[name], comp):
                raise ModelFormatError(f"corrupt fasttag model: the pipeline's {name} part is not a {comp.__name__}")
        try:
            return cls(parts=built, meta=meta)
        except ValueError as exc:
            raise ModelFormatError(f"corrupt fasttag model: {exc}") from None


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


def _shared_script_check(models):
    """One script check for the models that have one (one verdict, one
    warning per script for the whole pipeline), judging by the words of the
    first of them that can tell its training words; None if none has one."""
    models = [m for m in models if isinstance(getattr(m, "script_check", None), scripts.ScriptCheck)]
    if not models:
        return None
    knowns = [m.script_check.known for m in models]

    def known(words):
        for k in knowns:
            answers = k(words)
            if answers is not None:
                return answers
        return None
    shared = scripts.ScriptCheck(known)
    for m in models:
        m.script_check = shared
    return shared


#: The result keys of the shared task's metrics (another metric's key: its name in lower case),
#: the columns a column metric needs, and the columns the shared task scores.
_KEYS = {"Tokens": "token_f1", "Sentences": "sentence_f1", "Words": "word_f1", "UPOS": "upos", "XPOS": "xpos",
         "UFeats": "ufeats", "AllTags": "alltags", "Lemmas": "lemmas"}
_METRIC_COLUMNS = {"UPOS": {"upos"}, "XPOS": {"xpos"}, "UFeats": {"feats"}, "AllTags": {"upos", "feats"},
                   "Lemmas": {"lemma"}}
_SCORED = ("upos", "xpos", "feats", "lemma")


def _known(name):
    """Whether ``name`` is a component's (registered or installed)."""
    try:
        component_class(name)
    except ModelFormatError:
        return False
    return True


def _component(name, part):
    """``part`` as the component ``name``: a component of that name, or a
    model the component registered under ``name`` wraps."""
    if isinstance(part, Component):
        if part.name != name:
            raise ValueError(f"part {name!r} is the component {part.name!r}")
        return part
    try:
        cls = component_class(name)
    except ModelFormatError:
        raise ValueError(f"unknown pipeline part {name!r}: one of {', '.join(registered())}") from None
    try:
        return cls(part)
    except TypeError as exc:
        raise TypeError(f"the {name} part: {exc}") from None


def _component_classes(components):
    """The component classes of ``components`` (names or classes), each once."""
    out = []
    for c in components:
        if isinstance(c, type) and issubclass(c, Component) and c.name is not None:
            cls = c
        elif isinstance(c, str):
            try:
                cls = component_class(c)
            except ModelFormatError:
                raise InputError(f"option components: unknown component {c!r}: one of "
                                 f"{', '.join(registered())}") from None
        else:
            raise TypeError(f"components: {c!r} is not a component name or a registered Component class")
        if cls in out:
            raise InputError(f"option components: {cls.name!r} is given twice")
        out.append(cls)
    return out


def _ordered(components):
    """``components`` (name -> component) in an order where each runs after
    those that fill what it reads, otherwise the built-in ones in their
    order (:data:`DEFAULT_COMPONENTS`), then the others as given; the
    tokenizer first."""
    rank = {name: i for i, name in enumerate(DEFAULT_COMPONENTS)}
    pending = sorted(components.items(), key=lambda item: (not item[1].tokenizes,
                                                           rank.get(item[0], len(rank))))
    out, filled = {}, set()
    while pending:
        ready = next((i for i, (_, c) in enumerate(pending) if not set(c.reads) - filled
                      or not set(c.reads) & {f for _, o in pending for f in o.fills}), 0)
        name, comp = pending.pop(ready)
        out[name] = comp
        filled.update(comp.fills)
    return out


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


def _meta(given, treebank):
    """What a trained pipeline's ``meta`` records: the corpus and licence
    given, the size of its training data."""
    meta = {k: given[k] for k in ("corpus", "licence") if given.get(k)}
    meta["train_sentences"] = len(treebank.sentences)
    meta["train_words"] = sum(len(s.words) for s in treebank.sentences)
    return meta


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
    """``data`` (a path or a binary file) as something each component can
    read from its start: a path, or the stream's bytes."""
    if ftio.is_path(data):
        return data
    if hasattr(data, "read"):
        raw = data.read()
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        return _Bytes(raw, _name(data) or "<stdin>")
    raise TypeError(f"{what} must be a CoNLL-U path or a binary file, not {type(data).__name__}")


def _treebank(data, argument, what, gold_text=False):
    """The :class:`Treebank` of ``data`` (a path or a binary file, the
    ``argument`` of the call), read once (with its gold text if
    ``gold_text``); an error names the file."""
    source = _rereadable(data, argument)
    try:
        return Treebank.read(source, _name(data), gold_text)
    except InputError as exc:
        if exc.path is None and _name(data) is not None:
            raise InputError(str(exc), path=_name(data)) from None
        raise


def _line_batches(lines):
    """Lists of (line number, line) of about RAW_BATCH_CHARS characters."""
    batch, n = [], 0
    for number, line in enumerate(lines, start=1):
        batch.append((number, line))
        n += len(line) + 1
        if n >= RAW_BATCH_CHARS or parallel.input_would_wait():     # less where the input pauses
            yield batch
            batch, n = [], 0
    if batch:
        yield batch


def _pretokenized(text):
    """Sentences of SurfaceToken of text whose lines are sentences of words split at whitespace."""
    out, at = [], 0
    for line in text.split("\n"):
        toks, pos = [], 0
        for w in line.split():
            a = line.index(w, pos)
            pos = a + len(w)
            toks.append(SurfaceToken(at + a, at + pos, w, (w,)))
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
