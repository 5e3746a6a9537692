"""What a linear model file may hold, checked as it loads.

Model files may come from anyone: every header entry, parameter, array and
class label is checked before an estimator is built from it, with the same
bounds saving and training keep (:data:`MAX_WEIGHT`, the state bounds), so
a model that saves also loads and a model that loads predicts finite scores.
"""
import math

import numpy as np

from ..model import modelfile
from ._compat import check_classification_targets
from .params import is_int

#: The largest weight a model file may hold (float32's largest): scores of
#: ordinary inputs then stay finite.  No converging fit comes near it.
MAX_WEIGHT = float(np.finfo(np.float32).max)

#: The featurizer of each input kind: feature strings are hashed (so the
#: hash function matters); numeric columns are taken as they are.
FEATURIZERS = {"features": "hashed-features", "numeric": "numeric-columns"}

HEADER_KEYS = frozenset({"kind", "hash", "featurizer", "params", "input_kind", "n_iter", "loss_curve", "n_features_in",
                          "feature_names_in", "classes", "classes_dtype"})


def short(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(msg, limit=400):
    msg = " ".join(msg.split())
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


def checked_estimator(est):
    """``est`` once its parameters pass its own checks (a ValueError
    naming them otherwise): the first step of loading a file."""
    try:
        est._check_params()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"params: {exc}") from None
    return est


def checked_input_kind(header):
    """A model header's input kind, checked together with the featurizer
    stamp it implies."""
    input_kind = header.get("input_kind")
    if not (isinstance(input_kind, str) and input_kind in ("features", "numeric")):
        raise ValueError(f"input_kind must be 'features' or 'numeric', got {short(input_kind)}")
    modelfile.check_stamp(header, FEATURIZERS[input_kind], 1)
    return input_kind


def set_feature_names(est, header):
    """``feature_names_in_`` from a model header (the DataFrame columns a
    numeric model was fitted on), checked against ``n_features_in_``."""
    names = header.get("feature_names_in")
    if names is None:
        return
    if est._input_kind != "numeric":
        raise ValueError("feature_names_in belongs to models of numeric inputs")
    if not (isinstance(names, list) and len(names) == est.n_features_in_ and all(type(n) is str for n in names)
            and len(set(names)) == len(names)):
        raise ValueError(f"feature_names_in must be {est.n_features_in_} distinct strings")
    est.feature_names_in_ = np.asarray(names, dtype=object)


def storable_classes(classes):
    """``classes`` (at least two), once a model file can keep them: fit
    refuses labels that saving could not write back (a ValueError)."""
    try:
        classes_from_json(classes_to_json(classes), classes.dtype.str)
    except ValueError as exc:
        raise ValueError(f"class labels of dtype {classes.dtype} cannot be kept in a model file ({exc}): "
                         "give them as strings or numbers") from None
    return classes


def check_state_bound(name, values, bound, what="values", limit=None):
    """A ValueError naming ``state.<name>`` when some of ``values`` (the
    array, or a quantity derived from it) lies beyond ``bound`` in absolute
    value (a number, or an array that broadcasts: ``limit`` then says what
    it is); NaN and overflow count as beyond.

    Why the bounds: a model file may hold weights up to :data:`MAX_WEIGHT`
    (float32's largest), so the weights training leaves in the state are
    within it too, and an accumulator that sums the weights of ``n`` steps
    is within ``n * MAX_WEIGHT`` (at most 2**62 * 3.4e38, about 1.6e57).
    Within these bounds every product and sum of a further epoch stays far
    from float64's 1.8e308; state beyond them (1e308, say) is no state that
    training saves, and continuing from it overflows.  Saving checks the
    same bounds, so a model that saves also loads."""
    with np.errstate(over="ignore", invalid="ignore"):
        ok = bool(np.all(np.abs(values) <= bound))
    if not ok:
        raise ValueError(f"state.{name} holds {what} beyond {limit or f'{float(bound):.3g}'}")


def check_finite_weights(est, *arrays):
    """A ValueError when training left a weight NaN or infinite (the
    steps diverged), rather than a model that predicts NaN."""
    if not all(np.all(np.isfinite(a)) for a in arrays):
        steps = getattr(est, "_step_params", None)
        raise ValueError(f"{type(est).__name__} diverged: its weights became NaN or infinite; scale the "
                         f"inputs{f' or take smaller steps ({steps})' if steps else ''}")


