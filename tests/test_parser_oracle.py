"""The parser's transition system and dynamic oracle against slow
references: a Python arc-hybrid system, costs by brute force over every
completion, and the static oracle rebuilding projective gold trees."""
import functools
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fasttag._core import parsing

ROOT_LABEL = 0
N_LABELS = 3                    # root, and two others
N_CLASSES = 1 + 2 * N_LABELS


def kind(c):
    return 0 if c == 0 else (1 if c % 2 else 2)


def label(c):
    return (c - 1) // 2


class Ref:
    """The arc-hybrid system as the module doc defines it, in plain Python:
    words 1..n, the root is n + 1 at the end of the buffer."""

    def __init__(self, n, single_root=False):
        self.n, self.stack, self.b0, self.arcs, self.single_root = n, [], 1, {}, single_root

    def copy(self):
        other = Ref(self.n, self.single_root)
        other.stack, other.b0, other.arcs = list(self.stack), self.b0, dict(self.arcs)
        return other

    def final(self):
        return not self.stack and self.b0 == self.n + 1

    def valid(self, c):
        k, lab = kind(c), label(c)
        if k == 0:
            return self.b0 <= self.n
        if k == 1:
            if not self.stack:
                return False
            if self.b0 == self.n + 1:
                return (len(self.stack) == 1 or not self.single_root) and lab == ROOT_LABEL
            return lab != ROOT_LABEL
        return len(self.stack) >= 2 and lab != ROOT_LABEL

    def apply(self, c):
        k, lab = kind(c), label(c)
        if k == 0:
            self.stack.append(self.b0)
            self.b0 += 1
        elif k == 1:
            d = self.stack.pop()
            self.arcs[d] = (0 if self.b0 == self.n + 1 else self.b0, lab)
        else:
            d = self.stack.pop()
            self.arcs[d] = (self.stack[-1], lab)


def random_tree(rng, n):
    """A random tree (heads 1-based, 0 the root) with labels: root label on the root only."""
    order = list(range(1, n + 1))
    rng.shuffle(order)
    heads = [0] * n
    for i, w in enumerate(order[1:], 1):
        heads[w - 1] = rng.choice(order[:i])
    labels = [ROOT_LABEL if h == 0 else rng.randrange(1, N_LABELS) for h in heads]
    return heads, labels


def projective(heads):
    n = len(heads)

    def dominates(h, d):
        while d != 0:
            if d == h:
                return True
            d = heads[d - 1]
        return h == 0

    for d in range(1, n + 1):
        h = heads[d - 1]
        lo, hi = sorted((h, d))
        if not all(dominates(h, w) for w in range(lo + 1, hi)):
            return False
    return True


def random_projective(rng, n):
    """A random projective tree: what a random one-root transition sequence builds."""
    ref = Ref(n, single_root=True)
    while not ref.final():
        ref.apply(rng.choice([c for c in range(N_CLASSES) if ref.valid(c)]))
    heads, labels = zip(*(ref.arcs[d] for d in range(1, n + 1)))
    assert projective(heads)
    return list(heads), list(labels)


def loss(state, gold):
    """The wrong arcs made so far."""
    return sum(arc != gold[d - 1] for d, arc in state.arcs.items())


def best_loss(state, gold):
    """The least loss of any completion of ``state``, by brute force: the
    loss of the arcs made, plus the least loss of the arcs still to make,
    which depends on the stack and the buffer only (memoised on them)."""
    return loss(state, gold) + _future_loss(state.n, tuple(gold), tuple(state.stack), state.b0, state.single_root)


@functools.lru_cache(maxsize=None)
def _future_loss(n, gold, stack, b0, single_root):
    s = Ref(n, single_root)
    s.stack, s.b0 = list(stack), b0
    if s.final():
        return 0
    best = None
    for c in range(N_CLASSES):
        if s.valid(c):
            t = s.copy()
            t.apply(c)
            made = 0
            if kind(c):
                d = s.stack[-1]
                made = t.arcs[d] != gold[d - 1]
            v = made + _future_loss(n, gold, tuple(t.stack), t.b0, single_root)
            best = v if best is None else min(best, v)
    return best


