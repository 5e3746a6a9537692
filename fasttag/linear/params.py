"""Parameter checks of the linear learners.

One set of checks for fit and for loading: a model that fits also loads,
and a loaded model's parameters are ones fit would have accepted.
"""
import math
import numbers

import numpy as np

MAX_COUNT = 2 ** 62     # step counters: far beyond any run, far from int64 overflow


def check_counter(count, n_steps):
    """Refuse an epoch that would take a step counter past MAX_COUNT, so a
    model trained further always saves a file that loads again."""
    if count + n_steps > MAX_COUNT:
        raise ValueError(f"this model's step counter ({count}) would pass 2**62 in this epoch: "
                         "it cannot be trained further")


def is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def is_real(v):
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def check_bool(est, name):
    v = getattr(est, name)
    if not isinstance(v, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {v!r}")


def check_int(est, name, lo, hi=None, none=False):
    v = getattr(est, name)
    if v is None and none:
        return
    if not (is_int(v) and v >= lo and (hi is None or v <= hi)):
        what = f"an int >= {lo}" if hi is None else f"an int in [{lo}, {hi}]"
        raise ValueError(f"{name} must be {'None or ' if none else ''}{what}, got {v!r}")


def check_real(est, name, lo=None, lo_open=False, none=False):
    """A finite real (no NaN, no infinity: they make every weight NaN)."""
    v = getattr(est, name)
    if v is None and none:
        return
    try:
        ok = is_real(v) and math.isfinite(v)
    except OverflowError:     # an int past the float range
        ok = False
    if ok and lo is not None:
        ok = v > lo if lo_open else v >= lo
    if not ok:
        what = "a finite number" + ("" if lo is None else f" {'>' if lo_open else '>='} {lo}")
        raise ValueError(f"{name} must be {'None or ' if none else ''}{what}, got {v!r}")


def check_choice(est, name, choices):
    v = getattr(est, name)
    if not any(v is c or (isinstance(v, str) and v == c) for c in choices):
        raise ValueError(f"{name} must be one of {list(choices)}, got {v!r}")
