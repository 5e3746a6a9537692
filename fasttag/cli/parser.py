"""The parser of every command: its flags (the option table's,
:mod:`fasttag.model.options`, and the command line's own), and the
arguments that name files each command reads or writes, which
:func:`fasttag.cli.paths.refuse_outputs_on_inputs` keeps apart."""
import argparse

from .. import __version__
from ..model import options, registry
from ..parallel import MAX_THREADS, check_threads
from ..store import BUNDLED
from ..text.output import MAX_NBEST
from ..text.sources import check_encoding


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
    from .. import pipeline, tasks  # noqa: F401  (declare the package's tasks and ``train ud``)
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
        # one model's training: its curve, Dask shards (where its class trains on shards)
        if getattr(task.cls, "sharded_training", not getattr(task.cls, "composite", False)):
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


def given_options(args, names):
    """The options of ``names`` the user gave on the command line."""
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
