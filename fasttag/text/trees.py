"""Dependency trees for a transition-based parser: checking that heads form
a tree, testing projectivity, and the pseudo-projective transform of Nivre
and Nilsson (2005), which lets a parser that only builds projective trees
learn and output non-projective ones.

A sentence's tree is ``heads``, a list of ints, ``heads[i]`` the head of
word ``i + 1`` (words are numbered from 1; 0 is the root, treated as a word
before word 1), and ``labels``, the words' deprels (``nmod:poss``).

The transform uses the "head" label encoding, as spaCy's ``nonproj.pyx``
does: a word whose arc was lifted carries ``own_label + LIFT +
label_of_its_original_head`` (``nmod||nsubj``), from which
:func:`deprojectivize` finds the original head again.
"""
from __future__ import annotations

import bisect
import operator
from collections import deque

import numpy as np

__all__ = ["LIFT", "check_tree", "is_projective", "projectivize", "deprojectivize", "plain_label",
           "lifted_labels"]

#: What joins a lifted word's own label to its original head's label.
LIFT = "||"


def check_tree(heads):
    """None when ``heads`` is a tree (every head in ``0..n``, exactly one
    word headed by 0, no cycles); else a ValueError whose one-line message
    names the first word at fault, so that a broken gold file or a parser
    bug is caught where it starts rather than as a hang or a wrong score.
    Linear in the sentence's length."""
    _tree_heads(heads)


def _tree_heads(heads):
    """The heads as a list of Python ints, once checked to be a tree."""
    n = len(heads)
    if n == 0:
        raise ValueError("an empty sentence has no tree: one word must be headed by 0")
    hs = []
    for i, h in enumerate(heads, 1):
        try:
            h = operator.index(h)
        except TypeError:
            raise ValueError(f"word {i} has head {h!r}, not an integer") from None
        if not 0 <= h <= n:
            raise ValueError(f"word {i} has head {h}, outside 0..{n}")
        hs.append(h)
    root = 0
    for i, h in enumerate(hs, 1):
        if h == 0:
            if root:
                raise ValueError(f"word {i} is a second root: words {root} and {i} are both headed by 0")
            root = i
    # Walk up from each word; a word is known to reach the root once a walk through it did.
    UNSEEN, ON_PATH, REACHES_ROOT = 0, 1, 2
    state = [UNSEEN] * (n + 1)
    state[0] = REACHES_ROOT
    for i in range(1, n + 1):
        path = []
        v = i
        while state[v] == UNSEEN:
            state[v] = ON_PATH
            path.append(v)
            v = hs[v - 1]
        if state[v] == ON_PATH:
            cycle = path[path.index(v):] + [v]
            if len(cycle) == 2:
                raise ValueError(f"word {v} is its own head" if v == i else
                                 f"word {i} does not reach the root: its heads lead to word {v}, "
                                 f"which is its own head")
            shown = " -> ".join(map(str, cycle))
            if i in cycle:
                raise ValueError(f"word {i} is on a cycle of heads: {shown}")
            raise ValueError(f"word {i} does not reach the root: its heads lead into the cycle {shown}")
        for u in path:
            state[u] = REACHES_ROOT
    return hs


def _children(hs):
    """Each word's dependents in word order (index 0: the root's)."""
    children = [[] for _ in range(len(hs) + 1)]
    for d, h in enumerate(hs, 1):
        children[h].append(d)
    return children


def _preorder(children):
    """The nodes from the root down, depth first, children in word order."""
    order = []
    stack = [0]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(reversed(children[v]))
    return order


def is_projective(heads):
    """Whether no arc crosses another: an arc (h, d) is projective when every
    word strictly between h and d is a descendant of h.  Checked as the
    equivalent condition that every word's subtree covers a contiguous span
    of words (a word between h and d that is not under h makes the subtree
    of h, which holds h and d, leave a gap; and a gap in a subtree is
    crossed by one of its arcs), in time linear in the sentence's length.
    Raises ValueError (see :func:`check_tree`) when ``heads`` is no tree."""
    hs = _tree_heads(heads)
    n = len(hs)
    order = _preorder(_children(hs))
    lo, hi, size = list(range(n + 1)), list(range(n + 1)), [1] * (n + 1)
    for v in reversed(order):
        if v and hi[v] - lo[v] + 1 != size[v]:
            return False
        if v:
            p = hs[v - 1]
            size[p] += size[v]
            if lo[v] < lo[p]:
                lo[p] = lo[v]
            if hi[v] > hi[p]:
                hi[p] = hi[v]
    return True


