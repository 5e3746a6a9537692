"""The UD pipeline: one model of a tokenizer and the word columns' taggers,
trained from one CoNLL-U file, from raw text to CoNLL-U (issue 33)."""
import io
import json
import re
import warnings
from pathlib import Path

import pytest

import fasttag
from fasttag import InputError, ModelFormatError, Pipeline
from fasttag.model import modelfile
from fasttag.text import formats as ftio
from fasttag.tasks.tok import read_conllu_text

DATA = Path(__file__).resolve().parent.parent / "data"
SAMPLE = DATA / "sample_ud.conllu"
RAW = "I'm very happy, but John doesn't see the red cat. They walked in the park yesterday!\nMary likes two books."


@pytest.fixture(scope="module")
def pipe():
    return Pipeline.train(SAMPLE, epochs=10, verbose=False)


@pytest.fixture(scope="module")
def pipe_path(pipe, tmp_path_factory):
    path = tmp_path_factory.mktemp("ud") / "ud.ftm"
    pipe.save(path)
    return path


# ---------------------------------------------------------------- a strict reader of CoNLL-U

SPACES = re.compile(r"SpacesAfter=(\\s|\\t|\\n)+")


def _spacing(misc):
    """The text after a token, as its MISC says."""
    if misc == "SpaceAfter=No":
        return ""
    if misc.startswith("SpacesAfter="):
        return misc[len("SpacesAfter="):].replace("\\s", " ").replace("\\t", "\t").replace("\\n", "\n")
    return " "


FEATS = re.compile(r"[A-Z][A-Za-z0-9]*(\[[a-z0-9]+\])?=[A-Z0-9][A-Za-z0-9]*(,[A-Z0-9][A-Za-z0-9]*)*")


def check_conllu(text):
    """Every rule of the format the pipeline writes, checked; returns the
    sentences as (comments, word rows, token forms with their spacing)."""
    assert text.endswith("\n\n") and "\r" not in text
    blocks = text.split("\n\n")
    assert blocks[-1] == "" and "\n\n\n" not in text
    out, ids = [], set()
    for block in blocks[:-1]:
        lines = block.split("\n")
        comments = [line for line in lines if line.startswith("#")]
        rows = [line.split("\t") for line in lines if not line.startswith("#")]
        assert lines[:len(comments)] == comments, "comments come first"
        keys = [c[1:].strip().split(" = ")[0].split("=")[0].strip() for c in comments]
        assert "sent_id" in keys and "text" in keys
        sent_id = next(c for c in comments if c.startswith("# sent_id = "))[len("# sent_id = "):]
        assert sent_id not in ids
        ids.add(sent_id)
        next_id, tokens, inside = 1, [], 0
        words = []
        for fields in rows:
            assert len(fields) == 10 and all(fields) and not any(" " in f for f in fields[2:] if f != fields[2])
            if "-" in fields[0]:
                a, b = map(int, fields[0].split("-"))
                assert a == next_id and b > a and fields[2:9] == ["_"] * 7
                tokens.append((fields[1], _spacing(fields[9])))
                inside = b
                continue
            assert int(fields[0]) == next_id
            next_id += 1
            assert fields[6:9] == ["_", "_", "_"]
            assert fields[5] == "_" or all(FEATS.fullmatch(f) for f in fields[5].split("|")), fields[5]
            assert fields[9] in ("_", "SpaceAfter=No") or SPACES.fullmatch(fields[9]), fields[9]
            if int(fields[0]) > inside:
                tokens.append((fields[1], _spacing(fields[9])))
            else:
                assert fields[9] == "_"
            words.append(fields)
        text_line = next(c for c in comments if c.startswith("# text = "))[len("# text = "):]
        rebuilt = "".join(form + space for form, space in tokens)[:-len(tokens[-1][1]) or None]
        assert rebuilt == text_line, (rebuilt, text_line)
        out.append((comments, words, tokens))
    return out


# ---------------------------------------------------------------- Python

