"""The ``fasttag`` command: a thin shell over the task classes (docs/cli.md).

The work is done by the models' own methods; this module translates their
errors into one line naming the flag.
"""
import argparse
import contextlib
import functools
import io as _io
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

from . import __version__
from .model import options, registry
from .text import formats as ftio
from .text.sources import check_encoding
from .display import cut, printable
from .errors import FasttagError, InputError, ModelFormatError, TrainingInterrupted, WorkersLost
from .files import atomic_file, replaced_file
from .model.modelfile import open_model
from .text.output import MAX_NBEST
from .parallel import MAX_THREADS, available_cores, check_threads
from .store import BUNDLED, default_model_path, is_bundled_name, is_plain_name, load, not_found

#: Each tagging command's bundled default and help; the models it reads
#: are those whose class names it among its ``commands``.
TAG_COMMANDS = {
    "tag": ("en", "tag raw text, pretokenized text, CoNLL-U or column files"),
    "ner": ("en-ner", "find named entities in raw text, one line per entity"),
    "segment": ("zh", "segment Chinese text, one line in, one line out"),
    "tokenize": ("en-tok", "split raw text into sentences of tokens, one sentence a line, an empty line "
                           "after each input line"),
}


#: What -m and every other model argument takes.
MODEL_HELP = (f"model file, or a bundled model's name ({', '.join(BUNDLED)}); a bundled name always means "
              f"the bundled model: write ./en for a file named en")


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line, exit status 2.  Each parser
    knows its ``flags`` and the parsed arguments name the chosen command's
    parser (``command_parser``), so errors name only options that command has."""

    def __init__(self, *args, **kwargs):
        self.flags = {}                 # flag -> its choices (None: any value)
        super().__init__(*args, **kwargs)
        self.set_defaults(command_parser=self)

    def add_argument(self, *args, **kwargs):
        action = super().add_argument(*args, **kwargs)
        self.flags.update(dict.fromkeys(action.option_strings, action.choices))
        return action

    def parse_args(self, args=None, namespace=None):
        args, extras = self.parse_known_args(args, namespace)
        if extras:          # the subcommand's own help, not the top-level one
            getattr(args, "command_parser", self).error(f"unrecognized arguments: {' '.join(extras)}")
        return args

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _encoding(value):
    try:
        return check_encoding(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_encoding(parser):
    parser.add_argument("--encoding", type=_encoding, metavar="ENC",
                        help="encoding of the input files (default utf-8; e.g. gbk, gb18030, big5)")


def _threads(value):
    try:
        return check_threads(int(value), "--threads")
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a number of threads from 1 to {MAX_THREADS}, or 0 for "
                                         f"every core, not {value!r}") from None


def _add_threads(parser):
    parser.add_argument("--threads", type=_threads, default=1, metavar="N",
                        help="tag on N threads, same output as one (0: every core; default 1)")


def _add_option(parser, opt, task=None):
    if opt.extra.get("flag"):       # a switch: present or not
        parser.add_argument(opt.flag, dest=opt.name, action="store_const", const=True, default=None,
                            help=opt.help)
        return
    kwargs = {"help": opt.help, "default": None}
    if opt.choices:
        kwargs["choices"] = opt.choices
    if opt.metavar:
        kwargs["metavar"] = opt.metavar
    kwargs["type"] = opt.parse
    if opt.name == "gazetteers":
        kwargs["action"] = "append"
    entry = registry.TASKS.get(task) if task else None
    default = entry.shown_defaults.get(opt.name, opt.default_for(task)) if entry else None
    if default is not None and not isinstance(default, (bool, tuple)):
        kwargs["help"] += f" (default {default})"
    parser.add_argument(opt.flag, dest=opt.name, **kwargs)
    if opt.reads:
        _reads(parser, **{opt.name: opt.flag})


def _reads(parser, **names):
    """Record that the arguments ``names`` (dest=how the user names it) name
    files the command reads: no output may replace one."""
    parser.set_defaults(reads={**(parser.get_default("reads") or {}), **names})


def _writes(parser, **names):
    """Record that the arguments ``names`` name files the command writes."""
    parser.set_defaults(writes={**(parser.get_default("writes") or {}), **names})


def build_parser(tasks=True):
    """The parser of every command; ``tasks``: with the ``train`` tasks
    (importing the task classes, which only ``train`` needs)."""
    # no abbreviations: --prune must never be read as --prune-k
    parser = _Parser(prog="fasttag", description="Fast trainable sequence taggers.", allow_abbrev=False)
    parser.add_argument("--version", action="version", version=f"fasttag {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    train = sub.add_parser("train", help="train a model", allow_abbrev=False)
    if tasks:
        _add_train_tasks(train)
    for command, (bundled, help_text) in TAG_COMMANDS.items():
        p = sub.add_parser(command, help=help_text, allow_abbrev=False)
        p.add_argument("input", nargs="?", default="-", metavar="INPUT",
                       help="input file (default or '-': standard input)")
        p.add_argument("-m", "--model", required=bundled is None, help=MODEL_HELP
                       + (f" (default: the bundled {bundled!r} model)" if bundled else ""))
        p.add_argument("-o", "--output", help="output file (default: standard output); without --to or --json, "
                       "a name ending in .conllu is written as CoNLL-U and one in .jsonl as JSON Lines")
        p.add_argument("--json", action="store_true",
                       help="JSON Lines: one object per sentence (tokens, tags, spans, character offsets)")
        if command in ("tag", "ner"):
            p.add_argument("--nbest", type=int, metavar="K",
                           help=f"with --json: the K best tag sequences of each sentence, with their scores "
                                f"(K from 1 to {MAX_NBEST})")
            p.add_argument("--pretokenized", action="store_true",
                           help="one sentence per line, tokens separated by whitespace")
            p.add_argument("--tokenizer", metavar="MODEL",
                           help="tokenizer model for raw text (default: the bundled English tokenizer)")
        if command == "ner":
            p.add_argument("--format", choices=("raw", "text"),
                           help="input format (default: raw text); text is --pretokenized")
        if command == "tag":
            p.add_argument("--format", choices=("raw", "text", "conllu", "conll"),
                           help="input format (default: raw text, or CoNLL-U when every line is a "
                                "CoNLL-U line; a file that looks like a column file must name one); "
                                "text is --pretokenized")
            p.add_argument("--column", type=options.BY_NAME["column"].parse, default=None,
                           help="CoNLL-U column to fill: upos or xpos (default: the model's training "
                                "column, else upos)")
            p.add_argument("--to", choices=("tagged", "json", "conllu"),
                           help="output format: word/TAG (default for text), JSON Lines (as --json) or "
                                "CoNLL-U (# newdoc, # newpar, # sent_id, # text, multiword tokens, "
                                "SpaceAfter=No, every column the model predicts; default for CoNLL-U input); without -m, "
                                "--tokenizer or --column, --to conllu uses the bundled English pipeline en-ud")
        if command == "tokenize":
            p.add_argument("--to", choices=("tagged", "json", "conllu"),
                           help="output format: a sentence of tokens a line (default), JSON Lines (as --json) or "
                                "CoNLL-U (# text, tokens, multiword tokens and their words, SpaceAfter=No; the "
                                "other columns _)")
        if command == "segment":
            p.add_argument("--dict", metavar="FILE", help="user dictionary whose words are kept whole")
            _reads(p, dict="--dict")
        if command in ("tag", "ner"):
            _reads(p, tokenizer="--tokenizer")
        _reads(p, input="INPUT", model="-m")
        _writes(p, output="-o")
        _add_threads(p)
        _add_encoding(p)

    ins = sub.add_parser("inspect", help="a model's tags, settings, transitions and top features (a UD "
                         "pipeline's: a line per part)", allow_abbrev=False)
    ins.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    ins.add_argument("--part", metavar="NAME",
                     help="UD pipeline: inspect this part as a model of its own (tok, upos, xpos, feats, lemma)")
    ins.add_argument("--data", metavar="FILE",
                     help="show the top features per tag among those occurring in this file")
    ins.add_argument("--top", type=int, default=10, metavar="N", help="features per tag (default 10)")
    ins.add_argument("--json", action="store_true", help="print one JSON object")
    _reads(ins, model="MODEL", data="--data")

    ev = sub.add_parser("eval", help="evaluate a model on gold data", allow_abbrev=False)
    ev.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    ev.add_argument("test", metavar="TEST")
    _reads(ev, model="MODEL", test="TEST")
    ev.add_argument("--json", action="store_true", help="print one JSON object (scores as fractions)")
    _add_threads(ev)
    _add_encoding(ev)
    for opt in options.OPTIONS:
        if "eval" in opt.phases and opt.parse is not None:
            _add_option(ev, opt)
    cl = sub.add_parser("cluster", help="learn Brown word clusters from raw text (for train --clusters)",
                        allow_abbrev=False)
    cl.add_argument("raw", nargs="+", metavar="RAW", help="raw text files, one sentence or paragraph per line")
    cl.add_argument("-o", "--output", required=True, metavar="CLUSTERS",
                    help="clusters file to write (bitstring<TAB>word<TAB>count)")
    cl.add_argument("--pretokenized", action="store_true",
                    help="tokens separated by whitespace (default: tokenized by the bundled English tokenizer)")
    cl.add_argument("--chars", action="store_true",
                    help="cluster the characters of each line, whitespace dropped (for train seg --clusters)")
    cl.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    _add_encoding(cl)
    for opt in options.for_cli("cluster", "cluster"):
        _add_option(cl, opt, "cluster")
    _reads(cl, raw="RAW")
    _writes(cl, output="-o")
    pl = sub.add_parser("plot", help="draw the learning curves of saved models side by side",
                        allow_abbrev=False)
    pl.add_argument("models", nargs="+", metavar="MODEL")
    pl.add_argument("-o", "--output", required=True, metavar="OUT", help="image to write (.png, .svg, .pdf)")
    pl.add_argument("--labels", help="comma-separated curve labels (default: the file names)")
    pl.add_argument("--x", choices=("epochs", "updates"), default="epochs", help="horizontal axis")
    _reads(pl, models="MODEL")
    _writes(pl, output="-o")
    return parser


def _add_train_tasks(train):
    """A subcommand of ``train`` per task declared with a help line."""
    from . import pipeline, tasks  # noqa: F401  (declare the package's tasks and ``train ud``)
    subcommands = train.add_subparsers(dest="task", required=True, parser_class=_Parser)
    for name, task in registry.train_commands().items():
        p = subcommands.add_parser(name, help=task.help, allow_abbrev=False)
        p.add_argument("train", metavar="TRAIN", help="training data ('-': standard input)")
        p.add_argument("-o", "--output", required=True, metavar="MODEL",
                       help="where to write the model (checked before training; Ctrl-C saves the best "
                            "completed epoch there)")
        p.add_argument("--dev", metavar="DEV", help="development set: the best epoch on it is kept")
        p.add_argument("--quiet", action="store_true", help="no progress lines")
        _add_encoding(p)
        _reads(p, train="TRAIN", dev="--dev")
        _writes(p, output="-o")
        if not getattr(task.cls, "composite", False):     # one model's training: its curve, Dask shards
            p.add_argument("--plot", metavar="PNG", help="also write the training curve (needs matplotlib)")
            p.add_argument("--dask", action="store_true",
                           help="train on a local Dask cluster: --threads worker processes (default 2; 0: one "
                                "per core), one shard each (needs fasttag-nlp[dask])")
            p.add_argument("--scheduler", metavar="ADDRESS",
                           help="train on the existing Dask cluster of this scheduler (tcp://host:8786), one "
                                "shard per worker (needs fasttag-nlp[dask])")
            _writes(p, plot="--plot")
        p.set_defaults(plot=None, dask=False, scheduler=None)
        for opt in options.for_cli(name, "train"):
            _add_option(p, opt, name)


# ---------------------------------------------------------------- commands

def _given(args, names):
    """The options of ``names`` the user gave on the command line."""
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}


def train_command(args):
    task = registry.TASKS[args.task]
    cls, kwargs = task.cls, dict(task.keywords)
    given = _given(args, [o.name for o in options.for_cli(args.task, "train")])
    # options first, then the files named, then the output: all before any work
    options.resolve(kwargs.get("task") or cls.task, "train", given, cli=True)
    train = _input_path(args.train, "TRAIN", stdin_ok=True)
    dev = None if args.dev is None else _input_path(args.dev, "--dev")
    _refuse_dev_on_train(train, dev)
    if "init" in given:
        given["init"] = str(_model_path(given["init"], "--init"))
    _check_output(args.output, "-o")
    if args.plot:
        _check_output(args.plot, "--plot")
    if "gazetteers" in given:
        lists = {}
        for item in given["gazetteers"]:
            typ, sep, path = item.partition("=")
            if not sep or not typ or not path:
                raise InputError(f"--gazetteer expects TYPE=FILE, not {item!r}")
            lists.setdefault(typ, []).extend(_read_gazetteer(_input_path(path, "--gazetteer")))
        given["gazetteers"] = lists
    if "clusters" in given:
        from .features.clusters import read_clusters
        given["clusters"] = read_clusters(_input_path(given["clusters"], "--clusters"))   # checked before any work
    if "dictionary" in given:
        given["dictionary"] = Path(_input_path(given["dictionary"], "--dict"))    # a path, never words
    if args.plot:
        from .plot import figure_format, need_matplotlib
        figure_format(args.plot)                        # refuse before training, not after
        need_matplotlib()
    if args.dask or args.scheduler:
        if args.dask and args.scheduler:
            raise InputError("--dask starts a local cluster, --scheduler uses an existing one: give one")
        if args.scheduler and "threads" in given:
            raise InputError("--threads applies to --dask (its workers), not to --scheduler")
        if train is sys.stdin.buffer:
            raise InputError("distributed training reads TRAIN on the workers: give a file, not '-'")
    try:
        with _dask_client(args, given) as client:
            if client is not None:
                kwargs["client"] = client
            model = cls.train(train, dev=dev, verbose=not args.quiet, **kwargs, **given)
    except TrainingInterrupted as exc:
        # Ctrl-C, or a Dask cluster that lost its workers (WorkersLost says why)
        why = f" because {exc.reason}" if isinstance(exc, WorkersLost) else ""
        if exc.model is None:
            _say(f"fasttag: interrupted at epoch {exc.epoch}{why}, before any epoch was completed: "
                 f"nothing saved")
            return 130
        exc.model.save(args.output)
        _say(f"fasttag: interrupted at epoch {exc.epoch}{why}: saved {args.output} with "
             f"{exc.model.summary(interrupted=True)}")
        return 130
    model.save(args.output)
    if args.plot:
        from .plot import learning_curves
        learning_curves(model, labels=[os.path.basename(args.output)], path=args.plot)
    if not args.quiet:
        _say(f"saved {args.output}: {model.summary()}")
    return 0


def _refuse_dev_on_train(train, dev):
    """Before any work: --dev may not name the file TRAIN names (another
    spelling, a link) or that standard input reads for TRAIN '-'."""
    if dev is not None:
        from .tasks.base import refuse_dev_on_train
        refuse_dev_on_train(train, dev, what="--dev")


@contextlib.contextmanager
def _dask_client(args, given):
    """The Dask client of ``--dask`` (a LocalCluster of ``--threads`` worker
    processes, 2 by default) or ``--scheduler``; None without them."""
    if not (args.dask or args.scheduler):
        yield None
        return
    from .distributed import require_dask
    dd = require_dask()
    if args.scheduler:
        try:
            client = dd.Client(args.scheduler, timeout=10)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"--scheduler {args.scheduler}: cannot connect ({exc})") from None
        with client:
            yield client
        return
    workers = given.pop("threads", 2) or available_cores()         # 0: every core
    with dd.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) \
            as cluster, dd.Client(cluster) as client:
        yield client


def _input_path(path, what, stdin_ok=False, opener=None):
    """``path`` of an input file the user named (``what``: its argument),
    checked before any work by opening it.  "-" is standard input where ``stdin_ok``."""
    if path == "-":
        if stdin_ok:
            return sys.stdin.buffer
        raise InputError(f"{what} must be a file: standard input ('-') is read only as the main input")
    if path == "":
        raise InputError(f"{what} is an empty file name")
    if not os.path.exists(path):
        raise InputError(f"{what}: no such file", path=path)
    if os.path.isdir(path):
        raise InputError(f"{what} is a folder, not a file", path=path)
    try:
        with (opener or (lambda p: open(p, "rb")))(path):
            pass
    except OSError as exc:
        raise InputError(f"{what}: cannot read ({exc.strerror or exc})", path=path) from None
    except ModelFormatError as exc:           # a model path that is not a regular file
        raise InputError(f"{what}: {exc}") from None
    return path


def _model_path(path, what):
    """A model the user named: a bundled name (always the bundled model) or a
    file, checked by opening it as models are (a named pipe is refused)."""
    if is_bundled_name(path):
        return default_model_path(path)
    if is_plain_name(path) and not os.path.exists(path):
        raise InputError(f"{what}: {not_found(path)}", path=path)
    return _input_path(path, what, opener=open_model)


def _check_output(path, what):
    """Refuse, before any work, an output ``path`` that cannot be written.  A
    symbolic link is checked where the save writes: its target's folder."""
    if path == "-":
        raise InputError(f"{what}: the model is written to a file, not to standard output")
    if path == "":
        raise InputError(f"{what} is an empty file name")
    if path.endswith(("/", os.sep)):
        raise InputError(f"{what} names a folder (it ends with {path[-1]}): give a file name", path=path)
    if os.path.isdir(path):
        raise InputError(f"{what} is a folder: give a file name", path=path)
    target = replaced_file(path)
    if target is None:
        return                      # a device, a pipe, /dev/stdout: written in place
    folder = os.path.dirname(target)
    shown = f"{folder} (of the link's target {target})" if os.path.islink(path) else os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        state = "is a file, not a folder" if os.path.exists(folder) else "does not exist"
        raise InputError(f"{what}: the folder {shown} {state}", path=path)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".fasttag-check-", suffix=".tmp")
    except OSError as exc:
        raise InputError(f"{what}: cannot write in {shown} ({exc.strerror or exc})", path=path) from None
    os.close(fd)
    os.unlink(tmp)


