"""Tokenization and sentence splitting trained from the raw text of
CoNLL-U (:mod:`fasttag.text.goldtext`).  Models trained now use the
candidate engine (:mod:`fasttag.features.candidates`: the model decides
only at the boundaries worth deciding, in compiled code); model files of
the character tagger of earlier releases (every character labelled,
decoded under a transition mask: :mod:`fasttag.features.tokchars`) still
load and tokenize as before.  Labels, features and how the text is
rebuilt: docs/tasks.md.
"""
from __future__ import annotations

import re
import warnings
from collections import Counter, defaultdict
from typing import Iterable, Iterator

import numpy as np

from ..text import formats as ftio
from .. import parallel
from ..features.chars import attached_marks, codepoints
from ..features.tokchars import (ATTRIBUTES, MAX_CHUNK, MAX_PART, MAX_SHAPE, NEWLINE_CLASS,  # noqa: F401  (its names)
                                 SPACE_CLASS, TAGS, TOK_TEMPLATES, TOKEN_STARTS, TokFeaturizer, char_labels,
                                 char_tables, lower_table, tok_allowed, B, E, I, O, SB, SU, U, W, X)
from ..errors import InputError, ModelFormatError, shown
from ..text.conllu import tokens_lines
from ..text.fieldcheck import column_fault, field_fault
from ..text.goldtext import (GoldText, SurfaceToken, first_sentences, gold_flags,  # noqa: F401  (its names)
                             gold_text, labelled_pieces, piece_spans, read_conllu_text)
from ..text import output
from ..text import patterns
from ..text.metrics import score_tokenization
from ..text.rawtext import PIECE_CHARS, cuts, raw_sentences
from ..model.sequence import SequenceModel
from ..features.candidates import (CAND_CLASSES, CAND_TAGS, CAND_TEMPLATES, MAX_SUFFIX, CandidateFeaturizer,
                                   candidate_allowed, candidate_labels, learn_suffixes)
from ..model import registry
from .base import SequenceTask
from .filechecks import check_fixed_labels
from . import spaceless

__all__ = ["Tokenizer", "TokFeaturizer", "GoldText", "SurfaceToken", "read_conllu_text", "score_tokenization",
           "tok_allowed", "TAGS", "TOK_TEMPLATES"]

BATCH_CHARS = PIECE_CHARS    # the longest text decoded as one sequence
_SEVERAL = "tokenize_lines() takes several texts"
TRAIN_PIECE = 1_000           # training texts are cut into pieces of about this many characters

CANDIDATE_CLASSES = ((O, X), (SB, SU, B, U, I, E, W))      # whitespace, anything else
_ALLOWED = tok_allowed()

#: Names this module had, kept with a DeprecationWarning: old name -> (new name, its value).
_RENAMED = {"Token": ("fasttag.text.goldtext.SurfaceToken", SurfaceToken)}


def __getattr__(name):
    if name in _RENAMED:
        new, value = _RENAMED[name]
        warnings.warn(f"fasttag.tasks.tok.{name} is deprecated: use {new}", DeprecationWarning, stacklevel=2)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------- decoding

def _decode(labels):
    """(token starts, token ends, sentence-start flags, word split
    positions) of a label array."""
    labels = np.asarray(labels)
    n = len(labels)
    begin = np.isin(labels, TOKEN_STARTS)
    starts = np.flatnonzero(begin)
    # a token runs from its start over the following I, E and W
    stop = np.flatnonzero(~np.isin(labels, (I, E, W)))
    after = np.searchsorted(stop, starts + 1)
    ends = np.where(after < len(stop), stop[np.minimum(after, len(stop) - 1)], n)
    sent = np.isin(labels[starts], (SB, SU))
    if len(sent):
        sent[0] = True
    splits = np.flatnonzero(labels == W)
    return starts, ends, sent, splits


_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")     # str.splitlines' line ends


