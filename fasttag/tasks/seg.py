"""Chinese word segmentation: B/M/E/S character tagging over the features
of :mod:`fasttag.features.segmentation`, decoded by Viterbi under the BMES
transition mask.  Input handling, dictionaries and unlabeled-text
features: docs/tasks.md.
"""
from __future__ import annotations

import functools
import itertools
import os
import re
from collections import deque
from collections import Counter
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import numpy as np

from ..text import formats as ftio
from ..text import metrics, output, schemes, scripts
from ..model import modelfile
from .. import parallel
from ..features.chars import MAX_WORD, WordSet, bmp_tables, codepoints, word_hashes
from ..features.segmentation import (CANDIDATE_CLASSES, CANDIDATE_TEMPLATES, CLUSTER_TEMPLATES, SEG_TEMPLATES, TAGS,
                                     CharClusters, CharFeaturizer, word_candidates)
from ..features.clusters import as_clusters, stored_clusters
from ..errors import InputError, ModelFormatError
from ..features.normalize import atomic_runs, normalize_text, run_letters
from ..model.sequence import SequenceModel
from ..model import registry
from .base import SequenceTask
from .filechecks import check_fixed_labels
from ..features.userdict import read_userdict

DEFAULT_RUNS = {"latin": True, "digits": True, "urls": True, "emails": True}
BATCH_CHARS = 50_000
LONG_LINE = 10_000         # longer lines are segmented in pieces cut after a break
CUT_WINDOW = 1_000         # characters around a cut searched for a run or word it would split
_BREAKS = frozenset("。！？；，、：!?;,:…\n \t\u3000")     # a word never spans them
_BREAK = re.compile("[" + "".join(sorted(_BREAKS)) + "]")

__all__ = ["Segmenter", "read_userdict"]


# ---------------------------------------------------------------- reading

def read_words(data, format=None, what="training data"):
    """Word lists (empty ones dropped) of a segmented corpus: a path or file
    (a sentence a line, or CoNLL-U), lines, or word lists.  TypeError for
    anything else."""
    if isinstance(data, str) and "\n" in data and not os.path.exists(data):
        raise TypeError(f"{what}: a path or lines, not one str of text")
    if ftio.is_source(data):
        if format is None and ftio.is_path(data):
            format = ftio.guess_format(data)
            if format == "conll":       # never scored as sentences of words: name it
                raise InputError("this looks like a column file, not segmented text (a sentence a line, words "
                                 "separated by spaces): give option format='conll' to read its first column as "
                                 "the words, or option format='text'", os.fsdecode(os.fspath(data)))
        if format == "conllu":
            return [ws for ws in map(_surface_tokens, ftio.read_conllu(data)) if ws]
        if format == "conll":
            return [s.words for s in ftio.read_conll(data, tag_column=None) if s.words]
        return [ws for ws in ftio.read_segmented(data, what) if ws]
    try:
        items = iter(data)
    except TypeError:
        raise TypeError(f"{what} must be a file's path, lines or word lists, not {type(data).__name__}") from None
    out = []
    for number, item in enumerate(items, start=1):
        if isinstance(item, str):
            ws = item.split()
        elif isinstance(item, (bytes, bytearray)) or not hasattr(item, "__iter__"):
            raise TypeError(f"{what}: sentence {number} is a {type(item).__name__}, "
                            f"not a str line or a list of str words")
        else:
            ws = []
            for w in item:
                if not isinstance(w, str):
                    raise TypeError(f"{what}: sentence {number} holds a {type(w).__name__} ({w!r:.40}), "
                                    f"not a str word")
                if w and not w.isspace():
                    ws.append(w)
        if ws:
            out.append(["".join(w.split()) for w in ws])
    return out


_TAGGED_WORD = re.compile(r"[^/]+/[A-Za-z][A-Za-z0-9]{0,5}")     # 迈向/v, 北京/ns, 中国/nsf


