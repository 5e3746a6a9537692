"""Long inputs decoded in overlapping pieces: where a sentence is cut, and
how much context each piece shares with its neighbours, so that decoding
stays in bounded memory and gives what decoding the whole sentence gives.

:meth:`fasttag.tasks.base.SequenceTask._predict` cuts the sentences longer
than :data:`LONG_SENTENCE` with these; it reads the limit as
``fasttag.tasks.base.LONG_SENTENCE`` (imported from here), the name to
change to decode a whole sentence at once.
"""
from __future__ import annotations


#: Examples longer than this many positions (of tasks with ``local_features``)
#: are decoded in pieces of at most this length, each sharing
#: :data:`PIECE_MARGIN` positions of context on either side with its
#: neighbours: a word's features and its decision are then those of the
#: whole sentence, but for a Viterbi path that the margin does not settle.
LONG_SENTENCE = 2048
PIECE_MARGIN = 64


def long_pieces(n, size=LONG_SENTENCE, margin=PIECE_MARGIN):
    """``(start, end, keep_start, keep_end)`` of the pieces of a sequence
    of ``n`` positions: one piece ``(0, n, 0, n)`` when ``n <= size``; else
    pieces of at most ``size`` positions whose kept middles tile ``[0, n)``
    and each reach ``margin`` positions past its kept middle where the
    sequence goes on."""
    if n <= size:
        return [(0, n, 0, n)]
    step = size - 2 * margin
    return [(max(0, a - margin), min(n, a + step + margin), a, min(n, a + step)) for a in range(0, n, step)]


def sliced(value, a, b):
    """``value[a:b]``, or None for None (an example's absent part)."""
    return None if value is None else value[a:b]
