"""fasttag as an NLTK tagger: :class:`PerceptronTagger` can replace
``nltk.tag.perceptron.PerceptronTagger``; :func:`pos_tag` has NLTK's
signature.  The bundled model tags Universal POS tags, not Penn Treebank's.
:func:`dependency_graphs` gives a UD pipeline's parses as NLTK's
``DependencyGraph`` objects.
"""
try:
    from nltk.tag.api import TaggerI
except ImportError:                                   # pragma: no cover - the extra is missing
    raise ImportError("fasttag.nltk needs NLTK: pip install nltk") from None

from .pipeline import Pipeline
from .store import load as _load
from .tasks.pos import Tagger

__all__ = ["PerceptronTagger", "pos_tag", "dependency_graphs"]

#: The CoNLL-U columns after FORM, as a DependencyGraph reads them (LEMMA, UPOS as ctag, XPOS as tag, FEATS,
#: HEAD, DEPREL, DEPS, MISC).
_GRAPH_COLUMNS = ("lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")


class PerceptronTagger(TaggerI):
    """An NLTK tagger over a fasttag :class:`~fasttag.Tagger`.

    ``load``: load a model at construction (NLTK's argument);
    ``model``: a loaded :class:`fasttag.Tagger`, a model path, or a bundled
    name (default ``"en"``).
    """

    def __init__(self, load=True, model="en"):
        self.model = None
        if load:
            self.model = model if isinstance(model, Tagger) else _load(model)
            if not isinstance(self.model, Tagger):
                raise TypeError(f"{model!r} is not a POS tagger model")

    def _tagger(self):
        if self.model is None:
            raise ValueError("no model: construct with load=True or call train() first")
        return self.model

    def tag(self, tokens, return_conf=False, use_tagdict=True):
        """``(word, tag)`` pairs of one sentence (a list of token strings);
        with ``return_conf``, ``(word, tag, confidence)`` triples as NLTK's
        gives, the confidence being the tag's calibrated marginal
        probability.  ``use_tagdict``: NLTK's switch; fasttag's tag
        dictionary is part of the trained model, so only True is possible."""
        if not use_tagdict:
            raise ValueError("use_tagdict=False: a fasttag model's tag dictionary is part of what it learned")
        tokens = list(tokens) if not isinstance(tokens, str) else tokens
        tags = self._tagger().tag(tokens)
        if not return_conf:
            return list(zip(tokens, tags))
        model = self._tagger()
        probs = model.marginals([tokens])[0] if tokens else []
        index = model.model.tag_index
        return [(w, t, float(p[index[t]])) for w, t, p in zip(tokens, tags, probs)]

    def tag_sents(self, sentences):
        """``(word, tag)`` pairs of many sentences, batched (much faster than
        calling :meth:`tag` in a loop)."""
        sentences = [list(s) if not isinstance(s, str) else s for s in sentences]
        return [list(zip(s, tags)) for s, tags in zip(sentences, self._tagger().tag_sents(sentences))]

    def train(self, sentences, save_loc=None, nr_iter=5, **options):
        """Train a new model on NLTK tagged sentences (lists of ``(word,
        tag)``), ``nr_iter`` epochs; saved to ``save_loc`` when given.
        ``options`` are those of :meth:`fasttag.Tagger.train` (``dev``,
        ``seed``, ...)."""
        options.setdefault("verbose", False)
        self.model = Tagger.train([_pairs(s, i) for i, s in enumerate(sentences)], epochs=nr_iter, **options)
        if save_loc is not None:
            self.model.save(save_loc)
        return self

    def save(self, path):
        """Save the model in fasttag's format (never pickle)."""
        self._tagger().save(path)


def _pairs(sentence, i):
    """The ``(word, tag)`` tuples of one NLTK sentence, whose pairs may be
    lists: a two-word sentence of lists would otherwise read as one pair."""
    out = []
    for j, pair in enumerate(sentence):
        if isinstance(pair, str) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"sentence {i}, token {j}: a (word, tag) pair, not {pair!r:.60}")
        out.append(tuple(pair))
    return out


_default = None


#: Universal POS tags -> NLTK's universal tagset (``tagset="universal"``)
_NLTK_UNIVERSAL = {"AUX": "VERB", "CCONJ": "CONJ", "SCONJ": "CONJ", "PART": "PRT", "PUNCT": ".", "PROPN": "NOUN",
                   "INTJ": "X", "SYM": "X"}


def pos_tag(tokens, tagset=None, lang="eng", *, model="en"):
    """``nltk.pos_tag`` with a fasttag model (the bundled English UPOS
    tagger by default): ``(word, tag)`` pairs of one sentence, as NLTK's
    signature has them.  ``tagset="universal"`` maps the tags to NLTK's
    12-tag universal set; ``lang``: "eng" (the bundled model's)."""
    global _default
    if lang != "eng" and model == "en":
        raise NotImplementedError(f"pos_tag: the bundled model tags English ('eng'), not {lang!r}; "
                                  f"give model= a model trained for it")
    if tagset not in (None, "universal"):
        raise ValueError(f"pos_tag: tagset must be None (the model's tags) or 'universal', not {tagset!r}")
    if model != "en":
        tagger = PerceptronTagger(model=model)
    else:
        if _default is None:
            _default = PerceptronTagger()
        tagger = _default
    pairs = tagger.tag(tokens)
    if tagset == "universal":
        pairs = [(w, _NLTK_UNIVERSAL.get(t, t)) for w, t in pairs]
    return pairs


def dependency_graphs(sentences, model):
    """The parses of a fasttag UD pipeline with a parser (``model``: a
    :class:`fasttag.Pipeline`, a model path or a bundled name) as one
    ``nltk.parse.DependencyGraph`` per sentence: ``sentences`` raw text (a
    str, which the pipeline tokenizes and splits) or pretokenized sentences
    (lists of words).  Each graph is what NLTK reads of the sentence's
    CoNLL-U (UPOS its ``ctag``, XPOS its ``tag``, ``_`` where the pipeline
    fills no column); the top relation is UD's "root", so that
    ``graph.root`` is the sentence's root word."""
    from nltk.parse import DependencyGraph
    pipeline = model if isinstance(model, Pipeline) else _load(model)
    if not isinstance(pipeline, Pipeline) or "head" not in pipeline.columns:
        raise ValueError(f"dependency_graphs: {model!r:.60} is not a UD pipeline with a parser")
    if isinstance(sentences, str):
        rows = [[w.fields() for w in s.words] for s in pipeline.annotate(sentences).sentences]
    else:
        words = []
        for i, sentence in enumerate(sentences):
            if isinstance(sentence, str):
                raise TypeError(f"dependency_graphs: sentence {i + 1} is a str: give a list of words, or the "
                                f"raw text as one str")
            words.append(list(sentence))
        columns = pipeline.tag_words(words)
        rows = []
        for k, sentence in enumerate(words):
            given = [columns[c][k] if c in columns else ["_"] * len(sentence) for c in _GRAPH_COLUMNS]
            rows.append([[str(i + 1), w] + [values[i] for values in given] for i, w in enumerate(sentence)])
    return [DependencyGraph("\n".join("\t".join(r) for r in sentence_rows), cell_separator="\t",
                            top_relation_label="root") if sentence_rows else DependencyGraph()
            for sentence_rows in rows]
