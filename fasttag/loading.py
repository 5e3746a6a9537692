"""``fasttag.load``: open any fasttag model file, bundled or user-trained.

The header's ``kind`` says which class reads the file; loading never runs
code from the file (see :mod:`fasttag.modelfile`).
"""
import importlib
import os
from pathlib import Path

from . import modelfile
from .errors import FasttagError, ModelFormatError

# kind -> (module, class)
KINDS = {
    "tagger": ("fasttag.tagger", "Tagger"),
    "segmenter": ("fasttag.segmenter", "Segmenter"),
    "spans": ("fasttag.spantagger", "SpanTagger"),
}

BUNDLED = {
    "en": "en_ewt_upos.ftm",
    "zh": "zh_pku_seg.ftm",
}


def default_model_path(lang="en"):
    """Path of a model bundled with the package: "en" (English UPOS tagger,
    trained on UD English EWT) or "zh" (Chinese segmenter, People's Daily)."""
    try:
        name = BUNDLED[lang]
    except KeyError:
        raise FasttagError(f"no bundled model for {lang!r}; bundled: {', '.join(BUNDLED)}") from None
    path = Path(__file__).resolve().parent / "models" / name
    if not path.exists():
        raise FasttagError(f"the bundled {lang!r} model is missing from this installation ({path.name})")
    return path


LINEAR_KINDS = ("Perceptron", "AveragedPerceptron", "PassiveAggressiveClassifier", "SGDClassifier",
                "SGDRegressor", "Neuron")
KINDS.update({f"linear.{name}": ("fasttag.linear", name) for name in LINEAR_KINDS})


def model_class(kind):
    """The class that reads models of ``kind``."""
    try:
        module, name = KINDS[kind]
    except (KeyError, TypeError):
        raise ModelFormatError(f"unknown fasttag model kind {kind!r}") from None
    return getattr(importlib.import_module(module), name)


def load(path=None):
    """Load a model file; without ``path``, the bundled English POS tagger.

    Returns a :class:`fasttag.Tagger`, :class:`fasttag.Segmenter`,
    :class:`fasttag.SpanTagger` or a :mod:`fasttag.linear` estimator, as the
    file's header says.  Raises
    :class:`fasttag.ModelFormatError` for anything that is not a valid model.
    """
    if path is None:
        path = default_model_path("en")
    elif isinstance(path, str) and path in BUNDLED and not os.path.exists(path):
        path = default_model_path(path)
    header, arrays = modelfile.read(path)        # TypeError for a non-path
    cls = model_class(header.get("kind"))
    try:
        return cls._from_parts(header, arrays)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{os.fspath(path)}: {exc}") from None


def loads(data):
    """Load a model from bytes (``model.to_bytes()``)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"fasttag.loads takes the bytes of a model, not {type(data).__name__}")
    header, arrays = modelfile.loads(data)
    return model_class(header.get("kind"))._from_parts(header, arrays)