def test_raw_text_to_every_column(pipe):
    assert pipe.tokenizer is not None and pipe.columns == ["upos", "xpos", "feats", "lemma"]
    doc = pipe.annotate(RAW)
    sentences = doc.sentences
    assert sentences[0].newpar is not None and sentences[-1].newpar is not None and doc.text == RAW
    assert all(RAW[t.start:t.end] == t.form for s in sentences for t in s.tokens)
    words = [w for s in sentences for w in s.words]
    tags = {w.upos for w in words}
    assert tags <= {"PRON", "AUX", "ADV", "ADJ", "PUNCT", "CCONJ", "PROPN", "PART", "VERB", "DET", "NOUN", "ADP",
                    "NUM"}
    assert all(w.xpos != "_" and w.lemma != "_" for w in words) and any(w.feats != "_" for w in words)
    assert [w.lemma for w in words if w.form in ("books", "'m")] == ["be", "book"]
    assert doc.sentence_text(sentences[-1]) == "Mary likes two books."


def test_conllu_of_raw_text_is_valid_and_reads_back(pipe):
    text = pipe.to_conllu(RAW)
    sentences = check_conllu(text)
    assert text.startswith("# newdoc\n# newpar\n# sent_id = 1\n")
    assert sum(c.count("# newpar") for comments, _, _ in sentences for c in comments) == 2
    gold = read_conllu_text(io.BytesIO(text.encode()))
    assert gold.mismatches == [] and " ".join(gold.text.split()) == " ".join(RAW.split())
    back = list(ftio.read_conllu(io.BytesIO(text.encode())))
    assert [w for s in back for w in s.words] == [w.form for s in pipe.annotate(RAW).sentences for w in s.words]


def test_multiword_tokens_are_written_as_ranges(pipe):
    text = pipe.to_conllu("I'm happy.")
    assert "1-2\tI'm\t_" in text and "\n1\tI\t" in text and "\n2\t'm\t" in text
    check_conllu(text)


def test_udpipe_reads_what_the_pipeline_writes(pipe):
    udpipe = pytest.importorskip("ufal.udpipe", reason="ufal.udpipe is an optional test extra")
    text = pipe.to_conllu(RAW)
    reader = udpipe.InputFormat.newConlluInputFormat()
    reader.setText(text)
    sentence, error, forms = udpipe.Sentence(), udpipe.ProcessingError(), []
    while reader.nextSentence(sentence, error):
        forms.append([sentence.words[i].form for i in range(1, len(sentence.words))])
    assert not error.occurred(), error.message
    assert forms == [[w.form for w in s.words] for s in pipe.annotate(RAW).sentences]


def test_saved_and_loaded_the_same(pipe, pipe_path):
    again = fasttag.load(str(pipe_path))
    assert isinstance(again, Pipeline) and again.to_conllu(RAW) == pipe.to_conllu(RAW)
    assert again.to_bytes() == pipe.to_bytes()
    header, arrays = modelfile.read(pipe_path)
    assert header["kind"] == "pipeline" and set(header["parts"]) == {"tok", "upos", "xpos", "feats", "lemma"}
    assert all(k.partition("/")[0] in header["parts"] for k in arrays)


@pytest.mark.parametrize("corrupt, message", [
    (lambda h, a: h["parts"]["upos"].update(kind="tokenizer"), "upos part is of kind 'tokenizer'"),
    (lambda h, a: h["parts"].update(lemmatizer={"kind": "tagger"}), "part 'lemmatizer' this fasttag does not know"),
    (lambda h, a: a.update({"stray": a["upos/vocab"]}), "array 'stray' belongs to no pipeline part"),
    (lambda h, a: a.pop("upos/transitions"), "upos part"),
    (lambda h, a: a.pop("tok/allowed"), "tok part"),
    (lambda h, a: h["parts"]["xpos"].update(tags=["A"]), "xpos part"),
    (lambda h, a: h.update(parts={}), "has no parts"),
])
def test_every_part_is_checked_on_loading(pipe, reload_corrupted, corrupt, message):
    with pytest.raises(ModelFormatError, match=re.escape(message)):
        reload_corrupted(pipe, corrupt)


