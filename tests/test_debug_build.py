"""The debug build as a memory-safety check.

``FASTTAG_DEBUG=1`` compiles a check before every raw-pointer index of the
compiled core (an index outside its buffer aborts with the C file and line)
and turns Cython's memoryview bounds checks on.  ``python tools/debug_build.py``
(CI's second command) builds such a copy of the checkout in a temporary
folder and runs the test suite against it with FASTTAG_EXPECT_DEBUG_BUILD=1,
so an out-of-bounds index anywhere fails CI; the tests marked
``debug_build_only`` below check that copy and skip in a release build.
The regression tests at the end run under both builds.
"""
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fasttag
from fasttag._core import weights as _core

CHECKOUT = Path(__file__).resolve().parents[1]     # setup.py, sources, tests, data
PKG_ROOT = Path(fasttag.__file__).resolve().parents[1]  # the fasttag under test
EXPECT_DEBUG = os.environ.get("FASTTAG_EXPECT_DEBUG_BUILD", "") not in ("", "0")

debug_build_only = pytest.mark.skipif(
    not _core.DEBUG_BUILD and not EXPECT_DEBUG,
    reason="a release build: python tools/debug_build.py runs these under the debug build")


def _env(root):
    """Environment of a child that imports the fasttag at ``root`` first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("FASTTAG_DEBUG", None)
    return env


def _compiled_modules(root):
    """The compiled modules of the checkout at ``root``: every .pyx under fasttag/."""
    return sorted(".".join(p.relative_to(root).with_suffix("").parts) for p in (root / "fasttag").rglob("*.pyx"))


@debug_build_only
def test_every_compiled_module_is_a_debug_build():
    # FASTTAG_EXPECT_DEBUG_BUILD: a debug run that imported a release build
    # fails here instead of skipping every check
    import importlib
    modules = _compiled_modules(PKG_ROOT)
    assert {"fasttag._core.weights", "fasttag._core.sequence", "fasttag._core.kbest", "fasttag._core.features",
            "fasttag.linear._weights"} <= set(modules)
    assert {m: importlib.import_module(m).DEBUG_BUILD for m in modules} == {m: True for m in modules}


@debug_build_only
def test_memoryview_indices_are_checked_in_the_debug_build():
    # _linear indexes its weights through memoryviews: the debug build's
    # bounds checks must be on there too (no directive of the module may
    # turn them off), so a column past the weights is an IndexError
    from fasttag.linear._weights import csr_scores
    with pytest.raises(IndexError):
        csr_scores(np.array([0, 1], np.int64), np.array([5], np.int64), np.ones(1),
                   np.zeros((2, 2)), np.zeros(2))


# a directive that would switch a check off whatever setup.py says
_OVERRIDE = re.compile(r"(boundscheck|wraparound|initializedcheck)\s*(\(\s*False\s*\)|=\s*False)")


def test_no_module_overrides_the_debug_builds_checks():
    """setup.py decides the bounds, wraparound and initialisation checks for
    every module (on in the debug build, off in the release build): no
    source may switch them off itself, by decorator, ``with`` block or
    directive comment, and setup.py must build every compiled module."""
    sources = sorted((CHECKOUT / "fasttag").rglob("*.pyx")) + sorted((CHECKOUT / "fasttag").rglob("*.pxd"))
    if not sources or not (CHECKOUT / "setup.py").is_file():
        pytest.skip("the sources (setup.py, fasttag/**/*.pyx) are not beside the tests")
    for path in sources:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert not _OVERRIDE.search(line), f"{path.name}:{number} overrides setup.py: {line.strip()}"
    setup_text = (CHECKOUT / "setup.py").read_text(encoding="utf-8")
    for module in _compiled_modules(CHECKOUT):
        assert f'"{module}"' in setup_text, f"setup.py does not build {module}"


def test_the_debug_build_check_is_wired_into_ci():
    """The debug build runs as CI's own command now, not inside README's:
    losing it from .ci/run would lose the memory-safety check silently."""
    ci = CHECKOUT / ".ci" / "run"
    if not ci.is_file():
        pytest.skip("no .ci/run beside the tests")
    assert "tools/debug_build.py" in ci.read_text(encoding="utf-8")


@debug_build_only
def test_an_out_of_range_index_aborts_the_debug_build():
    proc = _run_here("""
from fasttag._core.weights import _debug_probe
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
    assert "fasttag debug build: index 5 outside [0, 3) at fasttag/_core/weights.c:" in proc.stderr


def test_the_release_build_compiles_the_index_check_away():
    if _core.DEBUG_BUILD:
        pytest.skip("a debug build")
    assert _core._debug_probe(5, 3) is None
    assert _core._debug_probe(-1, 0) is None


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
from fasttag._core.weights import WeightTable, AveragedVector
from fasttag._core.kbest import KBest, kbest, mira_epoch
from fasttag._core.sequence import Search, transition_size
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
from fasttag._core.weights import WeightTable
from fasttag._core.kbest import kbest
from fasttag._core.sequence import Search, transition_size
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
