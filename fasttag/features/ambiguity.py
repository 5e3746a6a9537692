"""Ambiguity classes: the set of labels each word took in the training data.

A span tagger's feature ``amb`` is, per token, the sorted set of span types
(and ``O``) its word form was tagged with in training, such as
``"LOC|ORG"``, or ``"-"`` for an unseen word: shared by every word with the
same labels, its weights are learned from many words at once.  On the
training data the classes are jackknifed by document (``doc % FOLDS``), so
that the model meets unknown words as often as on new text and does not
learn to trust a feature that always holds the answer; new text sees the
classes of the whole training set, stored in the model file.
"""
from __future__ import annotations

import numpy as np

from ..errors import ModelFormatError

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
        """The classes of ``sentences`` (``(words, span types)`` pairs, a
        type being ``"O"`` outside spans) and, per fold, those of the other
        folds: ``(classes, fold tables)``; ``documents[i]`` is sentence i's
        document number."""
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
        """The classes as UTF-8 bytes (``class<TAB>word`` lines, by word),
        for a model file."""
        text = "".join(f"{c}\t{w}\n" for w, c in sorted(self.classes.items()))
        return np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8).copy()

    @classmethod
    def from_array(cls, array):
        """The classes stored by :meth:`to_array`, checked: anything else is
        a ModelFormatError."""
        if not isinstance(array, np.ndarray) or array.dtype != np.uint8 or array.ndim != 1:
            raise ModelFormatError("corrupt fasttag model: the ambiguity classes are not a byte array")
        try:
            text = array.tobytes().decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise ModelFormatError("corrupt fasttag model: the ambiguity classes are not UTF-8") from None
        if text and not text.endswith("\n"):
            raise ModelFormatError("corrupt fasttag model: the ambiguity classes are cut short")
        classes = {}
        for n, line in enumerate(text.split("\n")[:-1], start=1):
            c, sep, w = line.partition("\t")
            if not sep or not c or not w or "\t" in w or w in classes:
                raise ModelFormatError(f"corrupt fasttag model: ambiguity class line {n} is not "
                                       "class<TAB>word")
            classes[w] = c
        return cls(classes)