def test_gold_tokens_and_raw_text_evaluation(pipe):
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # the metric names' keys: no deprecated key is read
        raw = pipe.evaluate(SAMPLE)
        gold = pipe.evaluate(SAMPLE, gold_tokens=True)
        assert raw["mode"] == "raw text" and gold["mode"] == "gold tokens"
        assert gold["Tokens"]["f1"] == gold["Words"]["f1"] == 1.0
        for key in ("UPOS", "XPOS", "UFeats", "AllTags", "Lemmas"):
            assert 0.9 <= gold[key]["f1"] <= 1.0
        assert gold["AllTags"]["f1"] <= min(gold["UPOS"]["f1"], gold["XPOS"]["f1"], gold["UFeats"]["f1"])
        metrics = [k for k, v in raw.items() if isinstance(v, dict) and "f1" in v]
        assert metrics == ["Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas"]
        system = io.BytesIO(pipe.to_conllu(read_conllu_text(SAMPLE).text).encode())
        file_scores = fasttag.evaluate_conllu(SAMPLE, system)         # the same keys and scores as of the file
        assert {m: raw[m] for m in metrics} == {m: file_scores[m] for m in metrics}
        text = Pipeline.report(raw)
        assert [line.split("|")[0].strip() for line in text.splitlines()[3:-1]] == metrics
        tagger_only = Pipeline(None, {"upos": pipe.parts["upos"]}).evaluate(SAMPLE, gold_tokens=True)
        assert [k for k, v in tagger_only.items() if isinstance(v, dict) and "f1" in v] == \
            ["Tokens", "Sentences", "Words", "UPOS"]
    # the keys of earlier releases are still there, read with a DeprecationWarning
    old = {"token_f1": "Tokens", "sentence_f1": "Sentences", "word_f1": "Words", "upos": "UPOS", "xpos": "XPOS",
           "ufeats": "UFeats", "alltags": "AllTags", "lemmas": "Lemmas"}
    for key, name in old.items():
        with pytest.warns(DeprecationWarning, match=f"{key}.*{name}"):
            assert raw[key] == raw.get(key) == raw[name]["f1"]
    with pytest.warns(DeprecationWarning):
        assert raw["scores"] == {m: raw[m] for m in metrics}
    assert json.loads(json.dumps(raw))["upos"] == raw["UPOS"]["f1"]          # JSON readers keep theirs


def test_fine_tuning_and_calibration_pass_through(pipe, pipe_path):
    tuned = Pipeline.train(SAMPLE, init=str(pipe_path), epochs=1, verbose=False)
    assert tuned.meta["fine_tuned"] == 1 and tuned.columns == pipe.columns
    assert all(m.meta.get("fine_tuned") == 1 for m in [tuned.tokenizer, *tuned.parts.values()])
    copy = fasttag.loads(pipe.to_bytes())
    temperatures = copy.calibrate(SAMPLE)
    assert set(temperatures) == {"tok", "upos", "xpos", "feats", "lemma"} and all(t > 0 for t in temperatures.values())
    assert copy.to_conllu(RAW) == pipe.to_conllu(RAW)


def _without_xpos(tmp_path):
    lines = []
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) == 10 and fields[4] != "_":
            fields[4] = "_"
        lines.append("\t".join(fields))
    path = tmp_path / "noxpos.conllu"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_treebank_without_xpos_gets_no_xpos_tagger(tmp_path):
    model = Pipeline.train(_without_xpos(tmp_path), epochs=2, verbose=False)
    assert model.columns == ["upos", "feats", "lemma"]
    assert all(fields[4] == "_" for _, words, _ in check_conllu(model.to_conllu(RAW)) for fields in words)


def test_fine_tuning_on_data_without_a_column_keeps_its_part(pipe, tmp_path):
    tuned = Pipeline.train(_without_xpos(tmp_path), init=pipe, epochs=1, verbose=False)
    assert tuned.columns == pipe.columns and tuned.parts["xpos"] is pipe.parts["xpos"]
    assert tuned.parts["upos"].meta.get("fine_tuned") == 1


def test_python_errors_name_arguments(pipe, tmp_path):
    with pytest.raises(TypeError, match="annotate"):
        pipe.annotate(b"bytes")
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tx\n", encoding="utf-8")
    with pytest.raises(InputError, match="bad.conllu"):
        Pipeline.train(bad, epochs=1, verbose=False)
    with pytest.raises(InputError, match="option epochs"):
        Pipeline.train(SAMPLE, epochs=0, verbose=False)
    with pytest.raises(InputError, match="option templates does not apply"):
        Pipeline.train(SAMPLE, templates=("bias",), verbose=False)


# ---------------------------------------------------------------- the command line

