"""``fasttag tag``, ``ner``, ``segment`` and ``tokenize``: the model (the
command's bundled one by default) asked whether it runs the command, then
its ``tag_file`` with the reading and writing keywords the flags give."""
from pathlib import Path

from ..errors import InputError
from ..model import registry
from ..store import default_model_path, load
from ..text.output import MAX_NBEST
from .parser import TAG_COMMANDS
from .paths import check_output, input_path, model_path
from .streams import open_output


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
        check_output(args.output, "-o")
    if args.model is None and _wants_full_conllu(args):
        bundled = "en-ud"                       # CoNLL-U with every column: the bundled English pipeline
    path = model_path(args.model, "-m") if args.model is not None else default_model_path(bundled)
    source = input_path(args.input, "INPUT", stdin_ok=True)
    model = load_sequence_model(path, args.command)
    if args.command not in model.commands:
        # named as the user named it (a bundled name is no installation path), with the commands that take it
        entry = registry.TASKS.get(getattr(model, "task", None))
        what = entry.title if entry is not None else model.kind
        uses = " or ".join(f"'fasttag {c}'" for c in model.commands)
        raise InputError(f"-m {args.model or bundled}: {'an' if what[0] in 'aeiou' else 'a'} {what} model, which "
                         f"'fasttag {args.command}' does not run" + (f": use {uses}" if uses else ""))
    if getattr(model, "pipeline_part", False):   # it reads columns others fill: run as a pipeline of one part
        from ..pipeline import Pipeline
        model = Pipeline.of(model)
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
            from ..pipeline import Pipeline
            model = Pipeline.of(model, given.pop("column", None))
        given["to"] = to
    if args.command == "segment" and args.dict:
        # a Path: the file's name, never words; a bad line is an
        # InputError naming the file and the line
        model.add_words(Path(input_path(args.dict, "--dict")), mode="force")
    with open_output(None if args.output == "-" else args.output) as out:
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
        from ..tasks.rawtext_tokenizer import tokenizer_of
        given["tokenizer"] = tokenizer_of(model_path(args.tokenizer, "--tokenizer"))
    column = getattr(args, "column", None)
    if "ner" in model.commands:         # a span tagger: it writes spans, of no column
        if column is not None:
            raise InputError("--column applies to POS tagger models only")
        if args.command == "ner" and not args.json:
            given["entities"] = True
    elif column is not None:
        given["column"] = column
    return given


def load_sequence_model(path, command):
    """The model at ``path``, refused in one line when it is a linear
    estimator (``fasttag.linear``), which tags no sequences."""
    model = load(path)
    if not hasattr(model, "tag_file"):
        raise InputError(f"{path} holds the estimator {type(model).__name__}, not a sequence model: "
                         f"'fasttag {command}' cannot use it (load it in Python)")
    return model
