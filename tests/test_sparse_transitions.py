"""Transition weights in a model file: dense, or, for a tagger of hundreds
of classes whose tag pairs are mostly never seen (a lemmatizer, a
morphologizer), the indices and values of the weights that are not zero.
Either form reads back to the same weights and predictions; a broken
sparse form is a corrupt file, not a crash."""
import numpy as np
import pytest

import fasttag
from fasttag.errors import ModelFormatError
from fasttag.model import modelfile
from fasttag.model.sequence import SPARSE_TRANSITIONS_FROM, transition_arrays, transitions_of
from fasttag.tasks.lemma import Lemmatizer


@pytest.fixture(scope="module")
def lemmatizer():
    return fasttag.load("en-ud").parts["lemma"]


def test_either_form_holds_the_same_weights():
    rng = np.random.default_rng(0)
    for T, share in ((3, 1.0), (40, 0.02), (200, 0.02), (200, 0.6), (300, 0.0)):
        size = (T + 2) * T
        trans = np.where(rng.random(size) < share, rng.normal(size=size), 0.0).astype(np.float32).astype(np.float64)
        arrays = transition_arrays(trans)
        sparse = "transitions.index" in arrays
        # small matrices stay dense (as earlier releases wrote them), large ones where that is smaller
        assert sparse == (size >= SPARSE_TRANSITIONS_FROM and 2 * np.count_nonzero(trans) < size)
        assert sparse == (T >= 200 and share < 0.5)
        assert ("transitions" in arrays) != sparse
        assert np.array_equal(transitions_of(arrays, T), trans)


def test_a_lemmatizer_file_stores_its_few_transitions_sparse_and_predicts_the_same(lemmatizer):
    data = lemmatizer.to_bytes()
    header, arrays = modelfile.loads(data)
    assert "transitions" not in arrays and len(arrays["transitions.index"]) == np.count_nonzero(lemmatizer.model.trans)
    again = fasttag.loads(data)
    assert np.array_equal(again.model.trans, lemmatizer.model.trans)
    assert again.to_bytes() == data
    words, upos = ["The", "dogs", "were", "running", "home"], ["DET", "NOUN", "AUX", "VERB", "ADV"]
    assert again.lemmatize(words, upos) == lemmatizer.lemmatize(words, upos) == ["the", "dog", "be", "run", "home"]
    dense = dict(arrays)
    dense.pop("transitions.index"), dense.pop("transitions.values")
    dense["transitions"] = lemmatizer.model.trans.astype(np.float32)       # as files of earlier releases hold it
    old = fasttag.loads(modelfile.dumps(header, dense))
    assert isinstance(old, Lemmatizer) and np.array_equal(old.model.trans, lemmatizer.model.trans)
    assert len(data) < len(modelfile.dumps(header, dense))


def _broken(arrays, **change):
    out = dict(arrays)
    for k, v in change.items():
        if v is None:
            out.pop(k.replace("_", "."))
        else:
            out[k.replace("_", ".")] = v
    return out


@pytest.mark.parametrize("change, match", [
    ({"transitions_index": np.array([5, 3], np.uint32), "transitions_values": np.ones(2, np.float32)}, "ascending"),
    ({"transitions_index": np.array([10 ** 9], np.uint32), "transitions_values": np.ones(1, np.float32)},
     "ascending"),
    ({"transitions_index": np.array([-1, 2], np.int64), "transitions_values": np.ones(2, np.float32)}, "ascending"),
    ({"transitions_values": None}, "transition"),
    ({"transitions_index": None}, "transition"),
    ({"transitions_values": np.ones(3, np.float32)}, "transition"),
    ({"transitions_index": np.array([1.5]), "transitions_values": np.ones(1, np.float32)}, "transition"),
    ({"transitions_index": np.array([1], np.uint32), "transitions_values": np.array([np.nan], np.float32)},
     "transition"),
    ({"transitions_index": np.array([1], np.uint32), "transitions_values": np.array([1], np.int32)}, "transition"),
    ({"transitions": np.zeros(80088, np.float32)}, "twice"),
])
def test_a_broken_sparse_form_is_a_corrupt_file(lemmatizer, change, match):
    header, arrays = modelfile.loads(lemmatizer.to_bytes())
    with pytest.raises(ModelFormatError, match=match):
        fasttag.loads(modelfile.dumps(header, _broken(arrays, **change)))
