"""fasttag models as spaCy v3 pipeline components, registered through
entry points: ``fasttag_tagger``, ``fasttag_ner``, ``fasttag_spans``,
``fasttag_ud`` (a UD pipeline's columns and dependency tree), and the
``fasttag.tokenizer.v1`` and ``fasttag.zh_segmenter.v1`` tokenizers, which
set sentence starts.  Serialization carries the model file.
"""
from pathlib import Path
from typing import Optional

import numpy as np
from spacy.attrs import DEP, HEAD
from spacy.errors import Errors
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.scorer import Scorer
from spacy.tokens import Doc, Span
from spacy.util import registry

from .errors import InputError
from .store import load as _load
from .store import loads as _loads

MODEL_FILE = "model.ftm"
UPOS = frozenset("ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X".split())
#: spaCy's label of a sentence's root (its parsers' and ``spacy convert``'s for UD's "root").
ROOT_LABEL = "ROOT"
#: The label of a whitespace token, attached to a word of its sentence (UD's unspecified relation).
SPACE_LABEL = "dep"
#: spaCy's own noun chunk iterators that read other labels than UD's (English's ClearNLP labels,
#: German's TIGER ones, Persian's copy of English's): a UD parse's docs get :func:`ud_noun_chunks` instead.
OTHER_LABEL_ITERATORS = frozenset({"spacy.lang.en.syntax_iterators", "spacy.lang.de.syntax_iterators",
                                   "spacy.lang.fa.syntax_iterators"})


class _Serialized:
    """A fasttag model loaded on first use from ``source``, with spaCy's
    serialization methods over the model file."""

    def __init__(self, source):
        self._source = source
        self._model = None

    def _loaded(self):
        if self._model is None:
            self._set_model(_load(self._source))
        return self._model

    def _set_model(self, model):
        self._model = model

    def to_bytes(self, *, exclude=tuple()):
        model = self._current()
        return b"" if model is None else model.to_bytes()

    def from_bytes(self, bytes_data, *, exclude=tuple()):
        if bytes_data:                          # b"": an untrained component, saved before initialize
            self._set_model(_loads(bytes_data))
        return self

    def to_disk(self, path, *, exclude=tuple()):
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        model = self._current()
        if model is not None:
            model.save(path / MODEL_FILE)

    def from_disk(self, path, *, exclude=tuple()):
        file = Path(path) / MODEL_FILE
        if file.exists() or not self._untrained_allowed():
            self._set_model(_load(str(file)))
        return self

    def _untrained_allowed(self):
        """Whether the component may have no model yet (spaCy saves before ``initialize``)."""
        return False


