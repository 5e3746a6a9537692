"""Everyday mistakes on the command line, through the real console script.

Each case of :data:`MISTAKES` must stop with exit status 2 and exactly one
line on standard error that names the file or option at fault (after the
progress lines training prints from its start), with no traceback and no
output file left behind (nor any temporary file).  The
files the cases name are made once per session: tiny models of every kind
and the broken inputs a user has lying around.
"""
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

import fasttag
from fasttag import Segmenter, SpanTagger, Tagger, Tokenizer

DATA = Path(__file__).resolve().parents[1] / "data"

# the models and inputs of the table, by the names the cases use
CONLLU = DATA / "sample.conllu"
CONLL = DATA / "sample_ner.conll"
ZH = DATA / "sample_zh_train.txt"
TOK = DATA / "sample_tok.conllu"


@pytest.fixture(scope="session")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-errors")
    f = {"conllu": CONLLU, "conll": CONLL, "zh": ZH, "tokdata": TOK, "dir": d / "folder"}
    f["dir"].mkdir()
    Tagger.train(str(CONLLU), epochs=1, verbose=False).save(d / "pos.ftm")
    Segmenter.train(str(ZH), epochs=1, verbose=False).save(d / "seg.ftm")
    SpanTagger.train(str(CONLL), task="ner", epochs=1, verbose=False, feature_columns=[1, 2],
                     document_features=True).save(d / "ner.ftm")
    Tokenizer.train(str(TOK), epochs=1, verbose=False).save(d / "tok.ftm")
    for kind in ("pos", "seg", "ner", "tok"):
        f[kind] = d / f"{kind}.ftm"
    from fasttag.linear import AveragedPerceptron
    AveragedPerceptron().fit([[0.0, 1.0], [1.0, 0.0]], [0, 1]).save(d / "linear.ftm")
    f["linear"] = d / "linear.ftm"
    (d / "u16_nobom.txt").write_bytes("我爱北京天安门\n".encode("utf-16-le"))
    f["u16_nobom"] = d / "u16_nobom.txt"
    import gzip
    for name, data in (("ascii16", "Barack Obama visited Paris.\n".encode("utf-16-le")),
                       ("bom16", "Barack Obama visited Paris.\n".encode("utf-16")),
                       ("gzipped", gzip.compress(b"Barack Obama visited Paris.\n"))):
        (d / f"{name}.txt").write_bytes(data)
        f[name] = d / f"{name}.txt"
    f["e2"] = d / "e2.conllu"
    f["e2"].write_bytes(CONLLU.read_bytes())
    pos_bytes = f["pos"].read_bytes()
    (d / "garbage.ftm").write_bytes(bytes(range(256)) * 40)
    (d / "truncated.ftm").write_bytes(pos_bytes[: len(pos_bytes) // 2])
    (d / "empty.ftm").write_bytes(b"")
    (d / "empty.txt").write_bytes(b"")
    (d / "blank.txt").write_text("\n\n  \n", encoding="utf-8")
    (d / "plain.txt").write_text("The dog barks .\nA cat sleeps .\n", encoding="utf-8")
    (d / "gbk.txt").write_bytes("我爱北京天安门\n今天天气很好\n".encode("gbk"))
    (d / "gbk_dict.txt").write_bytes("天安门\n".encode("gbk"))
    (d / "bad_weight.txt").write_text("区块链 -3\n", encoding="utf-8")
    (d / "bad.conllu").write_text("1\tword\n", encoding="utf-8")
    (d / "a_file").write_text("not a folder\n", encoding="utf-8")
    (d / "cols.txt").write_text("Rockwell NNP B-NP\nsaid VBD B-VP\nthe DT B-NP\nagreement NN I-NP\n. . O\n\n"
                                "It PRP B-NP\nrose VBD B-VP\n. . O\n\n", encoding="utf-8")
    for name in ("garbage", "truncated", "empty"):
        f[name + "_model"] = d / f"{name}.ftm"
    for name in ("empty", "blank", "plain", "gbk", "gbk_dict", "bad_weight", "cols"):
        f[name] = d / f"{name}.txt"
    f["bad_conllu"] = d / "bad.conllu"
    f["a_file"] = d / "a_file"
    f["missing"] = d / "missing.conllu"
    f["missing_model"] = d / "missing.ftm"
    f["under_file"] = d / "a_file" / "en.ftm"
    f["tmp"] = d
    return f


# (id, command line, what the one error line must name).  {name} is a path
# from the ``files`` fixture; {out} and {nodir_out} lie in the case's own
# folder, which must stay empty.
MISTAKES = [
    # ------------------------------------------------------------ train: input files
    ("train-missing", "train pos {missing} -o {out}", "missing.conllu"),
    ("train-folder", "train pos {dir} -o {out}", "folder"),
    ("train-empty", "train pos {empty} -o {out}", "empty.txt"),
    ("train-blank-lines", "train seg {blank} -o {out}", "blank.txt"),
    ("train-no-tags", "train pos {plain} -o {out}", "plain.txt"),
    ("train-bad-conllu", "train pos {bad_conllu} -o {out} --format conllu", "bad.conllu"),
    ("train-not-utf8", "train seg {gbk} -o {out}", "gbk.txt:1"),
    ("train-bad-encoding-name", "train seg {zh} -o {out} --encoding klingon", "--encoding"),
    ("train-dev-missing", "train pos {conllu} -o {out} --dev {missing}", "missing.conllu"),
    ("train-dev-folder", "train pos {conllu} -o {out} --dev {dir}", "folder"),
    ("train-dev-stdin", "train pos {conllu} -o {out} --dev -", "--dev"),
    ("train-dev-no-tags", "train pos {conllu} -o {out} --dev {plain}", "plain.txt"),
    ("train-dev-empty", "train pos {conllu} -o {out} --dev {empty}", "empty.txt"),
    ("train-tok-from-column-file", "train tok {conll} -o {out}", "sample_ner.conll"),
    # ------------------------------------------------------------ train: the output
    ("train-out-nodir", "train pos {conllu} -o {nodir_out}", "nodir"),
    ("train-out-folder", "train pos {conllu} -o {dir}", "folder"),
    ("train-out-under-file", "train pos {conllu} -o {under_file}", "a_file"),
    ("train-out-stdout", "train pos {conllu} -o -", "-o"),
    ("train-no-out", "train pos {conllu}", "-o"),
    # ------------------------------------------------------------ train: options
    ("train-column-upos-on-column-file", "train pos {conll} -o {out} --column upos", "upos"),
    ("train-column-past-end", "train pos {conll} -o {out} --column 9", "column"),
    ("train-word-column-past-end", "train ner {conll} -o {out} --word-column 7", "column"),
    ("train-epochs-negative", "train pos {conllu} -o {out} --epochs -3", "--epochs"),
    ("train-epochs-zero", "train pos {conllu} -o {out} --epochs 0", "--epochs"),
    ("train-epochs-not-int", "train pos {conllu} -o {out} --epochs ten", "--epochs"),
    ("train-word-column-is-tag-column", "train pos {conll} -o {out} --column 1 --word-column 1",
     "sample_ner.conll:3"),
    ("train-conllu-column-deprel", "train pos {conllu} -o {out} --column 7", "(DEPREL)"),
    ("train-conllu-column-form", "train pos {conllu} -o {out} --column 1", "(FORM)"),
    ("train-ner-dev-of-other-task", "train ner {conll} -o {out} --dev {conllu} --epochs 1", "sample.conllu"),
    ("train-pos-dev-of-other-tag-set", "train pos {conll} -o {out} --column 1 --dev {conllu}", "sample.conllu"),
    ("train-out-is-train", "train pos {e2} -o {e2}", "e2.conllu"),
    ("train-C-negative", "train pos {conllu} -o {out} --algorithm mira --C -1", "--C"),
    ("train-C-nan", "train pos {conllu} -o {out} --algorithm mira --C nan", "--C"),
    ("train-k-negative", "train pos {conllu} -o {out} --algorithm mira --k -2", "--k"),
    ("train-k-without-mira", "train pos {conllu} -o {out} --k 3", "--k"),
    ("train-seed-negative", "train pos {conllu} -o {out} --seed -1", "--seed"),
    ("train-folds-zero", "train seg {zh} -o {out} --folds 0", "--folds"),
    ("train-unknown-option", "train pos {conllu} -o {out} --bogus 3", "--bogus"),
    ("train-option-of-other-task", "train pos {conllu} -o {out} --folds 3", "--folds"),
    ("train-bad-format", "train pos {conllu} -o {out} --format xml", "--format"),
    ("train-unknown-task", "train parse {conllu} -o {out}", "parse"),
    ("train-gazetteer-malformed", "train ner {conll} -o {out} --gazetteer PER", "--gazetteer"),
    ("train-gazetteer-missing", "train ner {conll} -o {out} --gazetteer PER={missing}", "missing.conllu"),
    ("train-gazetteer-not-utf8", "train ner {conll} -o {out} --gazetteer PER={gbk}", "gbk.txt:1"),
    ("train-dict-missing", "train seg {zh} -o {out} --dict {missing}", "missing.conllu"),
    ("train-dict-folder", "train seg {zh} -o {out} --dict {dir}", "folder"),
    ("train-dict-bad-weight", "train seg {zh} -o {out} --dict {bad_weight}", "bad_weight.txt:1"),
    # ------------------------------------------------------------ tag
    ("tag-model-missing", "tag -m {missing_model} {conllu} -o {out}", "missing.ftm"),
    ("tag-model-folder", "tag -m {dir} {conllu} -o {out}", "folder"),
    ("tag-model-stdin", "tag -m - {conllu} -o {out}", "-m"),
    ("tag-model-garbage", "tag -m {garbage_model} {conllu} -o {out}", "garbage.ftm"),
    ("tag-model-truncated", "tag -m {truncated_model} {conllu} -o {out}", "truncated.ftm"),
    ("tag-model-empty", "tag -m {empty_model} {conllu} -o {out}", "empty.ftm"),
    ("tag-with-segmenter", "tag -m {seg} {conllu} -o {out}", "segment"),
    ("tag-with-tokenizer", "tag -m {tok} {conllu} -o {out}", "tokenize"),
    ("tag-input-missing", "tag -m {pos} {missing} -o {out}", "missing.conllu"),
    ("tag-input-folder", "tag -m {pos} {dir} -o {out}", "folder"),
    ("tag-input-not-utf8", "tag -m {pos} {gbk} -o {out}", "gbk.txt:1"),
    ("tag-bad-format", "tag -m {pos} {conllu} -o {out} --format xml", "--format"),
    ("tag-with-linear-model", "tag -m {linear} {conllu} -o {out}", "AveragedPerceptron"),
    ("tag-tokenizer-linear-model", "tag -m {pos} {plain} -o {out} --tokenizer {linear}", "AveragedPerceptron"),
    ("tag-nbest-huge", "tag -m {pos} {plain} -o {out} --json --nbest 1000000", "--nbest"),
    ("tag-nbest-overflow", "tag -m {pos} {plain} -o {out} --json --nbest 3000000000", "--nbest"),
    ("tag-out-is-input", "tag -m {pos} {e2} -o {e2}", "e2.conllu"),
    ("tag-raw-text-with-column-model", "tag -m {ner} {plain} -o {out}", "--format conll"),
    ("tag-column-file-as-raw-text", "tag -m {pos} {cols} -o {out}", "cols.txt: this looks like a column file"),
    ("tag-conllu-as-column-file", "tag -m {pos} {conllu} -o {out} --format conll", "numbers the tokens"),
    ("ner-column-file-as-raw-text", "ner -m {ner} {cols} -o {out}", "--format raw"),
    ("tag-column-number-on-conllu", "tag -m {pos} {conllu} -o {out} --column 2", "(LEMMA)"),
    ("tag-column-on-span-model", "tag -m {ner} {conll} -o {out} --column xpos", "--column"),
    ("tag-out-nodir", "tag -m {pos} {conllu} -o {nodir_out}", "nodir"),
    ("tag-out-folder", "tag -m {pos} {conllu} -o {dir}", "folder"),
    ("tag-unknown-option", "tag -m {pos} {conllu} -o {out} --fast", "--fast"),
    # ------------------------------------------------------------ segment
    ("segment-with-pos-model", "segment -m {pos} {zh} -o {out}", "tag"),
    ("segment-with-tokenizer", "segment -m {tok} {zh} -o {out}", "tokenize"),
    ("segment-model-garbage", "segment -m {garbage_model} {zh} -o {out}", "garbage.ftm"),
    ("segment-input-missing", "segment -m {seg} {missing} -o {out}", "missing.conllu"),
    ("segment-not-utf8", "segment -m {seg} {gbk} -o {out}", "gbk.txt:1"),
    ("segment-wrong-encoding", "segment -m {seg} {zh} -o {out} --encoding ascii", "sample_zh_train.txt:1"),
    ("segment-dict-missing", "segment -m {seg} {zh} -o {out} --dict {missing}", "missing.conllu"),
    ("segment-dict-bad-weight", "segment -m {seg} {zh} -o {out} --dict {bad_weight}", "bad_weight.txt:1"),
    ("segment-utf16-without-bom", "segment -m {seg} {u16_nobom} -o {out} --encoding utf-16", "u16_nobom.txt:1"),
    ("tag-ascii-in-utf16", "tag {ascii16} -o {out}", "ascii16.txt:1: a NUL byte in the line"),
    ("tag-empty-model-name", "tag -m '' {conllu} -o {out}", "-m is an empty file name"),
    ("tag-empty-input-name", "tag '' -o {out}", "INPUT is an empty file name"),
    ("tag-out-ends-with-slash", "tag {conllu} -o {out}/", "-o names a folder (it ends with /)"),
    ("tag-out-under-a-file", "tag {conllu} -o {a_file}/x.txt", "a_file is a file, not a folder"),
    ("tag-empty-tokenizer-name", "tag {plain} -o {out} --tokenizer ''", "--tokenizer is an empty file name"),
    ("inspect-folder", "inspect {dir}", "MODEL is a folder"),
    ("inspect-data-folder", "inspect {pos} --data {dir}", "--data is a folder"),
    ("tag-utf16-with-bom", "tag {bom16} -o {out}", "bom16.txt:1: UTF-16 or UTF-32 (it opens with a byte order mark)"),
    ("ner-gzipped", "ner {gzipped} -o {out}", "gzipped.txt:1: a gzip-compressed file"),
    ("segment-with-linear-model", "segment -m {linear} {zh} -o {out}", "AveragedPerceptron"),
    ("segment-out-nodir", "segment -m {seg} {zh} -o {nodir_out}", "nodir"),
    # ------------------------------------------------------------ tokenize
    ("tokenize-unknown-model", "tokenize -m nope.ftm {zh} -o {out}", "nope.ftm"),
    ("tokenize-with-pos-model", "tokenize -m {pos} {zh} -o {out}", "tag"),
    ("tokenize-input-missing", "tokenize -m {tok} {missing} -o {out}", "missing.conllu"),
    ("tokenize-not-utf8", "tokenize -m {tok} {gbk} -o {out}", "gbk.txt:1"),
    # ------------------------------------------------------------ eval
    ("eval-model-missing", "eval {missing_model} {conllu}", "missing.ftm"),
    ("eval-segmenter-on-column-file", "eval {seg} {conll}", "sample_ner.conll: this looks like a column file"),
    ("eval-model-garbage", "eval {garbage_model} {conllu}", "garbage.ftm"),
    ("eval-model-truncated", "eval {truncated_model} {conllu}", "truncated.ftm"),
    ("eval-test-missing", "eval {pos} {missing}", "missing.conllu"),
    ("eval-test-folder", "eval {pos} {dir}", "folder"),
    ("eval-pos-on-untagged-text", "eval {pos} {plain}", "plain.txt"),
    ("eval-tokenizer-on-column-file", "eval {tok} {conll}", "sample_ner.conll"),
    ("eval-column-file-for-conllu-model", "eval {pos} {conll} --column upos", "sample_ner.conll:1"),
    ("eval-option-of-other-task", "eval {pos} {conllu} --scheme iob1", "--scheme"),
    ("eval-test-not-utf8", "eval {seg} {gbk}", "gbk.txt:1"),
    ("eval-linear-model", "eval {linear} {conllu}", "AveragedPerceptron"),
    ("eval-segmenter-on-empty-file", "eval {seg} {empty}", "empty.txt"),
    ("eval-tokenizer-on-empty-file", "eval {tok} {empty}", "empty.txt"),
    ("eval-word-column-is-a-feature-column", "eval {ner} {conll} --word-column 1", "feature columns"),
    ("eval-words-missing", "eval {seg} {zh} --words {missing}", "missing.conllu"),
    ("inspect-data-of-another-task", "inspect {ner} --data {conllu}", "sample.conllu"),
    ("train-ner-on-conllu", "train ner {conllu} -o {out}", "sample.conllu"),
    ("train-ner-dev-conllu", "train ner {conll} --dev {conllu} -o {out}", "sample.conllu"),
    ("eval-ner-on-conllu", "eval {ner} {conllu}", "sample.conllu"),
    ("inspect-data-in-another-format", "inspect {pos} --data {conll}", "sample_ner.conll:1"),
    # ------------------------------------------------------------ no command
    ("no-command", "", "command"),
    ("unknown-command", "parse {conllu}", "parse"),
]


def _render(line, files, out_dir):
    paths = {k: str(v) for k, v in files.items()}
    paths.update(out=str(out_dir / "out.ftm"), nodir_out=str(out_dir / "nodir" / "en.ftm"))
    return [part.format(**paths) for part in shlex.split(line)]


@pytest.fixture(scope="session")
def outcomes(run_cli, files):
    """Every case run once, a few at a time (each is mostly interpreter
    start-up), each with its own output folder: {id: (result, folder)}."""
    from concurrent.futures import ThreadPoolExecutor

    def run(case):
        name, line, _ = case
        out_dir = files["tmp"] / "cases" / name
        out_dir.mkdir(parents=True)
        return name, (run_cli(*_render(line, files, out_dir), input=b""), out_dir)
    before = set(os.listdir(files["tmp"])) | {"cases"}
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(pool.map(run, MISTAKES))
    done["shared files"] = before == set(os.listdir(files["tmp"])) and os.listdir(files["dir"]) == []
    return done


@pytest.mark.parametrize("case,names", [pytest.param(i, n, id=i) for i, _, n in MISTAKES])
def test_mistake_is_one_line_exit_2(outcomes, case, names):
    result, out_dir = outcomes[case]
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, (result.returncode, err)
    assert "Traceback" not in err
    # training's progress lines ("[fasttag pos] reading ...") may come first
    lines = [line for line in err.splitlines() if not line.startswith("[fasttag ")]
    assert len(lines) == 1 and err.splitlines()[-1] == lines[0], err
    assert names in lines[0], lines[0]
    assert lines[0].startswith("fasttag"), lines[0]
    assert os.listdir(out_dir) == []           # no output, no temporary file, no folder made


def test_mistakes_name_only_options_their_command_has(outcomes, files, foreign_flags, tmp_path):
    """Every flag an error line names is one its command has (or, quoted
    as 'fasttag CMD ...', one CMD has): no pointer to an option that is not
    there (train ner once said "read with --format conllu")."""
    wrong = {}
    for name, line, _ in MISTAKES:
        err = outcomes[name][0].stderr.decode("utf-8", "replace").splitlines()
        bad = foreign_flags(_render(line, files, tmp_path), err[-1] if err else "")
        if bad:
            wrong[name] = (bad, err[-1])
    assert wrong == {}


def test_mistakes_leave_the_shared_files_alone(outcomes):
    assert outcomes["shared files"]


def test_table_covers_every_command():
    assert len(MISTAKES) >= 45
    commands = {c.split()[0] + (" " + c.split()[1] if c.startswith("train") else "") for _, c, _ in MISTAKES if c}
    for command in ("train pos", "train seg", "train ner", "train tok", "tag", "segment", "tokenize", "eval"):
        assert command in commands


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes in read-only folders")
def test_read_only_output_folder(run_cli, files, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = run_cli("train", "pos", CONLLU, "-o", folder / "en.ftm")
        err = result.stderr.decode()
        assert result.returncode == 2 and len(err.splitlines()) == 1 and "ro" in err
        assert os.listdir(folder) == []
    finally:
        folder.chmod(0o755)


# ---------------------------------------------------------------- right answers

def test_version(run_cli):
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.decode().strip() == f"fasttag {fasttag.__version__}"


def test_encoding_reads_gbk(run_cli, files):
    expected = run_cli("segment", "-m", files["seg"], input="我爱北京天安门\n今天天气很好\n".encode())
    assert expected.returncode == 0
    for enc in ("gbk", "gb18030"):
        got = run_cli("segment", "-m", files["seg"], files["gbk"], "--encoding", enc)
        assert got.returncode == 0, got.stderr
        assert got.stdout == expected.stdout          # the output is UTF-8
    dictionary = run_cli("segment", "-m", files["seg"], files["gbk"], "--encoding", "gbk", "--dict",
                         files["gbk_dict"])
    assert "天安门" in dictionary.stdout.decode().split()


def test_encoding_of_stdin_and_utf16(run_cli, files, tmp_path):
    text = "我爱北京天安门\n"
    expected = run_cli("segment", "-m", files["seg"], input=text.encode()).stdout
    assert run_cli("segment", "-m", files["seg"], "-", "--encoding", "gbk", input=text.encode("gbk")).stdout \
        == expected
    (tmp_path / "u16.txt").write_bytes(text.encode("utf-16"))
    got = run_cli("segment", "-m", files["seg"], tmp_path / "u16.txt", "--encoding", "utf-16")
    assert got.returncode == 0 and got.stdout == expected


def test_dash_is_standard_input(run_cli, files):
    text = CONLLU.read_bytes()
    from_file = run_cli("tag", "-m", files["pos"], CONLLU)
    from_dash = run_cli("tag", "-m", files["pos"], "-", input=text)
    assert from_file.returncode == 0 and from_dash.stdout == from_file.stdout


def test_train_progress_lines_without_a_terminal(run_cli, files, tmp_path, dev_copy):
    out = tmp_path / "m.ftm"
    result = run_cli("train", "pos", CONLLU, "-o", out, "--epochs", "3")
    err = result.stderr.decode().splitlines()
    assert result.returncode == 0
    assert err[0].startswith("[fasttag pos] reading ") and "sample.conllu" in err[0]
    assert [line.split()[3] for line in err if line.startswith("[fasttag pos] epoch ")] == ["1/3", "2/3", "3/3"]
    assert "\r" not in result.stderr.decode()          # no live bar in a log file
    quiet = run_cli("train", "pos", CONLLU, "-o", out, "--epochs", "3", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == b""
    n = TOK.read_text(encoding="utf-8").count("\n# text = ") + TOK.read_text(encoding="utf-8").startswith("# text")
    # dev: a copy of TRAIN (training refuses TRAIN itself as --dev); the count of its sentences is the point
    tok = run_cli("train", "tok", TOK, "-o", out, "--dev", dev_copy(TOK), "--epochs", "1")   # sentences, not pieces
    assert f"[fasttag tok] training on {n} sentences, dev {n}" in tok.stderr.decode().splitlines()


def test_ctrl_c_keeps_the_best_completed_epoch(cli_command, tmp_path):
    """SIGINT after the first epoch line: exit 130, one line saying so, and
    the model of the last completed epoch saved, recording the interruption."""
    train = tmp_path / "big.conllu"
    train.write_bytes(CONLLU.read_bytes() * 60)
    out = tmp_path / "interrupted.ftm"
    command, env = cli_command
    # SIGINT at its default in the child, even where the test runner ignores it
    proc = subprocess.Popen(command + ["train", "pos", str(train), "-o", str(out), "--epochs", "100000"],
                            stderr=subprocess.PIPE, env=env, cwd=str(tmp_path),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        seen = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stderr.readline().decode()
            seen.append(line)
            if " epoch 2/" in line:
                break
        else:
            pytest.fail("no epoch line: " + "".join(seen))
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    last = [line for line in rest.splitlines() if not line.startswith("[fasttag pos] epoch")]
    assert len(last) == 1 and "interrupted at epoch" in last[0] and "Traceback" not in rest, rest
    info = fasttag.load(out).model.training_info
    n = info["interrupted_at_epoch"]
    assert n >= 3 and info["best_epoch"] == n - 1
    assert f"interrupted at epoch {n}:" in last[0]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_ctrl_c_before_any_epoch_saves_nothing():
    """The API: KeyboardInterrupt during training with no completed epoch is
    a TrainingInterrupted without a model."""
    from fasttag.errors import TrainingInterrupted
    pairs = [(["a", "b"], ["X", "Y"])]

    def evaluate(_):
        raise KeyboardInterrupt
    from fasttag.model import training as trainer
    t = Tagger.train(pairs, epochs=1, verbose=False)
    data = t._encode(pairs, training=True)
    with pytest.raises(TrainingInterrupted) as info:
        trainer.fit(t.model, data, data, epochs=3, evaluate=evaluate, verbose=False)
    assert info.value.model is None and info.value.epoch == 1


def test_an_output_named_as_an_input_is_left_alone(outcomes, files):
    assert outcomes["train-out-is-train"][0].returncode == 2
    assert outcomes["tag-out-is-input"][0].returncode == 2
    assert files["e2"].read_bytes() == CONLLU.read_bytes()


def test_a_column_file_is_tagged_as_text_only_when_asked(run_cli, files, tmp_path):
    """Without --format, a file that looks like a column file is refused
    (above); --format raw reads it as text, and text whose lines happen to
    hold equal numbers of words, without blank-line blocks, is raw text."""
    out = tmp_path / "o.txt"
    r = run_cli("tag", "-m", files["pos"], files["cols"], "--format", "raw", "-o", out)
    assert r.returncode == 0, r.stderr
    assert [t.rsplit("/", 1)[0] for t in out.read_text(encoding="utf-8").split()][:2] == ["Rockwell", "NNP"]
    names = tmp_path / "names.txt"
    names.write_text("Anna Smith\nBob Jones\nCarl Brown\nDora White\nEve Black\n", encoding="utf-8")
    r = run_cli("tag", "-m", files["pos"], names, "-o", out)
    assert r.returncode == 0, r.stderr
    assert [t.rsplit("/", 1)[0] for t in out.read_text(encoding="utf-8").split()][:4] == ["Anna", "Smith", "Bob",
                                                                                         "Jones"]
    r = run_cli("ner", "-m", files["ner"], names, "--format", "raw", "-o", out)
    assert r.returncode == 2 and "feature column" in r.stderr.decode()      # ner takes --format (this model
                                                                            # needs columns)


def test_python_option_names_become_the_commands_flags():
    """Errors raised to Python name ``option NAME`` or ``option
    NAME=VALUE``; the command line prints its flag and value, quotes a
    command that takes a value its own flag does not, and leaves what it
    has no flag for alone."""
    from fasttag.cli import build_parser
    from fasttag.model.options import cli_text
    parser = build_parser()
    commands = {name: p.flags for name, p in parser._subparsers._group_actions[0].choices.items() if name != "train"}
    message = ("tag it with option format='conll', or option format='raw'; option encoding='utf-16'; "
               "option column=7; option allow_new_tags=True; option scheme='iob2'")
    assert cli_text(message, commands["tag"], commands) == (
        "tag it with --format conll, or --format raw; --encoding utf-16; --column 7; "
        "option allow_new_tags=True; option scheme='iob2'")
    assert cli_text(message, commands["ner"], commands) == (
        "tag it with 'fasttag tag --format conll', or --format raw; --encoding utf-16; option column=7; "
        "option allow_new_tags=True; option scheme='iob2'")
    assert cli_text("option allow_new_tags=True, option column='xpos', option epochs=3") == \
        "--allow-new-tags, --column xpos, --epochs 3"


def test_eval_of_a_model_of_python_objects_is_one_line(run_cli):
    # a feature-dict tagger reads Python objects only: eval of a file was a
    # traceback (TypeError from reading the file as feature dicts)
    model = Path(__file__).resolve().parent / "data" / "previous" / "feature-tagger.ftm"
    proc = run_cli("eval", model, DATA / "sample.conllu")
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "is a feature-tagger model: it reads Python objects, not files" in err


def test_a_model_given_as_input_and_swapped_arguments_are_named(run_cli, tmp_path):
    from fasttag.model.modelfile import MAGIC
    from fasttag.text.sources import MODEL_MAGIC
    assert MODEL_MAGIC == MAGIC
    model = Path(fasttag.__file__).resolve().parent / "models" / "en_ewt_upos.ftm"
    proc = run_cli("tag", "-m", "en", model)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err == f"fasttag: error: {model}:1: a fasttag model file, not text to read: " \
                                          f"give a model as --model\n"
    proc = run_cli("eval", CONLLU, model)                   # TEST MODEL instead of MODEL TEST
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err.count("\n") == 1 and "wrong magic bytes (it reads as CoNLL-U: a data " \
                                                             "file given as the model? arguments swapped?)" in err
    text = tmp_path / "notes.txt"
    text.write_text("I go home.\n", encoding="utf-8")
    proc = run_cli("tag", "-m", text, text)
    assert proc.returncode == 2 and "(it reads as text: a data file given as the model?" in proc.stderr.decode()


def test_a_model_given_to_the_wrong_command_names_the_right_ones(run_cli):
    for command, model, message in (
            ("tokenize", "en-ner", "-m en-ner: a span tagger model, which 'fasttag tokenize' does not run: use "
                                   "'fasttag tag' or 'fasttag ner'"),
            ("ner", "en", "-m en: a POS tagger model, which 'fasttag ner' does not run: use 'fasttag tag'"),
            ("segment", "en-tok", "-m en-tok: a tokenizer model, which 'fasttag segment' does not run: use "
                                  "'fasttag tokenize'")):
        proc = run_cli(command, "-m", model, input=b"x\n")
        assert proc.returncode == 2 and proc.stderr.decode() == f"fasttag: error: {message}\n"
