"""Stochastic gradient descent: SGDClassifier (one-vs-rest) and SGDRegressor.

Each binary (or regression) problem minimises
J(w, b) = (1/n) sum_i L(w.x_i + b, y_i) + alpha/2 ||w||^2 one sample at a
time, as scikit-learn does.  The shrinkage is a global scale factor, so a
step costs O(active features); schedules ``constant``, ``invscaling`` and
``optimal``; averaged SGD from the first update or from update t0, kept
lazily.  ``loss_curve_`` is J after every epoch, computed exactly for the
weights the model would use.  Details: docs/linear.md.
"""
import numpy as np

from ..model import registry
from ._weights import LEARNING_RATES as _LR, sgd_epoch, sgd_objective, sgd_weights
from ._base import LinearClassifierMixin, LinearModel, available_if
from .filechecks import MAX_WEIGHT, check_state_bound
from .params import MAX_COUNT, check_choice, check_counter, check_int, check_real
from ._compat import ClassifierMixin, RegressorMixin, check_is_fitted
from .losses import CLASSIFICATION_LOSSES, LOSSES, REGRESSION_LOSSES, dloss


class _SGDBase(LinearModel):
    _losses = CLASSIFICATION_LOSSES
    _step_params = "eta0, alpha"

    def _check_params(self):
        self._check_common()
        check_int(self, "n_iter_no_change", 1)
        check_choice(self, "loss", self._losses)
        check_choice(self, "penalty", ("l2", None))
        check_choice(self, "learning_rate", sorted(_LR))
        check_real(self, "alpha", 0)
        check_real(self, "epsilon", 0)
        check_real(self, "eta0", 0)
        check_real(self, "power_t")
        if self.learning_rate == "optimal" and not self._alpha() > 0:
            raise ValueError("learning_rate='optimal' needs alpha > 0 (and penalty='l2')")
        if self.learning_rate != "optimal" and not self.eta0 > 0:
            raise ValueError(f"eta0 must be > 0, got {self.eta0!r}")
        if not isinstance(self.average, (bool, np.bool_)):   # True, or the update averaging starts at
            check_int(self, "average", 0, MAX_COUNT)

    def _alpha(self):
        return float(self.alpha) if self.penalty == "l2" else 0.0

    def _init_state(self, n_columns, K, rng):
        alpha = self._alpha()
        opt_init = 0.0
        if self.learning_rate == "optimal":
            typw = np.sqrt(1.0 / np.sqrt(alpha))
            eta_init = typw / max(1.0, float(dloss(self.loss, -typw, 1.0, self.epsilon)[0]))
            opt_init = 1.0 / (eta_init * alpha)
        self._state = {
            "V": np.zeros((n_columns, K)), "wscale": np.ones(K), "b": np.zeros(K),
            "U": np.zeros((n_columns, K)), "cavg": np.zeros(K), "bsum": np.zeros(K),
            "counters": np.array([1, 0], dtype=np.int64), "opt_init": np.array([opt_init])}

    def _state_layout(self, n_columns, K):
        f8, i8 = np.dtype(np.float64), np.dtype(np.int64)
        return {"V": (f8, (n_columns, K)), "wscale": (f8, (K,)), "b": (f8, (K,)),
                "U": (f8, (n_columns, K)), "cavg": (f8, (K,)), "bsum": (f8, (K,)),
                "counters": (i8, (2,)), "opt_init": (f8, (1,))}

    def _check_state(self):
        st = self._state
        t, n_avg = (int(v) for v in st["counters"])
        if not 1 <= t <= MAX_COUNT:      # t is 1-based: eta0 / t**power_t, 1 / (alpha (t0 + t - 1))
            raise ValueError(f"state.counters: the update counter {t} is outside [1, 2**62]")
        if not 0 <= n_avg < t:
            raise ValueError(f"state.counters: {n_avg} averaged updates out of {t - 1}")
        # an epoch folds wscale into V as soon as it falls below 1e-6
        if not np.all((st["wscale"] >= 1e-6) & (st["wscale"] <= 1.0)):
            raise ValueError("state.wscale is outside [1e-6, 1]")
        if np.any(st["cavg"] < 0):
            raise ValueError("state.cavg (a sum of wscales) is negative")
        opt_init = float(st["opt_init"][0])
        if opt_init < 0 or (self.learning_rate == "optimal" and not opt_init > 0):
            raise ValueError(f"state.opt_init {opt_init!r} does not fit learning_rate={self.learning_rate!r}")
        # the weights are wscale * V and b; averaging sums n_avg of them:
        # (U + cavg V) / n_avg and bsum / n_avg are their averages, and cavg
        # sums n_avg wscales (each <= 1) since V last absorbed wscale
        check_state_bound("V", st["V"] * st["wscale"], MAX_WEIGHT, "weights (wscale * V)")
        check_state_bound("b", st["b"], MAX_WEIGHT, "intercepts")
        if np.any(st["cavg"] > n_avg):
            raise ValueError(f"state.cavg (a sum of wscales <= 1) is beyond the {n_avg} averaged updates")
        limit = f"n_avg * {MAX_WEIGHT:.3g} (the sum of n_avg = {n_avg} updates' weights)"
        with np.errstate(over="ignore", invalid="ignore"):
            check_state_bound("U", st["U"] + st["cavg"] * st["V"], n_avg * MAX_WEIGHT,
                              "sums of weights (U + cavg * V)", limit)
        check_state_bound("bsum", st["bsum"], n_avg * MAX_WEIGHT, "sums of intercepts", limit)
        # the learning rate of the next update is a step no larger than the largest
        # weight (a larger one makes weights no file may hold, and 1e308 overflows)
        eta = self._next_rate(t, opt_init)
        if not eta <= MAX_WEIGHT:
            what = {"optimal": f"1 / (alpha * (opt_init + t - 1)) with alpha={self._alpha()!r}, "
                               f"state.opt_init {opt_init!r}",
                    "constant": f"eta0={self.eta0!r}",
                    "invscaling": f"eta0 / t**power_t with eta0={self.eta0!r}, power_t={self.power_t!r}"}
            raise ValueError(f"the learning rate at update t={t}, {what[self.learning_rate]}, is {eta:.3g}: "
                             f"beyond {MAX_WEIGHT:.3g}, the largest weight")

    def _next_rate(self, t, opt_init):
        """The learning rate sgd_epoch uses at update ``t``."""
        with np.errstate(all="ignore"):
            if self.learning_rate == "optimal":
                return float(np.float64(1.0) / (self._alpha() * (opt_init + t - 1)))
            if self.learning_rate == "constant":
                return float(self.eta0)
            return float(np.float64(self.eta0) / np.power(np.float64(t), float(self.power_t)))

    def _restore(self):
        self.t_ = int(self._state["counters"][0])

    def _grow_state(self, positions, n_columns, rng):
        st = self._state
        for name in ("V", "U"):
            new = np.zeros((n_columns, st[name].shape[1]))
            new[positions] = st[name]
            st[name] = new

    def _current(self):
        st = self._state
        n_avg = int(st["counters"][1])
        W = sgd_weights(st["V"], st["wscale"], st["U"], st["cavg"], n_avg)
        return W, (st["bsum"] / n_avg if n_avg > 0 else st["b"].copy())

    def _epoch(self, design, yi, yf, order):
        st = self._state
        check_counter(int(st["counters"][0]), len(order) * st["V"].shape[1])
        classify = self._is_classifier
        if yi is None:
            yi = np.zeros(0, np.int32)
        if yf is None:
            yf = np.zeros(0)
        running = sgd_epoch(design.indptr, design.idx, design.val, yi, yf, order,
                  st["V"], st["wscale"], st["b"], st["U"], st["cavg"], st["bsum"], st["counters"],
                  LOSSES[self.loss], _LR[self.learning_rate], float(self.eta0), float(self.power_t),
                  self._alpha(), float(st["opt_init"][0]), bool(self.fit_intercept),
                  float(self.epsilon), int(self.average), classify, self.tol is not None)
        self.t_ = int(st["counters"][0])
        # the exact J of the weights the model would use now, computed by a
        # compiled pass that forms them on the fly (no copy of the weights)
        obj = sgd_objective(design.indptr, design.idx, design.val, yi, yf,
                            st["V"], st["wscale"], st["b"], st["U"], st["cavg"], st["bsum"],
                            int(st["counters"][1]), LOSSES[self.loss], float(self.epsilon),
                            self._alpha(), classify)
        # stopping uses the running mean loss, as scikit-learn does (the
        # exact objective of the current iterate is noisier under big steps);
        # with tol=None nothing uses it and the loop skips it
        return {"objective": obj, "stop": running / max(len(order), 1)}

    def _finalize(self):
        W, b = self._current()
        self._coef = np.ascontiguousarray(W)
        self.intercept_ = b


