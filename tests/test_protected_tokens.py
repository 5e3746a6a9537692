"""Protected patterns (fasttag.text.patterns) in the tokenizer: the kinds
the training data does not split stay one token in any language, stored in
the model file; a kind the data splits is left to the model."""
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import fasttag
from fasttag import ModelFormatError
from fasttag.model import modelfile
from fasttag.tasks.tok import Tokenizer
from fasttag.text.patterns import KINDS

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample_tok.conllu"

#: (text, the span that must be one token) in several languages
CASES = [
    ("Read https://example.com/a?b=c now, ok?", "https://example.com/a?b=c"),
    ("See http://www.google.com/search?q=foo&x=1.", "http://www.google.com/search?q=foo&x=1"),
    ("Schreib an anna.schmidt@beispiel.de, bitte!", "anna.schmidt@beispiel.de"),
    ("Merci @marie_dupont pour tout !", "@marie_dupont"),
    ("Kiitos #hyväpäivä kaikille.", "#hyväpäivä"),
    ("So happy today #blessed!", "#blessed"),
    ("Das war lustig :-) oder?", ":-)"),
    ("Que bom ^_^ até amanhã.", "^_^"),
    ("Great job \U0001F44D\U0001F3FD see you.", "\U0001F44D\U0001F3FD"),
    ("Family: \U0001F468\u200D\U0001F469\u200D\U0001F467 forever.", "\U0001F468\u200D\U0001F469\u200D\U0001F467"),
    ("It cost 1,234,567.89 dollars in total.", "1,234,567.89"),
    ("Der Preis: 1.234,50 Euro.", "1.234,50"),
    ("Hinta oli 3,14 euroa.", "3,14"),
    ("We meet at 10:30, then lunch.", "10:30"),
    ("Le 27.11.2026, il pleuvait.", "27.11.2026"),
    ("Due 2026-11-27 (Friday).", "2026-11-27"),
]


def forms(tok, text):
    return [t.form for s in tok.sentence_tokens(text) for t in s]


@pytest.fixture(scope="module")
def sample_tok():
    return Tokenizer.train(SAMPLE, epochs=10, verbose=False)


@pytest.fixture(scope="module")
def bundled():
    return fasttag.load("en-tok")


@pytest.mark.parametrize("model", ["bundled", "sample_tok"])
@pytest.mark.parametrize("text,span", CASES)
def test_protected_spans_are_one_token(request, model, text, span):
    tok = request.getfixturevalue(model)
    assert span in forms(tok, text)
    words = [w for s in tok.tokenize(text) for w in s]
    assert span in words
    # the compiled batch path (one protected_spans call per batch) agrees with tokenize
    lines = [text, "plain words here", text + " " + text]
    assert list(tok.tokenize_lines(lines)) == [tok.tokenize(t) for t in lines]
    assert list(tok.tokenize_lines(lines, offsets=True)) == [tok.tokenize(t, offsets=True) for t in lines]


def test_bundled_model_protects_the_kinds_ewt_keeps(bundled):
    assert "digits" not in bundled.protected            # EWT splits year ranges: 1990-2000 -> 1990 - 2000
    assert {"url", "email", "mention", "hashtag", "emoticon", "emoji", "number"} <= set(bundled.protected)


def _split_digits_sample(path):
    """A training file whose year ranges are three tokens (1990 - 2000)."""
    out = []
    for i in range(6):
        a, b = 1990 + i, 2000 + i
        text = f"From {a}-{b} it grew."
        rows = [("From", "_"), (str(a), "SpaceAfter=No"), ("-", "SpaceAfter=No"), (str(b), "_"), ("it", "_"),
                ("grew", "SpaceAfter=No"), (".", "_")]
        out.append(f"# sent_id = {i}\n# text = {text}\n" + "".join(
            f"{k}\t{f}\t_\t_\t_\t_\t_\t_\t_\t{m}\n" for k, (f, m) in enumerate(rows, start=1)) + "\n")
    path.write_text(SAMPLE.read_text(encoding="utf-8") + "\n" + "".join(out), encoding="utf-8")
    return path


def test_a_kind_the_training_data_splits_is_not_protected(tmp_path):
    tok = Tokenizer.train(_split_digits_sample(tmp_path / "split.conllu"), epochs=10, verbose=False)
    assert "digits" not in tok.protected and "url" in tok.protected
    assert "1987-1999" not in forms(tok, "From 1987-1999 it grew.")      # the model splits it, as taught
    assert "1987-1999" in forms(Tokenizer.train(SAMPLE, epochs=10, verbose=False), "From 1987-1999 it grew.")
    assert list(tok.tokenize_lines(["From 1987-1999 it grew."])) == [tok.tokenize("From 1987-1999 it grew.")]


def test_protected_kinds_are_stored_and_checked(sample_tok, tmp_path):
    path = tmp_path / "tok.ftm"
    sample_tok.save(path)
    assert Tokenizer.load(path).protected == sample_tok.protected == KINDS       # the sample splits none
    header, arrays = modelfile.read(path)
    # a file from before protected patterns: none protected, output as the model alone gives it
    del header["protected"]
    modelfile.write(tmp_path / "old.ftm", header, arrays)
    old = Tokenizer.load(tmp_path / "old.ftm")
    assert old.protected == () and old.protect is None
    assert "https://example.com/a?b=c" not in forms(old, "Read https://example.com/a?b=c now, ok?")
    for bad in (["url", "url"], ["urls"], "url", [1]):
        header["protected"] = bad
        modelfile.write(tmp_path / "bad.ftm", header, arrays)
        with pytest.raises(ModelFormatError, match="protected kinds are malformed"):
            Tokenizer.load(tmp_path / "bad.ftm")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("ab1290:.,@#-/ ()\n;^_<3xDwm") + ["\U0001F44D", "é"]),
                        max_size=30), max_size=5))
def test_a_batch_of_lines_is_protected_as_each_line_alone(bundled, lines):
    """tokenize_lines finds the spans of a whole batch at once: the same
    tokens as each line tokenized alone."""
    assert list(bundled.tokenize_lines(lines, offsets=True)) == [bundled.tokenize(t, offsets=True) for t in lines]
