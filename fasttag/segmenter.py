"""Chinese word segmentation: B/M/E/S character tagging with a structured
perceptron.

Each character of a line is tagged B (begins a word), M (middle), E (ends a
word) or S (single-character word).  The model is a
:class:`fasttag.sequence.SequenceModel` over the character attributes of
:mod:`fasttag.charfeatures` (width-folded character n-grams, character
classes, repetitions, dictionary-word lengths), decoded by first-order
Viterbi with the impossible transitions forbidden (S or E followed by M or
E, B or M followed by B or S, a line starting with M or E or ending with B
or M), so every output is a valid segmentation.

Input handling:

* Whitespace (``str.isspace``) is a word boundary and never part of a word;
  an empty or all-whitespace line gives no words.
* Full-width and half-width forms (``１９９８``/``1998``, ``Ａ``/``A``) are
  the same to the features; the output keeps the input's characters.
* Runs of Latin letters, digits (with ``.``, ``,``, ``:`` between digits and
  a final ``%``), URLs and e-mail addresses are never split inside
  (:func:`fasttag.normalize.atomic_runs`; configurable with ``runs``).  A
  run may still be part of a longer word (``1998年``).
* Any other character (emoji, rare CJK extensions, control characters,
  unpaired surrogates) is an ordinary character.

Dictionaries.  The model always has a feature dictionary: its training
vocabulary (words of 2 to 7 characters) plus the words of the ``dictionary``
given to :meth:`Segmenter.train`.  Its features are the lengths of the
longest dictionary word starting at, ending at and containing each
character, so the model *learns how far to trust the dictionary*.  During
training the vocabulary part is jackknifed (the sentences of one fold see
the words of the other folds only), so that the model meets words missing
from its dictionary as it will on new text.  User words come in two
semantics:

``"feature"`` (soft; the semantics of training with a dictionary, and of
    :meth:`Segmenter.add_words` with ``mode="feature"``): the words join the
    feature dictionary.  They make the model more likely to keep them
    whole, but the model may still split them (or join them to a neighbour)
    where the context says so.
``"force"`` (hard; ``fasttag segment --dict`` and the default of
    :meth:`Segmenter.add_words`): every occurrence of a word in the text
    comes out as exactly one word, whatever the model thinks; the model
    still segments the rest.  Occurrences overlapping each other are
    resolved first by weight (heavier wins), then by length (longer wins),
    then leftmost first; an occurrence that overlaps no other is always kept
    whole.  Force words take precedence over Latin/digit runs (a force word
    "iPhone" splits "iPhone12"), never over whitespace (a word is not
    matched across whitespace).  A force word may be of any length (words
    longer than the model's longest dictionary word, even thousands of
    characters, are matched and kept whole); feature words of other
    lengths than 2 to ``MAX_WORD`` (7) characters are accepted and have no
    effect, since the features only know those lengths.

:meth:`Segmenter.add_words` is atomic: when it raises (a bad weight on
line 300 of a dictionary file, a non-str word), the segmenter is as it was.
In Python a str argument is a dictionary file's path; a list of words is
what adds words (see :mod:`fasttag.userdict`).

Segmenting (:meth:`Segmenter.segment`, :meth:`Segmenter.segment_lines`)
changes no state, so one segmenter may be shared by threads; changing it
(``add_words``, ``runs``) while other threads segment is not supported.

(For comparison: jieba's user dictionary only adds words and frequencies to
its own dictionary, so whether a word is kept depends on its frequency and
the competing paths; pkuseg's user dictionary is matched in the text by
maximum matching before its model runs, closer to our force mode.)
"""
import io as _io
import itertools
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from . import modelfile
from .charfeatures import (CANDIDATE_CLASSES, MAX_WORD, SEG_TEMPLATES, TAGS, CharFeaturizer, WordSet, _tables,
                           codepoints, word_hashes)
from .errors import FasttagError, InputError, ModelFormatError
from .segmentation_metrics import read_segmented, read_word_list, score_segmentation
from .sequence import SequenceModel
from .userdict import read_userdict

