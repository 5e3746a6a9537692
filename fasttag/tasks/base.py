"""The task contract: what every trained fasttag sequence model shares,
and the hooks where a task differs.

A task is a subclass of :class:`SequenceTask` that overrides only the hooks
named in :data:`HOOKS` (a test holds every task to it); the base class owns
training, the one prediction path (:meth:`SequenceTask._predict`),
evaluation, ``tag_file`` and storage.  Errors raised here name Python
arguments (``option nbest``); the command line turns them into its flags.

What the tasks share beside the class has a module of its own: the raw
text tokenizer (:mod:`.rawtext_tokenizer`), the data files given to train
and evaluate (:mod:`.datafiles`), long inputs in pieces (:mod:`.pieces`),
tag sets (:mod:`.tagsets`), ``tag_file``'s records (:mod:`.records`) and
model-file checks (:mod:`.filechecks`); their public names are imported
here too, where callers of earlier versions found them.
"""
from __future__ import annotations

import math
import numbers
import sys
import time
import warnings

import numpy as np

from ..model import confidence, loading, modelfile, options, registry, training as trainer
from ..text import output, rawtext, scripts, sources
from .. import parallel
from ..errors import InputError, ModelFormatError, TrainingInterrupted, shown
from ..features.clusters import as_clusters
from ..model.progress import Progress
from ..model.sequence import SequenceModel
from ..model.tables import table_from_arrays, table_to_arrays
from .datafiles import data_name, naming, path_of, refuse_dev_on_train
from .filechecks import check_fixed_labels, kind_named  # noqa: F401  (check_fixed_labels: re-exported)
from .pieces import LONG_SENTENCE, PIECE_MARGIN, long_pieces, sliced  # noqa: F401  (PIECE_MARGIN: re-exported)
from .rawtext_tokenizer import tokenizer_for, tokenizer_of  # noqa: F401  (tokenizer_of: re-exported)
from .records import closed_after  # noqa: F401  (re-exported)
from .tagsets import decode_tags, tag_set  # noqa: F401  (re-exported)


#: The hooks a task may override, with why each is the task's: every other
#: method is the base class's alone.
HOOKS = (
    "__init__",             # the task's state beside the model (vocabulary, expansions, gazetteer)
    "_prepare_options",     # option values that are files whose contents the model keeps, read before the checks
    "_read",                # examples of a path or the task's Python form (Examples: with what it found)
    "_reading_options",     # how a trained model reads new data (the format and columns it was trained on)
    "_build",               # a new, untrained model: tags, featurizer, templates, constraints
    "_trained",             # training is over: drop what only training used
    "_encode",              # (input, context, gold tag ids) triples for the compiled model
    "_decode",              # the task's outputs (tags, words, sentences) of decoded tag ids
    "_records",             # the output records of tag_file: how the task reads a file to tag
    "_score",               # the task's metrics, the dev-selection score under ``primary``
    "_check_gold",          # refuse gold data that cannot be scored (no tags, another tag set)
    "_dev_scorer",          # a faster dev score on tag ids, where decoding would cost most of an epoch
    "_fit_temperature",     # the marginals' temperature on gold data (per token where T squared is too much)
    "_gold_tags",           # fine-tuning: the tags gold data uses, in the model's label space
    "_learn_words",         # fine-tuning and online training: the words the model keeps grow
    "_fold_tables",         # Dask training: the jackknifed tables of a shard's features ...
    "_use_fold_tables",     # ... and their use on a worker
    "_task_parts",          # what the task adds to the model file, its featurizer's options included
    "_featurizer_from",     # the featurizer a model file describes, checked
    "_load",                # the instance of a checked model file: the task checks its own parts
    "_known_words",         # which strings are training words: the script check of text to tag
)

#: What a task declares as class attributes (see :class:`SequenceTask`).
DECLARED = ("task", "kind", "featurizer", "primary", "commands", "older_featurizers", "local_features", "composite")


class Examples(list):
    """A task's examples with what reading them found out (``found``: the
    format guessed, the column named), so the caller decides how later data
    is read."""

    def __init__(self, items, found):
        super().__init__(items)
        self.found = dict(found)


