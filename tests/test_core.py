"""The weight table against slow, obviously correct references."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fasttag._core.weights import AveragedVector, WeightTable, combine, hash_bytes, hash_string, hash_strings


class NaiveAveraged:
    """The textbook averaged perceptron: after every step, add the whole
    weight vector to the accumulator; the average is the sum over T."""

    def __init__(self):
        self.w = {}
        self.acc = {}
        self.t = 0

    def advance_to(self, step):
        while self.t < step:
            self.t += 1
            for k, v in self.w.items():
                self.acc[k] = self.acc.get(k, 0.0) + v

    def update(self, keys, label, delta, step):
        # the updates of step `step` are in force after it: accumulate up to
        # step-1 first, apply, and let the next advance count them
        self.advance_to(step - 1)
        for k in keys:
            self.w[(k, label)] = self.w.get((k, label), 0.0) + delta

    def average(self, step):
        self.advance_to(step)
        return {k: v / step for k, v in self.acc.items()}


def stored_weights(table):
    """{(key, label): float64 weight} of a table, from its canonical arrays
    (``get`` reads the float32 copy a tight table scores with)."""
    arrays = table.to_arrays()
    keys = np.repeat(arrays["keys"], arrays["counts"]).tolist()
    return dict(zip(zip(keys, arrays["labels"].tolist()), arrays["weights"].tolist()))


updates = st.lists(
    st.tuples(
        st.lists(st.integers(0, 12), min_size=0, max_size=6),    # features (repeats allowed)
        st.integers(0, 40),                                      # label
        st.sampled_from([1.0, -1.0, 0.5, -2.0, 0.0, 3.25]),      # delta (zero updates too)
        st.integers(0, 3),                                       # steps to advance
        st.booleans(),                                           # read the average here
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(updates)
def test_lazy_average_equals_naive(seq):
    table = WeightTable(initial_features=1)     # forces growth
    naive = NaiveAveraged()
    step = 1
    for feats, label, delta, advance, read in seq:
        step += advance
        keys = np.array(feats, dtype=np.uint64)
        table.update(keys, label, delta, step)
        naive.update(feats, label, delta, step)
        if read:   # reading mid-way must not disturb training
            expected = naive.average(step)
            avg = stored_weights(table.averaged(step))
            for (k, lab), v in expected.items():
                assert avg.get((k, lab), 0.0) == pytest.approx(v, rel=1e-9, abs=1e-12)
                assert table.get_average(k, lab, step) == pytest.approx(v, rel=1e-9, abs=1e-12)
            step += 1      # the average after `step` steps closes that step
    final = step + 2
    expected = naive.average(final)
    avg_table = table.averaged(final)
    avg = stored_weights(avg_table)
    for (k, lab), v in expected.items():
        assert avg.get((k, lab), 0.0) == pytest.approx(v, rel=1e-9, abs=1e-12)
        # get() is the float32 weight the averaged table scores with
        assert avg_table.get(k, lab) == float(np.float32(avg.get((k, lab), 0.0)))
    # zero averages are pruned; every stored one is a naive one
    assert avg_table.n_weights == sum(1 for v in expected.values() if v != 0)
    for (k, lab), v in naive.w.items():
        assert table.get(k, lab) == pytest.approx(v, rel=1e-12, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.floats(-5, 5, allow_nan=False), st.integers(0, 2)), max_size=30))
def test_dense_vector_average_equals_naive(seq):
    vec = AveragedVector(4)
    naive = NaiveAveraged()
    step = 1
    for i, delta, advance in seq:
        step += advance
        vec.update(i, delta, step)
        naive.update([i], 0, delta, step)
    expected = naive.average(step + 1)
    got = vec.averaged(step + 1)
    for i in range(4):
        assert got[i] == pytest.approx(expected.get((i, 0), 0.0), rel=1e-9, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 30)),
                       st.floats(-100, 100, allow_nan=False), max_size=60),
       st.lists(st.integers(0, 2**64 - 1), max_size=10), st.data())
def test_score_equals_dict_reference(weights, extra_keys, data):
    table = WeightTable(initial_features=1)
    for (k, lab), v in weights.items():
        table.update(np.array([k], dtype=np.uint64), lab, v, 1)
    keys = sorted({k for k, _ in weights} | set(extra_keys))
    values = data.draw(st.lists(st.floats(-3, 3, allow_nan=False), min_size=len(keys), max_size=len(keys)))
    n_classes = 31
    expected = np.zeros(n_classes)
    for (k, lab), v in weights.items():
        if k in keys:
            expected[lab] += v * values[keys.index(k)]
    got = table.score(np.array(keys, dtype=np.uint64), np.array(values, dtype=np.float64), n_classes=n_classes)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_growth_keeps_every_weight_and_memory_tracks_touched_labels():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 2**63, size=50_000, dtype=np.uint64)
    table = WeightTable(initial_features=1)
    for i, k in enumerate(keys):
        table.update(np.array([k]), i % 400, float(i + 1), 1)
    assert len(table) == len(set(keys.tolist()))
    assert table.n_weights == len(keys)
    for i in range(0, len(keys), 997):
        assert table.get(int(keys[i]), i % 400) == float(i + 1)
    # 400 labels, one touched per feature: memory per weight stays small
    assert table.nbytes / table.n_weights < 200


def test_steps_never_go_back_and_labels_are_not_negative():
    table = WeightTable()
    table.update(np.array([1], dtype=np.uint64), 0, 1.0, 5)
    with pytest.raises(ValueError):
        table.update(np.array([1], dtype=np.uint64), 0, 1.0, 4)
    with pytest.raises(ValueError):
        table.update(np.array([1], dtype=np.uint64), -1, 1.0, 6)
    with pytest.raises(ValueError):
        table.averaged(3)


def test_training_continues_after_reading_the_average():
    keys = np.array([7, 9], dtype=np.uint64)
    a, b = WeightTable(), WeightTable()
    for step in range(1, 20):
        a.update(keys, step % 3, 1.0, step)
        b.update(keys, step % 3, 1.0, step)
        a.averaged(step)             # must not change a
    for f in (a.averaged(19), b.averaged(19)):
        assert f.to_arrays()["weights"].tolist() == b.averaged(19).to_arrays()["weights"].tolist()


def test_hashes_are_stable_and_documented():
    # MurmurHash64A, seed 0, of UTF-8 bytes: fixed reference values computed
    # by an independent pure-Python implementation below
    def murmur64a(data, seed=0):
        m, mask = 0xC6A4A7935BD1E995, (1 << 64) - 1
        h = (seed ^ (len(data) * m)) & mask
        nb = len(data) // 8
        for i in range(nb):
            k = int.from_bytes(data[8 * i: 8 * i + 8], "little")
            k = (k * m) & mask
            k ^= k >> 47
            k = (k * m) & mask
            h ^= k
            h = (h * m) & mask
        tail = data[8 * nb:]
        if tail:
            for i in range(len(tail) - 1, -1, -1):
                h ^= tail[i] << (8 * i)
            h = (h * m) & mask
        h ^= h >> 47
        h = (h * m) & mask
        h ^= h >> 47
        return h

    for text in ["", "a", "hello", "солнце", "好好学习天天向上", "x" * 17, "suffix=ing"]:
        assert hash_string(text) == murmur64a(text.encode("utf-8"))
        assert hash_bytes(text.encode("utf-8")) == murmur64a(text.encode("utf-8"))
    assert hash_strings(["a", "b"]).tolist() == [hash_string("a"), hash_string("b")]
    assert combine(1, 2) != combine(2, 1)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 20), max_size=6), st.integers(0, 5),
                          st.sampled_from([1.0, -1.0, 0.5]), st.integers(0, 2)), max_size=25))
def test_batch_entry_points_equal_one_call_per_update(seq):
    one, batch = WeightTable(), WeightTable()
    step, steps = 1, []
    for feats, label, delta, advance in seq:
        step += advance
        steps.append(step)
        one.update(np.array(feats, dtype=np.uint64), label, delta, step)
    offsets = np.cumsum([0] + [len(f) for f, *_ in seq]).astype(np.int64)
    keys = np.array([k for f, *_ in seq for k in f], dtype=np.uint64)
    batch.update_batch(keys, offsets, np.array([l for _, l, _, _ in seq], dtype=np.int32),
                       np.array([d for _, _, d, _ in seq]), np.array(steps, dtype=np.int64))
    assert one.to_arrays()["weights"].tolist() == batch.to_arrays()["weights"].tolist()
    assert one.averaged(step).to_arrays()["weights"].tolist() == batch.averaged(step).to_arrays()["weights"].tolist()
    rows = batch.score_batch(keys, offsets, n_classes=6)
    for e in range(len(seq)):
        np.testing.assert_allclose(rows[e], one.score(np.ascontiguousarray(keys[offsets[e]:offsets[e + 1]]), n_classes=6))


def test_blocks_stay_sorted_with_many_labels():
    table = WeightTable()
    rng = np.random.default_rng(5)
    labels = rng.permutation(400)
    for step, label in enumerate(labels, 1):
        table.update(np.array([42, 7], dtype=np.uint64), int(label), float(label + 1), step)
    arrays = table.to_arrays()
    assert arrays["labels"][:400].tolist() == list(range(400))
    assert all(table.get(42, int(l)) == l + 1 for l in labels)