class _Component(_Serialized, Pipe):
    """What the fasttag components share."""

    kind = None           # the model class the component needs
    trainable_name = None

    def __init__(self, vocab, name, model, batch_size):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"the {name!r} component: batch_size must be a positive int, not {batch_size!r}")
        if not (model is None or isinstance(model, str)):
            raise ValueError(f"the {name!r} component: model must be a bundled name or a model path, "
                             f"not {model!r}")
        super().__init__(model)
        self.vocab = vocab
        self.name = name
        self.batch_size = batch_size

    # ------------------------------------------------------------ the model

    @property
    def fasttag_model(self):
        """The fasttag model (loaded on first use)."""
        if self._model is None and self._source is None:
            raise ValueError(f"the {self.name!r} component has no model: give config 'model' "
                             f"or call nlp.initialize() with training examples")
        try:
            return self._loaded()
        except OSError as exc:
            raise ValueError(f"the {self.name!r} component: config model {self._source!r} is neither a "
                             f"bundled model nor a model file ({exc.strerror or exc})") from None

    @property
    def labels(self):
        """The labels the component predicts (none before it has a model).
        spaCy asks while it loads a saved pipeline, before ``from_disk``
        gives the saved model: a config path that is gone by then (the
        model travels in the folder) has no labels yet, not an error."""
        if self._untrained_allowed():
            return ()
        if self._model is None:
            try:
                self._loaded()
            except OSError:
                return ()
        return tuple(self._labels(self.fasttag_model))

    def _current(self):
        """The model to save: None for an untrained component."""
        return None if self._untrained_allowed() else self.fasttag_model

    def _untrained_allowed(self):
        return self._model is None and self._source is None

    def _set_model(self, model):
        if not isinstance(model, self.kind):
            raise InputError(f"the {self.name!r} component needs a {self.kind.__name__} model, "
                             f"not a {type(model).__name__}")
        self._check(model)
        self._model = model

    def _check(self, model):
        """Hook: refuse a model the component cannot run."""

    # ------------------------------------------------------------ prediction

    def __call__(self, doc):
        self._annotate([doc])
        return doc

    @staticmethod
    def _words(doc):
        """(positions, texts) of the tokens the model reads: all but whitespace tokens."""
        at = [t.i for t in doc if not t.is_space]
        return at, [doc[i].text for i in at]

    def pipe(self, stream, *, batch_size=None):
        size = batch_size or self.batch_size
        batch = []
        for doc in stream:
            batch.append(doc)
            if len(batch) >= size:
                self._annotate(batch)
                yield from batch
                batch = []
        if batch:
            self._annotate(batch)
            yield from batch

    # ------------------------------------------------------------ training

    def initialize(self, get_examples=None, *, nlp=None):
        """Build an untrained model from the examples when the component has
        none (a given model is kept: training then fine-tunes it)."""
        if self._source is None and self._model is None:
            if get_examples is None:
                raise ValueError(f"the {self.name!r} component needs training examples to initialize")
            pairs = [p for p in (self._gold(eg.reference) for eg in get_examples()) if p is not None]
            if not pairs:
                raise ValueError(f"the {self.name!r} component: no training example annotates what it predicts")
            self._set_model(self._untrained(pairs))

    def update(self, examples, *, drop=0.0, sgd=None, losses=None):
        """One perceptron pass over the batch; the loss is the number of
        tokens that were tagged wrongly before their update."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        pairs = [p for p in (self._gold(eg.reference) for eg in examples) if p is not None and p[0]]
        if pairs:
            wrong = self.fasttag_model.update(pairs)
            losses[self.name] += wrong * sum(len(w) for w, _ in pairs)
        return losses


class FasttagTagger(_Component):
    """Sets ``token.pos_`` (a model whose tags are all Universal POS
    tags) or ``token.tag_`` (any other), or the attribute ``attr`` names."""

    def __init__(self, vocab, name, model, attr, batch_size):
        if attr not in (None, "pos", "tag"):
            raise ValueError(f"the {name!r} component: attr must be 'pos', 'tag' or None, not {attr!r}")
        super().__init__(vocab, name, model, batch_size)
        from .tasks.pos import Tagger
        self.kind = Tagger
        self._attr = attr

    @property
    def attr(self):
        if self._attr is not None:
            return self._attr
        if self._model is None and self._source is None:
            return "tag"
        model = self.fasttag_model
        if model.meta.get("spacy_attr") in ("pos", "tag"):     # what initialize chose, kept in the model file
            return model.meta["spacy_attr"]
        return "pos" if set(model.tags) <= UPOS else "tag"

    @staticmethod
    def _labels(model):
        return model.tags

    def initialize(self, get_examples=None, *, nlp=None):
        """As the other components; an untrained tagger with no ``attr``
        learns the attribute its examples annotate and keeps to it."""
        if self._attr is None and self._source is None and self._model is None and get_examples is not None:
            docs = [eg.reference for eg in get_examples()]
            pos = any(t.pos_ for d in docs for t in d)
            tag = any(t.tag_ for d in docs for t in d)
            self._attr = "pos" if pos and not tag else "tag"
            super().initialize(get_examples, nlp=nlp)
            self._model.meta["spacy_attr"] = self._attr      # saved with the model: spacy.load keeps it
            return
        super().initialize(get_examples, nlp=nlp)

    def _annotate(self, docs):
        attr = self.attr + "_"
        words = [self._words(doc) for doc in docs]
        tags = self.fasttag_model.tag_sents([w for _, w in words])
        for doc, (at, _), ts in zip(docs, words, tags):
            for i, tag in zip(at, ts):
                try:
                    setattr(doc[i], attr, tag)
                except (ValueError, KeyError):
                    raise ValueError(f"{tag!r} is not a Universal POS tag: use the component with "
                                     f"config attr='tag'") from None
            if len(at) < len(doc):
                for token in doc:
                    if token.is_space:                  # spaCy's own marks for whitespace
                        setattr(token, attr, "SPACE" if attr == "pos_" else "_SP")

    def _gold(self, doc):
        """(words, tags) of a reference doc; None when a token lacks the
        tag (not annotated: no gold to learn from, as spaCy's tagger skips it)."""
        attr = self.attr + "_"
        at, words = self._words(doc)
        tags = [getattr(doc[i], attr) for i in at]
        return None if not all(tags) else (words, tags)

    def _untrained(self, pairs):
        return self.kind.untrained([(w, t) for w, t in pairs if w])

    def score(self, examples, **kwargs):
        return Scorer.score_token_attr(examples, self.attr, **kwargs)


class FasttagSpans(_Component):
    """Sets ``doc.ents`` (or ``doc.spans[spans_key]``) from a span-tagger
    model (named entities, chunks)."""

    def __init__(self, vocab, name, model, spans_key, batch_size):
        super().__init__(vocab, name, model, batch_size)
        from .tasks.spans import SpanTagger
        self.kind = SpanTagger
        self.spans_key = spans_key

    @staticmethod
    def _labels(model):
        return model.types

    def _check(self, model):
        if model.feature_columns:
            raise InputError("this span model reads feature columns (POS, chunk tags) that spaCy "
                             "does not give it: train one on words alone (feature_columns=[])")

    def _annotate(self, docs):
        from .text import schemes
        model = self.fasttag_model
        words = [self._words(doc) for doc in docs]
        tags = model.tag_sents([w for _, w in words])
        for doc, (at, _), ts in zip(docs, words, tags):
            spans = [Span(doc, at[start], at[end - 1] + 1, label=typ)
                     for typ, start, end in schemes.spans(ts, model.scheme)]
            if self.spans_key:
                doc.spans[self.spans_key] = spans
            else:
                # entities set before (an entity ruler) are kept, as spaCy's own recognizer keeps them
                # and every other token is outside an entity, as spaCy's recognizer marks it
                taken = {i for e in doc.ents for i in range(e.start, e.end)}
                doc.set_ents(list(doc.ents) + [s for s in spans if taken.isdisjoint(range(s.start, s.end))],
                             default="outside")

    def _gold(self, doc):
        """(words, IOB2 tags) of a reference doc; None when it does not
        annotate the spans.  Overlapping spans are an error."""
        if self.spans_key:
            if self.spans_key not in doc.spans:
                return None
            spans = sorted(doc.spans[self.spans_key], key=lambda s: (s.start, s.end))
            for a, b in zip(spans, spans[1:]):
                if b.start < a.end:
                    raise ValueError(f"the {self.name!r} component tags one span per token: spans "
                                     f"{a.text!r} and {b.text!r} of doc.spans[{self.spans_key!r}] overlap")
        else:
            if any(t.ent_iob == 0 for t in doc if not t.is_space):
                return None
            spans = doc.ents
        at, words = self._words(doc)
        index = {i: k for k, i in enumerate(at)}
        tags = ["O"] * len(at)
        for span in spans:
            inside = [index[i] for i in range(span.start, span.end) if i in index]
            for k, j in enumerate(inside):
                tags[j] = ("B-" if k == 0 else "I-") + span.label_
        return words, tags

    def _untrained(self, pairs):
        return self.kind.untrained([(w, t) for w, t in pairs if w], scheme="iob2")

    def score(self, examples, **kwargs):
        if self.spans_key:
            return Scorer.score_spans(examples, f"spans_{self.spans_key}",
                                      getter=lambda doc, key: doc.spans.get(self.spans_key, []), **kwargs)
        return Scorer.score_spans(examples, "ents", **kwargs)


@Language.factory("fasttag_tagger", default_config={"model": "en", "attr": None, "batch_size": 1000},
                  assigns=["token.pos", "token.tag"], default_score_weights={"pos_acc": 0.5, "tag_acc": 0.5})
def make_tagger(nlp, name, model: Optional[str], attr: Optional[str], batch_size: int):
    """A fasttag POS tagger: ``model`` a bundled name or path (None:
    untrained, built by ``initialize``); ``attr`` "pos" or "tag" (default:
    "pos" for a model trained on UPOS)."""
    return FasttagTagger(nlp.vocab, name, model, attr, batch_size)


@Language.factory("fasttag_ner", default_config={"model": "en-ner", "spans_key": None, "batch_size": 1000},
                  assigns=["doc.ents"], default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0})
