"""The component contract, held by every registered component: what it
declares, what it learns from a treebank, what it fills or tokenizes, and
its part of the model file read back to the same predictions.  A new
built-in component is covered by being registered."""
from pathlib import Path

import numpy as np
import pytest

import fasttag
from fasttag.pipeline import Component, Treebank, component_class, registered
from fasttag.pipeline.builtin import DEFAULT_COMPONENTS
from fasttag.text.conllu import FILLED_COLUMNS

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.conllu"
#: every component the package registers (a test module may register its own: not these tests')
COMPONENTS = [n for n in registered() if component_class(n).__module__.startswith("fasttag.")]
TEXT = "I don't like green eggs. Sam reads books."


def test_every_built_in_component_is_registered():
    assert set(DEFAULT_COMPONENTS) <= set(COMPONENTS)


@pytest.fixture(scope="module")
def treebank():
    return Treebank.read(str(SAMPLE))


@pytest.fixture(scope="module")
def learned(treebank):
    """Each registered component learned from the sample, in the default order
    (a component's ``reads`` are filled by those before it)."""
    out = {}
    for name in COMPONENTS:
        cls = component_class(name)
        if cls.annotated(treebank):
            out[name] = cls.learn(treebank, None, epochs=2, verbose=False)
    return out


@pytest.mark.parametrize("name", COMPONENTS)
def test_the_declaration(name):
    cls = component_class(name)
    assert issubclass(cls, Component) and cls.name == name
    assert set(cls.fills) <= set(FILLED_COLUMNS) and set(cls.reads) <= set(FILLED_COLUMNS)
    assert not set(cls.reads) & set(cls.fills)
    assert cls.tokenizes == (not cls.fills), "a component fills columns or tokenizes, not both or neither"
    assert all(isinstance(m, str) and m for m in cls.metrics)


@pytest.mark.parametrize("name", COMPONENTS)
def test_it_learns_from_the_sample_and_predicts_what_it_declares(name, treebank, learned):
    cls = component_class(name)
    assert cls.annotated(treebank), f"the sample annotates every built-in column; {name} says it cannot learn"
    comp = learned[name]
    assert isinstance(comp, cls) and comp.model is not None
    if cls.tokenizes:
        sentences = comp.tokenize(TEXT)
        assert sentences and all(TEXT[t.start:t.end] == t.form for s in sentences for t in s)
        assert "".join(w for s in sentences for t in s for w in t.words).replace("n't", "") \
            == "".join(TEXT.split()).replace("n't", "")
        return
    words = [s.words for s in treebank.sentences]
    given = {c: treebank.column(c) for c in cls.reads}
    filled = comp.fill(words, given)
    assert set(filled) == set(cls.fills)
    for column, values in filled.items():
        assert [len(v) for v in values] == [len(w) for w in words], column
        assert all(isinstance(x, str) and x for v in values for x in v), column
    # it learned the sample: most of the gold values back
    for column, values in filled.items():
        gold = treebank.column(column)
        right = sum(a == b for v, g in zip(values, gold) for a, b in zip(v, g))
        assert right >= 0.5 * sum(len(g) for g in gold), (column, right)


@pytest.mark.parametrize("name", COMPONENTS)
def test_its_part_of_the_model_file_reads_back_to_the_same_predictions(name, treebank, learned):
    cls, comp = component_class(name), learned[name]
    header, arrays = comp.to_parts()
    assert isinstance(header, dict) and all(isinstance(a, np.ndarray) for a in arrays.values())
    again = cls.from_parts(header, arrays)
    header2, arrays2 = again.to_parts()
    assert header2 == header and arrays2.keys() == arrays.keys()
    assert all(np.array_equal(arrays[k], arrays2[k]) for k in arrays)
    if cls.tokenizes:
        assert again.tokenize(TEXT) == comp.tokenize(TEXT)
    else:
        words = [s.words for s in treebank.sentences]
        given = {c: treebank.column(c) for c in cls.reads}
        assert again.fill(words, given) == comp.fill(words, given)
    with pytest.raises(fasttag.ModelFormatError):
        cls.from_parts({**header, "kind": "no such kind"}, arrays)


@pytest.mark.parametrize("name", COMPONENTS)
def test_in_a_pipeline_it_fills_its_columns_of_raw_text(name, learned):
    """The pipeline knows it only through the contract: its columns come
    out of ``to_conllu`` filled (a tokenizer alone gives the tokens)."""
    reads = learned[name].reads
    parts = {n: c for n, c in learned.items()
             if not c.tokenizes and (n == name or n == "upos" or set(c.fills) & set(reads))}
    pipe = fasttag.Pipeline(learned["tok"], parts)
    loaded = fasttag.loads(pipe.to_bytes())
    conllu = loaded.to_conllu(TEXT)
    assert conllu == pipe.to_conllu(TEXT)
    rows = [line.split("\t") for line in conllu.splitlines() if line and not line.startswith("#")]
    fields = {"lemma": 2, "upos": 3, "xpos": 4, "feats": 5, "head": 6, "deprel": 7}
    for column in component_class(name).fills:
        assert all(r[fields[column]] not in ("", "_") or column == "feats" for r in rows if "-" not in r[0])
    assert [r[1] for r in rows if "-" not in r[0]][:4] == ["I", "do", "n't", "like"]
