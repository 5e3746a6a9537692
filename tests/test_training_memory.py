"""Training keeps its feature keys as 32-bit ids (issue 15: peak memory).

* ``KeyIds`` numbers keys as a plain dict does (first sight, ids stable
  across batches), and renumbers them by frequency;
* the compiled loops read ids through their vocabulary exactly as they
  read the 64-bit keys: same decoding, same weights, every algorithm; an
  id outside the vocabulary is an error, not a read out of bounds;
* the trainer's chunked featurization gives the keys, bounds and
  candidates of featurizing everything at once (the rows of per-token
  feature dicts padded alike), in about half the memory of the keys;
* every task trains the same model file as through 64-bit keys (the
  trainer before this change), with dev data, threads and MIRA.
"""
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fasttag.model import training as trainer
from fasttag._core.weights import AveragedVector, WeightTable
from fasttag._core.kbest import mira_epoch
from fasttag._core.keyids import KeyIds
from fasttag._core.sequence import Search, transition_size
from fasttag.errors import InputError
from fasttag.tasks import task_class
from fasttag.tasks.featuredicts import FeatureTagger
from fasttag.tasks.seg import Segmenter

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLES = {"pos": DATA / "sample.conllu", "seg": DATA / "sample_zh_train.txt",
           "chunk": DATA / "sample_chunk.conll", "ner": DATA / "sample_ner.conll",
           "tok": DATA / "sample_tok.conllu"}


# ---------------------------------------------------------------- the numbering

def reference_numbering(batches):
    """Ids in order of first sight, with a dict."""
    seen = {}
    out = [[seen.setdefault(int(k), len(seen)) for k in np.asarray(b, dtype=np.uint64).ravel()]
           for b in batches]
    return out, list(seen)


key_values = st.one_of(st.integers(0, 40), st.sampled_from([2**64 - 1, 2**63, 2**32, 2**32 - 1]),
                       st.integers(0, 2**64 - 1))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(key_values, max_size=60), max_size=6))
def test_key_ids_number_keys_as_a_dict_does(batches):
    numbering = KeyIds()
    got = [numbering.add(np.array(b, dtype=np.uint64)) for b in batches]
    expected, vocab = reference_numbering(batches)
    assert [g.tolist() for g in got] == expected
    assert all(g.dtype == np.uint32 for g in got)
    assert numbering.vocabulary().tolist() == vocab
    assert len(numbering) == len(vocab)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(key_values, max_size=60), max_size=6), st.booleans())
def test_renumbering_by_frequency(batches, more):
    """The most frequent key first, ties in order of first sight; the ids
    given out are rewritten, and later batches number on from there."""
    numbering = KeyIds()
    flat = np.array([k for b in batches for k in b], dtype=np.uint64)
    ids = numbering.add(flat)
    vocab = numbering.by_frequency(ids)
    first, order = reference_numbering([flat])
    counts = {k: 0 for k in order}
    for k in flat.tolist():
        counts[k] += 1
    expected = sorted(order, key=lambda k: (-counts[k], order.index(k)))
    assert vocab.tolist() == expected
    assert numbering.vocabulary().tolist() == expected
    assert np.array_equal(vocab[ids], flat)
    if more:                    # numbering goes on in the new order
        extra = np.array([2**64 - 2, 17, 2**64 - 2] + flat[:3].tolist(), dtype=np.uint64)
        got = numbering.add(extra)
        assert np.array_equal(numbering.vocabulary()[got], extra)
        assert got[3:].tolist() == ids[:3].tolist()


def test_renumbering_refuses_ids_it_did_not_give():
    numbering = KeyIds()
    numbering.add(np.arange(4, dtype=np.uint64))
    with pytest.raises(ValueError):
        numbering.by_frequency(np.array([0, 4], dtype=np.uint32))
    with pytest.raises(ValueError):
        numbering.by_frequency(np.array([0, 1], dtype=np.int64))


