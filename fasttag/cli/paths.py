"""The files a command names, checked before any work: each input opened
(``-``: standard input where it may be), each model a bundled name or a
file, each output writable, and no output replacing an input or another
output."""
import os
import sys
import tempfile

from ..errors import InputError, ModelFormatError
from ..files import replaced_file
from ..model.modelfile import open_model
from ..store import default_model_path, is_bundled_name, is_plain_name, not_found


def input_path(path, what, stdin_ok=False, opener=None):
    """``path`` of an input file the user named (``what``: its argument),
    checked before any work by opening it.  "-" is standard input where ``stdin_ok``."""
    if path == "-":
        if stdin_ok:
            return sys.stdin.buffer
        raise InputError(f"{what} must be a file: standard input ('-') is read only as the main input")
    if path == "":
        raise InputError(f"{what} is an empty file name")
    if not os.path.exists(path):
        raise InputError(f"{what}: no such file", path=path)
    if os.path.isdir(path):
        raise InputError(f"{what} is a folder, not a file", path=path)
    try:
        with (opener or (lambda p: open(p, "rb")))(path):
            pass
    except OSError as exc:
        raise InputError(f"{what}: cannot read ({exc.strerror or exc})", path=path) from None
    except ModelFormatError as exc:           # a model path that is not a regular file
        raise InputError(f"{what}: {exc}") from None
    return path


def model_path(path, what):
    """A model the user named: a bundled name (always the bundled model) or a
    file, checked by opening it as models are (a named pipe is refused)."""
    if is_bundled_name(path):
        return default_model_path(path)
    if is_plain_name(path) and not os.path.exists(path):
        raise InputError(f"{what}: {not_found(path)}", path=path)
    return input_path(path, what, opener=open_model)


def check_output(path, what):
    """Refuse, before any work, an output ``path`` that cannot be written.  A
    symbolic link is checked where the save writes: its target's folder."""
    if path == "-":
        raise InputError(f"{what}: the model is written to a file, not to standard output")
    if path == "":
        raise InputError(f"{what} is an empty file name")
    if path.endswith(("/", os.sep)):
        raise InputError(f"{what} names a folder (it ends with {path[-1]}): give a file name", path=path)
    if os.path.isdir(path):
        raise InputError(f"{what} is a folder: give a file name", path=path)
    target = replaced_file(path)
    if target is None:
        return                      # a device, a pipe, /dev/stdout: written in place
    folder = os.path.dirname(target)
    shown = f"{folder} (of the link's target {target})" if os.path.islink(path) else os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        state = "is a file, not a folder" if os.path.exists(folder) else "does not exist"
        raise InputError(f"{what}: the folder {shown} {state}", path=path)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".fasttag-check-", suffix=".tmp")
    except OSError as exc:
        raise InputError(f"{what}: cannot write in {shown} ({exc.strerror or exc})", path=path) from None
    os.close(fd)
    os.unlink(tmp)


def refuse_outputs_on_inputs(args):
    """Before any work: no output may be a file the command reads (through
    links too), nor another of its outputs.  The inputs are those the
    parser records (:mod:`fasttag.cli.parser`), so a new input option is
    protected by being declared one."""
    inputs = [(name, path) for dest, name in (getattr(args, "reads", None) or {}).items()
              for path in _paths_named(getattr(args, dest, None))]
    written = []
    for dest, what in (getattr(args, "writes", None) or {}).items():
        path = getattr(args, dest, None)
        if not isinstance(path, str) or path in ("", "-"):
            continue
        for name, source in inputs:
            if _same_file(path, source):
                raise InputError(f"{what} names the file of {name}, an input of the command: writing it "
                                 f"would destroy that input", path=path)
        target = replaced_file(path)        # None: a device, written in place
        for other, earlier in written:
            if target is not None and (target == replaced_file(earlier) or _same_file(path, earlier)):
                raise InputError(f"{what} and {other} name the same file: one would replace the other",
                                 path=path)
        written.append((what, path))


def _paths_named(value):
    """The file names in an argument's value: a name, a list of names
    (RAW...), TYPE=FILE (both the whole and the part after '=')."""
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str) and item:
            yield item
            if "=" in item:
                yield item.partition("=")[2]


def _same_file(output, source):
    """Whether writing the regular file ``output`` would replace ``source``
    ('-': standard input, when it is read from a file)."""
    try:
        if not os.path.isfile(output):
            return False
        if source == "-":
            return os.path.samestat(os.fstat(sys.stdin.fileno()), os.stat(output))
        return os.path.samefile(output, source)
    except (OSError, ValueError, AttributeError):
        return False
