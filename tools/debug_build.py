#!/usr/bin/env python3
"""The debug build as a memory-safety check: CI's second command.

``FASTTAG_DEBUG=1`` compiles a check before every raw-pointer index of the
compiled core (an index outside its buffer aborts with the C file and line)
and turns Cython's memoryview bounds checks on.  This script copies the
checkout's sources into a temporary folder, builds them there that way and
runs the test suite against that copy, so an out-of-bounds index anywhere
fails CI.  It is a command of its own, not a test, so that README's test
command stays short::

    python tools/debug_build.py            # from the checkout's root
    python tools/debug_build.py --keep DIR # build in DIR and keep it

Exit status: 0 when the build and every test passed, 1 otherwise.  The
tests that only make sense under the debug build (``tests/test_debug_build.py``)
run there because ``FASTTAG_EXPECT_DEBUG_BUILD=1`` is set; a release build
skips them.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
# nothing for the debug build to check in the pure-Python tests
PURE_PYTHON = ["tests/test_io.py", "tests/test_normalize.py", "tests/test_metrics_segmentation.py",
               "tests/test_install_hints.py"]
FUZZ_CASES = "80"     # the model-file fuzzer at a sixth of README's run: the release run fuzzes in full


def _copy_sources(root: Path) -> None:
    """Sources only: a stale release .c or .so must not be reused."""
    skip = shutil.ignore_patterns("*.c", "*.so", "*.pyd", "__pycache__", "build", ".hypothesis")
    for folder in ("fasttag", "tests", "data"):
        if (CHECKOUT / folder).is_dir():
            shutil.copytree(CHECKOUT / folder, root / folder, ignore=skip)
    for name in ("setup.py", "pyproject.toml", "README.md"):
        if (CHECKOUT / name).is_file():
            shutil.copy2(CHECKOUT / name, root / name)


def _env(root: Path, debug: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("FASTTAG_DEBUG", None)
    if debug:
        env["FASTTAG_DEBUG"] = "1"
    return env


def build(root: Path) -> None:
    jobs = str(max(1, min(os.cpu_count() or 1, 4)))
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q", "-j", jobs],
                          cwd=root, env=_env(root, debug=True), capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"debug build failed\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    print(f"debug build: {time.perf_counter() - t0:.0f} s", flush=True)


def run_tests(root: Path) -> bool:
    # Cython reports an out-of-bounds memoryview index in a noexcept function
    # as "unraisable" and goes on: make that an error too.  pytest-xdist
    # spreads the files over the cores (pyproject's addopts).
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "-W", "error::pytest.PytestUnraisableExceptionWarning", "tests"]
    args += [f"--ignore={f}" for f in PURE_PYTHON]
    env = _env(root, debug=False)
    env["FASTTAG_EXPECT_DEBUG_BUILD"] = "1"
    env.setdefault("FASTTAG_FUZZ_CASES", FUZZ_CASES)
    t0 = time.perf_counter()
    proc = subprocess.run(args, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.strip()
    print(f"under the debug build: {out.splitlines()[-1] if out else '(no output)'}")
    if proc.returncode != 0:
        print(out[-8000:])
    print(f"tests under the debug build: {time.perf_counter() - t0:.0f} s", flush=True)
    return proc.returncode == 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", metavar="DIR", type=Path,
                        help="build in DIR (made, must not exist) and keep it; default: a temporary folder")
    args = parser.parse_args(argv)
    if args.keep is not None:
        if args.keep.exists():
            parser.error(f"--keep: {args.keep} exists")
        args.keep.mkdir(parents=True)
        root = args.keep
        _copy_sources(root)
        build(root)
        return 0 if run_tests(root) else 1
    with tempfile.TemporaryDirectory(prefix="fasttag-debug-build-") as tmp:
        root = Path(tmp) / "checkout"      # no ../shared beside it: the corpus tests skip
        root.mkdir()
        _copy_sources(root)
        build(root)
        return 0 if run_tests(root) else 1


if __name__ == "__main__":
    sys.exit(main())
