"""The exceptions fasttag raises.

Every error fasttag raises on purpose derives from :class:`FasttagError`, so a
caller can catch them all with one clause.
"""


class FasttagError(Exception):
    """Base class of every error fasttag raises on purpose."""


class ModelFormatError(FasttagError, ValueError):
    """A model file or byte string is not a valid fasttag model.

    Raised for empty, truncated, corrupted, foreign (wrong magic) and
    future-version files, and for headers whose sizes do not add up.
    """


class InputError(FasttagError, ValueError):
    """Malformed input data; the message names the file and the line number."""

    def __init__(self, message, path=None, line=None):
        self.path = path
        self.line = line
        where = ""
        if path is not None and line is not None:
            where = f"{path}:{line}: "
        elif path is not None:
            where = f"{path}: "
        super().__init__(where + message)


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C (KeyboardInterrupt) during training, with what was kept.

    A subclass of KeyboardInterrupt, so code that lets Ctrl-C through still
    does.  ``epoch`` is the epoch that was running; ``model`` is the trained
    model of the best completed epoch (its ``model.training_info`` records
    ``interrupted_at_epoch``), or None when no epoch was completed.  The
    command line saves ``model`` to ``-o``, so a long training is not lost.
    """

    def __init__(self, epoch, model=None):
        self.epoch = epoch
        self.model = model
        kept = "nothing kept" if model is None else "the best completed epoch kept"
        super().__init__(f"training interrupted at epoch {epoch} ({kept})")


class WorkersLost(TrainingInterrupted):
    """Training on a Dask cluster stopped because the cluster lost its
    workers for good (none for a while, or the workers running a shard
    kept dying); kept like Ctrl-C (a :class:`TrainingInterrupted`):
    ``model`` is the best completed epoch's model or None, and
    ``reason`` says what happened (also recorded as
    ``training_info["interrupted_by"]``)."""

    def __init__(self, epoch, reason, model=None):
        super().__init__(epoch, model)
        self.reason = reason
        kept = "nothing kept" if model is None else "the best completed epoch kept"
        self.args = (f"training stopped at epoch {epoch} because {reason} ({kept})",)


def shown(value, n=40):
    """``value`` quoted for an error message: ``ascii()`` (a model file's
    strings may hold newlines, escape codes or lone surrogates that a
    terminal or an encoder would choke on), cut to about ``n`` characters."""
    text = ascii(value)
    return text if len(text) <= n else text[:n - 4] + " ..."
