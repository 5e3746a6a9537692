"""Learning curves of trained learners against epochs or updates, drawn
with matplotlib (optional) without pyplot, so no window opens and no global
state changes.
"""
import math
import os

from .errors import FasttagError
from .files import atomic_file

#: Size of a saved figure in pixels: (width per panel, height) at DPI.
PANEL_INCHES = (5.0, 3.6)
DPI = 100

__all__ = ["learning_curves", "history", "save_figure"]


def need_matplotlib():
    """matplotlib's Figure and canvas classes; a FasttagError saying how to
    install it where it is missing (commands ask before any work)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise FasttagError("plotting needs matplotlib: pip install 'fasttag-nlp[plot]'") from None
    return Figure, FigureCanvasAgg


def _numbers(values, what, name):
    """A list of finite numbers from a model (whose file may come from anyone)."""
    if values is None:
        return None
    ok = isinstance(values, (list, tuple)) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)
    if not ok:
        raise FasttagError(f"{name}: its {what} is not a list of finite numbers")
    return [float(v) for v in values] or None


def history(model, name="model"):
    """The recorded curves of a trained learner or sequence model:
    ``{"objective", "train", "dev", "updates_per_epoch"}`` (lists per
    epoch, or None where the learner records no such curve)."""
    info = getattr(getattr(model, "model", None), "training_info", None)
    if isinstance(info, dict):                        # a sequence task
        train = _numbers(info.get("train_accuracy"), "training accuracy curve", name)
        dev = _numbers(info.get("dev_scores"), "dev score curve", name)
        if train is None:
            raise FasttagError(f"{name}: the model records no learning curve (trained by an older fasttag)")
        sentences = info.get("train_sentences")
        per_epoch = float(sentences) if isinstance(sentences, int) and sentences > 0 else None
        return {"objective": None, "train": train, "dev": dev, "updates_per_epoch": per_epoch}
    curve = getattr(model, "loss_curve_", None)
    if curve is None:
        raise FasttagError(f"{name}: not a trained fasttag model or estimator (no recorded history)")
    objective = _numbers(list(curve), "loss curve", name)
    dev = _numbers(getattr(model, "validation_scores_", None), "validation scores", name)
    per_epoch = None
    n_iter = getattr(model, "n_iter_", None)
    steps = getattr(model, "n_updates_", getattr(model, "t_", None))
    if isinstance(steps, int) and isinstance(n_iter, int) and n_iter > 0:
        per_epoch = steps / n_iter
    return {"objective": objective, "train": None, "dev": dev, "updates_per_epoch": per_epoch}


def learning_curves(*models, labels=None, x="epochs", log_objective=False, title=None, path=None):
    """One figure of the learning curves of ``models`` (linear estimators or
    sequence models, in any mix): the objective on the left, training and dev
    accuracy on the right.  ``x``: "epochs" or "updates".  Returns the
    matplotlib Figure; with ``path``, also writes it there (PNG, SVG or PDF).
    """
    if not models:
        raise FasttagError("learning_curves needs at least one model")
    if labels is None:
        labels = [type(m).__name__ for m in models]
    labels = list(labels)
    if len(labels) != len(models):
        raise FasttagError(f"{len(labels)} labels for {len(models)} models")
    if x not in ("epochs", "updates"):
        raise FasttagError(f"x must be 'epochs' or 'updates', not {x!r}")
    hists = [history(m, label) for m, label in zip(models, labels)]
    if x == "updates":
        for h, label in zip(hists, labels):
            if h["updates_per_epoch"] is None:
                raise FasttagError(f"{label}: the model does not record its number of updates")
    Figure, FigureCanvasAgg = need_matplotlib()
    panels = [p for p in ("objective", "accuracy")
              if any(h["objective"] if p == "objective" else (h["train"] or h["dev"]) for h in hists)]
    fig = Figure(figsize=(PANEL_INCHES[0] * len(panels), PANEL_INCHES[1]), dpi=DPI)
    FigureCanvasAgg(fig)
    axes = dict(zip(panels, fig.subplots(1, len(panels), squeeze=False)[0]))
    colours = [f"C{i % 10}" for i in range(len(hists))]

    def xs(h, n):
        scale = h["updates_per_epoch"] if x == "updates" else 1.0
        return [scale * (i + 1) for i in range(n)]

    for h, label, colour in zip(hists, labels, colours):
        if h["objective"] and "objective" in axes:
            axes["objective"].plot(xs(h, len(h["objective"])), h["objective"], color=colour, label=label)
        if "accuracy" in axes:
            if h["train"]:
                axes["accuracy"].plot(xs(h, len(h["train"])), [100 * v for v in h["train"]], color=colour,
                                      label=f"{label} (train)")
            if h["dev"]:
                axes["accuracy"].plot(xs(h, len(h["dev"])), [100 * v for v in h["dev"]], color=colour,
                                      linestyle="--", label=f"{label} (dev)")
    xlabel = "epoch" if x == "epochs" else "updates"
    if "objective" in axes:
        ax = axes["objective"]
        ax.set_xlabel(xlabel)
        ax.set_ylabel("objective")
        if log_objective:
            ax.set_yscale("log")
        ax.set_title("training objective")
    if "accuracy" in axes:
        ax = axes["accuracy"]
        ax.set_xlabel(xlabel)
        ax.set_ylabel("accuracy (%)")
        ax.set_title("accuracy")
    for ax in axes.values():
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path)
    return fig


def figure_format(path):
    """The image format a figure ``path`` names (png without a suffix);
    a FasttagError for one matplotlib is not asked to write."""
    suffix = os.path.splitext(os.fspath(path))[1].lower() or ".png"
    if suffix not in (".png", ".svg", ".pdf"):
        raise FasttagError(f"{os.fspath(path)}: the figure format must be .png, .svg or .pdf")
    return suffix[1:]


def save_figure(fig, path):
    """Write ``fig`` atomically: a failed save never leaves a half-written image."""
    path = os.fspath(path)
    fmt = figure_format(path)
    try:
        with atomic_file(path) as out:
            fig.savefig(out, format=fmt, dpi=DPI)
    except OSError as exc:
        raise FasttagError(f"{path}: cannot write the figure ({exc.strerror or exc})") from None
