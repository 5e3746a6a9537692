"""The ``fasttag`` command: a thin shell over the task classes.

    fasttag train pos|seg|chunk|ner|tok TRAIN -o MODEL [options]
    fasttag tag [-m MODEL] [INPUT]           POS tags, or chunk/NER columns
    fasttag segment [-m MODEL] [INPUT]       Chinese word segmentation
    fasttag tokenize -m MODEL [INPUT]        tokens and sentences of raw text
    fasttag eval MODEL TEST [--json]
    fasttag plot MODEL... -o OUT.png         learning curves of saved models

The subcommands of ``train`` come from the task registry
(:mod:`fasttag.tasks`).  Their options come from the option table
(:mod:`fasttag.options`), so names, defaults, ranges and help live there.
The work is done by the models' own methods: ``train``, ``tag_file`` and
``evaluate``, and ``report`` for the text of a result.
"""
import argparse
import contextlib
import io as _io
import json
import os
import sys
import tempfile
from pathlib import Path

from . import options
from .errors import FasttagError, InputError
from .store import default_model_path, load
from .tasks import TASKS, task_class

#: The model kind each tagging command reads, and its bundled default.
TAG_COMMANDS = {
    "tag": (("tagger", "spans"), "en", "tag text, CoNLL-U or column files"),
    "segment": (("segmenter",), "zh", "segment Chinese text, one line in, one line out"),
    "tokenize": (("tokenizer",), None, "split raw text into sentences of tokens, one sentence a line"),
}


def _add_option(parser, opt, task=None):
    kwargs = {"help": opt.help, "default": None}
    if opt.choices:
        kwargs["choices"] = opt.choices
    if opt.metavar:
        kwargs["metavar"] = opt.metavar
    kwargs["type"] = opt.parse
    if opt.name == "gazetteers":
        kwargs["action"] = "append"
    default = opt.default_for(task) if task else None
    if default is not None and not isinstance(default, bool):
        kwargs["help"] += f" (default {default})"
    parser.add_argument(opt.flag, dest=opt.name, **kwargs)


def build_parser():
    # no abbreviations: --prune must never be read as --prune-k
    parser = argparse.ArgumentParser(prog="fasttag", description="Fast trainable sequence taggers.",
                                     allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train", help="train a model", allow_abbrev=False)
    tasks = train.add_subparsers(dest="task", required=True)
    for name, (_, _, _, help_text) in TASKS.items():
        p = tasks.add_parser(name, help=help_text, allow_abbrev=False)
        p.add_argument("train", metavar="TRAIN")
        p.add_argument("-o", "--output", required=True, metavar="MODEL", help="where to write the model")
        p.add_argument("--dev", metavar="DEV", help="development set: the best epoch on it is kept")
        p.add_argument("--quiet", action="store_true", help="no progress lines")
        p.add_argument("--plot", metavar="PNG", help="also write the training curve (needs matplotlib)")
        for opt in options.for_cli(name, "train"):
            _add_option(p, opt, name)

    for command, (_, bundled, help_text) in TAG_COMMANDS.items():
        p = sub.add_parser(command, help=help_text, allow_abbrev=False)
        p.add_argument("input", nargs="?", metavar="INPUT", help="input file (default: standard input)")
        p.add_argument("-m", "--model", required=bundled is None,
                       help="model file" + (f" (default: the bundled {bundled!r} model)" if bundled else ""))
        p.add_argument("-o", "--output", help="output file (default: standard output)")
        if command == "tag":
            p.add_argument("--format", choices=("text", "conllu", "conll"),
                           help="input format (guessed when omitted)")
            p.add_argument("--column", type=options.BY_NAME["column"].parse, default=None,
                           help="CoNLL-U column to fill: upos (default) or xpos")
        if command == "segment":
            p.add_argument("--dict", metavar="FILE", help="user dictionary whose words are kept whole")

    ev = sub.add_parser("eval", help="evaluate a model on gold data", allow_abbrev=False)
    ev.add_argument("model", metavar="MODEL")
    ev.add_argument("test", metavar="TEST")
    ev.add_argument("--json", action="store_true", help="print one JSON object (scores as fractions)")
    for opt in options.OPTIONS:
        if "eval" in opt.phases and opt.parse is not None:
            _add_option(ev, opt)
    pl = sub.add_parser("plot", help="draw the learning curves of saved models side by side",
                        allow_abbrev=False)
    pl.add_argument("models", nargs="+", metavar="MODEL")
    pl.add_argument("-o", "--output", required=True, metavar="OUT", help="image to write (.png, .svg, .pdf)")
    pl.add_argument("--labels", help="comma-separated curve labels (default: the file names)")
    pl.add_argument("--x", choices=("epochs", "updates"), default="epochs", help="horizontal axis")
    return parser


# ---------------------------------------------------------------- commands

def _given(args, names):
    """The options of ``names`` the user gave on the command line."""
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}


