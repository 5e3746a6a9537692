"""``fasttag eval``: a model's ``evaluate`` on gold data, its report or
its scores as one JSON object."""
import json

from ..display import printable
from ..errors import InputError
from ..model import options
from .parser import given_options
from .paths import input_path, model_path
from .tagging import load_sequence_model


def eval_command(args):
    test = input_path(args.test, "TEST", stdin_ok=True)
    model = load_sequence_model(model_path(args.model, "MODEL"), "eval")
    given = given_options(args, [o.name for o in options.OPTIONS if "eval" in o.phases])
    if not model.commands:              # a model of Python objects (feature dicts): no file holds its input
        raise InputError(f"{args.model} is a {model.kind} model: it reads Python objects, not files; "
                         f"evaluate it from Python")
    options.resolve(model._eval_task(), "eval", given, cli=True)       # refuse what does not apply
    if "words" in given:
        given["words"] = input_path(given["words"], "--words")
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
