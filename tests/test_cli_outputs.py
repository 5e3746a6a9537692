"""Outputs never destroy inputs: every file a command reads is refused as
its output (the same file through links too), before any work, in one
line with exit status 2; and an output that the save could not write (a
dangling symbolic link) is refused before training.

The protection is derived from the parser: each argument that names a
file the command reads is declared so (the option table's ``reads``), and
:func:`test_every_string_argument_is_declared_a_path_or_not` fails when a
new argument taking a string is neither declared nor listed here as no
path.
"""
import argparse
import os
import shutil
from pathlib import Path

import pytest

from fasttag import cli

DATA = Path(__file__).resolve().parents[1] / "data"
CONLLU = DATA / "sample.conllu"
NER = DATA / "sample_ner.conll"
ZH = DATA / "sample_zh_train.txt"

#: string-valued arguments that name no file
NOT_PATHS = {"scheduler", "labels", "corpus", "licence", "part", "components"}


def _one_error_line(result):
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1 and err.startswith("fasttag: error: "), err
    return err


# (command line, the argument the error names, the kind of input file):
# {f} is an input copied into the test's folder, {out} the output that
# names it (itself or a link to it), {g} a text file, {new} a new file
OVERWRITES = [
    ("cluster {f} -o {out} --clusters 2", "RAW", "raw"),
    ("cluster {g} {f} -o {out} --clusters 2", "RAW", "raw"),
    ("train pos {conllu} -o {out} --clusters {f} --epochs 1", "--clusters", "clusters"),
    ("train ner {ner} -o {out} --gazetteer LOC={f} --epochs 1", "--gazetteer", "gazetteer"),
    ("train seg {zh} -o {out} --dict {f} --epochs 1", "--dict", "dict"),
    ("train seg {zh} -o {out} --unlabeled {f} --epochs 1", "--unlabeled", "raw"),
    ("train pos {conllu} -o {out} --init {f} --epochs 1", "--init", "model"),
    ("train pos {conllu} -o {new} --plot {out} --dev {f} --epochs 1", "--dev", "conllu"),
    ("tag {g} -o {out} --tokenizer {f}", "--tokenizer", "model"),
]


def _input_file(folder, kind):
    """A file of ``kind`` in ``folder``: its content must survive."""
    path = folder / f"input-{kind}.txt"
    if kind == "model":
        from fasttag import Tokenizer
        Tokenizer.train(str(DATA / "sample_tok.conllu"), epochs=1, verbose=False).save(path)
    else:
        source = {"raw": ZH, "clusters": DATA / "sample_clusters.txt", "gazetteer": DATA / "sample_gazetteer.txt",
                  "dict": DATA / "sample_userdict.txt", "conllu": CONLLU}[kind]
        shutil.copyfile(source, path)
    return path


THROUGH_LINKS = [OVERWRITES[0] + ("symbolic link",), OVERWRITES[2] + ("symbolic link",),
                 OVERWRITES[3] + ("hard link",)]


@pytest.mark.parametrize("line,names,kind,through", [c + ("itself",) for c in OVERWRITES] + THROUGH_LINKS,
                         ids=[f"{c[0].split(' -o')[0]} {c[1]}" for c in OVERWRITES]
                         + [f"{c[0].split(' -o')[0]} {c[1]} {c[3]}" for c in THROUGH_LINKS])
def test_an_output_that_is_an_input_is_refused(run_cli, tmp_path, line, names, kind, through):
    f = _input_file(tmp_path, kind)
    before = f.read_bytes()
    g = tmp_path / "other.txt"
    g.write_text("The dog barks .\n", encoding="utf-8")
    out = f
    if through == "symbolic link":
        out = tmp_path / "link"
        out.symlink_to(f.name)
    elif through == "hard link":
        out = tmp_path / "hard"
        os.link(f, out)
    files = {f.name, g.name, out.name}
    args = [part.format(f=f, g=g, out=out, new=tmp_path / "new.ftm", conllu=CONLLU, ner=NER, zh=ZH)
            for part in line.split()]
    err = _one_error_line(run_cli(*args))
    assert f"names the file of {names}, an input of the command" in err, err
    assert f.read_bytes() == before
    assert {p.name for p in tmp_path.iterdir()} == files      # nothing written, no temporary file


def test_standard_input_read_from_the_output_is_refused(cli_command, tmp_path):
    import subprocess
    command, env = cli_command
    raw = tmp_path / "raw.txt"
    raw.write_text("The dog barks .\nA cat sleeps .\n", encoding="utf-8")
    with open(raw, "rb") as stdin:
        result = subprocess.run(command + ["cluster", "-", "-o", str(raw), "--clusters", "2"], stdin=stdin,
                                capture_output=True, env=env, timeout=300)
    err = _one_error_line(result)
    assert "RAW" in err and raw.read_text(encoding="utf-8") == "The dog barks .\nA cat sleeps .\n"


def test_standard_input_by_default_read_from_the_output_is_refused(cli_command, tmp_path):
    """``fasttag tag -o x.txt < x.txt``: INPUT left out is standard input."""
    import subprocess
    command, env = cli_command
    raw = tmp_path / "raw.txt"
    raw.write_text("The dog barks .\n", encoding="utf-8")
    with open(raw, "rb") as stdin:
        result = subprocess.run(command + ["tag", "-o", str(raw)], stdin=stdin, capture_output=True, env=env,
                                timeout=300)
    err = _one_error_line(result)
    assert "INPUT" in err and raw.read_text(encoding="utf-8") == "The dog barks .\n"


