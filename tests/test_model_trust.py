"""A model file may come from anyone: loading checks everything the model
will use, and a file that loads works in every way its kind allows.

Each case edits a real model file (tag names, template counts, the array
table, the header's size, training settings, an MLP's inputs) as a lying
file could, and loads it through the public loaders and the console
script: a clear ModelFormatError (exit status 2, one line), never a
traceback, a MemoryError, or output that a tag name breaks.
"""
import json
import pickle
import re
import struct
import zlib

import numpy as np
import pytest

import fasttag
from fasttag import ModelFormatError, Tagger
from fasttag.model import modelfile

WORDS = "the dog cat saw a big red barks runs ran".split()


@pytest.fixture(scope="module")
def tagger():
    pairs = [([WORDS[(i + j) % len(WORDS)] for j in range(4)], [["A", "B", "C"][(i + j) % 3] for j in range(4)])
             for i in range(30)]
    return Tagger.train(pairs, epochs=2, seed=1, verbose=False)


def edited(model, edit):
    """The bytes of ``model`` after ``edit(header, arrays)``."""
    header, arrays = modelfile.loads(model.to_bytes())
    edit(header, arrays)
    return modelfile.dumps(header, arrays)


def container(header, arrays, shapes=None):
    """A model file written by hand, so that it can lie: ``shapes`` replaces
    the shapes the array table records."""
    specs, chunks, offset = [], [], 0
    for name in sorted(arrays):
        raw = np.ascontiguousarray(arrays[name]).tobytes()
        specs.append({"name": name, "dtype": arrays[name].dtype.str, "shape": list(arrays[name].shape),
                      "offset": offset, "nbytes": len(raw), "crc32": zlib.crc32(raw)})
        specs[-1]["shape"] = (shapes or {}).get(name, specs[-1]["shape"])
        chunks.append(raw + b"\x00" * (-len(raw) % 8))
        offset += len(raw) + (-len(raw) % 8)
    head = json.dumps(dict(header, arrays=specs)).encode()
    head += b" " * (-(20 + len(head)) % 8)
    body = struct.pack("<8sIQ", modelfile.MAGIC, modelfile.FORMAT_VERSION, len(head)) + head + b"".join(chunks)
    return body + struct.pack("<I", zlib.crc32(body))


def refused(data, *words, tmp_path=None):
    """``data`` is refused with a ModelFormatError saying ``words`` by
    every loader (bytes, path, pickle's path); returns the message."""
    with pytest.raises(ModelFormatError) as info:
        fasttag.loads(data)
    message = str(info.value)
    for w in words:
        assert w in message, message
    if tmp_path is not None:
        path = tmp_path / "bad.ftm"
        path.write_bytes(data)
        with pytest.raises(ModelFormatError, match=re.escape(str(path))):
            fasttag.load(path)
    return message


# ---------------------------------------------------------------- tag names

BAD_TAGS = ["NOUN\n1\tinjected\t_\tX", "A B", "A\tB", "\x1b[31mRED", "A\x00", "\udc80", "", "A\u2028B", "\x85"]


@pytest.mark.parametrize("bad", BAD_TAGS, ids=ascii)
def test_a_tag_name_training_refuses_is_refused_at_load(tagger, bad, tmp_path):
    def edit(header, arrays):
        header["tags"][1] = bad
    message = refused(edited(tagger, edit), "tags[1]", tmp_path=tmp_path)
    assert message.isascii() and "\n" not in message
    with pytest.raises(fasttag.InputError, match="a tag must be a non-empty string"):
        Tagger.train([(["a", "b"], ["A", bad])], epochs=1, verbose=False)


def test_span_training_refuses_control_characters_in_tags():
    from fasttag import SpanTagger
    with pytest.raises(fasttag.InputError, match="control character U\\+001B"):
        SpanTagger.train([(["Anna", "ran"], ["B-PER\x1b", "O"])], epochs=1, verbose=False)