def _refuse_outputs_on_inputs(args):
    """Before any work: no output may be a file the command reads (through
    links too), nor another of its outputs.  The inputs are those recorded
    by :func:`_reads`, so a new input option is protected by being declared one."""
    inputs = [(name, path) for dest, name in (getattr(args, "reads", None) or {}).items()
              for path in _paths_named(getattr(args, dest, None))]
    written = []
    for dest, what in (getattr(args, "writes", None) or {}).items():
        path = getattr(args, dest, None)
        if not isinstance(path, str) or path in ("", "-"):
            continue
        for name, source in inputs:
            if _same_file(path, source):
                raise InputError(f"{what} names the file of {name}, an input of the command: writing it "
                                 f"would destroy that input", path=path)
        target = replaced_file(path)        # None: a device, written in place
        for other, earlier in written:
            if target is not None and (target == replaced_file(earlier) or _same_file(path, earlier)):
                raise InputError(f"{what} and {other} name the same file: one would replace the other",
                                 path=path)
        written.append((what, path))


def _paths_named(value):
    """The file names in an argument's value: a name, a list of names
    (RAW...), TYPE=FILE (both the whole and the part after '=')."""
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str) and item:
            yield item
            if "=" in item:
                yield item.partition("=")[2]


def _same_file(output, source):
    """Whether writing the regular file ``output`` would replace ``source``
    ('-': standard input, when it is read from a file)."""
    try:
        if not os.path.isfile(output):
            return False
        if source == "-":
            return os.path.samestat(os.fstat(sys.stdin.fileno()), os.stat(output))
        return os.path.samefile(output, source)
    except (OSError, ValueError, AttributeError):
        return False


