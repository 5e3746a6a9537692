"""What the command line writes follows what the user asked for: the
token level of ``tokenize --to conllu``, the format an output file's name
says (``-o x.conllu``, ``-o x.jsonl``), and progress a UD pipeline's
training gives part by part."""
from pathlib import Path

import fasttag
from fasttag.pipeline import Pipeline

DATA = Path(__file__).resolve().parents[1] / "data"
TEXT = "I can't go. He's here.\n\nShe left."


def test_tokenize_to_conllu_writes_the_token_level(run_cli, tmp_path):
    (tmp_path / "in.txt").write_text(TEXT, encoding="utf-8")
    proc = run_cli("tokenize", tmp_path / "in.txt", "--to", "conllu")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    tok = fasttag.load("en-tok")
    assert out == Pipeline(tok).to_conllu(TEXT + "\n")        # a file is read as lines, each ending in a break
    assert "2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_\n2\tca\t_\t_\t_" in out
    words = [line.split("\t")[1] for line in out.splitlines() if line and line[0].isdigit() and "-" not in
             line.split("\t")[0]]
    assert words == [w for s in tok.sentence_tokens(TEXT) for t in s for w in t.words]
    assert all(line.split("\t")[3] == "_" for line in out.splitlines() if "\t" in line)     # no column predicted
    again = run_cli("tokenize", "-m", "en-ud", tmp_path / "in.txt", "--to", "conllu")      # a pipeline's tokenizer
    assert again.returncode == 0 and again.stdout.decode() == Pipeline(fasttag.load("en-ud").tokenizer).to_conllu(TEXT + "\n")


def test_the_output_file_name_chooses_the_format(run_cli, tmp_path):
    (tmp_path / "in.txt").write_text(TEXT, encoding="utf-8")
    for command, name, same_as in (("tag", "out.conllu", ["--to", "conllu"]), ("tag", "out.jsonl", ["--json"]),
                                   ("ner", "out.jsonl", ["--json"]), ("tokenize", "out.conllu", ["--to", "conllu"]),
                                   ("tag", "out.txt", [])):
        proc = run_cli(command, tmp_path / "in.txt", "-o", tmp_path / name)
        assert proc.returncode == 0, proc.stderr
        shown = run_cli(command, tmp_path / "in.txt", *same_as)
        assert (tmp_path / name).read_bytes() == shown.stdout, (command, name)
    assert (tmp_path / "out.txt").read_text().startswith("I/PRON ca/AUX")
    assert (tmp_path / "out.conllu").read_text().startswith("# newdoc")
    told = run_cli("tag", tmp_path / "in.txt", "-o", tmp_path / "told.conllu", "--to", "tagged")   # said: kept
    assert told.returncode == 0 and (tmp_path / "told.conllu").read_text().startswith("I/PRON")


def test_train_ud_reports_each_part_as_part_k_of_n(run_cli, tmp_path):
    proc = run_cli("train", "ud", DATA / "sample_ud.conllu", "-o", tmp_path / "m.ftm", "--epochs", "1",
                   "--components", "tok,upos,lemma")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode()
    parts = [line.split("] ", 1)[1] for line in err.splitlines() if "] part " in line]
    assert parts == ["part 1 of 3: training the tokenizer", "part 2 of 3: training the upos tagger",
                     "part 3 of 3: training the lemma tagger"], err
    assert "Python objects" not in err and "reading list" not in err
