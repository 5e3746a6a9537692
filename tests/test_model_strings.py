"""Every string a model file can make fasttag write (lemmas, the words of
multiword expansions, the text an edit script adds) is checked at load by
the rule training keeps to (:mod:`fasttag.text.fieldcheck`), and an
expansion is bounded, so that a file cannot break the CoNLL-U, JSON or
UTF-8 that fasttag writes, or blow a few characters up into gigabytes.

Each case edits a small trained pipeline's file as a hostile one could and
loads it through the public API and the real console script: one line,
exit status 2, never a traceback or broken output.
"""
import time

import pytest

import fasttag
from fasttag import InputError, ModelFormatError
from fasttag.model import modelfile
from fasttag.tasks import tok
from fasttag.tasks.lemma import Lemmatizer
from fasttag.tasks.tok import Tokenizer
from fasttag.pipeline import Pipeline
from fasttag.text.fieldcheck import column_fault, field_fault

SAMPLE = "data/sample_ud.conllu"


@pytest.fixture(scope="module")
def pipeline_bytes():
    return Pipeline.train(SAMPLE, epochs=2, verbose=False).to_bytes()


def edited(data, edit):
    """The bytes of model file ``data`` after ``edit(header, arrays)``."""
    header, arrays = modelfile.loads(data)
    edit(header, arrays)
    return modelfile.dumps(header, arrays)


def refused(data, *words):
    """``data`` is refused at load with a one-line ASCII ModelFormatError saying ``words``."""
    with pytest.raises(ModelFormatError) as info:
        fasttag.loads(data)
    message = str(info.value)
    assert message.isascii() and "\n" not in message, message
    for w in words:
        assert w in message, message
    return message