def make_spans(nlp, name, model: Optional[str], spans_key: Optional[str], batch_size: int):
    """A fasttag span tagger: ``model`` a bundled name or the path of a model
    trained on words alone (None: untrained, built by ``initialize``);
    ``spans_key``: set ``doc.spans[key]`` instead of ``doc.ents``."""
    return FasttagSpans(nlp.vocab, name, model, spans_key, batch_size)


@Language.factory("fasttag_spans", default_config={"model": "en-ner", "spans_key": "sc", "batch_size": 1000},
                  assigns=["doc.spans"],
                  default_score_weights={"spans_sc_f": 1.0, "spans_sc_p": 0.0, "spans_sc_r": 0.0})
def make_span_group(nlp, name, model: Optional[str], spans_key: Optional[str], batch_size: int):
    """``fasttag_ner`` setting ``doc.spans[spans_key]`` (default "sc"); with
    another key, set ``[training.score_weights]`` to ``spans_KEY_f``."""
    if not spans_key:
        raise ValueError("fasttag_spans sets doc.spans[spans_key]: give a spans_key (fasttag_ner sets doc.ents)")
    return FasttagSpans(nlp.vocab, name, model, spans_key, batch_size)


class ChineseSegmenter(_Serialized):
    """A spaCy tokenizer that segments Chinese with a fasttag segmenter.
    Whitespace in the text is kept as spaCy keeps it: one space after a
    word is the word's trailing space, other whitespace its own token."""

    def __init__(self, vocab, model="zh"):
        super().__init__(model)
        self.vocab = vocab

    @property
    def segmenter(self):
        return self._loaded()

    def _current(self):
        return self.segmenter

    def __call__(self, text):
        starts = []
        words, spaces = _align(text, self.segmenter.segment_lines(text.split("\n")) if text else [], starts)
        return Doc(self.vocab, words=words, spaces=spaces, sent_starts=starts)

    def pipe(self, texts, batch_size=1000):
        for text in texts:
            yield self(text)