def _lines_end_sentences(text, starts, ends, sent):
    """Flag every token after a line break as a sentence start: a line is a
    paragraph, as the command line (a line at a time) reads it."""
    if len(starts) < 2:
        return
    breaks = np.fromiter((m.start() for m in _LINE_BREAK.finditer(text)), dtype=np.int64)
    if not len(breaks):
        return
    k = np.searchsorted(breaks, ends[:-1])          # the first break after each token ...
    sent[1:] |= (k < len(breaks)) & (breaks[np.minimum(k, len(breaks) - 1)] < starts[1:])   # ... before the next


_CONTINUED = {U: B, SU: SB, E: I, W: W, I: I, B: B, SB: SB}     # a token's label when more of it follows
_GOES_ON = {U: E, SU: E, B: I, SB: I}                            # a start label that now continues a token


def _attach_marks(text, labels):
    """``labels`` with no token starting at an attached mark after a token
    character (:func:`fasttag.features.chars.attached_marks`), whatever the
    model says of a mark it rarely saw in training."""
    labels = np.asarray(labels)
    if not len(labels):
        return labels
    cp = codepoints(text)[:len(labels)]
    at = np.flatnonzero(attached_marks(cp) & np.isin(labels, TOKEN_STARTS))
    at = at[at > 0]
    if not len(at):
        return labels
    labels = labels.copy()
    for p in at.tolist():
        if labels[p - 1] in _CONTINUED and labels[p] in _GOES_ON:    # not after whitespace
            labels[p - 1] = _CONTINUED[labels[p - 1]]
            labels[p] = _GOES_ON[labels[p]]
    return labels


# ---------------------------------------------------------------- the tokenizer

@registry.task("tok", title="tokenizer", help="tokenizer and sentence splitter from CoNLL-U",
               options=("templates", "tokenization"), defaults={"epochs": 20, "algorithm": "mira"})
