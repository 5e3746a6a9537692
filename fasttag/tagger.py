"""The part-of-speech tagger: a structured perceptron over word features.

``Tagger.train`` reads CoNLL-U or column files (or takes (words, tags)
pairs), builds a tag dictionary (words seen at least ``tagdict_min_count``
times may only take the tags they were seen with), and trains a
:class:`fasttag.sequence.SequenceModel` with the default POS templates.
"""
import time
from collections import Counter, defaultdict

import numpy as np

from . import io as ftio
from . import modelfile
from .errors import FasttagError, ModelFormatError
from .features import POS_TEMPLATES, WordFeaturizer, bad_token, hash_texts, one_sentence, token_lists
from .sequence import SequenceModel

KIND = "tagger"
MAX_COLUMNS = 64           # a stored column index beyond this is a corrupt file


def _read_pairs(data, format=None, column=None, word_column=0):
    """(words, tags) pairs from a path, an iterable of Sentence objects or
    of (words, tags) pairs."""
    if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__") or hasattr(data, "read"):
        return [(s.words, s.tags) for s in ftio.read(data, format=format, column=column,
                                                      word_column=word_column)]
    pairs = []
    for item in data:
        if isinstance(item, ftio.Sentence):
            pairs.append((item.words, item.tags))
        else:
            words, tags = item
            pairs.append((list(words), list(tags)))
    return pairs


def _auto_prune(n_tags):
    """Open tokens keep their 32 best tags when there are many tags."""
    return 0 if n_tags <= 64 else 32


def _auto_tagdict(n_tags):
    """Default ``tagdict_min_count``.  Measured: on EWT UPOS (17 tags) any
    tag dictionary costs 0.05-0.15 points, so it is off; on WSJ (44 tags)
    restricting words seen 30+ times keeps accuracy and halves training
    time; on Brown (466 tags) words seen 5+ times are restricted (speed)."""
    if n_tags <= 20:
        return 0
    return 30 if n_tags <= 64 else 5


class Tagger(modelfile.Stored):
    """A trained part-of-speech tagger.  Create with :meth:`train` or
    :func:`fasttag.load`."""

    def __init__(self, model, meta=None, vocab=None):
        self.model = model
        self.meta = dict(meta or {})
        self._vocab = _HashedVocab(np.zeros(0, np.uint64) if vocab is None else vocab)

    # ------------------------------------------------------------ training

    @classmethod
    def train(cls, train, dev=None, *, format=None, column=None, word_column=0, epochs=10,
              seed=0, decoder="viterbi", templates=POS_TEMPLATES, tagdict_min_count=None,
              prune_k=None, algorithm="perceptron", k=1, C=None, verbose=None,
              corpus=None, licence=None):
        """Train on ``train`` (a path, or (words, tags) pairs), selecting the
        best epoch on ``dev`` when given.  ``format``/``column`` as in
        :func:`fasttag.io.read`: ``column`` is "upos" (default) or "xpos" for
        CoNLL-U, a 0-based column index for column files (default: last)."""
        pairs = _read_pairs(train, format, column, word_column)
        pairs = [p for p in pairs if p[0]]
        if not pairs:
            raise FasttagError("no training sentences")
        if any(tags is None for _, tags in pairs):
            raise FasttagError("training data has no tag column")
        tag_counts = Counter(t for _, tags in pairs for t in tags)
        tags = sorted(tag_counts)
        index = {t: i for i, t in enumerate(tags)}
        word_tags = defaultdict(Counter)
        for words, ts in pairs:
            for w, t in zip(words, ts):
                word_tags[w][index[t]] += 1
        classes, tagdict = {}, {}
        if tagdict_min_count is None:
            tagdict_min_count = _auto_tagdict(len(tags))
        if tagdict_min_count:
            for w, counter in word_tags.items():
                if sum(counter.values()) >= tagdict_min_count:
                    key = tuple(sorted(counter))
                    tagdict[w] = classes.setdefault(key, len(classes))
        class_list = sorted(classes, key=classes.get)
        if prune_k is None:
            prune_k = _auto_prune(len(tags))
        model = SequenceModel(tags, WordFeaturizer(), templates, tagdict=tagdict,
                              tagdict_classes=class_list, prune_k=prune_k, decoder=decoder)
        data = [(w, None, [index[t] for t in ts]) for w, ts in pairs]
        dev_data = None
        if dev is not None:
            dev_pairs = [p for p in _read_pairs(dev, format, column, word_column) if p[0]]
            dev_data = [(w, None, [index.get(t, -1) for t in ts]) for w, ts in dev_pairs]
        t0 = time.perf_counter()
        history = model.fit(data, dev_data, epochs=epochs, seed=seed, verbose=verbose, name="pos",
                            algorithm=algorithm, k=k, C=C)
        meta = {"format": format, "column": column, "word_column": word_column,
                "train_seconds": time.perf_counter() - t0, "history": history}
        if isinstance(train, (str,)) or hasattr(train, "__fspath__"):
            meta["format"] = format or ftio.guess_format(train)
        elif format is None:
            meta["column"] = None          # (words, tags) pairs: no column was read
        if corpus:
            meta["corpus"] = corpus
        if licence:
            meta["licence"] = licence
        return cls(model, meta, vocab=np.unique(hash_texts(list(word_tags))))

    # ------------------------------------------------------------ tagging

    @property
    def tags(self):
        """The tag set, sorted."""
        return list(self.model.tags)

    def tag(self, tokens):
        """Tags of one sentence (a list of token strings).  A str is a
        TypeError, not a sentence of characters."""
        return self.tag_sents([one_sentence(tokens, "tag")])[0]

    def tag_sents(self, sentences):
        """Tags of many sentences (lists of token strings); batching them is
        much faster than calling :meth:`tag` in a loop.  Safe to call from
        many threads on one tagger.  A token that is not a str is a
        TypeError saying where it is."""
        sents = token_lists(sentences)
        try:
            return self.model.predict_tags([(s, None) for s in sents])
        except TypeError:
            # only new word types are checked while tagging; find the culprit
            err = bad_token(sents)
            if err is None:
                raise
            raise err from None

    def evaluate(self, data, *, format=None, column=None, word_column=None):
        """Accuracy on a path or on (words, tags) pairs: ``accuracy``,
        ``known_accuracy``, ``unknown_accuracy`` (unknown = not seen in
        training), ``tokens``, ``tokens_per_second``, ``per_tag`` (precision,
        recall, f1, support) and ``confusions`` (gold, predicted, count)."""
        if format is None:
            format = self.meta.get("format")
        if column is None:
            column = self.meta.get("column")
        if word_column is None:
            word_column = self.meta.get("word_column", 0)
        pairs = [p for p in _read_pairs(data, format, column, word_column) if p[0]]
        t0 = time.perf_counter()
        pred = self.tag_sents([w for w, _ in pairs])
        seconds = time.perf_counter() - t0
        return score_tagging(pairs, pred, self._vocab, seconds)

    # ------------------------------------------------------------ storage

    def _parts(self):
        header, arrays = self.model.to_parts()
        header["kind"] = KIND
        header["featurizer"] = {"name": "word", "n_columns": 0}
        header["meta"] = modelfile.stored_meta(self.meta)
        arrays["vocab"] = self._vocab.hashes
        return header, arrays

    @classmethod
    def _from_parts(cls, header, arrays):
        if header.get("kind") != KIND:
            raise ModelFormatError(f"not a POS tagger model (kind {header.get('kind')!r})")
        model = SequenceModel.from_parts(header, arrays, WordFeaturizer())
        vocab = arrays.get("vocab", np.zeros(0, np.uint64))
        if vocab.ndim != 1 or vocab.dtype != np.uint64 or np.any(vocab[1:] <= vocab[:-1]):
            raise ModelFormatError("corrupt fasttag model: the vocabulary is not sorted word hashes")
        return cls(model, _checked_meta(header.get("meta", {})), vocab=vocab)


