"""Ensembles of training runs averaged into one model (``ensemble=N``):

* :func:`fasttag.model.tables.mean_table` against a dict of sums;
* a trained ensemble equals the mean of the runs trained one by one with
  seeds S, S+1 ..., for every task, with and without dev data, and its
  dev score is the averaged model's;
* ``ensemble=1`` is the model trained without the option, byte for byte;
* Ctrl-C in a later run keeps the runs completed so far;
* ``--ensemble`` through the console script.
"""
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fasttag._core.weights import WeightTable
from fasttag.errors import InputError
from fasttag.model.tables import mean_table
from fasttag.tasks import task_class

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLES = {"pos": DATA / "sample.conllu", "seg": DATA / "sample_zh_train.txt",
           "chunk": DATA / "sample_chunk.conll", "ner": DATA / "sample_ner.conll",
           "tok": DATA / "sample_tok.conllu"}


def train(name, **options):
    cls, kwargs = task_class(name)
    return cls.train(SAMPLES[name], verbose=False, **kwargs, **options)


def entries(table):
    """{(key, label): weight} of a weight table."""
    arrs = table.to_arrays()
    keys = np.repeat(arrs["keys"], arrs["counts"])
    return {(int(k), int(l)): float(w) for k, l, w in zip(keys, arrs["labels"], arrs["weights"])}


def table(items, n_classes):
    """A weight table holding {(key, label): weight}."""
    by_key = defaultdict(dict)
    for (k, l), w in items.items():
        by_key[k][l] = w
    keys = sorted(by_key)
    labels = [l for k in keys for l in sorted(by_key[k])]
    weights = [by_key[k][l] for k in keys for l in sorted(by_key[k])]
    return WeightTable.from_arrays(np.array(keys, dtype=np.uint64),
                                   np.array([len(by_key[k]) for k in keys], dtype=np.uint32),
                                   np.array(labels, dtype=np.int32), np.array(weights, dtype=np.float64),
                                   n_classes=n_classes)


entry = st.tuples(st.integers(1, 6), st.integers(0, 3))
tables = st.lists(st.dictionaries(entry, st.integers(-4, 4).map(float).filter(bool), max_size=8),
                  min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(tables)
def test_mean_table_matches_sums(items):
    sums = defaultdict(float)
    for t in items:
        for e, w in t.items():
            sums[e] += w
    want = {e: s / len(items) for e, s in sums.items()}
    got = entries(mean_table([table(t, 4) for t in items], 4))
    assert set(got) == set(want)
    for e in want:
        assert got[e] == pytest.approx(want[e])


def mean_of(models):
    """The entrywise mean of the models' emission weights (zeros dropped)
    and of their transitions: the reference of an ensemble."""
    sums = defaultdict(float)
    for m in models:
        for e, w in entries(m.model.emit).items():
            sums[e] += w
    return ({e: s / len(models) for e, s in sums.items()},
            np.mean([np.asarray(m.model.trans) for m in models], axis=0))


def assert_close_to(model, reference):
    emit, trans = reference
    got = entries(model.model.emit)
    # the runs' weights are averaged before the float32 rounding of a
    # model, the reference's after: equal to float32 precision, and an
    # entry whose mean is (nearly) 0 may be in one and not the other
    scale = max(abs(w) for w in emit.values())
    for e in set(got) | set(emit):
        assert got.get(e, 0.0) == pytest.approx(emit.get(e, 0.0), abs=1e-6 * scale)
    assert np.allclose(model.model.trans, trans, rtol=1e-6, atol=1e-6 * np.abs(trans).max())


@pytest.mark.parametrize("name, options", [
    ("pos", {}), ("pos", {"algorithm": "mira", "k": 2}), ("chunk", {}), ("ner", {}), ("seg", {}),
    ("tok", {}), ("pos", {"threads": 2}),
])
def test_ensemble_is_the_mean_of_its_runs(name, options):
    runs = [train(name, epochs=2, seed=5 + r, **options) for r in range(3)]
    ensemble = train(name, epochs=2, seed=5, ensemble=3, **options)
    assert_close_to(ensemble, mean_of(runs))
    info = ensemble.model.training_info
    assert info["ensemble"] == 3
    assert info["best_epochs"] == [r.model.training_info["best_epoch"] for r in runs]
    assert len(ensemble.meta["history"]) == 3 * 2


@pytest.mark.parametrize("name", ["pos", "chunk"])
def test_ensemble_with_dev_keeps_each_runs_best_epoch_and_scores_the_mean(name, dev_copy):
    # dev: a copy of the training file (training refuses the file itself); the test is not about held-out data
    dev = dev_copy(SAMPLES[name])
    runs = [train(name, dev=dev, epochs=3, seed=r) for r in range(2)]
    ensemble = train(name, dev=dev, epochs=3, ensemble=2)
    assert_close_to(ensemble, mean_of(runs))
    info = ensemble.model.training_info
    assert info["best_epochs"] == [r.model.training_info["best_epoch"] for r in runs]
    primary = "accuracy" if name == "pos" else "f1"
    assert info["dev_score"] == pytest.approx(ensemble.evaluate(SAMPLES[name])[primary])


def test_ensemble_of_one_is_the_plain_model():
    assert train("chunk", epochs=2, ensemble=1).to_bytes() == train("chunk", epochs=2).to_bytes()


def test_ensemble_runs_differ():
    """The runs shuffle differently: an ensemble is not one run again."""
    one = train("pos", epochs=2)
    two = train("pos", epochs=2, ensemble=2)
    assert entries(one.model.emit) != entries(two.model.emit)


@pytest.mark.parametrize("value", [0, -2, 1.5, True, "3"])
def test_bad_ensemble_refused(value):
    with pytest.raises(InputError, match="ensemble"):
        train("pos", epochs=1, ensemble=value)


def test_ctrl_c_in_a_later_run_keeps_the_completed_runs(interrupted_fit):
    model, stop = interrupted_fit(3, epochs=2, ensemble=3)      # call 3: run 2, epoch 1
    assert stop.model is model.model
    assert model.model.training_info["best_epoch"] == 1
    assert model.model.training_info["interrupted_at_epoch"] == 1
    assert "ensemble" not in model.model.training_info       # one run completed: its own model
    first = train("pos", epochs=1)
    assert entries(model.model.emit) == entries(first.model.emit)


def test_ensemble_on_the_command_line(run_cli, tmp_path, dev_copy):
    out = tmp_path / "m.ftm"
    # dev: a copy of the training file (training refuses the file itself); the test is not about held-out data
    proc = run_cli("train", "chunk", SAMPLES["chunk"], "--dev", dev_copy(SAMPLES["chunk"]), "-o", out,
                   "--epochs", "2", "--ensemble", "2")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode()
    assert "run 2/2, epoch 2/2" in err
    assert "the 2 runs averaged: dev" in err
    assert "best epochs " in err
    proc = run_cli("train", "chunk", SAMPLES["chunk"], "-o", tmp_path / "n.ftm", "--ensemble", "0")
    assert proc.returncode == 2
    assert proc.stderr.decode().strip() == "fasttag: error: --ensemble must be an integer of at least 1, not 0"
    assert not (tmp_path / "n.ftm").exists()