#: What ends a sentence inside a line of Chinese or Japanese, and what may close it after that.
_FINAL = "。！？!?…｡"
_CLOSERS = "”’」』）)】〕》〉\"'"


def _align(text, lines_words, starts=None):
    """spaCy's (words, spaces) of ``text`` given the words of each of its
    lines (split at "\\n"), so that the Doc's text is ``text`` exactly;
    ``starts`` (a list) gets the sentence starts: each line opens a
    sentence, and so does the word after a sentence-final mark (。！？!?…,
    with the closing quotes and brackets that follow it)."""
    words, spaces = [], []
    starts = [] if starts is None else starts
    pos = 0
    ended = False           # the words since the last one began with a sentence-final mark

    def gap(a, b):
        n = len(words)
        _gap(text, a, b, words, spaces)
        starts.extend([not starts] * (len(words) - n))
    for line_no, line_words in enumerate(lines_words):
        if line_no:
            gap(pos, pos + 1)      # the newline
            pos += 1
        for k, w in enumerate(line_words):
            at = text.find(w, pos)
            if at < 0 or text[pos:at].strip():
                raise ValueError(f"the segmenter's word {w!r} is not in the text at offset {pos}")
            gap(pos, at)
            words.append(w)
            spaces.append(False)
            closing = ended and w.strip(_CLOSERS) == ""
            starts.append(k == 0 or not starts or ended and not closing)
            ended = w.strip(_FINAL) == "" or closing
            pos = at + len(w)
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        gap(pos, end)
        pos = end
    return words, spaces