def _load_sequence_model(path, command):
    """The model at ``path``, refused in one line when it is a linear
    estimator (``fasttag.linear``), which tags no sequences."""
    model = load(path)
    if not hasattr(model, "tag_file"):
        raise InputError(f"{path} holds the estimator {type(model).__name__}, not a sequence model: "
                         f"'fasttag {command}' cannot use it (load it in Python)")
    return model


def _read_gazetteer(path):
    from .features.gazetteers import read_gazetteer
    return read_gazetteer(path)


def tag_command(args):
    bundled, _ = TAG_COMMANDS[args.command]
    if getattr(args, "to", None) is None and not args.json:        # the output file's name says the format
        wanted = _format_of(args.output, "to" in args)
        if wanted == "json":
            args.json = True
        elif wanted is not None:
            args.to = wanted
    nbest = getattr(args, "nbest", None)
    if nbest is not None and not 1 <= nbest <= MAX_NBEST:
        raise InputError(f"--nbest must be from 1 to {MAX_NBEST}, not {nbest}")
    if nbest is not None and not args.json:
        raise InputError("--nbest writes JSON Lines: add --json")
    if args.output is not None and args.output != "-":
        _check_output(args.output, "-o")
    if args.model is None and _wants_full_conllu(args):
        bundled = "en-ud"                       # CoNLL-U with every column: the bundled English pipeline
    path = _model_path(args.model, "-m") if args.model is not None else default_model_path(bundled)
    source = _input_path(args.input, "INPUT", stdin_ok=True)
    model = _load_sequence_model(path, args.command)
    if args.command not in model.commands:
        # named as the user named it (a bundled name is no installation path), with the commands that take it
        entry = registry.TASKS.get(getattr(model, "task", None))
        what = entry.title if entry is not None else model.kind
        uses = " or ".join(f"'fasttag {c}'" for c in model.commands)
        raise InputError(f"-m {args.model or bundled}: {'an' if what[0] in 'aeiou' else 'a'} {what} model, which "
                         f"'fasttag {args.command}' does not run" + (f": use {uses}" if uses else ""))
    model = model.for_command(args.command)     # a pipeline tokenizes with its own tokenizer
    given = {"json": args.json} if args.json else {}
    if nbest is not None:
        given["nbest"] = nbest
    if args.command in ("tag", "ner"):
        given.update(_text_input(args, model))
    to = getattr(args, "to", None)
    if to is not None:
        if args.json and to != "json":
            raise InputError(f"--json writes JSON Lines, not --to {to}: give one")
        if to == "conllu":          # every model that fills a word column, as a pipeline
            from .pipeline import Pipeline
            model = Pipeline.of(model, given.pop("column", None))
        given["to"] = to
    if args.command == "segment" and args.dict:
        # a Path: the file's name, never words; a bad line is an
        # InputError naming the file and the line
        model.add_words(Path(_input_path(args.dict, "--dict")), mode="force")
    with _output(None if args.output == "-" else args.output) as out:
        model.tag_file(source, out, n_threads=args.threads, **given)
    return 0


