"""The exceptions fasttag raises.

Every error fasttag raises on purpose derives from :class:`FasttagError`, so a
caller can catch them all with one clause.
"""


class FasttagError(Exception):
    """Base class of every error fasttag raises on purpose."""


class ModelFormatError(FasttagError, ValueError):
    """A model file or byte string is not a valid fasttag model."""


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
    """Ctrl-C during training, with what was kept (a KeyboardInterrupt, so
    code that lets Ctrl-C through still does): ``epoch`` is the epoch that was
    running; ``model`` the best completed epoch's model, or None.
    """

    def __init__(self, epoch, model=None):
        self.epoch = epoch
        self.model = model
        kept = "nothing kept" if model is None else "the best completed epoch kept"
        super().__init__(f"training interrupted at epoch {epoch} ({kept})")


class WorkersLost(TrainingInterrupted):
    """Training on a Dask cluster stopped because the cluster lost its
    workers for good; kept like Ctrl-C, and ``reason`` says what happened."""

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