KIND = "segmenter"
DEFAULT_EPOCHS = 12
DEFAULT_RUNS = {"latin": True, "digits": True, "urls": True, "emails": True}
BATCH_CHARS = 50_000

__all__ = ["Segmenter", "bmes_allowed", "read_userdict", "train_command", "segment_command", "eval_command"]


def bmes_allowed():
    """The transition mask of B/M/E/S tagging (see :mod:`fasttag._sequence`)."""
    T = 4
    B, M, E, S = range(4)
    allowed = np.zeros((T + 2) * T, dtype=np.uint8)
    for p, nxt in ((B, (M, E)), (M, (M, E)), (E, (B, S)), (S, (B, S))):
        for t in nxt:
            allowed[p * T + t] = 1
    for t in (B, S):
        allowed[T * T + t] = 1             # start -> B, S
    for p in (E, S):
        allowed[(T + 1) * T + p] = 1       # E, S -> end
    return allowed


class _CharModel(SequenceModel):
    """A SequenceModel whose "tokens" are lines: the featurizer sees whole
    lines (for dictionary matches, runs and whitespace) and returns the
    per-character candidate classes itself.  A sentence's "columns" is its
    dictionary id (jackknife fold) or None."""

    def _batch_keys(self, sentences):
        lines = [s for s, _ in sentences]
        ids = None
        if sentences and sentences[0][1] is not None:
            ids = [c for _, c in sentences]
            if any(i is None for i in ids):
                raise ValueError("a batch mixes jackknifed and plain sentences")
        batch = self.featurizer.batch(lines, dict_ids=ids)
        return self.templates.keys(batch.attrs, batch.bounds), batch.bounds, self._cands(batch.classes)

    def _cands(self, classes):
        if classes is None:
            return None
        sizes = [len(c) for c in self.tagdict_classes]
        offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        flat = np.array([t for c in self.tagdict_classes for t in c], dtype=np.int32)
        return classes, offsets, flat


# ---------------------------------------------------------------- reading

def _is_path(x):
    return isinstance(x, (str, bytes)) or hasattr(x, "__fspath__")


def _not_str(what, value):
    """The message of a TypeError for a text argument that is not a str."""
    hint = ""
    if isinstance(value, (bytes, bytearray)):
        hint = " (decode bytes to str first)"
    elif isinstance(value, (list, tuple)) and what == "segment()":
        hint = " (segment_lines() takes several lines)"
    return f"{what} takes a str, not {type(value).__name__}{hint}"


def _str_lines(lines, what):
    """A list of the str lines of an iterable (TypeError otherwise)."""
    if isinstance(lines, (bytes, bytearray)) or not hasattr(lines, "__iter__"):
        raise TypeError(f"{what} must be a file's path or str lines, not {type(lines).__name__}")
    out = list(lines)
    for number, line in enumerate(out, start=1):
        if not isinstance(line, str):
            raise TypeError(_not_str(f"{what} line {number}", line))
    return out


def _read_segmented_file(path):
    """read_segmented of a path, with an unreadable file as an InputError."""
    path = os.fsdecode(path)
    try:
        return read_segmented(path)
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror})", path=path) from None


def _read_training(data, what="training data"):
    """Word lists of a segmented corpus: a path (one sentence per line, words
    separated by whitespace), an iterable of such lines, or of word lists.
    TypeError for anything else (a number, a list of numbers, ...)."""
    if _is_path(data):
        return [ws for ws in _read_segmented_file(data) if ws]
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


def _gold_tags(sentences):
    """Flat int32 B/M/E/S tags of a list of word lists, and per-sentence
    lengths in characters."""
    lens = np.fromiter((len(w) for ws in sentences for w in ws), dtype=np.int64)
    total = int(lens.sum())
    tags = np.full(total, 1, dtype=np.int32)                 # M
    ends = np.cumsum(lens)
    starts = ends - lens
    tags[starts] = 0                                          # B
    tags[ends - 1] = 2                                        # E
    tags[starts[lens == 1]] = 3                               # S
    return tags


