"""The dependency parser through its public ways in: ``fasttag train dep``,
``fasttag tag`` and ``fasttag eval`` (the real console script), the Python
API, and a UD pipeline with the parser as its last part.  Trained on
made-up treebanks whose trees follow from the tags, so a working parser
gets every arc right, non-projective ones included."""
import json
import random
import subprocess

import pytest

import fasttag
from fasttag.pipeline import Pipeline
from fasttag.tasks.dep import DependencyParser
from fasttag.text import trees

NOUNS = ["dog", "cat", "bird", "horse", "fish", "cow", "mouse", "fox", "owl", "bee", "ant", "yak"]
VERBS = ["sees", "likes", "finds", "chases", "hears", "feeds"]
ADVS = ["today", "now", "again", "often"]
DETS = ["the", "a", "this", "that"]


def sentence(rng):
    """Words as (form, upos, head, deprel), one of three shapes; the third non-projective."""
    kind = rng.randrange(3)
    if kind == 0:       # the dog sees a cat .
        return [(rng.choice(DETS), "DET", 2, "det"), (rng.choice(NOUNS), "NOUN", 3, "nsubj"),
                (rng.choice(VERBS), "VERB", 0, "root"), (rng.choice(DETS), "DET", 5, "det"),
                (rng.choice(NOUNS), "NOUN", 3, "obj"), (".", "PUNCT", 3, "punct")]
    if kind == 1:       # dog sees often .
        return [(rng.choice(NOUNS), "NOUN", 2, "nsubj"), (rng.choice(VERBS), "VERB", 0, "root"),
                (rng.choice(ADVS), "ADV", 2, "advmod"), (".", "PUNCT", 2, "punct")]
    # cow of sees fox : "of" depends on the last noun, crossing the root's arc to the verb's object
    return [(rng.choice(NOUNS), "PROPN", 3, "nsubj"), ("of", "ADP", 4, "case"),
            (rng.choice(VERBS), "VERB", 0, "root"), (rng.choice(NOUNS), "NOUN", 3, "obl"),
            ("!", "PUNCT", 3, "punct")]


def treebank(n, seed):
    rng = random.Random(seed)
    out = []
    for k in range(n):
        words = sentence(rng)
        out.append(f"# sent_id = {k + 1}\n# text = {' '.join(w[0] for w in words)}\n")
        for i, (form, upos, head, deprel) in enumerate(words, 1):
            space = "_" if i < len(words) else "SpaceAfter=No"
            out.append(f"{i}\t{form}\t{form}\t{upos}\t_\t_\t{head}\t{deprel}\t_\t{space}\n")
        out.append("\n")
    return "".join(out)


