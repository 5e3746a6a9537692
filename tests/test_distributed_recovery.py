"""Dask training survives losing its workers (real clusters, workers
killed with SIGKILL).

Workers killed while the cluster's nannies start them again: the lost
shards run again on the workers that return and the model is the one an
undisturbed run gives, byte for byte (a shard's epoch depends only on the
mixed weights, its bytes, the seed, the epoch and its index).  Workers
that never return: after the cluster's patience (here 3 s) training stops
with one line and keeps the best completed epoch, as Ctrl-C does.

The kills are synchronised on the progress lines: a worker dies once the
epoch before is in, never after a sleep.
"""
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import fasttag
from fasttag.model import progress

dd = pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'fasttag-nlp[dask]')")
import dask  # noqa: E402  (installed with dask.distributed)

DATA = Path(__file__).resolve().parents[1] / "data"
PATIENCE = "3s"     # how long training waits for a worker where none is left (the default: 30 s)


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    """Enough sentences for a shard to take a moment, few enough for seconds."""
    path = tmp_path_factory.mktemp("lost") / "train.conllu"
    path.write_bytes((DATA / "sample.conllu").read_bytes() * 100)
    return path


def _weights(tagger):
    """Every learned number of the model, as bytes."""
    arrays = tagger.model.emit.to_arrays()
    return {name: arrays[name].tobytes() for name in sorted(arrays)}, np.asarray(tagger.model.trans).tobytes()


