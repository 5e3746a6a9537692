"""Shared machinery of the linear learners: inputs, epochs, stopping, saving."""
import warnings

import numpy as np

from .. import modelfile
from .._linear import csr_scores, index_keys, take_rows
from ._compat import (HAVE_SKLEARN, BaseEstimator, ConvergenceWarning, check_classification_targets,
                      check_is_fitted, check_random_state, column_or_1d, validate_data)
from .inputs import Design, hash_features, is_feature_input, map_keys, numeric_design


class _AvailableIf:
    """A method that exists only when ``check(self)`` is true (hasattr-aware)."""

    def __init__(self, fn, check):
        self.fn = fn
        self.check = check
        self.__doc__ = fn.__doc__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        if not self.check(obj):
            raise AttributeError(f"{type(obj).__name__} has no attribute {self.fn.__name__!r} "
                                 f"with loss={getattr(obj, 'loss', None)!r}")
        return self.fn.__get__(obj, owner)


def available_if(check):
    return lambda fn: _AvailableIf(fn, check)


class LinearModel(BaseEstimator):
    """Base of every learner in :mod:`fasttag.linear`.

    Subclasses implement ``_init_state(n_columns, n_vectors, rng)``,
    ``_epoch(design, y_int, y_float, order) -> dict(objective=..., updates=...)``,
    ``_finalize()`` (sets ``self._coef`` (n_columns, K) and ``intercept_``) and
    ``_grow_state(positions, n_columns, rng)`` (new feature columns).
    Training state lives in ``self._state`` (a dict of numpy arrays).
    """

    _is_classifier = True
    _stops_on_no_update = False

    if HAVE_SKLEARN:
        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.input_tags.sparse = True
            return tags

    # ------------------------------------------------------------ inputs

    def _design(self, X, y=None, reset=True, grow=False, rng=None, need_y=False):
        """Validate and convert X (and y); returns ``(design, y)``.

        reset: a fresh fit (new column space); grow: partial_fit, where new
        feature strings get new columns; otherwise unknown features drop.
        """
        if need_y and y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        if is_feature_input(X):
            if y is not None:
                y = column_or_1d(y, warn=True)
                if len(y) != len(X):
                    raise ValueError(f"X and y have inconsistent numbers of samples: {len(X)} and {len(y)}")
                if self._is_classifier:
                    check_classification_targets(y)
                else:
                    y = np.asarray(y, dtype=np.float64)
                    if not np.all(np.isfinite(y)):
                        raise ValueError("Input y contains NaN or infinity.")
            if len(X) == 0:
                raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
            indptr, keys, values = hash_features(X, getattr(self, "n_features", None))
            if reset:
                fkeys, inverse = index_keys(keys)
                self.feature_keys_ = fkeys
                self._input_kind = "features"
                self.n_features_in_ = len(fkeys)
                return Design(indptr, inverse.reshape(-1), values), y
            if getattr(self, "_input_kind", None) != "features":
                raise ValueError(f"{type(self).__name__} was fitted on numeric arrays; "
                                 "it cannot take feature strings")
            if grow:
                new = np.setdiff1d(index_keys(keys)[0], self.feature_keys_, assume_unique=True)
                if len(new):
                    union = np.union1d(self.feature_keys_, new)
                    positions = np.searchsorted(union, self.feature_keys_)
                    self._grow_state(positions, len(union), rng)
                    self.feature_keys_ = union
                    self.n_features_in_ = len(union)
            return map_keys(indptr, keys, values, self.feature_keys_), y
        if not reset and getattr(self, "_input_kind", None) == "features":
            raise ValueError(f"{type(self).__name__} was fitted on feature strings; "
                             "give it lists of feature strings or dicts")
        kw = dict(reset=reset, accept_sparse="csr", dtype=np.float64)
        if y is None:
            X = validate_data(self, X, **kw)
        else:
            X, y = validate_data(self, X, y, y_numeric=not self._is_classifier, **kw)
            if self._is_classifier:
                check_classification_targets(y)
        if reset:
            self._input_kind = "numeric"
            if hasattr(self, "feature_keys_"):
                del self.feature_keys_
        return numeric_design(X), y

    def _n_columns(self):
        return len(self.feature_keys_) if self._input_kind == "features" else self.n_features_in_

    # ------------------------------------------------------------ training

    def _check_common(self):
        if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1):
            raise ValueError(f"max_iter must be an int >= 1, got {self.max_iter!r}")
        if self.tol is not None and not self.tol >= 0:
            raise ValueError(f"tol must be None or >= 0, got {self.tol!r}")
        nf = getattr(self, "n_features", None)
        if nf is not None and not (isinstance(nf, (int, np.integer)) and nf >= 1):
            raise ValueError(f"n_features must be None or an int >= 1, got {nf!r}")

    def _order(self, n, rng):
        if self.shuffle:
            return rng.permutation(n).astype(np.int64)
        return np.arange(n, dtype=np.int64)

    def _run(self, design, yi, yf, rng, n_epochs, stopping):
        """Run up to n_epochs passes; record ``loss_curve_``; returns epochs run.

        A shuffled epoch first copies its samples into epoch order (one
        streaming pass into buffers reused across epochs), so that the
        compiled loop reads them in memory order.
        """
        curve = self.__dict__.setdefault("loss_curve_", [])
        best, stale, n_iter = np.inf, 0, 0
        converged = False
        n = design.n_samples
        bufs = None
        for _ in range(n_epochs):
            order = self._order(n, rng)
            if self.shuffle and n > 1:
                if bufs is None:
                    ident = np.arange(n, dtype=np.int64)
                    bufs = Design(np.empty(n + 1, np.int64), np.empty(len(design.idx), np.int64),
                                  np.empty(len(design.val)))
                take_rows(design.indptr, design.idx, design.val, order,
                          bufs.indptr, bufs.idx, bufs.val)
                stats = self._epoch(bufs, None if yi is None else yi[order],
                                    None if yf is None else yf[order], ident)
            else:
                stats = self._epoch(design, yi, yf, order)
            n_iter += 1
            curve.append(float(stats["objective"]))
            if not stopping or self.tol is None:
                continue
            if self._stops_on_no_update and stats.get("updates", 1) == 0:
                converged = True
                break
            obj = stats.get("stop", stats["objective"])
            stale = stale + 1 if obj > best - self.tol else 0
            best = min(best, obj)
            if stale >= self.n_iter_no_change:
                converged = True
                break
        if stopping and self.tol is not None and not converged and n_epochs > 1:
            warnings.warn(f"Maximum number of iteration reached ({n_epochs}) before convergence; "
                          "consider increasing max_iter.", ConvergenceWarning)
        return n_iter

    # ------------------------------------------------------------ results

    @property
    def coef_(self):
        """(n_vectors, n_columns) weights: one row per class (one row for
        binary problems and regression).  For feature-string inputs column i
        holds the weights of the hashed feature ``feature_keys_[i]``."""
        try:
            return self._coef.T
        except AttributeError:
            raise AttributeError(f"{type(self).__name__} is not fitted: no coef_") from None

    def _raw_scores(self, X):
        check_is_fitted(self)
        design, _ = self._design(X, reset=False)
        return csr_scores(design.indptr, design.idx, design.val, self._coef,
                          np.ascontiguousarray(self.intercept_, dtype=np.float64))

    def get_weight(self, feature, label=None):
        """Weight of a feature string (``"w=the"``) or a column index, for the
        vector of class ``label`` (binary problems and regressors: omit it).
        Features never seen in training weigh 0."""
        check_is_fitted(self)
        if isinstance(feature, str):
            if self._input_kind != "features":
                raise ValueError("fitted on numeric arrays: give a column index")
            key = hash_features([[feature]], getattr(self, "n_features", None))[1][0]
            col = np.searchsorted(self.feature_keys_, key)
            if col == len(self.feature_keys_) or self.feature_keys_[col] != key:
                return 0.0
        else:
            col = int(feature)
        row = 0
        if self._coef.shape[1] > 1:
            if label is None:
                raise ValueError("give the class label of the weight vector")
            row = int(np.flatnonzero(self.classes_ == label)[0])
        return float(self._coef[col, row])

    # ------------------------------------------------------------ persistence

    def to_bytes(self):
        """The fitted model as a fasttag model file (JSON header + arrays)."""
        check_is_fitted(self)
        params = {k: v for k, v in self.get_params().items()
                  if v is None or isinstance(v, (bool, int, float, str))}
        header = {"kind": f"linear.{type(self).__name__}", "params": params,
                  "input_kind": self._input_kind, "n_iter": int(self.n_iter_),
                  "loss_curve": [float(v) for v in getattr(self, "loss_curve_", [])]}
        arrays = {"coef": self._coef, "intercept": np.asarray(self.intercept_, dtype=np.float64)}
        if self._input_kind == "features":
            arrays["feature_keys"] = self.feature_keys_
        else:
            header["n_features_in"] = int(self.n_features_in_)
        if hasattr(self, "classes_"):
            cls = self.classes_
            if cls.dtype.kind in "iu":
                header["classes"] = [int(c) for c in cls]
            elif cls.dtype.kind == "b":
                header["classes"] = [bool(c) for c in cls]
            elif cls.dtype.kind == "f":
                header["classes"] = [float(c) for c in cls]
            else:
                header["classes"] = [str(c) for c in cls]
            header["classes_dtype"] = cls.dtype.str
        for name, value in self._state.items():
            arrays[f"state.{name}"] = np.asarray(value)
        return modelfile.dumps(header, arrays)

    def save(self, path):
        """Write :meth:`to_bytes` atomically to ``path``."""
        data = self.to_bytes()
        header, arrays = modelfile.loads(data)
        modelfile.write(path, header, arrays)

    @classmethod
    def from_bytes(cls, data):
        """Rebuild an estimator written by :meth:`to_bytes`."""
        header, arrays = modelfile.loads(data)
        return cls._from_parts(header, arrays)

    @classmethod
    def load(cls, path):
        header, arrays = modelfile.read(path)
        return cls._from_parts(header, arrays)

    @classmethod
    def _from_parts(cls, header, arrays):
        from ..errors import ModelFormatError
        if header.get("kind") != f"linear.{cls.__name__}":
            raise ModelFormatError(f"not a linear.{cls.__name__} model: kind {header.get('kind')!r}")
        try:
            est = cls(**header["params"])
            est._coef = np.ascontiguousarray(arrays["coef"], dtype=np.float64)
            est.intercept_ = arrays["intercept"].astype(np.float64)
            est._input_kind = header["input_kind"]
            est.n_iter_ = header["n_iter"]
            est.loss_curve_ = list(header.get("loss_curve", []))
            if est._input_kind == "features":
                est.feature_keys_ = arrays["feature_keys"].astype(np.uint64)
                est.n_features_in_ = len(est.feature_keys_)
            else:
                est.n_features_in_ = header["n_features_in"]
            if "classes" in header:
                est.classes_ = np.asarray(header["classes"], dtype=np.dtype(header["classes_dtype"]))
            est._state = {k[len("state."):]: v for k, v in arrays.items() if k.startswith("state.")}
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFormatError(f"corrupt linear model: {exc}") from None
        if est._coef.ndim != 2 or est._coef.shape[0] != est._n_columns():
            raise ModelFormatError("corrupt linear model: coef has the wrong shape")
        return est


