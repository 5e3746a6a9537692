"""The multi-layer perceptron: layers of neurons trained by stochastic
gradient, with gradients from backpropagation.

Hidden layers of identity, logistic, tanh or relu units; softmax and log
loss for classes, squared loss for regression; L2 on the weights; SGD with
momentum or Adam in mini-batches, iterate averaging, early stopping.  On
sparse inputs the first layer is an embedding bag over the active features
(a sample costs its active features, never the input dimension); on dense
inputs each mini-batch is float32 matrix products (BLAS when scipy is
installed).  ``loss_curve_`` is the exact objective after every epoch.  The
compiled passes are in :mod:`fasttag.linear._mlp`; the maths in docs/linear.md.
"""
import warnings

import numpy as np

from ..model import modelfile, registry
from ._mlp import (ACTIVATIONS, MAX_LAYERS, SOLVERS, dense_epoch, dense_forward, dense_gradient, dense_loss,
                    mlp_epoch, mlp_forward, mlp_gradient)
from ._base import LinearClassifierMixin, LinearModel
from .filechecks import (FEATURIZERS, MAX_WEIGHT, checked_estimator, checked_input_kind, checked_params,
                         classes_from_json, set_feature_names, short, stored_array)
from .params import MAX_COUNT, check_bool, check_choice, check_int, check_real, is_int, is_real
from ._compat import (HAVE_SKLEARN, ClassifierMixin, ConvergenceWarning, RegressorMixin, check_is_fitted,
                      check_random_state)
from .inputs import Design

__all__ = ["MLPClassifier", "MLPRegressor"]

#: Largest number of parameters a network may have (2**31 float64: 16 GiB).
MAX_PARAMS = 2 ** 31


def layer_offsets(sizes):
    """(woff, boff): where each layer's weights and biases start in the flat
    parameter array (W0 first, then b0, W1, b1, ...), and the total."""
    woff, boff = [], []
    pos = 0
    for i in range(len(sizes) - 1):
        woff.append(pos)
        pos += sizes[i] * sizes[i + 1]
        boff.append(pos)
        pos += sizes[i + 1]
    return np.array(woff, dtype=np.int64), np.array(boff, dtype=np.int64), pos


def _subset(design, rows):
    """The samples ``rows`` of a design, in that order."""
    starts = design.indptr[rows]
    lengths = design.indptr[rows + 1] - starts
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    take = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1], dtype=np.int64)
    return Design(indptr, design.idx[take], design.val[take])


def _dense_matrix(design, n_columns):
    """The samples as an (n, n_columns) float64 view when every sample
    stores every column in order (a dense input), else None (the sparse,
    embedding-bag path)."""
    n = design.n_samples
    if n_columns < 1 or len(design.idx) != n * n_columns or len(design.val) != n * n_columns:
        return None
    if not (np.array_equal(design.indptr, np.arange(0, n * n_columns + 1, n_columns))
            and np.array_equal(design.idx.reshape(n, n_columns), np.broadcast_to(np.arange(n_columns),
                                                                                 (n, n_columns)))):
        return None
    return design.val.reshape(n, n_columns)


def _log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


