"""The losses of :mod:`fasttag.linear.sgd`, as the compiled learners compute them.

``loss(name, p, y)`` and ``dloss(name, p, y)`` (derivative in p) call the
very functions the training loops use.  Classification losses take y = +-1.

=====================  ===========================================
hinge                  max(0, 1 - y p)
perceptron             max(0, -y p)
log_loss               log(1 + exp(-y p))
squared_error          (p - y)^2 / 2
modified_huber         (max(0, 1 - y p))^2 if y p >= -1, else -4 y p
huber                  r^2 / 2 if |r| <= epsilon, else epsilon |r| - epsilon^2 / 2  (r = p - y)
epsilon_insensitive    max(0, |y - p| - epsilon)
squared_epsilon_insensitive  max(0, |y - p| - epsilon)^2
=====================  ===========================================
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
