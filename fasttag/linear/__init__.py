"""Linear learners with scikit-learn's interface, on dense, sparse and
feature-string inputs.

* :class:`Perceptron`, :class:`AveragedPerceptron` — the perceptron of the
  notes, binary and multiclass (one weight vector per class);
* :class:`PassiveAggressiveClassifier` — PA, PA-I, PA-II and Crammer &
  Singer's multiclass MIRA, optionally averaged;
* :class:`SGDClassifier`, :class:`SGDRegressor` — SGD with hinge, log_loss,
  squared_error, modified_huber and perceptron losses, L2 with a scale
  factor, constant/invscaling/optimal schedules, averaged SGD;
* :class:`Neuron` — the formal neuron (identity, heaviside, logistic, tanh,
  relu) trained by gradient descent or SGD on the squared loss;
* :class:`MLPClassifier`, :class:`MLPRegressor` — the multi-layer
  perceptron (backpropagation, SGD with momentum or Adam, mini-batches,
  iterate averaging, early stopping; an embedding-bag first layer on sparse
  inputs).

Inputs: numpy arrays, scipy.sparse matrices, or lists of feature-string
lists / ``{feature: value}`` dicts hashed by the core (see
:mod:`fasttag.linear.inputs`).  The compiled loops run one call per epoch
(``fasttag.linear._weights``).

scikit-learn is optional: installed (``pip install fasttag-nlp[sklearn]``), the
estimators are genuine scikit-learn estimators and pass ``check_estimator``;
without it they keep the same interface on minimal stand-ins (no ``clone``
or pipelines, simpler input validation).  Models save to the fasttag model
format with ``save(path)`` / ``to_bytes()`` and load with ``Class.load`` /
``Class.from_bytes`` (never pickle; pickling also works).
"""
from ._compat import HAVE_SKLEARN
from .mlp import MLPClassifier, MLPRegressor
from .neuron import Neuron
from .perceptron import AveragedPerceptron, PassiveAggressiveClassifier, Perceptron
from .sgd import SGDClassifier, SGDRegressor

__all__ = ["Perceptron", "AveragedPerceptron", "PassiveAggressiveClassifier", "SGDClassifier",
           "SGDRegressor", "Neuron", "MLPClassifier", "MLPRegressor", "HAVE_SKLEARN"]
