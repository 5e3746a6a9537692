"""Dependency parsing: HEAD and DEPREL of each word, by a greedy
transition-based parser (arc-hybrid, trained with a dynamic oracle and
error exploration; :mod:`fasttag._core.parsing`) reading the words' forms,
UPOS, XPOS, FEATS and lemmas.

Non-projective trees are learned and produced through the
pseudo-projective transform (:mod:`fasttag.text.trees`): training trees
are lifted until projective, a lifted word's label naming its original
head's label, and parses are lowered again.
"""
from __future__ import annotations

import sys
import time
from collections import Counter

import numpy as np

from .. import parallel
from .._core import parsing
from .._core.weights import hash_strings
from ..errors import InputError, ModelFormatError, TrainingInterrupted, shown
from ..model import modelfile, options, registry
from ..model.progress import Progress
from ..model.tables import WeightTable, table_from_arrays, table_to_arrays
from ..text import trees
from ..text.conll18 import DEPENDENCY_METRICS, Annotation, ScoresWithOldKeys, evaluate_annotations, score_table
from ..text.conllu import read_document
from ..text.fieldcheck import column_fault
from ..text.goldtext import SurfaceToken
from ..text.parsers import CONLLU_FIELDS, parse_conllu
from ..text.sources import open_lines

__all__ = ["DependencyParser", "READS", "OWN_OPTIONS"]

#: The columns the parser reads beside the forms, in the order of its word attributes.
READS = ("upos", "xpos", "feats", "lemma")
#: The compiled feature set (name, version) a model file was trained with: a model of another is refused.
FEATURIZER = ("arc-hybrid-states", 1)
#: A decorated (lifted) label seen fewer times in training is learned as its plain label.
MIN_LIFTED_COUNT = 2
#: From the second epoch, the share of errors the training parse follows (error exploration).
EXPLORE = 0.9
#: With dev data, the averaged weights below the largest of these thresholds (in absolute value) whose
#: dev LAS loses at most PRUNE_LOSS are dropped: weights of features updated about once, a third to a
#: half of the model (lab-notes.md).  Small treebanks need more of them, so the dev data decides.
PRUNE_STEPS = (0.5, 1.0, 1.5)
PRUNE_LOSS = 0.002
#: Letters of the word's suffix attribute.
SUFFIX = 3
#: The most strings of one attribute whose hashes are kept (then the memo starts again).
MAX_MEMO = 500_000
#: The shared training options the parser takes (a pipeline gives it only these).
OWN_OPTIONS = frozenset({"epochs", "seed", "verbose", "corpus", "licence", "prune"})
_FIELDS = [CONLLU_FIELDS.index(c.upper()) for c in ("form",) + READS]
_HEAD, _DEPREL = CONLLU_FIELDS.index("HEAD"), CONLLU_FIELDS.index("DEPREL")


@registry.task("dep", title="dependency parser", help="dependency parser from CoNLL-U (FORM, UPOS, XPOS, FEATS, "
               "LEMMA, HEAD, DEPREL)", options=("prune",), defaults={"epochs": 15, "prune": None},
               shown_defaults={"prune": f"chosen on the dev data: the largest of {', '.join(map(str, PRUNE_STEPS))} "
                                        f"that loses at most {100 * PRUNE_LOSS:.1f} LAS (none without dev data)"},
               refuses=("algorithm", "k", "C", "threads", "ensemble", "init", "allow_new_tags"))