def _split(flat, sentences):
    out, pos = [], 0
    for ws in sentences:
        n = sum(len(w) for w in ws)
        out.append(flat[pos:pos + n])
        pos += n
    return out


def _word_f1(pred, gold):
    """Word F1 of predicted against gold B/M/E/S id arrays (lists per
    sentence), from the word ends alone."""
    if not pred:
        return 0.0
    p = np.concatenate(pred) >= 2           # a word ends after this character
    g = np.concatenate(gold) >= 2
    lengths = np.array([len(x) for x in gold], dtype=np.int64)
    first = np.zeros(len(g), dtype=bool)
    first[np.cumsum(lengths)[:-1][lengths[1:] > 0]] = True
    if len(g):
        first[0] = True
    # a gold word is right when the prediction agrees with every end flag
    # from the previous word's end (exclusive at a line start) to its own
    bad = np.concatenate(([0], np.cumsum(p != g)))
    g_end = np.flatnonzero(g)
    g_start = np.concatenate(([0], g_end[:-1] + 1))
    # the previous end flag (g_start - 1) counts unless the word starts a line
    lo = np.where(first[g_start], g_start, g_start - 1)
    correct = int(np.sum(bad[g_end + 1] - bad[lo] == 0))
    n_pred, n_gold = int(p.sum()), int(g.sum())
    if not correct:
        return 0.0
    prec, rec = correct / n_pred, correct / n_gold
    return 2 * prec * rec / (prec + rec)


# ---------------------------------------------------------------- the segmenter