def test_two_outputs_naming_one_file_are_refused(run_cli, tmp_path):
    err = _one_error_line(run_cli("train", "pos", CONLLU, "-o", tmp_path / "m.ftm", "--plot", tmp_path / "m.ftm"))
    assert "--plot and -o" in err
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------- every argument of every command

def _parsers(monkeypatch):
    """``{prog: (parser, [actions])}`` of every command, recorded as
    :func:`fasttag.cli.build_parser` adds them (argparse keeps its list of
    arguments private)."""
    added = {}
    original = argparse.ArgumentParser.add_argument

    def record(self, *args, **kwargs):
        action = original(self, *args, **kwargs)
        added.setdefault(self.prog, (self, []))[1].append(action)
        return action
    monkeypatch.setattr(argparse.ArgumentParser, "add_argument", record)
    cli.build_parser()
    monkeypatch.undo()
    return {prog: v for prog, v in added.items() if prog != "fasttag"}


def _takes_a_string(action):
    return action.nargs != 0 and not action.choices and action.type in (None, str)


def test_every_string_argument_is_declared_a_path_or_not(monkeypatch):
    parsers = _parsers(monkeypatch)
    assert {"fasttag train pos", "fasttag train seg", "fasttag tag", "fasttag cluster", "fasttag plot",
            "fasttag eval", "fasttag inspect"} <= set(parsers)
    for prog, (parser, actions) in parsers.items():
        reads = parser.get_default("reads") or {}
        writes = parser.get_default("writes") or {}
        assert not set(reads) & set(writes), prog
        dests = {a.dest for a in actions}
        assert set(reads) <= dests and set(writes) <= dests, prog
        for action in actions:
            if _takes_a_string(action):
                assert action.dest in set(reads) | set(writes) | NOT_PATHS, \
                    f"{prog} {action.option_strings or action.dest}: declare it read (_reads, or reads=True in " \
                    f"the option table), written (_writes) or no path (NOT_PATHS here)"


def test_every_input_of_every_command_is_protected_from_every_output(monkeypatch, tmp_path, capsys):
    """Each output of each command, naming the file that one of the
    command's inputs names, is refused (in this process: the check comes
    before any work, so the files need no content)."""
    f = tmp_path / "input.txt"
    f.write_text("precious\n", encoding="utf-8")
    g = tmp_path / "other.txt"
    g.write_text("other\n", encoding="utf-8")
    checked, expected = set(), set()
    for prog, (parser, actions) in sorted(_parsers(monkeypatch).items()):
        reads = parser.get_default("reads") or {}
        writes = parser.get_default("writes") or {}
        expected |= {(prog, source, output) for source in reads for output in writes}
        for output in writes:
            for source in reads:
                positionals, optionals = [], []
                for action in actions:
                    if action.dest in (source, output):
                        value = str(f)
                    elif action.dest in writes and action.required:
                        value = str(tmp_path / "elsewhere.out")
                    elif not action.option_strings and action.nargs != "?":
                        value = str(g)
                    else:
                        continue
                    if action.option_strings:
                        optionals += [action.option_strings[0], value]
                    else:
                        positionals.append(value)
                status = cli.main(prog.split()[1:] + positionals + optionals)
                err = capsys.readouterr().err
                assert status == 2 and f"names the file of {reads[source]}, an input" in err, \
                    (prog, source, output, err)
                assert f.read_text(encoding="utf-8") == "precious\n"
                checked.add((prog, source, output))
    assert checked == expected
    assert {("fasttag train ner", "gazetteers", "output"), ("fasttag train seg", "unlabeled", "plot"),
            ("fasttag train pos", "init", "output"), ("fasttag cluster", "raw", "output"),
            ("fasttag tag", "tokenizer", "output"), ("fasttag segment", "dict", "output"),
            ("fasttag plot", "models", "output")} <= checked
    assert sorted(os.listdir(tmp_path)) == ["input.txt", "other.txt"]


# ---------------------------------------------------------------- what the save needs

def test_a_dangling_link_as_output_is_refused_before_training(run_cli, tmp_path):
    link = tmp_path / "model.ftm"
    link.symlink_to(tmp_path / "gone" / "model.ftm")
    err = _one_error_line(run_cli("train", "pos", CONLLU, "-o", link, "--epochs", "1"))
    assert "-o" in err and str(tmp_path / "gone") in err and "does not exist" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.ftm"] and link.is_symlink()


def test_a_link_to_a_new_file_in_an_existing_folder_is_saved_through(run_cli, tmp_path):
    (tmp_path / "models").mkdir()
    link = tmp_path / "model.ftm"
    link.symlink_to(tmp_path / "models" / "pos.ftm")
    result = run_cli("train", "pos", CONLLU, "-o", link, "--epochs", "1", "--quiet")
    assert result.returncode == 0, result.stderr.decode()
    assert link.is_symlink() and (tmp_path / "models" / "pos.ftm").is_file()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes in read-only folders")
def test_a_link_into_a_read_only_folder_is_refused_before_training(run_cli, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        link = tmp_path / "model.ftm"
        link.symlink_to(folder / "model.ftm")
        err = _one_error_line(run_cli("train", "pos", CONLLU, "-o", link, "--epochs", "1"))
        assert "cannot write in" in err and str(folder) in err, err
        assert os.listdir(folder) == []
    finally:
        folder.chmod(0o755)
