"""The formal neuron of the course: y_hat = f(w.x + b) with squared loss.

Activations ``identity``, ``logistic``, ``tanh``, ``relu`` and
``heaviside`` (trained with f' taken as 1, the delta rule); full-batch
gradient descent (``gd``) or one update per sample (``sgd``), stopped when
the gradient's norm falls under ``tol``.  ``learning_rate="scaled"`` (the
default) steps in standardized coordinates and takes back a step that
raises the objective, so training does not depend on the columns' units
and cannot diverge; ``"constant"`` is the notes' rule.  Meant for
teaching-sized data: the sgd solver loops in Python.  Details:
docs/linear.md.
"""
import warnings

import numpy as np

from ..model import registry
from ._base import LinearModel
from .filechecks import check_finite_weights
from .params import check_choice, check_real
from ._compat import ConvergenceWarning, RegressorMixin, check_is_fitted, check_random_state


def _act(name, z):
    if name == "identity":
        return z
    if name == "logistic":
        return 0.5 * (1.0 + np.tanh(0.5 * z))
    if name == "tanh":
        return np.tanh(z)
    if name == "relu":
        return np.maximum(z, 0.0)
    return (z > 0).astype(np.float64)   # heaviside


def _dact(name, z, out):
    if name == "identity" or name == "heaviside":
        return np.ones_like(z)
    if name == "logistic":
        return out * (1.0 - out)
    if name == "tanh":
        return 1.0 - out * out
    return (z > 0).astype(np.float64)   # relu


ACTIVATIONS = ("identity", "heaviside", "logistic", "tanh", "relu")


def _column_scales(design, n_columns, centre):
    """The columns' means and standard deviations (with ``centre`` False:
    zero means and root mean squares); 1 for a column without spread."""
    n, idx, val = design.n_samples, design.idx, design.val
    mu = np.bincount(idx, weights=val, minlength=n_columns) / n if centre else np.zeros(n_columns)
    dev = val - mu[idx]          # two passes: no cancellation for columns far from zero
    absent = n - np.bincount(idx, minlength=n_columns)      # the zeros a sparse row leaves out
    sd = np.sqrt((np.bincount(idx, weights=dev * dev, minlength=n_columns) + absent * mu * mu) / n)
    sd[~(sd > 1e-12 * np.maximum(np.abs(mu), 1.0))] = 1.0    # constant (to rounding): nothing to scale
    return mu, sd


def _norm(gw, gb, mu, sd):
    """The gradient norm in the coordinates the steps are taken in
    (v = w * sd, c = b + mu.w; w and b themselves under constant steps)."""
    gv = (gw - mu * gb) / sd
    return float(np.sqrt(gv @ gv + gb * gb))


