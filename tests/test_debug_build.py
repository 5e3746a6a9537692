"""The debug build as a memory-safety check.

``FASTTAG_DEBUG=1`` compiles a check before every raw-pointer index of the
compiled core (an index outside its buffer aborts with the C file and line)
and turns Cython's memoryview bounds checks on.  The tests below build such a
copy of the package in a temporary folder and run the tests of the compiled
code under it, so an out-of-bounds index anywhere fails CI.

They skip themselves under a debug build (the copy runs this file too: no
recursion) and when FASTTAG_SKIP_DEBUG_BUILD is set (quick local runs).  The
regression tests at the end run under both builds.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fasttag
from fasttag import _core

CHECKOUT = Path(__file__).resolve().parents[1]     # setup.py, sources, tests, data
PKG_ROOT = Path(fasttag.__file__).resolve().parents[1]  # the fasttag under test

# Under the debug copy run every test file but the pure-Python ones (nothing
# for the debug build to check there), in two processes side by side (CI has
# two cores): the two longest files, and the rest.  Files added later run in
# the second without a change here.  Tests of the real corpora skip in the
# copy (../shared/data is not beside it); this file's build tests skip there,
# its regression tests run.
PURE_PYTHON = ["tests/test_io.py", "tests/test_normalize.py", "tests/test_metrics_segmentation.py"]
LONGEST = ["tests/test_model_fuzz.py", "tests/test_linear_safety.py"]
# the model-file fuzzer at a sixth of its size: the release run fuzzes in full
FUZZ_CASES = "80"

needs_debug_copy = pytest.mark.skipif(
    _core.DEBUG_BUILD or os.environ.get("FASTTAG_SKIP_DEBUG_BUILD", "") not in ("", "0"),
    reason="already a debug build, or FASTTAG_SKIP_DEBUG_BUILD is set")


def _env(root):
    """Environment of a child that imports the fasttag at ``root`` first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("FASTTAG_DEBUG", None)
    return env