@pytest.mark.parametrize("n", [1, 511, 513, 40_000])
def test_key_ids_through_growth(n):
    """Many distinct keys (the probe table doubles several times), in
    shapes of two dimensions, written into a given array."""
    rng = np.random.default_rng(n)
    pool = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
    numbering = KeyIds()
    batches = [pool[rng.integers(0, n, size=(rng.integers(1, 3000), 3))] for _ in range(4)]
    got = []
    for b in batches:
        out = np.full(b.shape, 7, dtype=np.uint32)
        assert numbering.add(b, out) is out
        got.append(out)
    expected, vocab = reference_numbering(batches)
    assert [g.ravel().tolist() for g in got] == expected
    assert np.array_equal(numbering.vocabulary(), np.array(vocab, dtype=np.uint64))
    for b, g in zip(batches, got):                  # the vocabulary maps ids back
        assert np.array_equal(numbering.vocabulary()[g], b)
    # the counts survive the growth: by frequency, then first sight
    ids = np.concatenate([g.ravel() for g in got])
    vocab = numbering.by_frequency(ids)
    keys = np.concatenate([b.ravel() for b in batches])
    assert np.array_equal(vocab[ids], keys)
    counts = np.bincount(ids, minlength=len(vocab))
    first = {}
    for k in keys.tolist():
        first.setdefault(k, len(first))
    assert sorted(range(len(vocab)), key=lambda i: (-counts[i], first[int(vocab[i])])) == list(range(len(vocab)))


@pytest.mark.parametrize("out", [np.zeros(3, np.uint64), np.zeros(4, np.uint32),
                                 np.zeros((3, 2), np.uint32)[:, 0], "no"])
def test_key_ids_refuse_a_bad_output_array(out):
    with pytest.raises(ValueError):
        KeyIds().add(np.arange(3, dtype=np.uint64), out)


# ---------------------------------------------------------------- the compiled loops

@st.composite
def corpora(draw):
    T = draw(st.integers(1, 4))
    F = draw(st.integers(0, 4))
    lengths = draw(st.lists(st.integers(0, 6), min_size=1, max_size=8))
    seed = draw(st.integers(0, 2**32 - 1))
    return T, F, lengths, seed


def _as_ids(keys, rng):
    """Ids into a shuffled vocabulary holding ``keys`` and unused keys."""
    vocab = np.unique(np.concatenate([keys.ravel(), rng.integers(0, 2**63, size=5).astype(np.uint64)]))
    vocab = vocab[rng.permutation(len(vocab))]
    where = {int(k): i for i, k in enumerate(vocab)}
    ids = np.array([where[int(k)] for k in keys.ravel()], dtype=np.uint32).reshape(keys.shape)
    return ids, vocab


def _train(algorithm, T, keys, bounds, gold, orders, vocab=None, allowed=None):
    emit, trans = WeightTable(initial_features=1), AveragedVector(transition_size(T))
    search = Search(emit, trans, T, allowed=allowed)
    step, results = 0, []
    for order in orders:
        if algorithm == "mira":
            r = mira_epoch(search, trans, keys, bounds, gold, order, step, k=2, C=0.5, vocab=vocab)
        else:
            r = search.train_epoch(trans, keys, bounds, gold, order, step, greedy=algorithm == "greedy",
                                   vocab=vocab)
        results.append(r)
        step = r[1]
    decoded = search.decode(keys, bounds, vocab=vocab)
    return results, emit.to_arrays(), trans.weights, emit.averaged(max(step, 1)).to_arrays(), decoded


@settings(max_examples=60, deadline=None)
@given(corpora(), st.sampled_from(["perceptron", "greedy", "mira"]))
def test_ids_train_and_decode_as_the_keys_do(corpus, algorithm):
    T, F, lengths, seed = corpus
    rng = np.random.default_rng(seed)
    bounds = np.cumsum([0] + lengths).astype(np.int64)
    keys = rng.integers(0, 9, size=(int(bounds[-1]), F)).astype(np.uint64)     # 0: padding
    gold = rng.integers(0, T, size=int(bounds[-1])).astype(np.int32)
    orders = [rng.permutation(len(lengths)).astype(np.int64) for _ in range(3)]
    allowed = rng.integers(0, 2, size=transition_size(T)).astype(np.uint8) if seed % 2 else None
    ids, vocab = _as_ids(keys, rng)
    a = _train(algorithm, T, keys, bounds, gold, orders, allowed=allowed)
    b = _train(algorithm, T, ids, bounds, gold, orders, vocab=vocab, allowed=allowed)
    assert a[0] == b[0]                                            # mistakes and steps
    for x, y in zip((a[1], a[3]), (b[1], b[3])):                   # weights, averages
        assert all(np.array_equal(x[k], y[k]) for k in x)
    assert np.array_equal(a[2], b[2]) and np.array_equal(a[4], b[4])


