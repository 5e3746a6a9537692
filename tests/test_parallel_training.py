"""Training on many threads: iterative parameter mixing (fasttag.model.mixing).

* the mixing arithmetic (weights and averages) against a plain reference
  that keeps every shard's weights after every step;
* one shard through the mixing path equals the sequential loop;
* identical models for the same seed and thread count, ``threads=1``
  unchanged, every task and algorithm, fine-tuning, Ctrl-C;
* accuracy with threads within 0.1 point of one thread on slices of EWT
  and People's Daily;
* ``--threads`` through the console script, bad values refused.
"""
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fasttag
from fasttag.model import mixing
from fasttag.model import training as trainer
from fasttag._core.weights import AveragedVector, WeightTable
from fasttag.errors import InputError
from fasttag.tasks import task_class
from fasttag.tasks.featuredicts import FeatureTagger

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLES = {"pos": DATA / "sample.conllu", "seg": DATA / "sample_zh_train.txt",
           "chunk": DATA / "sample_chunk.conll", "ner": DATA / "sample_ner.conll",
           "tok": DATA / "sample_tok.conllu"}


def weights(task_model):
    """Everything a model predicts with: emission arrays and transitions."""
    arrs = task_model.model.emit.to_arrays()
    return [arrs[k] for k in ("keys", "counts", "labels", "weights")] + [np.asarray(task_model.model.trans)]


def same_weights(a, b):
    return all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(weights(a), weights(b)))


def train(name, **options):
    cls, kwargs = task_class(name)
    return cls.train(SAMPLES[name], verbose=False, **kwargs, **options)


# ---------------------------------------------------------------- the arithmetic

KEYS = [11, 22, 33]
LABELS = [0, 1, 2]

update = st.tuples(st.sampled_from(KEYS), st.sampled_from(LABELS), st.integers(-3, 3).map(float))
shard = st.lists(st.lists(update, max_size=3), min_size=0, max_size=5)       # steps of one shard
rounds = st.lists(st.lists(shard, min_size=1, max_size=3), min_size=1, max_size=3)


@settings(max_examples=200, deadline=None)
@given(rounds, st.booleans())
def test_mixing_matches_reference(plan, follow):
    """Rounds of shards, each shard a list of steps, each step a list of
    (key, label, delta) updates (emission) or of a transition index.  Each
    mixed weight must be W + sum_{i in S} (n_i / n_S) (w_i - W) over the
    shards S that changed it (transitions: over all shards, by size), and
    the average after G steps the mean, over every step of every shard, of
    that shard's weights after the step.  With ``follow``, a shard that
    took part in the last round keeps its copy and is brought up to date
    from what the last mix changed, instead of copying the whole table."""
    copies = {}                         # shard index -> (emit, trans) in step with the mixed table
    last = None
    mixed_emit = WeightTable()
    mixed_emit.loosen()
    mixed_trans = AveragedVector(len(LABELS))
    ref = defaultdict(float)            # mixed weights
    ref_sum = defaultdict(float)        # sum over all steps so far
    ref_trans = np.zeros(len(LABELS))
    ref_trans_sum = np.zeros(len(LABELS))
    step = 0
    for shards in plan:
        total = sum(len(s) for s in shards)
        changes = []
        new = defaultdict(float)
        new_trans = np.zeros(len(LABELS))
        touched = []                    # per shard: (its size, its weights, the entries it updated)
        for i, steps in enumerate(shards):
            if follow and i in copies:
                emit, trans = copies[i]
                mixing.start_round(emit, trans, mixed_emit, mixed_trans, last)
            else:
                emit, trans = WeightTable(), AveragedVector(len(LABELS))
                mixing.start_round(emit, trans, mixed_emit, mixed_trans)
            for key in KEYS:            # the copy holds the mixed weights
                for label in LABELS:
                    assert emit.get(key, label) == pytest.approx(ref[key, label], abs=1e-9)
            w = defaultdict(float, ref)
            tw = ref_trans.copy()
            updated = set()
            for s, updates in enumerate(steps, start=2):
                for key, label, delta in updates:
                    emit.update(np.array([key], dtype=np.uint64), label, delta, s)
                    trans.update(label, delta / 2, s)
                    w[key, label] += delta
                    tw[label] += delta / 2
                    updated.add((key, label))
                for entry, value in w.items():
                    ref_sum[entry] += value
                ref_trans_sum += tw
            if steps:
                touched.append((len(steps), w, updated))
            new_trans += (len(steps) / total) * (tw - ref_trans) if total else 0.0
            changes.append(mixing.round_changes(emit, trans, len(steps), 0))
            copies[i] = (emit, trans)
        for n, w, updated in touched:
            for entry in updated:
                n_s = sum(m for m, _, u in touched if entry in u)
                new[entry] += (n / n_s) * (w[entry] - ref[entry])
        step += total
        last = mixing.mix(mixed_emit, mixed_trans, changes, step)
        for i in list(copies):          # a shard that sat this round out is not in step
            if i >= len(shards):
                del copies[i]
        for entry in set(new) | set(ref):
            ref[entry] += new[entry]
        ref_trans += new_trans
    for key in KEYS:
        for label in LABELS:
            assert mixed_emit.get(key, label) == pytest.approx(ref[key, label], abs=1e-9)
            if step:
                assert mixed_emit.get_average(key, label, step) == pytest.approx(
                    ref_sum[key, label] / step, abs=1e-9)
    assert np.allclose(mixed_trans.weights, ref_trans)
    if step:
        assert np.allclose(mixed_trans.averaged(step), ref_trans_sum / step)


