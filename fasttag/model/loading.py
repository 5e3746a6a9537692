"""Reading a model file into the class its header's kind names: the
bundled models' names, the one message for a missing file, and errors that
name the file.  Only classes already declared are known here
(:mod:`fasttag.model.registry`); :func:`fasttag.load` declares them all."""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import FasttagError, ModelFormatError
from . import modelfile, registry

BUNDLED = {
    "en": "en_ewt_upos.ftm",
    "en-tok": "en_ewt_tok.ftm",
    "en-ner": "en_conll03_ner.ftm",
    "zh": "zh_pku_seg.ftm",
    "en-ud": "en_ewt_ud.ftm",
}


def default_model_path(lang: str = "en") -> Path:
    """Path of the model bundled under the name ``lang``: "en", "en-tok",
    "en-ner", "zh" or "en-ud" (``fasttag/models/MODELS.md``)."""
    try:
        name = BUNDLED[lang]
    except KeyError:
        raise FasttagError(f"no bundled model for {lang!r}; bundled: {', '.join(BUNDLED)}") from None
    path = Path(__file__).resolve().parents[1] / "models" / name
    if not path.exists():
        raise FasttagError(f"the bundled {lang!r} model is missing from this installation ({path.name})")
    return path


def is_bundled_name(path) -> bool:
    """Whether ``path`` is a str naming a bundled model, which it always
    means, whatever files the working directory holds (write ``./en``)."""
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


def read(path):
    """``(header, arrays, path)`` of a model file or of a bundled model's
    name (:func:`is_bundled_name`); None is the bundled English tagger."""
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
    return header, arrays, path


def build(header, arrays, path=None):
    """The model of a file's ``header`` and ``arrays``, read by the class its
    kind names; a ModelFormatError names ``path``."""
    cls = registry.model_class(header.get("kind"))
    try:
        return cls._from_parts(header, arrays)
    except ModelFormatError as exc:
        if path is None:
            raise
        raise ModelFormatError(f"{os.fspath(path)}: {exc}") from None


def load(path):
    """The model of a file, or of a bundled model's name (:func:`read`)."""
    return build(*read(path))
