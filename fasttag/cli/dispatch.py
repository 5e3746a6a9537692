"""``main``, the ``fasttag`` console script: the command line parsed, the
command named run, and every error it raises written as one line that
names the command's flags (exit status 2)."""
import argparse
import contextlib
import functools
import sys
import warnings

from ..errors import FasttagError
from ..model import options
from ..text import formats as ftio
from .clustering import cluster_command
from .evaluation import eval_command
from .inspection import inspect_command
from .messages import error, warning
from .parser import build_parser
from .paths import refuse_outputs_on_inputs
from .plotting import plot_command
from .tagging import tag_command
from .training import train_command

#: The function that runs each command.
COMMANDS = {"train": train_command, "tag": tag_command, "ner": tag_command, "segment": tag_command,
            "tokenize": tag_command, "eval": eval_command, "inspect": inspect_command, "plot": plot_command,
            "cluster": cluster_command}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(tasks="train" in argv)
    args = parser.parse_args(argv)
    encoding = getattr(args, "encoding", None)
    flags = getattr(args, "command_parser", parser).flags       # the options of the command run
    commands = {name: p.flags for action in parser._actions if isinstance(action, argparse._SubParsersAction)
                for name, p in action.choices.items() if name != "train"}
    try:
        with ftio.input_encoding(encoding) if encoding else contextlib.nullcontext(), \
                warnings.catch_warnings():
            warnings.showwarning = functools.partial(warning, flags=flags, commands=commands)
            refuse_outputs_on_inputs(args)
            return COMMANDS[args.command](args)
    except FasttagError as exc:
        hint = ""
        if getattr(exc, "undecodable", False) and not encoding:
            hint = " (not UTF-8? name its encoding, e.g. --encoding gbk)"
        error(options.cli_text(f"{exc}{hint}", flags, commands))      # Python's option names as flags
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:                 # a missing or unreadable file the user named
        where = f"{exc.filename}: " if exc.filename is not None else ""
        error(f"{where}{exc.strerror or exc}")
        return 2
    except KeyboardInterrupt:
        print("fasttag: interrupted", file=sys.stderr)
        return 130