def _nonprojective(hs):
    """A bool array over words 1..n: whether the arc to each word is
    non-projective.  A word k is under h when its preorder number lies in
    h's range of them, so an arc is projective when the least and greatest
    preorder numbers of the words between its ends (range queries on a
    sparse table) lie in its head's range: O(n log n)."""
    n = len(hs)
    children = _children(hs)
    order = _preorder(children)
    first = np.empty(n + 1, dtype=np.int64)           # preorder number of each node
    first[order] = np.arange(n + 1)
    size = [1] * (n + 1)
    for v in reversed(order[1:]):
        size[hs[v - 1]] += size[v]
    after = first + np.asarray(size, dtype=np.int64)  # one past the preorder numbers of the node's subtree
    mins, maxs = [first], [first]
    span = 1
    while 2 * span <= n + 1:
        mins.append(np.minimum(mins[-1][:-span], mins[-1][span:]))
        maxs.append(np.maximum(maxs[-1][:-span], maxs[-1][span:]))
        span *= 2
    d = np.arange(1, n + 1)
    h = np.asarray(hs, dtype=np.int64)
    a = np.minimum(h, d) + 1                          # the words strictly between: a..b
    b = np.maximum(h, d) - 1
    inner = b >= a
    if not inner.any():
        return np.zeros(n, dtype=bool)
    a, b, h = a[inner], b[inner], h[inner]
    level = np.frexp((b - a + 1).astype(np.float64))[1] - 1   # floor(log2(length)), exact for ints
    low = np.empty(len(a), dtype=np.int64)
    high = np.empty(len(a), dtype=np.int64)
    for k in np.unique(level):
        sel = level == k
        ak, bk = a[sel], b[sel] - (1 << int(k)) + 1
        low[sel] = np.minimum(mins[k][ak], mins[k][bk])
        high[sel] = np.maximum(maxs[k][ak], maxs[k][bk])
    crossing = np.zeros(n, dtype=bool)
    crossing[inner] = (low < first[h]) | (high >= after[h])
    return crossing


def projectivize(heads, labels):
    """``(heads, labels)`` of a projective tree from which
    :func:`deprojectivize` can rebuild the input, so that a projective
    parser can be trained on non-projective treebanks (Nivre and Nilsson
    2005, "head" encoding, as spaCy does).  While the tree is not
    projective, the shortest non-projective arc is lifted (its dependent's
    head becomes its head's head); of arcs equally short, the one whose
    dependent comes first.  A lifted word's label becomes ``own + LIFT +
    the label of its head in the input`` (once, however many times it was
    lifted).  Arcs from the root or from the root word are never lifted, so
    the root word stays the same.  Returns new lists; a projective tree
    comes back unchanged.  Raises ValueError when ``heads`` is no tree,
    when the lengths differ, or when a label already holds LIFT (its
    encoding would be ambiguous).  Each lift costs O(n log n), and there
    are at most as many lifts as the sum of the words' depths."""
    hs = _tree_heads(heads)
    labels = list(labels)
    if len(labels) != len(hs):
        raise ValueError(f"{len(labels)} labels for {len(hs)} heads")
    for i, label in enumerate(labels, 1):
        if LIFT in label:
            raise ValueError(f"word {i} has label {label!r}, which already holds {LIFT!r}")
    proj = list(hs)
    if is_projective(proj):
        return proj, labels
    d = np.arange(1, len(hs) + 1)
    while True:
        crossing = _nonprojective(proj)
        if not crossing.any():
            break
        lengths = np.where(crossing, np.abs(np.asarray(proj) - d), len(hs) + 1)
        word = int(np.argmin(lengths)) + 1             # argmin: the first of the shortest
        proj[word - 1] = proj[proj[word - 1] - 1]
    decorated = [f"{label}{LIFT}{labels[h - 1]}" if p != h else label
                 for label, h, p in zip(labels, hs, proj)]
    return proj, decorated


def deprojectivize(heads, labels):
    """``(heads, labels)`` with each lifted arc put back, undoing
    :func:`projectivize` on a parser's output.  For each word whose label
    holds LIFT, left to right, the descendants of its current head (not the
    head itself, nor the word's own subtree) are searched breadth first,
    children in word order, for the first whose label (its part before
    LIFT) is the encoded head label, and the word is attached to it; if
    none is, the word stays.  Every label loses its decoration.  As the new
    head is under the old one and outside the word's subtree, the result is
    a tree.  Returns new lists; raises ValueError when ``heads`` is no tree
    or the lengths differ."""
    hs = _tree_heads(heads)
    out = list(labels)
    if len(out) != len(hs):
        raise ValueError(f"{len(out)} labels for {len(hs)} heads")
    children = _children(hs)
    for word, label in enumerate(labels, 1):
        if LIFT not in label:
            continue
        own, _, wanted = label.partition(LIFT)
        out[word - 1] = own
        old = hs[word - 1]
        new = _first_labelled(old, word, wanted, children, out)
        if new is not None:
            children[old].remove(word)
            bisect.insort(children[new], word)
            hs[word - 1] = new
    return hs, out


def _first_labelled(head, word, wanted, children, labels):
    """The first descendant of ``head`` outside ``word``'s subtree, breadth
    first, whose plain label is ``wanted``; None when there is none."""
    queue = deque([head])
    while queue:
        for child in children[queue.popleft()]:
            if child == word:
                continue
            if plain_label(labels[child - 1]) == wanted:
                return child
            queue.append(child)
    return None


def plain_label(label):
    """The label without its decoration (the part before LIFT): what a
    rare decorated label is replaced by at training time, and what is
    compared when looking for a lifted word's original head."""
    return label.partition(LIFT)[0]


def lifted_labels(labels):
    """The decorated labels among ``labels``, in order: counted over a
    training set (``Counter(l for s in sents for l in lifted_labels(s))``),
    they say which decorated labels are too rare to learn."""
    return [label for label in labels if LIFT in label]
