"""``fasttag plot``: the learning curves of saved models side by side
(:mod:`fasttag.plot`)."""
import os

from ..errors import InputError
from ..store import load


def plot_command(args):
    from ..plot import figure_format, history, learning_curves, need_matplotlib
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