def check_segmented(sentences, what="data"):
    """An InputError when ``sentences`` (word lists) are not a word
    segmentation to learn from or score against: raw text (no boundaries,
    or mostly "words" longer than MAX_WORD) or ``word/TAG`` text."""
    words = [w for ws in sentences for w in ws]
    if not words:
        return
    chars = sum(map(len, words))
    in_long = sum(len(w) for w in words if len(w) > MAX_WORD)
    if all(len(ws) < 2 for ws in sentences) or 2 * in_long > chars:
        raise InputError(f"the {what} has no word boundaries (raw text?): "
                         + ("no line holds two words" if all(len(ws) < 2 for ws in sentences) else
                            f"{100 * in_long / chars:.0f}% of its characters lie in 'words' of more than "
                            f"{MAX_WORD} characters")
                         + "; a segmenter learns from and is scored against words separated by spaces")
    tagged = sum(1 for w in words if _TAGGED_WORD.fullmatch(w))
    if 2 * tagged > len(words):
        example = next(w for w in words if _TAGGED_WORD.fullmatch(w))
        raise InputError(f"the {what} is word/TAG text: {100 * tagged / len(words):.0f}% of its words end in "
                         f"a tag ({example}); a segmenter reads the words alone, separated by spaces: "
                         f"remove the tags")


@functools.lru_cache(maxsize=None)
def _spaced_letters():
    return frozenset(map(chr, run_letters()[0]))


def spaced_gold(sentences):
    """An InputError when most letters of the gold ``sentences`` are of
    alphabets written with spaces (English given as Chinese gold): the
    segmenter keeps such runs whole, so the score would measure nothing."""
    spaced = _spaced_letters()
    letters = spaced_count = 0
    for ws in sentences:
        for w in ws:
            for c in normalize_text(w):
                if c.isalpha():
                    letters += 1
                    spaced_count += c.isascii() or c in spaced
    if letters and 2 * spaced_count > letters:
        raise InputError(f"{100 * spaced_count / letters:.0f}% of the letters of the gold data are of alphabets "
                         f"written with spaces (Latin, Cyrillic, Hangul ...): the segmenter keeps their runs "
                         f"whole and segments text written without spaces (Chinese), so no score would "
                         f"mean anything")


def _gold_ids(sentences):
    flat = schemes.bmes_ids([len(w) for ws in sentences for w in ws])
    ends = np.cumsum([sum(len(w) for w in ws) for ws in sentences], dtype=np.int64)
    return np.split(flat, ends[:-1]) if len(sentences) else []


# ---------------------------------------------------------------- the segmenter

@registry.task("seg", title="segmenter", options=("templates", "segmentation", "clusters", "format", "words"),
               defaults={"epochs": 12, "algorithm": "mira", "k": 3},
               help="Chinese word segmenter from segmented text (one sentence per line) or CoNLL-U")