class Tokenizer(SequenceTask):
    """A trained tokenizer and sentence splitter.  Create with
    :meth:`train` (CoNLL-U data; dev score ``mean_f1``, the mean of token
    and sentence F1) or :func:`fasttag.load`.  Safe to share by threads."""

    task = "tok"
    kind = "tokenizer"
    commands = ("tokenize",)
    featurizer = ("tokcands", 1)
    older_featurizers = (("tokchars", 1),)      # the character tagger of earlier releases
    primary = "mean_f1"

    def __init__(self, model, expansions=None, meta=None, protected=()):
        super().__init__(model, meta)
        self.candidates = isinstance(model.featurizer, CandidateFeaturizer)
        # the kinds of protected patterns (fasttag.text.patterns) this model keeps whole: learned at
        # training, stored in the model file (files without the field: none)
        self.protected = patterns.Protector(protected).kinds if self.candidates else ()
        # the candidate engine's hook for patterns kept whole: None, or a function of a text giving
        # (starts, ends, ...) arrays of spans inside which no boundary is decided
        self.protect = patterns.Protector(self.protected) if self.protected else None
        # scripts without spaces: the segmenter that decides inside their runs, or None (fasttag.tasks.spaceless)
        self.segmenter = None
        if not self.candidates:
            self.featurizer = self.older_featurizers[0]     # an old file saves as it was
        self.expansions = dict(expansions or {})
        self._lower = {}
        for form, words in sorted(self.expansions.items()):
            self._lower.setdefault(form.lower(), tuple(w.lower() for w in words))
        char_tables()

    # ------------------------------------------------------------ task hooks

    @classmethod
    def _read(cls, data, opts, what):
        """The one example of a CoNLL-U file (or of a :class:`GoldText` read already): its :class:`GoldText`."""
        gold = data if isinstance(data, GoldText) else read_conllu_text(data)
        if what == "training data" and opts.get("max_sentences") is not None:
            gold = first_sentences(gold, opts["max_sentences"])
        return [gold] if gold.tokens else []

    @classmethod
    def _build(cls, examples, opts):
        gold = examples[0]
        cat, _, _ = char_tables()
        _, _, splits = gold_flags(gold)
        suffixes = learn_suffixes(gold.text, np.flatnonzero(splits), cat)
        featurizer = CandidateFeaturizer(cat, lower_table(), suffixes)
        model = SequenceModel(CAND_TAGS, featurizer, opts["templates"] or CAND_TEMPLATES,
                              allowed=candidate_allowed(), tagdict_classes=CAND_CLASSES)
        # multiword tokens split where no candidate lies (Portuguese "ao" = "a" + "o") are expanded
        _, positions, _ = featurizer.candidates(gold.text)
        # the kinds of protected patterns the training data does not split are kept whole
        protected = patterns.kept_kinds(gold.text, [(t.start, t.end) for t in gold.tokens])
        tok = cls(model, _expansions(gold.tokens, set(positions.tolist())), protected=protected)
        tok.segmenter = spaceless.train_segmenter(featurizer, gold, opts.get("verbose"))
        tok.meta.update({"train_chars": len(gold.text), "train_sentences": len(gold.sentence_starts) - 1,
                         "text_mismatches": len(gold.mismatches)})
        return tok

    def _encode(self, examples, training=False):
        """Training texts in pieces with gold labels; others in their decoding
        pieces, with gold labels when they have tokens (for the temperature)."""
        if self.candidates:
            return self._encode_candidates(examples, training)
        out = []
        for gold in examples:
            if isinstance(gold, str):
                out.extend((gold[a:b], None, None) for a, b in cuts(gold))
            elif training:
                out.extend((text, None, lab) for text, lab in labelled_pieces(gold, char_labels(gold), TRAIN_PIECE))
            else:
                labels = char_labels(gold) if gold.tokens else np.zeros(len(gold.text), np.int32)
                out.extend((gold.text[a:b], None, labels[a:b]) for a, b in cuts(gold.text))
        return out

    def _decode(self, examples, ids):
        """Sentences of :class:`SurfaceToken` of each text, from its pieces' labels."""
        outputs, at = [], 0
        for example in examples:
            text = getattr(example, "text", example)
            pieces = cuts(text)
            n = len(pieces)
            if self.candidates:
                outputs.append(self._candidate_sentences(text, pieces, ids[at:at + n]))
            else:
                outputs.append(self._sentences(text, ids[at:at + n]))
            at += n
        if self.segmenter is not None:
            outputs = spaceless.resegment(self.segmenter, self.model.featurizer,
                                          [getattr(ex, "text", ex) for ex in examples], outputs,
                                          self._protected, self._expand)
        return outputs

    def _encode_candidates(self, examples, training):
        fz = self.model.featurizer
        out = []
        for gold in examples:
            if isinstance(gold, str):
                out.extend((gold[a:b], self._protected(gold[a:b]), None) for a, b in cuts(gold))
                continue
            flags = gold_flags(gold)
            if training:
                spans = piece_spans(gold, TRAIN_PIECE)
            else:
                spans = cuts(gold.text)
            for a, b in spans:
                piece = gold.text[a:b]
                protected = self._protected(piece)
                if gold.tokens:
                    _, pos, kinds = fz.candidates(piece, protected)
                    labels = candidate_labels(pos + a, kinds, *flags)
                else:
                    labels = None
                out.append((piece, protected, labels))
        return out

    def _protected(self, text):
        """The (starts, ends) of the spans of ``text`` kept whole, or None."""
        if self.protect is None:
            return None
        spans = self.protect(text)
        return spans[0], spans[1]

    def _arrays(self, text, pieces, pred):
        """(token starts, ends, sentence-start flags, word splits) of a text
        from its pieces' candidate labels."""
        fz = self.model.featurizer
        if len(pieces) == 1:
            return fz.assemble(text, pred[0], self._protected(text))
        parts = [fz.assemble(text[a:b], p, self._protected(text[a:b])) for (a, b), p in zip(pieces, pred)]
        return tuple(np.concatenate([part[i] + (a if i != 2 else 0) for part, (a, _) in zip(parts, pieces)])
                     for i in range(4))

    def _candidate_sentences(self, text, pieces, pred):
        starts, ends, sent, splits = self._arrays(text, pieces, pred)
        return self._tokens(text, starts, ends, sent, splits)

    def _score(self, examples, outputs, opts):
        if not examples:
            raise InputError("the evaluation data holds no sentences")
        gold_sents = [s for gold in examples for s in gold.sentences]
        system = [s for sents in outputs for s in sents]
        if len(examples) > 1:
            raise InputError("a tokenizer is evaluated on one CoNLL-U text at a time")
        out = score_tokenization(gold_sents, system)
        out["mean_f1"] = (out["token_f1"] + out["sentence_f1"]) / 2
        out["chars"] = sum(len(gold.text) for gold in examples)
        out["text_mismatches"] = sum(len(gold.mismatches) for gold in examples)
        return out

    def _records(self, source, json, n_threads):
        """Records of :meth:`tag_file`: each line a paragraph, a sentence of
        words a line; in JSON Lines an object per sentence.  Long lines in
        bounded memory (:mod:`fasttag.text.rawtext`)."""
        sentences = raw_sentences(ftio.read_raw_text(source), self, n_threads, blank_lines=not json, tokens=json)
        return (output.Record(s.words, line=s.line, offsets=s.offsets, multiword=s.multiword) for s in sentences), \
            {"style": "json" if json else "paragraphs"}

    # ------------------------------------------------------------ tokenizing

    def tokenize(self, text: str, offsets: bool = False) -> list[list]:
        """Split ``text`` (a str) into sentences of words, multiword tokens
        split ("don't" -> "do", "n't"); [] for blank text.  With
        ``offsets=True`` each word is ``(word, start, end)`` with
        ``text[start:end] == word``, except that the words of an expanded
        multiword token all carry the token's span."""
        if not isinstance(text, str):
            raise ftio.not_str("tokenize()", text, _SEVERAL)
        return self._words(self._predict([text])[0], offsets)

    def sentence_tokens(self, text: str) -> list[list[SurfaceToken]]:
        """The tokens of ``text``: a list of sentences, each a list of
        :class:`fasttag.text.goldtext.SurfaceToken` (``start``, ``end``,
        ``form``, ``words``); [] for blank text."""
        if not isinstance(text, str):
            raise ftio.not_str("sentence_tokens()", text, _SEVERAL)
        return self._predict([text])[0]

    def spans(self, text):
        """Deprecated: :meth:`sentence_tokens` (a span tagger's ``spans``
        are labelled spans of tokens, a tokenizer's were its tokens)."""
        warnings.warn("Tokenizer.spans() is deprecated: use Tokenizer.sentence_tokens()", DeprecationWarning,
                      stacklevel=2)
        if not isinstance(text, str):
            raise ftio.not_str("spans()", text, _SEVERAL)
        return self._predict([text])[0]

    def tokenize_lines(self, texts: Iterable[str], offsets: bool = False,
                       n_threads: int = 1, tokens: bool = False) -> Iterator[list[list]]:
        """Tokenize texts lazily, yielding what :meth:`tokenize` gives for each
        (with ``offsets`` as there): much faster for short texts.  ``n_threads``: batches on that many
        threads (0: every core), same output (:mod:`fasttag.parallel`).  With ``tokens=True``, what
        :meth:`sentence_tokens` gives instead: the surface tokens, each with its words."""
        it = ftio.iter_texts(texts, "tokenize_lines()", "tokenize()")
        if not isinstance(tokens, bool):
            raise TypeError(f"tokenize_lines(): tokens is True or False, not {tokens!r}")
        return self._lines(it, offsets, parallel.check_threads(n_threads), tokens)

    def _lines(self, it, offsets, n_threads=1, tokens=False):
        def tokenized(batch):
            if tokens:
                return self._predict(batch)
            if self.candidates and self.segmenter is None and all(len(t) <= PIECE_CHARS for t in batch):
                return self._fast_words(batch, offsets)
            return [self._words(sents, offsets) for sents in self._predict(batch)]
        batches = ftio.text_batches(it, "tokenize_lines(): text", BATCH_CHARS)
        for words in parallel.ordered_map(tokenized, batches, n_threads):
            yield from words

    def _fast_words(self, texts, offsets):
        """What :meth:`_words` gives of each text's tokens, from the decoded
        labels to the words in compiled code (texts of one piece, a model
        without expansions)."""
        fz = self.model.featurizer
        out = []
        forms = list(self.expansions)
        spans = self._batch_protected(texts)
        for ids, bounds, _ in self.model.predict_chunks(list(zip(texts, spans))):
            n = len(bounds) - 1
            chunk, texts = texts[:n], texts[n:]
            protected, spans = spans[:n], spans[n:]
            out.extend(fz.words(chunk, ids, bounds, offsets, forms, self._expanded, protected))
        return out

    def _batch_protected(self, texts):
        """Each text's protected (starts, ends), or None, from one call of
        :attr:`protect` on the whole batch joined by line breaks (a call
        per line would cost more than the tokenizing of most lines)."""
        out = [None] * len(texts)
        if self.protect is None or not texts:
            return out
        spans = self.protect("\n".join(texts))
        starts = np.asarray(spans[0], dtype=np.int64)
        if not len(starts):
            return out
        ends = np.asarray(spans[1], dtype=np.int64)
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        firsts = np.zeros(len(texts) + 1, dtype=np.int64)       # where each text starts in the joined text
        np.cumsum(lengths + 1, out=firsts[1:])
        which = np.searchsorted(firsts, starts, side="right") - 1
        at = np.searchsorted(which, np.arange(len(texts) + 1))
        for i in np.unique(which).tolist():
            a, b, base = at[i], at[i + 1], firsts[i]
            # a span of a custom hook that runs past its text's end is cut there
            out[i] = (starts[a:b] - base, np.minimum(ends[a:b], base + lengths[i]) - base)
        return out

    def _expanded(self, form, start, end, offsets):
        """The word items of a token that may be an expanded multiword token,
        as :meth:`_words` gives them."""
        words = self._expand(form)
        return self._words([[SurfaceToken(start, end, form, words)]], offsets)[0]

    @staticmethod
    def _words(sentences, offsets):
        if not offsets:
            return [[w for t in s for w in t.words] for s in sentences]
        out = []
        for s in sentences:
            words = []
            for t in s:
                if len(t.words) == 1:
                    words.append((t.form, t.start, t.end))
                elif "".join(t.words) == t.form:
                    at = t.start
                    for w in t.words:
                        words.append((w, at, at + len(w)))
                        at += len(w)
                else:
                    words.extend((w, t.start, t.end) for w in t.words)
            out.append(words)
        return out

    def _sentences(self, text, pred):
        """Sentences of :class:`SurfaceToken` from the labels of a text's pieces
        (each decoded alone: its first token begins a sentence)."""
        labels = np.concatenate([np.asarray(p) for p in pred]) if len(pred) != 1 else np.asarray(pred[0])
        starts, ends, sent, splits = _decode(_attach_marks(text, labels))
        if not len(starts):
            return []
        _lines_end_sentences(text, starts, ends, sent)
        return self._tokens(text, starts, ends, sent, splits)

    def _tokens(self, text, starts, ends, sent, splits):
        """Sentences of :class:`SurfaceToken` from token offsets, sentence-start
        flags and word split positions."""
        if not len(starts):
            return []
        expand = self._expand
        tokens = []
        if len(splits):
            token_of = np.searchsorted(starts, splits, side="right") - 1
            by_token = defaultdict(list)
            for t, p in zip(token_of.tolist(), splits.tolist()):
                by_token[t].append(p)
        else:
            by_token = {}
        for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
            form = text[a:b]
            cut = by_token.get(i)
            if cut:
                bounds = [a] + cut + [b]
                words = tuple(text[x:y] for x, y in zip(bounds[:-1], bounds[1:]))
            else:
                words = expand(form)
            tokens.append(SurfaceToken(a, b, form, words))
        firsts = np.flatnonzero(sent).tolist() + [len(tokens)]
        return [tokens[firsts[i]:firsts[i + 1]] for i in range(len(firsts) - 1)]

    def _expand(self, form):
        words = self.expansions.get(form)
        if words is not None:
            return words
        if self._lower:
            words = self._lower.get(form.lower())
            if words is not None:
                return _recase(form, words)
        return (form,)

    def to_conllu(self, text):
        """The tokenization of ``text`` as CoNLL-U, written as all CoNLL-U
        of raw text is (:func:`fasttag.text.conllu.tokens_lines`):
        ``# newdoc``, ``# newpar``, ``# sent_id``, ``# text``, multiword
        ranges, ``SpaceAfter=No`` or ``SpacesAfter``; columns but ID and
        FORM ``_``."""
        if not isinstance(text, str):
            raise ftio.not_str("to_conllu()", text, _SEVERAL)
        return "".join(line + "\n" for line in tokens_lines(text, self._predict([text])[0], {}))

    # ------------------------------------------------------------ storage

    def _task_parts(self):
        header = {"expansions": {form: list(words) for form, words in sorted(self.expansions.items())}}
        if self.candidates:
            header["featurizer"] = {"suffixes": [list(p) for p in self.model.featurizer.suffixes]}
            header["protected"] = list(self.protected)
        arrays = {}
        if self.segmenter is not None:
            header["segmenter"], arrays = spaceless.segmenter_parts(self.segmenter)
        return header, arrays

    @classmethod
    def _featurizer_from(cls, spec, header, arrays, meta):
        if spec["name"] == "tokchars":
            check_fixed_labels(header, arrays, "tokenizer", TAGS, CANDIDATE_CLASSES, _ALLOWED)
            return TokFeaturizer()
        check_fixed_labels(header, arrays, "tokenizer", CAND_TAGS, CAND_CLASSES, candidate_allowed())
        suffixes = spec.get("suffixes")
        if not isinstance(suffixes, list) or not all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and 0 < len(p[0]) <= MAX_SUFFIX
                and type(p[1]) is int and 0 <= p[1] < 0x110000 for p in suffixes):
            raise ModelFormatError("corrupt fasttag model: the tokenizer's multiword suffixes are malformed")
        cat, _, _ = char_tables()
        return CandidateFeaturizer(cat, lower_table(), [tuple(p) for p in suffixes])

    @classmethod
    def _load(cls, header, arrays, model, meta):
        expansions = header.get("expansions", {})
        if not isinstance(expansions, dict):
            raise ModelFormatError("corrupt fasttag model: the multiword expansions are malformed")
        if len(expansions) > MAX_EXPANSIONS:
            raise ModelFormatError(f"corrupt fasttag model: {len(expansions):,} multiword expansions, over the "
                                   f"{MAX_EXPANSIONS:,} a tokenizer may hold")
        for f, ws in expansions.items():
            fault = expansion_fault(f, ws)
            if fault:
                raise ModelFormatError(f"corrupt fasttag model: the multiword expansion of {shown(f)} {fault}")
        protected = header.get("protected", [])        # files before protected patterns: none
        if not isinstance(protected, list) or not all(isinstance(k, str) and k in patterns.KINDS
                                                      for k in protected) or len(set(protected)) != len(protected):
            raise ModelFormatError("corrupt fasttag model: the tokenizer's protected kinds are malformed")
        tok = cls(model, {f: tuple(ws) for f, ws in expansions.items()}, meta, protected)
        tok.segmenter = spaceless.stored_segmenter(header, arrays)
        if tok.segmenter is not None and not tok.candidates:
            raise ModelFormatError("corrupt fasttag model: a character-tagger tokenizer holds a segmenter")
        return tok