@registry.model_kind("linear.SGDClassifier")
class SGDClassifier(LinearClassifierMixin, ClassifierMixin, _SGDBase):
    """Linear classifiers trained by SGD; multiclass is one-vs-rest (one
    binary problem per class, all trained in the same pass).

    Parameters follow scikit-learn's SGDClassifier: ``loss`` ('hinge',
    'log_loss', 'squared_error', 'modified_huber', 'perceptron'),
    ``penalty`` ('l2' or None), ``alpha``, ``fit_intercept``, ``max_iter``,
    ``tol`` (None: exactly max_iter epochs; a float: stop when J has not
    improved by tol for ``n_iter_no_change`` epochs; as scikit-learn, J is
    the running mean of the losses met during the epoch), ``shuffle``,
    ``epsilon``, ``random_state``, ``learning_rate``, ``eta0``, ``power_t``,
    ``average``; plus ``n_features`` for feature-string inputs.

    Attributes: ``classes_``, ``coef_``, ``intercept_``, ``n_features_in_``,
    ``n_iter_``, ``t_``, ``loss_curve_`` (J per epoch), ``feature_keys_``.
    """

    def __init__(self, loss="hinge", *, penalty="l2", alpha=0.0001, fit_intercept=True,
                 max_iter=1000, tol=1e-3, shuffle=True, epsilon=0.1, random_state=None,
                 learning_rate="optimal", eta0=0.01, power_t=0.5, n_iter_no_change=5,
                 average=False, n_features=None):
        self.loss = loss
        self.penalty = penalty
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.epsilon = epsilon
        self.random_state = random_state
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.n_iter_no_change = n_iter_no_change
        self.average = average
        self.n_features = n_features

    def _has_proba(self):
        return self.loss in ("log_loss", "modified_huber")

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities (log_loss: logistic; modified_huber:
        (clip(score, -1, 1) + 1) / 2); one-vs-rest scores normalised."""
        scores = self._raw_scores(X)
        if self.loss == "log_loss":
            prob = 1.0 / (1.0 + np.exp(-np.clip(scores, -500, 500)))
        else:
            prob = (np.clip(scores, -1, 1) + 1) / 2
        if prob.shape[1] == 1:
            return np.hstack([1 - prob, prob])
        total = prob.sum(axis=1, keepdims=True)
        zero = total[:, 0] == 0
        prob[zero] = 1.0
        total[zero] = prob.shape[1]
        return prob / total

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


@registry.model_kind("linear.SGDRegressor")
class SGDRegressor(RegressorMixin, _SGDBase):
    """Linear regression by SGD.  Parameters as scikit-learn's SGDRegressor:
    ``loss`` ('squared_error', 'huber', 'epsilon_insensitive',
    'squared_epsilon_insensitive'), ``penalty``, ``alpha``,
    ``fit_intercept``, ``max_iter``, ``tol``, ``shuffle``, ``epsilon``,
    ``random_state``, ``learning_rate`` (default 'invscaling'), ``eta0``,
    ``power_t``, ``average``; plus ``n_features``.  With squared_error,
    J = mean (p - y)^2 / 2 + alpha/2 ||w||^2 (ridge regression)."""

    _is_classifier = False
    _losses = REGRESSION_LOSSES

    def __init__(self, loss="squared_error", *, penalty="l2", alpha=0.0001, fit_intercept=True,
                 max_iter=1000, tol=1e-3, shuffle=True, epsilon=0.1, random_state=None,
                 learning_rate="invscaling", eta0=0.01, power_t=0.25, n_iter_no_change=5,
                 average=False, n_features=None):
        self.loss = loss
        self.penalty = penalty
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.epsilon = epsilon
        self.random_state = random_state
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.n_iter_no_change = n_iter_no_change
        self.average = average
        self.n_features = n_features

    def partial_fit(self, X, y):
        """One epoch over X, y from the current state (see the classifier)."""
        return self._partial_fit(X, y, None)

    def predict(self, X):
        """w.x + b."""
        check_is_fitted(self)
        return self._raw_scores(X)[:, 0]
