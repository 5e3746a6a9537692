"""The formal neuron of the course: y_hat = f(w.x + b) with squared loss.

J(w, b) = (1/n) sum_i (f(w.x_i + b) - y_i)^2 / 2, whose gradient is
(1/n) sum_i (f(z_i) - y_i) f'(z_i) x_i.  Activations: ``identity`` (the
neuron is linear regression), ``logistic`` (a logistic unit), ``tanh``,
``relu`` and ``heaviside``; the heaviside step has no useful derivative, so
it trains with f' taken as 1 (Rosenblatt's / Widrow-Hoff's delta rule).

``solver="gd"``: full-batch gradient descent w <- w - eta0 grad J, stopped
as soon as ||grad J|| < tol (the epsilon of the notes) or after
``max_iter`` iterations.  ``solver="sgd"``: one update per sample
(shuffled each epoch when ``shuffle``), with the same stopping test on the
full gradient after every epoch.  Initial weights are small seeded random
numbers (N(0, 0.01^2)), which relu needs to leave zero.
``loss_curve_`` records J after every iteration (gd) or epoch (sgd).
Meant for teaching-sized data: the sgd solver loops in Python.
"""
import warnings

import numpy as np

from ._base import LinearModel, check_choice, check_finite_weights, check_real
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


class Neuron(RegressorMixin, LinearModel):
    """A single neuron y_hat = activation(w.x + b) trained on the squared loss.

    Parameters: ``activation`` (see module), ``solver`` ('gd' or 'sgd'),
    ``eta0`` (learning rate), ``max_iter`` (iterations for gd, epochs for
    sgd), ``tol`` (stop when the gradient norm < tol; None: exactly
    max_iter), ``fit_intercept``, ``shuffle`` (sgd), ``random_state`` (initial
    weights and shuffles), ``n_features`` (feature-string inputs).

    Attributes: ``coef_`` (n_features,), ``intercept_`` (1,),
    ``n_features_in_``, ``n_iter_``, ``loss_curve_``, ``grad_norm_`` (the
    gradient norm when training stopped).
    """

    _is_classifier = False
    _step_params = "eta0"

    def __init__(self, activation="identity", *, solver="gd", eta0=0.1, max_iter=1000, tol=1e-4,
                 fit_intercept=True, shuffle=True, random_state=None, n_features=None):
        self.activation = activation
        self.solver = solver
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
        w = rng.normal(0.0, 0.01, size=F)
        b = rng.normal(0.0, 0.01) if self.fit_intercept else 0.0
        rows = design.rows()
        eta = float(self.eta0)
        self.loss_curve_ = []
        converged = False
        n_iter = 0
        for _ in range(self.max_iter):
            if self.solver == "gd":
                loss, gw, gb = self._gradient(design, rows, y, w, b)
                norm = np.sqrt(gw @ gw + gb * gb)
                if self.tol is not None and norm < self.tol:
                    converged = True
                    break
                w -= eta * gw
                b -= eta * gb
                n_iter += 1
                self.loss_curve_.append(loss)
            else:
                order = rng.permutation(design.n_samples) if self.shuffle else range(design.n_samples)
                ip, idx, val = design.indptr, design.idx, design.val
                for i in order:
                    cols, vals = idx[ip[i]:ip[i + 1]], val[ip[i]:ip[i + 1]]
                    z = float(vals @ w[cols]) + b
                    out = _act(self.activation, np.array([z]))
                    g = float(((out - y[i]) * _dact(self.activation, np.array([z]), out))[0])
                    np.add.at(w, cols, -eta * g * vals)
                    if self.fit_intercept:
                        b -= eta * g
                n_iter += 1
                loss, gw, gb = self._gradient(design, rows, y, w, b)
                self.loss_curve_.append(loss)
                norm = np.sqrt(gw @ gw + gb * gb)
                if self.tol is not None and norm < self.tol:
                    converged = True
                    break
        check_finite_weights(self, w, np.array([b]))
        if not converged:
            loss, gw, gb = self._gradient(design, rows, y, w, b)
            norm = np.sqrt(gw @ gw + gb * gb)
            if self.tol is not None and norm >= self.tol:
                warnings.warn(f"Neuron: gradient norm {norm:.3g} >= tol after {self.max_iter} "
                              "iterations; consider increasing max_iter", ConvergenceWarning)
        self.grad_norm_ = float(norm)
        self.n_iter_ = max(n_iter, 1)
        self._coef = np.ascontiguousarray(w.reshape(-1, 1))
        self.intercept_ = np.array([b], dtype=np.float64)
        self._state = {}
        return self

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
