"""Ambiguity classes: the set of labels each word took in the training data,
a span tagger's ``amb`` feature, jackknifed by document on the training data
itself (docs/tasks.md, ambiguity classes).
"""
from __future__ import annotations

from .wordtable import table_from_array, table_to_array

__all__ = ["AmbiguityClasses", "FOLDS", "UNKNOWN"]

FOLDS = 10
UNKNOWN = "-"
"""The class of a word never seen in the training data."""


def _classes(pairs):
    """word -> "T1|T2..." over (words, types) pairs."""
    seen = {}
    for words, types in pairs:
        for w, t in zip(words, types):
            s = seen.get(w)
            if s is None:
                seen[w] = {t}
            else:
                s.add(t)
    return {w: "|".join(sorted(s)) for w, s in seen.items()}


class AmbiguityClasses:
    """Word -> ambiguity class, with the jackknifed tables of the training
    folds while a model is being trained."""

    def __init__(self, classes):
        self.classes = dict(classes)

    @classmethod
    def collect(cls, sentences, documents):
        """``(classes, fold tables)`` of ``sentences``, ``(words, span types)``
        pairs ("O" outside spans), a fold's table from the other folds;
        ``documents[i]``: sentence i's document number."""
        sentences = list(sentences)
        full = cls(_classes(sentences))
        folds = [cls(_classes(s for s, d in zip(sentences, documents) if d % FOLDS != f))
                 for f in range(FOLDS)]
        return full, folds

    def values(self, words):
        """The class of each word."""
        get = self.classes.get
        return [get(w, UNKNOWN) for w in words]

    def __len__(self):
        return len(self.classes)

    def to_array(self):
        """The classes as UTF-8 ``class<TAB>word`` lines, for a model file."""
        return table_to_array(self.classes)

    @classmethod
    def from_array(cls, array):
        """The classes of :meth:`to_array`; anything else: ModelFormatError."""
        return cls(table_from_array(array, "the ambiguity classes", "ambiguity class", "class", bool))