class BaseMLP(LinearModel):
    """Shared by :class:`MLPClassifier` and :class:`MLPRegressor`."""

    _output = None     # "softmax" or "identity"

    def __init__(self, hidden_layer_sizes=(100,), activation="relu", *, solver="adam", alpha=1e-4,
                 batch_size="auto", learning_rate="constant", learning_rate_init=1e-3, power_t=0.5,
                 max_iter=200, shuffle=True, random_state=None, tol=1e-4, momentum=0.9,
                 nesterovs_momentum=True, early_stopping=False, validation_fraction=0.1, beta_1=0.9,
                 beta_2=0.999, epsilon=1e-8, n_iter_no_change=10, average=False, n_features=None):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_init = learning_rate_init
        self.power_t = power_t
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.tol = tol
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.n_iter_no_change = n_iter_no_change
        self.average = average
        self.n_features = n_features

    # ------------------------------------------------------------ parameters

    def _hidden(self):
        h = self.hidden_layer_sizes
        return [int(h)] if is_int(h) else [int(v) for v in h]     # numpy ints too (a grid search's)

    def _check_params(self):
        h = self.hidden_layer_sizes
        if is_int(h):
            h = [h]
        if not (isinstance(h, (list, tuple, np.ndarray)) and 1 <= len(h) <= MAX_LAYERS - 1
                and all(is_int(v) and 1 <= v <= 2 ** 24 for v in h)):
            raise ValueError(f"hidden_layer_sizes must be an int or a sequence of 1 to {MAX_LAYERS - 1} "
                             f"ints in [1, 2**24], got {short(self.hidden_layer_sizes)}")
        check_choice(self, "activation", tuple(ACTIVATIONS))
        check_choice(self, "solver", tuple(SOLVERS))
        check_real(self, "alpha", 0)
        if not (isinstance(self.batch_size, str) and self.batch_size == "auto"):
            check_int(self, "batch_size", 1)
        check_choice(self, "learning_rate", ("constant", "invscaling", "adaptive"))
        check_real(self, "learning_rate_init", 0, lo_open=True)
        check_real(self, "power_t", 0)
        check_int(self, "max_iter", 1)
        check_bool(self, "shuffle")
        check_real(self, "tol", 0)
        check_real(self, "momentum", 0)
        if self.momentum > 1:
            raise ValueError(f"momentum must be in [0, 1], got {self.momentum!r}")
        check_bool(self, "nesterovs_momentum")
        check_bool(self, "early_stopping")
        check_real(self, "validation_fraction", 0, lo_open=True)
        if self.validation_fraction >= 1:
            raise ValueError(f"validation_fraction must be in (0, 1), got {self.validation_fraction!r}")
        for name in ("beta_1", "beta_2"):
            check_real(self, name, 0)
            if getattr(self, name) >= 1:
                raise ValueError(f"{name} must be in [0, 1), got {getattr(self, name)!r}")
        check_real(self, "epsilon", 0, lo_open=True)
        check_int(self, "n_iter_no_change", 1)
        if not isinstance(self.average, (bool, np.bool_)):
            check_int(self, "average", 0, MAX_COUNT)
        check_int(self, "n_features", 1, 2 ** 64 - 1, none=True)
        rs = self.random_state
        if not (rs is None or isinstance(rs, np.random.RandomState)
                or (is_int(rs) and 0 <= rs <= 2 ** 32 - 1)):
            raise ValueError(f"random_state must be None, an int in [0, 2**32 - 1] or a "
                             f"RandomState, got {rs!r}")

    def _averaging_start(self):
        """t0 of the averaged iterates, or -1 without averaging."""
        if isinstance(self.average, (bool, np.bool_)):
            return 0 if self.average else -1
        return int(self.average)

    # ------------------------------------------------------------ the network

    def _net(self):
        """(sizes, woff, boff) as the compiled passes take them (kept while
        the sizes stay: the epoch loop asks for them every epoch)."""
        key = tuple(self._sizes)
        cached = getattr(self, "_net_cache", None)
        if cached is None or cached[0] != key:
            woff, boff, _ = layer_offsets(self._sizes)
            cached = self._net_cache = (key, (np.asarray(self._sizes, dtype=np.int64), woff, boff))
        return cached[1]

    @property
    def coefs_(self):
        """Weight matrices, ``coefs_[l]`` of shape (fan_in, fan_out) (views)."""
        check_is_fitted(self)
        woff, _, _ = layer_offsets(self._sizes)
        return [self._weights[o: o + a * b].reshape(a, b)
                for o, a, b in zip(woff, self._sizes[:-1], self._sizes[1:])]

    @property
    def intercepts_(self):
        """Bias vectors, ``intercepts_[l]`` of shape (fan_out,) (views)."""
        check_is_fitted(self)
        _, boff, _ = layer_offsets(self._sizes)
        return [self._weights[o: o + b] for o, b in zip(boff, self._sizes[1:])]

    @property
    def coef_(self):
        raise AttributeError(f"{type(self).__name__} has coefs_ (one matrix per layer), not coef_")

    def _init_weights(self, rng):
        """Glorot-uniform weights, as scikit-learn initialises its MLP."""
        sizes = self._sizes
        woff, boff, total = layer_offsets(sizes)
        if total > MAX_PARAMS:
            raise ValueError(f"a network of layers {sizes} has {total} parameters, more than 2**31")
        params = np.empty(total)
        factor = 2.0 if self.activation == "logistic" else 6.0
        for i in range(len(sizes) - 1):
            bound = np.sqrt(factor / (sizes[i] + sizes[i + 1]))
            n_w = sizes[i] * sizes[i + 1]
            params[woff[i]: woff[i] + n_w] = rng.uniform(-bound, bound, n_w)
            params[boff[i]: boff[i] + sizes[i + 1]] = rng.uniform(-bound, bound, sizes[i + 1])
        return params

    def _outputs(self, design, weights, dense=None):
        """Output pre-activations; ``dense``: the samples' dense view when
        the caller found it (else looked for here)."""
        sizes, woff, boff = self._net()
        out = np.empty((design.n_samples, sizes[-1]))
        if dense is None:
            dense = _dense_matrix(design, sizes[0])
        if dense is not None:
            dense_forward(dense, sizes, woff, boff, ACTIVATIONS[self.activation], weights, out)
        else:
            mlp_forward(design.indptr, design.idx, design.val, sizes, woff, boff,
                        ACTIVATIONS[self.activation], weights, out)
        return out

    def _targets(self, y):
        """(int labels, float targets) of the compiled loops: one is empty."""
        raise NotImplementedError

    def _objective(self, design, yi, yf, weights, dense=None, dense_weights=None):
        """Exact (1/n) sum loss_i + (alpha / 2) ||W||^2 (``dense``: the
        samples' dense view, for the batched pass, in its precision;
        ``dense_weights``: ``weights`` in that precision when at hand)."""
        if dense is not None:               # compiled throughout: no numpy warnings to silence
            sizes, woff, boff = self._net()
            data = dense_loss(dense, yi, yf, sizes, woff, boff, ACTIVATIONS[self.activation],
                              0 if self._output == "softmax" else 1,
                              weights.astype(dense.dtype) if dense_weights is None else dense_weights) / len(dense)
            return data + 0.5 * self.alpha * self._squared_weights(weights)
        with np.errstate(over="ignore", invalid="ignore"):      # a diverging run: inf, caught by fit
            z = self._outputs(design, weights)
            if self._output == "softmax":
                data = -float(np.mean(_log_softmax(z)[np.arange(len(yi)), yi]))
            else:
                data = 0.5 * float(np.mean(np.sum((z - yf) ** 2, axis=1)))
            return data + 0.5 * self.alpha * self._squared_weights(weights)

    def _squared_weights(self, weights):
        """||W||^2 over the weights (not the biases)."""
        _, woff, _ = self._net()
        return sum(float(weights[o: o + a * b] @ weights[o: o + a * b])
                   for o, a, b in zip(woff, self._sizes[:-1], self._sizes[1:]))

    def _objective_gradient(self, X, y, weights):
        """(J, dJ/dweights) on all of X, y as one batch: a testing hook for
        the gradient checks (``weights``: a flat array like ``_weights``)."""
        design, y = self._design(X, y, reset=False)
        yi, yf = self._targets(y)
        sizes, woff, boff = self._net()
        weights = np.ascontiguousarray(weights, dtype=np.float64)
        dense = _dense_matrix(design, sizes[0])
        if dense is not None:
            loss, grad = dense_gradient(dense, yi, yf, sizes, woff, boff, ACTIVATIONS[self.activation],
                                        0 if self._output == "softmax" else 1, weights)
        else:
            loss, grad = mlp_gradient(design.indptr, design.idx, design.val, yi, yf, sizes, woff, boff,
                                      ACTIVATIONS[self.activation], 0 if self._output == "softmax" else 1,
                                      weights)
        for o, a, b in zip(woff, sizes[:-1], sizes[1:]):
            w = weights[o: o + a * b]
            loss += 0.5 * self.alpha * float(w @ w)
            grad[o: o + a * b] += self.alpha * w
        return loss, grad

    # ------------------------------------------------------------ training

    def _fit(self, design, yi, yf, n_outputs, rng):
        sizes = [self._n_columns()] + self._hidden() + [n_outputs]
        self._sizes = sizes
        params = self._init_weights(rng)
        n = design.n_samples
        val_design = None
        if self.early_stopping:
            n_val = int(round(self.validation_fraction * n))
            if n_val < 1 or n - n_val < 1:
                raise ValueError(f"early_stopping needs at least 1 training and 1 validation sample: "
                                 f"{n} samples with validation_fraction={self.validation_fraction}")
            perm = rng.permutation(n)
            val_rows, tr_rows = np.sort(perm[:n_val]), np.sort(perm[n_val:])
            val_design, design = _subset(design, val_rows), _subset(design, tr_rows)
            val_yi, val_yf = (yi[val_rows] if len(yi) else yi), (yf[val_rows] if len(yf) else yf)
            yi, yf = (yi[tr_rows] if len(yi) else yi), (yf[tr_rows] if len(yf) else yf)
            n = design.n_samples
        sizes_a, woff, boff = self._net()
        dense = _dense_matrix(design, sizes[0])
        val_dense = None if val_design is None else _dense_matrix(val_design, sizes[0])
        if dense is not None:           # the batched path: float32 products, float64 parameters
            x32 = dense.astype(np.float32)
            w32 = params.astype(np.float32)
            g32 = np.empty(len(params), dtype=np.float32)
        P = len(params)
        n_cols = sizes[0]
        grad = np.zeros(P)
        solver = SOLVERS[self.solver]
        s1 = np.zeros(P if (solver == 1 or self.momentum != 0) else 0)
        s2 = np.zeros(P if solver == 1 else 0)
        t0 = self._averaging_start()
        acc = np.zeros(P if t0 >= 0 else 0)
        last = np.zeros(n_cols if t0 >= 0 else 0, dtype=np.int64)
        mark = np.full(n_cols, -1, dtype=np.int64)
        touched = np.empty(n_cols, dtype=np.int64)
        batch = min(200, n) if isinstance(self.batch_size, str) else min(int(self.batch_size), n)
        lr = float(self.learning_rate_init)
        t, seen = 0, 0
        self.loss_curve_ = []
        self.validation_scores_ = [] if self.early_stopping else None
        best_run, best_val, best_weights, stale = np.inf, -np.inf, None, 0
        converged = False
        act = ACTIVATIONS[self.activation]
        out = 0 if self._output == "softmax" else 1
        self.n_iter_ = 0
        for _ in range(self.max_iter):
            order = rng.permutation(n).astype(np.int64) if self.shuffle else np.arange(n, dtype=np.int64)
            optimizer = (solver, lr, float(self.momentum), bool(self.nesterovs_momentum), float(self.beta_1),
                         float(self.beta_2), float(self.epsilon), float(self.alpha), batch, t, t0)
            if dense is not None:
                running, t = dense_epoch(x32, yi, yf, order, sizes_a, woff, boff, act, out, params, w32, g32,
                                         grad, s1, s2, acc, *optimizer)
                last[:] = t                 # every row is current after a dense step
            else:
                running, t = mlp_epoch(design.indptr, design.idx, design.val, yi, yf, order, sizes_a, woff, boff,
                                       act, out, params, grad, s1, s2, acc, last, mark, touched, *optimizer)
            seen += n
            self.n_iter_ += 1
            weights = self._current(params, acc, last, t, t0)
            # without averaging the float32 copy of the weights is at hand: the step refreshes it
            objective = self._objective(design, yi, yf, weights, None if dense is None else x32,
                                        w32 if dense is not None and t0 < 0 else None)
            if not (np.all(np.isfinite(params)) and np.isfinite(objective)):
                raise ValueError(f"{type(self).__name__} diverged (NaN or infinite weights) in epoch "
                                 f"{self.n_iter_}: try a smaller learning_rate_init or scaled inputs")
            self.loss_curve_.append(objective)
            if self.learning_rate == "invscaling" and solver == 0:
                lr = self.learning_rate_init / (seen + 1) ** self.power_t
            if self.early_stopping:
                score = self._score_weights(val_design, val_yi, val_yf, weights, val_dense)
                self.validation_scores_.append(score)
                improved = score > best_val + self.tol
                if score > best_val:
                    best_val, best_weights = score, weights.copy()
            else:
                loss = running / n
                improved = loss < best_run - self.tol
                best_run = min(best_run, loss)
            stale = 0 if improved else stale + 1
            if stale > self.n_iter_no_change:
                if self.learning_rate == "adaptive" and solver == 0 and lr > 1e-6:
                    lr /= 5.0
                    stale = 0
                else:
                    converged = True
                    break
        if not converged and self.max_iter > 1:
            warnings.warn(f"Stochastic Optimizer: Maximum iterations ({self.max_iter}) reached and the "
                          "optimization hasn't converged yet.", ConvergenceWarning)
        self._weights = best_weights if self.early_stopping else weights
        self.best_loss_ = None if self.early_stopping else float(min(self.loss_curve_))
        self.best_validation_score_ = float(best_val) if self.early_stopping else None
        self.t_ = int(seen)
        self.n_updates_ = int(t)

    def _current(self, params, acc, last, t, t0):
        """The weights the model predicts with: the average of the iterates
        after step t0 (W0's rows caught up to step t), else the last one."""
        if t0 < 0 or t <= t0:
            return params.copy()
        avg = acc.copy()
        n_cols, H = self._sizes[0], self._sizes[1]
        counts = (t - np.maximum(last, t0)).astype(np.float64)
        avg[: n_cols * H].reshape(n_cols, H)[...] += params[: n_cols * H].reshape(n_cols, H) * counts[:, None]
        return avg / (t - t0)

    def _score_weights(self, design, yi, yf, weights, dense=None):
        """Validation score: accuracy, or R^2 for regression."""
        z = self._outputs(design, weights, dense)
        if self._output == "softmax":
            return float(np.mean(np.argmax(z, axis=1) == yi))
        var = float(np.sum((yf - yf.mean()) ** 2))
        return 1.0 - float(np.sum((yf - z) ** 2)) / var if var > 0 else 0.0

    # ------------------------------------------------------------ persistence

    _extra_keys = ()

    def _stored_params(self):
        params = super()._stored_params()
        params["hidden_layer_sizes"] = self._hidden()
        return params

    def _parts(self):
        header, arrays = self._common_parts()
        header.update(n_iter=int(self.n_iter_), t=int(self.t_), updates=int(self.n_updates_),
                      sizes=[int(s) for s in self._sizes], loss_curve=[float(v) for v in self.loss_curve_],
                      validation_scores=(None if self.validation_scores_ is None
                                         else [float(v) for v in self.validation_scores_]))
        arrays["weights"] = self._weights
        if not (np.all(np.isfinite(self._weights)) and np.abs(self._weights).max() <= MAX_WEIGHT):
            raise ValueError(f"cannot save this {type(self).__name__}: its weights hold NaN, infinity "
                             "or a weight beyond float32 (training diverged)")
        modelfile.stamp(header, FEATURIZERS[self._input_kind], 1)
        return header, arrays

    @classmethod
    def _checked_parts(cls, header, arrays):
        allowed = {"kind", "hash", "featurizer", "params", "input_kind", "n_iter", "t", "updates", "sizes", "loss_curve",
                   "validation_scores", "n_features_in", "feature_names_in", "classes", "classes_dtype"}
        unknown = sorted(set(header) - allowed)
        if unknown:
            raise ValueError(f"unknown header entries {short(unknown)}")
        params = dict(checked_params(cls, {k: v for k, v in (header.get("params") or {}).items()
                                            if k != "hidden_layer_sizes"} if isinstance(header.get("params"), dict)
                                      else header.get("params")))
        hidden = header["params"].get("hidden_layer_sizes", [100])
        if not (isinstance(hidden, list) and all(is_int(v) for v in hidden)):
            raise ValueError(f"params: hidden_layer_sizes must be a list of ints, got {short(hidden)}")
        est = checked_estimator(cls(hidden_layer_sizes=tuple(hidden), **params))
        input_kind = checked_input_kind(header)
        for key in ("n_iter", "t", "updates"):
            v = header.get(key)
            if type(v) is not int or not (1 if key == "n_iter" else 0) <= v <= MAX_COUNT:
                raise ValueError(f"{key} must be an int in [{1 if key == 'n_iter' else 0}, 2**62], got {short(v)}")
        curves = {}
        for key in ("loss_curve", "validation_scores"):
            v = header.get(key)
            if key == "validation_scores" and v is None:
                curves[key] = None
                continue
            if not (isinstance(v, list) and all(is_real(x) for x in v)):
                raise ValueError(f"{key} must be a list of numbers")
            curves[key] = [float(x) for x in v]
        if (curves["validation_scores"] is None) == bool(est.early_stopping) or not curves["loss_curve"]:
            raise ValueError("the curves do not match early_stopping")
        sizes = header.get("sizes")
        if not (isinstance(sizes, list) and len(sizes) == len(hidden) + 2 and all(is_int(s) for s in sizes)
                and sizes[1:-1] == hidden and sizes[0] >= 0 and sizes[-1] >= 1):
            raise ValueError(f"sizes {short(sizes)} do not match hidden_layer_sizes {short(hidden)}")
        _, _, total = layer_offsets(sizes)
        if total > MAX_PARAMS:
            raise ValueError("the network has more than 2**31 parameters")
        weights = stored_array(arrays, "weights", np.float64, (total,))
        if not (np.all(np.isfinite(weights)) and (not total or np.abs(weights).max() <= MAX_WEIGHT)):
            raise ValueError("weights hold NaN, infinity or a weight beyond float32")
        F = sizes[0]
        expected = {"weights"}
        if input_kind == "features":
            if "n_features_in" in header:
                raise ValueError("n_features_in belongs to models of numeric inputs")
            keys = stored_array(arrays, "feature_keys", np.uint64, (F,))
            if F > 1 and not np.all(keys[1:] > keys[:-1]):
                raise ValueError("feature_keys must be strictly increasing")
            if F and est.n_features is not None and int(keys[-1]) >= est.n_features:
                raise ValueError(f"feature_keys lie outside the hash space n_features={est.n_features}")
            expected.add("feature_keys")
        else:
            if F < 1:       # as fit refuses X without columns, predict would refuse every X
                raise ValueError("a network of numeric inputs needs at least 1 input, sizes[0] is 0")
            if header.get("n_features_in") != F or type(header.get("n_features_in")) is not int:
                raise ValueError(f"n_features_in must equal the {F} inputs of the network")
        extra = sorted(set(arrays) - expected)
        if extra:
            raise ValueError(f"unknown arrays {short(extra)}")
        if est._output == "softmax":
            if "classes" not in header or "classes_dtype" not in header:
                raise ValueError("a classifier needs classes and classes_dtype")
            classes = classes_from_json(header["classes"], header["classes_dtype"])
            if sizes[-1] != len(classes):
                raise ValueError(f"{len(classes)} classes need {len(classes)} outputs, the network has {sizes[-1]}")
            est.classes_ = classes
        else:
            if "classes" in header or "classes_dtype" in header:
                raise ValueError("a regressor has no classes")
            if sizes[-1] != 1:
                raise ValueError(f"a regressor has one output, the network has {sizes[-1]}")
        est._input_kind = input_kind
        if input_kind == "features":
            est.feature_keys_ = keys
        est.n_features_in_ = F
        set_feature_names(est, header)
        est._sizes = [int(s) for s in sizes]
        est._weights = np.ascontiguousarray(weights)
        est.n_iter_ = header["n_iter"]
        est.t_ = header["t"]
        est.n_updates_ = header["updates"]
        est.loss_curve_ = curves["loss_curve"]
        est.validation_scores_ = curves["validation_scores"]
        est.best_loss_ = None if est.early_stopping else min(est.loss_curve_)
        est.best_validation_score_ = max(est.validation_scores_) if est.early_stopping else None
        return est

    def _predict_outputs(self, X):
        check_is_fitted(self)
        design, _ = self._design(X, reset=False)
        return self._outputs(design, self._weights)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_weights")