def _format_of(output, takes_conllu):
    """The output format an output file's name asks for (``.conllu``,
    ``.jsonl``), where the command writes it; else None."""
    name = str(output or "").lower()
    if name.endswith(".conllu") and takes_conllu:
        return "conllu"
    if name.endswith(".jsonl"):
        return "json"
    return None


def _wants_full_conllu(args):
    """``tag --to conllu`` without a model, tokenizer or column: the user
    asks for UD's columns, which the bundled pipeline fills (the bundled
    UPOS tagger alone fills one)."""
    return (args.command == "tag" and getattr(args, "to", None) == "conllu" and args.tokenizer is None
            and getattr(args, "column", None) is None)


def _text_input(args, model):
    """The reading keywords of ``tag`` and ``ner`` for ``model``'s tag_file."""
    fmt = getattr(args, "format", None)
    if args.pretokenized:
        if fmt not in (None, "text"):
            raise InputError(f"--pretokenized reads text, not --format {fmt}")
        fmt = "text"
    given = {"format": fmt} if fmt else {}
    if args.tokenizer is not None:
        if fmt not in (None, "raw"):
            raise InputError("--tokenizer applies to raw text, not to --pretokenized or --format input")
        from .tasks.base import tokenizer_of
        given["tokenizer"] = tokenizer_of(_model_path(args.tokenizer, "--tokenizer"))
    column = getattr(args, "column", None)
    if "ner" in model.commands:         # a span tagger: it writes spans, of no column
        if column is not None:
            raise InputError("--column applies to POS tagger models only")
        if args.command == "ner" and not args.json:
            given["entities"] = True
    elif column is not None:
        given["column"] = column
    return given


