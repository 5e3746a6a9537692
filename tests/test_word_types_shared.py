"""Word featurizers that compute the same attributes share one cache of
word types (the taggers of a UD pipeline hash each word once)."""
import numpy as np

from fasttag.features.clusters import Clusters
from fasttag.features.words import WordFeaturizer


def test_featurizers_of_the_same_attributes_share_their_word_types():
    a, b = WordFeaturizer(), WordFeaturizer(n_columns=1)
    alone = WordFeaturizer().lookup(["dogs", "ran"])
    assert b.share_types(a)
    ids, rows = a.lookup(["dogs", "ran"])
    assert b.lookup(["ran", "dogs"])[0].tolist() == ids[::-1].tolist()      # b sees a's types
    assert np.array_equal(rows[ids], alone[1][alone[0]])
    ids_b, rows_b = b.lookup(["cats"])
    assert a.lookup(["cats"])[0].tolist() == ids_b.tolist()                 # and a b's


def test_featurizers_with_clusters_keep_their_own():
    plain, clustered = WordFeaturizer(), WordFeaturizer(clusters=Clusters({"dogs": "01"}))
    assert not clustered.share_types(plain) and not plain.share_types(clustered)
    plain.lookup(["dogs"])
    assert clustered.lookup(["cats"])[0].tolist() == [0]