class Segmenter(SequenceTask):
    """A trained Chinese word segmenter (docs/tasks.md).  Create with
    :meth:`train` or :func:`fasttag.load`."""

    task = "seg"
    kind = "segmenter"
    commands = ("segment",)
    featurizer = ("chars", 1)
    primary = "f1"

    def __init__(self, model, vocab=(), train_dict=(), meta=None, runs=None):
        super().__init__(model, meta)
        self.vocab = list(vocab)              # training words (exact strings)
        self.train_dict = list(train_dict)    # the dictionary given to train()
        self._runs = None
        self._feature_words = {}
        self._force_words = {}
        self._folded_force = None          # (the force words, folded, their lengths) for _cut_is_safe
        self._vocab_set = None
        bmp_tables()                          # character tables: build them at load time
        self.runs = True if runs is None else runs
        self._rebuild()

    # ------------------------------------------------------------ options

    @property
    def runs(self):
        """Which runs are never split inside: a dict with the keys latin,
        digits, urls, emails (True/False), or None for none."""
        return None if self._runs is None else dict(self._runs)

    @runs.setter
    def runs(self, value):
        if value is None or value is False:
            self._runs = None
        elif value is True:
            self._runs = dict(DEFAULT_RUNS)
        elif isinstance(value, dict):
            unknown = set(value) - set(DEFAULT_RUNS)
            if unknown:
                raise ValueError(f"unknown run kinds: {', '.join(sorted(map(str, unknown)))} "
                                 f"(known: {', '.join(DEFAULT_RUNS)})")
            for k, v in value.items():
                if not isinstance(v, (bool, np.bool_)):
                    raise TypeError(f"runs[{k!r}] must be True or False, not {v!r}")
            self._runs = {**{k: False for k in DEFAULT_RUNS}, **{k: bool(v) for k, v in value.items()}}
        else:
            raise TypeError(f"runs must be True, False, None or a dict of run kinds, not {type(value).__name__}")
        self.model.featurizer.runs = self._runs

    def add_words(self, words: str | Iterable[str] | Mapping[str, float] | os.PathLike,
                  mode: str = "force") -> int:
        """Add user words and return how many were read.

        ``words``: one word (a str is never a path), an iterable of words,
        a {word: weight} dict, or a dictionary file as a ``pathlib.Path``.
        ``mode``: "force" (every occurrence kept whole) or "feature" (a
        hint the model may overrule); docs/tasks.md.  Saved with the model.
        Atomic: on any error (TypeError for a non-str word, InputError for
        a bad word or dictionary line) nothing is added."""
        if mode not in ("force", "feature"):
            raise ValueError(f"mode must be 'force' or 'feature', not {mode!r}")
        entries = read_userdict(words, str_is="word")
        merged = dict(self._force_words if mode == "force" else self._feature_words)
        for w, v in entries.items():
            merged[w] = max(v, merged.get(w, 0.0))
        if mode == "force":
            self._rebuild(force_words=merged)
        else:
            self._rebuild(feature_words=merged)
        return len(entries)

    def load_userdict(self, path: str | os.PathLike, mode: str = "force") -> int:
        """Add the words of the dictionary file at ``path`` (a str or
        os.PathLike), as :meth:`add_words` does in ``mode``; returns how many
        were read."""
        if not ftio.is_path(path):
            raise TypeError(f"load_userdict() takes a file's path, not {type(path).__name__}")
        return self.add_words(Path(os.fsdecode(os.fspath(path))), mode=mode)

    @property
    def user_words(self) -> dict:
        """The words added with :meth:`add_words`: {"force": {word: weight},
        "feature": {word: weight}} (copies)."""
        return {"force": dict(self._force_words), "feature": dict(self._feature_words)}

    def clear_words(self) -> None:
        """Forget the words added with :meth:`add_words`."""
        self._rebuild(feature_words={}, force_words={})

    def _dictionary_words(self, extra=()):
        return set(itertools.chain((w for w in self.vocab if 2 <= len(w) <= MAX_WORD),
                                   self.train_dict, extra))

    def _rebuild(self, feature_words=None, force_words=None):
        """Build the word sets for new user words (None: keep those; no
        argument: rebuild both), then switch, so an error changes nothing."""
        fz = self.model.featurizer
        everything = feature_words is None and force_words is None
        dictionary, force = fz.dictionary, fz.force
        if feature_words is None:
            feature_words = self._feature_words
        if force_words is None:
            force_words = self._force_words
        if everything or feature_words is not self._feature_words:
            dictionary = WordSet(self._dictionary_words(feature_words), min_length=2)
        if everything or force_words is not self._force_words:
            force = WordSet(force_words, weights=force_words) if force_words else None
        self._feature_words, self._force_words = feature_words, force_words
        fz.dictionary, fz.force, fz.runs = dictionary, force, self._runs

    # ------------------------------------------------------------ task hooks

    def _known_words(self, words):
        vocab = self.vocabulary()
        return [w in vocab for w in words] if len(vocab) >= scripts.MIN_VOCABULARY else None

    @classmethod
    def _prepare_options(cls, options_):
        """Check ``clusters`` (of characters) before the data is read, and
        read ``unlabeled`` raw text into word candidates."""
        if options_.get("clusters") is not None:
            options_["clusters"] = CharClusters(as_clusters(options_["clusters"], "option clusters"))
        unlabeled = options_.get("unlabeled")
        if unlabeled is not None:
            if options_.get("init") is not None:
                raise InputError("option unlabeled cannot change when fine-tuning: the model's is kept")
            if not isinstance(unlabeled, WordSet):
                if isinstance(unlabeled, str) and not os.path.isfile(unlabeled):
                    raise InputError("unlabeled text: no such file", path=unlabeled)
                options_["unlabeled"] = word_candidates(ftio.read_lines(unlabeled, "the unlabeled text"))
        return options_

    @classmethod
    def _read(cls, data, opts, what):
        examples = read_words(data, opts.get("format"), what)
        check_segmented(examples, what)
        return examples

    def _check_gold(self, examples):
        if self._runs is not None and self._runs["latin"]:     # else it may split such letters
            spaced_gold(examples)

    @classmethod
    def _build(cls, examples, opts):
        """A segmenter over ``examples`` with the jackknifed fold
        dictionaries in place."""
        dictionary = opts["dictionary"]
        train_dict = sorted(read_userdict(dictionary)) if dictionary is not None else []
        clusters = opts.get("clusters")
        if clusters is not None and not isinstance(clusters, CharClusters):
            clusters = CharClusters(as_clusters(clusters, "option clusters"))
        candidates = opts.get("unlabeled")
        templates = opts["templates"] or (SEG_TEMPLATES + (CLUSTER_TEMPLATES if clusters is not None else ())
                                          + (CANDIDATE_TEMPLATES if candidates is not None else ()))
        model = SequenceModel(TAGS, CharFeaturizer(clusters=clusters, candidates=candidates), templates,
                              allowed=schemes.bmes_allowed(), tagdict_classes=CANDIDATE_CLASSES)
        seg = cls(model, sorted({w for ws in examples for w in ws}), train_dict, {}, runs=opts["runs"])
        folds = opts["folds"]
        if folds > 1:
            model.featurizer.fold_dictionaries = _fold_dictionaries(examples, _fold_ids([examples], folds),
                                                                    folds, train_dict)
        seg.meta.update({"folds": folds, "train_chars": sum(len(w) for ws in examples for w in ws),
                         "train_sentences": len(examples), "templates": list(model.templates.names)})
        return seg

    def _encode(self, examples, training=False):
        """Training lines carry their jackknife fold (first training only);
        other lines see the full dictionary."""
        jackknifed = training and self.model.featurizer.fold_dictionaries is not None
        folds = self.meta.get("folds", 1) if jackknifed else 1      # fine-tuning: the full dictionary
        gold = _gold_ids(examples)
        ids = _fold_ids([examples], folds) if folds > 1 else [None] * len(examples)
        return [("".join(ws), f, g) for ws, f, g in zip(examples, ids, gold)]

    def _learn_words(self, examples):
        new = {w for ws in examples for w in ws} - self.vocabulary()
        if new:
            self.vocab = sorted(set(self.vocab) | new)
            self._vocab_set = None
            self._rebuild()

    def _fold_tables(self, read_shards):
        if self.model.featurizer.fold_dictionaries is None:
            return None
        shards = read_shards()
        folds = self.meta["folds"]
        return _fold_dictionaries([ws for shard in shards for ws in shard], _fold_ids(shards, folds), folds,
                                  self.train_dict)

    def _use_fold_tables(self, tables):
        self.model.featurizer.fold_dictionaries = tables

    def _dev_scorer(self, examples):
        gold = _gold_ids(examples)
        return lambda pred: metrics.bmes_word_f1(pred, gold)

    def _trained(self, opts):
        self.model.featurizer.fold_dictionaries = None
        if opts["prune"]:
            self.prune(opts["prune"])
        self._rebuild()

    def _decode(self, examples, ids):
        if not ids:
            return []
        bounds = np.concatenate(([0], np.cumsum([len(row) for row in ids])))
        return _split_words("".join(w for ws in examples for w in ws), np.concatenate(ids), bounds)

    def _score(self, examples, outputs, opts):
        if not any(examples):
            raise InputError("the evaluation data holds no words")
        self._check_gold(examples)
        words = opts.get("words")
        if words is None:
            vocab = self.vocabulary()
        elif ftio.is_path(words):
            vocab = ftio.read_word_list(words)
        else:
            vocab = set(words)
        result = metrics.score_segmentation(examples, outputs, words=vocab)
        result["chars"] = sum(len(w) for ws in examples for w in ws)
        return result

    # ------------------------------------------------------------ segmenting

    def segment(self, text: str) -> list[str]:
        """The words of ``text`` (a str): whitespace separates words and is
        dropped; ``"".join(words) == "".join(text.split())``."""
        if not isinstance(text, str):
            raise ftio.not_str("segment()", text, "segment_lines() takes several lines")
        self.script_check.sampled([text])
        return next(self._segment_lines([text]))

    def tokenize(self, text: str) -> list[tuple[str, int, int]]:
        """``(word, start, end)`` tuples of ``text`` (as jieba's
        ``tokenize``): ``text[start:end] == word``."""
        words = self.segment(text)
        out, pos = [], 0
        for w in words:
            while text[pos].isspace():
                pos += 1
            end = pos + len(w)
            out.append((w, pos, end))
            pos = end
        return out

    def segment_lines(self, lines: Iterable[str], n_threads: int = 1) -> Iterator[list[str]]:
        """Segment lines lazily, yielding one word list per line: much
        faster than :meth:`segment` per line.  ``n_threads``: batches on that
        many threads (0: every core), same output (:mod:`fasttag.parallel`)."""
        lines = ftio.iter_texts(lines, "segment_lines()", "segment()")
        return self._segment_lines(self._script_checked(lines), parallel.check_threads(n_threads))

    def _script_checked(self, lines):
        """``lines``, each given to the script check as it passes (which
        looks at lines 1, 2, 4, 8 ...): nothing is read ahead of a pipe."""
        check = self.script_check
        for line in lines:
            check.sampled([line], stacklevel=4)
            yield line

    def _segment_lines(self, lines, n_threads=1):
        words = []
        for piece_words, last in self._segment_pieces(lines, n_threads):
            words.extend(piece_words)
            if last:
                yield words
                words = []

    def _segment_pieces(self, lines, n_threads=1):
        """(words, last piece of its line?) of the pieces of ``lines``:
        pieces keep memory bounded on long lines."""
        line_ends = deque()

        def pieces():
            for line in lines:
                if not isinstance(line, str):       # text_batches names the line and its type
                    line_ends.append(True)
                    yield line
                    continue
                for piece, last in _pieces(line, self._cut_is_safe):
                    line_ends.append(last)
                    yield piece
        batches = ftio.text_batches(pieces(), "segment_lines(): line", BATCH_CHARS)
        for segmented in parallel.ordered_map(self._segment_batch, batches, n_threads):
            for piece_words in segmented:
                yield piece_words, line_ends.popleft()

    def _cut_is_safe(self, line, at):
        """Whether a long line may be cut before ``at``: a cut is a word
        boundary, so not inside a protected run or a force word."""
        force = self._force_words
        cached = self._folded_force
        if cached is None or cached[0] is not force:
            folded = {normalize_text(w) for w in force}
            cached = self._folded_force = (force, folded, sorted({len(w) for w in folded if len(w) > 1}))
        _, folded_words, lengths = cached
        reach = max([CUT_WINDOW] + lengths)
        lo = max(0, at - reach)
        window, at = line[lo:at + reach], at - lo
        if self._runs is not None and any(a < at < b for a, b in atomic_runs(window, **self._runs)):
            return False
        if lengths:
            text = normalize_text(window)
            for n in lengths:
                if any(text[a:a + n] in folded_words for a in range(max(0, at - n + 1), at)):
                    return False
        return True

    def _records(self, source, json, n_threads):
        """Records of :meth:`tag_file`: a line of words per input line (long
        lines in pieces); in JSON Lines an object per non-blank line."""
        if not json:
            lines = ftio.iter_texts(ftio.read_raw_text(source), "segment_lines()", "segment()")
            return (output.Record(words, ends_line=last) for words, last in self._segment_pieces(lines, n_threads)), \
                {"style": "words"}
        texts = deque()

        def kept(lines):
            for line in lines:
                texts.append(line)
                yield line

        def records():
            for number, words in enumerate(self.segment_lines(kept(ftio.read_raw_text(source)), n_threads), start=1):
                text = texts.popleft()
                if words:
                    yield output.Record(words, line=number, offsets=output.offsets_in(text, words))
        return records(), {"style": "json"}

    def _segment_batch(self, lines):
        (tags, bounds, batch), = self.model.predict_chunks([(line, None) for line in lines])
        return _split_words(batch.text, tags, bounds)

    # ------------------------------------------------------------ evaluation

    def vocabulary(self) -> set:
        """The training vocabulary (a set of words)."""
        if self._vocab_set is None:
            self._vocab_set = set(self.vocab)
        return self._vocab_set

    # ------------------------------------------------------------ storage

    def _task_parts(self):
        fz = self.model.featurizer
        extra = {}          # keys only with clusters or candidates: other models are written as before
        arrays = {"vocab": _pack_words(self.vocab), "train_dict": _pack_words(self.train_dict)}
        if fz.clusters is not None:
            extra["clusters"] = True
            arrays["clusters"] = fz.clusters.clusters.to_array()
        if fz.candidates is not None:
            extra["candidate_lengths"] = list(fz.candidates.lengths)
            arrays["candidates"] = fz.candidates.hashes
        for mode, words in (("force", self._force_words), ("feature", self._feature_words)):
            if words:          # user words (add_words) are saved with the model
                arrays[f"user_{mode}_words"] = _pack_words(list(words))
                arrays[f"user_{mode}_weights"] = np.array(list(words.values()), dtype=np.float64)
        return {"featurizer": {"max_word": MAX_WORD, "runs": self._runs, **extra}}, arrays

    @classmethod
    def _featurizer_from(cls, spec, header, arrays, meta):
        if not modelfile.header_int(spec.get("max_word"), MAX_WORD, MAX_WORD):
            raise ModelFormatError("corrupt fasttag model: unknown segmenter featurizer")
        check_fixed_labels(header, arrays, "segmenter", TAGS, CANDIDATE_CLASSES, _ALLOWED)
        clusters = stored_clusters(spec, arrays)
        if clusters is not None:
            clusters = CharClusters(clusters, error=_corrupt)
        return CharFeaturizer(clusters=clusters, candidates=_stored_candidates(spec, arrays))

    @classmethod
    def _load(cls, header, arrays, model, meta):
        runs = _stored_runs(header["featurizer"].get("runs"))
        vocab = _unpack_words(arrays.get("vocab"), "vocab")
        train_dict = _unpack_words(arrays.get("train_dict"), "train_dict")
        seg = cls(model, vocab, train_dict, meta, runs=runs if runs else False)
        user = {mode: _stored_user_words(arrays, mode) for mode in ("force", "feature")}
        if user["force"] or user["feature"]:
            seg._rebuild(feature_words=user["feature"], force_words=user["force"])
        return seg