@contextlib.contextmanager
def _output(path):
    """A text stream to ``path`` that appears only when complete (a
    temporary file renamed at the end), or to standard output, flushed
    whenever the input pauses (a pipe given a line at a time gets the
    output of each line as soon as it is tagged)."""
    if path is None:
        from .parallel import before_waiting
        out = _io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="surrogateescape",
                                newline="\n", write_through=False)
        try:
            with before_waiting(out.flush):
                yield out
        finally:
            try:
                out.flush()
            finally:
                out.detach()
        return
    with contextlib.ExitStack() as stack:
        try:
            out = stack.enter_context(atomic_file(path, "w", encoding="utf-8", errors="surrogateescape",
                                                  newline="\n"))
        except OSError as exc:
            raise InputError(f"cannot write the output ({exc.strerror})", path=path) from None
        yield out


def eval_command(args):
    test = _input_path(args.test, "TEST", stdin_ok=True)
    model = _load_sequence_model(_model_path(args.model, "MODEL"), "eval")
    given = _given(args, [o.name for o in options.OPTIONS if "eval" in o.phases])
    if not model.commands:              # a model of Python objects (feature dicts): no file holds its input
        raise InputError(f"{args.model} is a {model.kind} model: it reads Python objects, not files; "
                         f"evaluate it from Python")
    options.resolve(model._eval_task(), "eval", given, cli=True)       # refuse what does not apply
    if "words" in given:
        given["words"] = _input_path(given["words"], "--words")
    try:
        result = model.evaluate(test, n_threads=args.threads, **given)
    except InputError as exc:
        if exc.path is not None or str(exc).startswith(f"{args.test}:"):
            raise
        raise InputError(str(exc), path=args.test) from None       # name the file at fault
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(printable(model.report(result), keep="\n"))
    return 0