class DependencyParser(modelfile.Stored):
    """A trained dependency parser: :meth:`train` on CoNLL-U or
    :func:`fasttag.load`; :meth:`parse` words with their tags."""

    kind = "parser"
    commands = ("tag", "eval")
    primary = "las"             # the score ``fasttag eval`` leads with (the LAS F1, as a pipeline's result has it)
    #: it reads columns other models fill: the command line runs it as a pipeline's one part
    pipeline_part = True
    #: no Dask shards nor learning-curve plot (yet)
    sharded_training = False

    def __init__(self, table, labels, reads=READS, meta=None):
        """``table``: the averaged weights of the transitions; ``labels``:
        the DEPRELs (decorated ones included), a transition's label id
        indexing them; ``reads``: the columns of READS its training data
        filled (it reads the others as ``_``, as it learned them)."""
        self.table, self.labels, self.meta = table, list(labels), dict(meta or {})
        self.reads = tuple(c for c in READS if c in reads)
        self.n_classes = 1 + 2 * len(self.labels)
        self.root_label = self.labels.index("root") if "root" in self.labels else -1
        self._lifted = np.array([trees.LIFT in label for label in self.labels], dtype=bool)
        self._memo = [{} for _ in range(parsing.N_ATTRS)]
        self._case = {}             # FEATS -> its Case value

    def __repr__(self):
        return f"DependencyParser({len(self.labels)} labels, {len(self.table):,} features)"

    def summary(self, interrupted=False):
        """What ``fasttag train`` says of the model it saved."""
        return repr(self)

    # ------------------------------------------------------------ training

    @classmethod
    def train(cls, train, dev=None, **options_) -> DependencyParser:
        """Train on the CoNLL-U file ``train`` (a path or binary stream;
        every sentence with HEAD and DEPREL), keeping the epoch of the best
        LAS on ``dev`` (gold tokens and tags) where given.  ``options_``:
        ``epochs`` (15), ``seed``, ``verbose``, ``corpus``, ``licence``,
        ``prune`` (the averaged weights below it dropped; by default chosen
        on ``dev``, none without)."""
        opts = options.resolve(cls.task, "train", options_, "DependencyParser.train")
        return cls.train_sentences(_read(train), None if dev is None else _read(dev), **opts)

    @classmethod
    def train_sentences(cls, sentences, dev=None, **options_) -> DependencyParser:
        """:meth:`train` on parsed CoNLL-U sentences (each with ``rows``, the
        ten fields of its words, and ``start_line``), as a pipeline's
        treebank holds them."""
        opts = options.resolve(cls.task, "train", options_, "DependencyParser.train")
        verbose = opts.get("verbose")
        report = Progress(cls.task, sys.stderr.isatty() if verbose is None else bool(verbose))
        t0 = time.perf_counter()
        rows, heads, deprels = _trees(sentences, "the training data")
        if not rows:
            raise InputError("the training data has no dependency trees: every HEAD is '_'")
        lifted = Counter(label for s in deprels for label in trees.lifted_labels(s))
        deprels = [[label if trees.LIFT not in label or lifted[label] >= MIN_LIFTED_COUNT else trees.plain_label(label)
                    for label in s] for s in deprels]
        labels = sorted({label for s in deprels for label in s})
        if labels == ["root"]:
            raise InputError("the training data cannot teach a parser: every word is its sentence's root "
                             "(sentences of one word)")
        reads = [c for k, c in enumerate(READS, 1) if any(w[k] != "_" for s in rows for w in s)]
        model = cls(WeightTable(initial_features=1 << 16), labels, reads)
        index = {label: i for i, label in enumerate(labels)}
        attrs, offsets = model._attributes(rows)
        gold_heads = np.fromiter((h for s in heads for h in s), dtype=np.int32, count=len(attrs))
        gold_labels = np.fromiter((index[lab] for s in deprels for lab in s), dtype=np.int32, count=len(attrs))
        dev_rows = None
        if dev is not None:
            dev_rows, dev_heads, dev_deprels = _trees(dev, "the dev data", lift=False)
            if not dev_rows:
                raise InputError("the dev data has no dependency trees: every HEAD is '_'")
        table = model.table
        rng = np.random.default_rng(opts["seed"])
        best, best_score, step, history = None, -1.0, 0, []
        try:
            for epoch in range(1, opts["epochs"] + 1):
                order = rng.permutation(len(rows)).astype(np.int64)
                step, seen, errors = parsing.train_epoch(table, attrs, offsets, gold_heads, gold_labels, order,
                                                         model.n_classes, model.root_label, step,
                                                         0.0 if epoch == 1 else EXPLORE, opts["seed"] * 1000 + epoch)
                averaged = cls(table.averaged(step), labels, reads)
                line = {"epoch": epoch, "transition_errors": errors / max(seen, 1)}
                if dev_rows is not None:
                    uas, las = averaged._attachment(dev_rows, dev_heads, dev_deprels)
                    line.update(dev_uas=uas, dev_las=las)
                    if las > best_score:
                        best, best_score = averaged, las
                    report.line(f"epoch {epoch}: dev UAS {100 * uas:.2f} LAS {100 * las:.2f}")
                else:
                    best = averaged
                    report.line(f"epoch {epoch}: {100 * errors / max(seen, 1):.2f}% transitions wrong")
                history.append(line)
        except KeyboardInterrupt:
            raise TrainingInterrupted(len(history) + 1, best and best._trained(history, len(rows), len(attrs),
                                                                               opts, t0)) from None
        prune = opts["prune"]
        if prune is None and dev_rows is not None:
            prune = 0.0
            for threshold in PRUNE_STEPS:
                if best._pruned(threshold)._attachment(dev_rows, dev_heads, dev_deprels)[1] < best_score - PRUNE_LOSS:
                    break
                prune = threshold
        if prune:
            best = best._pruned(prune)
        return best._trained(history, len(rows), len(attrs), dict(opts, prune=prune or 0.0), t0)

    def _pruned(self, threshold):
        """A copy without the averaged weights below ``threshold`` in absolute value."""
        table = table_from_arrays(table_to_arrays(self.table, "weights", min_abs=threshold), "weights",
                                  self.n_classes)
        return type(self)(table, self.labels, self.reads, self.meta)

    def _trained(self, history, n_sentences, n_words, opts, t0):
        """Itself, its training recorded in its meta."""
        self.meta = {"epochs": opts["epochs"], "history": history, "train_sentences": n_sentences,
                     "train_words": int(n_words), "train_seconds": time.perf_counter() - t0, "prune": opts.get("prune"),
                     **{k: opts[k] for k in ("corpus", "licence") if opts.get(k)}}
        return self

    def _attachment(self, rows, heads, deprels):
        """UAS and LAS (labels to their universal part, punctuation included) on gold-tagged ``rows``."""
        got_heads, got_labels = self._parse_rows(rows)
        total = sum(len(s) for s in heads)
        uas = las = 0
        for gh, gl, ph, pl in zip(heads, deprels, got_heads, got_labels):
            for a, b, c, d in zip(gh, gl, ph, pl):
                if a == c:
                    uas += 1
                    las += b.partition(":")[0] == d.partition(":")[0]
        return uas / max(total, 1), las / max(total, 1)

    # ------------------------------------------------------------ parsing

    def parse(self, words, columns=None):
        """Heads and labels of pretokenized sentences: ``words`` the
        sentences' forms, ``columns`` the words' ``upos``, ``xpos``,
        ``feats`` and ``lemma`` (column -> per sentence the values; a
        column not given, or not among :attr:`reads`, is ``_``).  Returns
        ``(heads, deprels)``, per sentence a list of ints (1-based, 0 the
        root) and one of str."""
        columns = columns or {}
        for name in columns:
            if name not in READS:
                raise ValueError(f"columns: {name!r} is not one of {', '.join(READS)}")
        words = [list(s) for s in words]
        for c, values in columns.items():
            if len(values) != len(words) or any(len(v) != len(w) for v, w in zip(values, words)):
                raise ValueError(f"columns: {c} does not have one value per word of each sentence")
        given = [columns.get(c) if c in self.reads else None for c in READS]
        rows = []
        for i, s in enumerate(words):
            cols = [s] + [["_"] * len(s) if v is None else v[i] for v in given]
            rows.append(cols)
        return self._parse_rows(rows, by_columns=True)

    def _parse_rows(self, rows, by_columns=False):
        """Heads and labels of sentences given as their word fields (form
        and the READS columns), per word (``rows``) or per column."""
        attrs, offsets = self._attributes(rows, by_columns)
        n = len(attrs)
        heads = np.empty(n, dtype=np.int32)
        labels = np.empty(n, dtype=np.int32)
        parsing.parse_batch(self.table, attrs, offsets, self.n_classes, self.root_label, heads, labels)
        out_heads, out_labels = [], []
        names = self.labels
        lifted = self._lifted[labels].tolist() if n else []
        heads, labels = heads.tolist(), labels.tolist()
        for s in range(len(offsets) - 1):
            a, b = int(offsets[s]), int(offsets[s + 1])
            hs = heads[a:b]
            ls = [names[k] for k in labels[a:b]]
            if any(lifted[a:b]):
                hs, ls = trees.deprojectivize(hs, ls)
            out_heads.append(hs)
            out_labels.append(ls)
        return out_heads, out_labels

    def _attributes(self, rows, by_columns=False):
        """The attribute rows of the words of sentences (each given per
        word: form and READS values; or per column) and the sentences'
        offsets."""
        if by_columns:
            lengths = [len(s[0]) for s in rows]
            cols = [[v for s in rows for v in s[k]] for k in range(1 + len(READS))]
        else:
            lengths = [len(s) for s in rows]
            cols = [list(c) for c in zip(*(w for s in rows for w in s))] or [[] for _ in range(1 + len(READS))]
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        n = int(offsets[-1])
        attrs = np.empty((n, parsing.N_ATTRS), dtype=np.uint64)
        if n == 0:
            return attrs, offsets
        lowered = [f.lower() for f in cols[0]]
        case = self._case
        for f in set(cols[3]) - case.keys():
            case[f] = next((x[5:] for x in f.split("|") if x.startswith("Case=")), "")
        values = [lowered, cols[1], cols[2], cols[3], cols[4], [f[-SUFFIX:] for f in lowered],
                  list(map(case.__getitem__, cols[3]))]
        for a, vals in enumerate(values):
            attrs[:, a] = self._hashes(a, vals)
        return attrs, offsets

    def _hashes(self, a, values):
        memo = self._memo[a]
        got = list(map(memo.get, values))
        if None in got:
            if len(memo) > MAX_MEMO:
                memo.clear()
            new = list({v for v, h in zip(values, got) if h is None})
            memo.update(zip(new, hash_strings(new, a + 1).tolist()))
            got = list(map(memo.__getitem__, values))
        return np.fromiter(got, dtype=np.uint64, count=len(values))

    def tag_file(self, source, out, **given):
        """A parser fills CoNLL-U's HEAD and DEPREL from its other columns:
        ``fasttag.pipeline.Pipeline.of(parser).tag_file`` does."""
        raise InputError("a dependency parser fills the HEAD and DEPREL of CoNLL-U from its other columns: tag the "
                         "file with fasttag.pipeline.Pipeline.of(parser)")

    # ------------------------------------------------------------ evaluation

    def _eval_task(self):
        """The option-table task of an evaluation: its own."""
        return self.task

    def evaluate(self, data, n_threads=1) -> dict:
        """The CoNLL 2018 shared task's UAS, LAS, MLAS and BLEX of its parses
        of gold CoNLL-U ``data`` (a path or binary stream), with its gold
        tokens and tags, as a pipeline's :meth:`evaluate` gives them (F1 as
        fractions under each metric's name; ``las``: the LAS F1); also
        ``words``, ``seconds`` and ``words_per_second``."""
        parallel.check_threads(n_threads)
        doc = read_document(data)
        if not doc.sentences:
            raise InputError("the evaluation data holds no sentences", path=getattr(data, "name", data))
        words = [[w.form for w in s.words] for s in doc.sentences]
        columns = {c: [[getattr(w, c) for w in s.words] for s in doc.sentences] for c in READS}
        found = [[SurfaceToken(t.start, t.end, t.form, tuple(w.form for w in t.words)) for t in s.tokens]
                 for s in doc.sentences]
        gold = Annotation.of_document(doc, "gold")
        t0 = time.perf_counter()
        heads, deprels = self.parse(words, columns)
        seconds = time.perf_counter() - t0
        if not gold.gives_heads:
            raise InputError("the evaluation data has no dependency trees: every HEAD is '_'",
                             path=getattr(data, "name", data))
        scores = evaluate_annotations(gold, Annotation.of_tokens(doc.text, found, {**columns, "head": heads,
                                                                                  "deprel": deprels}))
        result = ScoresWithOldKeys({"mode": "gold tokens and tags"})
        result.update({m: scores[m].as_dict() for m in DEPENDENCY_METRICS})
        result["words"] = scores["Words"].system
        result.update(seconds=seconds, words_per_second=result["words"] / seconds if seconds > 0 else 0.0)
        result.old_keys({m.lower(): (m, "f1") for m in DEPENDENCY_METRICS})
        return result

    @staticmethod
    def report(result):
        """The text ``fasttag eval`` prints of an :meth:`evaluate` result."""
        return score_table(result)

    # ------------------------------------------------------------ its model file

    def _parts(self):
        header = {"kind": self.kind, "labels": self.labels, "reads": list(self.reads), "meta": self.meta}
        modelfile.stamp(header, *FEATURIZER, attributes=parsing.N_ATTRS, features=parsing.N_FEATURES)
        return header, table_to_arrays(self.table, "weights")

    @classmethod
    def _from_parts(cls, header, arrays):
        if header.get("kind") != cls.kind:
            raise ModelFormatError(f"not a {cls.__name__} model (kind {header.get('kind')!r})")
        spec = modelfile.check_stamp(header, *FEATURIZER)
        if spec.get("attributes") != parsing.N_ATTRS or spec.get("features") != parsing.N_FEATURES:
            raise ModelFormatError("corrupt fasttag model: the parser's featurizer computes other features than "
                                   "this fasttag's")
        labels, meta = header.get("labels"), header.get("meta", {})
        if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
            raise ModelFormatError("corrupt fasttag model: the parser's labels are not a list of strings")
        if len(set(labels)) != len(labels):
            raise ModelFormatError("corrupt fasttag model: the parser names a label twice")
        for label in labels:
            fault = column_fault(label, "DEPREL")
            if fault or label == "_":
                raise ModelFormatError(f"corrupt fasttag model: the parser's label {shown(label)} "
                                       f"{fault or 'is empty'}, which CoNLL-U cannot hold")
            # a parse writes a lifted label's own part, and the root's label only on the root
            own = trees.plain_label(label)
            if own in ("", "_"):
                raise ModelFormatError(f"corrupt fasttag model: the parser's lifted label {shown(label)} has no "
                                       f"label of its own")
            if own == "root" and label != "root":
                raise ModelFormatError(f"corrupt fasttag model: the parser's lifted label {shown(label)} would put "
                                       f"the root's label on another word")
        if labels == ["root"]:
            raise ModelFormatError("corrupt fasttag model: the parser has no label but the root's, so it cannot "
                                   "attach a second word")
        if not isinstance(meta, dict):
            raise ModelFormatError("corrupt fasttag model: meta is not an object")
        reads = header.get("reads")
        if not isinstance(reads, list) or any(not isinstance(c, str) or c not in READS for c in reads) \
                or len(set(reads)) != len(reads):
            raise ModelFormatError(f"corrupt fasttag model: the parser's reads are not columns of {', '.join(READS)}")
        table = table_from_arrays(arrays, "weights", 1 + 2 * len(labels))
        return cls(table, labels, reads, meta)


