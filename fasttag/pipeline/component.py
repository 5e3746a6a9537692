"""The component contract: what a model must be to take part in a
:class:`fasttag.pipeline.Pipeline`, and the registry of components.

A component is a trained model that reads some word columns (each word's
form, and the columns components before it filled) and fills others.  It
learns from a treebank (:class:`Treebank`), fills a batch of sentences,
writes and reads its own part of the pipeline's model file, and may add
scores of its own to the pipeline's evaluation.  The pipeline, the command
line and the writers know components only through this contract, so a new
one (the parser of a later release, or a user's) plugs in by registering
itself: :func:`register`, or an entry point in the group
``fasttag.components`` of an installed package.

A pipeline's model file names each component by its registered name;
loading finds the class in the registry (importing, for a name not yet
registered, the installed package whose entry point declares it), never
in the file: a file holds data, never code.
"""
from __future__ import annotations

from ..errors import ModelFormatError
from ..text import goldtext
from ..text.conllu import FILLED_COLUMNS, document_of, paused_gc
from ..text.parsers import CONLLU_FIELDS, parse_conllu
from ..text.sources import open_lines

__all__ = ["Component", "Treebank", "register", "component_class", "registered", "ENTRY_POINTS"]

#: The entry point group an installed package declares its components in.
ENTRY_POINTS = "fasttag.components"
#: registered name -> component class
_REGISTRY = {}


class Treebank:
    """A CoNLL-U treebank as components learn from it, parsed once: its
    ``sentences`` (``words``: the forms of the syntactic words; ``rows``:
    each word's ten fields), its ``gold_text`` where asked for (the raw
    text with its gold tokens and sentences, a
    :class:`fasttag.text.goldtext.GoldText`: what a tokenizer learns from),
    and its ``source`` (a path, or a binary stream readable again from its
    start by :meth:`reopened`) for a component that reads the file itself."""

    def __init__(self, source, sentences, name=None, gold_text=None):
        self.source, self.sentences, self.name, self.gold_text = source, sentences, name, gold_text

    @classmethod
    def read(cls, source, name=None, gold_text=False):
        """The treebank of a CoNLL-U ``source`` (a path or a seekable binary
        stream), with its :attr:`gold_text` if ``gold_text``."""
        cls._rewind(source)
        path, lines, close = open_lines(source)
        try:
            with paused_gc():
                sentences = list(parse_conllu(lines, path, CONLLU_FIELDS.index("UPOS")))
                text = goldtext.gold_text(document_of(sentences, path)) if gold_text else None
        finally:
            close()
        return cls(source, sentences, name, text)

    def reopened(self):
        """:attr:`source`, at its start."""
        self._rewind(self.source)
        return self.source

    @staticmethod
    def _rewind(source):
        if hasattr(source, "seek"):
            source.seek(0)

    def column(self, name):
        """Per sentence the values of word column ``name`` (a CoNLL-U field
        name, any case)."""
        field = CONLLU_FIELDS.index(name.upper())
        return [[row[field] for row in s.rows] for s in self.sentences]

    def annotates(self, name):
        """Whether the treebank fills column ``name`` (not every value ``_``)."""
        field = CONLLU_FIELDS.index(name.upper())
        return any(row[field] != "_" for s in self.sentences for row in s.rows)


