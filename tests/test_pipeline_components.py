"""The component contract, from the outside: a component defined in this
file (it fills MISC with each word's length class) is trained in a
pipeline, saved, loaded, run on raw text by the real ``fasttag tag --to
conllu`` and evaluated by ``fasttag eval``, with no edit of the package.

The console script finds the component as an installed plugin would be
found: through an entry point of the group ``fasttag.components`` (here a
``.dist-info`` folder on the script's path naming this module)."""
import json
import os
import subprocess
from pathlib import Path

import pytest

import fasttag
from fasttag.errors import ModelFormatError
from fasttag.model import modelfile
from fasttag.pipeline import ENTRY_POINTS, Component, Pipeline, register
from fasttag.text.conll18 import Score

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "data" / "sample_ud.conllu"


def _length_item(misc):
    """The ``Len=`` item of a MISC value, or None."""
    return next((x for x in misc.split("|") if x.startswith("Len=")), None)


@register("length_class")
class LengthClass(Component):
    """Each word's length class in MISC: ``Len=Short`` below the median
    length of the training words, ``Len=Long`` from it on."""
    fills = ("misc",)
    metrics = ("LenClass",)

    def __init__(self, cut):
        self.cut = cut

    @classmethod
    def annotated(cls, treebank):
        return True                 # every treebank's forms teach it

    @classmethod
    def learn(cls, train, dev=None, *, init=None, verbose=None, **options):
        lengths = sorted(len(w) for s in train.sentences for w in s.words)
        return cls(lengths[len(lengths) // 2])

    def value(self, word):
        return "Len=Short" if len(word) < self.cut else "Len=Long"

    def fill(self, words, columns):
        assert columns["upos"], "the components before it filled their columns"
        return {"misc": [[self.value(w) for w in sentence] for sentence in words]}

    def to_parts(self):
        return {"kind": "length_class", "cut": self.cut}, {}

    @classmethod
    def from_parts(cls, header, arrays):
        cut = header.get("cut")
        if type(cut) is not int or not 1 <= cut <= 1000 or arrays:
            raise ModelFormatError(f"the length class's cut is not an int from 1 to 1000: {cut!r}")
        return cls(cut)

    def scores(self, gold, system, pairs):
        g, s = gold.column("misc"), system.column("misc")
        correct = sum(_length_item(g[i]) == _length_item(s[j]) for i, j in pairs)
        return {"LenClass": Score(correct, len(g), len(s), len(pairs))}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """The pipeline tok, upos, length_class of the sample, saved; the
    sample with each word's length class in MISC, as gold."""
    folder = tmp_path_factory.mktemp("component")
    pipe = Pipeline.train(SAMPLE, epochs=3, verbose=False, components=["tok", "upos", LengthClass])
    path = folder / "len.ftm"
    pipe.save(path)
    comp = pipe.components["length_class"]
    lines = []
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) == 10 and fields[0].isdigit():
            misc = [x for x in fields[9].split("|") if x != "_"] + [comp.value(fields[1])]
            fields[9] = "|".join(misc)
        lines.append("\t".join(fields))
    gold = folder / "gold.conllu"
    gold.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return pipe, path, gold


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory, cli_command):
    """The console script's environment, with this module installed as the
    plugin that declares ``length_class``."""
    site = tmp_path_factory.mktemp("site")
    info = site / "fasttag_length_class-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fasttag-length-class\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINTS}]\nlength_class = {Path(__file__).stem}:LengthClass\n")
    command, env = cli_command
    return command, dict(env, PYTHONPATH=os.pathsep.join([env["PYTHONPATH"], str(site), str(HERE)]))


def _run(plugin_env, *args, cwd):
    command, env = plugin_env
    return subprocess.run(command + [str(a) for a in args], capture_output=True, cwd=cwd, env=env, timeout=300)


def test_the_new_component_is_trained_saved_and_loaded(trained):
    pipe, path, _ = trained
    assert list(pipe.components) == ["tok", "upos", "length_class"] and pipe.columns == ["upos", "misc"]
    header, arrays = modelfile.read(path)
    assert header["parts"]["length_class"] == {"kind": "length_class", "cut": pipe.components["length_class"].cut}
    assert not any(k.startswith("length_class/") for k in arrays)
    again = fasttag.load(path)
    assert repr(again) == "Pipeline(tok, upos, length_class)" and again.to_bytes() == pipe.to_bytes()
    text = "The children walked home yesterday."
    assert again.to_conllu(text) == pipe.to_conllu(text)
    words = [w for s in again.annotate(text).sentences for w in s.words]
    assert [w.misc for w in words] == [pipe.components["length_class"].value(w.form) for w in words]
    assert [w.upos for w in words] == pipe.parts["upos"].tag([w.form for w in words])


