"""The tokenizer that cuts the raw text a task tags into words: the one
given (a tokenizer model or a model path), or the bundled English one,
loaded once for the whole process.

Kept apart from the task contract (:mod:`fasttag.tasks.base`) because the
taggers, the pipeline and the command line all choose a tokenizer the same
way, and only this module knows the bundled one.
"""
from __future__ import annotations

import threading
import warnings

from ..errors import InputError
from ..model import loading, modelfile
from ..text import formats as ftio
from .filechecks import kind_named


_BUNDLED_TOKENIZER = []
_LOCK = threading.Lock()


def tokenizer_of(tokenizer):
    """The tokenizer to use: a tokenizer model (:class:`fasttag.Tokenizer`),
    a model path, or None for the bundled English tokenizer (loaded once)."""
    if tokenizer is None:
        with _LOCK:
            if not _BUNDLED_TOKENIZER:
                _BUNDLED_TOKENIZER.append(loading.load("en-tok"))
            return _BUNDLED_TOKENIZER[0]
    if ftio.is_path(tokenizer):
        header, arrays, path = loading.read(tokenizer)
        if header.get("kind") != "tokenizer":
            raise InputError(f"{tokenizer}: {kind_named(header.get('kind'))}, not a tokenizer")
        return loading.build(header, arrays, path)
    if not isinstance(tokenizer, modelfile.Stored) or tokenizer.kind != "tokenizer":
        raise TypeError(f"tokenizer must be a fasttag Tokenizer or a model path, not {type(tokenizer).__name__}")
    return tokenizer


def tokenizer_for(model, tokenizer):
    """:func:`tokenizer_of` for raw text that ``model`` tags; when it falls
    back on the bundled English tokenizer for a model not trained on
    English (its ``corpus`` says so), a warning names it and the way to
    choose another: text in another language would be cut as English."""
    if tokenizer is None and "english" not in str(model.meta.get("corpus", "")).lower():
        warnings.warn("raw text is tokenized by the bundled English tokenizer (en-tok): the model has none of "
                      "its own; for another language give option tokenizer (a tokenizer model), or train a UD "
                      "pipeline, which carries its tokenizer (fasttag train ud)", UserWarning, stacklevel=3)
    return tokenizer_of(tokenizer)