class Component:
    """The contract of a pipeline component; subclass it and register the
    subclass (:func:`register`).

    Class attributes: ``name`` (set by :func:`register`: its key in the
    model file, in results and in the pipeline), ``reads`` (the columns
    it needs filled before it runs), ``fills`` (the columns it fills, among
    :data:`fasttag.text.conllu.FILLED_COLUMNS`; a tokenizer fills none and
    sets ``tokenizes``), ``metrics`` (the names of the scores
    :meth:`scores` adds), ``needs_reads``.  ``model``: the trained model it wraps (itself
    where it is its own model)."""

    name: str = None
    reads: tuple = ()
    fills: tuple = ()
    tokenizes: bool = False
    metrics: tuple = ()
    #: whether it cannot run without its ``reads`` (a parser without tags):
    #: a pipeline where no part fills them then takes them from CoNLL-U
    #: input only, and refuses text
    needs_reads: bool = False

    @property
    def model(self):
        return self

    # ------------------------------------------------------------ learning

    @classmethod
    def annotated(cls, treebank: Treebank) -> bool:
        """Whether ``treebank`` can teach it: by default, whether it fills
        one of the component's columns."""
        return any(treebank.annotates(c) for c in cls.fills)

    @classmethod
    def learn(cls, train: Treebank, dev: Treebank | None = None, *, init=None, verbose=None,
              **options) -> Component:
        """The component trained on ``train`` (keeping its best epoch on
        ``dev`` where it has epochs), fine-tuned from ``init`` (a component
        of its class) where given; ``options``: the pipeline training's
        options (``help(fasttag.model.options)``), for it to take or
        refuse.  Ctrl-C raises :class:`fasttag.TrainingInterrupted`."""
        raise NotImplementedError(f"{cls.__name__} does not learn")

    def calibrate(self, treebank: Treebank):
        """Fit its confidence on gold ``treebank``: the temperature, or None
        where it has none."""
        return None

    # ------------------------------------------------------------ predicting

    def fill(self, words: list, columns: dict) -> dict:
        """The values of its :attr:`fills` columns for a batch of
        sentences: ``words`` the sentences' forms, ``columns`` the columns
        filled before it (column -> per sentence the values); returns
        column -> per sentence the values, one per word."""
        raise NotImplementedError(f"{type(self).__name__} fills no columns")

    def tokenize(self, text: str) -> list:
        """For a component that ``tokenizes``: the sentences of raw
        ``text``, each a list of tokens with ``start``, ``end``, ``form``
        and ``words`` (the forms of its syntactic words)."""
        raise NotImplementedError(f"{type(self).__name__} does not tokenize")

    # ------------------------------------------------------------ its part of the model file

    def to_parts(self) -> tuple:
        """``(header, arrays)``: a JSON-able dict and a dict of numpy arrays
        (see :mod:`fasttag.model.modelfile`), its part of the model file."""
        return self.model._parts()

    @classmethod
    def from_parts(cls, header: dict, arrays: dict) -> Component:
        """The component of its part of a model file, every value it will
        use checked (:class:`fasttag.ModelFormatError` otherwise)."""
        raise NotImplementedError(f"{cls.__name__} cannot be read from a model file")

    # ------------------------------------------------------------ evaluation

    def scores(self, gold, system, pairs) -> dict:
        """Its own scores beyond the CoNLL 2018 shared task's (which the
        pipeline computes for its columns): ``gold`` and ``system`` are
        :class:`fasttag.text.conll18.Annotation` keeping the component's
        columns (:meth:`~fasttag.text.conll18.Annotation.column`), ``pairs``
        the aligned words' (gold index, system index); returns name ->
        :class:`fasttag.text.conll18.Score`, one for each of :attr:`metrics`."""
        return {}


def register(name):
    """Class decorator: the :class:`Component` subclass is the component
    ``name`` (a model file's key for it)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"a component's name must be an identifier, not {name!r}")

    def declare(cls):
        if not (isinstance(cls, type) and issubclass(cls, Component)):
            raise TypeError(f"component {name!r}: {cls!r} is not a fasttag.pipeline.Component subclass")
        unknown = sorted(set(cls.fills) - set(FILLED_COLUMNS))
        if unknown:
            raise ValueError(f"component {name!r} fills {unknown[0]!r}, not one of {', '.join(FILLED_COLUMNS)}")
        old = _REGISTRY.get(name)
        if old is not None and (old.__module__, old.__qualname__) != (cls.__module__, cls.__qualname__):
            raise ValueError(f"component {name!r} is registered twice: by {old.__qualname__} and {cls.__qualname__}")
        cls.name = name
        _REGISTRY[name] = cls
        return cls
    return declare


def registered():
    """The registered component names (the built-in ones and those imported so far)."""
    return list(_REGISTRY)


def component_class(name):
    """The class of component ``name``: registered, or declared by an
    installed package's entry point (:data:`ENTRY_POINTS`), which is imported
    then; a ModelFormatError when none is known."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if isinstance(name, str):
        from importlib.metadata import entry_points
        try:
            found = entry_points(group=ENTRY_POINTS)
        except TypeError:           # Python 3.9: a dict of groups
            found = entry_points().get(ENTRY_POINTS, ())
        for ep in found:
            if ep.name == name:
                cls = ep.load()
                if _REGISTRY.get(name) is not cls:
                    try:
                        register(name)(cls)
                    except (TypeError, ValueError) as exc:
                        raise ModelFormatError(f"the entry point {ep.value!r} of component {name!r}: {exc}") from None
                return cls
    raise ModelFormatError(f"the pipeline has a part {str(name)[:40]!r} this fasttag does not know (a newer "
                           f"fasttag's model, or a component of a package not installed?)")
