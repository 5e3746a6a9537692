"""Decoding and structured training against brute-force references."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fasttag._core.weights import AveragedVector, WeightTable
from fasttag._core.sequence import Search, transition_size


def brute_force(emission, trans, allowed, cands, T):
    """Best tag sequence by enumeration; ties go to the sequence that is
    smallest read right to left (what Viterbi's back-pointers pick)."""
    n = len(emission)
    best, best_seq = None, None
    for seq in itertools.product(*[cands[i] for i in range(n)]):
        path = [T] + list(seq)
        idx = [p * T + t for p, t in zip(path[:-1], path[1:])] + [(T + 1) * T + seq[-1]]
        if allowed is not None and not all(allowed[i] for i in idx):
            continue
        score = sum(emission[i][t] for i, t in enumerate(seq)) + sum(trans[i] for i in idx)
        if best is None or score > best or (score == best and seq[::-1] < best_seq[::-1]):
            best, best_seq = score, seq
    return best_seq


@st.composite
def lattices(draw):
    T = draw(st.integers(1, 4))
    n = draw(st.integers(1, 5))
    F = draw(st.integers(0, 3))
    keys = np.array(draw(st.lists(st.lists(st.integers(0, 6), min_size=F, max_size=F),
                                  min_size=n, max_size=n)), dtype=np.uint64).reshape(n, F)
    weights = draw(st.dictionaries(st.tuples(st.integers(0, 6), st.integers(0, T - 1)),
                                   st.integers(-3, 3), max_size=20))
    trans = np.array(draw(st.lists(st.integers(-3, 3), min_size=transition_size(T),
                                   max_size=transition_size(T))), dtype=np.float64)
    use_mask = draw(st.booleans())
    allowed = np.array(draw(st.lists(st.sampled_from([0, 1, 1]), min_size=transition_size(T),
                                     max_size=transition_size(T))), dtype=np.uint8) if use_mask else None
    use_cands = draw(st.booleans())
    classes = None
    if use_cands:
        cls_tags = draw(st.lists(st.lists(st.integers(0, T - 1), min_size=1, max_size=T, unique=True),
                                 min_size=1, max_size=3))
        cls_tags = [sorted(c) for c in cls_tags]
        token_cls = draw(st.lists(st.integers(-1, len(cls_tags) - 1), min_size=n, max_size=n))
        classes = (token_cls, cls_tags)
    return T, keys, weights, trans, allowed, classes


def make_search(T, weights, trans, allowed, classes, n):
    table = WeightTable()
    for (k, t), v in weights.items():
        if v:
            table.update(np.array([k], dtype=np.uint64), t, float(v), 1)
    cand_arg = None
    if classes is not None:
        token_cls, cls_tags = classes
        offsets = np.cumsum([0] + [len(c) for c in cls_tags])
        cand_arg = (np.array(token_cls, np.int32), offsets, np.array(sum(cls_tags, []), np.int32))
    return Search(table, trans, T, allowed=allowed, candidates=cand_arg), table


@settings(max_examples=300, deadline=None)
@given(lattices())
def test_viterbi_equals_brute_force(lattice):
    T, keys, weights, trans, allowed, classes = lattice
    n = keys.shape[0]
    search, table = make_search(T, weights, trans, allowed, classes, n)
    emission = [table.score(np.ascontiguousarray(keys[i]), n_classes=T) for i in range(n)]
    cands = [list(range(T))] * n
    if classes is not None:
        cands = [list(range(T)) if c < 0 else classes[1][c] for c in classes[0]]
    expected = brute_force(emission, trans, allowed, cands, T)
    if expected is None:        # no valid path: decoding falls back to unconstrained
        expected = brute_force(emission, trans, None, cands, T)
    got = search.decode(keys, np.array([0, n], dtype=np.int64))
    assert tuple(got.tolist()) == tuple(expected)


@settings(max_examples=100, deadline=None)
@given(lattices())
def test_greedy_equals_viterbi_without_transitions(lattice):
    T, keys, weights, trans, _, classes = lattice
    n = keys.shape[0]
    search, _ = make_search(T, weights, np.zeros_like(trans), None, classes, n)
    bounds = np.array([0, n], dtype=np.int64)
    assert search.decode(keys, bounds, greedy=True).tolist() == search.decode(keys, bounds).tolist()


def test_batches_decode_like_single_sentences():
    rng = np.random.default_rng(3)
    T = 5
    table = WeightTable()
    for k in range(50):
        table.update(np.array([k], dtype=np.uint64), int(rng.integers(T)), float(rng.normal()), 1)
    trans = rng.normal(size=transition_size(T))
    search = Search(table, trans, T)
    lengths = [3, 0, 7, 1, 4]
    bounds = np.cumsum([0] + lengths).astype(np.int64)
    keys = rng.integers(0, 50, size=(bounds[-1], 4)).astype(np.uint64)
    together = search.decode(keys, bounds)
    for s in range(len(lengths)):
        a, b = bounds[s], bounds[s + 1]
        alone = search.decode(np.ascontiguousarray(keys[a:b]), np.array([0, b - a], dtype=np.int64))
        assert together[a:b].tolist() == alone.tolist()


class NaiveCollins:
    """Collins' averaged structured perceptron, written plainly: brute-force
    decoding, dict weights, and the whole weight vector added to the
    accumulator after every sentence."""

    def __init__(self, T):
        self.T = T
        self.w, self.acc, self.steps = {}, {}, 0

    def score_seq(self, keys, seq):
        T = self.T
        path = [T] + list(seq)
        s = sum(self.w.get(("e", int(k), t), 0.0) for row, t in zip(keys, seq) for k in row)
        s += sum(self.w.get(("t", p * T + t), 0.0) for p, t in zip(path[:-1], path[1:]))
        return s + self.w.get(("t", (T + 1) * T + seq[-1]), 0.0)

    def phi(self, keys, seq):
        T = self.T
        out = {}
        path = [T] + list(seq)
        for row, t in zip(keys, seq):
            for k in row:
                out[("e", int(k), t)] = out.get(("e", int(k), t), 0) + 1
        for p, t in zip(path[:-1], path[1:]):
            out[("t", p * T + t)] = out.get(("t", p * T + t), 0) + 1
        out[("t", (T + 1) * T + seq[-1])] = out.get(("t", (T + 1) * T + seq[-1]), 0) + 1
        return out

    def train_sentence(self, keys, gold):
        best, best_seq = None, None
        for seq in itertools.product(range(self.T), repeat=len(gold)):
            s = self.score_seq(keys, seq)
            if best is None or s > best or (s == best and seq[::-1] < best_seq[::-1]):
                best, best_seq = s, seq
        if list(best_seq) != list(gold):
            for f, v in self.phi(keys, gold).items():
                self.w[f] = self.w.get(f, 0.0) + v
            for f, v in self.phi(keys, best_seq).items():
                self.w[f] = self.w.get(f, 0.0) - v
        self.steps += 1
        for f, v in self.w.items():
            self.acc[f] = self.acc.get(f, 0.0) + v

    def average(self, f):
        return self.acc.get(f, 0.0) / self.steps


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 3), st.lists(st.integers(1, 4), min_size=1, max_size=5), st.integers(0, 2**32 - 1),
       st.integers(1, 3))