def inspect_command(args):
    from .model import inspection
    if args.top < 1:
        raise InputError(f"--top must be at least 1, not {args.top}")
    model = load(_model_path(args.model, "MODEL"))
    if args.data is not None:
        _input_path(args.data, "--data")
    if args.part is not None:
        try:
            model = inspection.part_of(model, args.part)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        if not inspection.is_sequence_model(model):
            raise InputError(f"--part: the {args.part} part is a {type(model).__name__}: inspect reads sequence "
                             f"models")
    elif inspection.has_parts(model):      # a line per part; --part shows one
        if args.data is not None:
            raise InputError(f"--data reads the words of one part of a UD pipeline: name it with --part (one "
                             f"of {', '.join(inspection.parts_of(model))})")
        desc = inspection.describe(model)
        with _output(None) as out:
            if args.json:
                inspection.write_json(desc, out)
            else:
                out.write(printable(inspection.report(desc), keep="\n") + "\n")
        return
    if not hasattr(model, "model"):
        raise InputError(f"{args.model} is a {type(model).__name__} estimator: inspect reads sequence models")
    try:
        desc = inspection.describe(model, args.data, args.top, with_transitions=False)
    except TypeError as exc:
        raise InputError(f"--data: {exc}") from None
    except InputError as exc:
        if exc.path is not None:
            raise
        raise InputError(str(exc), path=args.data) from None       # name the file at fault
    trans = inspection.transitions(model.model)        # read a row at a time, never copied
    with _output(None) as out:
        if args.json:
            inspection.write_json(desc, out, trans)
        else:
            out.write(printable(inspection.report(desc, transitions=trans), keep="\n") + "\n")


