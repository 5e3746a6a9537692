"""``fasttag inspect``: what :mod:`fasttag.model.inspection` describes of
a model (a UD pipeline: a line per part, or one part with ``--part``)."""
from ..display import printable
from ..errors import InputError
from ..store import load
from .paths import input_path, model_path
from .streams import open_output


def inspect_command(args):
    from ..model import inspection
    if args.top < 1:
        raise InputError(f"--top must be at least 1, not {args.top}")
    model = load(model_path(args.model, "MODEL"))
    if args.data is not None:
        input_path(args.data, "--data")
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
        with open_output(None) as out:
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
    with open_output(None) as out:
        if args.json:
            inspection.write_json(desc, out, trans)
        else:
            out.write(printable(inspection.report(desc, transitions=trans), keep="\n") + "\n")
