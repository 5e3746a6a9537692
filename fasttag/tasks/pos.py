"""Part-of-speech tagging: one tag per token, from word features.

Examples are ``(words, tags)`` pairs read from CoNLL-U (UPOS or XPOS),
CoNLL column files or ``word<TAB>tag`` files, or given in Python.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable

import numpy as np

from ..text import formats as ftio
from ..model import inspection, modelfile
from ..text import metrics, output, rawtext, scripts
from ..text.formats import read_pairs
from ..text.metrics import foreign_tags
from .. import parallel
from ..errors import InputError, ModelFormatError
from ..features.clusters import (Clusters, as_clusters, cluster_arrays, cluster_spec,  # noqa: F401  (its names)
                                 stored_clusters)
from ..features.words import (CLUSTER_TEMPLATES, POS_TEMPLATES, WordFeaturizer, bad_token, hash_texts, one_sentence,
                        token_lists)
from ..model.sequence import SequenceModel
from ..model import registry
from .base import Examples, SequenceTask
from .rawtext_tokenizer import tokenizer_of
from .records import closed_after
from .tagsets import decode_tags, tag_set

MAX_COLUMNS = 64           # a stored column index beyond this is a corrupt file


def _auto_prune(n_tags):
    """Open tokens keep their 32 best tags when there are many tags."""
    return 0 if n_tags <= 64 else 32


def _auto_tagdict(n_tags):
    """Default ``tagdict_min_count``: off for small tag sets, where a tag
    dictionary costs accuracy; with more tags it speeds training."""
    if n_tags <= 20:
        return 0
    return 30 if n_tags <= 64 else 5


def conllu_tag_column(column):
    """"upos" or "xpos" for a CoNLL-U ``column`` given by name or field
    number; any other field is an InputError."""
    try:
        field = ftio.CONLLU_FIELDS[ftio.conllu_field(column)]
    except ValueError:
        field = None
    if field in ("UPOS", "XPOS"):
        return field.lower()
    named = f" ({field})" if field else ""
    raise InputError(f"option column={column!r}{named} is not a tag column: the CoNLL-U column a "
                     f"tagger reads and fills is upos or xpos")


@registry.task("pos", title="POS tagger", help="part-of-speech tagger from CoNLL-U or column files",
               options=("templates", "tag set", "tag dictionary", "columns", "clusters", "format", "words"))
class Tagger(SequenceTask):
    """A trained part-of-speech tagger: :meth:`train` or :func:`fasttag.load`
    (docs/python-api.md)."""

    task = "pos"
    kind = "tagger"
    commands = ("tag",)
    featurizer = ("word", 1)
    primary = "accuracy"
    local_features = True

    def __init__(self, model, meta=None, vocab=None):
        super().__init__(model, meta)
        self._vocab = _HashedVocab(np.zeros(0, np.uint64) if vocab is None else vocab)

    @property
    def tags(self):
        """The tag set, sorted."""
        return list(self.model.tags)

    # ------------------------------------------------------------ task hooks

    def _known_words(self, words):
        return self._vocab.contains(list(words)) if len(self._vocab) >= scripts.MIN_VOCABULARY else None

    @classmethod
    def _read(cls, data, opts, what):
        if not ftio.is_source(data):
            return read_pairs(data, opts.get("format"), opts.get("column"), opts.get("word_column", 0), what)
        column = opts.get("column")
        if opts.get("format") == "conllu" and column is not None:
            column = conllu_tag_column(column)          # refused before reading
        fmt, sentences = ftio.read_all(data, opts.get("format"), column, opts.get("word_column", 0))
        # the format as guessed from a file or a pipe: a model keeps it, and later input reads the same way
        found = {"format": fmt}
        if fmt == "conllu" and column is not None:
            found["column"] = conllu_tag_column(column)
        return Examples([(s.words, s.tags) for s in sentences if s.words], found)

    @classmethod
    def _build(cls, examples, opts):
        tags = tag_set(examples, "training data has no tag column")
        if len(tags) == 1:
            raise InputError(f"every tag of the training data is {tags[0]!r}{_column_text(opts)}: a tagger "
                             f"learns from two tags or more" + ("; the file has no tags in that column"
                                                               if tags[0] == "_" else "; is it the tag column?"))
        index = {t: i for i, t in enumerate(tags)}
        word_tags = defaultdict(Counter)
        try:
            for words, ts in examples:
                for w, t in zip(words, ts):
                    word_tags[w][index[t]] += 1
        except TypeError:                   # an unhashable token: named below
            pass
        bad = bad_token([w for w, _ in examples])
        if bad is not None:
            raise TypeError(f"training data: {bad}")
        min_count = opts["tagdict_min_count"]
        if min_count is None:
            min_count = _auto_tagdict(len(tags))
        classes, tagdict = {}, {}
        if min_count:
            for w, counter in word_tags.items():
                if sum(counter.values()) >= min_count:
                    tagdict[w] = classes.setdefault(tuple(sorted(counter)), len(classes))
        prune_k = opts["prune_k"]
        if prune_k is None:
            prune_k = _auto_prune(len(tags))
        clusters = None if opts["clusters"] is None else as_clusters(opts["clusters"], "option clusters")
        templates = opts["templates"] or (POS_TEMPLATES + (CLUSTER_TEMPLATES if clusters is not None else ()))
        model = SequenceModel(tags, WordFeaturizer(clusters=clusters), templates, tagdict=tagdict,
                              tagdict_classes=sorted(classes, key=classes.get), prune_k=prune_k,
                              decoder=opts["decoder"])
        meta = {"format": opts["format"], "column": opts["column"], "word_column": opts["word_column"]}
        if opts["format"] is None:
            meta["column"] = None          # Python pairs: no column was read
        return cls(model, meta, vocab=np.unique(hash_texts(list(word_tags))))

    def _learn_words(self, examples):
        words = np.unique(hash_texts([w for ws, _ in examples for w in ws]))
        self._vocab = _HashedVocab(np.union1d(self._vocab.hashes, words))

    def _encode(self, examples, training=False):
        index = self.model.tag_index
        return [(w, None, None if ts is None else [index.get(t, -1) for t in ts]) for w, ts in examples]

    def _gold_tags(self, examples):
        return {t for _, ts in examples if ts is not None for t in ts}

    def _decode(self, examples, ids):
        return decode_tags(self.model.tags, ids)

    def _reading_options(self, opts, given):
        out = dict(opts)
        for key in ("format", "column", "word_column"):
            if given.get(key) is None:
                out[key] = self.meta.get(key, 0 if key == "word_column" else None)
        return out

    def _check_gold(self, examples):
        if any(tags is None for _, tags in examples):
            raise InputError("the evaluation data has no tag column")
        foreign_tags(Counter(t for _, ts in examples for t in ts), self.model.tags)

    def _score(self, examples, outputs, opts):
        if not examples:
            raise InputError("the evaluation data holds no sentences")
        self._check_gold(examples)
        words = [w for ws, _ in examples for w in ws]
        if opts.get("words") is not None:
            vocab = opts["words"]
            if ftio.is_source(vocab):
                vocab = ftio.read_word_list(vocab)
            known = np.fromiter((w in vocab for w in words), dtype=bool, count=len(words))
        else:
            known = self._vocab.contains(words)
        gold = [t for _, t in examples]
        unannotated = 0
        if "_" not in self.model.tag_index:    # CoNLL-U's "_": a token without a tag, not a wrong one
            keep = np.fromiter((t != "_" for ts in gold for t in ts), dtype=bool, count=len(words))
            unannotated = int(len(keep) - keep.sum())
            if unannotated:
                if not keep.any():
                    raise InputError("the evaluation data has no tags: every gold tag is '_'")
                sentences = np.repeat(np.arange(len(gold)), [len(ts) for ts in gold])[keep]
                gold = _regroup([t for ts in gold for t in ts], keep, sentences, len(gold))
                outputs = _regroup([t for ts in outputs for t in ts], keep, sentences, len(outputs))
                known = known[keep]
        result = metrics.score_tagging(gold, outputs, known=known)
        result["unannotated_tokens"] = unannotated
        return result

    # ------------------------------------------------------------ tagging

    def tag(self, tokens: list[str], n_best: int | None = None) -> list:
        """Tags of one sentence, ``tokens`` (a list of token strings).  A str
        is a TypeError, not a sentence of characters.  With ``n_best=k``:
        the k best tag sequences as ``(tags, score)`` pairs, best first."""
        return self.tag_sents([one_sentence(tokens, "tag")], n_best=n_best)[0]

    def tag_sents(self, sentences: Iterable[list[str]], n_best: int | None = None, n_threads: int = 1) -> list:
        """Tags of many sentences (lists of token strings), much faster than
        :meth:`tag` in a loop; thread-safe.  With ``n_best=k``: per sentence
        the k best ``(tags, score)`` pairs, best first.  ``n_threads``: tag
        on that many threads (0: every core), with the same output as one."""
        sents = token_lists(sentences)
        n_threads = parallel.check_threads(n_threads)
        try:
            self.script_check.sampled(" ".join(s) for s in sents)
            pairs = [(s, None) for s in sents]         # an example is its own model input
            return self._predict(pairs, n_threads, n_best, inputs=pairs)
        except TypeError:
            # only new word types are checked while tagging; find the culprit
            err = bad_token(sents)
            if err is None:
                raise
            raise err from None

    def marginals(self, sentences):
        """Per sentence an ``n x T`` array: the probability of each tag
        (columns in the order of :attr:`tags`) at each token, by
        forward-backward with the model's calibrated :attr:`temperature`."""
        return self._marginals([(s, None) for s in token_lists(sentences)])

    def explain(self, tokens, top=5):
        """Why each token of one sentence got its tag: per token a dict with
        the tag, the runner-up, their probabilities and the ``top`` features
        favouring the tag (:func:`fasttag.model.inspection.explain`)."""
        return inspection.explain(self.model, list(one_sentence(tokens, "explain")), None, self.temperature, top)

    def tag_text(self, text, tokenizer=None):
        """Tag raw ``text``: a list of sentences, each a list of
        :class:`fasttag.text.rawtext.Token` ``(text, tag, start, end)``, cut
        by ``tokenizer`` (a model or its path; default: bundled English)."""
        return rawtext.tag_text(self.tag_sents, text, tokenizer_of(tokenizer))

    def output_column(self, column=None):
        """The CoNLL-U column :meth:`tag_file` fills: ``column`` ("upos",
        "xpos" or field 3 or 4), else the one trained on, else UPOS."""
        if column is None:
            trained = self.meta.get("column")
            if self.meta.get("format") == "conllu" and trained is not None:
                try:
                    return conllu_tag_column(trained)
                except InputError:                  # a model from before columns were checked
                    pass
            return "upos"
        return conllu_tag_column(column)

    def _records(self, source, json, n_threads, format=None, column=None, tokenizer=None, nbest=None):
        """The records of :meth:`tag_file`.  ``format``: None reads CoNLL-U
        when unmistakable, else raw text cut by ``tokenizer``; "text":
        pretokenized, a sentence a line; "conllu" or "conll"."""
        if format not in (None, "raw", "text", "conllu", "conll"):
            raise InputError(f"unknown input format {format!r}: raw, text, conllu or conll")
        name, fmt, lines, close = ftio.open_tagging_input(source, format)
        try:
            if fmt in ("conllu", "conll") and tokenizer is not None:
                raise InputError(f"option tokenizer applies to raw text, not to {fmt.upper()} input", name)
            if fmt == "conllu":
                column = self.output_column(column)
            elif column is not None:
                raise InputError(f"option column {column} applies to CoNLL-U input only")
        except BaseException:
            close()
            raise

        def make(sent, result, line=None):
            tags, best = (result, None) if nbest is None else (result[0][0], output.alternatives(result))
            return output.Record(sent.words, tags, line or sent.line, getattr(sent, "offsets", None), nbest=best,
                                 sentence=sent, ends_line=getattr(sent, "ends_line", True),
                                 multiword=getattr(sent, "multiword", None))
        if fmt in ("conllu", "conll"):
            sentences = ftio.parse_lines(lines, name, fmt, column if fmt == "conllu" else None,
                                         self.meta.get("word_column", 0) if fmt == "conll" else 0, tags=False)
            records = self._tagged(ftio.batches(sentences),
                                   lambda batch: self.tag_sents([s.words for s in batch], n_best=nbest),
                                   lambda sent, result: make(sent, result, sent.start_line), n_threads)
        else:
            records = self._text_records(lines, fmt, tokenizer, json, nbest, n_threads, make, self.tag_sents)
        return closed_after(records, close), {"style": "json" if json else output.text_style(fmt) if fmt in ("raw", "text") else fmt,
                                          "column": column}

    # ------------------------------------------------------------ storage

    def _task_parts(self):
        return ({"featurizer": {"n_columns": 0, **cluster_spec(self.model.featurizer)}},
                {"vocab": self._vocab.hashes, **cluster_arrays(self.model.featurizer)})

    @classmethod
    def _featurizer_from(cls, spec, header, arrays, meta):
        return WordFeaturizer(clusters=stored_clusters(spec, arrays))

    @classmethod
    def _load(cls, header, arrays, model, meta):
        vocab = arrays.get("vocab", np.zeros(0, np.uint64))
        if vocab.ndim != 1 or vocab.dtype != np.uint64 or np.any(vocab[1:] <= vocab[:-1]):
            raise ModelFormatError("corrupt fasttag model: the vocabulary is not sorted word hashes")
        return cls(model, _checked_meta(meta), vocab=vocab)


def _checked_meta(meta):
    """The stored reading options, checked: ``evaluate`` passes them to the
    readers as its defaults."""
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


def _column_text(opts):
    """Which column the tags were read from, for messages: `` (column
    xpos, option column)``; empty for Python pairs."""
    fmt, column = opts.get("format"), opts.get("column")
    if fmt == "conllu":
        return f" (column {conllu_tag_column('upos' if column is None else column)}, option column)"
    if fmt == "conll":
        return f" (column {'the last' if column is None else column}, option column)"
    return ""


def _regroup(tags, keep, sentences, n):
    """The ``tags`` (flat) where ``keep``, back in their ``n`` sentences
    (``sentences``: the sentence of each kept tag)."""
    out = [[] for _ in range(n)]
    for t, i in zip((t for t, k in zip(tags, keep.tolist()) if k), sentences.tolist()):
        out[i].append(t)
    return out


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