def test_deal_cuts_by_positions():
    order = np.array([3, 0, 2, 1], dtype=np.int64)
    lengths = np.array([10, 1, 1, 10])
    parts = mixing.deal(order, lengths, 2)
    assert [p.tolist() for p in parts] == [[3], [0, 2, 1]]
    assert sum(len(p) for p in mixing.deal(order, lengths, 8)) == 4


# ---------------------------------------------------------------- training

def test_one_shard_mixing_equals_sequential_training():
    """One shard, several mixing rounds an epoch: the averaging convention
    is the sequential one, so the model is the sequential model."""
    plain = train("pos", epochs=3)
    orig = trainer.fit

    def fit_mixed(*args, **kw):
        return orig(*args, **kw, rounds=3)
    try:
        trainer.fit = fit_mixed
        mixed = train("pos", epochs=3)
    finally:
        trainer.fit = orig
    assert same_weights(plain, mixed)


def test_one_thread_is_the_sequential_loop():
    assert same_weights(train("pos", epochs=3), train("pos", epochs=3, threads=1))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_task_with_threads_is_deterministic(name):
    a = train(name, epochs=3, threads=2, seed=3)
    b = train(name, epochs=3, threads=2, seed=3)
    assert same_weights(a, b)
    assert a.model.training_info["threads"] == 2
    one = train(name, epochs=3, seed=3)
    if a.model.training_info["train_sentences"] > 1:        # really trained on shards
        assert not same_weights(a, one)
    assert a.model.training_info["train_accuracy"][-1] > 0.5
    assert abs(a.model.training_info["train_accuracy"][-1] - one.model.training_info["train_accuracy"][-1]) < 0.15


@pytest.mark.parametrize("options", [{"algorithm": "perceptron"}, {"algorithm": "mira"},
                                     {"algorithm": "mira", "k": 3, "C": 0.5}, {"decoder": "greedy"}])
def test_every_algorithm_with_threads(options):
    a = train("pos", epochs=4, threads=3, **options)
    assert same_weights(a, train("pos", epochs=4, threads=3, **options))
    one = train("pos", epochs=4, **options)
    gold = SAMPLES["pos"]
    assert a.evaluate(gold)["accuracy"] > one.evaluate(gold)["accuracy"] - 0.1


def test_feature_tagger_with_threads():
    rng = np.random.default_rng(0)
    data = []
    for _ in range(60):
        words = rng.choice(["a", "b", "c", "d"], size=5).tolist()
        data.append(([{"w": w} for w in words], ["X" if w in "ab" else "Y" for w in words]))
    a = FeatureTagger.train(data, epochs=3, threads=2, verbose=False)
    assert same_weights(a, FeatureTagger.train(data, epochs=3, threads=2, verbose=False))
    assert a.evaluate(data)["accuracy"] == 1.0


