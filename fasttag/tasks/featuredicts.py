"""Sequence tagging over per-token feature dicts, as sklearn-crfsuite's
users write them.

An example is ``(features, tags)``: one dict per token, every entry a
binary feature (rules: docs/formats.md); the model stores only hashes.
"""
import numpy as np

from ..text import metrics
from .. import parallel
from .._core.weights import hash_strings
from ..errors import InputError, ModelFormatError
from ..model.sequence import SequenceModel
from ..model import registry
from .base import SequenceTask
from .tagsets import decode_tags, tag_set

SEED = 0x5EEDF00D


def feature_strings(features, where=""):
    """The binary feature names of one token's dict."""
    if not isinstance(features, dict):
        raise TypeError(f"{where}a token's features must be a dict, not {type(features).__name__}")
    out = []
    for name, value in features.items():
        name = str(name)
        if value is None or value is False:
            continue
        if value is True:
            out.append(name)
        elif isinstance(value, str):
            out.append(f"{name}={value}")
        elif isinstance(value, (int, float, np.integer, np.floating)):
            if value == 1:
                out.append(name)
            elif value != 0:
                raise InputError(f"{where}feature {name!r} has the value {value!r}: real-valued features "
                                 f"are not supported (use a string, True/False, or 1/0)")
        elif isinstance(value, dict):
            out.extend(f"{name}:{s}" for s in feature_strings(value, where))
        elif isinstance(value, (list, tuple, set, frozenset)):
            for item in value:
                if not isinstance(item, str):
                    raise InputError(f"{where}feature {name!r} lists a {type(item).__name__}: items must be str")
                out.append(f"{name}={item}")
        else:
            raise InputError(f"{where}feature {name!r} has a {type(value).__name__} value")
    return out


class DictFeaturizer:
    """Hashes each token's feature names; rows of unequal length are padded
    with key 0, which training never stores (so it scores nothing)."""

    attribute_names = ()

    def feature_keys(self, inputs):
        """(keys uint64[n_tokens, max features], bounds) of a batch of
        sentences (lists of dicts)."""
        names = [feature_strings(f, f"sentence {s}, token {t}: ")
                 for s, sent in enumerate(inputs) for t, f in enumerate(sent)]
        bounds = np.zeros(len(inputs) + 1, dtype=np.int64)
        np.cumsum([len(sent) for sent in inputs], out=bounds[1:])
        counts = np.array([len(n) for n in names], dtype=np.int64)
        width = int(counts.max()) if len(counts) else 0
        keys = np.zeros((len(names), max(width, 1)), dtype=np.uint64)
        flat = [s for n in names for s in n]
        if flat:
            rows = np.repeat(np.arange(len(names)), counts)
            cols = np.arange(len(flat)) - np.repeat(np.cumsum(counts) - counts, counts)
            keys[rows, cols] = hash_strings(flat, SEED)
        return keys, bounds


@registry.task("features", title="feature tagger", options=("tag set",))
class FeatureTagger(SequenceTask):
    """A structured-perceptron tagger over per-token feature dicts
    (docs/formats.md), used by :class:`fasttag.sklearn.SequenceTagger`."""

    task = "features"
    kind = "feature-tagger"
    featurizer = ("dict", 1)
    primary = "accuracy"
    local_features = True

    @property
    def tags(self):
        return list(self.model.tags)

    @classmethod
    def _read(cls, data, opts, what):
        if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__") or not hasattr(data, "__iter__"):
            raise TypeError(f"{what}: feature dicts are given in Python as (features, tags) pairs, "
                            f"not {type(data).__name__}")
        out = []
        for i, item in enumerate(data):
            try:
                feats, tags = item
            except (TypeError, ValueError):
                raise TypeError(f"{what}: sentence {i} must be a (features, tags) pair") from None
            feats = list(feats)
            if tags is not None:
                tags = list(tags)
                if len(tags) != len(feats):
                    raise InputError(f"{what}: sentence {i} has {len(feats)} tokens and {len(tags)} tags")
            if feats:
                out.append((feats, tags))
        return out

    @classmethod
    def _build(cls, examples, opts):
        tags = tag_set(examples, "training data has no tags")
        return cls(SequenceModel(tags, DictFeaturizer(), (), decoder=opts["decoder"]))

    def _encode(self, examples, training=False):
        index = self.model.tag_index
        return [(f, None, None if ts is None else [index.get(t, -1) for t in ts]) for f, ts in examples]

    def _decode(self, examples, ids):
        return decode_tags(self.model.tags, ids)

    def _gold_tags(self, examples):
        return {t for _, ts in examples if ts is not None for t in ts}

    def _score(self, examples, outputs, opts):
        if any(tags is None for _, tags in examples):
            raise InputError("the evaluation data has no tags")
        return metrics.score_tagging([t for _, t in examples], outputs)

    def tag_sents(self, sentences, n_best=None, n_threads=1):
        """Tags of many sentences (lists of feature dicts); ``n_best`` and
        ``n_threads`` as in :meth:`fasttag.Tagger.tag_sents`."""
        examples = [(_sentence(s, i), None) for i, s in enumerate(sentences)]
        return self._predict(examples, parallel.check_threads(n_threads), n_best)

    def tag(self, features, n_best=None):
        """Tags of one sentence (a list of feature dicts)."""
        return self.tag_sents([features], n_best=n_best)[0]

    def marginals(self, sentences):
        """Per sentence an ``n x T`` array of tag probabilities (columns in
        the order of :attr:`tags`)."""
        return self._marginals([(_sentence(s, i), None) for i, s in enumerate(sentences)])

    @classmethod
    def _featurizer_from(cls, spec, header, arrays, meta):
        if header.get("templates") != []:
            raise ModelFormatError("corrupt fasttag model: a feature tagger has no templates")
        return DictFeaturizer()


def _sentence(features, i):
    if isinstance(features, (str, bytes, dict)):
        raise TypeError(f"sentence {i} must be a list of feature dicts, not a {type(features).__name__}")
    return list(features)
