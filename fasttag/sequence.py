"""Collins' structured perceptron over hashed template features.

``SequenceModel`` is the machinery every fasttag sequence task shares (POS
tagging, word segmentation, chunking, NER): a featurizer and templates turn
tokens into feature keys; an emission ``WeightTable`` and a dense transition
vector, both lazily averaged (one averaging step per training sentence),
score them; :class:`fasttag._sequence.Search` decodes (Viterbi or greedy)
under optional constraints (forbidden transitions, a tag dictionary, pruning
of open tokens to their best ``prune_k`` tags).

Training decodes each sentence with the current weights and, where the best
path differs from the gold path, adds the gold path's features and subtracts
the predicted path's.  Prediction uses the averaged weights.  Sentences are
shuffled each epoch with a seeded generator; with a dev set, the averaged
weights of the best epoch are kept.
"""
import sys
import time

import numpy as np

from ._core import AveragedVector, WeightTable
from ._sequence import MAX_TAGS, Search, check_n_tags, transition_size
from .errors import InputError, ModelFormatError
from .modelfile import header_int
from .features import Templates
from .tables import table_from_arrays, table_to_arrays

BATCH_TOKENS = 50_000


class SequenceModel:
    """Tags, templates, weights and constraints of one sequence task.

    ``featurizer`` has ``attribute_names`` and ``attributes(tokens,
    columns)``; ``allowed`` is a transition mask (see ``_sequence``);
    ``tagdict`` maps a token to a candidate class index into
    ``tagdict_classes`` (tuples of tag ids).  A featurizer may also define
    ``candidate_classes(tokens, columns) -> int32 array or None``: per-token
    class indices into ``tagdict_classes`` (-1: open), used instead of the
    tag dictionary (segmentation constrains positions this way).  A
    featurizer with ``n_type_attributes`` (a per-word-type cache) also
    provides ``lookup(tokens) -> (type ids, their rows)``, taken in one step
    so that threads sharing the model never read rows another thread is
    replacing.
    """

    def __init__(self, tags, featurizer, templates, allowed=None, tagdict=None,
                 tagdict_classes=(), prune_k=0, decoder="viterbi"):
        if decoder not in ("viterbi", "greedy"):
            raise ValueError(f"decoder must be 'viterbi' or 'greedy', not {decoder!r}")
        self.tags = list(tags)
        try:
            T = check_n_tags(len(self.tags))    # before any (T + 2) * T allocation
        except ValueError as exc:
            raise InputError(str(exc)) from None
        self.tag_index = {t: i for i, t in enumerate(self.tags)}
        if len(self.tag_index) != T:
            raise ValueError("the tag set lists a tag twice")
        self.featurizer = featurizer
        self.templates = Templates(templates, featurizer.attribute_names)
        self.allowed = None if allowed is None else np.ascontiguousarray(allowed, dtype=np.uint8)
        self.tagdict = dict(tagdict or {})
        self.tagdict_classes = [tuple(sorted(c)) for c in tagdict_classes]
        for c in self.tagdict_classes:
            if not c or c[0] < 0 or c[-1] >= T or len(set(c)) != len(c):
                raise ValueError("a tag dictionary class must list distinct tags in range")
        if isinstance(prune_k, bool) or not isinstance(prune_k, (int, np.integer)) \
                or not 0 <= prune_k <= MAX_TAGS:
            raise ValueError(f"prune_k must be an integer from 0 to {MAX_TAGS}, not {prune_k!r}")
        self.prune_k = int(prune_k)
        self.decoder = decoder
        self.emit = WeightTable()          # averaged weights used to predict
        self.trans = np.zeros(transition_size(len(self.tags)))
        self.training_info = {}
        # Prediction scores the type-only templates once per word type
        # (featurizers with a per-type cache say how many attributes are
        # type-level); training scores every template per token.
        n_type_attrs = getattr(featurizer, "n_type_attributes", 0)
        self._split = self.templates.split(n_type_attrs) if n_type_attrs else None

    # ------------------------------------------------------------ batches

    def _candidates(self, tokens, columns=None):
        classes = None
        by_position = getattr(self.featurizer, "candidate_classes", None)
        if by_position is not None:
            classes = by_position(tokens, columns)
        elif self.tagdict:
            get = self.tagdict.get
            classes = np.array([get(t, -1) for t in tokens], dtype=np.int32)
        if classes is None:
            return None
        offsets = np.zeros(len(self.tagdict_classes) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(c) for c in self.tagdict_classes])
        flat = np.array([t for c in self.tagdict_classes for t in c], dtype=np.int32)
        if not len(self.tagdict_classes):
            offsets, flat = np.zeros(1, np.int64), np.zeros(0, np.int32)
        return classes, offsets, flat

    def _flatten(self, sentences):
        """(bounds, tokens, columns) of a list of (tokens, columns) pairs."""
        bounds = np.zeros(len(sentences) + 1, dtype=np.int64)
        np.cumsum([len(tokens) for tokens, _ in sentences], out=bounds[1:])
        tokens = [t for toks, _ in sentences for t in toks]
        columns = None
        if getattr(self.featurizer, "n_columns", 0):
            columns = [c for _, cols in sentences for c in cols]
        return bounds, tokens, columns

    def _batch_keys(self, sentences):
        """(keys, bounds, candidates) for a list of (tokens, columns) pairs."""
        bounds, tokens, columns = self._flatten(sentences)
        attrs = self.featurizer.attributes(tokens, columns)
        return self.templates.keys(attrs, bounds), bounds, self._candidates(tokens, columns)

    def _search(self, emit, trans, candidates):
        return Search(emit, trans, len(self.tags), allowed=self.allowed,
                      candidates=candidates, prune_k=self.prune_k)

    def _batch_split(self, sentences, emit):
        """Like :meth:`_batch_keys`, but the type-only templates are scored
        once per distinct word type: (context keys, bounds, candidates,
        per-type base scores, type index per token).  The featurizer's
        ``lookup(tokens) -> (type ids, rows)`` gives the type rows."""
        type_templates, context_templates = self._split
        bounds, tokens, columns = self._flatten(sentences)
        # ids and the rows they index come from one lookup: another thread
        # may clear the type cache between two calls
        ids, rows = self.featurizer.lookup(tokens)
        attrs = self.featurizer.attributes(tokens, columns, ids=ids, rows=rows)
        unique, index = np.unique(ids, return_inverse=True)
        type_keys = type_templates.keys(self.featurizer.type_rows(unique, rows),
                                        np.array([0, len(unique)], dtype=np.int64))
        F = type_keys.shape[1]
        offsets = np.arange(0, len(unique) * F + 1, max(F, 1), dtype=np.int64) if F else \
            np.zeros(len(unique) + 1, dtype=np.int64)
        base = emit.score_batch(type_keys.ravel(), offsets, n_classes=len(self.tags))
        keys = context_templates.keys(attrs, bounds)
        return keys, bounds, self._candidates(tokens, columns), base, index.astype(np.int64)

    def predict_ids(self, sentences, emit=None, trans=None):
        """Tag ids (an int32 array) per sentence, for a list of (tokens,
        columns) pairs."""
        out = []
        for ids, bounds in self._predict_chunks(sentences, emit, trans):
            out.extend(ids[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1))
        return out

    def predict_tags(self, sentences):
        """Tag strings per sentence (the fast path for taggers)."""
        names = np.array(self.tags, dtype=object)
        out = []
        for ids, bounds in self._predict_chunks(sentences):
            flat = names[ids].tolist()
            b = bounds.tolist()
            out.extend(flat[b[i]:b[i + 1]] for i in range(len(b) - 1))
        return out

    def _predict_chunks(self, sentences, emit=None, trans=None):
        """(tag ids, bounds) for successive chunks of the sentences."""
        emit = self.emit if emit is None else emit
        trans = self.trans if trans is None else trans
        greedy = self.decoder == "greedy"
        for chunk in _chunks(sentences, BATCH_TOKENS):
            if self._split is not None:
                keys, bounds, cands, base, index = self._batch_split(chunk, emit)
                ids = self._search(emit, trans, cands).decode(keys, bounds, greedy=greedy,
                                                              base=base, base_index=index)
            else:
                keys, bounds, cands = self._batch_keys(chunk)
                ids = self._search(emit, trans, cands).decode(keys, bounds, greedy=greedy)
            yield ids, bounds

    # ------------------------------------------------------------ training

    def fit(self, train, dev=None, epochs=10, seed=0, evaluate=None, verbose=None, name="train",
            algorithm="perceptron", k=1, C=None):
        """Train on ``train``: a list of (tokens, columns, tag ids) triples.

        ``algorithm`` is "perceptron" (Collins) or "mira" (k-best MIRA with
        ``k`` sequences per update and aggressiveness ``C``, default 1.0).

        ``evaluate(predicted_id_lists) -> float`` scores the dev set (token
        accuracy when None); the best epoch's averaged weights are kept.
        Returns a list of per-epoch statistics.
        """
        if verbose is None:
            verbose = sys.stderr.isatty()
        if epochs < 1:
            raise ValueError("epochs must be at least 1")
        if algorithm not in ("perceptron", "mira"):
            raise ValueError(f"algorithm must be 'perceptron' or 'mira', not {algorithm!r}")
        if k < 1:
            raise ValueError("k must be at least 1")
        C = 1.0 if C is None else float(C)
        if not C > 0:
            raise ValueError("C must be positive")
        if not train:
            raise ValueError("no training sentences")
        keys, bounds, cands = self._batch_keys([(t, c) for t, c, _ in train])
        gold = np.concatenate([np.asarray(g, dtype=np.int32) for _, _, g in train]) \
            if keys.shape[0] else np.zeros(0, np.int32)
        if dev:
            dev_keys = self._batch_keys([(t, c) for t, c, _ in dev])
            dev_gold = [np.asarray(g, dtype=np.int32) for _, _, g in dev]
        emit = WeightTable(initial_features=1 << 16)
        trans = AveragedVector(transition_size(len(self.tags)))
        search = self._search(emit, trans, cands)
        rng = np.random.default_rng(seed)
        step = 0
        best = None
        history = []
        n_tokens = int(gold.shape[0])
        for epoch in range(1, epochs + 1):
            order = rng.permutation(len(train)).astype(np.int64)
            t0 = time.perf_counter()
            if algorithm == "mira":
                from ._kbest import mira_epoch
                wrong, step = mira_epoch(search, trans, keys, bounds, gold, order, step, k=k, C=C)
            else:
                wrong, step = search.train_epoch(trans, keys, bounds, gold, order, step,
                                                 greedy=self.decoder == "greedy")
            seconds = time.perf_counter() - t0
            stats = {"epoch": epoch, "train_accuracy": 1 - wrong / max(n_tokens, 1),
                     "seconds": seconds, "tokens_per_second": n_tokens / max(seconds, 1e-9)}
            if dev or epoch == epochs:
                avg_emit = emit.averaged(step)
                avg_trans = trans.averaged(step)
            if dev:
                d_keys, d_bounds, d_cands = dev_keys
                ids = self._search(avg_emit, avg_trans, d_cands).decode(
                    d_keys, d_bounds, greedy=self.decoder == "greedy")
                pred = [ids[d_bounds[i]:d_bounds[i + 1]] for i in range(len(dev))]
                if evaluate is None:
                    score = float(np.mean(np.concatenate(pred) == np.concatenate(dev_gold))) \
                        if d_bounds[-1] else 0.0
                else:
                    score = evaluate(pred)
                stats["dev_score"] = score
                if best is None or score > best[0]:
                    best = (score, epoch, avg_emit, avg_trans)
            elif epoch == epochs:
                best = (None, epoch, avg_emit, avg_trans)
            history.append(stats)
            if verbose:
                dev_text = f"  dev {stats['dev_score']:.4f}" if "dev_score" in stats else ""
                print(f"[fasttag {name}] epoch {epoch}/{epochs}  train acc {stats['train_accuracy']:.4f}"
                      f"{dev_text}  {stats['tokens_per_second']:,.0f} tokens/s", file=sys.stderr)
        score, best_epoch, self.emit, self.trans = best
        self.training_info = {"epochs": epochs, "best_epoch": best_epoch, "seed": seed,
                              "algorithm": algorithm, "k": k, "C": C,
                              "dev_score": score, "train_tokens": n_tokens,
                              "train_sentences": len(train)}
        return history

    # ------------------------------------------------------------ storage

    def to_parts(self):
        """(header dict, arrays dict) for a model file."""
        header = {
            "tags": self.tags,
            "templates": self.templates.names,
            "decoder": self.decoder,
            "prune_k": self.prune_k,
            "tagdict_classes": [list(c) for c in self.tagdict_classes],
            "training": self.training_info,
        }
        arrays = table_to_arrays(self.emit, "emit")
        arrays["transitions"] = self.trans.astype(np.float32)
        if self.allowed is not None:
            arrays["allowed"] = self.allowed
        if self.tagdict:
            words = list(self.tagdict)
            header["tagdict_words"] = words
            arrays["tagdict_class"] = np.array([self.tagdict[w] for w in words], dtype=np.int32)
        return header, arrays

    @classmethod
    def from_parts(cls, header, arrays, featurizer):
        """Rebuild from :meth:`to_parts` output; ModelFormatError if it does
        not add up."""
        tags = _str_list(header.get("tags"), "tags")
        templates = _str_list(header.get("templates"), "templates")
        words = _str_list(header.get("tagdict_words", []), "tagdict_words")
        classes = header.get("tagdict_classes", [])
        if not isinstance(classes, list) or not all(
                isinstance(c, list) and all(header_int(t) for t in c) and c == sorted(set(c)) for c in classes):
            raise ModelFormatError(
                "corrupt fasttag model: tagdict_classes is not a list of ascending tag-id lists")
        prune_k = header.get("prune_k", 0)
        if not header_int(prune_k):
            raise ModelFormatError("corrupt fasttag model: prune_k is not an integer")
        decoder = header.get("decoder", "viterbi")
        training = header.get("training", {})
        if not isinstance(training, dict):
            raise ModelFormatError("corrupt fasttag model: training info is not an object")
        try:
            T = check_n_tags(len(tags))
        except ValueError as exc:
            raise ModelFormatError(f"corrupt fasttag model: {exc}") from None
        tagdict = {}
        if words:
            cls_ids = arrays.get("tagdict_class")
            if cls_ids is None or cls_ids.dtype.kind not in "iu" or cls_ids.shape != (len(words),) or \
                    (len(cls_ids) and (cls_ids.min() < 0 or cls_ids.max() >= len(classes))):
                raise ModelFormatError("corrupt fasttag model: tag dictionary does not match")
            tagdict = dict(zip(words, cls_ids.tolist()))
            if len(tagdict) != len(words):
                raise ModelFormatError("corrupt fasttag model: the tag dictionary lists a word twice")
        elif "tagdict_class" in arrays:
            raise ModelFormatError("corrupt fasttag model: tag dictionary classes without words")
        allowed = arrays.get("allowed")
        trans = arrays.get("transitions")
        if trans is None or trans.dtype.kind != "f" or trans.shape != (transition_size(T),) \
                or not np.all(np.isfinite(trans)) or np.abs(trans).max() > np.finfo(np.float32).max:
            raise ModelFormatError("corrupt fasttag model: transition weights do not match the tags")
        if allowed is not None and (allowed.dtype != np.uint8 or allowed.shape != (transition_size(T),)):
            raise ModelFormatError("corrupt fasttag model: transition mask does not match the tags")
        try:
            model = cls(tags, featurizer, templates, allowed=allowed, tagdict=tagdict,
                        tagdict_classes=classes, prune_k=prune_k, decoder=decoder)
        except (ValueError, TypeError, OverflowError) as exc:
            raise ModelFormatError(f"corrupt fasttag model: {exc}") from None
        model.emit = table_from_arrays(arrays, "emit", T)
        model.trans = trans.astype(np.float64)
        model.training_info = training
        return model


def _str_list(value, name):
    """A header list of strings, or ModelFormatError naming the key."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ModelFormatError(f"corrupt fasttag model: {name} is not a list of strings")
    return value


def _chunks(sentences, max_tokens):
    chunk, size = [], 0
    for s in sentences:
        chunk.append(s)
        size += len(s[0])
        if size >= max_tokens:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk
