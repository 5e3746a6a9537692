"""The shared training epoch (``run_epoch``) and gold-minus-predicted walk of
the perceptron and k-best MIRA, against slow pure-Python references.

The references do what the compiled code did before the perceptron and MIRA
shared their walk and their epoch loop, operation for operation: emission
scores summed key by key in float64, Viterbi with ties to the lower tag, the
lazy averaging of ``_averaging.pxd`` (catch up, then change), the perceptron's
+1/-1 walk applied at once, 1-best MIRA's closed-form step over the merged
difference vector.  On IEEE float64 without fused multiply-adds (x86-64) the
weights, the averages and the per-epoch mistakes must come out identical, bit
for bit; elsewhere to 1e-12.
"""
import platform

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fasttag._core.weights import AveragedVector, WeightTable
from fasttag._core.kbest import KBest, mira_epoch
from fasttag._core.sequence import Search, transition_size

BIT_EXACT = platform.machine().lower() in ("x86_64", "amd64")


class LazyWeights:
    """Weights with the lazy averaging of the compiled core, in Python floats
    (the same IEEE operations in the same order)."""

    def __init__(self, dense_size=None):
        self.w, self.total, self.ts = {}, {}, {}
        if dense_size is not None:           # an AveragedVector: every element exists
            for i in range(dense_size):
                self.w[i], self.total[i], self.ts[i] = 0.0, 0.0, 0

    def add(self, key, delta, step):
        if key in self.w:
            self.total[key] += (step - 1 - self.ts[key]) * self.w[key]
            self.ts[key] = step - 1
            self.w[key] += delta
        else:                                # a new WeightTable entry
            self.w[key], self.total[key], self.ts[key] = delta, 0.0, step - 1

    def average(self, key, step):
        return (self.total[key] + (step - self.ts[key]) * self.w[key]) / step


class Reference:
    """Collins' perceptron (Viterbi or greedy) and 1-best MIRA, plainly."""

    def __init__(self, T):
        self.T = T
        self.emit = LazyWeights()                         # (key, tag) -> weight
        self.trans = LazyWeights(transition_size(T))      # layout of _sequence

    def emissions(self, row):
        e = [0.0] * self.T
        for key in row:                     # key by key, as score_into adds them
            for t in range(self.T):
                if (key, t) in self.emit.w:
                    e[t] += self.emit.w[(key, t)] * 1.0
        return e

    def viterbi(self, E):
        T, tr = self.T, self.trans.w
        delta = [E[0][t] + tr[T * T + t] for t in range(T)]
        backs = []
        for i in range(1, len(E)):
            row, back = [], []
            for t in range(T):
                best, arg = delta[0] + tr[t], 0
                for p in range(1, T):
                    v = delta[p] + tr[p * T + t]
                    if v > best:
                        best, arg = v, p
                row.append(best + E[i][t])
                back.append(arg)
            delta = row
            backs.append(back)
        best, last = -np.inf, 0
        for t in range(T):
            v = delta[t] + tr[(T + 1) * T + t]
            if v > best:
                best, last = v, t
        path = [last]
        for back in reversed(backs):
            path.append(back[path[-1]])
        return path[::-1]

    def path_score(self, E, tags):
        T, tr = self.T, self.trans.w
        total, prev = 0.0, T
        for i, t in enumerate(tags):
            total += E[i][t]
            total += tr[prev * T + t]
            prev = t
        return total + tr[(T + 1) * T + prev]

    def walk(self, rows, gold, pred):
        """The gold-minus-predicted changes, in order: (kind, key, value)."""
        T = self.T
        out, gp, pp = [], T, T
        for i, (g, p) in enumerate(zip(gold, pred)):
            if g != p:
                for key in rows[i]:
                    out.append(("e", (key, g), 1.0))
                    out.append(("e", (key, p), -1.0))
            if g != p or gp != pp:
                out.append(("t", gp * T + g, 1.0))
                out.append(("t", pp * T + p, -1.0))
            gp, pp = g, p
        if gp != pp:
            out.append(("t", (T + 1) * T + gp, 1.0))
            out.append(("t", (T + 1) * T + pp, -1.0))
        return out

    def apply(self, kind, key, value, step):
        (self.emit if kind == "e" else self.trans).add(key, value, step)

    def perceptron(self, rows, gold, step):
        pred = self.viterbi([self.emissions(r) for r in rows])
        for kind, key, value in self.walk(rows, gold, pred):
            self.apply(kind, key, value, step)
        return sum(g != p for g, p in zip(gold, pred))

    def greedy(self, rows, gold, step):
        T, wrong, prev = self.T, 0, self.T
        for row, g in zip(rows, gold):
            e = self.emissions(row)
            best, pred = None, -1
            for t in range(T):
                v = e[t] + self.trans.w[prev * T + t]
                if pred < 0 or v > best:
                    best, pred = v, t
            if pred != g:
                wrong += 1
                for key in row:
                    self.apply("e", (key, g), 1.0, step)
                    self.apply("e", (key, pred), -1.0, step)
                self.apply("t", prev * T + g, 1.0, step)
                self.apply("t", prev * T + pred, -1.0, step)
            prev = pred
        return wrong

    def mira1(self, rows, gold, step, C):
        E = [self.emissions(r) for r in rows]
        pred = self.viterbi(E)
        hamming = sum(g != p for g, p in zip(gold, pred))
        if hamming == 0:
            return 0
        diff = {}
        for kind, key, value in self.walk(rows, gold, pred):
            diff[(kind, key)] = diff.get((kind, key), 0.0) + value
        diff = {k: v for k, v in diff.items() if v != 0}
        if not diff:
            return hamming
        resid = hamming - (self.path_score(E, gold) - self.path_score(E, pred))
        if resid > 0:
            alpha = min(C, resid / sum(v * v for v in diff.values()))
            if alpha > 0:
                for (kind, key), v in diff.items():
                    self.apply(kind, key, alpha * v, step)
        return hamming


