"""The task model: one option table, one trainer, one store, one CLI for
every task.  CLI behaviour is tested through the real console script."""
import json
from pathlib import Path

import numpy as np
import pytest

import fasttag
from fasttag.model import modelfile
from fasttag.model import options
from fasttag.errors import InputError, ModelFormatError
from fasttag.model import registry
from fasttag.pipeline import Pipeline  # noqa: F401  (declares ``train ud``)
from fasttag.tasks import task_class

#: Every ``fasttag train`` task of the package, the UD pipeline's among them.
TASKS = {name: t for name, t in registry.train_commands().items() if t.cls.__module__.startswith("fasttag.")}

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLES = {"pos": DATA / "sample.conllu", "seg": DATA / "sample_zh_train.txt", "chunk": DATA / "sample_chunk.conll",
           "ner": DATA / "sample_ner.conll", "tok": DATA / "sample_tok.conllu",
           "lemma": DATA / "sample_lemma.conllu", "morph": DATA / "sample_lemma.conllu", "ud": DATA / "sample_ud.conllu",
           "dep": DATA / "sample_lemma.conllu"}

# a valid value other than the default for every training flag, and what
# the flag needs beside it
TRAIN_VALUES = {
    "epochs": ["3"], "seed": ["7"],
    "algorithm": {"pos": ["mira"], "seg": ["perceptron"], "tok": ["perceptron"], "chunk": ["perceptron"], "ner": ["perceptron"],
                  "lemma": ["mira"], "morph": ["mira"], "ud": ["mira"]},
    "k": ["2", "--algorithm", "mira"], "C": ["0.05", "--algorithm", "mira"],
    "decoder": ["greedy"], "tagdict_min_count": ["1"], "prune_k": ["2"],
    "format": ["conll"], "column": {"pos": ["xpos"], "chunk": ["1"], "ner": ["1"]},
    "word_column": ["1"], "feature_columns": {"chunk": [""], "ner": ["1,2"]}, "scheme": ["bioes"],
    "gazetteers": [f"PER={DATA / 'sample_gazetteer.txt'}"],
    "dictionary": [str(DATA / "sample_userdict.txt")], "folds": ["1"], "prune": ["0.5"],
    "threads": ["2"], "ensemble": ["2"], "clusters": [str(DATA / "sample_clusters.txt")],
    "ambiguity_classes": {"chunk": ["on"], "ner": ["off"]},
    "document_features": {"chunk": ["on"], "ner": ["on"]}, "runs": ["off"],
    "unlabeled": [str(DATA / "sample_zh_train.txt")],
    "init": "the task's baseline model", "allow_new_tags": [],       # the second without --init: refused
    "corpus": ["a corpus"], "licence": ["CC BY 4.0"], "components": ["tok,upos"],
}
BASE = ["--epochs", "2", "--quiet"]
#: Tasks whose ``--help`` was once a list of flags they then refused: every flag shown must take effect.
COMPOSITE = ("ud",)
#: Flags refused alone, by design: they need another one.
NEEDS_ANOTHER = ("allow_new_tags",)


#: Flags stored in the model as they are, by one code path for a task's
#: model and one for a pipeline's: tested on one of each.
META_FLAGS = {"corpus": ("pos", "ud"), "licence": ("pos", "ud")}


def _train_cases():
    for task in TASKS:
        for opt in options.for_cli(task, "train"):
            if task in META_FLAGS.get(opt.name, (task,)):
                yield task, opt.name


def test_every_training_flag_has_a_test_value():
    assert {name for _, name in _train_cases()} <= set(TRAIN_VALUES)


@pytest.fixture(scope="module")
def baselines(tmp_path_factory, run_cli):
    """The model of each task trained with the base options, and the same
    with k-best MIRA (the baseline of --k and --C)."""
    folder = tmp_path_factory.mktemp("baselines")
    out = {}
    for task in TASKS:
        for extra in ([], ["--algorithm", "mira"]):
            if extra and not options.BY_NAME["algorithm"].applies(task):
                continue            # a task with one learning rule (the parser)
            path = folder / f"{task}{len(extra)}.ftm"
            proc = run_cli("train", task, SAMPLES[task], "-o", path, *BASE, *extra)
            assert proc.returncode == 0, proc.stderr
            out[task, bool(extra)] = path.read_bytes()
    return out