def _gap(text, start, end, words, spaces):
    """Whitespace text[start:end] between words, in spaCy's convention."""
    gap = text[start:end]
    if not gap:
        return
    if words and not spaces[-1] and gap[0] == " ":
        spaces[-1] = True
        gap = gap[1:]
    if gap:
        words.append(gap)
        spaces.append(False)


@registry.tokenizers("fasttag.zh_segmenter.v1")
def create_zh_segmenter(model: str = "zh"):
    """``[nlp.tokenizer] @tokenizers = "fasttag.zh_segmenter.v1"``: a
    fasttag segmenter (``model``: bundled name or path) as the tokenizer."""
    def make(nlp):
        return ChineseSegmenter(nlp.vocab, model)
    return make


class FasttagTokenizer(_Serialized):
    """A spaCy tokenizer that tokenizes and splits sentences with a fasttag
    tokenizer or the tokenizer of a UD pipeline (``model``: a bundled name
    or a path).  ``doc.sents`` is set; a multiword token whose words spell
    it ("don't": "do" "n't") is its words, another ("das": "de" "as") one
    token; whitespace is kept as spaCy keeps it."""

    def __init__(self, vocab, model="en-tok"):
        super().__init__(model)
        self.vocab = vocab

    def _set_model(self, model):
        tokenizer = getattr(model, "tokenizer", model) if getattr(model, "kind", None) == "pipeline" else model
        if getattr(tokenizer, "kind", None) != "tokenizer":
            raise InputError(f"the fasttag tokenizer needs a tokenizer model or a UD pipeline with one, not a "
                             f"{type(model).__name__}")
        self._model = model
        self.tokenizer = tokenizer

    @property
    def model(self):
        return self._loaded()

    def _current(self):
        return self.model

    def __call__(self, text):
        self._loaded()
        pieces = []
        for sentence in self.tokenizer.sentence_tokens(text) if text else []:
            first = True
            for t in sentence:
                if len(t.words) > 1 and "".join(t.words) == t.form:
                    at = t.start
                    for w in t.words:
                        pieces.append((at, at + len(w), first))
                        at += len(w)
                        first = False
                else:
                    pieces.append((t.start, t.end, first))
                    first = False
        words, spaces, starts = [], [], []
        at = 0
        for a, b, begins in pieces:
            n = len(words)
            _gap(text, at, a, words, spaces)
            starts += [False] * (len(words) - n)
            words.append(text[a:b])
            spaces.append(False)
            starts.append(begins)
            at = b
        n = len(words)
        _gap(text, at, len(text), words, spaces)
        starts += [False] * (len(words) - n)
        if starts:
            starts[0] = True
        return Doc(self.vocab, words=words, spaces=spaces, sent_starts=starts)

    def pipe(self, texts, batch_size=1000):
        for text in texts:
            yield self(text)


@registry.tokenizers("fasttag.tokenizer.v1")
def create_tokenizer(model: str = "en-tok"):
    """``[nlp.tokenizer] @tokenizers = "fasttag.tokenizer.v1"``: a fasttag
    tokenizer and sentence splitter (``model``: a tokenizer or a UD
    pipeline, bundled name or path) as the tokenizer."""
    def make(nlp):
        return FasttagTokenizer(nlp.vocab, model)
    return make


