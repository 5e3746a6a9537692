"""The ``fasttag`` command: a thin shell over the task classes (docs/cli.md).

The work is done by the models' own methods; this package translates their
errors into one line naming the flag.  :mod:`.parser` builds the parser of
every command, :mod:`.paths` checks the files named before any work,
:mod:`.streams` opens the output, :mod:`.messages` writes the one-line errors
and warnings, one module runs each command (:mod:`.training`, :mod:`.tagging`,
:mod:`.evaluation`, :mod:`.inspection`, :mod:`.plotting`, :mod:`.clustering`)
and :mod:`.dispatch` runs the command named (``main``, the console script).
"""
from .clustering import cluster_command
from .dispatch import COMMANDS, main
from .evaluation import eval_command
from .inspection import inspect_command
from .messages import MAX_MESSAGE
from .parser import MODEL_HELP, TAG_COMMANDS, build_parser
from .plotting import plot_command
from .tagging import tag_command
from .training import train_command

__all__ = ["main", "build_parser", "COMMANDS", "TAG_COMMANDS", "MODEL_HELP", "MAX_MESSAGE", "train_command",
           "tag_command", "eval_command", "inspect_command", "plot_command", "cluster_command"]
