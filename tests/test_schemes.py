"""Chunk schemes and conlleval scoring against hand-computed cases and properties."""
import pytest
from hypothesis import given, settings, strategies as st

from fasttag.errors import InputError
from fasttag.text.metrics import score_spans
from fasttag.text.schemes import (
    SCHEMES,
    allowed_transitions,
    convert,
    detect_scheme,
    encode,
    is_allowed,
    is_allowed_end,
    spans,
    split_tag,
)


# --- spans ---------------------------------------------------------------------


def test_split_tag_on_first_hyphen():
    assert split_tag("B-NP") == ("B", "NP")
    assert split_tag("I-ADVP-TMP") == ("I", "ADVP-TMP")
    assert split_tag("O") == ("O", "")


def test_spans_iob2():
    tags = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC", "O"]
    assert spans(tags, "iob2") == [("PER", 0, 2), ("LOC", 3, 4), ("LOC", 4, 6)]


def test_spans_iob1():
    # CoNLL-2003 style: I- everywhere, B- only between two adjacent LOC chunks
    tags = ["I-ORG", "O", "I-LOC", "B-LOC", "I-LOC", "I-PER", "I-PER"]
    assert spans(tags, "iob1") == [("ORG", 0, 1), ("LOC", 2, 3), ("LOC", 3, 5), ("PER", 5, 7)]


def test_spans_bioes():
    tags = ["S-PER", "O", "B-LOC", "I-LOC", "E-LOC", "S-LOC", "B-ORG", "E-ORG"]
    assert spans(tags, "bioes") == [("PER", 0, 1), ("LOC", 2, 5), ("LOC", 5, 6), ("ORG", 6, 8)]


def test_types_with_hyphens():
    assert spans(["B-ADVP-TMP", "I-ADVP-TMP", "B-NP"]) == [("ADVP-TMP", 0, 2), ("NP", 2, 3)]


@pytest.mark.parametrize("scheme", ["iob1", "iob2"])
def test_ill_formed_like_conlleval(scheme):
    # conlleval: I after O starts a chunk, B after I starts a new one
    assert spans(["I-NP", "I-NP", "O", "I-VP", "B-VP"], scheme) == [
        ("NP", 0, 2), ("VP", 3, 4), ("VP", 4, 5)]
    assert spans(["O", "I-PER", "B-ORG"], scheme) == [("PER", 1, 2), ("ORG", 2, 3)]
    # starting with I-; a type change inside ends one chunk and starts another
    assert spans(["I-LOC", "I-LOC", "I-PER", "O"], scheme) == [("LOC", 0, 2), ("PER", 2, 3)]
    assert spans(["B-PER", "I-LOC", "I-LOC"], scheme) == [("PER", 0, 1), ("LOC", 1, 3)]
    # a chunk open at the end of the sequence ends there
    assert spans(["O", "B-X", "I-X"], scheme) == [("X", 1, 3)]
    assert spans([], scheme) == []
    assert spans(["O", "O"], scheme) == []


def test_conlleval_e_and_bracket_tags_in_iob():
    # conlleval.pl's extra rules: E,E and E,I and O,E start chunks; "[" / "]"
    # make one-token chunks
    assert spans(["O", "E-X", "E-X", "I-X"], "iob2") == [("X", 1, 2), ("X", 2, 3), ("X", 3, 4)]
    assert spans(["[-X", "I-X"], "iob2") == [("X", 0, 1)]
    # conlleval quirk kept: B after E of the same type does not start a chunk
    assert spans(["B-X", "E-X", "B-X"], "iob2") == [("X", 0, 3)]


def test_ill_formed_bioes():
    assert spans(["B-X", "B-X"], "bioes") == [("X", 0, 1), ("X", 1, 2)]
    assert spans(["I-X", "E-X", "S-X"], "bioes") == [("X", 0, 2), ("X", 2, 3)]
    assert spans(["E-X", "I-X", "O", "B-X"], "bioes") == [("X", 0, 1), ("X", 1, 2), ("X", 3, 4)]
    assert spans(["B-X", "E-Y"], "bioes") == [("X", 0, 1), ("Y", 1, 2)]


