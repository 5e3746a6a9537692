"""The built-in components: the tokenizer, the UPOS and XPOS taggers, the
morphologizer (FEATS), the lemmatizer and the dependency parser, each a
task model of :mod:`fasttag.tasks` behind the component contract."""
from __future__ import annotations

from ..errors import InputError
from ..model import loading, options
from ..tasks.dep import OWN_OPTIONS, READS, DependencyParser
from ..tasks.lemma import Lemmatizer
from ..tasks.morph import Morphologizer
from ..tasks.pos import Tagger
from ..tasks.tok import Tokenizer
from .component import Component, Treebank, register

__all__ = ["ModelComponent", "TokenizerComponent", "ColumnTagger", "UposTagger", "XposTagger", "UposReader",
           "FeatsAnalyzer", "LemmaComponent", "DependencyComponent", "DEFAULT_COMPONENTS", "RULE_OPTIONS"]

#: The options of a learning rule: a call naming one overrides every component's own rule.
RULE_OPTIONS = {"algorithm", "k", "C"}


class ModelComponent(Component):
    """A component that is a task model of one class (``model_class``):
    stored as that model's own file part, trained by its ``train`` with
    the pipeline's options that apply to it."""

    model_class: type = None
    #: its learning rule where the call names none (BENCHMARKS.md, "Defaults chosen by cross-validation")
    rule: dict = {}

    def __init__(self, model):
        if not isinstance(model, self.model_class):
            raise TypeError(f"the {self.name} component needs a {self.model_class.__name__}, not "
                            f"{type(model).__name__}")
        self._model = model

    @property
    def model(self):
        return self._model

    def __repr__(self):
        return f"{type(self).__name__}({self._model!r})"

    @classmethod
    def from_parts(cls, header, arrays):
        return cls(loading.nested_model("the pipeline", cls.name, header, arrays, cls.model_class))

    @classmethod
    def _options(cls, options_, init):
        """The pipeline's options this component's training takes: the
        shared ones; a fine-tuned one also its own task's; its own rule
        unless the call names one."""
        own = {k: v for k, v in options_.items() if k != "allow_new_tags"
               or init is not None and options.BY_NAME[k].applies(cls.model_class.task)}
        if init is not None:
            own["init"] = init.model
        elif not RULE_OPTIONS & set(options_):
            own.update(cls.rule)
        return own

    def calibrate(self, treebank):
        return self._model.calibrate(self.examples(treebank))

    @classmethod
    def examples(cls, treebank: Treebank):
        """Its training data of ``treebank``, as its model class's ``train`` reads it."""
        raise NotImplementedError


@register("tok")
class TokenizerComponent(ModelComponent):
    """Tokens, multiword tokens and sentences of raw text: fills no column."""
    model_class = Tokenizer
    tokenizes = True

    @classmethod
    def annotated(cls, treebank):
        return True

    @classmethod
    def learn(cls, train, dev=None, *, init=None, verbose=None, **options_):
        own = {k: v for k, v in options_.items() if k != "allow_new_tags"}
        if init is not None:
            own["init"] = init.model
        return cls(Tokenizer.train(cls.examples(train), None if dev is None else cls.examples(dev),
                                   verbose=verbose, **own))

    def calibrate(self, treebank):
        return self._model.calibrate(self.examples(treebank))

    @classmethod
    def examples(cls, treebank):
        """Its training data: the treebank's gold text, read with the rest, or its file."""
        return treebank.reopened() if treebank.gold_text is None else treebank.gold_text

    def tokenize(self, text):
        return self._model.sentence_tokens(text)


class ColumnTagger(ModelComponent):
    """A POS tagger of one CoNLL-U column, reading the forms only."""
    model_class = Tagger

    @classmethod
    def learn(cls, train, dev=None, *, init=None, verbose=None, **options_):
        return cls(Tagger.train(cls.examples(train), dev=None if dev is None else cls.examples(dev),
                                verbose=verbose, **cls._options(options_, init)))

    @classmethod
    def examples(cls, treebank):
        return list(zip((s.words for s in treebank.sentences), treebank.column(cls.fills[0])))

    def fill(self, words, columns):
        return {self.fills[0]: self._model.tag_sents(words)}


@register("upos")
class UposTagger(ColumnTagger):
    fills = ("upos",)
    rule = {"algorithm": "mira", "k": 3}


@register("xpos")
class XposTagger(ColumnTagger):
    fills = ("xpos",)


class UposReader(ModelComponent):
    """A model of one column that reads each word's UPOS (filled before it):
    trained on (form, gold UPOS, value) triples, run on the predicted UPOS."""
    reads = ("upos",)
    method: str = None          # its model's prediction method: method(words, upos)

    @classmethod
    def learn(cls, train, dev=None, *, init=None, verbose=None, **options_):
        return cls(cls.model_class.train(cls.examples(train), dev=None if dev is None else cls.examples(dev),
                                         verbose=verbose, **cls._options(options_, init)))

    @classmethod
    def examples(cls, treebank):
        values = treebank.column(cls.fills[0])
        return [[(w, r[3], v) for w, r, v in zip(s.words, s.rows, vs)] for s, vs in zip(treebank.sentences, values)]

    def fill(self, words, columns):
        return {self.fills[0]: getattr(self._model, self.method)(words, columns.get("upos"))}


@register("feats")
class FeatsAnalyzer(UposReader):
    model_class = Morphologizer
    fills = ("feats",)
    method = "analyze_sents"


@register("lemma")
class LemmaComponent(UposReader):
    model_class = Lemmatizer
    fills = ("lemma",)
    method = "lemmatize_sents"


@register("dep")
class DependencyComponent(ModelComponent):
    """HEAD and DEPREL, reading the forms and the columns filled before it."""
    model_class = DependencyParser
    reads = READS               # of an instance: those its training data filled
    fills = ("head", "deprel")
    needs_reads = True

    def __init__(self, model):
        super().__init__(model)
        self.reads = model.reads

    @classmethod
    def annotated(cls, treebank):
        return treebank.annotates("head")

    @classmethod
    def learn(cls, train, dev=None, *, init=None, verbose=None, **options_):
        if init is not None:
            raise InputError("option init: a dependency parser cannot be fine-tuned yet (train it anew)")
        own = {k: v for k, v in options_.items() if k in OWN_OPTIONS}
        return cls(DependencyParser.train_sentences(train.sentences, None if dev is None else dev.sentences,
                                                    verbose=verbose, **own))

    def calibrate(self, treebank):
        return None

    def fill(self, words, columns):
        heads, deprels = self._model.parse(words, {c: columns[c] for c in self.reads if c in columns})
        shown = [str(i) for i in range(max((len(s) for s in words), default=0) + 1)]
        return {"head": [[shown[h] for h in s] for s in heads], "deprel": deprels}


#: What ``Pipeline.train`` trains where the call names no components, in order.
DEFAULT_COMPONENTS = ("tok", "upos", "xpos", "feats", "lemma", "dep")
