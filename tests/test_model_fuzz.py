"""Fuzzed model files (tests/fuzz_models.py): every mutated file of every
kind must either be rejected with ModelFormatError or load and then work.

The mutations recompute every checksum, so they reach the semantic
validation and the compiled code; each case is loaded and used in a worker
subprocess (each case in its own forked child), so a crash fails the test
instead of killing the run.

The run here is the same on every machine and every run: cases 0 to
FASTTAG_FUZZ_CASES - 1 (default 500, under a minute on two idle cores) of
the fixed seed FASTTAG_FUZZ_SEED (default 1), in FASTTAG_FUZZ_JOBS workers
(default 2); a failing case prints the mutations and the command that
replays it (``python tests/fuzz_models.py --replay 1:INDEX``).  The long run
draws a fresh random seed each time (printed first and last; exit status 1
when any case fails, the failing files kept in DIR):

    python tests/fuzz_models.py --cases 6000 --jobs 2 --out DIR
"""
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fuzz_models as fm       # beside this file: pytest (import mode prepend) puts tests/ on sys.path
from fasttag.errors import ModelFormatError
from fasttag.model import modelfile

SEED = os.environ.get("FASTTAG_FUZZ_SEED", "1")
CASES = int(os.environ.get("FASTTAG_FUZZ_CASES", "500"))
JOBS = int(os.environ.get("FASTTAG_FUZZ_JOBS", "2"))
CHUNK = 100          # cases written to disk at a time


class _Seeds(dict):
    def __repr__(self):           # not the whole dict in a failure report
        return f"<{len(self)} seed models>"


@pytest.fixture(scope="module")
def seeds():
    return _Seeds(fm.build_seeds())


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def workers(seeds, folder):
    warm = fm.warm_file(seeds, folder)
    ws = [fm.Worker(timeout=fm.DEFAULT_TIMEOUT, log_dir=folder, warm=warm) for _ in range(max(1, JOBS))]
    yield ws
    for w in ws:
        w.close()


@pytest.fixture(scope="module")
def worker(workers):
    return workers[0]


def _seed_case(seeds, name, index=0):
    info = seeds[name]
    return {"index": index, "seed": name, "path": info["path"], "loader": info["loader"],
            "family": info["family"], "scale": fm.BUNDLED_SCALE if info.get("bundled") else 1.0}


def _hook(loader, index):
    return {"index": index, "seed": "test", "path": os.devnull, "loader": loader, "family": "pos"}


# ---------------------------------------------------------------- the harness itself

def test_every_seed_model_loads_and_is_used(seeds, workers):
    """The unmutated seeds pass every use step: a failure of a fuzz case is
    then the mutation's doing, not the harness's."""
    kinds = {info["loader"].split(".")[0] for info in seeds.values()}
    families = {info["family"] for info in seeds.values()}
    assert {"fasttag", "linear"} <= kinds and {"pos", "seg", "ner", "chunk", "linear", "tok", "lemma", "morph", "ud",
                                                "features"} <= families
    cases = [_seed_case(seeds, name, 10 ** 6 + i) for i, name in enumerate(sorted(seeds))]
    results = fm.run_cases(cases, workers=workers)
    bad = [(c["seed"], r) for c, r in zip(cases, results) if r["status"] != "ok"]
    assert not bad, bad


def test_every_registered_model_kind_has_a_seed_and_is_in_the_kind_swaps(seeds):
    """A kind fasttag loads that no seed is of is never fuzzed: a new task
    needs a seed builder here (and its uses)."""
    import fasttag.linear           # noqa: F401 -- declares the estimators' kinds
    import fasttag.tasks            # noqa: F401 -- and every task's
    import fasttag.pipeline         # noqa: F401 -- and the pipeline's (not imported by the two above)
    from fasttag.model import registry
    # the kinds fasttag itself declares (a test may declare its own, as test_new_task does)
    kinds = {kind for kind, cls in registry.KINDS.items() if cls.__module__.split(".")[0] == "fasttag"}
    assert {"tagger", "tokenizer", "lemmatizer", "morphologizer", "pipeline", "feature-tagger"} <= kinds
    seeded = {modelfile.read(info["path"])[0].get("kind") for info in seeds.values()}
    assert kinds - seeded == set(), f"kinds without a fuzz seed: {sorted(kinds - seeded)}"
    assert kinds <= set(k for k in fm.KINDS if isinstance(k, str)), "add the kind to the fuzzer's KINDS"


def test_both_tokenizer_engines_are_seeded(seeds):
    engines = {modelfile.read(info["path"])[0]["featurizer"]["name"] for info in seeds.values()
               if modelfile.read(info["path"])[0].get("kind") == "tokenizer"}
    assert engines == {"tokcands", "tokchars"}


