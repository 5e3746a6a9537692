"""The model store: ``fasttag.load`` opens any fasttag model file.

Every model kind is one container (:mod:`fasttag.model.modelfile`) whose
header's ``kind`` says which class reads it; loading never runs code from
the file.  A model is only as good as the feature hashes it was trained on,
so a header records the hash function and the featurizer's name and
version, and a model made with others raises :class:`ModelFormatError`
rather than silently degrading.  Bump a featurizer's version whenever its
output for the same input changes.
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
    """The class that reads models of ``kind``, as the package's tasks and
    estimators declare it when imported (:mod:`fasttag.model.registry`);
    the estimators, which import scikit-learn, are imported only for a
    kind no task reads."""
    from . import tasks  # noqa: F401  (declares the task kinds)
    try:
        return registry.model_class(kind)
    except ModelFormatError:
        from . import linear  # noqa: F401
    return registry.model_class(kind)


def load(path: str | os.PathLike | None = None):
    """Load a model file; without ``path``, the bundled English POS tagger.

    ``path`` is a model file, or the name of a bundled model ("en",
    "en-tok", "en-ner", "zh"; see :func:`default_model_path`).  A bundled
    name always means the bundled model, even where the working directory
    holds a file of that name: write ``./en`` for that file.  A name with a
    path separator or an extension, or a ``pathlib.Path``, is a path.  Only
    a regular file is read: a named pipe, a device or a folder is refused
    (:func:`fasttag.model.modelfile.open_model`).

    Returns a :class:`fasttag.Tagger`, :class:`fasttag.Segmenter`,
    :class:`fasttag.SpanTagger` or a :mod:`fasttag.linear` estimator, as the
    file's header says.  Raises
    :class:`fasttag.ModelFormatError` for anything that is not a valid model.
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
