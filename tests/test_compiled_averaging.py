"""Lazy averaging (``_averaging.pxd``) against a naive dense numpy reference.

Every averaged weight of the compiled core (``WeightTable`` entries,
``AveragedVector`` elements, the perceptron family of ``_linear``) is updated
and read by the same two functions.  The reference below is the textbook
definition: a dense weight matrix whose whole value is added to an
accumulator after every step; the average after T steps is the accumulator
over T.  The update sequences repeat keys, update by zero, touch many labels,
read the average mid-way and go on training (also from loaded weights).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fasttag._core.weights import AveragedVector, WeightTable
from fasttag.linear._weights import ALGORITHMS, averaged_weights, pa_epoch

N_KEYS = 10
N_LABELS = 70          # more labels than a block's first capacities: blocks move


class DenseAverage:
    """The definition: w is in force for a whole step; after every step the
    accumulator gets the whole of w."""

    def __init__(self, shape, initial=None):
        self.w = np.zeros(shape) if initial is None else np.array(initial, dtype=np.float64)
        self.acc = np.zeros(shape)
        self.t = 0

    def advance_to(self, step):
        while self.t < step:
            self.acc += self.w
            self.t += 1

    def add(self, index, delta, step):
        # the updates of step `step` are in force after it
        self.advance_to(step - 1)
        self.w[index] += delta

    def average(self, step):
        self.advance_to(step)
        return self.acc / step


def stored(table):
    """{(key, label): float64 weight} of a table (from its canonical arrays)."""
    arrays = table.to_arrays()
    keys = np.repeat(arrays["keys"], arrays["counts"]).tolist()
    return dict(zip(zip(keys, arrays["labels"].tolist()), arrays["weights"].tolist()))


def as_dense(weights):
    out = np.zeros((N_KEYS, N_LABELS))
    for (k, lab), v in weights.items():
        out[k, lab] = v
    return out


steps = st.lists(
    st.tuples(
        st.integers(0, 3),                                       # steps to advance (0: same step)
        st.lists(st.integers(0, N_KEYS - 1), max_size=5),        # keys, repeats allowed
        st.integers(0, N_LABELS - 1),                            # label
        st.sampled_from([1.0, -1.0, 0.0, 0.25, -3.5, 1e-3]),      # delta, zero too
        st.booleans(),                                           # read the averages here
    ),
    max_size=50,
)


def _check_table(table, ref, step):
    expected = ref.average(step)
    avg = table.averaged(step)
    np.testing.assert_allclose(as_dense(stored(avg)), expected, rtol=1e-9, atol=1e-12)
    # zero averages are dropped, every other one kept
    assert avg.n_weights == int(np.count_nonzero(expected))
    for (k, lab) in stored(table):
        assert table.get_average(k, lab, step) == pytest.approx(expected[k, lab], rel=1e-9, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(steps, st.booleans())
def test_weight_table_average_equals_the_dense_definition(seq, loaded):
    if loaded:
        # training resumed from loaded weights: they are in force from step 1
        rng = np.random.default_rng(len(seq))
        initial = np.where(rng.random((N_KEYS, N_LABELS)) < 0.1, rng.normal(size=(N_KEYS, N_LABELS)), 0.0)
        keys, labels = np.nonzero(initial)
        counts = np.bincount(keys, minlength=N_KEYS)
        present = counts > 0
        table = WeightTable.from_arrays(np.arange(N_KEYS, dtype=np.uint64)[present], counts[present],
                                        labels, initial[keys, labels])
        ref = DenseAverage((N_KEYS, N_LABELS), initial)
    else:
        table = WeightTable(initial_features=1)      # grows while training
        ref = DenseAverage((N_KEYS, N_LABELS))
    step = 1
    for advance, keys, label, delta, read in seq:
        step += advance
        table.update(np.array(keys, dtype=np.uint64), label, delta, step)
        for k in keys:
            ref.add((k, label), delta, step)
        if read:          # reading never disturbs training, which goes on
            _check_table(table, ref, step)
            step += 1
    np.testing.assert_array_equal(as_dense(stored(table)), ref.w)
    _check_table(table, ref, step + 3)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 7), st.sampled_from([1.0, -1.0, 0.0, 0.5]),
                          st.booleans()), max_size=40), st.booleans())
def test_averaged_vector_equals_the_dense_definition(seq, loaded):
    vec = AveragedVector(8)
    initial = None
    if loaded:
        initial = np.linspace(-1, 1, 8)
        vec.set_weights(initial)
    ref = DenseAverage(8, initial)
    step = 1
    for advance, i, delta, read in seq:
        step += advance
        vec.update(i, delta, step)
        ref.add(i, delta, step)
        if read:
            np.testing.assert_allclose(vec.averaged(step), ref.average(step), rtol=1e-9, atol=1e-12)
            step += 1
    np.testing.assert_array_equal(vec.weights, ref.w)
    np.testing.assert_allclose(vec.averaged(step + 2), ref.average(step + 2), rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- get() and score()

@settings(max_examples=100, deadline=None)
@given(steps, st.integers(0, 5))
def test_get_and_score_agree_on_averaged_and_loaded_tables(seq, extra):
    """An averaged (or loaded) table scores with float32 copies of its
    weights; get() must return exactly the weight score() adds."""
    table = WeightTable()
    step = 1
    for advance, keys, label, delta, _ in seq:
        step += advance
        table.update(np.array(keys, dtype=np.uint64), label, delta, step)
    avg = table.averaged(step + extra)
    arrays = avg.to_arrays()
    loaded = WeightTable.from_arrays(arrays["keys"], arrays["counts"], arrays["labels"], arrays["weights"])
    for t in (avg, loaded, table):
        for key in range(N_KEYS):
            scores = t.score(np.array([key], dtype=np.uint64), n_classes=N_LABELS)
            for label in range(N_LABELS):
                assert t.get(key, label) == scores[label]
    # and get() is the float32 rounding of the stored average
    for (k, lab), v in stored(avg).items():
        assert avg.get(k, lab) == float(np.float32(v))


# ---------------------------------------------------------------- _linear

def naive_pa_epochs(X, y, K, orders, algo, C, fit_intercept):
    """The perceptron-family multiclass updates of ``pa_epoch`` (argmax ties
    to the lowest class), written with dense arrays and the textbook
    averaging: returns (weights, bias, averaged weights, averaged bias)."""
    n_features = X.shape[1]
    W = DenseAverage((n_features, K))
    B = DenseAverage((K,))
    bias_in = 1.0 if fit_intercept else 0.0
    step = 0
    for order in orders:
        for i in order:
            step += 1
            x = X[i]
            nz = [j for j in range(n_features) if x[j] != 0]   # the stored values
            s = [B.w[k] * bias_in for k in range(K)]
            xsq = bias_in
            for j in nz:
                xsq += x[j] * x[j]
                for k in range(K):
                    s[k] += W.w[j, k] * x[j]
            g = int(y[i])
            pred, best, riv, second = 0, s[0], -1, 0.0
            for k in range(K):
                if s[k] > best:
                    best, pred = s[k], k
                if k != g and (riv < 0 or s[k] > second):
                    second, riv = s[k], k
            tau = [0.0] * K
            if algo == "perceptron":
                if pred != g:
                    tau[g], tau[pred] = 1.0, -1.0
            else:                       # PA-I
                loss = 1.0 - (s[g] - second)
                if loss > 0 and xsq > 0:
                    step_size = min(loss / (2.0 * xsq), C)
                    tau[g], tau[riv] = step_size, -step_size
            for j in nz:
                for k in range(K):
                    if tau[k] != 0.0:
                        W.add((j, k), tau[k] * x[j], step)
            if fit_intercept:
                for k in range(K):
                    if tau[k] != 0.0:
                        B.add(k, tau[k], step)
    return W.w, B.w, W.average(step), B.average(step), step


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 6), st.integers(1, 20), st.integers(1, 5), st.integers(1, 3),
       st.sampled_from(["perceptron", "pa1"]), st.booleans(), st.integers(0, 2**32 - 1))
def test_linear_pa_epoch_average_equals_the_dense_definition(K, n, d, epochs, algo, fit_intercept, seed):
    rng = np.random.default_rng(seed)
    # zero values stored in the sample set update weights by zero
    X = rng.integers(-2, 3, size=(n, d)).astype(np.float64)
    y = rng.integers(0, K, size=n).astype(np.int32)
    rows = [[j for j in range(d) if X[i, j] != 0] + ([0] if X[i, 0] == 0 and i % 3 == 0 else [])
            for i in range(n)]
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    idx = np.array([j for r in rows for j in r], dtype=np.int64)
    val = np.array([X[i, j] for i, r in enumerate(rows) for j in r], dtype=np.float64)
    W, TOT, TS = np.zeros((d, K)), np.zeros((d, K)), np.zeros((d, K), np.int64)
    B, BTOT, BTS = np.zeros((1, K)), np.zeros((1, K)), np.zeros((1, K), np.int64)
    orders = [rng.permutation(n).astype(np.int64) for _ in range(epochs)]
    step = 0
    for order in orders:            # training resumed epoch after epoch
        step, *_ = pa_epoch(indptr, idx, val, y, order, W, TOT, TS, B, BTOT, BTS, step,
                            ALGORITHMS[algo], 1.0, 0.5, fit_intercept, True)
        averaged_weights(W, TOT, TS, step)       # reading does not disturb training
    w, b, avg_w, avg_b, ref_step = naive_pa_epochs(X, y, K, orders, algo, 0.5, fit_intercept)
    assert step == ref_step
    np.testing.assert_allclose(W, w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(B[0], b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(averaged_weights(W, TOT, TS, step), avg_w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(averaged_weights(B, BTOT, BTS, step)[0], avg_b, rtol=1e-9, atol=1e-12)


def test_the_linear_codes_are_the_compiled_ones():
    """The Python layer reads its codes from the compiled module (one
    definition), and they are distinct."""
    from fasttag.linear._weights import LEARNING_RATES, LOSSES
    from fasttag.linear import losses, perceptron, sgd
    assert losses.LOSSES is LOSSES
    assert perceptron._ALGOS is ALGORITHMS
    assert sgd._LR is LEARNING_RATES
    for codes in (LOSSES, LEARNING_RATES, ALGORITHMS):
        assert sorted(codes.values()) == list(range(len(codes)))
