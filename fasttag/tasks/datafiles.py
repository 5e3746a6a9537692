"""The data given to ``train`` and ``evaluate`` as files: how messages
name it (its path, or what it is when given as Python objects) and the
refusal of a dev file that is the training file itself.

The tasks' base class, the pipeline and the command line check and name
their data the same way: one module for it.
"""
from __future__ import annotations

import os
import stat

from ..errors import InputError


def data_name(data):
    """How progress lines name training data: its path, or what it is."""
    return path_of(data) or f"{type(data).__name__} of Python objects"


def naming(exc, data):
    """``exc`` naming the file of ``data`` when it names none yet."""
    path = path_of(data)
    if exc.path is not None or path is None:
        return exc
    return InputError(str(exc), path=path)


def refuse_dev_on_train(train, dev, what="option dev"):
    """An InputError when ``dev`` is the training file ``train``, however
    named (another spelling, a link) or opened: the best epoch would be
    chosen on the data it learned from.  The same file only, not the same
    content: a copy is the caller's choice.  ``what``: how the error names
    ``dev``.  Data given as Python objects is not checked."""
    train_stat, dev_stat = _regular_file_stat(train), _regular_file_stat(dev)
    if train_stat is None or dev_stat is None or not os.path.samestat(train_stat, dev_stat):
        return
    dev_name, train_name = path_of(dev) or "the dev file", path_of(train)
    if train_name is None or train_name == "<stdin>":
        train_name = "standard input"
    names = dev_name if dev_name == train_name else f"{dev_name} is {train_name}"
    raise InputError(f"{what} names the training file ({names}): the best epoch would be chosen on the data "
                     f"it learned from; give held-out data")


def _regular_file_stat(data):
    """The stat of the regular file ``data`` names (a path) or reads (a file
    with a descriptor); None for anything else or what cannot be stat'ed."""
    try:
        if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__"):
            st = os.stat(data)
        elif hasattr(data, "fileno") and hasattr(data, "read"):
            st = os.fstat(data.fileno())
        else:
            return None
    except (OSError, ValueError, TypeError, AttributeError):   # no such file, no descriptor (io.BytesIO)
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def path_of(data):
    """The file name of ``data`` for messages, or None."""
    if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__"):
        return os.fsdecode(os.fspath(data))
    name = getattr(data, "name", None)
    return name if isinstance(name, str) else None
