"""Composition: a :class:`Pipeline` runs components, each a trained model
that reads some word columns and fills others, under one contract
(:class:`Component`).  The layer above :mod:`fasttag.tasks`: the built-in
components wrap its models (:mod:`fasttag.pipeline.builtin`), and a new
component, the package's or a user's, registers itself
(:func:`register`) without an edit of the pipeline, the command line or
the writers.  Importing this package registers the built-in components
and declares ``fasttag train ud``."""
from .component import ENTRY_POINTS, Component, Treebank, component_class, register, registered
from . import builtin  # noqa: F401  (registers the built-in components)
from .pipeline import TOKENIZER, Pipeline

__all__ = ["Pipeline", "Component", "Treebank", "register", "registered", "component_class", "ENTRY_POINTS",
           "TOKENIZER"]