@pytest.fixture(scope="module")
def debug_copy(tmp_path_factory):
    """A copy of the checkout with the extensions built by FASTTAG_DEBUG=1."""
    if not (CHECKOUT / "setup.py").is_file() or not (CHECKOUT / "fasttag" / "_core.pyx").is_file():
        pytest.skip("the sources (setup.py, fasttag/*.pyx) are not beside the tests")
    for module in ("Cython", "setuptools", "numpy"):
        try:
            __import__(module)
        except ImportError:
            pytest.skip(f"{module} is needed to build the debug copy")
    root = tmp_path_factory.mktemp("debug-build")
    # sources only: a stale release .c or .so must not be reused
    shutil.copytree(CHECKOUT / "fasttag", root / "fasttag",
                    ignore=shutil.ignore_patterns("*.c", "*.so", "*.pyd", "__pycache__", "build"))
    shutil.copytree(CHECKOUT / "tests", root / "tests",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(CHECKOUT / "data", root / "data")
    if (CHECKOUT / "tools").is_dir():         # the model-file fuzzer of test_model_fuzz.py
        shutil.copytree(CHECKOUT / "tools", root / "tools",
                        ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("setup.py", "pyproject.toml", "README.md"):    # (the readme: project metadata)
        if (CHECKOUT / name).is_file():
            shutil.copy2(CHECKOUT / name, root / name)
    env = _env(root)
    env["FASTTAG_DEBUG"] = "1"
    jobs = str(max(1, min(os.cpu_count() or 1, 4)))
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q", "-j", jobs],
                          cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"debug build failed\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    print(f"debug build: {time.perf_counter() - t0:.0f} s")
    return root


def _run(root, code):
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=_env(root),
                          capture_output=True, text=True, timeout=120)


def _compiled_modules(root):
    """The compiled modules of the checkout at ``root``: fasttag/_*.pyx."""
    return sorted("fasttag." + p.stem for p in (root / "fasttag").glob("_*.pyx"))


@needs_debug_copy
def test_the_copy_is_a_debug_build(debug_copy):
    modules = _compiled_modules(debug_copy)
    assert {"fasttag._core", "fasttag._sequence", "fasttag._kbest", "fasttag._features",
            "fasttag._linear"} <= set(modules)
    proc = _run(debug_copy, f"""
import importlib
import fasttag
print(fasttag.__file__)
print([importlib.import_module(m).DEBUG_BUILD for m in {modules!r}])
""")
    assert proc.returncode == 0, proc.stderr
    where, flags = proc.stdout.splitlines()
    assert Path(where).resolve().is_relative_to(debug_copy.resolve())
    assert flags == repr([True] * len(modules))


@needs_debug_copy
def test_memoryview_indices_are_checked_in_the_debug_build(debug_copy):
    # _linear indexes its weights through memoryviews: the debug build's
    # bounds checks must be on there too (no directive of the module may
    # turn them off), so a column past the weights is an IndexError
    proc = _run(debug_copy, """
import numpy as np
from fasttag._linear import csr_scores
try:
    csr_scores(np.array([0, 1], np.int64), np.array([5], np.int64), np.ones(1),
               np.zeros((2, 2)), np.zeros(2))
    print("NOT CHECKED")
except IndexError:
    print("CHECKED")
""")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "CHECKED"


# a directive that would switch a check off whatever setup.py says
_OVERRIDE = re.compile(r"(boundscheck|wraparound|initializedcheck)\s*(\(\s*False\s*\)|=\s*False)")


def test_no_module_overrides_the_debug_builds_checks():
    """setup.py decides the bounds, wraparound and initialisation checks for
    every module (on in the debug build, off in the release build): no
    source may switch them off itself, by decorator, ``with`` block or
    directive comment, and setup.py must build every compiled module."""
    sources = sorted((CHECKOUT / "fasttag").glob("_*.pyx")) + sorted((CHECKOUT / "fasttag").glob("_*.pxd"))
    if not sources or not (CHECKOUT / "setup.py").is_file():
        pytest.skip("the sources (setup.py, fasttag/*.pyx) are not beside the tests")
    for path in sources:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert not _OVERRIDE.search(line), f"{path.name}:{number} overrides setup.py: {line.strip()}"
    setup_text = (CHECKOUT / "setup.py").read_text(encoding="utf-8")
    for module in _compiled_modules(CHECKOUT):
        assert f'"{module}"' in setup_text, f"setup.py does not build {module}"


@needs_debug_copy
def test_an_out_of_range_index_aborts_the_debug_build(debug_copy):
    proc = _run(debug_copy, """
from fasttag._core import _debug_probe
_debug_probe(0, 1)           # in range: returns
print("IN RANGE OK", flush=True)
_debug_probe(5, 3)
print("NOT REACHED")
""")
    if os.name == "posix":
        assert proc.returncode == -signal.SIGABRT, (proc.returncode, proc.stdout, proc.stderr)
    else:
        assert proc.returncode != 0, (proc.returncode, proc.stdout, proc.stderr)
    assert "IN RANGE OK" in proc.stdout and "NOT REACHED" not in proc.stdout
    assert "fasttag debug build: index 5 outside [0, 3) at fasttag/_core.c:" in proc.stderr
    # the release build compiles the check away
    assert _core._debug_probe(5, 3) is None
    assert _core._debug_probe(-1, 0) is None


@needs_debug_copy
def test_the_compiled_code_tests_pass_under_the_debug_build(debug_copy):
    # Cython reports an out-of-bounds memoryview index in a noexcept function
    # as "unraisable" and goes on: make that an error too
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "-W", "error::pytest.PytestUnraisableExceptionWarning"]
    longest = [f for f in LONGEST if (debug_copy / f).is_file()]
    if longest and (os.cpu_count() or 1) > 1:
        groups = [longest, ["tests"] + [f"--ignore={f}" for f in PURE_PYTHON + longest]]
    else:
        groups = [["tests"] + [f"--ignore={f}" for f in PURE_PYTHON]]
    env = _env(debug_copy)
    env.setdefault("FASTTAG_FUZZ_CASES", FUZZ_CASES)
    t0 = time.perf_counter()
    procs = [subprocess.Popen(args + group, cwd=debug_copy, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for group in groups]
    outs = []
    try:
        for proc in procs:
            outs.append(proc.communicate(timeout=900)[0])
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    summaries = [out.strip().splitlines()[-1] if out.strip() else "(no output)" for out in outs]
    print(f"tests under the debug build: {time.perf_counter() - t0:.0f} s: {'; '.join(summaries)}")
    for proc, out in zip(procs, outs):
        assert proc.returncode == 0, f"exit {proc.returncode}\n{out[-6000:]}"


# ---------------------------------------------------------------- regressions
# Out-of-bounds accesses the debug build found; they run under both builds
# (in a subprocess, as the release build may crash or corrupt memory).

def _run_here(code):
    # cwd: not the source checkout, whose uncompiled fasttag/ would shadow the one under test
    return subprocess.run([sys.executable, "-c", code], cwd=PKG_ROOT, env=_env(PKG_ROOT),
                          capture_output=True, text=True, timeout=120)


def test_a_search_refuses_an_emission_table_trained_past_its_tags():
    # Search checked the table's labels when made; a table trained further
    # (labels >= T) then made scoring write past the T scores of a token
    proc = _run_here("""
import numpy as np
from fasttag._core import WeightTable, AveragedVector
from fasttag._kbest import KBest, kbest, mira_epoch
from fasttag._sequence import Search, transition_size
T = 4
emit = WeightTable()
emit.update(np.array([1, 2], np.uint64), 1, 1.0, 1)
trans = AveragedVector(transition_size(T))
search = Search(emit, trans, T)
emit.update(np.array([1], np.uint64), 50, 1.0, 2)
keys = np.array([[1, 2], [2, 1]], np.uint64)
bounds = np.array([0, 2], np.int64)
gold = np.zeros(2, np.int32)
order = np.zeros(1, np.int64)
calls = {
    "decode": lambda: search.decode(keys, bounds),
    "train_epoch": lambda: search.train_epoch(trans, keys, bounds, gold, order, 2),
    "kbest": lambda: kbest(search, keys, bounds, 3),
    "mira_epoch": lambda: mira_epoch(search, trans, keys, bounds, gold, order, 2, k=2),
    "mira_step": lambda: KBest(search, 2).mira_step(trans, keys, gold, 3),
}
for name, call in calls.items():
    try:
        call()
        print(name, "RAN")
    except ValueError as exc:
        assert "labels up to 50 for 4 tags" in str(exc), exc
        print(name, "REFUSED")
""")
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr[-3000:])
    assert proc.stdout.split() == ["decode", "REFUSED", "train_epoch", "REFUSED", "kbest", "REFUSED",
                                   "mira_epoch", "REFUSED", "mira_step", "REFUSED"]