_ALLOWED = schemes.bmes_allowed()


def _split_words(text, tags, bounds):
    """The words of each line ``text[bounds[i]:bounds[i + 1]]`` by the BMES
    tag ids of its characters."""
    if int(bounds[-1]) == 0:
        return [[] for _ in range(len(bounds) - 1)]
    # one string, " " after every word and "\n" after every line: split in C, not sliced per word
    is_end = np.asarray(tags) >= 2
    is_end[bounds[1:][bounds[1:] > bounds[:-1]] - 1] = False    # line ends: "\n" instead
    at = np.concatenate((np.flatnonzero(is_end) + 1, bounds[1:-1]))
    seps = np.concatenate((np.full(int(is_end.sum()), 32, dtype=np.uint32),
                           np.full(len(bounds) - 2, 10, dtype=np.uint32)))
    order = np.argsort(at, kind="stable")
    cp = np.insert(codepoints(text), at[order], seps[order])
    joined = cp.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
    return [line.split(" ") if line else [] for line in joined.split("\n")]


def _stored_candidates(spec, arrays):
    """The word candidates a model file holds, checked, or None."""
    lengths = spec.get("candidate_lengths")
    hashes = arrays.get("candidates")
    if lengths is None and hashes is None:
        return None
    if not isinstance(lengths, list) or not all(modelfile.header_int(L, 2, MAX_WORD) for L in lengths) \
            or lengths != sorted(set(lengths)) or hashes is None or hashes.dtype != np.uint64 \
            or hashes.ndim != 1 or np.any(hashes[1:] <= hashes[:-1]):
        raise ModelFormatError("corrupt fasttag model: the word candidates are not sorted hashes with "
                               "their lengths")
    return WordSet.from_hashes(hashes, np.array(lengths, dtype=np.int64))


