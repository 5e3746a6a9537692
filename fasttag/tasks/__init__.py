"""The task registry: one entry per ``fasttag train`` subcommand.

A new task is one module here (a :class:`fasttag.tasks.base.SequenceTask`
subclass) plus one line in :data:`TASKS` and one in
:data:`fasttag.store.KINDS`.  The command line builds its subcommands
from this table.
"""
import importlib

# name -> (module, class, keyword arguments of train(), help)
TASKS = {
    "pos": ("fasttag.tasks.pos", "Tagger", {}, "part-of-speech tagger from CoNLL-U or column files"),
    "seg": ("fasttag.tasks.seg", "Segmenter", {},
            "Chinese word segmenter from segmented text (one sentence per line) or CoNLL-U"),
    "chunk": ("fasttag.tasks.spans", "SpanTagger", {"task": "chunk"}, "chunker from column files"),
    "ner": ("fasttag.tasks.spans", "SpanTagger", {"task": "ner"}, "named-entity tagger from column files"),
    "tok": ("fasttag.tasks.tok", "Tokenizer", {}, "tokenizer and sentence splitter from CoNLL-U"),
}


def task_class(name):
    """The class of task ``name`` and the keywords its ``train`` needs."""
    module, cls, kwargs, _ = TASKS[name]
    return getattr(importlib.import_module(module), cls), dict(kwargs)
