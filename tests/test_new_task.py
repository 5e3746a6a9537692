"""A task defined here, outside the package, with no edit of it: declared
once, it trains, tags, evaluates, saves and loads through the Python API
and the ``fasttag train``, ``tag`` and ``eval`` commands.

The task tags each token of pretokenized text (one sentence a line) as
capitalised or not, so its text files carry their own gold tags.  The
commands run in this process (:func:`fasttag.cli.main`): the task lives in
this file, which another process would not import."""
import json
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

import fasttag
from fasttag.cli import main
from fasttag.errors import InputError
from fasttag.features.words import POS_TEMPLATES, WordFeaturizer
from fasttag.model import registry
from fasttag.model.sequence import SequenceModel
from fasttag.tasks.base import DECLARED, HOOKS, SequenceTask
from fasttag.text import formats, metrics, output


def capitalised(word):
    return "cap" if word[:1].isupper() else "low"


@registry.task("caps", title="capitals tagger", help="tag capitalised tokens of pretokenized text",
               options=("templates", "tag set"), defaults={"epochs": 3})
class CapitalsTagger(SequenceTask):
    """Per token: "cap" when it starts with a capital letter, else "low"."""

    kind = "test-capitals"
    featurizer = ("word", 1)
    primary = "accuracy"
    commands = ("tag",)

    @classmethod
    def _read(cls, data, opts, what):
        sentences = (line.split() for line in formats.read_lines(data, what))
        return [(words, [capitalised(w) for w in words]) for words in sentences if words]

    @classmethod
    def _build(cls, examples, opts):
        featurizer = WordFeaturizer()
        return cls(SequenceModel(["cap", "low"], featurizer, opts["templates"] or POS_TEMPLATES,
                                 decoder=opts["decoder"]))

    def _encode(self, examples, training=False):
        index = self.model.tag_index
        return [(words, None, None if tags is None else [index[t] for t in tags]) for words, tags in examples]

    def _decode(self, examples, ids):
        return [[self.model.tags[i] for i in row.tolist()] for row in ids]

    def _score(self, examples, outputs, opts):
        return metrics.score_tagging([tags for _, tags in examples], outputs)

    def tag_sents(self, sentences):
        return self._predict([(list(words), None) for words in sentences])

    def _records(self, source, json, n_threads, format=None):
        if format != "text":
            raise InputError("the capitals tagger reads pretokenized text only: option format='text'")

        def records():
            for number, line in enumerate(formats.read_lines(source, "input"), 1):
                words = line.split()
                yield output.Record(words, self.tag_sents([words])[0] if words else [], line=number)
        return records(), {"style": "json" if json else "tagged"}

    @classmethod
    def _featurizer_from(cls, spec, header, arrays, meta):
        return WordFeaturizer()