def cli_refuses(run_cli, tmp_path, data, *words):
    """``fasttag tag -m FILE --to conllu`` on raw text: exit 2, one line naming the file, no output."""
    path = tmp_path / "hostile.ftm"
    path.write_bytes(data)
    text = tmp_path / "in.txt"
    text.write_text("The dog barks du matin.\n", encoding="utf-8")
    r = run_cli("tag", "-m", path, "--to", "conllu", text)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 2 and r.stdout == b"", (r.returncode, r.stdout[:200], err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert str(path) in err and all(w in err for w in words), err


# ---------------------------------------------------------------- the one rule

@pytest.mark.parametrize("value, spaces, fault", [
    ("NOUN", False, None), ("de le", True, None), ("é\u200d", False, None), ("a\xa0b", True, None),
    ("de le", False, "whitespace"), ("a\xa0b", False, "whitespace"), ("", True, "empty"),
    ("a\tb", True, "tab"), ("a\nb", True, "line break U+000A"), ("a\rb", True, "line break U+000D"),
    ("a\x0bb", True, "line break U+000B"), ("a\x1cb", True, "line break U+001C"),
    ("a\x85b", True, "line break U+0085"), ("a\u2028b", True, "line break U+2028"),
    ("\x1b[31m", True, "control character U+001B"), ("a\x00", True, "control character U+0000"),
    ("\udc80", True, "lone surrogate U+DC80"), (3, True, "int"),
])
def test_a_field_is_a_non_empty_line_without_controls_or_surrogates(value, spaces, fault):
    got = field_fault(value, spaces)
    assert got is None if fault is None else fault in got, got


def test_spaces_are_allowed_only_in_form_lemma_and_misc():
    assert [c for c in ("FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "DEPREL", "MISC")
            if column_fault("a b", c) is None] == ["FORM", "LEMMA", "MISC"]


def test_every_line_end_of_splitlines_is_refused():
    """The rule's line ends are exactly those that would add a line."""
    for cp in range(0x3000):
        ch = chr(cp)
        if len(("a" + ch + "b").splitlines()) > 1:
            assert field_fault("a" + ch + "b", spaces=True) is not None, hex(cp)


# ---------------------------------------------------------------- lemmas

BAD_LEMMAS = ["a\tb", "a\nb", "\udc80", "", "a\u2028b", "a\x85b", "a\x1cb", "a\x0bb", "\x1b[31m", "a\x00"]


@pytest.mark.parametrize("bad", BAD_LEMMAS, ids=ascii)
def test_a_lexicon_lemma_the_output_cannot_hold_is_refused_at_load(pipeline_bytes, bad):
    """A tab once loaded and stopped ``--to conllu`` with a traceback; a lone
    surrogate wrote invalid UTF-8 with exit status 0; an empty lemma was
    written ``_``."""
    def edit(header, arrays):
        header["parts"]["lemma"]["lexicon"][3][2] = bad
    refused(edited(pipeline_bytes, edit), "lemma part", "lexicon", "the lemma")


@pytest.mark.parametrize("bad", ["a\tb", "a\nb", "\udc80", ""], ids=ascii)
def test_the_console_script_refuses_such_a_pipeline_in_one_line(pipeline_bytes, bad, run_cli, tmp_path):
    def edit(header, arrays):
        header["parts"]["lemma"]["lexicon"][3][2] = bad
    cli_refuses(run_cli, tmp_path, edited(pipeline_bytes, edit), "lexicon")


def test_a_lemma_with_a_space_loads_and_is_written(pipeline_bytes):
    """CoNLL-U allows spaces in LEMMA: the rule must not refuse them."""
    header, arrays = modelfile.loads(pipeline_bytes)
    lexicon = header["parts"]["lemma"]["lexicon"]
    form, upos = next((f, u) for f, u, _, _ in lexicon if sum(e[:2] == [f, u] for e in lexicon) == 1)
    for e in lexicon:
        if e[:2] == [form, upos]:
            e[2] = "New York"
    model = fasttag.loads(modelfile.dumps(header, arrays))
    assert model.parts["lemma"].lemmatize([form], [upos]) == ["New York"]


@pytest.mark.parametrize("added", ["%09", "%0A", "%E2%80%A8", "%1B", "%ED%B2%80"])
def test_an_edit_script_adding_what_a_lemma_cannot_hold_is_refused(pipeline_bytes, added):
    """The script's tag is clean; what it decodes to and adds to every
    lemma it makes is not."""
    def edit(header, arrays):
        tags = header["parts"]["lemma"]["tags"]
        i = next(i for i, t in enumerate(tags) if t != "*")
        tags[i] = f"K|||x|{added}"
    refused(edited(pipeline_bytes, edit), "lemma part", "K|||x|")


@pytest.mark.parametrize("lemma, fault", [("", "is empty"), ("a\tb", "holds a tab"), ("a\u2028b", "line break"),
                                          ("\udc80", "lone surrogate")], ids=ascii)
def test_training_refuses_a_lemma_that_loading_would(lemma, fault):
    sents = [[("dogs", "NOUN", "dog"), ("ran", "VERB", lemma)]] * 3
    with pytest.raises(InputError, match=fault):
        Lemmatizer.train(sents, epochs=1, verbose=False)
    good = Lemmatizer.train([[("dogs", "NOUN", "dog"), ("ran", "VERB", "run")]] * 3, epochs=1, verbose=False)
    with pytest.raises(InputError, match=fault):
        Lemmatizer.train(sents, init=good, epochs=1, verbose=False)


def test_an_unannotated_lemma_is_no_lemma_and_loads():
    """CoNLL-U's ``_`` is a missing lemma, never learned as the lemma "" or "_"."""
    model = Lemmatizer.train([[("dogs", "NOUN", "dog"), ("ran", "VERB", "_")]] * 3, epochs=1, verbose=False)
    assert [e[2] for e in modelfile.loads(model.to_bytes())[0]["lexicon"]] == ["dog"]
    assert fasttag.loads(model.to_bytes()).lemmatize(["dogs"], ["NOUN"]) == ["dog"]


# ---------------------------------------------------------------- multiword expansions

def test_a_huge_expansion_is_refused_at_load_quickly(pipeline_bytes, run_cli, tmp_path):
    """A million words in a 6 MB file once made 170 characters of input
    639 MB of output (4 GB of memory, 77 s)."""
    def edit(header, arrays):
        header["parts"]["tok"]["expansions"]["du"] = ["de"] * 1_000_000
    data = edited(pipeline_bytes, edit)
    t0 = time.perf_counter()
    refused(data, "tok part", "'du'", "1,000,000 words", f"the {tok.MAX_EXPANSION_WORDS} ")
    assert time.perf_counter() - t0 < 5
    cli_refuses(run_cli, tmp_path, data, "'du'", "words")


@pytest.mark.parametrize("words, says", [
    (["w"] * (tok.MAX_EXPANSION_WORDS + 1), "17 words, over the 16"),
    (["de", "x" * 300], "302 characters, over the 20"),
    (["de"], "two or more words"),
    (["de", ""], "is empty"),
    (["de", "l\te"], "holds a tab"),
    (["de", "le\n2\tinjected"], "line break"),
    (["de", "l\u3000e"], "whitespace other than a space"),
    (["de", "\udc80"], "lone surrogate"),
    ("de le", "two or more words"),
])
def test_an_expansion_out_of_bounds_or_unwritable_is_refused(pipeline_bytes, words, says):
    def edit(header, arrays):
        header["parts"]["tok"]["expansions"]["du"] = words
    refused(edited(pipeline_bytes, edit), "'du'", says)


@pytest.mark.parametrize("form", ["", "d u", "d\tu", "\udc80"], ids=ascii)
def test_an_expansion_of_an_unwritable_form_is_refused(pipeline_bytes, form):
    def edit(header, arrays):
        header["parts"]["tok"]["expansions"][form] = ["de", "le"]
    refused(edited(pipeline_bytes, edit), "has a form that")


def test_too_many_expansions_are_refused(pipeline_bytes):
    def edit(header, arrays):
        header["parts"]["tok"]["expansions"] = {f"f{i}": ["a", "b"] for i in range(tok.MAX_EXPANSIONS + 1)}
    refused(edited(pipeline_bytes, edit), f"over the {tok.MAX_EXPANSIONS:,}")


def test_an_expansion_within_the_bounds_loads_and_is_written(pipeline_bytes):
    words = ["d", "e", "l", "e", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]   # 16 words, 16 chars
    def edit(header, arrays):
        header["parts"]["tok"]["expansions"]["du"] = ["de", "le"]
        header["parts"]["tok"]["expansions"]["au"] = words
    model = fasttag.loads(edited(pipeline_bytes, edit))
    out = model.to_conllu("Il va du marché au bureau.")
    assert "\tde\t" in out and "\tle\t" in out
    assert sum(1 for line in out.splitlines() if line.split("\t")[0].isdigit()) >= 2 + 16


def conllu_with_multiword(tmp_path, form, words, n=30):
    """A tiny CoNLL-U file of ``n`` sentences, each with the multiword token ``form`` -> ``words``."""
    lines = []
    for i in range(n):
        lines += [f"# text = Il va {form} marché.", "1\tIl\til\tPRON\t_\t_\t_\t_\t_\t_", "2\tva\taller\tVERB\t_\t_\t_\t_\t_\t_",
                  f"3-{2 + len(words)}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_"]
        lines += [f"{3 + k}\t{w}\t{w}\tADP\t_\t_\t_\t_\t_\t_" for k, w in enumerate(words)]
        k = 3 + len(words)
        lines += [f"{k}\tmarché\tmarché\tNOUN\t_\t_\t_\t_\t_\tSpaceAfter=No", f"{k + 1}\t.\t.\tPUNCT\t_\t_\t_\t_\t_\t_", ""]
    path = tmp_path / "mwt.conllu"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_training_keeps_its_expansions_to_what_loading_reads(tmp_path):
    kept = Tokenizer.train(conllu_with_multiword(tmp_path, "du", ["de", "le"]), epochs=1, verbose=False)
    assert kept.expansions == {"du": ("de", "le")}
    many = ["w"] * (tok.MAX_EXPANSION_WORDS + 1)
    dropped = Tokenizer.train(conllu_with_multiword(tmp_path, "du", many), epochs=1, verbose=False)
    assert dropped.expansions == {}
    assert fasttag.loads(dropped.to_bytes()).expansions == {}