def _corrupt(message):
    return ModelFormatError(f"corrupt fasttag model: {message}")


def _stored_runs(runs):
    if runs is None:
        return None
    if not isinstance(runs, dict) or set(runs) - set(DEFAULT_RUNS) \
            or not all(isinstance(v, bool) for v in runs.values()):
        raise ModelFormatError("corrupt fasttag model: bad run options")
    return runs


def _stored_user_words(arrays, mode):
    """{word: weight} of the user words a model file holds for ``mode``."""
    words = _unpack_words(arrays.get(f"user_{mode}_words"), f"user {mode} words")
    weights = arrays.get(f"user_{mode}_weights")
    if weights is None and not words:
        return {}
    if weights is None or weights.dtype != np.float64 or weights.shape != (len(words),) \
            or not np.all(np.isfinite(weights)) or not np.all(weights > 0):
        raise ModelFormatError(f"corrupt fasttag model: the user {mode} word weights do not match the words")
    if len(set(words)) != len(words):
        raise ModelFormatError(f"corrupt fasttag model: a user {mode} word is stored twice")
    return dict(zip(words, weights.tolist()))


def _surface_tokens(sentence):
    """The tokens of a CoNLL-U sentence as written (a multiword token's
    form, not its words), whitespace inside a form removed."""
    return [t for t in ("".join(form.split()) for form, _ in ftio.surface_tokens(sentence)) if t]


