"""Linear learners with scikit-learn's interface, on dense, sparse and
feature-string inputs.

:class:`Perceptron`, :class:`AveragedPerceptron`,
:class:`PassiveAggressiveClassifier` (PA, PA-I, PA-II, multiclass MIRA),
:class:`SGDClassifier`, :class:`SGDRegressor`, :class:`Neuron` (the formal
neuron) and :class:`MLPClassifier`, :class:`MLPRegressor`.  With
scikit-learn installed (``pip install fasttag-nlp[sklearn]``) they are
genuine estimators and pass ``check_estimator``; without it they keep the
interface on minimal stand-ins.  Models save to the fasttag model format,
never pickle.  Details: docs/linear.md.
"""
from ._compat import HAVE_SKLEARN
from .mlp import MLPClassifier, MLPRegressor
from .neuron import Neuron
from .perceptron import AveragedPerceptron, PassiveAggressiveClassifier, Perceptron
from .sgd import SGDClassifier, SGDRegressor

__all__ = ["Perceptron", "AveragedPerceptron", "PassiveAggressiveClassifier", "SGDClassifier",
           "SGDRegressor", "Neuron", "MLPClassifier", "MLPRegressor", "HAVE_SKLEARN"]