def _read(data):
    """The sentences of the CoNLL-U ``data`` (a path or binary stream)."""
    path, lines, close = open_lines(data)
    try:
        return list(parse_conllu(lines, path, _FIELDS[1]))
    except InputError as exc:
        if exc.path is None and path is not None:
            raise InputError(str(exc), path=path) from None
        raise
    finally:
        close()


def _trees(sentences, what, lift=True):
    """The word fields (form and READS), heads and labels (with ``lift``
    projectivized and decorated) of the sentences with a tree (HEAD
    filled); an InputError naming
    the sentence's line for a HEAD that makes no tree or a DEPREL a model
    cannot write."""
    rows, heads, labels = [], [], []
    for k, s in enumerate(sentences):
        if not s.rows or any(r[_HEAD] == "_" for r in s.rows):
            continue
        line = getattr(s, "start_line", None)
        where = f"{what}, sentence {k + 1}" + (f" (line {line})" if line else "")
        try:
            hs = [int(r[_HEAD]) for r in s.rows]
            trees.check_tree(hs)
        except ValueError as exc:
            raise InputError(f"{where}: HEAD makes no tree: {exc}") from None
        ls = [r[_DEPREL] for r in s.rows]
        for label in ls:
            fault = column_fault(label, "DEPREL")
            if fault or label == "_" or trees.LIFT in label:
                raise InputError(f"{where}: the DEPREL {shown(label)} {fault or 'is not a label'}, which a parser "
                                 f"cannot learn")
        if lift:
            hs, ls = trees.projectivize(hs, ls)
        rows.append([[r[f] for f in _FIELDS] for r in s.rows])
        heads.append(hs)
        labels.append(ls)
    return rows, heads, labels
