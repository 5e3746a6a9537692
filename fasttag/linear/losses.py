"""The losses of :mod:`fasttag.linear.sgd`, as the compiled learners compute them.

``loss(name, p, y)`` and ``dloss(name, p, y)`` (derivative in p) call the
very functions the training loops use, so tests can check them against
their formulas (docs/linear.md lists them).  Classification losses take
y = +-1.
"""
import numpy as np

from ._weights import LOSSES, dloss_values, loss_values

CLASSIFICATION_LOSSES = ("hinge", "log_loss", "squared_error", "modified_huber", "perceptron")
REGRESSION_LOSSES = ("squared_error", "huber", "epsilon_insensitive", "squared_epsilon_insensitive")


def _args(p, y):
    p = np.ascontiguousarray(np.atleast_1d(p), dtype=np.float64)
    y = np.ascontiguousarray(np.broadcast_to(np.asarray(y, dtype=np.float64), p.shape))
    return p, y


def loss(name, p, y, epsilon=0.1):
    """Loss values of predictions p for targets y."""
    p, y = _args(p, y)
    return loss_values(LOSSES[name], p, y, epsilon)


def dloss(name, p, y, epsilon=0.1):
    """d loss / d p."""
    p, y = _args(p, y)
    return dloss_values(LOSSES[name], p, y, epsilon)