def test_a_corrupt_part_of_the_new_component_is_refused(trained, tmp_path):
    pipe, _, _ = trained
    header, arrays = pipe._parts()
    header["parts"]["length_class"]["cut"] = "7"
    (tmp_path / "bad.ftm").write_bytes(modelfile.dumps(header, arrays))
    with pytest.raises(ModelFormatError, match="the pipeline's length_class part: the length class's cut is not"):
        fasttag.load(tmp_path / "bad.ftm")


def test_the_console_script_tags_raw_text_and_evaluates_with_the_new_component(trained, plugin_env, tmp_path):
    pipe, path, gold = trained
    text = "The old man sees a book. I don't like it.\n"
    (tmp_path / "in.txt").write_text(text, encoding="utf-8")
    proc = _run(plugin_env, "tag", "-m", path, "--to", "conllu", tmp_path / "in.txt", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    assert out == pipe.to_conllu(text)
    rows = [line.split("\t") for line in out.splitlines() if line and line[0].isdigit() and "-" not in line.split("\t")[0]]
    assert rows and all(_length_item(r[9]) == pipe.components["length_class"].value(r[1]) for r in rows)
    assert "SpaceAfter=No" in out                       # the spacing items joined to the component's MISC
    proc = _run(plugin_env, "eval", path, gold, "--gold-tokens", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    result = json.loads(proc.stdout)
    assert result["LenClass"]["f1"] == 1.0 and result["LenClass"]["aligned_accuracy"] == 1.0
    assert {k for k, v in result.items() if isinstance(v, dict) and "f1" in v} == \
        {"Tokens", "Sentences", "Words", "UPOS", "LenClass"}
    assert result["lenclass"] == 1.0 and set(result["scores"]) == {"Tokens", "Sentences", "Words", "UPOS", "LenClass"}
    raw = _run(plugin_env, "eval", path, gold, "--json", cwd=tmp_path)
    assert raw.returncode == 0, raw.stderr.decode()
    assert json.loads(raw.stdout)["LenClass"]["f1"] == pytest.approx(pipe.evaluate(gold)["LenClass"]["f1"])
    proc = _run(plugin_env, "tag", "-m", path, "--to", "conllu", gold, cwd=tmp_path)   # CoNLL-U in: MISC filled
    assert proc.returncode == 0, proc.stderr.decode()
    def misc_items(lines):
        return [sorted(line.split("\t")[9].split("|")) for line in lines if "\t" in line]
    assert misc_items(proc.stdout.decode().splitlines()) == misc_items(gold.read_text().splitlines())


def test_without_the_plugin_the_model_is_refused_in_one_line(trained, cli_command, tmp_path):
    _, path, _ = trained
    command, env = cli_command
    proc = subprocess.run(command + ["tag", "-m", str(path), "--to", "conllu", "-"], input=b"Hi.\n",
                          capture_output=True, cwd=tmp_path, env=env, timeout=300)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and len(err.splitlines()) == 1, err
    assert "the pipeline has a part 'length_class' this fasttag does not know" in err


def test_components_are_checked():
    with pytest.raises(ValueError, match="'length_class' is registered twice"):
        register("length_class")(type("Other", (LengthClass,), {}))
    with pytest.raises(ValueError, match="fills 'gloss', not one of lemma, upos"):
        register("gloss")(type("Gloss", (Component,), {"fills": ("gloss",)}))
    with pytest.raises(TypeError, match="is not a fasttag.pipeline.Component subclass"):
        register("plain")(object)
    with pytest.raises(fasttag.InputError, match="unknown component 'nope': one of tok, upos"):
        Pipeline.train(SAMPLE, epochs=1, verbose=False, components=["tok", "nope"])


def test_one_model_is_a_pipeline_of_one_component():
    tagger = fasttag.load()
    one = Pipeline.of(tagger)
    assert list(one.components) == ["upos"] and one.parts["upos"] is tagger and Pipeline.of(one) is one
    assert one.tag_words([["I", "saw", "her", "duck"]]) == {"upos": [tagger.tag(["I", "saw", "her", "duck"])]}
    assert list(Pipeline.of(tagger, "xpos").components) == ["xpos"]
    assert one.commands == ("tag",) and one.for_command("tag") is one
    ud = fasttag.load("en-ud")
    assert ud.commands == ("tag", "tokenize") and ud.for_command("tokenize") is ud.tokenizer
    with pytest.raises(fasttag.InputError, match="not of a spans model"):
        Pipeline.of(fasttag.load("en-ner"))


def test_the_old_module_name_still_works_with_a_warning():
    with pytest.warns(DeprecationWarning, match="fasttag.tasks.ud.Pipeline moved to fasttag.pipeline.Pipeline"):
        from fasttag.tasks.ud import Pipeline as old
    assert old is Pipeline
    with pytest.warns(DeprecationWarning):
        from fasttag.tasks import Pipeline as older
    assert older is Pipeline and fasttag.Pipeline is Pipeline