def test_cli_train_tag_eval(run_cli, tmp_path, dev_copy):
    model = tmp_path / "ud.ftm"
    # dev: a copy of the training file (training refuses the file itself); the test is not about held-out data
    r = run_cli("train", "ud", SAMPLE, "--dev", dev_copy(SAMPLE), "-o", model, "--epochs", "5", "--quiet")
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    raw = tmp_path / "raw.txt"
    raw.write_text(RAW + "\n", encoding="utf-8")
    r = run_cli("tag", "-m", model, raw, "--to", "conllu")
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    sentences = check_conllu(r.stdout.decode())
    assert all(fields[3] != "_" and fields[4] != "_" for _, words, _ in sentences for fields in words)
    r = run_cli("tag", "-m", model, raw)
    assert r.returncode == 0 and "/PROPN" in r.stdout.decode()
    r = run_cli("tag", "-m", model, raw, "--json")
    first = json.loads(r.stdout.decode().splitlines()[0])
    assert {"tokens", "tags", "offsets", "xpos", "feats"} <= set(first)
    r = run_cli("eval", model, SAMPLE, "--json")
    assert r.returncode == 0 and {"token_f1", "upos", "ufeats", "alltags"} <= set(json.loads(r.stdout))
    r = run_cli("eval", model, SAMPLE, "--gold-tokens")
    assert r.returncode == 0 and "UFeats" in r.stdout.decode() and "from gold tokens" in r.stdout.decode()


def test_cli_fills_the_columns_of_gold_tokens(run_cli, pipe_path, tmp_path):
    blank = tmp_path / "blank.conllu"
    lines = []
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) == 10 and "-" not in fields[0]:
            fields[2:6] = ["_", "_", "_", "_"]
        lines.append("\t".join(fields))
    blank.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = run_cli("tag", "-m", pipe_path, blank)
    assert r.returncode == 0, r.stderr
    got = [line.split("\t") for line in r.stdout.decode().splitlines() if "\t" in line and "-" not in line.split("\t")[0]]
    want = [line.split("\t") for line in lines if "\t" in line and "-" not in line.split("\t")[0]]
    assert [g[:2] + g[6:] for g in got] == [w[:2] + w[6:] for w in want]      # the rest kept as read
    assert all(g[2] != "_" and g[3] != "_" and g[4] != "_" for g in got)
    gold = [line.split("\t") for line in SAMPLE.read_text(encoding="utf-8").splitlines()
            if "\t" in line and "-" not in line.split("\t")[0]]
    assert sum(g[3] == w[3] for g, w in zip(got, gold)) >= 0.9 * len(gold)


def test_cli_json_of_conllu_tokenize_and_inspect(run_cli, pipe, pipe_path):
    r = run_cli("tag", "-m", pipe_path, SAMPLE, "--json")
    first = json.loads(r.stdout.decode().splitlines()[0])
    assert r.returncode == 0 and first["line"] == 1 and first["tokens"][0] == "He" and len(first["feats"]) == 6
    r = run_cli("tokenize", "-m", pipe_path, "-", input="I'm happy.\n".encode())
    assert r.returncode == 0 and r.stdout.decode() == " ".join(pipe.tokenizer.tokenize("I'm happy.")[0]) + "\n\n"
    r = run_cli("inspect", pipe_path)         # a line per part (tests/test_inspect_pipeline.py)
    assert r.returncode == 0 and r.stdout.decode().splitlines()[0].split() == ["kind", "pipeline"], r.stderr


