"""The model store: ``fasttag.load`` opens any fasttag model file, whose
header's ``kind`` says which class reads it.  Bump a featurizer's version
whenever its output for the same input changes (:func:`check_stamp`).
"""
from __future__ import annotations

import os

from .errors import ModelFormatError
from .model import loading, modelfile, registry
from .model.loading import BUNDLED, default_model_path, is_bundled_name, is_plain_name, not_found
from .model.modelfile import check_stamp, stamp

# the bundled models' names and paths, and the stamps, stay importable from here
__all__ = ["load", "loads", "model_class", "BUNDLED", "default_model_path", "is_bundled_name",
           "is_plain_name", "not_found", "check_stamp", "stamp"]


def model_class(kind):
    """The class that reads models of ``kind``; the estimators, which import
    scikit-learn, are imported only for a kind no task reads."""
    from . import pipeline, tasks  # noqa: F401  (declare the task kinds and the pipeline's)
    try:
        return registry.model_class(kind)
    except ModelFormatError:
        from . import linear  # noqa: F401
    return registry.model_class(kind)


def load(path: str | os.PathLike | None = None):
    """Load a model file; without ``path``, the bundled English POS tagger.

    ``path`` is a model file, or the name of a bundled model ("en",
    "en-tok", "en-ner", "zh", "en-ud"), which always means the bundled
    model: write ``./en`` for a file of that name.  Only a regular file is read.

    Returns the task model or :mod:`fasttag.linear` estimator the file's
    header names.  Raises :class:`fasttag.ModelFormatError` for anything
    that is not a valid model.
    """
    header, arrays, path = loading.read(path)
    model_class(header.get("kind"))                 # declares the class of the kind
    return loading.build(header, arrays, path)


def loads(data: bytes):
    """Load a model from ``data``, the bytes of ``model.to_bytes()``."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"fasttag.loads takes the bytes of a model, not {type(data).__name__}")
    header, arrays = modelfile.loads(data)
    model_class(header.get("kind"))
    return loading.build(header, arrays)
