"""The perceptron family: Perceptron, AveragedPerceptron, PassiveAggressiveClassifier (PA, PA-I,
PA-II and Crammer & Singer's multiclass MIRA).

Multiclass problems keep one weight vector per class and predict the argmax
(ties to the lowest class index).  Binary problems keep one vector, which
is the two-vector algorithm in disguise: ``coef_[0]`` equals (w_1 - w_0) / 2
of it, with the same predictions and mistakes.  The threshold is the
weight of a constant input 1 (``fit_intercept``), averaged like any other.
"""
import numpy as np

from ..model import registry
from ._weights import ALGORITHMS as _ALGOS, averaged_weights, pa_epoch
from ._base import LinearClassifierMixin, LinearModel
from .filechecks import MAX_WEIGHT, check_state_bound
from .params import MAX_COUNT, check_choice, check_counter, check_int, check_real
from ._compat import ClassifierMixin


class _PerceptronFamily(LinearClassifierMixin, ClassifierMixin, LinearModel):
    _stops_on_no_update = True
    _algo = "perceptron"
    _averaged = False

    def _check_params(self):
        self._check_common()
        check_int(self, "n_iter_no_change", 1)
        check_choice(self, "init", ("zeros", "random"))
        check_real(self, "eta0", 0, lo_open=True)

    def _use_average(self):
        return bool(self._averaged)

    def _random_block(self, rng, shape):
        return rng.normal(0.0, 0.01, size=shape) if self.init == "random" else np.zeros(shape)

    def _init_state(self, n_columns, K, rng):
        W = self._random_block(rng, (n_columns, K))
        B = self._random_block(rng, (1, K)) if self.fit_intercept else np.zeros((1, K))
        self._state = {
            "W": W, "TOT": np.zeros((n_columns, K)), "TS": np.zeros((n_columns, K), np.int64),
            "B": B, "BTOT": np.zeros((1, K)), "BTS": np.zeros((1, K), np.int64),
            "step": np.zeros(1, np.int64)}

    def _state_layout(self, n_columns, K):
        f8, i8 = np.dtype(np.float64), np.dtype(np.int64)
        return {"W": (f8, (n_columns, K)), "TOT": (f8, (n_columns, K)), "TS": (i8, (n_columns, K)),
                "B": (f8, (1, K)), "BTOT": (f8, (1, K)), "BTS": (i8, (1, K)), "step": (i8, (1,))}

    def _check_state(self):
        st = self._state
        step = int(st["step"][0])
        if not 0 <= step <= MAX_COUNT:
            raise ValueError(f"state.step {step} is outside [0, 2**62]")
        for name in ("TS", "BTS"):      # the lazy averages weigh each weight by step - TS
            ts = st[name]
            if ts.size and (ts.min() < 0 or ts.max() > step):
                raise ValueError(f"state.{name} holds timestamps outside [0, step={step}]")
        _, eta, _ = self._algo_params()
        if not eta <= MAX_WEIGHT:       # one update moves a weight by eta0 * x
            raise ValueError(f"eta0={eta!r} is a step beyond {MAX_WEIGHT:.3g}, the largest weight")
        # W and B are the current weights; TOT (BTOT) sums the weights of
        # the first TS (BTS) steps: within TS * MAX_WEIGHT, so that the
        # averages (TOT + (step - TS) W) / step stay within MAX_WEIGHT
        for w, tot, ts in (("W", "TOT", "TS"), ("B", "BTOT", "BTS")):
            check_state_bound(w, st[w], MAX_WEIGHT, "weights")
            check_state_bound(tot, st[tot], st[ts] * MAX_WEIGHT, "sums of weights",
                              f"{ts} * {MAX_WEIGHT:.3g} (the sum of {ts} steps' weights)")

    def _restore(self):
        self.t_ = int(self._state["step"][0])

    _extra_keys = ("mistakes_curve",)

    def _header_extras(self):
        if not hasattr(self, "mistakes_curve_"):
            return {}
        return {"mistakes_curve": [int(m) for m in self.mistakes_curve_]}

    def _load_extras(self, header):
        curve = header.get("mistakes_curve", [])
        if not (isinstance(curve, list) and all(type(m) is int and 0 <= m <= MAX_COUNT for m in curve)):
            raise ValueError("mistakes_curve must be a list of counts")
        self.mistakes_curve_ = curve

    def _grow_state(self, positions, n_columns, rng):
        st = self._state
        K = st["W"].shape[1]
        for name in ("W", "TOT", "TS"):
            old = st[name]
            new = (self._random_block(rng, (n_columns, K)) if name == "W"
                   else np.zeros((n_columns, K), dtype=old.dtype))
            new[positions] = old
            st[name] = new

    def _algo_params(self):
        return _ALGOS[self._algo], float(self.eta0), 1.0

    def _epoch(self, design, yi, yf, order):
        st = self._state
        check_counter(int(st["step"][0]), len(order))
        algo, eta, C = self._algo_params()
        step, updates, mistakes, loss = pa_epoch(
            design.indptr, design.idx, design.val, yi, order,
            st["W"], st["TOT"], st["TS"], st["B"], st["BTOT"], st["BTS"],
            int(st["step"][0]), algo, eta, C, bool(self.fit_intercept), self._use_average())
        st["step"][0] = step
        n = max(len(order), 1)
        self.__dict__.setdefault("mistakes_curve_", []).append(int(mistakes))
        self.t_ = int(step)
        return {"objective": loss / n, "updates": updates}

    def _finalize(self):
        st = self._state
        step = int(st["step"][0])
        if self._use_average() and step > 0:
            self._coef = np.ascontiguousarray(averaged_weights(st["W"], st["TOT"], st["TS"], step))
            self.intercept_ = averaged_weights(st["B"], st["BTOT"], st["BTS"], step)[0]
        else:
            self._coef = st["W"]
            self.intercept_ = st["B"][0].copy()

    def fit(self, X, y):
        self.__dict__.pop("mistakes_curve_", None)
        return super().fit(X, y)

    @property
    def n_mistakes_(self):
        """Total training mistakes (perceptron: updates) over all epochs."""
        return int(sum(self.mistakes_curve_))


