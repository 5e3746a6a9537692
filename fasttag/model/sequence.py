"""The sequence model every fasttag task decodes with: tags, featurizer,
templates, weights and the decoder's constraints.  Training lives in
:mod:`fasttag.model.training`.
"""
from collections.abc import Sequence
from itertools import chain

import numpy as np

from .. import parallel
from .._core.weights import WeightTable
from .._core.sequence import MAX_TAGS, Search, check_n_tags, few_candidates_of, transition_size
from .._core.wordtypes import distinct
from ..errors import InputError, ModelFormatError, shown
from ..text import schemes
from ..text.fieldcheck import field_fault
from .modelfile import header_int
from ..features.words import Templates
from .tables import table_from_arrays, table_to_arrays

BATCH_TOKENS = 50_000


class IdRows(Sequence):
    """The tag id array of each example: views of the chunks decoded
    together, made when first read, so that a caller wanting every tag at
    once reads ``chunks`` (``(ids, bounds)`` pairs) whole instead."""

    def __init__(self, chunks):
        self.chunks = chunks
        self._rows = None

    def _all(self):
        if self._rows is None:
            self._rows = [ids[b[i]:b[i + 1]] for ids, b in self.chunks for i in range(len(b) - 1)]
        return self._rows

    def __len__(self):
        return sum(len(b) - 1 for _, b in self.chunks)

    def __getitem__(self, i):
        return self._all()[i]

    def __iter__(self):
        return iter(self._all())


