"""Brown word clusters: learned from raw text, read and written as text.

A word's cluster is a bit string whose prefixes are coarser clusters.
Files are ``bitstring<TAB>word<TAB>count`` lines, as Liang's ``wcluster``
writes them.  The algorithm (exchange, then Brown's merges): docs/training.md.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping

import numpy as np

from ..text import formats as ftio
from ..errors import InputError, ModelFormatError
from ..files import atomic_file
from .wordtable import table_from_array, table_to_array

__all__ = ["Clusters", "cluster", "read_clusters", "as_clusters", "PREFIXES", "cluster_spec", "cluster_arrays",
           "stored_clusters"]

PREFIXES = (4, 6, 10, 20)
"""Bit-string prefix lengths used as features (and the full string)."""

MAX_CLUSTERS = 5000        # the merges keep two (clusters + 1)^2 tables: 400 MB at this size
_BITS = re.compile(r"^[01]+$")


class Clusters(Mapping):
    """Word -> bit string, with each word's count in the clustered text
    (``counts``; 0 when unknown)."""

    def __init__(self, bits, counts=None):
        self._bits = dict(bits)
        self.counts = {w: int((counts or {}).get(w, 0)) for w in self._bits}

    def __getitem__(self, word):
        return self._bits[word]

    def __iter__(self):
        return iter(self._bits)

    def __len__(self):
        return len(self._bits)

    def __repr__(self):
        return f"<Clusters: {len(self)} words, {len(set(self._bits.values()))} clusters>"

    def lookup(self, word):
        """The bit string of ``word``: the word as written, else its
        lowercase form, else "" (no cluster)."""
        bits = self._bits.get(word)
        if bits is None:
            bits = self._bits.get(word.lower(), "")
        return bits

    def lines(self):
        """The ``bitstring<TAB>word<TAB>count`` lines, by bit string, then
        by falling count, then by word."""
        order = sorted(self._bits, key=lambda w: (self._bits[w], -self.counts[w], w))
        return [f"{self._bits[w]}\t{w}\t{self.counts[w]}" for w in order]

    def save(self, path):
        """Write the clusters file (atomically: complete or not at all)."""
        with atomic_file(path, "w", encoding="utf-8", newline="\n") as f:
            for line in self.lines():
                f.write(line + "\n")

    # ------------------------------------------------ inside a model file

    def to_array(self):
        """The clusters as UTF-8 ``bits<TAB>word`` lines, for a model file."""
        return table_to_array(self._bits)

    @classmethod
    def from_array(cls, array):
        """The clusters of :meth:`to_array`; anything else: ModelFormatError."""
        bits = table_from_array(array, "the clusters", "cluster", "bits", _BITS.match)
        if not bits:
            raise ModelFormatError("corrupt fasttag model: no clusters")
        return cls(bits)


def read_clusters(source) -> Clusters:
    """Clusters from a file (a path or file object) or str lines of
    ``bitstring<TAB>word[<TAB>count]``; a malformed line is an InputError
    naming the file and the line."""
    name = os.fsdecode(source) if ftio.is_path(source) else None
    bits, counts = {}, {}
    for n, line in enumerate(ftio.read_lines(source, "the clusters file"), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) not in (2, 3):
            raise InputError("expected bitstring<TAB>word<TAB>count, found "
                             f"{len(fields)} tab-separated field{'s' if len(fields) != 1 else ''}", name, n)
        b, w = fields[0].strip(), fields[1]
        if not _BITS.match(b):
            raise InputError(f"the cluster {fields[0]!r} is not a bit string of 0s and 1s", name, n)
        if not w or w != w.strip():
            raise InputError(f"bad word {w!r} (empty, or with spaces around it)", name, n)
        if w in bits:
            raise InputError(f"the word {w!r} is listed twice", name, n)
        count = 0
        if len(fields) == 3:
            try:
                count = int(fields[2])
            except ValueError:
                count = -1
            if count < 0:
                raise InputError(f"the count {fields[2]!r} is not a non-negative integer", name, n)
        bits[w] = b
        counts[w] = count
    if not bits:
        raise InputError("no clusters in the file", name)
    return Clusters(bits, counts)


def as_clusters(value, what="clusters") -> Clusters:
    """``value`` as :class:`Clusters`: a path (read), a Clusters, or a dict
    word -> bit string (checked)."""
    if isinstance(value, Clusters):
        return value
    if ftio.is_path(value):
        if not os.path.isfile(value):
            raise InputError(f"{what}: no such file", path=os.fsdecode(value))
        return read_clusters(value)
    if isinstance(value, Mapping):
        for w, b in value.items():
            if not isinstance(w, str) or not w:
                raise TypeError(f"{what}: a word must be a non-empty str, not {w!r}")
            if not isinstance(b, str) or not _BITS.match(b):
                raise InputError(f"{what}: the cluster of {w!r} is {b!r}, not a bit string of 0s and 1s")
        if not value:
            raise InputError(f"{what}: no clusters")
        return Clusters(value)
    raise TypeError(f"{what} must be a clusters file path, a dict word -> bit string or Clusters, "
                    f"not {type(value).__name__}")


# ---------------------------------------------------------------- in model files

def cluster_spec(featurizer):
    """The featurizer header entry of a model with clusters (none without,
    so such models are written unchanged); ``featurizer``: a word
    featurizer, or one holding it as ``words``."""
    words = getattr(featurizer, "words", featurizer)
    return {"clusters": True} if words.clusters is not None else {}


def cluster_arrays(featurizer):
    """The model-file array of the featurizer's clusters (none without):
    the model carries them, it never refers to the clusters file."""
    words = getattr(featurizer, "words", featurizer)
    return {"clusters": words.clusters.to_array()} if words.clusters is not None else {}


def stored_clusters(spec, arrays):
    """The clusters a model file holds, checked (ModelFormatError), or
    None; the featurizer entry and the array must agree."""
    flag = spec.get("clusters", False)
    if flag not in (True, False) or flag != ("clusters" in arrays):
        raise ModelFormatError("corrupt fasttag model: the clusters and the featurizer do not agree")
    return Clusters.from_array(arrays["clusters"]) if flag else None


# ---------------------------------------------------------------- learning

def cluster(sentences, n_clusters=1000, min_count=2, seed=0, iterations=15) -> Clusters:
    """Brown clusters of the words of ``sentences`` (lists of token
    strings): ``n_clusters`` leaves (fewer when there are fewer words),
    words seen at least ``min_count`` times, ``iterations`` exchange passes
    at most (it stops when no word moves).  Deterministic for a ``seed``."""
    for name, value, lo in (("n_clusters", n_clusters, 2), ("min_count", min_count, 1),
                            ("seed", seed, 0), ("iterations", iterations, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < lo:
            raise InputError(f"{name} must be an integer of at least {lo}, not {value!r}")
    if n_clusters > MAX_CLUSTERS:
        raise InputError(f"n_clusters must be at most {MAX_CLUSTERS}, not {n_clusters}")
    from .._core.brown import exchange, merge, xlogx_table
    counts = Counter()
    sents = []
    for i, s in enumerate(sentences):
        if isinstance(s, (str, bytes)):
            raise TypeError(f"sentence {i}: expected a list of token strings, got {type(s).__name__}")
        s = list(s)
        for t in s:
            if not isinstance(t, str):
                raise TypeError(f"sentence {i}: a token must be a str, not {type(t).__name__}")
        counts.update(s)
        sents.append(s)
    words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    if not words:
        raise InputError(f"no word occurs at least {min_count} times (option min_count)")
    ids = {w: i + 1 for i, w in enumerate(words)}       # 0: boundaries and rare words
    V = len(words) + 1
    C = min(n_clusters, len(words))
    # bigrams, with the boundary word at both ends of each sentence
    get = ids.get
    seq = []
    for s in sents:
        seq.append(0)
        seq.extend([get(t, 0) for t in s])
    seq.append(0)
    seq = np.array(seq, dtype=np.int64)
    keys, n = np.unique(seq[:-1] * V + seq[1:], return_counts=True)
    left, right = (keys // V).astype(np.int32), (keys % V).astype(np.int32)
    n = n.astype(np.int64)
    succ_ptr = np.searchsorted(left, np.arange(V + 1)).astype(np.int32)
    order = np.argsort(right, kind="stable")
    pred_ptr = np.searchsorted(right[order], np.arange(V + 1)).astype(np.int32)
    classes = np.empty(V, dtype=np.int32)
    classes[0] = C
    classes[1:C + 1] = np.arange(C, dtype=np.int32)
    rng = np.random.default_rng(seed)
    classes[C + 1:] = rng.integers(0, C, size=V - C - 1, dtype=np.int32)
    table = xlogx_table()
    exchange(succ_ptr, right, n, pred_ptr, left[order], n[order], classes, C, iterations, table)
    # the non-empty classes, renumbered by first word, and their bigram counts
    used = np.unique(classes[1:])
    renumber = np.full(C + 1, -1, dtype=np.int64)
    renumber[used] = np.arange(len(used))
    K = len(used)
    renumber[C] = K
    cls = renumber[classes]
    N = np.zeros((K + 1, K + 1), dtype=np.int64)
    np.add.at(N, (cls[left], cls[right]), n)
    merges = merge(N, K, table)
    bits = _bit_strings(K, merges)
    return Clusters({w: bits[cls[i + 1]] for i, w in enumerate(words)}, {w: counts[w] for w in words})


def _bit_strings(n_leaves, merges):
    """The bit string of each leaf of the tree that ``merges`` (pairs a, b
    merged into a, in order) build: 0 for the first, 1 for the second."""
    if n_leaves == 1:
        return ["0"]
    node = list(range(n_leaves))               # leaves are 0..n-1; inner nodes after
    children = {}
    for a, b in merges.tolist():
        new = n_leaves + len(children)
        children[new] = (node[a], node[b])
        node[a] = new
    root = n_leaves + len(children) - 1
    bits = [""] * n_leaves
    stack = [(root, "")]
    while stack:
        x, path = stack.pop()
        if x < n_leaves:
            bits[x] = path
        else:
            left, right = children[x]
            stack.append((left, path + "0"))
            stack.append((right, path + "1"))
    return bits


def prefix_values(bits):
    """The feature values of a bit string: its prefixes of each length in
    :data:`PREFIXES` (the whole string when shorter), then the whole."""
    return tuple(bits[:k] for k in PREFIXES) + (bits,)