def plot_command(args):
    from .plot import figure_format, history, learning_curves, need_matplotlib
    figure_format(args.output)
    need_matplotlib()
    labels = args.labels.split(",") if args.labels else [os.path.basename(m) for m in args.models]
    if len(labels) != len(args.models):
        raise InputError(f"--labels names {len(labels)} curves for {len(args.models)} models")
    models = [load(m) for m in args.models]
    for model, path in zip(models, args.models):         # what is wrong with a model names its file
        if history(model, path)["updates_per_epoch"] is None and args.x == "updates":
            raise InputError("the model does not record its number of updates (--x updates)", path=path)
    learning_curves(*models, labels=labels, x=args.x, path=args.output)
    return 0


def cluster_command(args):
    import time
    from .text import rawtext
    from .tasks.base import tokenizer_of
    from .features.clusters import cluster
    given = _given(args, [o.name for o in options.for_cli("cluster", "cluster")])
    opts = options.resolve("cluster", "cluster", given, cli=True)
    if args.raw.count("-") > 1:
        raise InputError("RAW names standard input ('-') twice")
    paths = [_input_path(p, "RAW", stdin_ok=True) for p in args.raw]
    _check_output(args.output, "-o")
    tokenizer = None if args.pretokenized or args.chars else tokenizer_of(None)
    sentences = []
    t0 = time.perf_counter()
    for path in paths:
        lines = ftio.read_lines(path, "the raw text")
        if args.chars:
            from .features.segmentation import character_sentences
            sentences.extend(character_sentences(lines))
            continue
        found = rawtext.pretokenized_sentences(lines) if args.pretokenized else rawtext.raw_sentences(lines, tokenizer)
        sentences.extend(s.words for s in found)
    n_tokens = sum(map(len, sentences))
    if not args.quiet:
        _say(f"read {n_tokens:,} tokens in {time.perf_counter() - t0:.1f} s")
    t1 = time.perf_counter()
    clusters = cluster(sentences, n_clusters=opts["n_clusters"], min_count=opts["min_count"],
                       seed=opts["seed"], iterations=opts["iterations"])
    try:
        clusters.save(args.output)
    except OSError as exc:
        raise InputError(f"cannot write the clusters ({exc.strerror})", path=args.output) from None
    if not args.quiet:
        _say(f"saved {args.output}: {len(clusters):,} words in {len(set(clusters.values())):,} clusters "
             f"({time.perf_counter() - t1:.1f} s)")
    return 0


