"""Work on many threads, results in input order, in bounded memory.

The compiled steps release the GIL over a whole chunk and share only
read-only state, so there is no lock on the hot path.

Streaming input: a reader of a pipe or a terminal (:mod:`fasttag.text.sources`)
says when its next line is not there yet (:func:`input_would_wait`).  Then
the batchers end their batch early and :func:`ordered_map` hands back every
result it holds, so that all that was read is written before the reader
waits; just before it waits, the reader runs the hooks of
:func:`before_waiting` (the command line flushes its output there).  A file
never waits: its batches stay full.
"""
import contextlib
import os
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: the most threads one call may ask for (memory grows with the chunks in
#: flight, a few per thread)
MAX_THREADS = 256

#: chunks in flight per thread: enough to keep every thread busy while the
#: caller reads input and writes output, few enough to bound memory
AHEAD_PER_THREAD = 2


def available_cores():
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def check_threads(n_threads, what="n_threads"):
    """The number of threads ``n_threads`` asks for: an integer from 1 to
    MAX_THREADS, or 0 for :func:`available_cores`.  Anything else is a
    ValueError (an InputError naming ``what``, the option)."""
    from .errors import InputError
    if isinstance(n_threads, bool) or not isinstance(n_threads, (int, np.integer)) \
            or not 0 <= n_threads <= MAX_THREADS:
        raise InputError(f"{what} must be a number of threads from 1 to {MAX_THREADS}, or 0 for every "
                         f"core, not {n_threads!r}")
    return int(n_threads) or available_cores()


def ordered_map(fn, items, n_threads=1, ahead=None):
    """``fn(item)`` for each of ``items`` (read lazily), in input order, on
    ``n_threads`` threads with at most ``ahead`` items in flight.  An
    exception of ``fn`` is raised where its item's result would have come."""
    n_threads = check_threads(n_threads)
    if n_threads == 1:
        return map(_working(fn), items)
    return _pooled(fn, items, n_threads, ahead or AHEAD_PER_THREAD * n_threads)


def _pooled(fn, items, n_threads, ahead):
    pool = ThreadPoolExecutor(n_threads, thread_name_prefix="fasttag")
    pending = deque()
    try:
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= ahead:
                yield pending.popleft().result()
            if pending and input_would_wait():      # the input pauses: all it gave, before it waits
                while pending:
                    yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True)


def batches(items, max_tokens=50_000, size=len):
    """Lists of consecutive ``items`` (read lazily) of about ``max_tokens``
    tokens each (``size(item)``: an item's tokens); shorter where the
    input pauses (:func:`input_would_wait`)."""
    batch, n = [], 0
    for item in items:
        batch.append(item)
        n += size(item)
        if n >= max_tokens or input_would_wait():
            yield batch
            batch, n = [], 0
    if batch:
        yield batch


def map_batches(fn, items, n_threads=1, max_tokens=50_000, size=len):
    """``fn(batch)`` (a list of results, one per item) over :func:`batches`
    of ``items`` on ``n_threads`` threads: one list of results, in order."""
    out = []
    for part in ordered_map(fn, batches(items, max_tokens, size), n_threads):
        out.extend(part)
    return out


# ---------------------------------------------------------------- streaming input

_state = threading.local()


def input_would_wait():
    """Whether the input this thread reads now (a pipe or a terminal, see
    :func:`streaming_input`) has no complete line ready, so that reading on
    would wait: a batcher ends its batch there.  False for files, for
    Python objects, and inside the work of :func:`ordered_map`."""
    source = getattr(_state, "source", None)
    return source is not None and not getattr(_state, "working", False) and source.would_wait()


@contextlib.contextmanager
def streaming_input(source):
    """Within the block, the input of this thread is ``source``, whose
    ``would_wait()`` tells :func:`input_would_wait`."""
    before = getattr(_state, "source", None)
    _state.source = source
    try:
        yield source
    finally:
        _state.source = before


@contextlib.contextmanager
def before_waiting(hook):
    """Within the block, ``hook()`` runs each time this thread's input is
    about to wait for more (:func:`input_waits`): output written by then
    is complete up to the input read, so it may be flushed."""
    hooks = _state.__dict__.setdefault("hooks", [])
    hooks.append(hook)
    try:
        yield
    finally:
        hooks.remove(hook)


def input_waits():
    """Called by a reader just before it waits for input: the hooks of
    :func:`before_waiting`, the innermost first."""
    for hook in reversed(list(getattr(_state, "hooks", ()))):
        hook()


def _working(fn):
    """``fn`` run as the work of :func:`ordered_map` on the calling thread:
    it reads no input, so its own batches never end at an input pause."""
    def work(item):
        before = getattr(_state, "working", False)
        _state.working = True
        try:
            return fn(item)
        finally:
            _state.working = before
    return work
