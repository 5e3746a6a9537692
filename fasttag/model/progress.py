"""Training progress on standard error.

Lines are written whether or not standard error is a terminal (log files
need them); on a terminal a live bar is also redrawn in place and erased
before the next line.  Hand-written: no dependency, and logs get the lines.
"""
import sys
import time

from ..display import printable


class Progress:
    """Progress of one training run named ``name`` ("pos", "seg" ...).
    ``enabled``: write anything at all; the bar also needs a terminal."""

    def __init__(self, name, enabled=True, stream=None):
        self.name = name
        self.stream = sys.stderr if stream is None else stream
        self.enabled = bool(enabled)
        try:
            self.live = self.enabled and self.stream.isatty()
        except (AttributeError, ValueError, OSError):
            self.live = False
        self._drawn = 0
        self._last = 0.0

    def line(self, text):
        """One line of progress (erasing the bar first)."""
        if not self.enabled:
            return
        self.clear()
        self._write(printable(f"[fasttag {self.name}] {text}") + "\n")

    def bar(self, label, done, total, started, unit_count, unit):
        """Redraw the live bar: ``done`` of ``total`` since ``started`` (a
        ``time.perf_counter()``), ``unit_count`` ``unit``s so far (the rate)."""
        if not self.live:
            return
        now = time.perf_counter()
        if now - self._last < 0.1 and done < total:
            return
        self._last = now
        elapsed = max(now - started, 1e-9)
        frac = done / total if total else 1.0
        eta = elapsed * (1 - frac) / frac if frac > 0 else 0.0
        width = 24
        filled = int(width * frac)
        head = printable(f"[fasttag {self.name}] {label}")
        text = (f"{head} [{'#' * filled}{'.' * (width - filled)}] {100 * frac:3.0f}%  "
                f"{unit_count / elapsed:,.0f} {unit}/s  ETA {_clock(eta)}")
        pad = max(self._drawn - len(text), 0)
        self._write("\r" + text + " " * pad)
        self._drawn = len(text)

    def clear(self):
        """Erase the live bar, if one is drawn."""
        if self._drawn:
            self._write("\r" + " " * self._drawn + "\r")
            self._drawn = 0

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = self.live = False      # a closed or broken stream: stop reporting


def _clock(seconds):
    seconds = int(seconds + 0.5)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