class LinearClassifierMixin:
    """fit / partial_fit / decision_function / predict for classifiers."""

    def _encode(self, y):
        y = np.asarray(y)
        if y.dtype.kind in "UO":      # strings: a dict is much faster than sorting them all
            labels = y.tolist()
            classes = np.array(sorted(set(labels)), dtype=y.dtype)
            code = {c: i for i, c in enumerate(classes.tolist())}
            return classes, np.fromiter(map(code.__getitem__, labels), dtype=np.int32, count=len(labels))
        classes, y_int = np.unique(y, return_inverse=True)
        return classes, y_int.astype(np.int32).reshape(-1)

    def fit(self, X, y):
        """Fit on X, y (up to ``max_iter`` epochs); returns self."""
        self._check_params()
        for attr in ("loss_curve_", "_rng"):
            self.__dict__.pop(attr, None)
        design, y = self._design(X, y, reset=True, need_y=True)
        classes, yi = self._encode(y)
        if len(classes) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; the data "
                             f"contains only one class: {classes[0]!r}")
        self.classes_ = classes
        rng = check_random_state(self.random_state)
        self._init_state(self._n_columns(), self._n_vectors(), rng)
        self.n_iter_ = self._run(design, yi, None, rng, self.max_iter, stopping=True)
        self._finalize()
        return self

    def partial_fit(self, X, y, classes=None):
        """One epoch over X, y, continuing from the current state.

        The first call needs ``classes`` (every class that will ever occur).
        With ``shuffle=False``, partial_fit over consecutive batches equals
        ``fit(max_iter=1)`` over their concatenation.
        """
        first = not hasattr(self, "classes_") or not hasattr(self, "_state")
        if first:
            self._check_params()
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            self.__dict__.pop("loss_curve_", None)
            self._rng = check_random_state(self.random_state)
            design, y = self._design(X, y, reset=True, need_y=True)
            self.classes_ = np.unique(np.asarray(classes))
            if len(self.classes_) < 2:
                raise ValueError("classes must hold at least 2 classes")
            self._init_state(self._n_columns(), self._n_vectors(), self._rng)
            self.n_iter_ = 0
        else:
            if classes is not None and not np.array_equal(np.unique(np.asarray(classes)), self.classes_):
                raise ValueError(f"classes {classes!r} differ from the classes of the first call")
            if not hasattr(self, "_rng"):
                self._rng = check_random_state(self.random_state)
            design, y = self._design(X, y, reset=False, grow=True, rng=self._rng, need_y=True)
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if len(unknown):
            raise ValueError(f"labels {unknown!r} are not in classes {self.classes_!r}")
        yi = np.searchsorted(self.classes_, y).astype(np.int32)
        self.n_iter_ += self._run(design, yi, None, self._rng, 1, stopping=False)
        self._finalize()
        return self

    def _n_vectors(self):
        return 1 if len(self.classes_) == 2 else len(self.classes_)

    def decision_function(self, X):
        """Scores: (n_samples,) for binary problems (> 0 means classes_[1]),
        else (n_samples, n_classes)."""
        scores = self._raw_scores(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class of the highest score (ties to the first class)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]