def test_the_output_checks_catch_what_a_hostile_model_wrote():
    """The use steps' checks fail on the outputs a bad lemma or expansion once gave."""
    good = "# text = du\n1-2\tdu\t_\t_\t_\t_\t_\t_\t_\t_\n1\tde\tde\tADP\t_\t_\t_\t_\t_\t_\n" \
           "2\tle\tle le\tDET\t_\t_\t_\t_\t_\t_\n\n"
    fm._check_valid_conllu(good, "good")
    for bad in (good.replace("le le", "le\tx"), good.replace("le le", "le\x85"), good.replace("le le", "\udc80"),
                good.replace("le le", ""), good.replace("DET", "D T"), good.replace("2\tle", "3\tle"),
                good.replace("1-2", "1-1"), good.replace("le le", "le\n3\tx\t_\t_\t_\t_\t_\t_\t_\t_")):
        with pytest.raises(fm.UseCheckFailed):
            fm._check_valid_conllu(bad, "bad")
    with pytest.raises(fm.UseCheckFailed):
        fm._check_strings(["de", ""], "words")
    with pytest.raises(fm.UseCheckFailed):
        fm._check_json_lines('{"a": "\udc80"}\n', "json")


@pytest.mark.parametrize("fork", [True, False])
def test_a_case_that_kills_the_worker_is_a_crash_and_the_run_goes_on(seeds, folder, fork):
    ok = _seed_case(seeds, "pos_ud")
    cases = [_hook("test:abort", 1), dict(ok, index=2), _hook("test:segfault", 3), dict(ok, index=4),
             _hook("test:exit", 5), dict(ok, index=6)]
    w = fm.Worker(timeout=30, log_dir=folder, fork=fork)
    try:
        results = [w.run(c) for c in cases]
    finally:
        w.close()
    assert [r["status"] for r in results] == ["crash", "ok"] * 3
    assert results[0]["type"] == "SIGABRT" and "Fatal Python error: Aborted" in results[0]["message"]
    assert results[2]["type"] == "SIGSEGV" and "in _load" in results[2]["stderr"]
    assert results[4]["type"] == "exit status 3"


def test_a_case_past_its_time_is_a_hang_and_the_run_goes_on(seeds, folder):
    """A case that computes past its limit (CPU seconds) is a hang."""
    w = fm.Worker(timeout=2, log_dir=folder)
    try:
        results = [w.run(_hook("test:spin", 1)), w.run(_seed_case(seeds, "seg", 2))]
    finally:
        w.close()
    assert [r["status"] for r in results] == ["hang", "ok"]
    assert "_load" in results[0]["stderr"]        # where it was stuck (faulthandler)


def test_a_slow_case_on_a_busy_machine_is_not_a_hang():
    """The limit counts the CPU seconds a case computes (where /proc tells
    them), so a machine busy with other work does not turn slow cases into
    hangs; a case that only waits is a hang after WALL_FACTOR times its limit."""
    if fm._cpu_seconds(os.getpid()) is None:
        pytest.skip("no /proc: the limit is wall-clock time")
    assert not fm._over_time(os.getpid(), limit=1e6, wall=5e6)         # 5e6 s waited, little computed
    assert fm._over_time(os.getpid(), limit=1e6, wall=1e7 + 1)
    assert fm._over_time(os.getpid(), limit=0.0, wall=0.0)               # computed past a limit of 0


def test_a_late_result_of_an_earlier_case_is_not_taken_for_the_next(folder):
    """A child killed as a hang may have written its result in the second
    the worker gave it to say where it was stuck: that line arrives before
    the next case's and must not be taken for it (it shifted every later
    result by one: files deleted under running cases, hundreds of false
    failures)."""
    w = fm.Worker(log_dir=folder)
    lines = iter(["BEGIN 2", json.dumps({"status": "ok", "index": 1}),
                  json.dumps({"status": "rejected", "index": 2, "message": "bad file"})])

    class Proc:
        stdin = io.BytesIO()

        def poll(self):
            return None
    w.proc = Proc()
    w._readline = lambda timeout: next(lines)
    result = w.run({"index": 2, "path": os.devnull, "loader": "fasttag.loads", "family": "pos"})
    w.proc = None
    assert result["status"] == "rejected" and result["index"] == 2


def test_other_load_exceptions_are_load_errors(worker):
    r = worker.run(_hook("test:raise", 1))
    assert r["status"] == "load-error" and r["type"] == "KeyError" and fm.is_failure(r)


def test_the_writer_reproduces_the_seed_models(seeds):
    """Decoding a seed and writing it again without mutations gives a file
    that reads back to the same header and arrays."""
    for name, info in seeds.items():
        if info.get("bundled"):
            continue
        data = Path(info["path"]).read_bytes()
        again = fm.Draft(*fm.decode(data)).encode()
        h1, a1 = modelfile.loads(data)
        h2, a2 = modelfile.loads(again)
        assert h1 == h2, name
        assert a1.keys() == a2.keys() and all(np.array_equal(a1[k], a2[k]) for k in a1), name


