"""A task's tag set as strings: the tags of its training examples, checked
to be writable, and the tag strings of the tag ids its model decodes.

Shared by the tasks whose tags are free strings (the POS tagger, the
feature tagger).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..model.sequence import IdRows, tag_fault


def decode_tags(names, ids):
    """The tag strings of tag id arrays ``ids`` (one per sentence), one
    numpy lookup per decoded chunk (:class:`fasttag.model.sequence.IdRows`):
    a loop per sentence costs much of the tagging time."""
    if not isinstance(ids, IdRows):
        ids = IdRows([(np.concatenate(ids), np.cumsum([0] + [len(row) for row in ids]).tolist())] if len(ids) else [])
    names = np.array(names, dtype=object)
    out = []
    for flat_ids, b in ids.chunks:
        flat = names[flat_ids].tolist()
        out.extend(flat[i:j] for i, j in zip(b[:-1], b[1:]))
    return out


def tag_set(examples, missing):
    """The sorted tags of ``(input, tags)`` training examples; ``missing``:
    the InputError's text when a sentence has no tags."""
    if any(tags is None for _, tags in examples):
        raise InputError(missing)
    tags = {t for _, ts in examples for t in ts}
    bad = [t for t in tags if not isinstance(t, str)]
    if bad:
        raise TypeError(f"tags must be str, not {type(bad[0]).__name__}")
    bad = sorted(t for t in tags if tag_fault(t))
    if bad:
        # text output writes word/TAG separated by spaces, column files a tag per field
        raise InputError(f"a tag must be a non-empty string without whitespace or control characters, "
                         f"not {ascii(bad[0])} ({tag_fault(bad[0])})")
    return sorted(tags)