@registry.model_kind("linear.MLPClassifier")
class MLPClassifier(ClassifierMixin, BaseMLP):
    """Multi-layer perceptron classifier: softmax output, log loss.

    Parameters as scikit-learn's ``MLPClassifier`` (``hidden_layer_sizes``,
    ``activation``, ``solver`` 'sgd' or 'adam', ``alpha``, ``batch_size``,
    ``learning_rate``, ``learning_rate_init``, ``power_t``, ``max_iter``,
    ``shuffle``, ``random_state``, ``tol``, ``momentum``,
    ``nesterovs_momentum``, ``early_stopping``, ``validation_fraction``,
    ``beta_1``, ``beta_2``, ``epsilon``, ``n_iter_no_change``), plus
    ``average`` (False, True, or t0: predict with the average of the
    iterates after t0 updates) and ``n_features`` (hash space of
    feature-string inputs).

    Attributes: ``classes_``, ``coefs_``, ``intercepts_``, ``loss_curve_``,
    ``validation_scores_``, ``best_validation_score_``, ``best_loss_``,
    ``n_iter_``, ``t_`` (samples seen), ``n_updates_`` (mini-batch steps),
    ``n_features_in_``, ``feature_keys_``.
    """

    _output = "softmax"

    def _targets(self, y):
        if y is None:
            return np.zeros(0, np.int32), np.zeros((0, 1))
        y = np.asarray(y)
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if len(unknown):
            raise ValueError(f"labels {unknown!r} are not in classes_")
        return np.searchsorted(self.classes_, y).astype(np.int32), np.zeros((0, 1))

    _encode = LinearClassifierMixin._encode

    def fit(self, X, y):
        """Fit on X, y; returns self."""
        self._check_params()
        design, y = self._design(X, y, reset=True, need_y=True)
        classes, yi = self._encode(y)
        if len(classes) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; the data "
                             f"contains only one class: {classes[0]!r}")
        self.classes_ = classes
        rng = check_random_state(self.random_state)
        self._fit(design, np.ascontiguousarray(yi, dtype=np.int32), np.zeros((0, 1)), len(classes), rng)
        return self

    def predict_log_proba(self, X):
        """Log-probabilities (n_samples, n_classes)."""
        return _log_softmax(self._predict_outputs(X))

    def predict_proba(self, X):
        """Probabilities (n_samples, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The most probable class (ties to the first)."""
        best = np.argmax(self._predict_outputs(X), axis=1)
        return self.classes_[best]

    if HAVE_SKLEARN:
        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.input_tags.sparse = True
            return tags


@registry.model_kind("linear.MLPRegressor")
class MLPRegressor(RegressorMixin, BaseMLP):
    """Multi-layer perceptron regressor: identity output, squared loss.
    Parameters and attributes as :class:`MLPClassifier` (no classes)."""

    _output = "identity"
    _is_classifier = False

    def _targets(self, y):
        if y is None:
            return np.zeros(0, np.int32), np.zeros((0, 1))
        return np.zeros(0, np.int32), np.ascontiguousarray(np.asarray(y, dtype=np.float64).reshape(-1, 1))

    def fit(self, X, y):
        """Fit on X, y (one target); returns self."""
        self._check_params()
        design, y = self._design(X, y, reset=True, need_y=True)
        rng = check_random_state(self.random_state)
        self._fit(design, np.zeros(0, np.int32), self._targets(y)[1], 1, rng)
        return self

    def predict(self, X):
        """The network's output (n_samples,)."""
        return self._predict_outputs(X)[:, 0]
