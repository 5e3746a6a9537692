"""Shared fixtures: the real corpora beside the repository, when present.

Before anything, a check that the fasttag these tests import has its
compiled modules: run from a source tree that was never built, pytest
stops with one message saying what to do instead of an ImportError in
every test file.

Hypothesis runs without its per-example deadline: a property holds or
fails whatever the machine's load (speed lives in benchmarks/).
"""
from pathlib import Path

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:         # the tests that need it skip
    pass
else:
    settings.register_profile("fasttag", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("fasttag")


def pytest_configure(config):
    """Stop with one message when fasttag cannot be imported with its
    compiled modules (a source tree that was never built)."""
    try:
        import fasttag
    except ImportError as exc:
        raise pytest.UsageError(f"cannot import fasttag ({exc}): install it (pip install .) or build it "
                                f"in place (python setup.py build_ext --inplace)") from None
    try:
        import fasttag._core.weights  # noqa: F401  (compiled)
        import fasttag._core.sequence  # noqa: F401
    except ImportError as exc:
        where = Path(fasttag.__file__).resolve().parent
        raise pytest.UsageError(
            f"the fasttag package at {where} has no usable compiled modules ({exc}). Build them in place "
            f"with 'python setup.py build_ext --inplace' (or 'pip install -e .'), or run pytest from "
            f"outside the source tree to test an installed fasttag") from None

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data():
    """The folder of real corpora; tests that need it skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real corpora not found at {SHARED_DATA} (../shared/data beside the repo)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def cli_command():
    """``(command, env)``: the real ``fasttag`` console script (``python -m
    fasttag`` where it is not installed) and an environment in which it
    runs the fasttag package these tests import."""
    import os
    import shutil
    import sys

    import fasttag

    package_root = Path(fasttag.__file__).resolve().parent.parent
    script = shutil.which("fasttag")
    command = [script] if script else [sys.executable, "-m", "fasttag"]
    return command, dict(os.environ, PYTHONPATH=str(package_root))


@pytest.fixture(scope="session")
def run_cli(cli_command):
    """Run the real ``fasttag`` console script (see ``cli_command``) in a
    folder outside the source tree.  Returns the CompletedProcess."""
    import subprocess

    import fasttag

    command, env = cli_command
    package_root = Path(fasttag.__file__).resolve().parent.parent

    def run(*args, input=None, cwd=None):
        return subprocess.run(command + [str(a) for a in args], input=input, capture_output=True,
                              cwd=cwd or package_root, env=env, timeout=300)
    return run


@pytest.fixture
def dev_copy(tmp_path):
    """``dev_copy(path) -> Path``: a byte copy of ``path`` under another
    name, for tests that train with the training data as dev data.
    Training refuses a dev file that is the training file itself (the same
    file, however named), not one with the same content: these tests are
    not about held-out data, so the same sentences under another name
    keep what they check."""
    import shutil

    def copy(path):
        path = Path(path)
        dev = tmp_path / f"dev-copy-of-{path.name}"
        if not dev.exists():
            shutil.copyfile(path, dev)
        return dev
    return copy


@pytest.fixture
def interrupted_fit():
    """``fit(at_call, **options) -> (task model, TrainingInterrupted)``:
    a POS model of ``data/sample.conllu`` trained again through
    :func:`fasttag.model.training.fit`, with a dev scorer that raises
    KeyboardInterrupt (Ctrl-C) on its ``at_call``-th call (once per
    epoch) and scores 0.5 before."""
    from fasttag import Tagger
    from fasttag.model import training as trainer
    from fasttag.errors import TrainingInterrupted

    sample = Path(__file__).resolve().parents[1] / "data" / "sample.conllu"

    def fit(at_call, **options):
        model = Tagger.train(sample, epochs=1, verbose=False)
        data = model._encode(model._read(sample, {"format": None, "column": None, "word_column": 0},
                                         "training data"), training=True)
        calls = []

        def evaluate(pred):
            calls.append(1)
            if len(calls) == at_call:
                raise KeyboardInterrupt
            return 0.5
        with pytest.raises(TrainingInterrupted) as info:
            trainer.fit(model.model, data, data, evaluate=evaluate, verbose=False, **options)
        return model, info.value
    return fit


@pytest.fixture(scope="session")
def foreign_flags():
    """``foreign(argv, message) -> list``: the ``--flags`` an error
    ``message`` of the command line ``argv`` names that its command does
    not have.  A flag inside a quoted ``'fasttag CMD ...'`` belongs to
    CMD; argparse's own complaints (an unknown option, a bad choice)
    repeat what the user typed and are not checked."""
    import argparse
    import re

    from fasttag.cli import build_parser

    def children(parser):
        return {name: p for action in parser._actions if isinstance(action, argparse._SubParsersAction)
                for name, p in action.choices.items()}

    root = build_parser()
    parsers = {}
    for name, p in children(root).items():
        parsers[name] = p
        for task, q in children(p).items():
            parsers[f"{name} {task}"] = q

    def command_of(words):
        words = [w for w in words if not str(w).startswith("-")][:2]
        for n in (2, 1):
            key = " ".join(map(str, words[:n]))
            if key in parsers:
                return key
        return None

    flag = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")

    def foreign(argv, message):
        if "unrecognized arguments" in message or "invalid choice" in message or "argument " in message:
            return []
        out = []
        quoted = re.compile(r"'fasttag ([^']*)'")
        for m in quoted.finditer(message):
            words = m.group(1).split()
            command = command_of(words)
            known = root.flags if command is None else parsers[command].flags
            if command is None and words and not words[0].startswith("-"):
                out.append(f"unknown command in {m.group()}")
            out += [f for f in flag.findall(m.group(1)) if f not in known]
        command = command_of(argv)
        rest = quoted.sub("", message)
        flags = root.flags if command is None else parsers[command].flags
        out += [f for f in flag.findall(rest) if f not in flags]
        return out
    return foreign


@pytest.fixture(scope="session")
def reload_corrupted():
    """``reload(model, corrupt)``: ``model``'s file loaded again by its class
    after ``corrupt(header, arrays)`` has changed its parts in place."""
    from fasttag.model import modelfile

    def reload(model, corrupt):
        header, arrays = modelfile.loads(model.to_bytes())
        header.pop("arrays", None)
        corrupt(header, arrays)
        return type(model).from_bytes(modelfile.dumps(header, arrays))
    return reload