@registry.model_kind("linear.Perceptron")
class Perceptron(_PerceptronFamily):
    """Rosenblatt's perceptron (the notes' version), binary and multiclass.

    On a mistake: w_gold += eta0 * x, w_pred -= eta0 * x (binary:
    w += eta0 * y * x, y = +-1); nothing otherwise.  Starting from zero
    weights ``eta0`` only scales the weights, not the predictions.

    Parameters
    ----------
    eta0 : float, the learning rate (the notes' mu).
    fit_intercept : bool, learn the threshold as the weight of a constant 1.
    init : 'zeros' or 'random' (N(0, 0.01^2), seeded by ``random_state``).
    max_iter : int, the maximum number of epochs.
    tol : float or None.  With a float, training stops as soon as an epoch
        makes no mistake (the separable case), or when the epoch's mean
        perceptron loss has not improved by ``tol`` for ``n_iter_no_change``
        epochs.  None runs exactly ``max_iter`` epochs.
    shuffle : bool, shuffle the samples before every epoch.
    random_state : seed of the shuffles and of random initial weights.
    n_features : None or int, hash space of feature-string inputs (None:
        the full 64-bit space).

    Attributes: ``classes_``, ``coef_``, ``intercept_``, ``n_features_in_``,
    ``n_iter_``, ``t_`` (samples seen), ``mistakes_curve_`` (mistakes per
    epoch), ``n_mistakes_``, ``loss_curve_`` (mean perceptron loss per epoch),
    ``feature_keys_`` (feature-string inputs only).
    """

    def __init__(self, *, eta0=1.0, fit_intercept=True, init="zeros", max_iter=1000, tol=1e-3,
                 n_iter_no_change=5, shuffle=True, random_state=None, n_features=None):
        self.eta0 = eta0
        self.fit_intercept = fit_intercept
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.random_state = random_state
        self.n_features = n_features


@registry.model_kind("linear.AveragedPerceptron")
class AveragedPerceptron(Perceptron):
    """The averaged perceptron: trains like :class:`Perceptron` on the current
    weights, predicts with their average over every example of every epoch,
    avg = (1/T) sum_{t=1..T} w_t (w_t: the weights after example t), kept
    lazily with per-weight timestamps (the core's averaging convention), so
    an update costs O(active features).

    With ``tol=None`` (exactly ``max_iter`` epochs) and ``shuffle=False``,
    ``coef_`` equals the naive algorithm (a <- a + w after every example,
    coef = a / T); binary problems: see the module docstring.  Parameters as
    :class:`Perceptron`; with a float ``tol``, an error-free epoch stops
    training (the averages then cover the epochs run).
    """

    _averaged = True


@registry.model_kind("linear.PassiveAggressiveClassifier")
class PassiveAggressiveClassifier(_PerceptronFamily):
    """Passive-aggressive learners and multiclass MIRA.

    ``variant``:

    * ``"PA"``, ``"PA-I"``, ``"PA-II"`` (Crammer et al. 2006).  Binary:
      loss = max(0, 1 - y w.x), w += tau y x with tau = loss / ||x||^2 (PA),
      min(C, loss / ||x||^2) (PA-I), loss / (||x||^2 + 1 / (2C)) (PA-II).
      Multiclass (one vector per class): the constraint against the
      highest-scoring wrong class r, w_y += tau x, w_r -= tau x, with
      ||x||^2 replaced by 2 ||x||^2.
    * ``"MIRA"``: Crammer & Singer's ultraconservative multiclass update,
      which solves the quadratic programme over all classes at once:
      min 1/2 sum_r ||w'_r - w_r||^2 + C xi  s.t.  w'_y.x - w'_r.x >= 1 - xi
      for all r != y, xi >= 0 — exactly, by the projection of the dual
      (tau_r <= C [r = y], sum_r tau_r = 0).  For two classes it is PA-I.

    ``||x||^2`` includes the constant input when ``fit_intercept``.
    ``average=True`` predicts with the averaged weights (as
    :class:`AveragedPerceptron`).  ``tol``: a float stops training at an
    epoch without any update, or when the epoch's mean hinge loss has not
    improved by ``tol`` for ``n_iter_no_change`` epochs; None runs exactly
    ``max_iter`` epochs.  Other parameters as :class:`Perceptron`.
    """

    _VARIANTS = {"PA": "pa", "PA-I": "pa1", "PA-II": "pa2", "MIRA": "mira"}

    def __init__(self, *, C=1.0, variant="PA-I", average=False, fit_intercept=True, init="zeros",
                 max_iter=1000, tol=1e-3, n_iter_no_change=5, shuffle=True, random_state=None,
                 n_features=None):
        self.C = C
        self.variant = variant
        self.average = average
        self.fit_intercept = fit_intercept
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.random_state = random_state
        self.n_features = n_features


    def _check_params(self):
        self._check_common()
        check_int(self, "n_iter_no_change", 1)
        check_choice(self, "variant", sorted(self._VARIANTS))
        check_real(self, "C", 0, lo_open=True)
        check_choice(self, "init", ("zeros", "random"))
        if not isinstance(self.average, (bool, np.bool_)):     # averaging on or off
            check_int(self, "average", 0)

    def _use_average(self):
        return bool(self.average)

    def _algo_params(self):
        return _ALGOS[self._VARIANTS[self.variant]], 1.0, float(self.C)
