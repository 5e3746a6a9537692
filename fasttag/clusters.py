"""Word clusters, the public path: learn Brown clusters from a corpus
(:func:`cluster`) or read a cluster file (:func:`read_clusters`) for
``--clusters``.  They live in :mod:`fasttag.features.clusters`."""
from .features.clusters import Clusters, cluster, read_clusters

__all__ = ["Clusters", "cluster", "read_clusters"]