def test_unknown_scheme():
    with pytest.raises(ValueError):
        spans(["O"], "bilou")


# --- convert / encode / detect ---------------------------------------------------


def test_convert_examples():
    iob1 = ["I-LOC", "B-LOC", "O", "I-PER", "I-PER", "I-ORG"]
    iob2 = ["B-LOC", "B-LOC", "O", "B-PER", "I-PER", "B-ORG"]
    bioes = ["S-LOC", "S-LOC", "O", "B-PER", "E-PER", "S-ORG"]
    assert convert(iob1, "iob1", "iob2") == iob2
    assert convert(iob2, "iob2", "bioes") == bioes
    assert convert(bioes, "bioes", "iob1") == iob1
    # ill-formed input comes out well formed
    assert convert(["O", "I-X", "I-X"], "iob2", "iob2") == ["O", "B-X", "I-X"]


def test_encode_rejects_bad_chunks():
    with pytest.raises(ValueError):
        encode([("X", 0, 2), ("X", 1, 3)], 3)
    with pytest.raises(ValueError):
        encode([("X", 2, 4)], 3)


def test_detect_scheme():
    assert detect_scheme([["I-PER", "O", "I-LOC", "B-LOC"]]) == "iob1"
    assert detect_scheme([["O", "B-PER", "I-PER"], ["B-LOC"]]) == "iob2"
    assert detect_scheme([["B-PER", "E-PER", "O"], ["S-LOC"]]) == "bioes"
    assert detect_scheme([["O", "O"], []]) == "iob2"
    # the majority of the scheme-specific chunk starts decides
    assert detect_scheme([["I-PER"], ["O", "B-PER"]]) == "iob2"
    assert detect_scheme([["I-PER", "O", "I-LOC"], ["O", "B-PER"]]) == "iob1"
    assert detect_scheme([["O", "I-PER"], ["B-PER", "B-LOC"]]) == "iob2"


# --- allowed transitions -----------------------------------------------------------


def test_is_allowed_iob2():
    assert is_allowed(None, "B-X", "iob2")
    assert not is_allowed(None, "I-X", "iob2")
    assert is_allowed("B-X", "I-X", "iob2")
    assert is_allowed("I-X", "I-X", "iob2")
    assert not is_allowed("I-Y", "I-X", "iob2")
    assert not is_allowed("O", "I-X", "iob2")
    assert is_allowed("I-X", "B-X", "iob2")
    assert not is_allowed("O", "E-X", "iob2")
    assert all(is_allowed_end(t, "iob2") for t in ["O", "B-X", "I-X", None])


def test_is_allowed_iob1():
    assert is_allowed(None, "I-X", "iob1")
    assert is_allowed("O", "I-X", "iob1")
    assert is_allowed("I-Y", "I-X", "iob1")
    assert not is_allowed(None, "B-X", "iob1")
    assert not is_allowed("O", "B-X", "iob1")
    assert not is_allowed("I-Y", "B-X", "iob1")
    assert is_allowed("I-X", "B-X", "iob1")
    assert is_allowed("B-X", "B-X", "iob1")


def test_is_allowed_bioes():
    for start in (None, "O", "E-Y", "S-Y"):
        assert is_allowed(start, "B-X", "bioes")
        assert is_allowed(start, "S-X", "bioes")
        assert is_allowed(start, "O", "bioes")
        assert not is_allowed(start, "I-X", "bioes")
        assert not is_allowed(start, "E-X", "bioes")
    for inside in ("B-X", "I-X"):
        assert is_allowed(inside, "I-X", "bioes")
        assert is_allowed(inside, "E-X", "bioes")
        assert not is_allowed(inside, "I-Y", "bioes")
        assert not is_allowed(inside, "O", "bioes")
        assert not is_allowed(inside, "S-X", "bioes")
        assert not is_allowed_end(inside, "bioes")
    assert is_allowed_end("E-X", "bioes") and is_allowed_end("S-X", "bioes")
    assert is_allowed_end("O", "bioes") and is_allowed_end(None, "bioes")


