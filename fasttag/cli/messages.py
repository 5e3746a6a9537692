"""What the command line says on standard error: the one line of an error
or a warning (``fasttag: error: ...``), and the progress lines of a
command, their characters printable."""
import sys

from ..display import cut, printable
from ..model import options


def warning(message, category, filename, lineno, file=None, line=None, flags=None, commands=None):
    """A warning on the command line: one line, ``fasttag: warning: ...``."""
    print(f"fasttag: warning: {one_line(options.cli_text(str(message), flags, commands))}", file=sys.stderr)


def error(message):
    """The one line of a user error: ``fasttag: error: what is wrong``."""
    print(f"fasttag: error: {one_line(message)}", file=sys.stderr)


#: The longest error or warning line, for any message whose quotes were not
#: capped where it was written (:func:`fasttag.display.quote`).
MAX_MESSAGE = 2000


def one_line(message):
    """``message`` on one line, its characters printable (a model's
    strings may hold escape sequences) and its length capped."""
    return cut(printable(" ".join(str(message).split())), MAX_MESSAGE)


def say(text):
    """A line of human-readable text on standard error, its characters printable."""
    print(printable(text), file=sys.stderr)