def test_pruning_keeps_a_candidate_when_scores_are_nan():
    # Finite float64 weights of +-1e300 become +-inf in the float32 scoring
    # copy: inf - inf = NaN scores, whose k-th largest selected no tag, and
    # the decoders then read candidates that were never written
    proc = _run_here("""
import numpy as np
from fasttag._core import WeightTable
from fasttag._kbest import kbest
from fasttag._sequence import Search, transition_size
T = 5
emit = WeightTable.from_arrays(np.array([7, 8], np.uint64), np.array([T, T], np.uint32),
                               np.tile(np.arange(T, dtype=np.int32), 2),
                               np.repeat([1e300, -1e300], T), T)
assert np.isnan(emit.score(np.array([7, 8], np.uint64))).all()
rng = np.random.default_rng(0)
trans = rng.normal(size=transition_size(T))
keys = np.array([[7, 8]] * 6, np.uint64)
bounds = np.array([0, 2, 6], np.int64)
for prune_k in (1, 2):
    search = Search(emit, trans, T, prune_k=prune_k)
    for greedy in (False, True):
        tags = search.decode(keys, bounds, greedy=greedy)
        assert tags.shape == (6,) and tags.min() >= 0 and tags.max() < T, tags
    for rows in kbest(search, keys, bounds, 3):
        assert rows and all(t.min() >= 0 and t.max() < T for _, t in rows)
print("OK")
""")
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr[-3000:])
    assert proc.stdout.strip() == "OK"
