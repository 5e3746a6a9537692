"""A model file may come from anyone: its strings (corpus, licence,
training info, tag names, templates) reach the terminal escaped, and what
an error message quotes of them is capped."""
import json
from pathlib import Path

import pytest

from fasttag import Tagger

from fasttag.model import modelfile
from fasttag.display import cut, printable, quote

DATA = Path(__file__).resolve().parent.parent / "data"
TRAIN = [(["the", "dog", "runs"], ["DET", "NOUN", "VERB"])] * 5
TITLE = "\x1b]0;owned\x07"               # sets the terminal window's title
CLEAR = "\x1b[2J\x1b[H"                  # clears the screen
RLO = "\u202e"                           # right-to-left override: reorders what follows
RAW = [TITLE, CLEAR, RLO, "\x1b", "\x07", "\x9b"]


def assert_no_raw(*outputs):
    """No control or format character of a model's reaches the terminal
    as is (only line ends)."""
    for text in outputs:
        text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        bad = [ch for ch in text if not ch.isprintable() and ch != "\n"]
        assert not bad, (bad[:5], text[-500:])


def test_printable_escapes_what_a_terminal_would_obey():
    assert printable("NOUN") == "NOUN"
    assert printable(TITLE) == "\\x1b]0;owned\\x07"
    assert printable(f"a{RLO}b\tc\n") == "a\\u202eb\\x09c\\x0a"
    assert printable("a\nb\x1b", keep="\n") == "a\nb\\x1b"
    assert printable("\udcff") == "\\udcff"                     # a lone surrogate (undecodable byte)
    assert printable("\U000e0001") == "\\U000e0001"
    assert printable("naïve 中文 ü") == "naïve 中文 ü"
    assert_no_raw(*(printable(s) for s in RAW))


def test_quote_caps_a_long_value():
    long = "x" * 2_000_000
    assert quote("NOUN") == "'NOUN'"
    shown = quote(long)
    assert len(shown) < 100 and shown.startswith("'xxx") and "2,000,002 characters" in shown
    assert len(quote(CLEAR * 1000, limit=30)) < 70
    assert_no_raw(quote(TITLE + RLO))
    assert cut("abc", 10) == "abc"


@pytest.fixture(scope="module")
def evil_meta(tmp_path_factory):
    """A tagger whose corpus and licence carry escape sequences."""
    path = tmp_path_factory.mktemp("evil") / "meta.ftm"
    Tagger.train(TRAIN, epochs=1, verbose=False, corpus=f"UD {TITLE}{CLEAR}", licence=f"CC {RLO}BY").save(path)
    return path


def _rewritten(path, out, header=None):
    """The model at ``path`` with header entries replaced, saved as ``out``."""
    h, a = modelfile.read(path)
    h.update(header or {})
    modelfile.write(out, h, a)
    return out


def test_inspect_escapes_the_models_strings(run_cli, evil_meta):
    r = run_cli("inspect", evil_meta)
    assert r.returncode == 0, r.stderr
    assert_no_raw(r.stdout, r.stderr)
    out = r.stdout.decode()
    assert "corpus            UD \\x1b]0;owned\\x07\\x1b[2J\\x1b[H" in out
    assert "licence           CC \\u202eBY" in out
    r = run_cli("inspect", evil_meta, "--json")                   # JSON escapes them its own way
    assert r.returncode == 0 and json.loads(r.stdout)["meta"]["corpus"] == f"UD {TITLE}{CLEAR}"
    assert b"\x1b" not in r.stdout


def test_tag_names_and_training_info_never_reach_the_terminal_raw(run_cli, evil_meta, tmp_path):
    h, _ = modelfile.read(evil_meta)
    tags = [t if t != "NOUN" else f"NOUN{CLEAR}" for t in h["tags"]]
    training = dict(h["training"], seed=f"3{TITLE}")
    model = _rewritten(evil_meta, tmp_path / "tags.ftm", {"tags": tags, "training": training})
    r = run_cli("inspect", model)
    assert_no_raw(r.stdout, r.stderr)                # escaped, or the model refused in one line
    if r.returncode == 0:
        assert "NOUN\\x1b[2J\\x1b[H" in r.stdout.decode()
    else:
        assert r.returncode == 2 and r.stderr.count(b"\n") == 1
    (tmp_path / "in.txt").write_text("the dog runs\n")
    r = run_cli("tag", "-m", model, "--pretokenized", tmp_path / "in.txt")
    assert_no_raw(r.stdout, r.stderr)
    if r.returncode == 0:
        assert r.stdout.decode().split() == ["the/DET", "dog/NOUN\\x1b[2J\\x1b[H", "runs/VERB"]


def test_an_error_quoting_a_long_template_is_one_short_line(run_cli, evil_meta, tmp_path):
    h, _ = modelfile.read(evil_meta)
    template = CLEAR + "a" * 2_000_000 + "[0]"
    model = _rewritten(evil_meta, tmp_path / "long.ftm", {"templates": h["templates"] + [template]})
    r = run_cli("tag", "-m", model, "--pretokenized", DATA / "sample.conll")
    assert r.returncode == 2
    assert r.stderr.count(b"\n") == 1 and len(r.stderr) < 3000 and b"Traceback" not in r.stderr
    assert str(model).encode() in r.stderr
    assert_no_raw(r.stderr)
    with pytest.raises(ValueError) as info:         # the Python caller's message is capped too
        Tagger.load(model)
    assert len(str(info.value)) < 1000


def test_errors_and_progress_lines_escape_what_they_quote(run_cli, tmp_path):
    r = run_cli("tag", "-m", f"missing{CLEAR}.ftm", DATA / "sample.conll")
    assert r.returncode == 2 and b"missing\\x1b[2J" in r.stderr
    assert_no_raw(r.stderr)
    train = tmp_path / f"train{TITLE}.conllu"
    train.write_bytes((DATA / "sample.conllu").read_bytes())
    out = tmp_path / f"out{CLEAR}.ftm"
    r = run_cli("train", "pos", train, "-o", out, "--epochs", "1")
    assert r.returncode == 0, r.stderr
    assert b"train\\x1b]0;owned\\x07.conllu" in r.stderr and b"saved" in r.stderr
    assert_no_raw(r.stderr)
    assert out.exists()