def _same(got, expected):
    if BIT_EXACT:
        assert got == expected
    else:
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


def _compare(ref, emit, trans, step):
    T = ref.T
    arrays = emit.to_arrays()
    keys = np.repeat(arrays["keys"], arrays["counts"]).tolist()
    current = dict(zip(zip(keys, arrays["labels"].tolist()), arrays["weights"].tolist()))
    assert set(current) == set(ref.emit.w)
    for key, w in current.items():
        _same(w, ref.emit.w[key])
    for i, w in enumerate(trans.weights.tolist()):
        _same(w, ref.trans.w[i])
    avg = emit.averaged(step).to_arrays()
    keys = np.repeat(avg["keys"], avg["counts"]).tolist()
    averaged = dict(zip(zip(keys, avg["labels"].tolist()), avg["weights"].tolist()))
    expected = {k: ref.emit.average(k, step) for k in ref.emit.w}
    assert set(averaged) == {k for k, v in expected.items() if v != 0}
    for key, w in averaged.items():
        _same(w, expected[key])
    for i, w in enumerate(trans.averaged(step).tolist()):
        _same(w, ref.trans.average(i, step))
    assert transition_size(T) == len(trans.weights)


@st.composite
def corpora(draw):
    T = draw(st.integers(2, 4))
    F = draw(st.integers(1, 3))
    lengths = draw(st.lists(st.integers(0, 5), min_size=1, max_size=6))     # empty ones too
    seed = draw(st.integers(0, 2**32 - 1))
    epochs = draw(st.integers(1, 3))
    return T, F, lengths, seed, epochs


def _data(T, F, lengths, seed):
    rng = np.random.default_rng(seed)
    bounds = np.cumsum([0] + lengths).astype(np.int64)
    # a small vocabulary: keys repeat across tokens and within one (key 0
    # pads rows of unequal length and is never trained: not drawn here)
    keys = rng.integers(1, 8, size=(int(bounds[-1]), F)).astype(np.uint64)
    gold = rng.integers(0, T, size=int(bounds[-1])).astype(np.int32)
    return rng, bounds, keys, gold