# ---------------------------------------------------------------- dispatch

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
            warnings.showwarning = functools.partial(_warning, flags=flags, commands=commands)
            _refuse_outputs_on_inputs(args)
            return COMMANDS[args.command](args)
    except FasttagError as exc:
        hint = ""
        if getattr(exc, "undecodable", False) and not encoding:
            hint = " (not UTF-8? name its encoding, e.g. --encoding gbk)"
        _error(options.cli_text(f"{exc}{hint}", flags, commands))      # Python's option names as flags
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:                 # a missing or unreadable file the user named
        where = f"{exc.filename}: " if exc.filename is not None else ""
        _error(f"{where}{exc.strerror or exc}")
        return 2
    except KeyboardInterrupt:
        print("fasttag: interrupted", file=sys.stderr)
        return 130


def _warning(message, category, filename, lineno, file=None, line=None, flags=None, commands=None):
    """A warning on the command line: one line, ``fasttag: warning: ...``."""
    print(f"fasttag: warning: {_one_line(options.cli_text(str(message), flags, commands))}", file=sys.stderr)


def _error(message):
    """The one line of a user error: ``fasttag: error: what is wrong``."""
    print(f"fasttag: error: {_one_line(message)}", file=sys.stderr)


#: The longest error or warning line, for any message whose quotes were not
#: capped where it was written (:func:`fasttag.display.quote`).
MAX_MESSAGE = 2000


def _one_line(message):
    """``message`` on one line, its characters printable (a model's
    strings may hold escape sequences) and its length capped."""
    return cut(printable(" ".join(str(message).split())), MAX_MESSAGE)


def _say(text):
    """A line of human-readable text on standard error, its characters printable."""
    print(printable(text), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