def gold_trees(text):
    sents, cur = [], []
    for line in text.splitlines():
        if not line:
            sents.append(cur)
            cur = []
        elif not line.startswith("#"):
            f = line.split("\t")
            cur.append((int(f[6]), f[7]))
    return sents


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("dep")
    train, test = d / "train.conllu", d / "test.conllu"
    train.write_text(treebank(300, 1), encoding="utf-8")
    test.write_text(treebank(60, 2), encoding="utf-8")
    model = d / "dep.ftm"
    run = subprocess.run(["fasttag", "train", "dep", str(train), "-o", str(model), "--epochs", "6", "--quiet"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return train, test, model


def test_the_test_treebank_holds_non_projective_trees(files):
    heads = [[h for h, _ in s] for s in gold_trees(files[1].read_text(encoding="utf-8"))]
    assert any(not trees.is_projective(h) for h in heads)


def test_tag_fills_every_head_and_label_as_the_gold_tree_has_them(files):
    _, test, model = files
    run = subprocess.run(["fasttag", "tag", "-m", str(model), str(test)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert gold_trees(run.stdout) == gold_trees(test.read_text(encoding="utf-8"))


def test_eval_scores_every_dependency_metric_on_gold_tokens_and_tags(files):
    _, test, model = files
    run = subprocess.run(["fasttag", "eval", str(model), str(test), "--json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["mode"] == "gold tokens and tags"
    for metric in ("UAS", "LAS", "MLAS", "BLEX"):
        assert result[metric]["f1"] == 1.0, metric
    text = subprocess.run(["fasttag", "eval", str(model), str(test)], capture_output=True, text=True)
    assert "LAS        |    100.00" in text.stdout


def test_raw_text_is_refused_in_one_line(files):
    _, _, model = files
    run = subprocess.run(["fasttag", "tag", "-m", str(model)], input="the dog sees a cat .\n", capture_output=True,
                         text=True)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "reads upos" in run.stderr and "CoNLL-U" in run.stderr


def test_training_data_without_trees_is_refused(tmp_path):
    text = treebank(5, 3)
    blank = "\n".join("\t".join(f[:6] + ["_", "_"] + f[8:]) if len(f := line.split("\t")) == 10 else line
                      for line in text.split("\n"))
    path = tmp_path / "blank.conllu"
    path.write_text(blank, encoding="utf-8")
    run = subprocess.run(["fasttag", "train", "dep", str(path), "-o", str(tmp_path / "m.ftm")], capture_output=True,
                         text=True)
    assert run.returncode == 2
    assert "no dependency trees" in run.stderr and not (tmp_path / "m.ftm").exists()


def test_data_of_roots_alone_is_refused(tmp_path):
    path = tmp_path / "roots.conllu"
    path.write_text("1\tYes\tyes\tINTJ\t_\t_\t0\troot\t_\t_\n\n1\tNo\tno\tINTJ\t_\t_\t0\troot\t_\t_\n\n",
                    encoding="utf-8")
    with pytest.raises(fasttag.InputError, match="cannot teach a parser"):
        DependencyParser.train(str(path))


def test_a_head_that_makes_no_tree_is_named_by_its_sentence_and_line(tmp_path):
    lines = treebank(3, 4).split("\n")
    # the second sentence's first word takes itself as its head
    starts = [i for i, line in enumerate(lines) if line.startswith("1\t")]
    f = lines[starts[1]].split("\t")
    f[6] = "1"
    lines[starts[1]] = "\t".join(f)
    path = tmp_path / "cycle.conllu"
    path.write_text("\n".join(lines), encoding="utf-8")
    run = subprocess.run(["fasttag", "train", "dep", str(path), "-o", str(tmp_path / "m.ftm")], capture_output=True,
                         text=True)
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert "sentence 2" in run.stderr and "own head" in run.stderr


def test_a_loaded_parser_parses_as_the_trained_one(files):
    train, test, model = files
    parser = fasttag.load(str(model))
    assert isinstance(parser, DependencyParser)
    again = DependencyParser.from_bytes(parser.to_bytes())
    assert again.to_bytes() == parser.to_bytes()
    words = [["the", "dog", "sees", "a", "cat", "."], ["cow", "of", "sees", "fox", "!"]]
    upos = [["DET", "NOUN", "VERB", "DET", "NOUN", "PUNCT"], ["PROPN", "ADP", "VERB", "NOUN", "PUNCT"]]
    got = parser.parse(words, {"upos": upos, "lemma": words})
    assert got == again.parse(words, {"upos": upos, "lemma": words})
    assert got == ([[2, 3, 0, 5, 3, 3], [3, 4, 0, 3, 3]],
                   [["det", "nsubj", "root", "det", "obj", "punct"], ["nsubj", "case", "root", "obl", "punct"]])


def test_parse_names_the_argument_at_fault(files):
    parser = fasttag.load(str(files[2]))
    with pytest.raises(ValueError, match="columns: 'head'"):
        parser.parse([["a"]], {"head": [["0"]]})
    with pytest.raises(ValueError, match="columns: upos"):
        parser.parse([["a", "b"]], {"upos": [["X"]]})


def test_every_parse_is_one_tree_whatever_the_input(files):
    parser = fasttag.load(str(files[2]))
    rng = random.Random(5)
    vocab = NOUNS + VERBS + ["of", "!", "."]
    words = [[rng.choice(vocab) for _ in range(rng.randrange(1, 40))] for _ in range(50)]
    heads, labels = parser.parse(words)
    for h, lab in zip(heads, labels):
        trees.check_tree(h)
        assert [x == "root" for x in lab] == [x == 0 for x in h]


def test_a_ud_pipeline_trains_the_parser_when_its_data_has_trees(files, tmp_path):
    train, test, _ = files
    pipe = Pipeline.train(str(train), epochs=3)
    assert list(pipe.components)[-1] == "dep"
    out = pipe.to_conllu("the dog sees a cat . dog sees often .")
    rows = [line.split("\t") for line in out.splitlines() if line and not line.startswith("#")]
    assert all(r[6] != "_" and r[7] != "_" for r in rows)
    result = pipe.evaluate(str(test))
    assert result["LAS"]["f1"] > 0.9


def test_pruning_is_chosen_on_dev_and_loses_at_most_its_bound(files):
    train, test, _ = files
    from fasttag.tasks import dep
    full = DependencyParser.train(str(train), epochs=3, verbose=False)
    chosen = DependencyParser.train(str(train), dev=str(test), epochs=3, verbose=False)
    assert full.meta["prune"] == 0.0 and chosen.meta["prune"] in (0.0,) + dep.PRUNE_STEPS
    best = max(h["dev_las"] for h in chosen.meta["history"])
    assert chosen.evaluate(str(test))["LAS"]["f1"] >= best - dep.PRUNE_LOSS - 1e-9
    if chosen.meta["prune"]:
        assert len(chosen.table) < len(full.table)