def _header(data):
    return modelfile.loads(data)[0]


@pytest.mark.parametrize("task, name", list(_train_cases()))
def test_every_training_flag_takes_effect_or_is_refused(task, name, baselines, run_cli, tmp_path):
    """A flag the CLI accepts for a task changes the model it trains, or
    stops with exit code 2 and one line naming the flag's problem."""
    opt = options.BY_NAME[name]
    value = TRAIN_VALUES[name]
    value = value[task] if isinstance(value, dict) else value
    if name == "init":
        (tmp_path / "base.ftm").write_bytes(baselines[task, False])
        value = [str(tmp_path / "base.ftm")]
    path = tmp_path / "m.ftm"
    proc = run_cli("train", task, SAMPLES[task], "-o", path, *BASE, opt.flag, *value)
    if task in COMPOSITE and name not in NEEDS_ANOTHER:     # its help lists only what it takes
        assert proc.returncode == 0, proc.stderr
    if proc.returncode == 2:
        lines = proc.stderr.decode().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("fasttag: error:"), proc.stderr
        assert not path.exists()
        return
    assert proc.returncode == 0, proc.stderr
    mira = name in ("k", "C")
    assert path.read_bytes() != baselines[task, mira], f"{opt.flag} {value} changed nothing"


@pytest.mark.parametrize("task", list(TASKS))
def test_flags_of_other_tasks_are_refused(task, run_cli, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    own = {o.name for o in options.for_cli(task, "train")}
    foreign = [opt.flag for opt in options.OPTIONS
               if opt.parse is not None and "train" in opt.phases and opt.name not in own]

    def run(flag):          # each run is mostly interpreter start-up: a few at a time
        return flag, run_cli("train", task, SAMPLES[task], "-o", tmp_path / "m.ftm", "--quiet", flag, "1")
    with ThreadPoolExecutor(max_workers=4) as pool:
        for flag, proc in pool.map(run, foreign):
            assert proc.returncode == 2, (flag, proc.stderr)
    assert foreign and not (tmp_path / "m.ftm").exists()


@pytest.mark.parametrize("args, says", [
    (["--epochs", "0"], "--epochs must be an integer of at least 1"),
    (["--epochs", "-3"], "--epochs must be an integer of at least 1"),
    (["--algorithm", "mira", "--C", "-1"], "--C must be a positive number"),
    (["--algorithm", "mira", "--k", "0"], "--k must be an integer from 1 to 64"),
    (["--k", "3"], "--k applies to --algorithm mira only"),
    (["--seed", "-1"], "--seed must be an integer of at least 0"),
])
def test_invalid_values_are_refused_before_any_work(args, says, run_cli, tmp_path):
    # the training file does not exist: the option is checked first
    proc = run_cli("train", "pos", tmp_path / "missing.conllu", "-o", tmp_path / "m.ftm", *args)
    assert proc.returncode == 2
    assert says in proc.stderr.decode()


def test_python_options_are_checked_before_reading():
    with pytest.raises(InputError, match="epochs"):
        fasttag.Tagger.train("no such file.conllu", epochs=0)
    with pytest.raises(InputError, match="does not apply to segmenter"):
        fasttag.Segmenter.train("no such file.txt", decoder="greedy")
    with pytest.raises(TypeError, match="unexpected keyword argument 'epoch'"):
        fasttag.Tagger.train("no such file.conllu", epoch=3)
    with pytest.raises(InputError, match="applies to algorithm mira"):
        fasttag.SpanTagger.train("no such file", task="chunk", algorithm="perceptron", C=0.5)


def test_k_1_is_what_the_perceptron_uses():
    """The chunk task defaults to 3-best MIRA: asking for the perceptron
    with k=1 (a caller spelling out every option) is consistent, not an error."""
    model = fasttag.SpanTagger.train(DATA / "sample_ner.conll", task="chunk", algorithm="perceptron", k=1,
                                     epochs=1, verbose=False)
    assert (model.model.training_info["algorithm"], model.model.training_info["k"]) == ("perceptron", 1)


# ---------------------------------------------------------------- evaluation

@pytest.fixture(scope="module")
def models(baselines, tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    out = {}
    for task in TASKS:
        out[task] = folder / f"{task}.ftm"
        out[task].write_bytes(baselines[task, False])
    return out


@pytest.mark.parametrize("task", list(TASKS))
def test_scores_are_fractions_in_json_and_percentages_in_text(task, models, run_cli):
    cls, _ = task_class(task)
    proc = run_cli("eval", models[task], SAMPLES[task], "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert 0.0 < result[cls.primary] <= 1.0
    text = run_cli("eval", models[task], SAMPLES[task])
    assert text.returncode == 0 and b"%" in text.stdout
    assert f"{100 * result[cls.primary]:.2f}".encode() in text.stdout or cls.primary == "mean_f1"


EVAL_VALUES = {"format": ["conll"], "column": ["1"], "word_column": ["1"], "scheme": ["bioes"],
               "words": [str(DATA / "sample_userdict.txt")], "gold_tokens": []}


@pytest.mark.parametrize("task", list(TASKS))
@pytest.mark.parametrize("name", [o.name for o in options.OPTIONS if "eval" in o.phases and o.parse])
def test_every_eval_flag_takes_effect_or_is_refused(task, name, models, run_cli):
    opt = options.BY_NAME[name]
    plain = run_cli("eval", models[task], SAMPLES[task], "--json")
    proc = run_cli("eval", models[task], SAMPLES[task], "--json", opt.flag, *EVAL_VALUES[name])
    if proc.returncode == 2:
        assert len(proc.stderr.decode().strip().splitlines()) == 1, proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    drop = ("seconds", "tokens_per_second", "chars_per_second")
    a, b = (json.loads(p.stdout) for p in (plain, proc))
    assert {k: v for k, v in a.items() if k not in drop} != {k: v for k, v in b.items() if k not in drop}, \
        f"{opt.flag} changed nothing for {task}"


# ---------------------------------------------------------------- the store

def _stamped(data, **changes):
    header, arrays = modelfile.loads(data)
    header.pop("arrays", None)
    whole = header
    if header["kind"] == "pipeline":              # a pipeline's parts are stamped, each as its own file
        header = header["parts"]["upos"]
    for key, value in changes.items():
        if key == "version":
            header["featurizer"] = dict(header["featurizer"], version=value)
        else:
            header[key] = value
    return modelfile.dumps(whole, arrays)


def _linear_bytes():
    from fasttag.linear import AveragedPerceptron
    return AveragedPerceptron(max_iter=2).fit([["w=a"], ["w=b"]], ["x", "y"]).to_bytes()


@pytest.mark.parametrize("task", list(TASKS) + ["linear"])
def test_a_changed_featurizer_version_or_hash_is_refused(task, baselines):
    data = _linear_bytes() if task == "linear" else baselines[task, False]
    fasttag.loads(data)                          # as written: loads
    stamped = _header(data)
    stamped = stamped["parts"]["upos"] if stamped["kind"] == "pipeline" else stamped
    version = stamped["featurizer"]["version"]
    with pytest.raises(ModelFormatError, match=f"version {version + 1} of the"):
        fasttag.loads(_stamped(data, version=version + 1))
    with pytest.raises(ModelFormatError, match="hashed with"):
        fasttag.loads(_stamped(data, hash="fnv1a/v0"))
    header = _header(data)
    header.pop("arrays", None)
    del (header["parts"]["upos"] if header["kind"] == "pipeline" else header)["hash"]
    with pytest.raises(ModelFormatError, match="hashed with None"):
        fasttag.loads(modelfile.dumps(header, modelfile.loads(data)[1]))


def test_a_linear_model_saved_and_loaded_through_fasttag_load(tmp_path):
    from fasttag.linear import AveragedPerceptron
    X = [["w=the", "suf=he"], ["w=dog", "suf=og"], ["w=a"], ["w=cat", "suf=at"]]
    y = ["DET", "NOUN", "DET", "NOUN"]
    est = AveragedPerceptron(max_iter=5, random_state=0).fit(X, y)
    est.save(tmp_path / "lin.ftm")
    back = fasttag.load(tmp_path / "lin.ftm")
    assert type(back) is AveragedPerceptron
    assert back.predict(X).tolist() == est.predict(X).tolist()
    assert back.to_bytes() == est.to_bytes()
    assert _header(est.to_bytes())["featurizer"] == {"name": "hashed-features", "version": 1}


@pytest.mark.parametrize("task", list(TASKS))
def test_a_trained_model_predicts_as_its_saved_file_does(task):
    """Weights are kept at the precision of model files, so saving never
    changes a prediction, and a reloaded model saves the same bytes."""
    cls, kwargs = task_class(task)
    model = cls.train(SAMPLES[task], epochs=3, verbose=False, **kwargs)
    back = fasttag.loads(model.to_bytes())
    assert back.to_bytes() == model.to_bytes()
    for part, again in zip(getattr(model, "parts", {"": model}).values(), getattr(back, "parts", {"": back}).values()):
        if hasattr(part, "model"):          # a sequence model's transitions (the parser has none)
            assert np.array_equal(again.model.trans, part.model.trans)
    assert _same_scores(model.evaluate(SAMPLES[task]), back.evaluate(SAMPLES[task]))


def _same_scores(a, b):
    drop = ("seconds", "tokens_per_second", "chars_per_second", "words_per_second")
    return {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}


def test_tag_commands_refuse_other_model_kinds(models, run_cli):
    proc = run_cli("tag", "-m", models["seg"], input=b"a b\n")
    assert proc.returncode == 2 and b"use 'fasttag segment'" in proc.stderr
    proc = run_cli("segment", "-m", models["pos"], input="我们\n".encode())
    assert proc.returncode == 2 and b"use 'fasttag tag'" in proc.stderr
    proc = run_cli("tokenize", "-m", models["pos"], input=b"a b\n")
    assert proc.returncode == 2


def test_tokenize_command_and_output_file_is_all_or_nothing(models, run_cli, tmp_path):
    out = tmp_path / "out.txt"
    proc = run_cli("tokenize", "-m", models["tok"], "-o", out, input=b"Hello there. How are you?\n")
    assert proc.returncode == 0, proc.stderr
    words = out.read_text().split()
    assert "".join(words) == "Hellothere.Howareyou?"
    # a bad byte on line 2: an error naming the line, no output file left
    bad = tmp_path / "bad.txt"
    proc = run_cli("tag", "-m", models["pos"], "-o", bad, input=b"one line\ntwo \xff\n")
    assert proc.returncode == 2 and b"<stdin>:2: invalid UTF-8" in proc.stderr
    assert not bad.exists() and not list(tmp_path.glob(".fasttag-*"))


def test_training_settings_are_one_typed_object_the_model_records():
    """The options resolve once into :class:`fasttag.model.training.Settings`
    (frozen), and the model records its update rule unchanged: training
    through the loop with those settings is training through ``train``."""
    import dataclasses
    from fasttag.model import training
    settings = training.Settings.of(options.resolve("ner", "train", {"epochs": 2, "seed": 4}))
    assert (settings.algorithm, settings.k, settings.C, settings.epochs, settings.seed) == ("mira", 3, 1.0, 2, 4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.k = 1
    tagger = fasttag.Tagger.train(SAMPLES["pos"], epochs=2, seed=4, algorithm="mira", k=2, C=0.5, verbose=False)
    info = tagger.model.training_info
    assert training.Settings.of(info).rule == {"algorithm": "mira", "k": 2, "C": 0.5}
    again = fasttag.Tagger.train(SAMPLES["pos"], epochs=1, verbose=False)
    data = again._encode(again._read(SAMPLES["pos"], {"format": None, "column": None, "word_column": 0},
                                     "training data"), training=True)
    training.fit(again.model, data, settings=training.Settings.of(info), verbose=False)
    assert again.to_bytes() == tagger.to_bytes()