class FasttagPipeline(_Component):
    """Sets ``token.pos_`` (UPOS), ``token.tag_`` (XPOS), ``token.morph``
    (FEATS) and ``token.lemma_`` from a fasttag UD pipeline, sentence by
    sentence where the doc has sentences; where the pipeline has a parser
    also the tree: ``token.head`` and ``token.dep_`` (UD's labels, the
    root's "ROOT" as spaCy's parsers and ``spacy convert`` name it, the
    root its own head), one tree per sentence, so that ``doc.sents`` keeps
    the sentences the doc had (a doc without sentence starts is parsed as
    one sentence: use the ``fasttag.tokenizer.v1`` tokenizer, or a
    sentencizer before this component).  A whitespace token hangs from the
    nearest word before it in its sentence (else after it) as "dep".
    ``doc.noun_chunks`` works where spaCy's iterator for the language reads
    UD labels; for English, German and Persian, whose iterators read other
    labels, and languages without one, the parsed docs use
    :func:`ud_noun_chunks` (``Doc.to_bytes`` does not keep that choice).
    Train the pipeline with ``fasttag train ud``: it does not learn inside
    spaCy."""

    def __init__(self, vocab, name, model, batch_size):
        super().__init__(vocab, name, model, batch_size)
        from .pipeline import Pipeline
        self.kind = Pipeline

    @staticmethod
    def _labels(model):
        return model.columns

    def _annotate(self, docs):
        model = self.fasttag_model
        sentences = []          # (doc, its tokens' span, the positions of its words)
        for doc in docs:
            for sent in list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]:
                sentences.append((doc, sent, [t.i for t in sent if not t.is_space]))
        worded = [(doc, at) for doc, _, at in sentences if at]
        predicted = model.tag_words([[doc[i].text for i in at] for doc, at in worded])
        for k, (doc, at) in enumerate(worded):
            for column, values in predicted.items():
                for i, value in zip(at, values[k]):
                    token = doc[i]
                    if column == "upos":
                        try:
                            token.pos_ = value
                        except (ValueError, KeyError):
                            pass            # not a Universal POS tag: left unset
                    elif column == "xpos":
                        token.tag_ = value
                    elif column == "feats":
                        token.set_morph(None if value == "_" else value)
                    elif column == "lemma":
                        token.lemma_ = value
        for doc in docs:
            for token in doc:
                if token.is_space:                  # spaCy's own marks for whitespace
                    if "upos" in predicted:
                        token.pos_ = "SPACE"
                    if "xpos" in predicted:
                        token.tag_ = "_SP"
        if "head" in predicted and "deprel" in predicted:
            _set_trees(docs, sentences, iter(zip(predicted["head"], predicted["deprel"])))

    def initialize(self, get_examples=None, *, nlp=None):
        if self._source is None and self._model is None:
            raise ValueError(f"the {self.name!r} component needs a trained UD pipeline (config 'model'): "
                             f"train one with 'fasttag train ud'")

    def update(self, examples, *, drop=0.0, sgd=None, losses=None):
        raise ValueError(f"the {self.name!r} component does not learn inside spaCy: train its UD pipeline "
                         f"with 'fasttag train ud'")