def _checked_meta(meta):
    """The stored reading options, checked: ``evaluate`` passes them to the
    readers as its defaults."""
    if not isinstance(meta, dict):
        raise ModelFormatError("corrupt fasttag model: meta is not an object")
    fmt, column, word_column = meta.get("format"), meta.get("column"), meta.get("word_column", 0)
    if fmt is not None and fmt not in ("conllu", "conll"):       # tagged formats only
        raise ModelFormatError(f"corrupt fasttag model: bad training format {fmt!r}")
    if isinstance(column, str) and fmt != "conllu":
        raise ModelFormatError(f"corrupt fasttag model: column {column!r} without the CoNLL-U format")
    limit = 10 if fmt == "conllu" else MAX_COLUMNS
    if not (column is None or modelfile.header_int(column, -limit, limit - 1)
            or (isinstance(column, str) and column.upper() in ftio.CONLLU_FIELDS and fmt != "conll")):
        raise ModelFormatError(f"corrupt fasttag model: bad tag column {column!r}")
    if not modelfile.header_int(word_column, 0, MAX_COLUMNS - 1):
        raise ModelFormatError(f"corrupt fasttag model: bad word column {word_column!r}")
    return meta


class _HashedVocab:
    """Membership in the training vocabulary, stored as sorted word hashes."""

    def __init__(self, hashes):
        self.hashes = np.asarray(hashes, dtype=np.uint64)

    def __contains__(self, word):
        return bool(self.contains([word])[0])

    def contains(self, words):
        if not len(self.hashes) or not words:
            return np.zeros(len(words), dtype=bool)
        h = hash_texts(words)
        i = np.searchsorted(self.hashes, h)
        i[i == len(self.hashes)] = 0
        return self.hashes[i] == h

    def __len__(self):
        return len(self.hashes)


def score_tagging(pairs, pred, vocab, seconds):
    """Token accuracy, known/unknown accuracy (``vocab.contains(words)``
    tells the known ones), per-tag P/R/F1, confusions."""
    words = [w for ws, _ in pairs for w in ws]
    gold = [t for _, ts in pairs for t in ts]
    guess = [t for ts in pred for t in ts]
    n = len(gold)
    correct = np.array([g == p for g, p in zip(gold, guess)], dtype=bool)
    known = vocab.contains(words)
    def frac(mask):
        return float(correct[mask].mean()) if mask.any() else 0.0
    tp, fp, fn = Counter(), Counter(), Counter()
    confusions = Counter()
    for g, p in zip(gold, guess):
        if g == p:
            tp[g] += 1
        else:
            fp[p] += 1
            fn[g] += 1
            confusions[(g, p)] += 1
    per_tag = {}
    for t in sorted(set(gold) | set(guess)):
        prec = tp[t] / (tp[t] + fp[t]) if tp[t] + fp[t] else 0.0
        rec = tp[t] / (tp[t] + fn[t]) if tp[t] + fn[t] else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        per_tag[t] = {"precision": prec, "recall": rec, "f1": f1, "support": tp[t] + fn[t]}
    return {
        "accuracy": float(correct.mean()) if n else 0.0,
        "known_accuracy": frac(known),
        "unknown_accuracy": frac(~known),
        "unknown_tokens": int((~known).sum()),
        "tokens": n,
        "sentences": len(pairs),
        "seconds": seconds,
        "tokens_per_second": n / seconds if seconds > 0 else 0.0,
        "per_tag": per_tag,
        "confusions": [[g, p, c] for (g, p), c in confusions.most_common(20)],
    }
