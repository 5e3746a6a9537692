"""The output stream of a command: a file that appears only when
complete, or standard output."""
import contextlib
import io as _io
import sys

from ..errors import InputError
from ..files import atomic_file


@contextlib.contextmanager
def open_output(path):
    """A text stream to ``path`` that appears only when complete (a
    temporary file renamed at the end), or to standard output, flushed
    whenever the input pauses (a pipe given a line at a time gets the
    output of each line as soon as it is tagged)."""
    if path is None:
        from ..parallel import before_waiting
        out = _io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="surrogateescape",
                                newline="\n", write_through=False)
        try:
            with before_waiting(out.flush):
                yield out
        finally:
            try:
                out.flush()
            finally:
                out.detach()
        return
    with contextlib.ExitStack() as stack:
        try:
            out = stack.enter_context(atomic_file(path, "w", encoding="utf-8", errors="surrogateescape",
                                                  newline="\n"))
        except OSError as exc:
            raise InputError(f"cannot write the output ({exc.strerror})", path=path) from None
        yield out