def _run(algorithm, T, F, lengths, seed, epochs, C=0.7):
    rng, bounds, keys, gold = _data(T, F, lengths, seed)
    emit, trans = WeightTable(initial_features=1), AveragedVector(transition_size(T))
    search = Search(emit, trans, T)
    ref = Reference(T)
    step = 0
    for _ in range(epochs):
        order = rng.permutation(len(lengths)).astype(np.int64)
        if algorithm == "mira":
            wrong, new_step = mira_epoch(search, trans, keys, bounds, gold, order, step, k=1, C=C)
        else:
            wrong, new_step = search.train_epoch(trans, keys, bounds, gold, order, step,
                                                 greedy=algorithm == "greedy")
        expected_wrong = 0
        for s in order:
            step += 1                     # every sentence is a step, an empty one too
            a, b = int(bounds[s]), int(bounds[s + 1])
            if a == b:
                continue
            rows = [[int(k) for k in keys[i]] for i in range(a, b)]
            g = gold[a:b].tolist()
            if algorithm == "mira":
                expected_wrong += ref.mira1(rows, g, step, C)
            elif algorithm == "greedy":
                expected_wrong += ref.greedy(rows, g, step)
            else:
                expected_wrong += ref.perceptron(rows, g, step)
        assert (wrong, new_step) == (expected_wrong, step)
    _compare(ref, emit, trans, max(step, 1))


@settings(max_examples=80, deadline=None)
@given(corpora())
def test_perceptron_epoch_equals_the_reference(corpus):
    _run("perceptron", *corpus)


@settings(max_examples=60, deadline=None)
@given(corpora())
def test_greedy_perceptron_epoch_equals_the_reference(corpus):
    _run("greedy", *corpus)


@settings(max_examples=80, deadline=None)
@given(corpora(), st.sampled_from([0.05, 0.7, 1e9]))
def test_one_best_mira_epoch_equals_the_reference(corpus, C):
    _run("mira", *corpus, C=C)


@settings(max_examples=40, deadline=None)
@given(corpora(), st.integers(2, 4))
def test_mira_epoch_equals_one_mira_step_per_sentence(corpus, k):
    """The epoch loop of k-best MIRA does what a loop of ``mira_step`` calls
    over the same order and steps does."""
    T, F, lengths, seed, epochs = corpus
    rng, bounds, keys, gold = _data(T, F, lengths, seed)
    tables = [(WeightTable(), AveragedVector(transition_size(T))) for _ in range(2)]
    (emit_a, trans_a), (emit_b, trans_b) = tables
    search_a, search_b = Search(emit_a, trans_a, T), Search(emit_b, trans_b, T)
    kb = KBest(search_b, k)
    step = 0
    for _ in range(epochs):
        order = rng.permutation(len(lengths)).astype(np.int64)
        wrong, new_step = mira_epoch(search_a, trans_a, keys, bounds, gold, order, step, k=k, C=0.5)
        total = 0
        for s in order:
            step += 1
            a, b = int(bounds[s]), int(bounds[s + 1])
            w, seqs = kb.mira_step(trans_b, np.ascontiguousarray(keys[a:b]), gold[a:b], step, C=0.5)
            total += w
        assert (wrong, new_step) == (total, step)
    assert emit_a.to_arrays()["weights"].tolist() == emit_b.to_arrays()["weights"].tolist()
    assert trans_a.weights.tolist() == trans_b.weights.tolist()
    last = max(step, 1)
    assert emit_a.averaged(last).to_arrays()["weights"].tolist() == \
        emit_b.averaged(last).to_arrays()["weights"].tolist()
    assert trans_a.averaged(last).tolist() == trans_b.averaged(last).tolist()


@pytest.mark.parametrize("algorithm", ["perceptron", "mira"])
def test_padding_key_is_never_trained(algorithm):
    """Key 0 pads rows of per-token features of unequal length: training
    never stores it, so padding scores nothing however wide a batch is."""
    T = 3
    bounds = np.array([0, 4], np.int64)
    keys = np.array([[5, 0, 0], [6, 7, 0], [5, 0, 0], [8, 0, 0]], np.uint64)
    gold = np.array([0, 1, 2, 1], np.int32)
    emit = WeightTable()
    trans = AveragedVector(transition_size(T))
    search = Search(emit, trans, T)
    order = np.arange(1, dtype=np.int64)
    step = 0
    for _ in range(3):
        if algorithm == "mira":
            _, step = mira_epoch(search, trans, keys, bounds, gold, order, step, k=2, C=1.0)
        else:
            _, step = search.train_epoch(trans, keys, bounds, gold, order, step)
    assert all(emit.get(0, t) == 0.0 for t in range(T))
    assert any(emit.get(5, t) != 0.0 for t in range(T))
