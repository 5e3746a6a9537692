"""Shared fixtures: the real corpora beside the repository, when present."""
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data():
    """The folder of real corpora; tests that need it skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real corpora not found at {SHARED_DATA} (../shared/data beside the repo)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def run_cli():
    """Run the real ``fasttag`` console script (``python -m fasttag`` where
    it is not installed) on the fasttag package these tests import, in a
    folder outside the source tree.  Returns the CompletedProcess."""
    import os
    import shutil
    import subprocess
    import sys

    import fasttag

    package_root = Path(fasttag.__file__).resolve().parent.parent
    script = shutil.which("fasttag")
    command = [script] if script else [sys.executable, "-m", "fasttag"]
    env = dict(os.environ, PYTHONPATH=str(package_root))

    def run(*args, input=None, cwd=None):
        return subprocess.run(command + [str(a) for a in args], input=input, capture_output=True,
                              cwd=cwd or package_root, env=env, timeout=300)
    return run