def _kill(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def kill_after(monkeypatch):
    """``kill_after(epochs, pids)``: once the progress line of each epoch in
    ``epochs`` is written, SIGKILL the processes ``pids()`` names."""
    def arm(epochs, pids):
        line = progress.Progress.line
        killed = []

        def hooked(self, text):
            line(self, text)
            for epoch in epochs:
                if text.startswith(f"epoch {epoch}/"):
                    victims = list(pids())
                    killed.append(victims)
                    _kill(victims)
        monkeypatch.setattr(progress.Progress, "line", hooked)
        return killed
    return arm


def test_workers_killed_while_the_nannies_restart_them(train_file, kill_after):
    """Both workers killed at once after epoch 1, and again after epoch 2
    (the nannies start new ones each time): the same model as undisturbed.
    A LocalCluster closes a nanny whose worker is not back within
    distributed.deploy.lost-worker-timeout (15 s), which a busy host can
    take to start one: here it waits, as training does."""
    patient = {"distributed.deploy.lost-worker-timeout": "10 minutes",
               "distributed.scheduler.no-workers-timeout": "10 minutes"}
    with dask.config.set(patient), \
            dd.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            dd.Client(cluster) as client:
        undisturbed = fasttag.Tagger.train(train_file, epochs=4, verbose=False, client=client)
        killed = kill_after((1, 2), lambda: client.run(os.getpid).values())
        disturbed = fasttag.Tagger.train(train_file, epochs=4, verbose=False, client=client)
    assert len(killed) == 2 and all(killed), killed
    assert disturbed.model.training_info["workers"] == 2
    assert "interrupted_at_epoch" not in disturbed.model.training_info
    assert _weights(disturbed) == _weights(undisturbed)


@pytest.fixture
def lone_workers(cli_command, tmp_path_factory):
    """A scheduler and two worker processes without nannies (nothing starts
    them again): ``(address, client, pids)``.  They run outside the
    checkout, whose uncompiled fasttag/ would shadow the one under test."""
    command, env = cli_command
    cwd = tmp_path_factory.mktemp("workers")
    with dd.LocalCluster(n_workers=0, processes=True, dashboard_address=None) as cluster, \
            dd.Client(cluster) as client:
        procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address,
                                   "--nthreads", "1", "--no-nanny", "--no-dashboard"],
                                  env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for _ in range(2)]
        try:
            client.wait_for_workers(2, timeout=120)
            yield cluster.scheduler_address, client, [p.pid for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.wait(timeout=60)


def test_all_workers_lost_keeps_the_best_completed_epoch(lone_workers, train_file, kill_after, tmp_path):
    """Every worker killed after epoch 2, none to come back: WorkersLost
    (a TrainingInterrupted, as Ctrl-C raises) carrying the model of epoch 2,
    which saves, loads and equals two epochs of undisturbed training."""
    _, client, pids = lone_workers
    two = fasttag.Tagger.train(train_file, epochs=2, verbose=False, client=client)
    kill_after((2,), lambda: pids)
    with dask.config.set({"distributed.scheduler.no-workers-timeout": PATIENCE}):
        with pytest.raises(fasttag.TrainingInterrupted) as info:
            fasttag.Tagger.train(train_file, epochs=6, verbose=False, client=client)
    exc = info.value
    assert isinstance(exc, fasttag.WorkersLost) and exc.epoch == 3
    assert "lost its workers (none for 3 s, distributed.scheduler.no-workers-timeout)" in exc.reason
    assert "\n" not in str(exc) and "training stopped at epoch 3 because" in str(exc)
    exc.model.save(tmp_path / "kept.ftm")
    info = fasttag.load(tmp_path / "kept.ftm").model.training_info
    assert info["interrupted_at_epoch"] == 3 and info["best_epoch"] == 2 and info["workers"] == 2
    assert info["interrupted_by"] == exc.reason
    assert _weights(fasttag.load(tmp_path / "kept.ftm")) == _weights(two)


def test_cli_all_workers_lost(lone_workers, train_file, cli_command, tmp_path):
    """The command line: exit 130 (interrupted training), one line saying
    why, and the best completed epoch saved to -o.

    The workers die once the command has written its epoch 2 line, but the
    command goes on meanwhile (an epoch here takes milliseconds): the epoch
    it is in when they die is any from 3 on, and it never runs out of
    epochs first."""
    address, _, pids = lone_workers
    command, env = cli_command
    out = tmp_path / "m.ftm"
    env = dict(env, DASK_DISTRIBUTED__SCHEDULER__NO_WORKERS_TIMEOUT=PATIENCE)
    proc = subprocess.Popen(command + ["train", "pos", str(train_file), "-o", str(out), "--scheduler", address,
                                       "--epochs", "100000"], stderr=subprocess.PIPE, env=env, cwd=str(tmp_path))
    watchdog = threading.Timer(300, proc.kill)      # a hung command fails the test, never hangs it
    watchdog.start()
    try:
        seen = []
        for line in proc.stderr:
            seen.append(line.decode())
            if " epoch 2/" in seen[-1]:
                break
        else:
            pytest.fail("no epoch 2 line: " + "".join(seen))
        _kill(pids)
        rest = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 130, rest
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    last = [line for line in rest.splitlines() if not line.startswith("[fasttag pos] epoch ")]
    assert len(last) == 1 and rest.rstrip().endswith(last[0]) and "Traceback" not in rest, rest
    info = fasttag.load(out).model.training_info
    n = info["interrupted_at_epoch"]
    assert n >= 3 and info["best_epoch"] == n - 1
    assert last[0].startswith(f"fasttag: interrupted at epoch {n} because the Dask cluster lost its workers "
                              f"(none for 3 s, distributed.scheduler.no-workers-timeout): saved "), rest
    assert last[0].endswith(f"with the best completed epoch ({n - 1})"), rest


def test_a_cluster_without_workers_yet_is_waited_for(monkeypatch):
    """Workers are counted by asking the scheduler, not the client's cached
    view: a cluster whose worker is still starting is waited for, and one
    where none joins within ``WORKERS_WAIT`` is one clear error."""
    from fasttag.errors import InputError
    from fasttag.model import dask_training
    with dd.LocalCluster(n_workers=0, processes=True, dashboard_address=None) as cluster, \
            dd.Client(cluster) as client:
        monkeypatch.setattr(dask_training, "WORKERS_WAIT", 0.5)
        with pytest.raises(InputError, match=r"^the Dask cluster has no workers \(none joined in 0.5 s\)$"):
            fasttag.Tagger.train(DATA / "sample.conllu", epochs=1, verbose=False, client=client)
        monkeypatch.setattr(dask_training, "WORKERS_WAIT", 120.0)
        cluster.scale(1)            # returns at once: the worker joins while training waits for it
        tagger = fasttag.Tagger.train(DATA / "sample.conllu", epochs=1, verbose=False, client=client)
        assert tagger.model.training_info["workers"] == 1