def train_command(args):
    cls, kwargs = task_class(args.task)
    given = _given(args, [o.name for o in options.for_cli(args.task, "train")])
    if "gazetteers" in given:
        lists = {}
        for item in given["gazetteers"]:
            typ, sep, path = item.partition("=")
            if not sep or not typ or not path:
                raise InputError(f"--gazetteer expects TYPE=FILE, not {item!r}")
            lists.setdefault(typ, []).extend(_read_gazetteer(path))
        given["gazetteers"] = lists
    if "dictionary" in given:
        given["dictionary"] = Path(given["dictionary"])    # a path, never words
    # options are checked before anything is read
    options.resolve(kwargs.get("task") or cls.task, "train", given, cli=True)
    if args.plot:
        from .plot import _matplotlib
        _matplotlib()                                   # refuse before training, not after
    model = cls.train(args.train, dev=args.dev, verbose=False if args.quiet else None, **kwargs, **given)
    model.save(args.output)
    if args.plot:
        from .plot import learning_curves
        learning_curves(model, labels=[os.path.basename(args.output)], path=args.plot)
    info = model.model.training_info
    score = info.get("dev_score")
    print(f"saved {args.output}: best epoch {info.get('best_epoch')}"
          + (f", dev {cls.primary} {100 * score:.2f}%" if score is not None else ""), file=sys.stderr)
    return 0


def _read_gazetteer(path):
    from .tasks.spans import read_gazetteer
    return read_gazetteer(path)


def tag_command(args):
    kinds, bundled, _ = TAG_COMMANDS[args.command]
    path = args.model or default_model_path(bundled)
    model = load(path)
    if model.kind not in kinds:
        use = next(c for c, (k, _, _) in TAG_COMMANDS.items() if model.kind in k) \
            if any(model.kind in k for k, _, _ in TAG_COMMANDS.values()) else None
        raise InputError(f"{path} is a {model.kind} model" + (f": use 'fasttag {use}'" if use else ""))
    given = {}
    if args.command == "tag":
        given = _given(args, ["format", "column"])
        if model.kind == "spans" and "column" in given:
            raise InputError("--column applies to POS tagger models only")
    if args.command == "segment" and args.dict:
        # a Path: the file's name, never words; a bad line is an
        # InputError naming the file and the line
        model.add_words(Path(args.dict), mode="force")
    source = args.input if args.input else sys.stdin.buffer
    with _output(args.output) as out:
        model.tag_file(source, out, **given)
    return 0


@contextlib.contextmanager
def _output(path):
    """A text stream to ``path`` that appears only when complete (a
    temporary file renamed at the end), or to standard output."""
    if path is None:
        out = _io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="surrogateescape",
                                newline="\n", write_through=False)
        try:
            yield out
        finally:
            try:
                out.flush()
            finally:
                out.detach()
        return
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".fasttag-out-", suffix=".tmp")
    except OSError as exc:
        raise InputError(f"cannot write the output ({exc.strerror})", path=path) from None
    try:
        with open(fd, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as out:
            yield out
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def eval_command(args):
    model = load(args.model)
    given = _given(args, [o.name for o in options.OPTIONS if "eval" in o.phases])
    options.resolve(model._eval_task(), "eval", given, cli=True)       # refuse what does not apply
    result = model.evaluate(args.test, **given)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(model.report(result))
    return 0


def plot_command(args):
    from .plot import _matplotlib, learning_curves
    _matplotlib()
    labels = args.labels.split(",") if args.labels else [os.path.basename(m) for m in args.models]
    if len(labels) != len(args.models):
        raise InputError(f"--labels names {len(labels)} curves for {len(args.models)} models")
    models = [load(m) for m in args.models]
    learning_curves(*models, labels=labels, x=args.x, path=args.output)
    return 0


# ---------------------------------------------------------------- dispatch

COMMANDS = {"train": train_command, "tag": tag_command, "segment": tag_command, "tokenize": tag_command,
            "eval": eval_command, "plot": plot_command}


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except FasttagError as exc:
        print(f"fasttag: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:                 # a missing or unreadable file the user named
        where = f"{exc.filename}: " if exc.filename is not None else ""
        print(f"fasttag: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
