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


# ---------------------------------------------------------------- models nested in one file

def nested_parts(parts):
    """``(headers, arrays)`` of models nested in one file: ``parts`` maps a
    name to a model's ``(header, arrays)``; ``headers`` maps the name to the
    header, ``arrays`` holds each model's arrays as ``NAME/key``.  The one
    way a model file holds others (a pipeline's components, a tokenizer's
    segmenter): :func:`nested_arrays` and :func:`nested_model` read them."""
    headers, arrays = {}, {}
    for name, (header, own) in parts.items():
        headers[name] = header
        arrays.update({f"{name}/{key}": value for key, value in own.items()})
    return headers, arrays


def nested_arrays(name, arrays):
    """The arrays of the model nested as ``name`` (:func:`nested_parts`), by their own keys."""
    prefix = name + "/"
    return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}


def nested_model(owner, name, header, arrays, cls):
    """The ``cls`` model nested as ``name`` in ``owner``'s file (``owner``:
    what messages call the file's model, "the pipeline"), of its
    ``header`` and its own ``arrays`` (:func:`nested_arrays`), read by the
    class its kind names and checked to be a ``cls`` (a file holds data,
    never code): a ModelFormatError says which part is at fault."""
    if not isinstance(header, dict) or "arrays" in header:
        raise ModelFormatError(f"corrupt fasttag model: {owner}'s {name} part is malformed")
    if header.get("kind") != cls.kind:
        raise ModelFormatError(f"corrupt fasttag model: {owner}'s {name} part is of kind "
                               f"{str(header.get('kind'))[:40]!r}, not {cls.kind!r}")
    try:
        model = build(header, arrays)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{owner}'s {name} part: {exc}") from None
    if not isinstance(model, cls):
        raise ModelFormatError(f"corrupt fasttag model: {owner}'s {name} part is not a {cls.__name__}")
    return model


def stray_array(arrays, names):
    """The first of ``arrays`` nested under no name of ``names`` (a file
    whose arrays are all nested: every key is ``NAME/key``), or None."""
    return next((k for k in arrays if "/" not in k or k.partition("/")[0] not in names), None)
