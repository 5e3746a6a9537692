"""A scikit-learn sequence estimator, in the manner of sklearn-crfsuite's
``CRF``: ``X`` is a list of sentences, each a list of tokens or of per-token
feature dicts; ``y`` a list of tag lists.  It pickles through the model file.
"""
import numbers

try:
    from sklearn.base import BaseEstimator
except ImportError:                                   # pragma: no cover - the extra is missing
    raise ImportError("fasttag.sklearn needs scikit-learn: pip install scikit-learn") from None

import numpy as np

from .model import confidence
from .store import loads
from .tasks.featuredicts import FeatureTagger
from .tasks.pos import Tagger

__all__ = ["SequenceTagger"]


class SequenceTagger(BaseEstimator):
    """A structured-perceptron sequence tagger with scikit-learn's API.

    Parameters are those of :meth:`fasttag.Tagger.train`: ``epochs``,
    ``seed``, ``algorithm`` ("perceptron" or "mira"), ``k`` and ``C`` (MIRA),
    ``decoder`` ("viterbi" or "greedy"), ``tagdict_min_count`` and
    ``prune_k`` (None: chosen from the tag count), ``ensemble`` (runs
    averaged into one model).  ``calibrate``: fit the
    marginals' temperature on this fraction of the training sentences,
    held out while choosing it (0: temperature 1).
    """

    def __init__(self, epochs=10, seed=0, algorithm="perceptron", k=None, C=None,
                 decoder="viterbi", tagdict_min_count=None, prune_k=None, calibrate=0.0, ensemble=1):
        self.epochs = epochs
        self.seed = seed
        self.algorithm = algorithm
        self.k = k
        self.C = C
        self.decoder = decoder
        self.tagdict_min_count = tagdict_min_count
        self.prune_k = prune_k
        self.calibrate = calibrate
        self.ensemble = ensemble

    def _options(self):
        opts = {"epochs": self.epochs, "seed": self.seed, "algorithm": self.algorithm,
                "decoder": self.decoder, "ensemble": self.ensemble, "verbose": False}
        for name in ("k", "C", "tagdict_min_count", "prune_k"):
            if getattr(self, name) is not None:
                opts[name] = getattr(self, name)
        return opts

    def fit(self, X, y, X_dev=None, y_dev=None):
        """Train on sentences ``X`` with tags ``y``; with ``X_dev``/``y_dev``,
        keep the epoch that scores best on them."""
        pairs = _pairs(X, y, "X", "y")
        dev = None if X_dev is None else _pairs(X_dev, y_dev, "X_dev", "y_dev")
        c = self.calibrate
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Real) or not 0.0 <= c < 1.0:
            raise ValueError(f"calibrate must be a fraction in [0, 1), not {c!r}")
        held = []
        if self.calibrate:
            rng = np.random.default_rng(self.seed)
            order = rng.permutation(len(pairs))
            n_held = max(1, int(round(self.calibrate * len(pairs))))
            held = [pairs[i] for i in order[:n_held]]
            pairs = [pairs[i] for i in order[n_held:]]
        self.model_ = _task(pairs).train(pairs, dev=dev, **self._options())
        self.temperature_ = 1.0
        if held:
            index = self.model_.model.tag_index
            self.temperature_ = confidence.fit_temperature(
                self.model_.model, [(w, None) for w, _ in held],
                [np.array([index.get(t, -1) for t in ts]) for _, ts in held])
        self.classes_ = list(self.model_.tags)
        return self

    def partial_fit(self, X, y, classes=None):
        """One online pass over a batch: the first call builds the model from
        it (``classes``: every tag later batches may use), later calls continue
        its weights and average.  ``epochs``, ``ensemble`` and ``calibrate`` do not apply."""
        pairs = _pairs(X, y, "X", "y")
        if isinstance(classes, str) or (classes is not None and not all(isinstance(c, str) for c in classes)):
            raise ValueError(f"classes must be a list of tags (strings), not {classes!r}")
        if not hasattr(self, "model_"):
            opts = self._options()
            for name in ("epochs", "ensemble", "verbose"):
                opts.pop(name)
            self.model_ = _task(pairs).untrained(pairs, **opts)
            extra = sorted(set(() if classes is None else classes) - set(self.model_.tags))
            if extra:
                self.model_.model.add_tags(extra)
            self.temperature_ = 1.0
        self.model_.update(pairs)
        self.classes_ = list(self.model_.tags)
        return self

    def _fitted(self):
        if not hasattr(self, "model_"):
            from sklearn.exceptions import NotFittedError
            raise NotFittedError("this SequenceTagger is not fitted yet: call fit first")
        return self.model_

    def predict(self, X):
        """Tag lists of sentences ``X``."""
        return self._fitted().tag_sents(_sentences(X, "X"))

    def predict_single(self, tokens):
        """Tags of one sentence."""
        return self._fitted().tag(tokens)

    def predict_marginals(self, X):
        """Per sentence, per token, a dict tag -> probability (as
        sklearn-crfsuite returns), with the fitted temperature."""
        model = self._fitted()
        sents = _sentences(X, "X")
        tags = model.tags
        return [[dict(zip(tags, row.tolist())) for row in p]
                for p in confidence.marginals(model.model, [(s, None) for s in sents], self.temperature_)]

    def score(self, X, y):
        """Token accuracy of :meth:`predict` on ``X`` against ``y``."""
        pred = self.predict(X)
        gold = _sentences(y, "y")
        if len(gold) != len(pred) or any(len(g) != len(p) for g, p in zip(gold, pred)):
            raise ValueError("X and y differ in sentence count or sentence lengths")
        total = sum(map(len, gold))
        return sum(g == p for gs, ps in zip(gold, pred) for g, p in zip(gs, ps)) / total if total else 0.0

    def __getstate__(self):
        state = dict(self.__dict__)
        if "model_" in state:
            state["model_"] = state["model_"].to_bytes()      # the model file, never its internals
        return state

    def __setstate__(self, state):
        if "model_" in state:
            state["model_"] = loads(state["model_"])
        self.__dict__.update(state)


def _task(pairs):
    """The task class of training pairs: feature dicts or token strings."""
    first = next((w[0] for w, _ in pairs if w), None)
    return FeatureTagger if isinstance(first, dict) else Tagger


def _sentences(X, name):
    if isinstance(X, str):
        raise TypeError(f"{name} must be a list of sentences (token lists), not a str")
    out = []
    for i, s in enumerate(X):
        if isinstance(s, str):
            raise TypeError(f"{name}[{i}] must be a list of tokens, not a str")
        out.append(list(s))
    return out


def _pairs(X, y, xname, yname):
    if y is None:
        raise ValueError(f"{yname} is required")
    X, y = _sentences(X, xname), _sentences(y, yname)
    if len(X) != len(y):
        raise ValueError(f"{xname} has {len(X)} sentences and {yname} {len(y)}")
    for i, (w, t) in enumerate(zip(X, y)):
        if len(w) != len(t):
            raise ValueError(f"sentence {i} has {len(w)} tokens and {len(t)} tags")
    return [(w, t) for w, t in zip(X, y) if w]