def _sentences(seed, n):
    """``n`` sentences of words never seen elsewhere (each draw its own),
    about a third of them capitalised."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        words = ["".join(rnd.choices(string.ascii_lowercase, k=rnd.randint(2, 9))) for _ in range(rnd.randint(3, 12))]
        out.append(" ".join(w.capitalize() if rnd.random() < 0.35 else w for w in words))
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("caps")
    files = {}
    for name, seed, n in (("train", 1, 300), ("dev", 2, 40), ("test", 3, 60)):
        files[name] = folder / f"{name}.txt"
        files[name].write_text("\n".join(_sentences(seed, n)) + "\n", encoding="utf-8")
    return files


def test_the_task_overrides_only_the_hooks():
    shared = {name for name in vars(SequenceTask) if not name.startswith("__")}
    assert {"_read", "_build", "_encode", "_decode", "_score", "_records"} <= set(HOOKS)
    assert {name for name in vars(CapitalsTagger) if name in shared} <= set(HOOKS) | set(DECLARED)


def test_the_declaration_reaches_the_store_the_options_and_the_commands():
    from fasttag.model import options
    assert registry.TASKS["caps"].cls is CapitalsTagger
    assert registry.model_class("test-capitals") is CapitalsTagger
    assert "caps" in registry.train_commands()
    opts = options.resolve("caps", "train", {})
    assert {"epochs", "seed", "algorithm", "templates", "decoder", "allow_new_tags"} <= set(opts)
    assert not set(opts) & {"column", "dictionary", "gazetteers", "max_sentences", "clusters", "prune_k"}
    assert opts["epochs"] == 3 and opts["algorithm"] == "perceptron"        # its own default, the table's
    with pytest.raises(InputError, match="option clusters does not apply to capitals tagger models"):
        CapitalsTagger.train(["A b"], clusters={"a": "0"})                    # refused, never ignored
    with pytest.raises(ValueError, match="declared twice"):
        registry.model_kind("test-capitals")(type("Other", (), {}))


def test_python_train_evaluate_save_and_load(corpus, tmp_path):
    model = CapitalsTagger.train(corpus["train"], dev=corpus["dev"], verbose=False, seed=1)
    result = model.evaluate(corpus["test"])
    assert result["accuracy"] >= 0.99 and result["tokens"] > 300
    words = "Alpha beta Gamma delta".split()
    assert model.tag_sents([words]) == [["cap", "low", "cap", "low"]]
    model.save(tmp_path / "caps.ftm")
    back = fasttag.load(tmp_path / "caps.ftm")
    assert type(back) is CapitalsTagger
    assert back.to_bytes() == model.to_bytes()
    test = [line.split() for line in corpus["test"].read_text().splitlines()]
    assert back.tag_sents(test) == model.tag_sents(test)
    assert fasttag.loads(model.to_bytes()).tag_sents(test) == model.tag_sents(test)


def test_the_commands_train_tag_and_eval_it(corpus, tmp_path, capsys):
    path = tmp_path / "caps.ftm"
    assert main(["train", "caps", str(corpus["train"]), "--dev", str(corpus["dev"]), "-o", str(path),
                 "--epochs", "4", "--quiet"]) == 0
    model = fasttag.load(path)
    info = model.model.training_info
    assert type(model) is CapitalsTagger and info["epochs"] == 4 and info["dev_score"] >= 0.99
    capsys.readouterr()

    tagged = tmp_path / "tagged.txt"
    source = tmp_path / "input.txt"
    source.write_text("Zorvex quibbled over Plimth\nnoxu Yrrt\n", encoding="utf-8")
    assert main(["tag", "-m", str(path), "--pretokenized", str(source), "-o", str(tagged)]) == 0
    assert tagged.read_text(encoding="utf-8") == "Zorvex/cap quibbled/low over/low Plimth/cap\nnoxu/low Yrrt/cap\n"

    assert main(["eval", str(path), str(corpus["test"]), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["accuracy"] >= 0.99 and result["tokens"] > 300
    assert main(["eval", str(path), str(corpus["test"])]) == 0
    assert capsys.readouterr().out.startswith("accuracy ")


def test_the_commands_refuse_what_the_task_does_not_take(corpus, tmp_path, capsys):
    path = tmp_path / "caps.ftm"
    with pytest.raises(SystemExit) as exc:          # a flag of another task: a usage error
        main(["train", "caps", str(corpus["train"]), "-o", str(path), "--clusters", "x.txt"])
    assert exc.value.code == 2 and not path.exists()
    capsys.readouterr()
    assert main(["train", "caps", str(corpus["train"]), "-o", str(path), "--quiet", "--epochs", "1"]) == 0
    assert main(["segment", "-m", str(path), str(corpus["test"])]) == 2         # its models tag with `tag`
    assert "model, which 'fasttag segment' does not run: use 'fasttag tag'" in capsys.readouterr().err


def test_a_file_of_an_unknown_kind_is_refused_as_before():
    from fasttag.errors import ModelFormatError
    from fasttag.model import modelfile
    for kind in ("no-such-kind", None, ["a list"]):
        with pytest.raises(ModelFormatError, match=r"^unknown fasttag model kind "):
            fasttag.loads(modelfile.dumps({"kind": kind}, {}))


def test_the_declarations_leave_import_and_help_light():
    """``import fasttag`` and the command line's parser import no task
    module and no compiled code: only ``fasttag train`` needs the tasks."""
    code = ("import sys, fasttag, fasttag.cli; fasttag.cli.build_parser(tasks=False); "
            "print(sorted(m for m in sys.modules if m.startswith(('fasttag.tasks', 'fasttag._core', "
            "'fasttag.linear'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(fasttag.__file__).resolve().parents[1])
    assert proc.stdout.strip() == "[]"
