"""k-best Viterbi against brute force, and MIRA's constraints after its update."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fasttag._core.weights import AveragedVector, WeightTable
from fasttag._core.kbest import KBest, kbest, mira_epoch
from fasttag._core.sequence import Search, transition_size
from fasttag.model.sequence import SequenceModel
from fasttag.model.training import fit
from fasttag.features.words import WordFeaturizer


def _emissions(emit, keys, T):
    return [emit.score(np.ascontiguousarray(keys[i]), None, T)[:T] for i in range(len(keys))]


def _score(E, trans, tags, T):
    total, prev = 0.0, T
    for i, t in enumerate(tags):
        total += E[i][t] + trans[prev * T + t]
        prev = t
    return total + trans[(T + 1) * T + prev]


def _valid(tags, allowed, T):
    if allowed is None:
        return True
    prev = T
    for t in tags:
        if not allowed[prev * T + t]:
            return False
        prev = t
    return bool(allowed[(T + 1) * T + prev])


def _brute_force(E, trans, T, n, allowed, candidates=None):
    """All sequences, best first; ties by the tag sequence read right to left."""
    choices = [range(T) if candidates is None else candidates[i] for i in range(n)]
    rows = [(-_score(E, trans, tags, T), tags[::-1], list(tags))
            for tags in itertools.product(*choices) if _valid(tags, allowed, T)]
    if not rows and allowed is not None:
        return _brute_force(E, trans, T, n, None, candidates)
    rows.sort()
    return [(-s, tags) for s, _, tags in rows]


@st.composite
def lattices(draw, max_tags=4, max_len=5):
    T = draw(st.integers(1, max_tags))
    n = draw(st.integers(1, max_len))
    k = draw(st.integers(1, 7))
    n_keys = 6
    weights = draw(st.lists(st.integers(-3, 3), min_size=n_keys * T, max_size=n_keys * T))
    trans = draw(st.lists(st.integers(-3, 3), min_size=transition_size(T), max_size=transition_size(T)))
    keys = draw(st.lists(st.integers(0, n_keys - 1), min_size=2 * n, max_size=2 * n))
    mask = draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=transition_size(T),
                                               max_size=transition_size(T))))
    return T, n, k, weights, trans, keys, mask


def _build(T, weights, trans, keys, mask, n):
    emit = WeightTable()
    for key in range(len(weights) // T):
        for t in range(T):
            if weights[key * T + t]:
                emit.update(np.array([key], np.uint64), t, float(weights[key * T + t]), 1)
    keys = np.array(keys, dtype=np.uint64).reshape(n, 2)
    trans = np.array(trans, dtype=np.float64)
    allowed = None if mask is None else np.array(mask, dtype=np.uint8)
    return emit, keys, trans, allowed


@settings(max_examples=300, deadline=None)
@given(lattices())
def test_kbest_equals_brute_force(case):
    T, n, k, weights, trans, keys, mask = case
    emit, keys, trans, allowed = _build(T, weights, trans, keys, mask, n)
    search = Search(emit, trans, T, allowed=allowed)
    got = kbest(search, keys, np.array([0, n], np.int64), k)[0]
    expected = _brute_force(_emissions(emit, keys, T), trans, T, n, allowed)[:k]
    assert [(s, list(t)) for s, t in got] == expected
    # k = 1 is Viterbi, ties included
    assert list(search.decode(keys, np.array([0, n], np.int64))) == expected[0][1]


@settings(max_examples=100, deadline=None)
@given(lattices(max_tags=4, max_len=4), st.data())
def test_kbest_respects_candidate_lists(case, data):
    T, n, k, weights, trans, keys, mask = case
    emit, keys, trans, allowed = _build(T, weights, trans, keys, mask, n)
    classes = [sorted(set(data.draw(st.lists(st.integers(0, T - 1), min_size=1, max_size=T))))
               for _ in range(n)]
    offsets = np.cumsum([0] + [len(c) for c in classes]).astype(np.int64)
    flat = np.array([t for c in classes for t in c], dtype=np.int32)
    search = Search(emit, trans, T, allowed=allowed,
                    candidates=(np.arange(n, dtype=np.int32), offsets, flat))
    got = kbest(search, keys, np.array([0, n], np.int64), k)[0]
    expected = _brute_force(_emissions(emit, keys, T), trans, T, n, allowed, classes)[:k]
    assert [(s, list(t)) for s, t in got] == expected


def test_kbest_batch_and_empty_sentences():
    rng = np.random.default_rng(0)
    T = 3
    emit = WeightTable()
    for key in range(10):
        for t in range(T):
            emit.update(np.array([key], np.uint64), t, float(rng.integers(-5, 6)), 1)
    trans = rng.integers(-3, 4, transition_size(T)).astype(float)
    keys = rng.integers(0, 10, (7, 1)).astype(np.uint64)
    bounds = np.array([0, 3, 3, 7], np.int64)
    search = Search(emit, trans, T)
    out = kbest(search, keys, bounds, 4)
    assert len(out) == 3
    assert [len(rows) for rows in out] == [4, 1, 4]
    assert len(out[1][0][1]) == 0
    scores = [s for s, _ in out[2]]
    assert scores == sorted(scores, reverse=True)
    with pytest.raises(ValueError):
        KBest(search, 0)


def _random_case(rng, T, n, F=3):
    emit = WeightTable()
    trans = AveragedVector(transition_size(T))
    keys = rng.integers(1, 41, size=(n, F)).astype(np.uint64)    # key 0 pads rows: never trained
    keys[:, 0] = np.arange(n) + 1000          # one key of its own per token
    keys[:, 1] = keys[:, 2]                   # a key twice in a token: multiplicity
    for key in range(1, 41):
        for t in range(T):
            emit.update(np.array([key], np.uint64), t, float(rng.normal()), 1)
    for i in range(transition_size(T)):
        trans.update(i, float(rng.normal()), 1)
    gold = rng.integers(0, T, size=n).astype(np.int32)
    return emit, trans, keys, gold


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_mira_update_satisfies_its_constraints(k):
    """With C large, after the update the gold sequence outscores each of the
    k sequences it was decoded against by at least their Hamming distance."""
    rng = np.random.default_rng(k)
    checked = 0
    for _ in range(60):
        T = int(rng.integers(2, 5))
        n = int(rng.integers(1, 7))
        emit, trans, keys, gold = _random_case(rng, T, n)
        search = Search(emit, trans, T)
        wrong, seqs = KBest(search, k).mira_step(trans, keys, gold, 2, C=1e9)
        assert 1 <= len(seqs) <= k
        assert wrong == int((seqs[0] != gold).sum())
        E = _emissions(emit, keys, T)
        w = trans.weights
        gold_score = _score(E, w, gold, T)
        for y in seqs:
            loss = int((y != gold).sum())
            if loss:
                checked += 1
                assert gold_score - _score(E, w, y, T) >= loss - 1e-5
    assert checked > 50


def test_mira_k1_is_the_closed_form():
    rng = np.random.default_rng(7)
    T, n = 3, 4
    for _ in range(30):
        emit, trans, keys, gold = _random_case(rng, T, n)
        before = _emissions(emit, keys, T)
        w0 = trans.weights.copy()
        search = Search(emit, trans, T)
        C = 0.05
        _, seqs = KBest(search, 1).mira_step(trans, keys, gold, 2, C=C)
        y = seqs[0]
        loss = int((y != gold).sum())
        margin = _score(before, w0, gold, T) - _score(before, w0, y, T)
        after = _emissions(emit, keys, T)
        new_margin = _score(after, trans.weights, gold, T) - _score(after, trans.weights, y, T)
        if loss == 0 or margin >= loss:
            assert new_margin == pytest.approx(margin)
            continue
        # squared norm of phi(gold) - phi(y): emission keys with multiplicity
        # (key 1 and key 2 are equal), transitions
        diff = {}
        prev_g = prev_y = T
        for i in range(n):
            if gold[i] != y[i]:
                for key in keys[i]:
                    diff[(int(key), int(gold[i]))] = diff.get((int(key), int(gold[i])), 0) + 1
                    diff[(int(key), int(y[i]))] = diff.get((int(key), int(y[i])), 0) - 1
            diff[("t", prev_g * T + int(gold[i]))] = diff.get(("t", prev_g * T + int(gold[i])), 0) + 1
            diff[("t", prev_y * T + int(y[i]))] = diff.get(("t", prev_y * T + int(y[i])), 0) - 1
            prev_g, prev_y = int(gold[i]), int(y[i])
        diff[("t", (T + 1) * T + prev_g)] = diff.get(("t", (T + 1) * T + prev_g), 0) + 1
        diff[("t", (T + 1) * T + prev_y)] = diff.get(("t", (T + 1) * T + prev_y), 0) - 1
        norm = sum(v * v for v in diff.values())
        tau = min(C, (loss - margin) / norm)
        assert new_margin == pytest.approx(margin + tau * norm)


def test_mira_epoch_contract_and_averaging():
    rng = np.random.default_rng(3)
    T, n_sent = 3, 20
    lengths = rng.integers(0, 6, n_sent)
    bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    N = int(bounds[-1])
    keys = rng.integers(0, 30, (N, 2)).astype(np.uint64)
    gold = (keys[:, 0] % T).astype(np.int32)       # learnable from the first key
    emit = WeightTable()
    trans = AveragedVector(transition_size(T))
    search = Search(emit, trans, T)
    step = 0
    wrongs = []
    for epoch in range(8):
        order = rng.permutation(n_sent).astype(np.int64)
        wrong, new_step = mira_epoch(search, trans, keys, bounds, gold, order, step, k=3, C=1.0)
        assert new_step == step + n_sent
        step = new_step
        wrongs.append(wrong)
    assert wrongs[-1] == 0 and wrongs[0] > 0
    with pytest.raises(ValueError):
        mira_epoch(search, trans, keys, bounds, gold, np.array([n_sent], np.int64), step)
    with pytest.raises(ValueError):
        mira_epoch(search, AveragedVector(transition_size(T)), keys, bounds, gold,
                   np.zeros(1, np.int64), step)


@pytest.mark.parametrize("k", [1, 3])
def test_sequence_model_fit_with_mira(k):
    """MIRA through SequenceModel.fit learns a toy tagging task."""
    rng = np.random.default_rng(11)
    vocab = {"the": "D", "a": "D", "dog": "N", "cat": "N", "runs": "V", "sees": "V"}
    words = list(vocab)
    data = []
    for _ in range(60):
        sent = [words[i] for i in rng.integers(0, len(words), rng.integers(1, 7))]
        data.append(sent)
    tags = ["D", "N", "V"]
    train = [(s, None, [tags.index(vocab[w]) for w in s]) for s in data]
    model = SequenceModel(tags, WordFeaturizer(), ["bias", "word[0]", "word[-1]"])
    fit(model, train, epochs=5, algorithm="mira", k=k, C=1.0, verbose=False)
    pred = model.predict_ids([(s, None) for s, _, _ in train])
    acc = np.mean(np.concatenate(pred) == np.concatenate([g for _, _, g in train]))
    assert acc == 1.0
    assert model.training_info["algorithm"] == "mira" and model.training_info["k"] == k


@pytest.mark.parametrize("k", [1, 3])
def test_mira_step_returns_a_pair_for_every_sentence(k):
    """(tokens wrong, sequences decoded), an empty sentence included: then
    nothing is decoded and nothing changes."""
    rng = np.random.default_rng(5)
    T = 3
    emit, trans, keys, gold = _random_case(rng, T, 4)
    search = Search(emit, trans, T)
    kb = KBest(search, k)
    before = (emit.to_arrays()["weights"].tolist(), trans.weights.tolist())
    empty = kb.mira_step(trans, np.zeros((0, keys.shape[1]), np.uint64), np.zeros(0, np.int32), 2)
    assert isinstance(empty, tuple) and len(empty) == 2
    assert empty == (0, [])
    assert (emit.to_arrays()["weights"].tolist(), trans.weights.tolist()) == before
    result = kb.mira_step(trans, keys, gold, 3)
    assert isinstance(result, tuple) and len(result) == 2
    wrong, seqs = result
    assert 1 <= len(seqs) <= k and wrong == int((seqs[0] != gold).sum())
