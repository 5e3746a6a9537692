"""Deprecated: the UD pipeline moved to :mod:`fasttag.pipeline` (the layer
above the tasks).  Its names here still work, with a DeprecationWarning."""
import warnings

_MOVED = ("Pipeline", "TOKENIZER")


def declare():
    """Declare the UD pipeline's task (``fasttag train ud``), which :mod:`fasttag.pipeline` declares."""
    from .. import pipeline  # noqa: F401


def __getattr__(name):
    if name in _MOVED:
        warnings.warn(f"fasttag.tasks.ud.{name} moved to fasttag.pipeline.{name}", DeprecationWarning, stacklevel=2)
        from .. import pipeline     # the one import of the layer above: this module is its old name
        return getattr(pipeline, name)
    raise AttributeError(f"module 'fasttag.tasks.ud' has no attribute {name!r}")