class SequenceModel:
    """Tags, templates, weights and constraints of one sequence task.

    A model decodes *examples*, ``(input, context)`` pairs, as its featurizer
    reads them: a token featurizer (``attributes(tokens, columns)``) takes
    token lists with per-token columns or None; a batch featurizer
    (``batch(inputs, contexts) -> Batch``) whole inputs, with per-example
    side data and optionally candidate classes; one with ``feature_keys(inputs)
    -> (keys, bounds)`` hashes whole features itself (padded with key 0,
    which training never stores).  A token featurizer with
    ``n_type_attributes`` also provides ``lookup(tokens) -> (type ids, rows)``.

    ``allowed``: a transition mask; ``tagdict`` maps a token to an index
    into ``tagdict_classes`` (tuples of tag ids).
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
        # prediction scores the type-only templates once per word type
        n_type_attrs = getattr(featurizer, "n_type_attributes", 0)
        self._split = self.templates.split(n_type_attrs) if n_type_attrs else None
        #: at prediction, the tags each token of a chunk of examples may take
        #: (``candidate_sets(chunk)``: per token an ascending tuple of tag ids,
        #: or None for any), where the task knows (a lemmatizer: the edit
        #: scripts that fit the form): the decoder scores those only
        self.candidate_sets = None
        #: the tagging scheme (:data:`fasttag.text.schemes.SCHEMES`) whose valid
        #: transitions ``allowed`` holds, so that a grown tag set gets its own mask
        self.allowed_scheme = None

    def add_tags(self, new_tags):
        """Append ``new_tags`` to the tag set (fine-tuning): existing ids,
        weights and transitions stay; a transition mask grows with the new
        tags forbidden everywhere, or, where the mask is a scheme's
        (:attr:`allowed_scheme`), the scheme's mask of the grown tag set."""
        old = len(self.tags)
        tags = self.tags + [t for t in new_tags if t not in self.tag_index]
        T = check_n_tags(len(tags))
        trans = np.zeros(transition_size(T))
        grown = None if self.allowed is None else np.zeros(transition_size(T), dtype=np.uint8)
        for src, dst in ((self.trans, trans), (self.allowed, grown)):
            if src is None:
                continue
            dst.reshape(T + 2, T)[:old, :old] = src[:old * old].reshape(old, old)
            dst.reshape(T + 2, T)[T, :old] = src[old * old:old * old + old]
            dst.reshape(T + 2, T)[T + 1, :old] = src[(old + 1) * old:]
        if self.allowed_scheme is not None:
            grown = schemes.allowed_mask(tags, self.allowed_scheme)
        self.tags = tags
        self.tag_index = {t: i for i, t in enumerate(tags)}
        self.trans, self.allowed = trans, grown

    # ------------------------------------------------------------ batches

    def _class_offsets(self):
        """(offsets, flat tag ids) of ``tagdict_classes`` for the decoder."""
        if not self.tagdict_classes:
            return np.zeros(1, np.int64), np.zeros(0, np.int32)
        offsets = np.zeros(len(self.tagdict_classes) + 1, dtype=np.int64)
        np.cumsum([len(c) for c in self.tagdict_classes], out=offsets[1:])
        flat = np.array([t for c in self.tagdict_classes for t in c], dtype=np.int32)
        return offsets, flat

    def _candidates(self, classes):
        """The decoder's candidate triple for per-position class indices
        (-1: open), or None when nothing is constrained."""
        if classes is None:
            return None
        return (classes,) + self._class_offsets()

    def _token_classes(self, tokens):
        if not self.tagdict:
            return None
        get = self.tagdict.get
        return np.fromiter((get(t, -1) for t in tokens), dtype=np.int32, count=len(tokens))

    def _flatten(self, examples):
        """(bounds, tokens, per-token columns or None) of token examples."""
        inputs = [x for x, _ in examples]
        bounds = np.zeros(len(inputs) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, inputs), np.int64, len(inputs)), out=bounds[1:])
        tokens = list(chain.from_iterable(inputs))
        columns = None
        if getattr(self.featurizer, "n_columns", 0) or (getattr(self.featurizer, "takes_columns", False)
                                                      and any(c is not None for _, c in examples)):
            columns = [c for _, cols in examples for c in cols]
        return bounds, tokens, columns

    def featurize(self, examples):
        """(keys, bounds, candidates, batch) of a list of (input, context)
        examples: every template's feature keys per position.  ``batch``
        is the batch featurizer's output (None for token featurizers)."""
        if hasattr(self.featurizer, "feature_keys"):     # the featurizer hashes whole features itself
            keys, bounds = self.featurizer.feature_keys([x for x, _ in examples])
            return keys, bounds, None, None
        if hasattr(self.featurizer, "batch"):
            batch = self.featurizer.batch([x for x, _ in examples], [c for _, c in examples])
            return (self.templates.keys(batch.attrs, batch.bounds), batch.bounds,
                    self._candidates(batch.classes), batch)
        bounds, tokens, columns = self._flatten(examples)
        attrs = self.featurizer.attributes(tokens, columns)
        return (self.templates.keys(attrs, bounds), bounds,
                self._candidates(self._token_classes(tokens)), None)

    def search(self, emit, trans, candidates):
        """The decoder over weights ``emit``/``trans`` with this model's
        constraints."""
        return Search(emit, trans, len(self.tags), allowed=self.allowed,
                      candidates=candidates, prune_k=self.prune_k)

    def _featurize_split(self, examples):
        """:meth:`featurize` with the type-only templates apart: (context
        keys, bounds, candidates, type keys, type index), the type keys a
        row per distinct word type of the examples."""
        type_templates, context_templates = self._split
        bounds, tokens, columns = self._flatten(examples)
        # ids and the rows they index come from one lookup: another thread
        # may clear the type cache between two calls
        ids, rows = self.featurizer.lookup(tokens)
        attrs = self.featurizer.attributes(tokens, columns, ids=ids, rows=rows)
        unique, index = distinct(ids)      # O(n); the types' order does not matter
        type_keys = type_templates.keys(self.featurizer.type_rows(unique, rows),
                                        np.array([0, len(unique)], dtype=np.int64))
        keys = context_templates.keys(attrs, bounds)
        return (keys, bounds, self._candidates(self._token_classes(tokens)),
                np.ascontiguousarray(type_keys, dtype=np.uint64), index.astype(np.int64))

    def _type_scores(self, emit, type_keys, index, cands):
        """(base, base_rows) of :meth:`Search.decode`: every tag's scores
        of the type templates, a row per word type that has a token with
        many candidates (its decoder reads every tag's score); the types
        whose tokens all have few (the lemmatizer's fitting scripts) are
        scored for their candidates alone."""
        T = len(self.tags)
        needed = np.ones(len(type_keys), dtype=bool)
        if cands is not None:
            classes, offsets, _ = cands
            classes = np.asarray(classes)
            few = np.zeros(len(classes), dtype=bool)
            closed = classes >= 0
            few[closed] = few_candidates_of(np.diff(offsets)[classes[closed]], T)
            needed[:] = False
            needed[index[~few]] = True
        wanted = np.flatnonzero(needed)
        base_rows = np.full(len(type_keys), -1, dtype=np.int64)
        base_rows[wanted] = np.arange(len(wanted), dtype=np.int64)
        F = type_keys.shape[1]
        offsets = np.arange(0, len(wanted) * F + 1, max(F, 1), dtype=np.int64) if F else \
            np.zeros(len(wanted) + 1, dtype=np.int64)
        base = emit.score_batch(np.ascontiguousarray(type_keys[wanted]).ravel(), offsets, n_classes=T)
        return base, base_rows

    def predict_chunks(self, examples, emit=None, trans=None, n_threads=1):
        """The one prediction path: ``(tag ids, bounds, batch)`` per chunk of
        the examples, in order, with the averaged weights unless
        ``emit``/``trans`` are given.  ``n_threads`` (0: every core) runs
        chunks on that many threads (:mod:`fasttag.parallel`), reading the
        examples lazily."""
        emit = self.emit if emit is None else emit
        trans = self.trans if trans is None else trans
        return parallel.ordered_map(lambda chunk: self._predict_chunk(chunk, emit, trans),
                                    example_batches(examples, BATCH_TOKENS), n_threads)

    def _predict_chunk(self, chunk, emit, trans):
        """``(tag ids, bounds, batch)`` of one chunk, with a decoder of its
        own (the scratch buffers) so chunks may run on different threads."""
        greedy = self.decoder == "greedy"
        if self._split is not None:
            keys, bounds, cands, type_keys, index = self._featurize_split(chunk)
            if self.candidate_sets is not None:
                cands = self._chunk_candidates(chunk, cands)
            base, base_rows = self._type_scores(emit, type_keys, index, cands)
            ids = self.search(emit, trans, cands).decode(keys, bounds, greedy=greedy, base=base, base_index=index,
                                                         type_keys=type_keys, base_rows=base_rows)
            return ids, bounds, None
        keys, bounds, cands, batch = self.featurize(chunk)
        if self.candidate_sets is not None:
            cands = self._chunk_candidates(chunk, cands)
        ids = self.search(emit, trans, cands).decode(keys, bounds, greedy=greedy)
        return ids, bounds, batch

    def _chunk_candidates(self, chunk, cands):
        """The decoder's candidate triple of :attr:`candidate_sets` for the
        chunk (classes local to it: each distinct set once); a token the
        task leaves open keeps its tag dictionary class of ``cands``."""
        sets = self.candidate_sets(chunk)
        n = len(sets)
        classes = np.full(n, -1, dtype=np.int32) if cands is None else np.array(cands[0], dtype=np.int32)
        local, flat, offsets = {}, [], [0]
        if cands is not None:           # the tag dictionary's classes first, as they are
            flat.extend(cands[2].tolist())
            offsets.extend(cands[1][1:].tolist())
        for i, tags in enumerate(sets):
            if tags is None:
                continue
            c = local.get(tags)
            if c is None:
                c = local[tags] = len(offsets) - 1
                flat.extend(tags)
                offsets.append(len(flat))
            classes[i] = c
        return classes, np.array(offsets, dtype=np.int64), np.array(flat, dtype=np.int32)

    def predict_ids(self, examples, emit=None, trans=None, n_threads=1):
        """Tag ids (an int32 array) per example, as :class:`IdRows`."""
        return IdRows([(ids, bounds.tolist()) for ids, bounds, _ in
                       self.predict_chunks(examples, emit, trans, n_threads)])

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
        arrays.update(transition_arrays(self.trans))
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
        for i, t in enumerate(tags):
            fault = tag_fault(t)
            if fault:
                raise ModelFormatError(f"corrupt fasttag model: tags[{i}] {shown(t)} {fault}")
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
        trans = transitions_of(arrays, T)
        if allowed is not None and (allowed.dtype != np.uint8 or allowed.shape != (transition_size(T),)):
            raise ModelFormatError("corrupt fasttag model: transition mask does not match the tags")
        try:
            model = cls(tags, featurizer, templates, allowed=allowed, tagdict=tagdict,
                        tagdict_classes=classes, prune_k=prune_k, decoder=decoder)
        except (ValueError, TypeError, OverflowError) as exc:
            raise ModelFormatError(f"corrupt fasttag model: {exc}") from None
        model.emit = table_from_arrays(arrays, "emit", T)
        model.trans = trans
        model.training_info = training
        return model