def _set_trees(docs, sentences, parses):
    """Set each doc's tree: ``sentences`` are (doc, span, word positions) as
    the component cut them, ``parses`` the (heads, deprels) of those with
    words, in order.  Heads and labels go in at once, so that spaCy derives
    children, edges and sentence starts from whole trees."""
    trees = {}
    for doc, sent, at in sentences:
        if not len(sent):
            continue
        heads, labels = trees.setdefault(id(doc), (doc, list(range(len(doc))), [SPACE_LABEL] * len(doc)))[1:]
        if at:
            word_heads, deprels = next(parses)
            for i, head, deprel in zip(at, word_heads, deprels):
                head = int(head)
                heads[i] = i if head == 0 else at[head - 1]
                labels[i] = ROOT_LABEL if head == 0 else deprel
        else:                   # whitespace alone: its first token is the root
            labels[sent.start] = ROOT_LABEL
        k = 0
        for token in sent:
            if token.is_space:
                while k + 1 < len(at) and at[k + 1] < token.i:
                    k += 1
                heads[token.i] = at[k] if at else sent.start
    for doc, heads, labels in trees.values():
        strings = doc.vocab.strings
        array = np.empty((len(doc), 2), dtype=np.uint64)
        array[:, 0] = (np.asarray(heads, dtype=np.int64) - np.arange(len(doc), dtype=np.int64)).view(np.uint64)
        array[:, 1] = [strings.add(label) for label in labels]
        doc.from_array([HEAD, DEP], array)
        if doc.noun_chunks_iterator is None or getattr(doc.noun_chunks_iterator, "__module__", None) \
                in OTHER_LABEL_ITERATORS:
            doc.noun_chunks_iterator = ud_noun_chunks


#: The relations (their universal part) of a noun that heads a base noun phrase.
NOUN_PHRASE_RELATIONS = frozenset({"nsubj", "obj", "iobj", "obl", "nmod", "appos", "root"})
#: The dependents before the noun that its phrase holds: determiners, modifiers, possessors,
#: compounds (not a preposition, a conjunction, a copula's subject).
INSIDE_LEFT = frozenset({"det", "amod", "nummod", "nmod", "compound", "flat", "fixed", "clf", "goeswith"})
#: Right dependents that a noun phrase runs on through ("Barack Obama", flat).
INSIDE_RIGHT = frozenset({"flat", "fixed", "compound"})


def ud_noun_chunks(doclike):
    """spaCy's ``noun_chunks`` syntax iterator for UD labels: (start, end,
    "NP") of base noun phrases, as spaCy's UD-label iterators (French's)
    find them.  A noun, proper noun or pronoun heads one when its relation
    is a subject, object, oblique, nominal modifier (a possessive is part
    of its head's phrase), apposition or the root, or when it is a
    conjunct of such a head; the phrase runs from the left edge of its
    determiners, modifiers, possessors and compounds before it (not a
    preposition, conjunction or a copula's subject), to the noun and its
    flat, fixed and compound dependents after it.  Phrases do not nest."""
    doc = doclike.doc
    if not doc.has_annotation("DEP"):
        raise ValueError(Errors.E029)
    np_label = doc.vocab.strings.add("NP")

    def relation(token):
        return token.dep_.lower().partition(":")[0]

    def heads_phrase(token):
        return relation(token) in NOUN_PHRASE_RELATIONS and token.dep_ != "nmod:poss"

    prev_end = -1
    for word in doclike:
        if word.pos_ not in ("NOUN", "PROPN", "PRON"):
            continue
        if not heads_phrase(word):
            if relation(word) != "conj":
                continue
            head = word.head
            while relation(head) == "conj" and head.head.i < head.i:
                head = head.head
            if not heads_phrase(head):
                continue
        inside = [child.left_edge.i for child in word.lefts if relation(child) in INSIDE_LEFT]
        start = min(inside, default=word.i)
        end = word.i
        for child in word.rights:
            if relation(child) not in INSIDE_RIGHT:
                break
            end = child.right_edge.i
        if start <= prev_end:
            continue
        prev_end = end
        yield start, end + 1, np_label


@Language.factory("fasttag_ud", default_config={"model": "en-ud", "batch_size": 1000},
                  assigns=["token.pos", "token.tag", "token.morph", "token.lemma", "token.dep", "token.head",
                           "doc.sents"])
def make_ud(nlp, name, model: Optional[str], batch_size: int):
    """A fasttag UD pipeline's columns, and its parse where it has a parser
    (spaCy declares what a factory assigns, not each component: the
    parse's attributes are declared whatever the pipeline): ``model`` a
    bundled name (default the English pipeline "en-ud") or the path of a
    pipeline trained with ``fasttag train ud``."""
    return FasttagPipeline(nlp.vocab, name, model, batch_size)