class Segmenter(modelfile.Stored):
    """A trained Chinese word segmenter.  Create with :meth:`train` or
    :func:`fasttag.load`.

        >>> seg = fasttag.load("zh")
        >>> seg.segment("迈向充满希望的新世纪")
        ['迈向', '充满', '希望', '的', '新', '世纪']
    """

    def __init__(self, model, vocab=(), train_dict=(), meta=None, runs=None):
        self.model = model
        self.meta = dict(meta or {})
        self.vocab = list(vocab)              # training words (exact strings)
        self.train_dict = list(train_dict)    # the dictionary given to train()
        self._runs = None
        self._feature_words = {}
        self._force_words = {}
        self._vocab_set = None
        _tables()                             # character tables: build them at load time
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

    def add_words(self, words, mode="force"):
        """Add user words: a path of a dictionary file, a {word: weight}
        dict, or an iterable of words.  ``mode`` is "force" (every
        occurrence is kept whole) or "feature" (the words join the model's
        feature dictionary: a hint the model may overrule); see the module
        documentation.  Returns the number of words read.

        Atomic: on any error (TypeError for a bare str that names no file
        or a non-str word, InputError for a bad dictionary line) nothing
        is added and the segmenter works as before."""
        if mode not in ("force", "feature"):
            raise ValueError(f"mode must be 'force' or 'feature', not {mode!r}")
        entries = read_userdict(words)
        merged = dict(self._force_words if mode == "force" else self._feature_words)
        for w, v in entries.items():
            merged[w] = max(v, merged.get(w, 0.0))
        if mode == "force":
            self._rebuild(force_words=merged)
        else:
            self._rebuild(feature_words=merged)
        return len(entries)

    def clear_words(self):
        """Forget the words added with :meth:`add_words`."""
        self._rebuild(feature_words={}, force_words={})

    def _dictionary_words(self, extra=()):
        return set(itertools.chain((w for w in self.vocab if 2 <= len(w) <= MAX_WORD),
                                   self.train_dict, extra))

    def _rebuild(self, feature_words=None, force_words=None):
        """Build the featurizer's word sets for new user words (None: keep
        those words and their built set; no argument: rebuild both), and only
        then switch to them, so that an error leaves everything as it was."""
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

    # ------------------------------------------------------------ training

    @classmethod
    def train(cls, train, dev=None, *, epochs=DEFAULT_EPOCHS, seed=0, dictionary=None, folds=3,
              runs=True, templates=SEG_TEMPLATES, algorithm="perceptron", k=1, C=None,
              prune=0.0, verbose=None, corpus=None, licence=None):
        """Train on ``train``: a path of a segmented corpus (one sentence per
        line, words separated by spaces), or lines, or word lists.  With
        ``dev`` (same forms) the epoch with the best dev word F1 is kept.

        ``dictionary``: user words (a path, a {word: weight} dict or a word
        list) used as features ("feature" semantics; they are stored in the
        model).  ``folds``: jackknife folds for the vocabulary features
        (1: no jackknifing, every training sentence sees the whole training
        vocabulary, which overfits).  ``runs``: True, False
        or a dict as :attr:`runs`.  ``prune``: drop averaged weights with
        a smaller absolute value (a smaller model).
        """
        sents = _read_training(train)
        if not sents:
            raise FasttagError("no training sentences")
        train_dict = sorted(read_userdict(dictionary)) if dictionary is not None else []
        counts = Counter(w for ws in sents for w in ws)
        vocab = sorted(counts)
        model = _CharModel(TAGS, CharFeaturizer(), templates, allowed=bmes_allowed(),
                           tagdict_classes=CANDIDATE_CLASSES)
        seg = cls(model, vocab, train_dict, {}, runs=runs)
        fz = model.featurizer
        folds = max(1, int(folds))
        t0 = time.perf_counter()
        fold_of = [None] * len(sents)
        if folds > 1:
            fz.fold_dictionaries = _fold_dictionaries(sents, folds, train_dict)
            fold_of = [i % folds for i in range(len(sents))]
        gold = _split(_gold_tags(sents), sents)
        data = [("".join(ws), f, g) for ws, f, g in zip(sents, fold_of, gold)]
        dev_data = None
        if dev is not None:
            dev_sents = _read_training(dev, "dev data")
            dev_gold = _split(_gold_tags(dev_sents), dev_sents)
            # the dev set is segmented as new text is: with the full dictionary
            dev_data = [("".join(ws), None, g) for ws, g in zip(dev_sents, dev_gold)]
        history = model.fit(data, dev_data, epochs=epochs, seed=seed, verbose=verbose, name="seg",
                            algorithm=algorithm, k=k, C=C,
                            evaluate=(lambda pred: _word_f1(pred, dev_gold)) if dev_data else None)
        train_seconds = time.perf_counter() - t0
        fz.fold_dictionaries = None
        seg.meta.update({
            "train_seconds": train_seconds, "history": history, "folds": folds,
            "train_chars": int(sum(len(s) for s, _, _ in data)), "train_sentences": len(data),
            "templates": list(templates),
        })
        if corpus:
            seg.meta["corpus"] = corpus
        if licence:
            seg.meta["licence"] = licence
        if prune:
            seg.prune(prune)
        seg._rebuild()
        return seg

    def prune(self, threshold):
        """Drop emission weights with ``|w| < threshold`` (smaller models;
        measure the accuracy cost).  Returns the number of weights kept."""
        from .tables import table_from_arrays, table_to_arrays
        arrs = table_to_arrays(self.model.emit, "emit")
        w = arrs["emit.weights"]
        keep = np.abs(w) >= threshold
        owner = np.repeat(np.arange(len(arrs["emit.counts"])), arrs["emit.counts"].astype(np.int64))
        counts = np.bincount(owner[keep], minlength=len(arrs["emit.counts"]))
        nonempty = counts > 0
        pruned = {"emit.keys": arrs["emit.keys"][nonempty], "emit.counts": counts[nonempty].astype(np.uint32),
                  "emit.labels": arrs["emit.labels"][keep], "emit.weights": w[keep]}
        self.model.emit = table_from_arrays(pruned, "emit", len(self.model.tags))
        self.meta["pruned_below"] = float(threshold)
        return int(keep.sum())

    # ------------------------------------------------------------ segmenting

    def segment(self, text):
        """The words of ``text`` (a str): whitespace separates words and is
        dropped; ``"".join(words) == "".join(text.split())``."""
        if not isinstance(text, str):
            raise TypeError(_not_str("segment()", text))
        return self._segment_batch([text])[0]

    def segment_lines(self, lines):
        """Segment an iterable of lines lazily, yielding one word list per
        line (empty lines give empty lists).  Batching lines this way is
        much faster than calling :meth:`segment` per line."""
        if isinstance(lines, (str, bytes, bytearray)):
            raise TypeError(f"segment_lines() takes an iterable of lines, not one {type(lines).__name__}: "
                            f"use segment() for one text")
        try:
            lines = iter(lines)
        except TypeError:
            raise TypeError(f"segment_lines() takes an iterable of str lines, not {type(lines).__name__}") from None
        return self._segment_lines(lines)

    def _segment_lines(self, lines):
        batch, size = [], 0
        for number, line in enumerate(lines, start=1):
            if not isinstance(line, str):
                raise TypeError(_not_str(f"segment_lines(): line {number}", line))
            batch.append(line)
            size += len(line)
            if size >= BATCH_CHARS:
                yield from self._segment_batch(batch)
                batch, size = [], 0
        if batch:
            yield from self._segment_batch(batch)

    def _segment_batch(self, lines):
        model = self.model
        batch = model.featurizer.batch(lines)
        bounds = batch.bounds
        n = int(bounds[-1])
        if n == 0:
            return [[] for _ in lines]
        keys = model.templates.keys(batch.attrs, bounds)
        tags = model._search(model.emit, model.trans, model._cands(batch.classes)).decode(keys, bounds)
        # the output as one string: " " after every word, "\n" after every
        # line, split by C code rather than sliced word by word
        is_end = np.asarray(tags) >= 2
        is_end[bounds[1:][bounds[1:] > bounds[:-1]] - 1] = False    # line ends: "\n" instead
        at = np.concatenate((np.flatnonzero(is_end) + 1, bounds[1:-1]))
        seps = np.concatenate((np.full(int(is_end.sum()), 32, dtype=np.uint32),
                               np.full(len(bounds) - 2, 10, dtype=np.uint32)))
        order = np.argsort(at, kind="stable")
        cp = np.insert(codepoints(batch.text), at[order], seps[order])
        joined = cp.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
        return [line.split(" ") if line else [] for line in joined.split("\n")]

    # ------------------------------------------------------------ evaluation

    def evaluate(self, gold, words=None):
        """SIGHAN bakeoff scores against a gold segmentation (a path, or
        lines of space-separated words): ``precision``, ``recall``, ``f1``,
        ``oov_rate``, ``oov_recall``, ``iv_recall`` (fractions; OOV with
        respect to ``words``, a word-list path or an iterable of words,
        default the model's training vocabulary), ``chars``, ``seconds``,
        ``chars_per_second``."""
        if _is_path(gold):
            gold_words = _read_segmented_file(gold)
        else:
            gold_words = read_segmented(_str_lines(gold, "evaluate(): the gold"))
        raw = ["".join(ws) for ws in gold_words]
        if words is None:
            vocab = self.vocabulary()
        elif _is_path(words):
            try:
                vocab = read_word_list(os.fsdecode(words))
            except OSError as exc:
                raise InputError(f"cannot read the word list ({exc.strerror})", path=os.fsdecode(words)) from None
        else:
            vocab = set(words)
        t0 = time.perf_counter()
        pred = list(self.segment_lines(raw))
        seconds = time.perf_counter() - t0
        result = score_segmentation(gold_words, pred, words=vocab)
        chars = sum(len(s) for s in raw)
        result.update({"chars": chars, "seconds": seconds,
                       "chars_per_second": chars / seconds if seconds > 0 else 0.0})
        return result

    def vocabulary(self):
        """The training vocabulary (a set of words)."""
        if self._vocab_set is None:
            self._vocab_set = set(self.vocab)
        return self._vocab_set

    # ------------------------------------------------------------ storage

    def _parts(self):
        header, arrays = self.model.to_parts()
        header["kind"] = KIND
        header["featurizer"] = {"name": "chars", "max_word": MAX_WORD, "runs": self._runs}
        header["meta"] = modelfile.stored_meta(self.meta)
        arrays["vocab"] = _pack_words(self.vocab)
        arrays["train_dict"] = _pack_words(self.train_dict)
        return header, arrays

    @classmethod
    def _from_parts(cls, header, arrays):
        """Validate, then build.  Everything the featurizer and the decoder
        will index is checked here, so a file that loads also segments:
        anything else raises ModelFormatError."""
        if header.get("kind") != KIND:
            raise ModelFormatError(f"not a segmenter model (kind {header.get('kind')!r})")
        fz_info = header.get("featurizer")
        if not isinstance(fz_info, dict) or fz_info.get("name") != "chars" \
                or not modelfile.header_int(fz_info.get("max_word"), MAX_WORD, MAX_WORD):
            raise ModelFormatError("corrupt fasttag model: unknown segmenter featurizer")
        runs = _stored_runs(fz_info.get("runs"))
        _check_header(header, arrays)
        try:
            model = _CharModel.from_parts(header, arrays, CharFeaturizer())
        except ModelFormatError:
            raise
        except (TypeError, ValueError, OverflowError, KeyError, AttributeError) as exc:
            # whatever the generic reader lets through: still a format error
            raise ModelFormatError(f"corrupt fasttag model: {exc}") from None
        allowed = arrays.get("allowed")
        if allowed is None or allowed.shape != (len(_ALLOWED),) or not np.array_equal(allowed, _ALLOWED):
            raise ModelFormatError("corrupt fasttag model: the transition mask is not that of B/M/E/S tagging")
        vocab = _unpack_words(arrays.get("vocab"), "vocab")
        train_dict = _unpack_words(arrays.get("train_dict"), "train_dict")
        meta = header.get("meta")
        if meta is not None and not isinstance(meta, dict):
            raise ModelFormatError(f"corrupt fasttag model: meta is a {type(meta).__name__}, not an object")
        return cls(model, vocab, train_dict, meta or {}, runs=runs if runs else False)


