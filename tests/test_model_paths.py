"""What a model argument means: a bundled name is always the bundled
model (a file of that name in the working directory does not replace it),
a path is a path, and only a regular file is read as a model (a named
pipe is refused at once, never waited on), in every way a model is
loaded: fasttag.load, the command line, spaCy and NLTK."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fasttag
from fasttag import Tagger

PACKAGE_ROOT = Path(fasttag.__file__).resolve().parents[1]     # the fasttag under test (installed or built)
DATA = Path(__file__).resolve().parents[1] / "data"
TEXT = b"I saw her duck.\n"
TAGGED = ["I/PRON", "saw/VERB", "her/PRON", "duck/NOUN", "./PUNCT"]
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes (os.mkfifo)")


@pytest.fixture
def impostors(tmp_path):
    """A folder holding files named like the bundled models: each a copy
    of the bundled Chinese segmenter (the wrong model for any of them)."""
    for name in ("en", "en-tok", "en-ner", "zh"):
        shutil.copy(fasttag.default_model_path("zh"), tmp_path / name)
    return tmp_path


# ---------------------------------------------------------------- bundled names

def test_a_bundled_name_is_the_bundled_model_whatever_the_working_directory_holds(impostors, monkeypatch):
    monkeypatch.chdir(impostors)
    for name in ("en", "en-tok", "en-ner"):
        model = fasttag.load(name)
        assert model.kind != "segmenter", name
        assert model.to_bytes() == fasttag.default_model_path(name).read_bytes()
    assert fasttag.load("./en").kind == "segmenter"                  # a path is a path
    assert fasttag.load(Path("en")).kind == "segmenter"
    assert fasttag.load(str(impostors / "en")).kind == "segmenter"


def test_the_command_line_takes_bundled_names_as_the_bundled_models(run_cli, impostors):
    r = run_cli("tag", "-m", "en", "--tokenizer", "en-tok", input=TEXT, cwd=impostors)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split() == TAGGED
    r = run_cli("tag", "-m", "./en", input=TEXT, cwd=impostors)
    assert r.returncode == 2 and b"segmenter" in r.stderr
    r = run_cli("inspect", "en", cwd=impostors)
    assert r.returncode == 0 and b"kind              tagger" in r.stdout


def test_an_unknown_name_says_no_such_file_and_lists_the_bundled_names(run_cli, tmp_path):
    r = run_cli("tag", "-m", "en-US", input=TEXT, cwd=tmp_path)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "en-US" in err and "no such file" in err
    assert all(name in err for name in ("en", "en-tok", "en-ner", "zh")) and "bundled" in err
    with pytest.raises(FileNotFoundError, match="bundled: en, en-tok, en-ner, zh"):
        fasttag.load("en-US")
    r = run_cli("tag", "-m", "models/x.ftm", input=TEXT, cwd=tmp_path)     # a path: no list of names
    assert r.returncode == 2 and b"no such file" in r.stderr and b"bundled" not in r.stderr


def test_the_help_of_m_says_what_a_name_means(run_cli):
    r = run_cli("tag", "--help")
    help_text = " ".join(r.stdout.decode().split())
    assert "bundled" in help_text and "./en" in help_text


def test_spacy_default_component_is_the_bundled_model(impostors, monkeypatch):
    spacy = pytest.importorskip("spacy", reason="spaCy is an optional extra: pip install spacy")
    import fasttag.spacy  # noqa: F401  (registers the factories)
    monkeypatch.chdir(impostors)
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_tagger")                   # config model: "en"
    assert [t.pos_ for t in nlp("I saw her duck .")] == [t.split("/")[1] for t in TAGGED]


# ---------------------------------------------------------------- named pipes

def _run(args, cwd, timeout=60):
    """Run a command that must not block: TimeoutExpired fails the test."""
    env = dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def _refused(proc, fifo):
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "REFUSED" in proc.stdout and str(fifo) in proc.stdout and "not a regular file" in proc.stdout, \
        proc.stdout


@needs_fifo
def test_a_named_pipe_is_refused_by_every_python_loader(tmp_path):
    fifo = tmp_path / "model.ftm"
    os.mkfifo(fifo)
    code = f"""
import fasttag
from fasttag import Tagger
from fasttag.nltk import PerceptronTagger
for load in (fasttag.load, Tagger.load, lambda p: PerceptronTagger(model=p),
             lambda p: Tagger.train([(["a"], ["X"])], init=p)):
    try:
        load({str(fifo)!r})
    except fasttag.ModelFormatError as exc:
        print("REFUSED", exc)
    else:
        print("LOADED")
"""
    pytest.importorskip("nltk", reason="NLTK is an optional extra: pip install nltk")
    proc = _run([sys.executable, "-c", code], tmp_path)
    _refused(proc, fifo)
    assert proc.stdout.count("REFUSED") == 4 and "LOADED" not in proc.stdout


@needs_fifo
def test_a_named_pipe_in_a_spacy_pipeline_folder_is_refused(tmp_path):
    spacy = pytest.importorskip("spacy", reason="spaCy is an optional extra: pip install spacy")
    import fasttag.spacy  # noqa: F401
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_tagger", config={"model": "en"})
    nlp.to_disk(tmp_path / "pipeline")
    fifo = tmp_path / "pipeline" / "fasttag_tagger" / "model.ftm"
    fifo.unlink()
    os.mkfifo(fifo)
    code = f"""
import spacy, fasttag, fasttag.spacy
try:
    spacy.load({str(tmp_path / "pipeline")!r})
except fasttag.ModelFormatError as exc:
    print("REFUSED", exc)
"""
    _refused(_run([sys.executable, "-c", code], tmp_path), fifo)


@needs_fifo
@pytest.mark.parametrize("args, flag", [
    (["tag", "-m", "{fifo}", "{text}"], "-m"),
    (["tag", "--tokenizer", "{fifo}", "{text}"], "--tokenizer"),
    (["inspect", "{fifo}"], "MODEL"),
    (["eval", "{fifo}", "{gold}"], "MODEL"),
    (["train", "pos", "{gold}", "-o", "{out}", "--init", "{fifo}", "--quiet"], "--init"),
])
def test_the_command_line_refuses_a_named_pipe_as_a_model(cli_command, tmp_path, args, flag):
    command, env = cli_command
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    text = tmp_path / "in.txt"
    text.write_bytes(TEXT)
    values = {"fifo": fifo, "text": text, "gold": DATA / "sample.conllu", "out": tmp_path / "out.ftm"}
    proc = subprocess.run(command + [a.format(**values) for a in args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert str(fifo) in proc.stderr and flag in proc.stderr and "not a regular file" in proc.stderr
    assert not (tmp_path / "out.ftm").exists()


def test_a_regular_model_file_still_loads_by_every_path(tmp_path):
    model = Tagger.train([(["the", "dog"], ["DET", "NOUN"])] * 3, epochs=1, verbose=False)
    model.save(tmp_path / "m.ftm")
    assert fasttag.load(tmp_path / "m.ftm").to_bytes() == model.to_bytes()
    assert Tagger.load(str(tmp_path / "m.ftm")).to_bytes() == model.to_bytes()
    with pytest.raises(IsADirectoryError):
        fasttag.load(tmp_path)
