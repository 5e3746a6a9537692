"""Dev data must be held out: training refuses a dev file that is the
training file itself, however it is named (another spelling of the path, a
symbolic link, standard input read from it).  The same content under
another name is the caller's choice and is not refused."""
import shutil
import subprocess
from pathlib import Path

import pytest

import fasttag
from fasttag.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data"
#: task -> (its training file, its Python class)
TASKS = {"pos": ("sample.conllu", fasttag.Tagger), "ud": ("sample_ud.conllu", fasttag.Pipeline),
         "seg": ("sample_zh_train.txt", fasttag.Segmenter)}


@pytest.fixture
def train_file(tmp_path):
    """``train_file(task) -> Path``: the task's sample in ``tmp_path``, with a
    symbolic link ``link-NAME`` to it where links can be made."""
    def make(task):
        path = tmp_path / TASKS[task][0]
        shutil.copyfile(DATA / TASKS[task][0], path)
        try:
            (tmp_path / f"link-{path.name}").symlink_to(path.name)
        except OSError:
            pass
        return path
    return make


def _spellings(path):
    """(train, dev) spellings of the same file, relative to ``path``'s folder."""
    name = path.name
    yield "same path", name, name
    yield "relative and absolute", name, str(path)
    yield "dotted", f"./{name}", f"../{path.parent.name}/{name}"
    if (path.parent / f"link-{name}").is_symlink():
        yield "symbolic link", name, f"link-{name}"


@pytest.mark.parametrize("task", sorted(TASKS))
def test_the_command_line_refuses_the_training_file_as_dev(run_cli, train_file, task):
    path = train_file(task)
    out = path.parent / "m.ftm"
    for how, train, dev in _spellings(path):
        r = run_cli("train", task, train, "--dev", dev, "-o", out, "--epochs", "1", cwd=path.parent)
        err = r.stderr.decode()
        assert r.returncode == 2, (how, err)
        assert len(err.splitlines()) == 1, (how, err)
        assert err.startswith("fasttag: error: --dev names the training file ("), (how, err)
        assert "held-out" in err and "Traceback" not in err, (how, err)
        assert not out.exists(), how            # refused before any work


def test_the_command_line_refuses_dev_that_standard_input_reads(run_cli, cli_command, train_file):
    path = train_file("pos")
    # TRAIN '-' from a pipe: the dev file is another file
    r = run_cli("train", "pos", "-", "--dev", path, "-o", path.parent / "piped.ftm", "--epochs", "1",
                "--quiet", input=path.read_bytes())
    assert r.returncode == 0, r.stderr
    # standard input redirected from the dev file itself
    command, env = cli_command
    with open(path, "rb") as f:
        r = subprocess.run(command + ["train", "pos", "-", "--dev", path.name, "-o", "m.ftm", "--epochs", "1"],
                           stdin=f, capture_output=True, cwd=path.parent, env=env, timeout=300)
    err = r.stderr.decode()
    assert r.returncode == 2 and "--dev names the training file" in err and "standard input" in err, err
    assert not (path.parent / "m.ftm").exists()


def test_a_copy_of_the_training_file_is_dev_data(run_cli, train_file):
    """The check is about the file, not its content."""
    path = train_file("pos")
    copy = path.parent / "copy.conllu"
    shutil.copyfile(path, copy)
    r = run_cli("train", "pos", path, "--dev", copy, "-o", path.parent / "m.ftm", "--epochs", "1", "--quiet")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("task", sorted(TASKS))
def test_python_refuses_the_training_file_as_dev(train_file, task, monkeypatch):
    path = train_file(task)
    cls = TASKS[task][1]
    monkeypatch.chdir(path.parent)
    for how, train, dev in _spellings(path):
        for given in (dev, Path(dev)):
            with pytest.raises(InputError, match=r"^option dev names the training file \(.*held-out data"):
                cls.train(train, dev=given, epochs=1, verbose=False)
    with open(path, "rb") as f:         # an open file of the same file
        with pytest.raises(InputError, match="option dev names the training file"):
            cls.train(str(path), dev=f, epochs=1, verbose=False)
