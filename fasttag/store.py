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
from pathlib import Path

from .errors import FasttagError, ModelFormatError
from .model import modelfile, registry
from .model.modelfile import check_stamp, stamp  # noqa: F401  (their former home)

BUNDLED = {
    "en": "en_ewt_upos.ftm",
    "en-tok": "en_ewt_tok.ftm",
    "en-ner": "en_conll03_ner.ftm",
    "zh": "zh_pku_seg.ftm",
}


def default_model_path(lang: str = "en") -> Path:
    """Path of the model bundled with the package under the name ``lang``:
    "en" (English UPOS tagger, trained on UD English EWT), "en-tok"
    (English tokenizer and sentence splitter, UD English EWT), "en-ner"
    (English named entities, CoNLL-2003, research use only) or "zh"
    (Chinese segmenter, People's Daily, research use).  See
    ``fasttag/models/MODELS.md``."""
    try:
        name = BUNDLED[lang]
    except KeyError:
        raise FasttagError(f"no bundled model for {lang!r}; bundled: {', '.join(BUNDLED)}") from None
    path = Path(__file__).resolve().parent / "models" / name
    if not path.exists():
        raise FasttagError(f"the bundled {lang!r} model is missing from this installation ({path.name})")
    return path


def is_bundled_name(path) -> bool:
    """Whether ``path`` names a bundled model ("en", "en-tok", "en-ner",
    "zh", given as a str).  A bundled name always means the bundled model,
    whatever files the working directory holds: a file named ``en`` there
    is ``./en``.  A name with a path separator or an extension, or a
    ``pathlib.Path``, is a path."""
    return isinstance(path, str) and path in BUNDLED


def is_plain_name(path) -> bool:
    """Whether ``path`` is a str with neither a path separator nor an
    extension: what the user may have meant as a bundled model's name."""
    if not isinstance(path, str) or not path:
        return False
    seps = {os.sep, os.altsep or os.sep, "/"}
    return not any(sep in path for sep in seps) and "." not in path


def not_found(path) -> str:
    """What to say of a model ``path`` that does not exist: for a plain
    name, also the bundled names (``-m en-US`` meant a bundled model)."""
    if is_plain_name(path):
        return f"no such file, and no bundled model of that name (bundled: {', '.join(BUNDLED)})"
    return "no such file"


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
    if path is None:
        path = default_model_path("en")
    elif is_bundled_name(path):
        path = default_model_path(path)
    try:
        header, arrays = modelfile.read(path)        # TypeError for a non-path
    except FileNotFoundError as exc:
        if not is_plain_name(path) or exc.filename != path:
            raise
        raise FileNotFoundError(exc.errno, not_found(path), path) from None
    cls = model_class(header.get("kind"))
    try:
        return cls._from_parts(header, arrays)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{os.fspath(path)}: {exc}") from None


def loads(data: bytes):
    """Load a model from ``data``, the bytes of ``model.to_bytes()``."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"fasttag.loads takes the bytes of a model, not {type(data).__name__}")
    header, arrays = modelfile.loads(data)
    return model_class(header.get("kind"))._from_parts(header, arrays)