#: The most words a multiword token expands to (UD's hold two or three).
MAX_EXPANSION_WORDS = 16
#: The most characters an expansion's words hold beyond twice its form's
#: ("du" -> "de le": 4 of at most 20), so a text is never expanded into
#: more than a few times its length.
EXPANSION_SLACK = 16
#: The most multiword expansions a tokenizer holds (a treebank gives a few thousand).
MAX_EXPANSIONS = 200_000


def expansion_fault(form, words):
    """What is wrong with ``form`` -> ``words`` as a multiword expansion,
    or None: the rule training keeps its expansions to and loading checks
    a file's with.  The words are CoNLL-U FORMs
    (:func:`fasttag.text.fieldcheck.column_fault`), bounded in number and
    length (:data:`MAX_EXPANSION_WORDS`, :data:`EXPANSION_SLACK`)."""
    fault = field_fault(form)
    if fault:
        return f"has a form that {fault}"
    if not isinstance(words, (list, tuple)) or len(words) < 2:
        return "is not a list of two or more words"
    if len(words) > MAX_EXPANSION_WORDS:
        return f"has {len(words):,} words, over the {MAX_EXPANSION_WORDS} an expansion may have"
    for w in words:
        fault = column_fault(w, "FORM")
        if not fault and any(ch.isspace() and ch != " " for ch in w):
            fault = "holds whitespace other than a space"
        if fault:
            return f"has the word {shown(w)}, which {fault}"
    chars = sum(len(w) for w in words)
    limit = 2 * len(form) + EXPANSION_SLACK
    if chars > limit:
        return (f"holds {chars:,} characters, over the {limit} an expansion of its form may hold (twice the "
                f"form's plus {EXPANSION_SLACK})")
    return None