def test_mutated_values_pass_the_checksums(seeds):
    data = Path(seeds["pos_ptb_tagdict_prune"]["path"]).read_bytes()
    d = fm.Draft(*fm.decode(data))
    for entry in d.arrays:
        if entry[0] == "emit.weights":
            entry[1] = entry[1].copy()
            entry[1][0] = np.nan
        if entry[0] == "emit.labels":
            entry[1] = entry[1].astype(np.int32)
            entry[1][-1] = 12345
    d.payload_ops.append(lambda payload, specs: payload.__setitem__(0, payload[0] ^ 0xFF))
    header, arrays = modelfile.loads(d.encode())       # no checksum error
    assert np.isnan(arrays["emit.weights"][0]) and arrays["emit.labels"][-1] == 12345
    with pytest.raises(ModelFormatError):
        import fasttag
        fasttag.loads(d.encode())


def test_no_mutation_is_caught_by_a_checksum(seeds):
    """Whatever the mutations do, the container's checksums hold: a case
    that the container rejects is rejected for what it says, not for a
    stale CRC."""
    for i in range(400):
        case = fm.make_case(seeds, f"checksums:{i}", bundled=False)
        try:
            modelfile.loads(case["data"])
        except Exception as exc:   # noqa: BLE001 -- other failures are the fuzz test's business
            assert "checksum" not in str(exc), (str(exc), case["description"])


def test_cases_are_reproducible(seeds):
    a = fm.make_case(seeds, "same:7")
    b = fm.make_case(seeds, "same:7")
    assert a["data"] == b["data"] and a["description"] == b["description"] and a["seed"] == b["seed"]
    assert fm.make_case(seeds, "same:8")["data"] != a["data"]


# ---------------------------------------------------------------- the fuzz run

def test_fuzzed_model_files_are_rejected_or_work(seeds, workers, folder):
    """Cases 0..CASES-1 of seed SEED (the long mode's cases of that seed):
    none may crash, hang, fail to load with anything but ModelFormatError,
    or load and then fail when used."""
    keep = os.environ.get("FASTTAG_FUZZ_OUT")
    failures = []
    for start in range(0, CASES, CHUNK):
        cases = [fm.make_case(seeds, f"{SEED}:{i}", index=i, folder=folder)
                 for i in range(start, min(CASES, start + CHUNK))]
        results = fm.run_cases(cases, workers=workers)
        for c, r in zip(cases, results):
            if not fm.is_failure(r):
                os.unlink(c["path"])
                continue
            if keep:
                os.makedirs(keep, exist_ok=True)
                c["path"] = shutil.copy(c["path"], os.path.join(keep, f"{c['key']}-{r['status']}.ftm"))
            failures.append((c, r))
    report = "\n".join(fm.describe(c, r) + f"\n  file: {c['path']}" for c, r in failures)
    assert not failures, f"{len(failures)} of {CASES} fuzzed model files (seed {SEED}) failed:\n{report}"


def _fuzz_cli(*args, cwd):
    return subprocess.run([sys.executable, fm.__file__, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=fm._worker_env())


def test_a_replay_writes_its_case_file_in_a_temporary_folder_not_here(tmp_path, seeds):
    here = tmp_path / "here"
    here.mkdir()
    proc = _fuzz_cli("--replay", f"{SEED}:0", cwd=here)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(here.iterdir()) == [], "the replay wrote into the current folder"
    written = Path(proc.stdout.split("written to ", 1)[1].split("\n", 1)[0])
    assert written.is_file() and here not in written.parents
    assert written.read_bytes() == fm.make_case(seeds, f"{SEED}:0")["data"]
    shutil.rmtree(written.parent)
    out = tmp_path / "out"
    proc = _fuzz_cli("--replay", f"{SEED}:1", "--out", str(out), cwd=here)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(here.iterdir()) == [] and [p.name for p in out.iterdir()] == [f"case-{SEED}-1.ftm"]


def test_the_long_mode_prints_its_seed_and_fails_when_a_case_fails(tmp_path, seeds):
    """A fresh seed each run, printed for the replay; exit status 1 when any
    case fails (here every case of a seed cache whose one model 'loads' with
    a test hook that raises KeyError)."""
    here = tmp_path / "here"
    here.mkdir()
    proc = _fuzz_cli("--cases", "0", "--jobs", "1", "--no-bundled", cwd=here)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seed = proc.stdout.split("[fuzz] seed ", 1)[1].split(":", 1)[0]
    assert seed.isdigit() and f"--replay {seed}:" in proc.stdout
    assert f"[fuzz] seed {seed}: 0 cases, 0 failures" in proc.stdout

    cache = tmp_path / "cache"
    (cache / fm._seed_key()).mkdir(parents=True)
    shutil.copy(seeds["pos_ud"]["path"], cache / fm._seed_key() / "m.ftm")
    (cache / fm._seed_key() / "seeds.json").write_text(
        '{"m": {"file": "m.ftm", "family": "pos", "loader": "test:raise", "weight": 1}}')
    proc = _fuzz_cli("--cases", "3", "--jobs", "1", "--no-bundled", "--quiet", "--seed", "7",
                     "--seed-cache", str(cache), "--out", str(tmp_path / "out"), cwd=here)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "[fuzz] seed 7: 3 cases, 3 failures (replay one with --replay 7:INDEX)" in proc.stdout
    assert list(here.iterdir()) == []
    assert len(list((tmp_path / "out").glob("case-*-load-error.ftm"))) == 3