def checked_params(cls, params):
    """The saved constructor arguments, if they are JSON scalars named like
    the constructor's (ranges are checked by ``_check_params``)."""
    if not isinstance(params, dict):
        raise ValueError("params must be a JSON object")
    unknown = sorted(set(params) - set(cls._get_param_names()))
    if unknown:
        raise ValueError(f"unknown params {short(unknown)}")
    for name, value in params.items():
        if not (value is None or isinstance(value, (bool, int, float, str))):
            raise ValueError(f"param {name} must be a JSON scalar, got {short(value)}")
    return params


def stored_array(arrays, name, dtype, shape=None):
    """arrays[name], which must exist with exactly this dtype (and shape)."""
    if name not in arrays:
        raise ValueError(f"missing array {name!r}")
    arr = arrays[name]
    if arr.dtype != np.dtype(dtype):
        raise ValueError(f"array {name!r} must be {np.dtype(dtype).name}, got {arr.dtype.name}")
    if shape is not None and arr.shape != tuple(shape):
        raise ValueError(f"array {name!r} must have shape {tuple(shape)}, got {arr.shape}")
    return arr


def classes_to_json(classes):
    kind = classes.dtype.kind
    items = classes.tolist()
    if kind in "iu":
        return [int(c) for c in items]
    if kind == "b":
        return [bool(c) for c in items]
    if kind == "f":
        return [float(c) for c in items]
    if kind == "S":
        return [c.decode("latin-1") for c in items]
    if kind == "O" and items and all(is_int(c) for c in items):
        return [int(c) for c in items]
    return [str(c) for c in items]


def classes_from_json(values, dtype_str):
    """The classes_ array written by :func:`classes_to_json`: at least two,
    distinct and ascending (partial_fit maps labels by binary search), each
    exactly representable in the stated dtype."""
    if not isinstance(values, list) or not isinstance(dtype_str, str):
        raise ValueError("classes must be a list and classes_dtype a dtype string")
    try:
        dt = np.dtype(dtype_str)
    except (TypeError, ValueError):
        raise ValueError(f"classes_dtype {short(dtype_str)} is not a numpy dtype") from None
    if dt.kind not in "biufUSO" or dt.fields is not None or dt.subdtype is not None:
        raise ValueError(f"classes_dtype {short(dtype_str)} cannot hold class labels")
    n = len(values)
    if n < 2:
        raise ValueError(f"a classifier needs at least 2 classes, got {n}")
    if n * max(dt.itemsize, 1) > 2 ** 26:
        raise ValueError("the classes take more than 64 MiB")
    kind = dt.kind
    if kind == "b":
        ok = all(type(v) is bool for v in values)
    elif kind in "iu":
        info = np.iinfo(dt)
        ok = all(type(v) is int and info.min <= v <= info.max for v in values)
    elif kind == "f":
        ok = all(type(v) in (int, float) and math.isfinite(v) for v in values)
    elif kind in "US":
        ok = all(type(v) is str for v in values)
        if ok and kind == "S":
            try:
                values = [v.encode("latin-1") for v in values]
            except UnicodeEncodeError:
                ok = False
        width = dt.itemsize // (4 if kind == "U" else 1)
        if ok and width and max(map(len, values)) > width:
            raise ValueError(f"classes are longer than classes_dtype {dtype_str!r} holds")
    else:
        ok = all(type(v) is str for v in values) or all(type(v) is int for v in values)
    if not ok:
        raise ValueError(f"classes do not fit classes_dtype {short(dtype_str)}")
    if kind == "O":
        arr = np.empty(n, dtype=object)
        arr[:] = values
    else:
        with np.errstate(over="ignore"):
            arr = np.array(values, dtype=dt)
    if kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"classes overflow classes_dtype {dtype_str!r}")
    if kind in "US" and arr.tolist() != values:     # numpy drops trailing NULs
        raise ValueError("classes with trailing NUL characters")
    if not np.all(arr[1:] > arr[:-1]):
        raise ValueError("classes must be distinct and in ascending order")
    try:
        check_classification_targets(arr)        # what fit requires of y: no 0.5, no object ints
    except ValueError as exc:
        reason = str(exc).split(". ")[0]
        raise ValueError(f"classes that fit would refuse as labels ({reason})") from None
    return arr