def test_a_tagger_writes_conllu_of_raw_text(run_cli, tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text("I don't like it. Do you?\n", encoding="utf-8")
    r = run_cli("tag", "-m", "en", raw, "--to", "conllu")
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    text = r.stdout.decode()
    check_conllu(text)
    assert "\tdo\t_\tAUX\t_\t_\t" in text and "# text = I don't like it." in text


def test_a_tagger_without_a_tokenizer_says_which_it_used(run_cli, tmp_path):
    model = tmp_path / "pos.ftm"
    assert run_cli("train", "pos", SAMPLE, "-o", model, "--epochs", "2", "--quiet").returncode == 0
    raw = tmp_path / "raw.txt"
    raw.write_text("Mary likes two books.\n", encoding="utf-8")
    r = run_cli("tag", "-m", model, raw)
    err = r.stderr.decode()
    assert r.returncode == 0 and len(err.splitlines()) == 1, err
    assert "bundled English tokenizer (en-tok)" in err and "--tokenizer" in err and "option" not in err
    quiet = [run_cli("tag", "-m", model, raw, "--tokenizer", "en-tok"), run_cli("tag", raw),
             run_cli("tag", "-m", model, SAMPLE), run_cli("tag", "-m", model, raw, "--pretokenized")]
    assert all(q.returncode == 0 and q.stderr == b"" for q in quiet), [q.stderr for q in quiet]


@pytest.mark.parametrize("args, flag", [
    (["tag", "-m", "{model}", "{raw}", "--tokenizer", "en-tok"], "--tokenizer"),
    (["tag", "-m", "{model}", "{raw}", "--column", "xpos"], "--column"),
    (["tag", "-m", "{model}", "{raw}", "--json", "--to", "conllu"], "--to"),
    (["tag", "-m", "{model}", "{raw}", "--nbest", "2", "--json"], "--nbest"),
    (["tag", "-m", "{model}", "{raw}", "--format", "conll"], "--format"),
    (["tag", "-m", "en-ner", "{raw}", "--to", "conllu"], "--to conllu"),
    (["eval", "en", "{sample}", "--gold-tokens"], "--gold-tokens"),
    (["eval", "{model}", "{sample}", "--words", "{raw}"], "--words"),
    (["train", "ud", "{raw}", "-o", "{out}"], "raw.txt"),
    (["train", "ud", "{sample}", "-o", "{out}", "--plot", "{png}"], "--plot"),
    (["train", "ud", "{sample}", "-o", "{out}", "--templates", "x"], "unrecognized arguments"),
])
def test_cli_errors_are_one_line(run_cli, pipe_path, tmp_path, args, flag):
    raw = tmp_path / "raw.txt"
    raw.write_text(RAW + "\n", encoding="utf-8")
    names = {"model": pipe_path, "raw": raw, "sample": SAMPLE, "out": tmp_path / "o.ftm", "png": tmp_path / "c.png"}
    r = run_cli(*[a.format(**names) for a in args])
    err = r.stderr.decode()
    assert r.returncode == 2 and len(err.splitlines()) == 1 and flag in err and "Traceback" not in err, err
    assert r.stdout == b"" and not (tmp_path / "o.ftm").exists()


# ---------------------------------------------------------------- spaCy

def test_spacy_tokenizer_splits_sentences_and_the_ud_component_sets_every_column(pipe, pipe_path, tmp_path):
    spacy = pytest.importorskip("spacy", reason="spaCy is an optional extra")
    import fasttag.spacy  # noqa: F401  (registers the factories where fasttag is not installed)
    config = {"nlp": {"tokenizer": {"@tokenizers": "fasttag.tokenizer.v1", "model": str(pipe_path)}}}
    nlp = spacy.blank("en", config=config)
    nlp.add_pipe("fasttag_ud", config={"model": str(pipe_path)})
    text = "I'm happy, but John  doesn't see the red cat.\nMary likes two books. "
    doc = nlp(text)
    assert doc.text == text
    ours = pipe.annotate(text)
    assert [s.text.strip() for s in doc.sents] == [ours.sentence_text(s) for s in ours.sentences]   # E030 before
    words = [w for s in ours.sentences for w in s.words]
    tokens = [t for t in doc if not t.is_space]
    assert [t.text for t in tokens] == [w.form for w in words]
    assert [t.pos_ for t in tokens] == [w.upos for w in words] and [t.tag_ for t in tokens] == [w.xpos for w in words]
    assert [str(t.morph) or "_" for t in tokens] == [w.feats for w in words]
    assert [t.lemma_ for t in tokens] == [w.lemma for w in words]
    assert all(t.pos_ == "SPACE" for t in doc if t.is_space)
    nlp.to_disk(tmp_path / "pipe")
    again = spacy.load(tmp_path / "pipe")(text)
    assert [(t.text, t.tag_, str(t.morph), t.is_sent_start) for t in again] == \
        [(t.text, t.tag_, str(t.morph), t.is_sent_start) for t in doc]


def test_spacy_chinese_segmenter_splits_sentences_at_lines():
    spacy = pytest.importorskip("spacy", reason="spaCy is an optional extra")
    import fasttag.spacy  # noqa: F401
    nlp = spacy.blank("zh", config={"nlp": {"tokenizer": {"@tokenizers": "fasttag.zh_segmenter.v1"}}})
    doc = nlp("我爱北京。\n他很好。")
    assert doc.text == "我爱北京。\n他很好。" and len(list(doc.sents)) == 2


def test_spacy_ud_component_refuses_to_train(pipe_path):
    spacy = pytest.importorskip("spacy", reason="spaCy is an optional extra")
    import fasttag.spacy  # noqa: F401
    nlp = spacy.blank("en")
    nlp.add_pipe("fasttag_ud", config={"model": None})
    with pytest.raises(ValueError, match="fasttag train ud"):
        nlp.initialize()
    other = spacy.blank("en")
    other.add_pipe("fasttag_ud", config={"model": "en"})
    with pytest.raises(InputError, match="needs a Pipeline model"):
        other("a b")


def test_word_tag_output_keeps_every_input_line(pipe, tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text("Mary likes two books.\n\nThey walked.\n", encoding="utf-8")
    out = io.StringIO()
    pipe.tag_file(str(raw), out)
    # each input line, the blank one too, a block of its sentences closed by an empty line: as every tagger writes
    text = out.getvalue()
    assert re.sub(r"[^\n]+", "x", text) == "x\n\n\nx\n\n"
    assert text.startswith("Mary/PROPN likes/") and "\n\n\nThey/" in text
    tagger = io.StringIO()
    fasttag.load("en").tag_file(str(raw), tagger)
    assert re.sub(r"[^\n]+", "x", tagger.getvalue()) == re.sub(r"[^\n]+", "x", text)


def test_upos_part_defaults_to_3_best_mira(pipe):
    """Cross-validation on five treebanks chose 3-best MIRA for UPOS
    (BENCHMARKS.md); the other parts keep their own rule."""
    info = pipe.parts["upos"].model.training_info
    assert (info["algorithm"], info["k"]) == ("mira", 3)
    assert pipe.parts["xpos"].model.training_info["algorithm"] == "perceptron"


def test_named_rule_overrides_upos_default():
    model = Pipeline.train(SAMPLE, epochs=1, algorithm="perceptron", verbose=False)
    assert model.parts["upos"].model.training_info["algorithm"] == "perceptron"
    model = Pipeline.train(SAMPLE, epochs=1, algorithm="mira", verbose=False)
    assert model.parts["upos"].model.training_info["k"] == 1


def test_an_interrupted_pipeline_names_the_parts_it_lacks_wherever_it_is_used(monkeypatch, tmp_path, run_cli):
    """Ctrl-C before the lemma part completed an epoch: the pipeline saved
    says it lacks that part, and tagging and scoring with it warn, in
    Python and on the command line, instead of writing ``_`` silently."""
    from fasttag import Lemmatizer
    from fasttag.errors import TrainingInterrupted

    def interrupted(*args, **kwargs):
        raise TrainingInterrupted(1, None)          # what Ctrl-C before any completed epoch raises
    monkeypatch.setattr(Lemmatizer, "train", classmethod(interrupted))
    with pytest.raises(TrainingInterrupted) as info:
        Pipeline.train(SAMPLE, epochs=2, verbose=False)
    model = info.value.model
    assert model.columns == ["upos", "xpos", "feats"] and model.missing == ["lemma"]
    assert repr(model) == "Pipeline(tok, upos, xpos, feats; missing: lemma)"
    path = tmp_path / "partial.ftm"
    model.save(path)
    again = fasttag.load(path)
    assert again.missing == ["lemma"]
    with pytest.warns(UserWarning, match="lacks its lemma part .*written _ and not scored"):
        again.to_conllu(RAW)
    with pytest.warns(UserWarning, match="lacks its lemma part"):
        scores = again.evaluate(SAMPLE)
    assert "lemmas" not in scores
    proc = run_cli("tag", "-m", path, "--to", "conllu", input=RAW.encode())
    err = proc.stderr.decode().splitlines()
    assert proc.returncode == 0 and len(err) == 1 and err[0].startswith("fasttag: warning: the pipeline lacks its "
                                                                       "lemma part"), err


def test_a_pipeline_file_with_unknown_missing_parts_is_refused(pipe, tmp_path):
    model = Pipeline(pipe.tokenizer, pipe.parts, {"missing": ["parser"]})
    path = tmp_path / "bad.ftm"
    model.save(path)
    with pytest.raises(ModelFormatError, match="missing parts are not a list of its part names"):
        fasttag.load(path)


def test_models_say_what_they_are():
    assert repr(fasttag.load("en")).startswith("Tagger(17 labels: 'ADJ', 'ADP', 'ADV', 'AUX', 'CCONJ', ...; "
                                               "corpus 'UD English EWT")
    assert repr(fasttag.load("zh")).startswith("Segmenter(4 labels: 'B', 'M', 'E', 'S'; corpus \"People's Daily")
    pipe = fasttag.load("en-ud")
    assert repr(pipe) == "Pipeline(tok, upos, xpos, feats, lemma)"
    assert repr(pipe.parts["lemma"]).startswith(f"Lemmatizer({len(pipe.parts['lemma'].model.tags)} labels: ")