def test_allowed_transitions_set():
    got = allowed_transitions(["O", "B-X", "I-X"], "iob2")
    assert got == {
        (None, "O"), (None, "B-X"),
        ("O", "O"), ("B-X", "O"), ("I-X", "O"),
        ("O", "B-X"), ("B-X", "B-X"), ("I-X", "B-X"),
        ("B-X", "I-X"), ("I-X", "I-X"),
    }


# --- scoring -------------------------------------------------------------------


def test_score_hand_computed():
    gold = [
        ["B-PER", "I-PER", "O", "B-LOC", "O"],
        ["B-ORG", "I-ORG", "O", "B-PER"],
    ]
    pred = [
        ["B-PER", "I-PER", "O", "B-ORG", "B-LOC"],
        ["B-ORG", "I-ORG", "O", "B-PER"],
    ]
    # gold: PER(0,2) LOC(3,4) | ORG(0,2) PER(3,4)      -> 4 chunks
    # pred: PER(0,2) ORG(3,4) LOC(4,5) | ORG(0,2) PER(3,4) -> 5 chunks, 3 correct
    r = score_spans(gold, pred)
    assert (r["gold_chunks"], r["pred_chunks"], r["correct_chunks"]) == (4, 5, 3)
    assert r["precision"] == pytest.approx(0.6)
    assert r["recall"] == pytest.approx(0.75)
    assert r["f1"] == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    assert r["tokens"] == 9
    assert r["accuracy"] == pytest.approx(7 / 9)
    pt = r["per_type"]
    assert set(pt) == {"PER", "LOC", "ORG"}
    assert pt["PER"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "gold": 2, "pred": 2, "correct": 2}
    assert pt["LOC"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "gold": 1, "pred": 1, "correct": 0}
    assert pt["ORG"]["gold"] == 1 and pt["ORG"]["pred"] == 2 and pt["ORG"]["correct"] == 1
    assert pt["ORG"]["precision"] == pytest.approx(0.5)
    assert pt["ORG"]["recall"] == pytest.approx(1.0)
    assert pt["ORG"]["f1"] == pytest.approx(2 / 3)


def test_score_iob1_input():
    gold = [["I-LOC", "B-LOC", "O", "I-PER", "I-PER"]]
    pred = [["I-LOC", "I-LOC", "O", "I-PER", "I-PER"]]
    # gold LOC(0,1) LOC(1,2) PER(3,5); pred LOC(0,2) PER(3,5)
    r = score_spans(gold, pred, scheme="iob1")
    assert (r["gold_chunks"], r["pred_chunks"], r["correct_chunks"]) == (3, 2, 1)
    assert r["precision"] == pytest.approx(0.5)
    assert r["recall"] == pytest.approx(1 / 3)
    assert r["accuracy"] == pytest.approx(0.8)


def test_score_ill_formed_prediction_like_conlleval():
    gold = [["B-NP", "I-NP", "O", "B-VP", "B-VP"]]
    pred = [["I-NP", "I-NP", "O", "I-VP", "B-VP"]]
    # conlleval reads the prediction as NP(0,2) VP(3,4) VP(4,5): all correct
    r = score_spans(gold, pred)
    assert r["correct_chunks"] == 3 and r["f1"] == pytest.approx(1.0)
    assert r["accuracy"] == pytest.approx(0.6)
    r = score_spans([["O", "B-PER", "B-ORG"]], [["O", "I-PER", "B-ORG"]])
    assert r["f1"] == pytest.approx(1.0)
    r = score_spans([["B-PER", "I-PER"]], [["I-PER", "B-PER"]])
    assert (r["gold_chunks"], r["pred_chunks"], r["correct_chunks"]) == (1, 2, 0)


def test_score_all_right_and_all_wrong():
    gold = [["B-A", "I-A", "O", "B-B"], ["O"]]
    right = score_spans(gold, gold)
    assert right["precision"] == right["recall"] == right["f1"] == right["accuracy"] == 1.0
    wrong = score_spans(gold, [["O", "B-A", "B-B", "O"], ["B-A"]])
    assert wrong["correct_chunks"] == 0
    assert wrong["precision"] == wrong["recall"] == wrong["f1"] == 0.0
    assert wrong["accuracy"] == 0.0


