"""Shared machinery of the linear learners: inputs, epochs, stopping, saving."""
import warnings

import numpy as np

from ..model import modelfile
from ..errors import ModelFormatError
from ._weights import csr_scores, index_keys, take_rows
from ._compat import (HAVE_SKLEARN, BaseEstimator, ConvergenceWarning, NotFittedError,
                      check_classification_targets, check_is_fitted, check_random_state, column_or_1d,
                      validate_data)
from .filechecks import (FEATURIZERS, HEADER_KEYS, MAX_WEIGHT, check_finite_weights, checked_estimator,
                         checked_input_kind, checked_params, classes_from_json, classes_to_json, one_line,
                         set_feature_names, short, storable_classes, stored_array)
from .inputs import Design, hash_features, is_feature_input, map_keys, numeric_design
from .params import MAX_COUNT, check_bool, check_int, check_real, is_int, is_real


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

class LinearModel(modelfile.Stored, BaseEstimator):
    """Base of every learner in :mod:`fasttag.linear`.

    Subclasses implement ``_init_state(n_columns, n_vectors, rng)``,
    ``_epoch(design, y_int, y_float, order) -> dict(objective=..., updates=...)``,
    ``_finalize()`` (sets ``self._coef`` (n_columns, K) and ``intercept_``) and
    ``_grow_state(positions, n_columns, rng)`` (new feature columns).
    Training state lives in ``self._state`` (a dict of numpy arrays);
    ``_state_layout``, ``_check_state`` and ``_restore`` tell the loader what
    a saved state must look like (model files may come from anyone).
    """

    _is_classifier = True
    _stops_on_no_update = False

    if HAVE_SKLEARN:
        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.input_tags.sparse = True
            return tags

    # ------------------------------------------------------------ pickling

    def __getstate__(self):
        """A pickle (or deep copy) holds the parameters and, once fitted,
        the model file's bytes: the arrays travel as data and are checked
        on the way back like a file, never unpickled as objects."""
        state = {"params": self.get_params(deep=False)}
        try:
            state["model"] = self.to_bytes()
        except NotFittedError:
            pass
        return state

    def __setstate__(self, state):
        if "model" in state:
            self.__dict__.update(type(self).from_bytes(state["model"]).__dict__)
        else:
            self.__dict__.update(type(self)(**state["params"]).__dict__)
        self.set_params(**state["params"])      # parameters a file does not keep (dicts)

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
            space = getattr(self, "n_features", None) if reset else self._hash_space()
            indptr, keys, values = hash_features(X, space)
            if reset:
                fkeys, inverse = index_keys(keys)
                self.feature_keys_ = fkeys
                self._hashed_into = space
                self.__dict__.pop("feature_names_in_", None)     # from an earlier fit on a DataFrame
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

    def _hash_space(self):
        """The ``n_features`` the fitted feature keys were hashed into: a
        ValueError if the parameter changed since (every learned feature
        would hash elsewhere)."""
        fitted = self.__dict__.get("_hashed_into", getattr(self, "n_features", None))
        if getattr(self, "n_features", None) != fitted:
            raise ValueError(f"n_features was {fitted} when this {type(self).__name__} was fitted and is "
                             f"{self.n_features} now: fit again (its feature keys were hashed into {fitted})")
        return fitted

    # ------------------------------------------------------------ training

    def _check_common(self):
        """The parameters every learner has (fit and load both run this)."""
        check_int(self, "max_iter", 1)
        check_real(self, "tol", 0, none=True)
        check_int(self, "n_features", 1, 2 ** 64 - 1, none=True)   # folds uint64 keys
        check_bool(self, "fit_intercept")
        check_bool(self, "shuffle")
        rs = self.random_state
        if not (rs is None or isinstance(rs, np.random.RandomState)
                or (is_int(rs) and 0 <= rs <= 2 ** 32 - 1)):
            raise ValueError(f"random_state must be None, an int in [0, 2**32 - 1] or a "
                             f"RandomState, got {rs!r}")

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

    def fit(self, X, y):
        """Fit on X, y (up to ``max_iter`` epochs); returns self."""
        self._check_params()
        for attr in ("loss_curve_", "_rng"):
            self.__dict__.pop(attr, None)
        design, y = self._design(X, y, reset=True, need_y=True)
        yi = yf = None
        if self._is_classifier:
            classes, yi = self._encode(y)
            if len(classes) < 2:
                raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; the data "
                                 f"contains only one class: {classes[0]!r}")
            self.classes_ = classes
        else:
            yf = np.ascontiguousarray(y, dtype=np.float64)
        rng = check_random_state(self.random_state)
        self._init_state(self._n_columns(), self._n_vectors(), rng)
        self.n_iter_ = self._run(design, yi, yf, rng, self.max_iter, stopping=True)
        self._finalize()
        check_finite_weights(self, self._coef, self.intercept_)
        return self

    def _partial_fit(self, X, y, classes):
        """One epoch over X, y from the current state (``classes``: see
        the classifiers' ``partial_fit``; None for regressors)."""
        clf = self._is_classifier
        if not hasattr(self, "_state") or (clf and not hasattr(self, "classes_")):
            self._check_params()
            if clf and classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            self.__dict__.pop("loss_curve_", None)
            self._rng = check_random_state(self.random_state)
            design, y = self._design(X, y, reset=True, need_y=True)
            if clf:
                self.classes_ = np.unique(np.asarray(classes))
                if len(self.classes_) < 2:
                    raise ValueError("classes must hold at least 2 classes")
                storable_classes(self.classes_)
            self._init_state(self._n_columns(), self._n_vectors(), self._rng)
            self.n_iter_ = 0
        else:
            if classes is not None and not np.array_equal(np.unique(np.asarray(classes)), self.classes_):
                raise ValueError(f"classes {classes!r} differ from the classes of the first call")
            if not hasattr(self, "_rng"):
                self._rng = check_random_state(self.random_state)
            design, y = self._design(X, y, reset=False, grow=True, rng=self._rng, need_y=True)
        yi = yf = None
        if clf:
            unknown = np.setdiff1d(np.unique(y), self.classes_)
            if len(unknown):
                raise ValueError(f"labels {unknown!r} are not in classes {self.classes_!r}")
            yi = np.searchsorted(self.classes_, y).astype(np.int32)
        else:
            yf = np.ascontiguousarray(y, dtype=np.float64)
        self.n_iter_ += self._run(design, yi, yf, self._rng, 1, stopping=False)
        self._finalize()
        check_finite_weights(self, self._coef, self.intercept_)
        return self

    def _n_vectors(self):
        return 1

    # ------------------------------------------------------------ results

    @property
    def coef_(self):
        """The weights, shaped as scikit-learn's: (n_vectors, n_columns) for
        a classifier, one row per class (one row for binary problems), and
        (n_columns,) for a regressor.  For feature-string inputs column i
        holds the weights of the hashed feature ``feature_keys_[i]``."""
        try:
            coef = self._coef.T
        except AttributeError:
            raise AttributeError(f"{type(self).__name__} is not fitted: no coef_") from None
        return coef if self._is_classifier else coef[0]

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
            key = hash_features([[feature]], self._hash_space())[1][0]
            col = np.searchsorted(self.feature_keys_, key)
            if col == len(self.feature_keys_) or self.feature_keys_[col] != key:
                return 0.0
        else:
            col = int(feature)
            if not 0 <= col < self._coef.shape[0]:      # no wrap-around from the end
                raise ValueError(f"column {feature!r} is outside [0, {self._coef.shape[0]})")
        row = 0
        if self._coef.shape[1] > 1:
            if label is None:
                raise ValueError("give the class label of the weight vector")
            rows = np.flatnonzero(self.classes_ == label)
            if len(rows) == 0:
                raise ValueError(f"{label!r} is not one of classes_")
            row = int(rows[0])
        return float(self._coef[col, row])

    # ------------------------------------------------------------ persistence
    # Model files may come from anyone.  Loading checks everything the
    # compiled loops will index (dtypes, shapes, orderings, counters) and
    # every parameter fit would have refused, so that a malformed file is a
    # ModelFormatError at load: never a crash, garbage scores or an error
    # later in predict or partial_fit.

    def _state_layout(self, n_columns, n_vectors):
        """name -> (dtype, shape) of every training-state array the epochs
        read; learners with training state override it."""
        return {}

    def _check_state(self):
        """Raise ValueError when the loaded state breaks an invariant of the
        epochs (dtypes, shapes and finiteness are checked before)."""

    def _restore(self):
        """Set the attributes derived from the state, after loading."""

    _extra_keys = ()     # the header entries of _header_extras

    def _header_extras(self):
        """Fitted attributes beyond the common ones, as header entries."""
        return {}

    def _load_extras(self, header):
        """Set (and check) the attributes of :meth:`_header_extras`;
        raise ValueError for a malformed entry."""

    def _stored_params(self):
        """The parameters a model file keeps: the plain values (numpy
        scalars, which grid searches set, as Python values)."""
        params = {}
        for k, v in self.get_params().items():
            if isinstance(v, np.generic):
                v = v.item()
            if v is None or isinstance(v, (bool, int, float, str)):
                params[k] = v
        return params

    def _common_parts(self):
        """What every linear model file holds, the MLP's included: kind,
        parameters, input kind, the input's columns (feature keys, or their
        count) and the classes."""
        check_is_fitted(self)
        header = {"kind": f"linear.{type(self).__name__}", "params": self._stored_params(),
                  "input_kind": self._input_kind}
        arrays = {}
        if self._input_kind == "features":
            self._hash_space()
            arrays["feature_keys"] = self.feature_keys_
        else:
            header["n_features_in"] = int(self.n_features_in_)
            if hasattr(self, "feature_names_in_"):
                header["feature_names_in"] = [str(n) for n in self.feature_names_in_]
        if hasattr(self, "classes_"):
            header["classes"] = classes_to_json(self.classes_)
            header["classes_dtype"] = self.classes_.dtype.str
        return header, arrays

    def _parts(self):
        """The fitted model's header and arrays (see :class:`fasttag.model.modelfile.Stored`)."""
        header, arrays = self._common_parts()
        header.update(n_iter=int(self.n_iter_), loss_curve=[float(v) for v in getattr(self, "loss_curve_", [])])
        arrays.update(coef=self._coef, intercept=np.asarray(self.intercept_, dtype=np.float64))
        header.update(self._header_extras())
        for name, value in self._state.items():
            arrays[f"state.{name}"] = np.asarray(value)
        for name, arr in arrays.items():    # never write a file that would not load
            if arr.dtype.kind == "f" and not (np.all(np.isfinite(arr))
                                              and (name not in ("coef", "intercept") or not arr.size
                                                   or np.abs(arr).max() <= MAX_WEIGHT)):
                raise ValueError(f"cannot save this {type(self).__name__}: {name} holds NaN, "
                                 "infinity or a weight beyond float32 (training diverged; try a smaller eta0 or scaled inputs)")
        try:                                # the bounds loading checks (see check_state_bound)
            self._check_state()
        except ValueError as exc:
            raise ValueError(f"cannot save this {type(self).__name__}: training state: {exc}, which loading "
                             "refuses (training diverged; try a smaller eta0 or scaled inputs)") from None
        modelfile.stamp(header, FEATURIZERS[self._input_kind], 1)
        return header, arrays

    @classmethod
    def _from_parts(cls, header, arrays):
        """Rebuild from a model file's header and arrays, validating all of
        it; every problem is a one-line ModelFormatError."""
        kind = f"linear.{cls.__name__}"
        if header.get("kind") != kind:
            raise ModelFormatError(f"not a {kind} model: kind {short(header.get('kind'))}")
        try:
            return cls._checked_parts(header, arrays)
        except Exception as exc:   # even a failure no check foresaw is a format error, never another type
            msg = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
            raise ModelFormatError(one_line(f"corrupt {kind} model: {msg}")) from None

    @classmethod
    def _checked_parts(cls, header, arrays):
        """:meth:`_from_parts` without the error wrapping: a ValueError names
        the first problem found."""
        unknown = sorted(set(header) - HEADER_KEYS - set(cls._extra_keys))
        if unknown:
            raise ValueError(f"unknown header entries {short(unknown)}")
        est = checked_estimator(cls(**checked_params(cls, header.get("params"))))
        input_kind = checked_input_kind(header)
        n_iter = header.get("n_iter")
        if type(n_iter) is not int or not 1 <= n_iter <= MAX_COUNT:
            raise ValueError(f"n_iter must be an int in [1, 2**62], got {short(n_iter)}")
        curve = header.get("loss_curve", [])
        if not (isinstance(curve, list) and all(is_real(v) for v in curve)):
            raise ValueError("loss_curve must be a list of numbers")

        coef = stored_array(arrays, "coef", np.float64)
        if coef.ndim != 2 or coef.shape[1] < 1:
            raise ValueError(f"coef must be (n_columns, n_vectors >= 1), got shape {coef.shape}")
        F, K = coef.shape
        if input_kind == "features":
            if "n_features_in" in header:
                raise ValueError("n_features_in belongs to models of numeric inputs")
            keys = stored_array(arrays, "feature_keys", np.uint64, (F,))
            if F > 1 and not np.all(keys[1:] > keys[:-1]):   # searchsorted and the merges need this
                raise ValueError("feature_keys must be strictly increasing")
            if F and est.n_features is not None and int(keys[-1]) >= est.n_features:
                raise ValueError(f"feature_keys lie outside the hash space n_features={est.n_features}")
        else:
            if "feature_keys" in arrays:
                raise ValueError("feature_keys belong to models of feature-string inputs")
            nfi = header.get("n_features_in")
            if type(nfi) is not int or nfi != F:
                raise ValueError(f"n_features_in must equal the {F} rows of coef, got {short(nfi)}")
            if F < 1:          # fit refuses inputs without columns: so does loading
                raise ValueError("a model of numeric inputs needs at least one feature column")
        if est._is_classifier:
            if "classes" not in header or "classes_dtype" not in header:
                raise ValueError("a classifier needs classes and classes_dtype")
            classes = classes_from_json(header["classes"], header["classes_dtype"])
            want = 1 if len(classes) == 2 else len(classes)
            if K != want:
                raise ValueError(f"{len(classes)} classes need {want} weight vector(s), coef has {K}")
        else:
            if "classes" in header or "classes_dtype" in header:
                raise ValueError("a regressor has no classes")
            if K != 1:
                raise ValueError(f"a regressor has one weight vector, coef has {K}")
        intercept = stored_array(arrays, "intercept", np.float64, (K,))   # csr_scores reads K entries

        layout = est._state_layout(F, K)
        state = {name: stored_array(arrays, f"state.{name}", dtype, shape)
                 for name, (dtype, shape) in layout.items()}
        expected = {"coef", "intercept"} | {f"state.{name}" for name in layout}
        if input_kind == "features":
            expected.add("feature_keys")
        extra = sorted(set(arrays) - expected)
        if extra:
            raise ValueError(f"unknown arrays {short(extra)}")
        for name, arr in [("coef", coef), ("intercept", intercept)] + [
                (f"state.{name}", arr) for name, arr in state.items()]:
            if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} holds NaN or infinity")

        est._coef = np.ascontiguousarray(coef)
        est.intercept_ = intercept
        est._input_kind = input_kind
        est.n_iter_ = n_iter
        est.loss_curve_ = [float(v) for v in curve]
        if input_kind == "features":
            est.feature_keys_ = keys
        est.n_features_in_ = F
        set_feature_names(est, header)
        if est._is_classifier:
            est.classes_ = classes
        est._state = state
        try:
            est._check_state()
        except ValueError as exc:
            raise ValueError(f"training state: {exc}") from None
        est._restore()
        # the weights predictions use, as saving will write them
        for name, arr in (("coef", est._coef), ("intercept", np.asarray(est.intercept_, dtype=np.float64))):
            if arr.size and not np.abs(arr).max() <= MAX_WEIGHT:
                raise ValueError(f"{name} holds a weight beyond {MAX_WEIGHT:.3g} (no training makes one)")
        est._load_extras(header)
        return est


class LinearClassifierMixin:
    """partial_fit / decision_function / predict for classifiers (fit is
    :class:`LinearModel`'s)."""

    def _encode(self, y):
        y = np.asarray(y)
        if y.dtype.kind in "UO":      # strings: a dict is much faster than sorting them all
            labels = y.tolist()
            classes = np.array(sorted(set(labels)), dtype=y.dtype)
            code = {c: i for i, c in enumerate(classes.tolist())}
            y_int = np.fromiter(map(code.__getitem__, labels), dtype=np.int32, count=len(labels))
        else:
            classes, y_int = np.unique(y, return_inverse=True)
            y_int = y_int.astype(np.int32).reshape(-1)
        if len(classes) >= 2:
            storable_classes(classes)
        return classes, y_int

    def partial_fit(self, X, y, classes=None):
        """One epoch over X, y, continuing from the current state.

        The first call needs ``classes`` (every class that will ever occur).
        With ``shuffle=False``, partial_fit over consecutive batches equals
        ``fit(max_iter=1)`` over their concatenation.
        """
        return self._partial_fit(X, y, classes)

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