def _recase(form, words):
    if len(form) > 1 and form.isupper():
        return tuple(w.upper() for w in words)
    if form[:1].isupper():
        return (words[0][:1].upper() + words[0][1:],) + tuple(words[1:])
    return tuple(words)


def _expansions(tokens, candidates=None):
    """form -> most frequent words, of forms whose words do not concatenate
    to them (or, given the set of ``candidates`` positions, are split
    where no candidate lies) and that were multiword tokens in most
    occurrences."""
    multi = defaultdict(Counter)
    plain = Counter()
    plain_lower = Counter()
    multi_lower = Counter()
    concatenated = set()
    for t in tokens:
        if len(t.words) == 1:
            plain[t.form] += 1
            plain_lower[t.form.lower()] += 1
        elif any(ch.isspace() for ch in t.form):
            continue
        elif "".join(t.words) != t.form or (candidates is not None and not _splits_at(t, candidates)):
            multi[t.form][t.words] += 1
            multi_lower[t.form.lower()] += 1
            if "".join(t.words) == t.form:
                concatenated.add(t.form)
    out = {}
    for form, counts in multi.items():
        # a form whose words concatenate is expanded (and looked up lowercased) only where its
        # lowercase was mostly a multiword token too ("its" is rarely "it s", even if "ITS" was)
        if sum(counts.values()) > plain[form] and (
                form not in concatenated or multi_lower[form.lower()] > plain_lower[form.lower()]):
            words = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
            if expansion_fault(form, words) is None:        # else the form stays one word
                out[form] = words
    if len(out) > MAX_EXPANSIONS:                           # the most frequent kept
        out = dict(sorted(out.items(), key=lambda kv: (-sum(multi[kv[0]].values()), kv[0]))[:MAX_EXPANSIONS])
    return out


def _splits_at(token, candidates):
    """Whether every split of a concatenating multiword token is a candidate."""
    at = token.start
    for w in token.words[:-1]:
        at += len(w)
        if at not in candidates:
            return False
    return True
