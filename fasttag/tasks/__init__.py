"""The package's tasks, one module each.

A task is a :class:`fasttag.tasks.base.SequenceTask` subclass that
declares itself: its body sets its model file's ``kind``, and the
decorator :func:`fasttag.model.registry.task` gives its name, the options
it takes, its defaults and its ``fasttag train`` subcommand.  The store,
the option table and the command line read those declarations, so a new
task, here or in a user's code, is its class alone.  Importing this
package declares the package's tasks.
"""
from ..model import registry
from . import pos, seg, spans, tok, featuredicts, lemma, morph, dep  # noqa: F401  (each declares its tasks)
from .dep import DependencyParser
from .featuredicts import FeatureTagger
from .lemma import Lemmatizer
from .morph import Morphologizer
from .pos import Tagger
from .seg import Segmenter
from .spans import SpanTagger
from .tok import Tokenizer

def __getattr__(name):
    if name == "TASKS":             # the package's ``fasttag train`` tasks by name, ``ud`` among them
        from . import ud
        ud.declare()
        return registry.train_commands()
    if name == "Pipeline":          # its old home: fasttag.pipeline.Pipeline
        from . import ud
        return ud.Pipeline
    raise AttributeError(f"module 'fasttag.tasks' has no attribute {name!r}")


def task_class(name):
    """The class of task ``name`` (any declared one) and the keywords its
    ``train`` needs."""
    entry = registry.TASKS[name]
    return entry.cls, dict(entry.keywords)