def test_score_zero_divisions():
    r = score_spans([["O", "O"]], [["O", "O"]])
    assert r["precision"] == r["recall"] == r["f1"] == 0.0
    assert r["accuracy"] == 1.0 and r["per_type"] == {}
    r = score_spans([], [])
    assert r["tokens"] == 0 and r["accuracy"] == 0.0


def test_score_length_mismatch():
    with pytest.raises(InputError):
        score_spans([["O", "O"]], [["O"]])
    with pytest.raises(InputError):
        score_spans([["O"], ["O"]], [["O"]])


# --- properties ----------------------------------------------------------------

TYPES = ["NP", "VP", "ADVP-TMP"]


@st.composite
def chunked(draw):
    """A sentence as (length, sorted non-overlapping chunks)."""
    pieces = draw(st.lists(
        st.one_of(
            st.tuples(st.just(None), st.integers(1, 3)),                  # a gap of O
            st.tuples(st.sampled_from(TYPES), st.integers(1, 4)),          # a chunk
        ),
        max_size=8,
    ))
    pos, chunks = 0, []
    for typ, n in pieces:
        if typ is not None:
            chunks.append((typ, pos, pos + n))
        pos += n
    return pos, chunks


def random_tags(prefixes):
    tag = st.one_of(
        st.just("O"),
        st.builds(lambda p, t: f"{p}-{t}", st.sampled_from(prefixes), st.sampled_from(TYPES)),
    )
    return st.lists(tag, max_size=10)


scheme_pairs = st.tuples(st.sampled_from(SCHEMES), st.sampled_from(SCHEMES))


@settings(max_examples=150, deadline=None)
@given(chunked(), scheme_pairs)
def test_encode_round_trips(sentence, pair):
    length, chunks = sentence
    source, target = pair
    tags = encode(chunks, length, source)
    assert len(tags) == length
    assert spans(tags, source) == chunks
    converted = convert(tags, source, target)
    assert converted == encode(chunks, length, target)
    assert convert(converted, target, source) == tags


def assert_valid(tags, scheme):
    prev = None
    for tag in tags:
        assert is_allowed(prev, tag, scheme), (prev, tag, tags)
        prev = tag
    assert is_allowed_end(prev, scheme), tags


@settings(max_examples=150, deadline=None)
@given(st.data(), scheme_pairs)
def test_convert_output_is_valid_and_keeps_spans(data, pair):
    source, target = pair
    prefixes = ["B", "I", "E", "S"] if source == "bioes" else ["B", "I"]
    tags = data.draw(random_tags(prefixes))
    out = convert(tags, source, target)
    assert len(out) == len(tags)
    assert_valid(out, target)
    assert spans(out, target) == spans(tags, source)


@settings(max_examples=100, deadline=None)
@given(chunked(), st.sampled_from(SCHEMES))
def test_valid_sequences_are_allowed_and_self_scoring_is_perfect(sentence, scheme):
    length, chunks = sentence
    tags = encode(chunks, length, scheme)
    assert_valid(tags, scheme)
    r = score_spans([tags], [tags], scheme)
    assert r["correct_chunks"] == r["gold_chunks"] == len(chunks)
    if chunks:
        assert r["f1"] == pytest.approx(1.0)


def test_conll2003_is_iob1(shared_data):
    """The real CoNLL-2003 training data is detected as IOB1 and scores 100 against itself."""
    path = shared_data / "conll2003" / "eng.train"
    if not path.is_file():
        pytest.skip(f"{path.name} not found")
    sentences, cur = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            cols = line.split()
            if not cols or cols[0] == "-DOCSTART-":
                if cur:
                    sentences.append(cur)
                cur = []
            else:
                cur.append(cols[-1])
    if cur:
        sentences.append(cur)
    assert detect_scheme(sentences) == "iob1"
    iob2 = [convert(s, "iob1", "iob2") for s in sentences]
    assert detect_scheme(iob2) == "iob2"
    r = score_spans(sentences, iob2, scheme="iob1")
    assert r["f1"] == pytest.approx(1.0)
    assert set(r["per_type"]) == {"PER", "LOC", "ORG", "MISC"}