@registry.model_kind("linear.Neuron")
class Neuron(RegressorMixin, LinearModel):
    """A single neuron y_hat = activation(w.x + b) trained on the squared loss.

    Parameters: ``activation`` (see module), ``solver`` ('gd' or 'sgd'),
    ``learning_rate`` ('scaled' or 'constant', see module), ``eta0``
    (learning rate), ``max_iter`` (iterations for gd, epochs for
    sgd), ``tol`` (stop when the gradient norm < tol; None: exactly
    max_iter), ``fit_intercept``, ``shuffle`` (sgd), ``random_state`` (initial
    weights and shuffles), ``n_features`` (feature-string inputs).

    Attributes: ``coef_`` (n_features,), ``intercept_`` (1,),
    ``n_features_in_``, ``n_iter_``, ``loss_curve_``, ``grad_norm_`` (the
    gradient norm when training stopped).  Model files written before
    ``learning_rate`` existed load with ``learning_rate="constant"``, the rule
    they were trained with.
    """

    _is_classifier = False
    _step_params = "eta0"

    def __init__(self, activation="identity", *, solver="gd", learning_rate="scaled", eta0=0.1, max_iter=1000,
                 tol=1e-4, fit_intercept=True, shuffle=True, random_state=None, n_features=None):
        self.activation = activation
        self.solver = solver
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.shuffle = shuffle
        self.random_state = random_state
        self.n_features = n_features

    def _check_params(self):
        self._check_common()
        check_choice(self, "activation", ACTIVATIONS)
        check_choice(self, "solver", ("gd", "sgd"))
        check_choice(self, "learning_rate", ("scaled", "constant"))
        check_real(self, "eta0", 0, lo_open=True)

    def _forward(self, design, rows, w, b):
        z = np.bincount(rows, weights=design.val * w[design.idx], minlength=design.n_samples) + b
        return z, _act(self.activation, z)

    def _gradient(self, design, rows, y, w, b):
        z, out = self._forward(design, rows, w, b)
        n = design.n_samples
        r = out - y
        g = r * _dact(self.activation, z, out)
        gw = np.bincount(design.idx, weights=design.val * g[rows], minlength=len(w)) / n
        gb = g.sum() / n if self.fit_intercept else 0.0
        return 0.5 * float(np.mean(r * r)), gw, gb

    def fit(self, X, y):
        """Train from fresh random weights; returns self."""
        self._check_params()
        design, y = self._design(X, y, reset=True, need_y=True)
        y = np.asarray(y, dtype=np.float64)
        rng = check_random_state(self.random_state)
        F = self._n_columns()
        scaled = self.learning_rate == "scaled"
        mu, sd = _column_scales(design, F, self.fit_intercept) if scaled else (np.zeros(F), np.ones(F))
        inv2 = 1.0 / (sd * sd)
        centred = bool(mu.any())
        # small random weights in the standardized coordinates, mapped back
        w = rng.normal(0.0, 0.01, size=F) / sd
        b = (rng.normal(0.0, 0.01) if self.fit_intercept else 0.0) - float(mu @ w)
        rows = design.rows()
        eta = float(self.eta0)
        self.loss_curve_ = []
        converged = False
        n_iter = 0
        norm = np.inf
        last = None       # (loss, gw, gb, w, b) where the last step began: a scaled step raising J goes back to it
        for _ in range(self.max_iter):
            if self.solver == "gd":
                loss, gw, gb = self._gradient(design, rows, y, w, b)
                if scaled and last is not None and not loss <= last[0]:
                    (loss, gw, gb, w, b), eta = last, eta / 2
                norm = _norm(gw, gb, mu, sd)
                if self.tol is not None and norm < self.tol:
                    converged = True
                    break
                if scaled:
                    last = (loss, gw, gb, w.copy(), b)
                # a step in the standardized coordinates v = w * sd, c = b + mu.w
                dw = -eta * ((gw - mu * gb) * inv2)
                w += dw
                b += -eta * gb - float(mu @ dw)
                n_iter += 1
                self.loss_curve_.append(loss)
            else:
                if scaled and last is None:
                    last = self._gradient(design, rows, y, w, b) + (w.copy(), b)
                order = rng.permutation(design.n_samples) if self.shuffle else range(design.n_samples)
                ip, idx, val = design.indptr, design.idx, design.val
                for i in order:
                    cols, vals = idx[ip[i]:ip[i + 1]], val[ip[i]:ip[i + 1]]
                    z = float(vals @ w[cols]) + b
                    out = _act(self.activation, np.array([z]))
                    g = float(((out - y[i]) * _dact(self.activation, np.array([z]), out))[0])
                    step = eta * g
                    if centred:     # the sample's standardized row is dense: (x - mu) / sd
                        dw = step * mu * inv2
                        np.add.at(dw, cols, -step * vals * inv2[cols])
                        w += dw
                        b += -step - float(mu @ dw)
                    else:
                        np.add.at(w, cols, -step * vals * inv2[cols])
                        if self.fit_intercept:
                            b -= step
                n_iter += 1
                loss, gw, gb = self._gradient(design, rows, y, w, b)
                if scaled:
                    if not loss <= last[0]:       # the epoch raised J: take it back, halve the step
                        (loss, gw, gb, w, b), eta = last, eta / 2
                    last = (loss, gw, gb, w.copy(), b)
                self.loss_curve_.append(loss)
                norm = _norm(gw, gb, mu, sd)
                if self.tol is not None and norm < self.tol:
                    converged = True
                    break
        if scaled and self.solver == "gd" and not converged and last is not None:
            if not self._gradient(design, rows, y, w, b)[0] <= last[0]:     # the last step raised J
                w, b = last[3], last[4]
        check_finite_weights(self, w, np.array([b]))
        if not converged:
            loss, gw, gb = self._gradient(design, rows, y, w, b)
            norm = _norm(gw, gb, mu, sd)
            if self.tol is not None and norm >= self.tol:
                warnings.warn(f"Neuron: gradient norm {norm:.3g} >= tol after {self.max_iter} "
                              "iterations; consider increasing max_iter", ConvergenceWarning)
        self.grad_norm_ = float(norm)
        self.n_iter_ = max(n_iter, 1)
        self._coef = np.ascontiguousarray(w.reshape(-1, 1))
        self.intercept_ = np.array([b], dtype=np.float64)
        self._state = {}
        return self

    @classmethod
    def _from_parts(cls, header, arrays):
        """Files of versions without ``learning_rate`` were trained with
        constant steps: they load with that value, not the new default."""
        params = header.get("params")
        if isinstance(params, dict) and "learning_rate" not in params:
            header = dict(header, params=dict(params, learning_rate="constant"))
        return super()._from_parts(header, arrays)

    _extra_keys = ("grad_norm",)

    def _header_extras(self):
        return {"grad_norm": float(self.grad_norm_)} if hasattr(self, "grad_norm_") else {}

    def _load_extras(self, header):
        if "grad_norm" in header:
            norm = header["grad_norm"]
            if type(norm) not in (int, float) or not norm >= 0:
                raise ValueError(f"grad_norm must be a number >= 0, got {norm!r}")
            self.grad_norm_ = float(norm)

    def decision_function_raw(self, X):
        """The neuron's pre-activation w.x + b."""
        return self._raw_scores(X)[:, 0]

    def predict(self, X):
        """activation(w.x + b)."""
        check_is_fitted(self)
        return _act(self.activation, self._raw_scores(X)[:, 0])