def test_an_id_outside_the_vocabulary_is_an_error():
    T = 2
    emit, trans = WeightTable(), AveragedVector(transition_size(T))
    search = Search(emit, trans, T)
    ids = np.array([[0, 1], [1, 3]], dtype=np.uint32)
    vocab = np.array([5, 6, 7], dtype=np.uint64)
    bounds = np.array([0, 2], dtype=np.int64)
    gold = np.zeros(2, dtype=np.int32)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        search.decode(ids, bounds, vocab=vocab)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        search.train_epoch(trans, ids, bounds, gold, np.zeros(1, np.int64), 0, vocab=vocab)
    with pytest.raises(ValueError):
        search.decode(ids, bounds, vocab=np.zeros(0, np.uint64))
    with pytest.raises(ValueError):                     # ids are uint32
        search.decode(ids.astype(np.uint64), bounds, vocab=vocab)
    ids[1, 1] = 2
    assert search.decode(ids, bounds, vocab=vocab).shape == (2,)


# ---------------------------------------------------------------- featurizing

def _reference_featurize(model, examples, chunk=None):
    """The keys of every example at once, as the trainer kept them before."""
    keys, bounds, cands, _ = model.featurize([(x, c) for x, c, _ in examples])
    positions = sum(len(g) for _, _, g in examples)
    if positions != keys.shape[0]:
        raise InputError(f"the gold tags cover {positions} positions, the inputs {keys.shape[0]}")
    return keys, bounds, cands


def _same_featurization(model, examples, chunk):
    rows, bounds, cands = trainer.featurize(model, examples, chunk)
    keys, ref_bounds, ref_cands = _reference_featurize(model, examples)
    assert rows.ids.dtype == np.uint32 and rows.ids.flags.c_contiguous
    assert rows.shape == keys.shape
    assert np.array_equal(rows.vocab[rows.ids], keys)
    assert len(np.unique(rows.vocab)) == len(rows.vocab)
    assert np.array_equal(bounds, ref_bounds)
    assert (cands is None) == (ref_cands is None)
    if cands is not None:
        assert all(np.array_equal(x, y) for x, y in zip(cands, ref_cands))


@pytest.mark.parametrize("chunk", [1, 3, 7, 1000])
def test_chunked_featurization_is_featurizing_at_once_seg(chunk):
    seg = Segmenter.train(SAMPLES["seg"], verbose=False, epochs=1)
    lines = SAMPLES["seg"].read_text(encoding="utf-8").split("\n")
    # pure Chinese lines next to lines with runs of digits: some chunks
    # have no constrained character, others do
    words = [ln.split() for ln in lines if ln.strip()] + [["一九九八年", "１２", "月"], ["中国", "人民"],
                                                           ["ＡＢＣ", "公司"], ["新", "世纪"]]
    examples = seg._encode(words)
    _same_featurization(seg.model, examples, chunk)
    _same_featurization(seg.model, [e for e in examples if not any(ch in "０１２３４５６７８９ＡＢＣ"
                                                                     for ch in e[0])][:5], chunk)


@pytest.mark.parametrize("name", ["pos", "ner", "tok"])
def test_chunked_featurization_is_featurizing_at_once_tokens(name):
    cls, kwargs = task_class(name)
    opts = {"verbose": False, "epochs": 1, **kwargs}
    task = cls.train(SAMPLES[name], **opts)
    calls = []
    orig = trainer.featurize

    def spy(model, examples, chunk=None):
        calls.append(examples)
        return orig(model, examples, chunk)
    trainer.featurize = spy
    try:
        cls.train(SAMPLES[name], **opts)
    finally:
        trainer.featurize = orig
    for chunk in (2, 5, 1000):
        _same_featurization(task.model, calls[0], chunk)