_ALLOWED = bmes_allowed()


def _stored_runs(runs):
    """The run options of a model file: null or {kind: bool}."""
    if runs is None:
        return None
    if not isinstance(runs, dict) or set(runs) - set(DEFAULT_RUNS) \
            or not all(isinstance(v, bool) for v in runs.values()):
        raise ModelFormatError("corrupt fasttag model: bad run options")
    return runs


def _check_header(header, arrays):
    """The sequence-model header of a segmenter, as the segmenter uses it:
    B/M/E/S tags, exactly the candidate classes CharFeaturizer produces
    indices into (their order is their meaning), Viterbi without pruning,
    no tag dictionary, and the JSON types of everything read."""
    if header.get("tags") != list(TAGS):
        raise ModelFormatError("corrupt fasttag model: segmenter tags are not B M E S")
    classes = header.get("tagdict_classes")
    expected = [list(c) for c in CANDIDATE_CLASSES]
    if not isinstance(classes, list) or len(classes) != len(expected):
        n = len(classes) if isinstance(classes, list) else type(classes).__name__
        raise ModelFormatError(f"corrupt fasttag model: {n} segmenter candidate classes, "
                               f"not the {len(expected)} the featurizer uses")
    for i, (got, want) in enumerate(zip(classes, expected)):
        if not isinstance(got, list) or len(got) != len(want) or any(type(t) is not int for t in got) \
                or got != want:
            shown = repr(got)
            shown = shown if len(shown) <= 40 else shown[:36] + " ..."
            raise ModelFormatError(f"corrupt fasttag model: segmenter candidate class {i} is {shown}, "
                                   f"not {want}")
    if header.get("decoder", "viterbi") != "viterbi":
        raise ModelFormatError("corrupt fasttag model: segmenters decode with Viterbi")
    if not modelfile.header_int(header.get("prune_k", 0), 0, 0):
        raise ModelFormatError("corrupt fasttag model: segmenters do not prune candidates")
    if header.get("tagdict_words", []) != [] or "tagdict_class" in arrays:
        raise ModelFormatError("corrupt fasttag model: segmenters have no tag dictionary")


