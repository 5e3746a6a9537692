"""What a task checks of a model file it is given beyond its compiled
model: the kind its header names (named in messages as loading the file
would name it) and, for the tasks with fixed labels (the tokenizer, the
segmenter), that its labels, candidate classes and transitions are the
task's own.
"""
from __future__ import annotations

import numpy as np

from ..errors import ModelFormatError
from ..model import modelfile, registry


def kind_named(kind, by_class=False):
    """How messages name a model of ``kind`` read from a file's header (a
    ModelFormatError for an unknown kind, as loading the file would be)."""
    if isinstance(kind, str) and kind.startswith("linear."):
        return f"the estimator {kind[len('linear.'):]}"
    cls = registry.model_class(kind)
    return f"a {cls.__name__ if by_class else kind} model"


def check_fixed_labels(header, arrays, what, tags, classes, allowed):
    """Tasks with fixed labels: the model file must hold exactly ``tags``,
    the candidate ``classes`` (in order) and the ``allowed`` mask, use Viterbi
    without pruning and have no tag dictionary; ``what`` names the kind."""
    if header.get("tags") != list(tags):
        raise ModelFormatError(f"corrupt fasttag model: {what} tags are not {' '.join(tags)}")
    got_classes = header.get("tagdict_classes")
    expected = [list(c) for c in classes]
    if not isinstance(got_classes, list) or len(got_classes) != len(expected):
        n = len(got_classes) if isinstance(got_classes, list) else type(got_classes).__name__
        raise ModelFormatError(f"corrupt fasttag model: {n} {what} candidate classes, "
                               f"not the {len(expected)} the featurizer uses")
    for i, (got, want) in enumerate(zip(got_classes, expected)):
        if not isinstance(got, list) or any(type(t) is not int for t in got) or got != want:
            shown = repr(got)
            shown = shown if len(shown) <= 40 else shown[:36] + " ..."
            raise ModelFormatError(f"corrupt fasttag model: {what} candidate class {i} is {shown}, not {want}")
    if header.get("decoder", "viterbi") != "viterbi":
        raise ModelFormatError(f"corrupt fasttag model: {what}s decode with Viterbi")
    if not modelfile.header_int(header.get("prune_k", 0), 0, 0):
        raise ModelFormatError(f"corrupt fasttag model: {what}s do not prune candidates")
    if header.get("tagdict_words", []) != [] or "tagdict_class" in arrays:
        raise ModelFormatError(f"corrupt fasttag model: {what}s have no tag dictionary")
    mask = arrays.get("allowed")
    if mask is None or mask.shape != allowed.shape or not np.array_equal(mask, allowed):
        raise ModelFormatError(f"corrupt fasttag model: the transition mask is not the {what}'s")