def test_more_threads_than_sentences():
    a = train("pos", epochs=2, threads=64)
    assert a.evaluate(SAMPLES["pos"])["accuracy"] > 0.5


def test_fine_tuning_with_threads(tmp_path):
    base = train("pos", epochs=2)
    path = tmp_path / "base.ftm"
    base.save(path)
    a = train("pos", epochs=2, threads=2, init=str(path))
    b = train("pos", epochs=2, threads=2, init=str(path))
    assert same_weights(a, b)
    assert a.meta["fine_tuned"] == 1
    assert a.evaluate(SAMPLES["pos"])["accuracy"] >= base.evaluate(SAMPLES["pos"])["accuracy"] - 0.02


def test_ctrl_c_with_threads_keeps_the_best_completed_epoch(interrupted_fit):
    model, stop = interrupted_fit(2, epochs=4, threads=2)
    assert stop.model is model.model
    assert model.model.training_info["best_epoch"] == 1
    assert model.model.training_info["interrupted_at_epoch"] == 2


def test_ctrl_c_with_threads_records_the_threads(interrupted_fit):
    """The kept model of an interrupted run says how it was trained, as a
    finished one does (and as Dask training records its workers)."""
    model, stop = interrupted_fit(2, epochs=3, threads=2)
    assert stop.model.training_info["threads"] == 2


@pytest.mark.parametrize("value", [-1, 1.5, True, "2"])        # 0: every core (tests/test_useless_input.py)
def test_bad_threads_refused(value):
    with pytest.raises(InputError, match="threads"):
        train("pos", epochs=1, threads=value)


def test_threads_close_to_one_thread_on_ewt(shared_data, tmp_path):
    """On a slice of EWT, 2 threads reach the single-thread accuracy within
    0.1 point after the same epochs, as the issue asks (measured: +0.10;
    the full corpus: see BENCHMARKS.md)."""
    ewt = shared_data / "en_ewt"
    blocks = (ewt / "en_ewt-ud-train.conllu").read_text(encoding="utf-8").split("\n\n")
    path = tmp_path / "slice.conllu"
    path.write_text("\n\n".join(b for b in blocks[:4000] if b.strip()) + "\n\n", encoding="utf-8")
    _two_threads_score_as_one(fasttag.Tagger, path, 6, ewt / "en_ewt-ud-dev.conllu", "accuracy")


def test_threads_close_to_one_thread_on_peoples_daily(shared_data, tmp_path):
    """The same for segmentation, on a slice of People's Daily 1998 (the
    corpus of the PKU standard; measured: -0.08 F1; a 5,000-line slice
    gives -0.16: see ``trainer.MAX_ROUNDS``)."""
    pd = shared_data / "zh_pd1998"
    lines = (pd / "train.txt").read_text(encoding="utf-8").splitlines()[:10000]
    path = tmp_path / "slice.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _two_threads_score_as_one(fasttag.Segmenter, path, 5, pd / "dev.txt", "f1")


def _two_threads_score_as_one(cls, train, epochs, test, score):
    """``cls`` trained on ``train`` with 2 threads scores on ``test`` within
    0.1 point of one thread after the same epochs."""
    one = cls.train(train, epochs=epochs, verbose=False)
    two = cls.train(train, epochs=epochs, threads=2, verbose=False)
    s1, s2 = one.evaluate(test)[score], two.evaluate(test)[score]
    assert s2 >= s1 - 0.001, (s1, s2)


# ---------------------------------------------------------------- the command line

def test_cli_threads(run_cli, tmp_path):
    out = tmp_path / "m.ftm"
    result = run_cli("train", "pos", SAMPLES["pos"], "-o", out, "--threads", "2", "--epochs", "2",
                     "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    model = fasttag.load(out)
    assert model.model.training_info["threads"] == 2
    assert same_weights(model, train("pos", epochs=2, threads=2))


@pytest.mark.parametrize("value", ["-2", "x", "1.5"])
def test_cli_bad_threads(run_cli, tmp_path, value):
    result = run_cli("train", "pos", SAMPLES["pos"], "-o", tmp_path / "m.ftm", "--threads", value,
                     cwd=tmp_path)
    assert result.returncode == 2
    assert b"--threads" in result.stderr and b"Traceback" not in result.stderr
    assert not (tmp_path / "m.ftm").exists()