def test_chunked_featurization_pads_per_token_feature_dicts():
    """Per-token feature dicts: chunks of different widths in one matrix,
    as wide as the widest row, padded with the id of key 0."""
    rng = np.random.default_rng(1)
    data = []
    for i in range(23):
        width = 1 + (i // 5) % 3 if i < 15 else 6 - i % 4             # widths rise, then fall
        words = [{f"f{j}": f"v{rng.integers(0, 5)}" for j in range(width)} for _ in range(rng.integers(1, 5))]
        data.append((words, ["X" if "f1" in w else "Y" for w in words]))
    tagger = FeatureTagger.train(data, epochs=1, verbose=False)
    examples = tagger._encode(data, training=True)
    for chunk in (1, 4, 5, 1000):
        _same_featurization(tagger.model, examples, chunk)


def test_gold_tags_must_cover_the_positions():
    seg = Segmenter.train(SAMPLES["seg"], verbose=False, epochs=1)
    examples = seg._encode([["中国", "人民"], ["新", "世纪"], ["你好"]])
    for bad in ([(x, c, g[:-1]) if i == 1 else (x, c, g) for i, (x, c, g) in enumerate(examples)],
                [(x, c, np.concatenate([g, g])) if i == 0 else (x, c, g) for i, (x, c, g) in enumerate(examples)]):
        for chunk in (1, 1000):
            with pytest.raises(InputError, match="the gold tags cover"):
                trainer.featurize(seg.model, bad, chunk)


def test_featurizing_takes_half_the_memory_of_the_keys():
    """The numpy memory of featurizing a training set is its ids plus one
    chunk: well under the 8 bytes a key of the keys themselves."""
    rng = np.random.default_rng(0)
    # lines of words drawn from a small lexicon: keys repeat, as in text
    chars = list("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说")
    lexicon = ["".join(rng.choice(chars, size=rng.integers(1, 4))) for _ in range(300)]
    lines = [[str(w) for w in rng.choice(lexicon, size=rng.integers(5, 20))] for _ in range(3000)]
    seg = Segmenter.train(SAMPLES["seg"], verbose=False, epochs=1)
    examples = seg._encode(lines)
    trainer.featurize(seg.model, examples[:50], 25)          # the featurizer's tables, built once
    tracemalloc.start()
    try:
        rows, bounds, cands = trainer.featurize(seg.model, examples, 100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    n_keys = rows.ids.size
    assert rows.ids.nbytes == 4 * n_keys
    keys_bytes = 8 * n_keys                    # what the trainer kept before
    # the ids, the vocabulary copy, bounds and candidates, and one chunk
    assert peak < 0.6 * keys_bytes, (peak, keys_bytes, len(rows.vocab))


# ---------------------------------------------------------------- whole models

def _save_bytes(task, tmp_path, name):
    path = tmp_path / name
    task.save(path)
    return path.read_bytes()


@contextmanager
def reference_path():
    """Training through 64-bit keys, featurized at once (the trainer
    before ids), within the block."""
    orig = trainer.featurize
    trainer.featurize = _reference_featurize
    try:
        yield
    finally:
        trainer.featurize = orig


CASES = [("seg", {}), ("seg", {"dev": "self", "threads": 2}), ("seg", {"algorithm": "mira", "k": 2}),
         ("pos", {"dev": "self"}), ("pos", {"threads": 2, "algorithm": "mira"}), ("pos", {"decoder": "greedy"}),
         ("ner", {}), ("chunk", {"threads": 2}), ("tok", {})]


@pytest.mark.parametrize("name,options", CASES)
def test_every_task_trains_the_model_of_64_bit_keys(name, options, monkeypatch, tmp_path):
    cls, kwargs = task_class(name)
    options = dict(options)
    if options.get("dev") == "self":         # the same sentences (a copy: the training file itself is refused)
        options["dev"] = tmp_path / ("dev" + SAMPLES[name].suffix)
        options["dev"].write_bytes(SAMPLES[name].read_bytes())
    monkeypatch.setattr(trainer, "FEATURIZE_CHUNK", 7)       # several chunks of the small samples
    ids = cls.train(SAMPLES[name], verbose=False, epochs=3, seed=5, **kwargs, **options)
    with reference_path():
        keys = cls.train(SAMPLES[name], verbose=False, epochs=3, seed=5, **kwargs, **options)
    assert ids.model.training_info == keys.model.training_info
    assert _save_bytes(ids, tmp_path, "ids.ftm") == _save_bytes(keys, tmp_path, "keys.ftm")


def test_feature_tagger_trains_the_model_of_64_bit_keys(monkeypatch, tmp_path):
    rng = np.random.default_rng(3)
    data = []
    for i in range(40):
        words = rng.choice(["a", "b", "c", "d"], size=rng.integers(1, 6)).tolist()
        data.append(([{"w": w, **({"x": "1"} if i % 3 else {})} for w in words],
                     ["X" if w in "ab" else "Y" for w in words]))
    monkeypatch.setattr(trainer, "FEATURIZE_CHUNK", 4)
    ids = FeatureTagger.train(data, epochs=3, verbose=False)
    with reference_path():
        keys = FeatureTagger.train(data, epochs=3, verbose=False)
    assert _save_bytes(ids, tmp_path, "ids.ftm") == _save_bytes(keys, tmp_path, "keys.ftm")