def test_structured_perceptron_equals_naive_collins(T, lengths, seed, epochs):
    rng = np.random.default_rng(seed)
    bounds = np.cumsum([0] + lengths).astype(np.int64)
    keys = rng.integers(1, 7, size=(bounds[-1], 2)).astype(np.uint64)
    gold = rng.integers(0, T, size=bounds[-1]).astype(np.int32)
    table, trans = WeightTable(), AveragedVector(transition_size(T))
    search = Search(table, trans, T)
    naive = NaiveCollins(T)
    step = 0
    for _ in range(epochs):
        order = rng.permutation(len(lengths)).astype(np.int64)
        _, step = search.train_epoch(trans, keys, bounds, gold, order, step)
        for s in order:
            a, b = bounds[s], bounds[s + 1]
            naive.train_sentence(keys[a:b], gold[a:b].tolist())
    assert step == naive.steps
    avg_t = trans.averaged(step)
    for i in range(transition_size(T)):
        assert avg_t[i] == pytest.approx(naive.average(("t", i)), abs=1e-9)
    avg_e = table.averaged(step)
    for k in range(6):
        for t in range(T):
            # (get() reads the float32 weights an averaged table scores with)
            assert avg_e.get(k, t) == pytest.approx(naive.average(("e", k, t)), rel=1e-6, abs=1e-9)
            assert table.get_average(k, t, step) == pytest.approx(naive.average(("e", k, t)), abs=1e-9)