#: Transition matrices of fewer entries (127 tags) are stored dense whatever
#: they hold: their size does not matter, and files stay as earlier releases wrote them.
SPARSE_TRANSITIONS_FROM = 1 << 14


def transition_arrays(trans):
    """The model file's arrays of the transition weights ``trans``: dense
    (``transitions``), or for a large matrix of which fewer than half are
    not zero (a tagger of hundreds of classes, whose T x T pairs are mostly
    never seen) the indices and values of those (``transitions.index``/``.values``)."""
    dense = trans.astype(np.float32)
    nonzero = np.flatnonzero(dense)
    if len(dense) < SPARSE_TRANSITIONS_FROM or 2 * len(nonzero) >= len(dense):
        return {"transitions": dense}
    return {"transitions.index": nonzero.astype(np.uint32 if len(dense) <= 1 << 32 else np.int64),
            "transitions.values": dense[nonzero]}


def transitions_of(arrays, T):
    """The transition weights (float64, :func:`transition_size` of ``T``) of
    a model file's arrays in either form, checked: ModelFormatError if they
    do not match the tags or are not finite float32 values."""
    size = transition_size(T)
    dense, index, values = (arrays.get(k) for k in ("transitions", "transitions.index", "transitions.values"))
    fault = "corrupt fasttag model: transition weights do not match the tags"
    if dense is not None:
        if index is not None or values is not None:
            raise ModelFormatError("corrupt fasttag model: transition weights given twice, dense and sparse")
        if dense.dtype.kind != "f" or dense.shape != (size,):
            raise ModelFormatError(fault)
        weights = dense
    else:
        if index is None or values is None or index.dtype.kind not in "iu" or index.ndim != 1 \
                or values.dtype.kind != "f" or values.shape != index.shape:
            raise ModelFormatError(fault)
        if len(index) and (index[0] < 0 or index[-1] >= size or not np.all(index[1:] > index[:-1])):
            raise ModelFormatError("corrupt fasttag model: transition indices are not ascending tag pairs")
        weights = values
    if len(weights) and (not np.all(np.isfinite(weights)) or np.abs(weights).max() > np.finfo(np.float32).max):
        raise ModelFormatError(fault)
    if dense is not None:
        return dense.astype(np.float64)
    trans = np.zeros(size)
    trans[index] = values
    return trans


def tag_fault(tag):
    """What is wrong with ``tag`` as a tag name, or None: a tag is written as
    one field of text, column, CoNLL-U and JSON output
    (:func:`fasttag.text.fieldcheck.field_fault`, no whitespace)."""
    return field_fault(tag)


def _str_list(value, name):
    """A header list of strings, or ModelFormatError naming the key."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ModelFormatError(f"corrupt fasttag model: {name} is not a list of strings")
    return value


def example_batches(examples, max_tokens):
    """(input, context) examples in lists of about ``max_tokens`` positions."""
    return parallel.batches(examples, max_tokens, size=_input_length)


def _input_length(example):
    return len(example[0])