@pytest.mark.parametrize("bad", ["NOUN\n1\tinjected\t_\tX", "\udc80"], ids=ascii)
def test_tag_and_inspect_refuse_a_model_with_a_bad_tag_in_one_line(tagger, bad, run_cli, tmp_path):
    """The injected tag once wrote an extra CoNLL-U line; the surrogate gave
    a UnicodeEncodeError traceback."""
    def edit(header, arrays):
        header["tags"][0] = bad
    path = tmp_path / "bad.ftm"
    path.write_bytes(edited(tagger, edit))
    src = tmp_path / "in.txt"
    src.write_text("the dog barks\n", encoding="utf-8")
    for args in (["tag", "-m", path, "--format", "conllu", src], ["tag", "-m", path, src], ["inspect", path]):
        r = run_cli(*args)
        err = r.stderr.decode("utf-8", "replace")
        assert r.returncode == 2 and r.stdout == b"", (args, r.stdout, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "tags[0]" in err, err


# ---------------------------------------------------------------- sizes

def test_templates_beyond_the_bound_are_refused(tagger):
    """300,000 templates in a 5 MB file once needed 21-76 GiB to tag."""
    def edit(header, arrays):
        header["templates"] = header["templates"] + [f"word[{i}]|lower[{-i}]" for i in range(1, 1100)]
    data = edited(tagger, edit)
    refused(data, "feature templates", "1024")
    class Lying:           # a pickle of a model holds the model file's bytes: these
        def __reduce__(self):
            rebuild, (cls, _, run_only) = tagger.__reduce__()
            return rebuild, (cls, data, run_only)
    with pytest.raises(ModelFormatError, match="feature templates"):
        pickle.loads(pickle.dumps(Lying()))


def test_training_refuses_more_templates_than_loading_reads():
    with pytest.raises(ValueError, match="at most 1024"):
        Tagger.train([(["a", "b"], ["A", "B"])], epochs=1, verbose=False,
                     templates=[f"word[{i}]" for i in range(-600, 600)])


@pytest.mark.parametrize("shape", [[0, 2 ** 62], [2 ** 62, 0], [0, 0, 2 ** 40]])
def test_an_empty_array_with_a_huge_dimension_is_a_format_error_on_every_path(tagger, shape, tmp_path):
    header, arrays = modelfile.loads(tagger.to_bytes())
    arrays["extra"] = np.zeros(0, np.float32)
    data = container(header, arrays, shapes={"extra": shape})
    with pytest.raises(ModelFormatError, match="'extra' has a dimension larger than the file"):
        modelfile.loads(data)
    refused(data, "'extra'", tmp_path=tmp_path)
    nltk = pytest.importorskip("fasttag.nltk")
    with pytest.raises(ModelFormatError, match="'extra'"):
        nltk.PerceptronTagger(model=str(tmp_path / "bad.ftm"))


def test_a_header_beyond_the_bound_is_refused_and_never_written(tagger):
    """A 64 MB header once took 1.7 GB to parse."""
    header, arrays = modelfile.loads(tagger.to_bytes())
    header["meta"]["corpus"] = "x" * (modelfile.MAX_HEADER + 8)
    with pytest.raises(ValueError, match="header"):
        modelfile.dumps(header, arrays)
    data = container(header, arrays)
    refused(data, "a header of", f"{modelfile.MAX_HEADER:,}")


def test_a_header_of_too_many_lists_is_refused_and_never_written(tagger):
    """5 million empty lists (15 MB) once took 20 s to parse."""
    header, arrays = modelfile.loads(tagger.to_bytes())
    header["meta"]["corpus"] = [[]] * (modelfile.MAX_HEADER_CONTAINERS + 1)
    with pytest.raises(ValueError, match="lists and objects"):
        modelfile.dumps(header, arrays)
    refused(container(header, arrays), "lists and objects")


# ---------------------------------------------------------------- training settings

@pytest.mark.parametrize("where, key, value, words", [
    ("meta", "fine_tuned", "many", "fine_tuned"),
    ("meta", "fine_tuned", -1, "fine_tuned"),
    ("training", "k", 10 ** 9, "k 1000000000"),
    ("training", "k", "x", "k 'x'"),
    ("training", "k", 0, "k 0"),
    ("training", "k", 65, "k 65 is not an integer from 1 to 64"),
    ("training", "k", True, "k True"),
    ("training", "C", -1.0, "C -1.0"),
    ("training", "C", "1", "C '1'"),
    ("training", "algorithm", "adam", "algorithm 'adam'"),
    ("online", "k", 10 ** 9, "meta online k"),
    ("online", "algorithm", 3, "meta online algorithm"),
])
def test_training_settings_that_fine_tuning_and_update_reuse_are_checked(tagger, where, key, value, words):
    """fine_tuned "many" was a TypeError when fine-tuning, k=10**9 a
    MemoryError and k="x" "an integer is required" in update()."""
    def edit(header, arrays):
        if where == "meta":
            header["meta"][key] = value
        elif where == "online":
            header["meta"]["online"] = {"algorithm": "mira", "k": 2, "C": 1.0, key: value}
        else:
            header["training"] = {**header["training"], "algorithm": "mira", key: value}
    refused(edited(tagger, edit), words)


def test_training_refuses_a_mira_k_that_loading_refuses():
    """k=999 took 40 s to update a model on 62 tokens."""
    with pytest.raises(fasttag.InputError, match="option k must be an integer from 1 to 64"):
        Tagger.train([(["a"], ["A"])], algorithm="mira", k=65, epochs=1, verbose=False)


def test_valid_training_settings_still_fine_tune_and_update(tagger):
    def edit(header, arrays):
        header["training"] = dict(header["training"], algorithm="mira", k=2, C=0.5)
        header["meta"]["fine_tuned"] = 3
    model = fasttag.loads(edited(tagger, edit))
    pairs = [(["the", "dog"], ["A", "B"])]
    tuned = Tagger.train(pairs, init=model, epochs=1, verbose=False)
    assert tuned.meta["fine_tuned"] == 4
    assert 0.0 <= model.update(pairs) <= 1.0


# ---------------------------------------------------------------- MLP

def test_an_mlp_of_numeric_inputs_without_inputs_is_refused():
    from fasttag import linear
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = linear.MLPClassifier(hidden_layer_sizes=(3,), max_iter=2, random_state=0).fit(np.ones((4, 2)),
                                                                                            [0, 1, 0, 1])
    header, arrays = modelfile.loads(mlp.to_bytes())
    header["sizes"][0] = 0
    header["n_features_in"] = 0
    arrays["weights"] = arrays["weights"][:3 + 3 * 2 + 2]      # no input weights: 11 parameters
    refused(modelfile.dumps(header, arrays), "at least 1 input")