def _fold_ids(shards, folds):
    """The jackknife fold of each sentence of ``shards``: round robin from
    each shard's start."""
    return [i % folds for shard in shards for i in range(len(shard))]


def _fold_dictionaries(sents, fold_ids, folds, extra):
    """One WordSet per jackknife fold: the words (2..MAX_WORD characters)
    seen outside the fold (``fold_ids``: each sentence's), plus ``extra``."""
    fold_counts = [Counter() for _ in range(folds)]
    for f, ws in zip(fold_ids, sents):
        fold_counts[f].update(w for w in ws if 2 <= len(w) <= MAX_WORD)
    words = sorted(set().union(*fold_counts))
    index = {w: i for i, w in enumerate(words)}
    table = np.zeros((len(words), folds), dtype=np.int64)
    for f, c in enumerate(fold_counts):
        if c:
            ids = np.fromiter((index[w] for w in c), dtype=np.int64, count=len(c))
            table[ids, f] = np.fromiter(c.values(), dtype=np.int64, count=len(c))
    hashes, lengths = word_hashes(words)
    extra_h, extra_l = word_hashes([w for w in extra if len(w) >= 2])
    total = table.sum(axis=1)
    out = []
    for f in range(folds):
        keep = total - table[:, f] > 0
        out.append(WordSet.from_hashes(np.concatenate([hashes[keep], extra_h]),
                                       np.concatenate([lengths[keep], extra_l])))
    return out


