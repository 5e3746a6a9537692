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
           "Segmenter", "SpanTagger", "Tokenizer",
           "load", "loads", "default_model_path", "__version__"]

_LAZY = {"Tagger": "fasttag.tasks.pos", "Segmenter": "fasttag.tasks.seg", "SpanTagger": "fasttag.tasks.spans",
         "Tokenizer": "fasttag.tasks.tok"}


def __getattr__(name):
    # the task classes import numpy and the compiled core: load them on use
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'fasttag' has no attribute {name!r}")