def _fold_dictionaries(sents, folds, extra):
    """One WordSet per jackknife fold: the words (2..MAX_WORD characters)
    seen outside the fold, plus ``extra``."""
    fold_counts = [Counter() for _ in range(folds)]
    for i, ws in enumerate(sents):
        fold_counts[i % folds].update(w for w in ws if 2 <= len(w) <= MAX_WORD)
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
    """The words of a :func:`_pack_words` array: UTF-8 bytes, one word a
    line, no word empty or holding whitespace (none of those ever comes
    out of training or a user dictionary)."""
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


# ---------------------------------------------------------------- CLI

def train_command(args):
    seg = Segmenter.train(Path(args.train), dev=None if args.dev is None else Path(args.dev),
                          epochs=args.epochs or DEFAULT_EPOCHS, seed=args.seed,
                          dictionary=None if args.dict is None else Path(args.dict),
                          algorithm=args.algorithm, k=args.k, C=args.C,
                          verbose=None if not args.quiet else False)
    try:
        seg.save(args.output)
    except OSError as exc:
        raise InputError(f"cannot write the model ({exc.strerror})", path=args.output) from None
    info = seg.model.training_info
    print(f"saved {args.output}: best epoch {info.get('best_epoch')}"
          + (f", dev word F1 {100 * info['dev_score']:.2f}" if info.get("dev_score") is not None else ""),
          file=sys.stderr)
    return 0