def _pack_words(words):
    return np.frombuffer("\n".join(words).encode("utf-8", "surrogatepass"), dtype=np.uint8).copy()


def _unpack_words(arr, name):
    """The words of a :func:`_pack_words` array, checked (no word is ever
    empty or holds whitespace)."""
    if arr is None:
        return []
    if arr.dtype != np.uint8 or arr.ndim != 1:
        raise ModelFormatError(f"corrupt fasttag model: the {name} word list is not a byte string")
    if not len(arr):
        return []
    try:
        text = arr.tobytes().decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise ModelFormatError(f"corrupt fasttag model: the {name} word list is not UTF-8") from None
    words = text.split("\n")
    if text.split() != words:
        raise ModelFormatError(f"corrupt fasttag model: the {name} word list holds an empty word "
                               f"or one with whitespace")
    return words


def _pieces(line, safe=None):
    """(piece, last piece of the line?) of one line: lines over LONG_LINE
    are cut after a break where ``safe(line, cut)`` allows, the last one in
    each piece's second half, else the first after it."""
    start = 0
    while len(line) - start > LONG_LINE:
        cut = None
        for i in range(start + LONG_LINE - 1, start + LONG_LINE // 2, -1):
            if line[i] in _BREAKS and (safe is None or safe(line, i + 1)):
                cut = i + 1
                break
        else:
            cut = next((m.end() for m in _BREAK.finditer(line, start + LONG_LINE)
                        if safe is None or safe(line, m.end())), None)
            if cut is None:
                break
        yield line[start:cut], False
        start = cut
    yield line[start:], True