class SequenceTask(modelfile.Stored):
    """A trained sequence model of one task.  Create one with the task
    class's ``train`` or with :func:`fasttag.load`."""

    task = None            # the task's name in the option table and the CLI
    kind = None            # the model file's "kind"
    featurizer = None      # (name, version) of the featurizer the model was trained with
    primary = None         # the key of the dev-selection score in _score()'s result
    commands = ()          # the ``fasttag`` commands that tag with its models (tag, ner, segment, tokenize)
    older_featurizers = ()  # (name, version) of featurizers of model files it still reads (an older engine)
    local_features = False  # an example is a list of words whose features see a few words around each:
    #                         a long one is decoded in overlapping pieces (:func:`long_pieces`)
    composite = False       # a model of several models, trained one after the other (a pipeline): no Dask
    #                         training, no learning curves of one run

    def __init__(self, model, meta=None):
        self.model = model
        self.meta = dict(meta or {})

    def for_command(self, command):
        """The model that runs ``fasttag COMMAND`` (one of :attr:`commands`): itself."""
        return self

    def summary(self, interrupted=False):
        """What ``fasttag train`` says of the model it saved: its best epochs
        and their dev score (``interrupted``: the epoch kept)."""
        info = self.model.training_info
        if interrupted:
            return f"the best completed epoch ({info.get('best_epoch')})"
        epochs = info.get("best_epochs") or [info.get("best_epoch")]
        score, pruned = info.get("dev_score"), self.meta.get("pruned_dev_score")    # pruned: the saved model's
        return (f"best epoch{'s' if len(epochs) > 1 else ''} {', '.join(map(str, epochs))}"
                + (f", dev {self.primary} {100 * score:.2f}%" if score is not None else "")
                + (f", {100 * pruned:.2f}% after pruning" if pruned is not None else ""))

    def __repr__(self):
        """What the model is: its class, its labels and, where it says, the corpus it learned from."""
        corpus = self.meta.get("corpus")
        tags = self.model.tags
        shown = ", ".join(map(repr, tags[:5])) + (", ..." if len(tags) > 5 else "")
        return (f"{type(self).__name__}({len(tags)} labels: {shown}"
                + (f"; corpus {str(corpus)[:60]!r}" if corpus else "") + ")")

    # ------------------------------------------------------------ the task's hooks

    @classmethod
    def _read(cls, data, opts, what):
        """The examples of ``data`` (a path, a file or the task's Python
        form), empty ones dropped; ``what`` names it in messages."""
        raise NotImplementedError

    @classmethod
    def _build(cls, examples, opts):
        """A new, untrained instance for ``examples``."""
        raise NotImplementedError

    def _encode(self, examples, training=False):
        """``(input, context, gold tag ids or None)`` triples for the model."""
        raise NotImplementedError

    def _decode(self, examples, ids):
        """The output of each example from the tag ids of its inputs."""
        raise NotImplementedError

    def _score(self, examples, outputs, opts):
        """Metrics (fractions), the dev-selection score under :attr:`primary`."""
        raise NotImplementedError

    def _records(self, source, json, n_threads, **reading):
        """``(records, how)``: the lazily tagged records of ``source`` and the
        keywords of :func:`fasttag.text.output.write`."""
        raise TypeError(f"a {type(self).__name__} tags Python objects, not files")

    # ------------------------------------------------------------ training

    def _fold_tables(self, read_shards):
        """Dask training: the jackknifed features' tables when each shard of
        ``read_shards()`` counts its folds from its own start, as ``_encode``
        does on the worker; None without jackknifed features."""
        return None

    def _use_fold_tables(self, tables):
        """On a worker: jackknife the shard's features with ``tables``
        (from :meth:`_fold_tables`) when it is encoded."""

    @classmethod
    def _prepare_options(cls, options_):
        """Hook: the keywords of :meth:`train` and :meth:`untrained`, with the
        files whose contents the model stores loaded before the checks and
        before any work: word clusters for the tasks that take them."""
        if options_.get("clusters") is not None and options.BY_NAME["clusters"].applies(cls.task):
            options_["clusters"] = as_clusters(options_["clusters"], "option clusters")
        return options_

    @classmethod
    def _task_name(cls, options):
        """The option-table task of a ``train`` call: the class's own, or
        the one its option ``task`` names among those the class declares
        with that keyword (a span tagger trains ``chunk`` or ``ner``)."""
        named = [t.name for t in registry.TASKS.values() if t.cls is cls and "task" in t.keywords]
        if not named:
            return cls.task
        task = options.pop("task", None)
        if task is not None and task not in named:
            raise InputError(f"task must be {', '.join(map(repr, named))} or None, not {task!r}")
        return task or cls.task

    @classmethod
    def train(cls, train, dev=None, **options_) -> SequenceTask:
        """Train on ``train`` (a path or the task's Python form), keeping
        the epoch with the best score on ``dev`` (same forms, or None).
        ``options_``: this task's options (``help(fasttag.model.options)``).
        ``verbose``: progress on standard error (None: when it is a
        terminal).  Ctrl-C raises :class:`fasttag.errors.TrainingInterrupted`
        whose ``model`` is the best completed epoch's model, or None.
        ``init`` (a model of this class, or its path) fine-tunes it; new tags
        need ``allow_new_tags``.  With ``dev``, the marginals' temperature is
        fitted on it.  ``threads`` and ``client`` (a Dask client): train on
        shards (docs/training.md, :mod:`fasttag.distributed`)."""
        refuse_dev_on_train(train, dev)                 # before any work
        client = options_.pop("client", None)
        options_ = cls._prepare_options(options_)
        task = cls._task_name(options_)
        init, checked = options_.get("init"), options_
        if init is not None:
            options.resolve(task, "train", options_, f"{cls.__name__}.train")     # the call's own errors first
            init = cls._init_model(init, options_)
            # checked as if the call had named the rule the model was trained with
            checked = {**options_, **init._training_rule(options_)}
        opts = options.resolve(task, "train", checked, f"{cls.__name__}.train")
        opts["task"] = task
        opts.pop("init", None)
        if init is not None:
            opts = init._reading_options(opts, options_)         # read new data as the model was trained
        verbose = opts["verbose"]
        report = Progress(task, sys.stderr.isatty() if verbose is None else verbose)
        if path_of(train) is not None:                 # examples given in memory are not read
            report.line(f"reading {data_name(train)}")
        examples = cls._read_named(train, opts, "training data", "no training sentences")
        try:
            if init is None:
                self = cls._build(examples, opts)
            else:
                self = init
                self._extend_tags(examples, opts.get("allow_new_tags"))
        except InputError as exc:
            raise naming(exc, train) from None
        if client is not None and opts["threads"] != 1:
            raise InputError("option threads applies to training on this machine: with a Dask client, "
                             "the shards are the workers")
        if client is not None and opts["ensemble"] != 1:
            raise InputError("option ensemble applies to training on this machine, not with a Dask client")
        opts["threads"] = opts["threads"] or parallel.available_cores()     # 0: every core, as for tagging
        settings = trainer.Settings.of(opts)
        data = self._encode(examples, training=True) if client is None else examples
        if init is not None:
            self._open_tag_dictionary(data if client is None else self._encode(examples, training=True))
        dev_data = evaluate = None
        if dev is not None:
            if path_of(dev) is not None:
                report.line(f"reading {data_name(dev)}")
            dev_examples = cls._read_named(dev, opts, "dev data", "no dev sentences")
            try:
                self._check_gold(dev_examples)
                dev_data = self._encode(dev_examples)
                evaluate = self._dev_scorer(dev_examples)
            except InputError as exc:
                raise naming(exc, dev) from None
        report.line(f"training on {cls._n_sentences(examples):,} sentences"
                    + (f", dev {cls._n_sentences(dev_examples):,}" if dev_data else ""))
        t0 = time.perf_counter()
        try:
            backend = None
            if client is not None:
                from ..model.dask_training import DaskShards
                backend = DaskShards(self, train, opts, settings, client)
            history = trainer.fit(self.model, data if client is None else None, dev_data, evaluate=evaluate,
                                  name=task, progress=report, init=init is not None, backend=backend,
                                  settings=settings)
        except TrainingInterrupted as exc:
            if exc.model is not None:
                self._finish(opts, t0, None)
                if dev_data:
                    try:
                        self.meta["temperature"] = self._fit_temperature(dev_data)
                    except KeyboardInterrupt:       # a second Ctrl-C: saved without one
                        self.meta.pop("temperature", None)
                exc.model = self
            raise
        self._finish(opts, t0, history)
        if dev_data and opts.get("prune"):
            self._check_pruned(opts["prune"], dev_data, evaluate, report)
        if init is not None:
            self.meta["fine_tuned"] = self.meta.get("fine_tuned", 0) + 1
            self._learn_words(examples)
        if dev_data:
            self.meta["temperature"] = self._fit_temperature(dev_data)
        elif init is None:
            self.meta.pop("temperature", None)
        # fine-tuned without dev data: the base model's temperature, nearer the truth than none
        return self

    @classmethod
    def _n_sentences(cls, examples):
        """The sentences of ``_read``'s examples, for progress lines."""
        return sum(getattr(ex, "n_sentences", 1) for ex in examples)

    @classmethod
    def _read_named(cls, data, opts, what, empty):
        """:meth:`_read`'s examples of ``data``, its errors naming the file;
        ``empty``: the error's text when there are none."""
        try:
            examples = cls._read(data, opts, what)
        except InputError as exc:
            raise naming(exc, data) from None
        if not examples:
            raise InputError(empty, path=path_of(data))
        opts.update(getattr(examples, "found", {}))     # the call reads its later data the same way
        return examples

    def _fit_temperature(self, encoded):
        """The temperature fitted on ``_encode``'s triples of gold data."""
        return confidence.fit_temperature(self.model, [(x, c) for x, c, _ in encoded], [g for _, _, g in encoded])

    def _finish(self, opts, t0, history):
        self.meta["train_seconds"] = time.perf_counter() - t0
        if history is not None:
            self.meta["history"] = history
        for key in ("corpus", "licence"):
            if opts.get(key):
                self.meta[key] = opts[key]
        self._trained(opts)

    def _trained(self, opts):
        """Hook: called once training is over."""

    def _check_pruned(self, threshold, dev_data, evaluate, report):
        """Score the pruned model on dev and warn on a loss of over a point:
        thresholds are in the weights' units, which differ by algorithm."""
        selection = trainer.Selection(self.model, dev_data, evaluate)
        after = selection.score(self.model.emit, self.model.trans, self.model.decoder == "greedy")
        before = self.model.training_info.get("dev_score")
        before = after if before is None else before
        self.meta["pruned_dev_score"] = after
        report.line(f"pruned weights below {threshold:g}: dev {100 * before:.2f}% -> {100 * after:.2f}%")
        if after < before - 0.01:
            warnings.warn(f"option prune: pruning weights below {threshold:g} lowered the dev score from "
                          f"{100 * before:.2f}% to {100 * after:.2f}%; try a smaller threshold",
                          UserWarning, stacklevel=3)

    def prune(self, threshold: float) -> int:
        """Drop emission weights with ``|w| < threshold`` (smaller models;
        measure the accuracy cost).  Returns the number of weights kept."""
        if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, numbers.Real) \
                or not math.isfinite(threshold) or threshold < 0:
            raise ValueError(f"prune() takes a finite threshold of at least 0, not {threshold!r}")
        arrs = table_to_arrays(self.model.emit, "emit", threshold)
        self.model.emit = table_from_arrays(arrs, "emit", len(self.model.tags))
        self.meta["pruned_below"] = float(threshold)
        return len(arrs["emit.weights"])

    # ------------------------------------------------------------ online training

    @classmethod
    def untrained(cls, data, **options_):
        """A model built for ``data`` as :meth:`train` builds it, with no
        weights yet: teach it with :meth:`update`.  ``options_`` as for
        :meth:`train`, but for those of the training loop."""
        options_ = cls._prepare_options(options_)
        task = cls._task_name(options_)
        opts = options.resolve(task, "train", options_, f"{cls.__name__}.untrained")
        opts["task"] = task
        examples = cls._read(data, opts, "data")
        if not examples:
            raise InputError("no sentences to build a model for")
        found = getattr(examples, "found", {})
        opts.update({k: v for k, v in found.items() if k != "format"})      # the column as named; no format kept
        self = cls._build(examples, opts)
        self._trained(opts)
        self.meta["online"] = trainer.Settings.of(opts).rule
        return self

    def update(self, data, allow_new_tags=False):
        """Learn from ``data`` (a path or the task's Python form): one pass
        over its sentences in order, continuing the previous calls' weights
        and average.  New tags need ``allow_new_tags`` (before the first call
        only).  Returns the fraction of positions wrong before their update.
        Not thread-safe; a saved or copied model restarts the average."""
        opts = options.resolve(self._eval_task(), "eval", {}, f"{type(self).__name__}.update")
        examples = self._read(data, self._reading_options(opts, {}), "data")
        if not examples:
            return 0.0
        online = getattr(self, "_online", None)
        new = sorted(self._gold_tags(examples) - set(self.model.tags))
        if new and online is not None:
            raise InputError(f"the data has tags the model does not know ({', '.join(new[:5])}): "
                             f"new tags can be added before the first update only")
        self._extend_tags(examples, allow_new_tags)
        if online is None:
            info = self.meta.get("online") or self.model.training_info or {}
            online = self._online = trainer.Online(self.model, trainer.Settings.of(
                {key: info.get(key) for key in ("algorithm", "k", "C")}))
        data_ = self._encode(examples, training=True)
        self._open_tag_dictionary(data_)
        wrong = online.update(data_)
        self._learn_words(examples)
        return wrong / max(1, sum(len(g) for _, _, g in data_))

    def _learn_words(self, examples):
        """Fine-tuning and online training: add the words of ``examples`` to
        the vocabulary the model keeps."""

    # ------------------------------------------------------------ fine-tuning

    #: Options that fix a model's structure: a fine-tuned model keeps its own.
    STRUCTURE = ("templates", "decoder", "tagdict_min_count", "prune_k", "internal_scheme", "scheme",
                 "document_features", "gazetteers", "dictionary", "folds", "runs", "feature_columns",
                 "clusters", "ambiguity_classes")

    def _training_rule(self, given):
        """Fine-tuning: the algorithm (with MIRA's k and C) the model was
        trained with, where the call names none: perceptron steps would undo
        a MIRA model's small weights."""
        info = self.model.training_info or {}
        algorithm = info.get("algorithm")
        if given.get("algorithm") is not None or algorithm not in ("perceptron", "mira"):
            return {}
        rule = {"algorithm": algorithm}
        if algorithm == "mira":
            rule.update({key: info[key] for key in ("k", "C") if given.get(key) is None and info.get(key) is not None})
        return rule

    @classmethod
    def _init_model(cls, init, given):
        """A private copy of the model to fine-tune, checked."""
        if isinstance(init, SequenceTask):
            model = init
        elif isinstance(init, (str, bytes)) or hasattr(init, "__fspath__"):
            header, arrays, path = loading.read(init)         # a path or a bundled model's name
            if header.get("kind") != cls.kind:
                raise InputError(f"init: {kind_named(header.get('kind'), by_class=True)} cannot be fine-tuned as a {cls.__name__}")
            model = loading.build(header, arrays, path)
        else:
            raise TypeError(f"init must be a model or a model path, not {type(init).__name__}")
        if not isinstance(model, cls):
            raise InputError(f"init: a {type(model).__name__} model cannot be fine-tuned as a {cls.__name__}")
        fixed = [k for k in cls.STRUCTURE if given.get(k) is not None]
        if fixed:
            raise InputError(f"option {fixed[0]} cannot change when fine-tuning: the model's is kept")
        return type(model).from_bytes(model.to_bytes())

    def _gold_tags(self, examples):
        """The tags the gold ``examples`` use; none for fixed labels."""
        return set()

    def _extend_tags(self, examples, allow):
        """Refuse the tags the model does not know, or with ``allow`` add them."""
        new = sorted(self._gold_tags(examples) - set(self.model.tags))
        if not new:
            return
        if not allow:
            listed = ", ".join(new[:5]) + (f" and {len(new) - 5} more" if len(new) > 5 else "")
            raise InputError(f"the training data has tags the model does not know ({listed}): "
                             f"allow them with option allow_new_tags=True")
        self.model.add_tags(new)

    def _open_tag_dictionary(self, encoded):
        """Fine-tuning: a word whose new gold tag lies outside its tag
        dictionary class loses its entry, or it could never be tagged so."""
        entries, classes = self.model.tagdict, self.model.tagdict_classes
        if not entries:
            return
        for tokens, _, gold in encoded:
            for token, tag in zip(tokens, gold):
                c = entries.get(token)
                if c is not None and tag not in classes[c]:
                    del entries[token]

    def _check_gold(self, examples):
        """Hook: an InputError when gold ``examples`` cannot be scored (no
        tags, another tag set: a score near 0 would hide the wrong column)."""

    def _dev_scorer(self, examples):
        """``score(predicted id arrays) -> float`` on dev ``examples``."""
        def score(ids):
            return self._score(examples, self._decode(examples, ids), {})[self.primary]
        return score

    # ------------------------------------------------------------ prediction

    def _predict(self, examples, n_threads=1, n_best=None, inputs=None):
        """The one prediction path: :meth:`_decode`'s output per example, or
        with ``n_best=k`` its k best as ``(output, score)`` pairs.
        ``inputs``: the model inputs where the caller built them."""
        inputs = self._inputs(examples) if inputs is None else inputs
        if n_best is None:
            if self.local_features and any(len(x) > LONG_SENTENCE for x, _ in inputs):
                return self._predict_pieces(examples, inputs, n_threads)
            return self._decode(examples, self.model.predict_ids(inputs, n_threads=n_threads))

        def best(pairs):
            out = []
            for (ex, _), found in zip(pairs, confidence.nbest_ids(self.model, [x for _, x in pairs], n_best)):
                decoded = self._decode([ex] * len(found), [ids for _, ids in found])
                out.append([(o, score) for o, (score, _) in zip(decoded, found)])
            return out
        return parallel.map_batches(best, list(zip(examples, inputs)), n_threads, size=lambda p: len(p[1][0]))

    def _predict_pieces(self, examples, inputs, n_threads):
        """:meth:`_predict` of examples some of which are longer than
        :data:`LONG_SENTENCE`: each of those decoded in overlapping pieces,
        the middle of each piece kept, so that memory stays linear in the
        length with a constant of one piece's lattice, not the sentence's."""
        pieces, spans = [], []          # per example: (first piece, [(keep from, keep to) per piece])
        piece_inputs = []
        for ex, (x, c) in zip(examples, inputs):
            first = len(pieces)
            keeps = []
            for a, b, keep_a, keep_b in long_pieces(len(x)):
                pieces.append(tuple(sliced(e, a, b) for e in ex))
                piece_inputs.append((x[a:b], sliced(c, a, b)))
                keeps.append((keep_a - a, keep_b - a))
            spans.append((first, keeps))
        decoded = self._decode(pieces, self.model.predict_ids(piece_inputs, n_threads=n_threads))
        out = []
        for first, keeps in spans:
            if len(keeps) == 1 and keeps[0][0] == 0:
                out.append(decoded[first])
                continue
            whole = []
            for k, (a, b) in enumerate(keeps):
                whole.extend(decoded[first + k][a:b])
            out.append(whole)
        return out

    def _inputs(self, examples):
        """``(input, context)`` pairs of ``examples`` for the model."""
        return [(x, c) for x, c, _ in self._encode(examples)]

    # ------------------------------------------------------------ confidence

    @property
    def temperature(self):
        """The temperature of :meth:`marginals`, fitted on the dev set at
        training time (1.0 for a model trained without one)."""
        return float(self.meta.get("temperature", 1.0))

    def _marginals(self, examples, inputs=None):
        """Per example an ``n x T`` array of tag probabilities."""
        inputs = self._inputs(examples) if inputs is None else inputs
        return confidence.marginals(self.model, inputs, self.temperature)

    # ------------------------------------------------------------ evaluation

    def evaluate(self, data, n_threads: int = 1, **options_) -> dict:
        """Scores on gold ``data`` (a path or the task's Python form), as
        fractions, plus ``seconds`` and the speed.  ``n_threads``: tag on
        that many threads (0: every core).  ``options_``: the task's
        evaluation options (``help(fasttag.model.options)``)."""
        n_threads = parallel.check_threads(n_threads)
        opts = options.resolve(self._eval_task(), "eval", options_, f"{type(self).__name__}.evaluate")
        try:
            examples = self._read(data, self._reading_options(opts, options_), "test data")
        except InputError as exc:
            raise naming(exc, data) from None          # the file at fault, for Python callers too
        t0 = time.perf_counter()
        outputs = self._predict(examples, n_threads) if examples else []
        seconds = time.perf_counter() - t0
        result = self._score(examples, outputs, opts)
        result["seconds"] = seconds
        for unit in ("tokens", "chars"):
            if unit in result:
                result[f"{unit}_per_second"] = result[unit] / seconds if seconds > 0 else 0.0
        return result

    #: The text of an :meth:`evaluate` result, as ``fasttag eval`` prints it.
    report = staticmethod(output.report)

    def calibrate(self, data, **options_) -> float:
        """Fit and keep the temperature of :meth:`marginals` on gold ``data``
        (read as :meth:`evaluate` reads it); predictions do not change.
        Returns the temperature."""
        opts = options.resolve(self._eval_task(), "eval", options_, f"{type(self).__name__}.calibrate")
        examples = self._read_named(data, self._reading_options(opts, options_), "calibration data",
                                    "the calibration data holds no sentences")
        try:
            self._check_gold(examples)
        except InputError as exc:
            raise naming(exc, data) from None
        self.meta["temperature"] = self._fit_temperature(self._encode(examples))
        return self.temperature

    def _eval_task(self):
        """The option-table task of an evaluation: the one the model was
        trained as (a span tagger's ``chunk`` or ``ner``), else its class's."""
        return self.meta.get("task") or self.task

    def _reading_options(self, opts, given):
        """Reading options for evaluation: those ``given``, else as trained."""
        return opts

    # ------------------------------------------------------------ tagging files

    def tag_file(self, source, out, *, json=False, nbest=None, n_threads=1, to=None, **reading):
        """Tag a file (a path or binary stream) into the text stream ``out``,
        in batches and bounded memory, on ``n_threads`` threads (0: every
        core).  ``json`` (or ``to="json"``): JSON Lines
        (:mod:`fasttag.text.output`), with the ``nbest`` best sequences when
        given; ``to="tagged"``: the task's text output, the default.
        ``reading``: ``format``, ``column``, ``tokenizer``, ``entities`` as
        the task reads them."""
        if to not in (None, "tagged", "json"):
            raise InputError(f"option to: a {self.kind} model writes tagged text or JSON, not {to!r} (CoNLL-U with "
                             f"every column: a UD pipeline)")
        if json and to == "tagged":
            raise InputError("option json writes JSON, not option to tagged: give one")
        json = json or to == "json"
        n_threads = parallel.check_threads(n_threads)
        if nbest is not None:
            if not json:
                raise InputError("option nbest writes JSON Lines: add option json")
            reading["nbest"] = nbest
        with self.script_check.opening(source, sources.current_encoding()):
            records, how = self._records(source, json, n_threads, **reading)
            try:
                output.write(out, records, **how)
            finally:
                records.close()

    @property
    def script_check(self) -> scripts.ScriptCheck:
        """The model's check that a text is in a script it knows
        (:class:`fasttag.text.scripts.ScriptCheck`): a UserWarning
        otherwise, since its output would be nonsense."""
        check = self.__dict__.get("_script_check")
        if check is None:
            check = self.__dict__["_script_check"] = scripts.ScriptCheck(self._known_words)
        return check

    @script_check.setter
    def script_check(self, check):
        """Share another's check (a pipeline's models: one warning per script)."""
        self.__dict__["_script_check"] = check

    def _known_words(self, words):
        """Which of ``words`` (strings) the model was trained on, as a
        sequence of bools; None where the model cannot tell (no word table)."""
        return None

    @staticmethod
    def _tagged(batches, tag, make, n_threads):
        """``make(sentence, output)`` per sentence of ``batches``, each batch
        tagged by ``tag(batch)`` on ``n_threads`` threads, in order."""
        for batch, outputs in parallel.ordered_map(lambda batch: (batch, tag(batch)), batches, n_threads):
            for sent, out in zip(batch, outputs):
                yield make(sent, out)

    def _text_records(self, lines, fmt, tokenizer, json, n_best, n_threads, make, tag_sents):
        """``make(sentence, output)`` per sentence of text ``lines``: raw
        text cut by ``tokenizer``, or pretokenized (``fmt`` "text"), a long
        line's pieces joined back in JSON Lines; ``tag_sents(sentences,
        n_best=)``: the task's tagging of token lists."""
        def tag(sents):
            return tag_sents(sents, n_best=n_best)
        if fmt == "text":
            tagged = rawtext.tag_batches(tag, rawtext.pretokenized_sentences(lines, blank_lines=not json), n_threads)
            if json and n_best is None:
                tagged = rawtext.whole_lines(tagged)
        else:
            tagged = rawtext.raw_sentences(lines, tokenizer_for(self, tokenizer), n_threads, tag_sents=tag,
                                           blank_lines=not json, tokens=json)
        for sent, out in tagged:
            yield make(sent, out)

    # ------------------------------------------------------------ storage

    def __reduce__(self):
        # pickle and deepcopy go through the checked model file's bytes, never
        # the compiled internals; the run-only meta (timings) travels beside
        run_only = {k: self.meta[k] for k in modelfile.RUN_ONLY_META if k in self.meta}
        return _from_bytes, (type(self), self.to_bytes(), run_only)

    def _parts(self):
        header, arrays = self.model.to_parts()
        header["kind"] = self.kind
        header["meta"] = modelfile.stored_meta(self.meta)
        extra_header, extra_arrays = self._task_parts()
        spec = extra_header.pop("featurizer", {})
        header.update(extra_header)
        arrays.update(extra_arrays)
        modelfile.stamp(header, *self.featurizer, **spec)
        return header, arrays

    def _task_parts(self):
        """``(header, arrays)`` the task adds to the model file."""
        return {}, {}

    @classmethod
    def _from_parts(cls, header, arrays):
        """Validate, then build: every value the compiled code will index
        is checked here, so a file that loads also decodes."""
        if header.get("kind") != cls.kind:
            raise ModelFormatError(f"not a {cls.__name__} model (kind {header.get('kind')!r})")
        named = header.get("featurizer", {}).get("name") if isinstance(header.get("featurizer"), dict) else None
        stamp = next((f for f in cls.older_featurizers if f[0] == named), cls.featurizer)
        spec = modelfile.check_stamp(header, *stamp)
        meta = header.get("meta", {})
        if not isinstance(meta, dict):
            raise ModelFormatError(f"corrupt fasttag model: meta is a {type(meta).__name__}, not an object")
        fine_tuned = meta.get("fine_tuned", 0)
        if not modelfile.header_int(fine_tuned, 0):
            raise ModelFormatError(f"corrupt fasttag model: meta fine_tuned {shown(fine_tuned)} is not a count")
        if meta.get("online") is not None:
            trainer.check_settings(meta["online"], "meta online")
        trainer.check_settings(header.get("training", {}), "training info")
        tau = meta.get("temperature", 1.0)
        if isinstance(tau, bool) or not isinstance(tau, (int, float)) or not 1e-3 <= tau <= 1e3:
            raise ModelFormatError(f"corrupt fasttag model: temperature {tau!r} is not a number in [0.001, 1000]")
        try:
            featurizer = cls._featurizer_from(spec, header, arrays, meta)
            model = SequenceModel.from_parts(header, arrays, featurizer)
            return cls._load(header, arrays, model, meta)
        except ModelFormatError:
            raise
        except (TypeError, ValueError, OverflowError, KeyError, AttributeError, IndexError) as exc:
            # whatever a task's checks let through: still a format error
            raise ModelFormatError(f"corrupt fasttag model: {exc}") from None

    @classmethod
    def _featurizer_from(cls, spec, header, arrays, meta):
        """The featurizer a model file's ``spec`` describes."""
        raise NotImplementedError

    @classmethod
    def _load(cls, header, arrays, model, meta):
        """The instance of a checked model: the task checks its own parts."""
        return cls(model, meta)


def _from_bytes(cls, data, run_only_meta):
    """Unpickle a task model (see ``SequenceTask.__reduce__``).  Kept in
    this module: the pickles of earlier versions name it here."""
    model = cls.from_bytes(data)
    model.meta.update(run_only_meta)
    return model