def arr(xs):
    return np.asarray(xs, dtype=np.int32)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 7), st.integers(0, 2 ** 32 - 1))
def test_costs_equal_brute_force_on_random_paths(n, seed):
    """On projective trees (what the parser trains on) the costs are exact."""
    rng = random.Random(seed)
    heads, labels = random_projective(rng, n)
    gold = [(h, lab) for h, lab in zip(heads, labels)]
    ref, history = Ref(n), []
    while True:
        costs, final = parsing.transition_costs(arr(heads), arr(labels), arr(history), N_CLASSES, ROOT_LABEL)
        assert final == ref.final()
        if final:
            break
        here = best_loss(ref, gold)
        for c in range(N_CLASSES):
            assert (costs[c] >= 0) == ref.valid(c), (c, history)
            if ref.valid(c):
                t = ref.copy()
                t.apply(c)
                assert costs[c] == best_loss(t, gold) - here, (c, history, heads, labels)
        c = rng.choice([c for c in range(N_CLASSES) if ref.valid(c)])
        ref.apply(c)
        history.append(c)
    built_heads, built_labels = parsing.replay_tree(arr(heads), arr(labels), arr(history), N_CLASSES, ROOT_LABEL)
    assert [(h, lab) for h, lab in zip(built_heads, built_labels)] == [ref.arcs[d] for d in range(1, n + 1)]


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 12), st.integers(0, 2 ** 32 - 1))
def test_decoding_transitions_always_make_one_tree_with_one_root(n, seed):
    rng = random.Random(seed)
    ref, history = Ref(n, single_root=True), []
    while not ref.final():
        c = rng.choice([c for c in range(N_CLASSES) if ref.valid(c)])
        ref.apply(c)
        history.append(c)
    attrs = np.zeros((n, parsing.N_ATTRS), dtype=np.uint64)
    parsing.features_after(attrs, arr(history), N_CLASSES, ROOT_LABEL)      # every step valid for decoding
    heads, labels = parsing.replay_tree(arr([0] * n), arr([0] * n), arr(history), N_CLASSES, ROOT_LABEL, True)
    assert heads.count(0) == 1 and all(h >= 0 for h in heads)
    assert [lab == ROOT_LABEL for lab in labels] == [h == 0 for h in heads]
    assert projective(heads)
    for d in range(1, n + 1):           # no cycle: every word reaches the root
        seen, w = set(), d
        while w:
            assert w not in seen
            seen.add(w)
            w = heads[w - 1]


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 30), st.integers(0, 2 ** 32 - 1))
def test_the_static_oracle_rebuilds_every_projective_tree(n, seed):
    rng = random.Random(seed)
    heads, labels = random_projective(rng, n)
    history = []
    while True:
        costs, final = parsing.transition_costs(arr(heads), arr(labels), arr(history), N_CLASSES, ROOT_LABEL)
        if final:
            break
        zero = [c for c in range(N_CLASSES) if costs[c] == 0]
        assert zero, history
        history.append(rng.choice(zero))
    assert parsing.replay_tree(arr(heads), arr(labels), arr(history), N_CLASSES, ROOT_LABEL) == (heads, labels)


def test_a_non_projective_arc_costs_one_whatever_the_path():
    # 1 <- 3, 2 <- 4 cross: some arc is lost on every path, never more than one
    heads, labels = [3, 4, 0, 3], [1, 1, 0, 2]
    gold = list(zip(heads, labels))
    assert not projective(heads)
    assert best_loss(Ref(4), gold) == 1


def test_invalid_histories_are_refused():
    with pytest.raises(ValueError, match="not valid"):
        parsing.transition_costs(arr([0]), arr([0]), arr([1]), N_CLASSES, ROOT_LABEL)   # LEFT on an empty stack
    with pytest.raises(ValueError, match="out of range"):
        parsing.transition_costs(arr([2]), arr([0]), arr([]), N_CLASSES, ROOT_LABEL)
