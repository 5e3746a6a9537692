"""scikit-learn when it is installed, a minimal stand-in when it is not.

``fasttag.linear`` works without scikit-learn: the estimators then derive
from small stand-ins (parameters from ``__init__``'s signature,
``get_params``/``set_params``, ``score``) and validate inputs with numpy
only.  With scikit-learn installed (``pip install fasttag-nlp[sklearn]``) they are
genuine scikit-learn estimators (``clone``, pipelines, grid searches,
``check_estimator``), validated by scikit-learn's own ``validate_data``.
"""
import inspect

import numpy as np

try:  # pragma: no cover - exercised in both configurations by the tests
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.exceptions import ConvergenceWarning, NotFittedError
    from sklearn.utils import check_random_state
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

    HAVE_SKLEARN = True
except ImportError:
    HAVE_SKLEARN = False

    class NotFittedError(ValueError, AttributeError):
        """The estimator is used before it is fitted."""

    class ConvergenceWarning(UserWarning):
        """Training stopped at max_iter before meeting the tolerance."""

    class BaseEstimator:
        """Parameters are the keyword arguments of ``__init__``."""

        @classmethod
        def _get_param_names(cls):
            sig = inspect.signature(cls.__init__)
            return sorted(p.name for p in sig.parameters.values()
                          if p.name != "self" and p.kind != p.VAR_KEYWORD)

        def get_params(self, deep=True):
            return {name: getattr(self, name) for name in self._get_param_names()}

        def set_params(self, **params):
            valid = self._get_param_names()
            for key, value in params.items():
                if key not in valid:
                    raise ValueError(f"invalid parameter {key!r} for {type(self).__name__}")
                setattr(self, key, value)
            return self

        def __repr__(self):
            args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
            return f"{type(self).__name__}({args})"

    class ClassifierMixin:
        _estimator_type = "classifier"

        def score(self, X, y):
            return float(np.mean(self.predict(X) == np.asarray(y)))

    class RegressorMixin:
        _estimator_type = "regressor"

        def score(self, X, y):
            y = np.asarray(y, dtype=np.float64)
            resid = ((y - self.predict(X)) ** 2).sum()
            total = ((y - y.mean()) ** 2).sum()
            return 1.0 - resid / total if total > 0 else 0.0

    def check_random_state(seed):
        if seed is None or isinstance(seed, (int, np.integer)):
            return np.random.RandomState(seed)
        if isinstance(seed, np.random.RandomState):
            return seed
        raise ValueError(f"{seed!r} cannot be used to seed a RandomState")

    def check_classification_targets(y):
        if np.asarray(y).dtype.kind == "f" and np.any(np.asarray(y) != np.round(y)):
            raise ValueError("Unknown label type: continuous")

    def check_is_fitted(estimator, attributes=None):
        fitted = [v for v in vars(estimator) if v.endswith("_") and not v.startswith("__")]
        if not fitted:
            raise NotFittedError(f"This {type(estimator).__name__} instance is not fitted yet.")

    def column_or_1d(y, warn=False, **_):
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            return y.ravel()
        if y.ndim != 1:
            raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
        return y

    def validate_data(estimator, X, y=None, reset=True, accept_sparse=False, dtype=None,
                      y_numeric=False, **_):
        import scipy.sparse as sp  # only reached for numeric inputs
        if sp.issparse(X):
            if not accept_sparse:
                raise TypeError("sparse input is not accepted")
            X = sp.csr_matrix(X, dtype=np.float64)
            data = X.data
        else:
            X = np.asarray(X, dtype=np.float64)
            if X.ndim != 2:
                raise ValueError(f"Expected 2D array, got {X.ndim}D array instead")
            data = X
        if not np.all(np.isfinite(data)):
            raise ValueError("Input X contains NaN or infinity.")
        if X.shape[0] == 0:
            raise ValueError("Found array with 0 sample(s)")
        if reset:
            estimator.n_features_in_ = X.shape[1]
        elif X.shape[1] != estimator.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} "
                             f"is expecting {estimator.n_features_in_} features as input")
        if y is None:
            return X
        y = column_or_1d(y)
        if y_numeric:
            y = y.astype(np.float64)
            if not np.all(np.isfinite(y)):
                raise ValueError("Input y contains NaN or infinity.")
        if len(y) != X.shape[0]:
            raise ValueError("X and y have inconsistent numbers of samples")
        return X, y


__all__ = ["HAVE_SKLEARN", "BaseEstimator", "ClassifierMixin", "RegressorMixin",
           "ConvergenceWarning", "NotFittedError", "check_random_state",
           "check_classification_targets", "check_is_fitted", "column_or_1d", "validate_data"]