def segment_command(args):
    from .loading import default_model_path, load
    path = args.model or default_model_path("zh")
    seg = load(path)
    if not isinstance(seg, Segmenter):
        raise FasttagError(f"{path} is not a segmenter model: use 'fasttag tag'")
    if args.dict:
        # a Path: the file's name, never words (see read_userdict); a bad
        # line is an InputError naming the file and the line
        seg.add_words(Path(args.dict), mode="force")
    if args.input:
        try:
            source = open(args.input, encoding="utf-8", errors="surrogateescape", newline=None)
        except OSError as exc:
            raise InputError(f"cannot read the input ({exc.strerror})", path=args.input) from None
    else:
        source = _io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")
    if args.output:
        try:
            out = open(args.output, "w", encoding="utf-8", errors="surrogateescape", newline="\n")
        except OSError as exc:
            if args.input:
                source.close()
            raise InputError(f"cannot write the output ({exc.strerror})", path=args.output) from None
    else:
        out = _io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="surrogateescape",
                                newline="\n", write_through=False)
    try:
        lines = (line.rstrip("\n") for line in source)
        for words in seg.segment_lines(lines):
            out.write(" ".join(words))
            out.write("\n")
    finally:
        if args.input:
            source.close()
        if args.output:
            out.close()
        else:
            out.flush()
            out.detach()
    return 0


def eval_command(model, args):
    result = model.evaluate(args.test, words=args.words)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    def pct(x):
        return "n/a" if x is None else f"{100 * x:.2f}"
    print(f"precision         {pct(result['precision'])}")
    print(f"recall            {pct(result['recall'])}")
    print(f"F1                {pct(result['f1'])}   ({result['gold_words']} gold words, {result['lines']} lines)")
    print(f"OOV rate          {pct(result['oov_rate'])}"
          + ("" if args.words else "   (against the model's training vocabulary)"))
    print(f"OOV recall        {pct(result['oov_recall'])}")
    print(f"IV recall         {pct(result['iv_recall'])}")
    print(f"speed             {result['chars_per_second']:,.0f} chars/s")
    return 0
