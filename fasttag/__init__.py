"""fasttag: fast trainable sequence taggers with a Cython core.

    >>> import fasttag
    >>> tagger = fasttag.load()                 # bundled English UPOS model
    >>> tagger.tag(["I", "saw", "her", "duck", "."])
    ['PRON', 'VERB', 'PRON', 'NOUN', 'PUNCT']
"""
__version__ = "0.1.0"

from .errors import FasttagError, InputError, ModelFormatError, TrainingInterrupted, WorkersLost  # noqa: E402
from .store import default_model_path, load, loads  # noqa: E402

__all__ = ["FasttagError", "InputError", "ModelFormatError", "TrainingInterrupted", "WorkersLost", "Tagger",
           "Segmenter", "SpanTagger", "Tokenizer", "Lemmatizer", "Morphologizer", "Pipeline",
           "load", "loads", "default_model_path", "evaluate_conllu", "__version__"]

_TASK_CLASSES = ("Tagger", "Segmenter", "SpanTagger", "Tokenizer", "Lemmatizer", "Morphologizer")


def __getattr__(name):
    # the task classes import the compiled core: load them on use
    if name in _TASK_CLASSES:
        from . import tasks
        return getattr(tasks, name)
    if name == "Pipeline":
        from .pipeline import Pipeline
        return Pipeline
    if name == "evaluate_conllu":
        from .text.conll18 import evaluate_conllu
        return evaluate_conllu
    raise AttributeError(f"module 'fasttag' has no attribute {name!r}")
