"""The candidate tokenizer: the compiled scan and features against a slow
pure-Python reference of the same definitions (fasttag._core.tokenizer),
and well-formed output on random text of mixed scripts."""
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fasttag.features.candidates import CAND_ATTRIBUTES, SEEDS, CandidateFeaturizer
from fasttag.features.tokchars import CATEGORIES, char_tables, lower_table
from fasttag.tasks.tok import Tokenizer

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample_tok.conllu"
ALPHABET = list("ab AZéß.,-'\"?!()\n\t\r 1 9:%/@#中文の日本語カタ😀👍\u00a0\u2028\u0301\u200d\U0001F3FD")
MASK = (1 << 64) - 1
P = 0x9E3779B97F4A7C15
NONE, LONG = 0x6E6F6E65, 0x6C6F6E67


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.train(SAMPLE, epochs=10, verbose=False)


# ---------------------------------------------------------------- the slow reference

def mix64(x):
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & MASK
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def category(c):
    """The category index of tok's tables (outside the BMP: the scan's ranges)."""
    if c < 0x10000:
        ch = chr(c)
        if ch.isspace():
            return 31 if len(("a" + ch + "b").splitlines()) == 2 else 30
        return CATEGORIES.index(unicodedata.category(ch))
    if 0x1F3FB <= c <= 0x1F3FF or 0xE0100 <= c <= 0xE01EF:
        return 5
    return 4 if 0x20000 <= c < 0x40000 else 21


def spaceless(c):
    return any(a <= c <= b for a, b in ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x3005, 0x3007),
                                        (0x3040, 0x30FF), (0x31F0, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
                                        (0xF900, 0xFAFF), (0xFF66, 0xFF9F), (0x20000, 0x3FFFF)))


def sclass(c):
    k = category(c)
    if k <= 4:
        return "S" if spaceless(c) else "L"
    if k <= 7 or c == 0x200D:
        return "M"
    return {8: "D", 30: " ", 31: "\n"}.get(k, "O")


def bases(text):
    out, b = [], "O"
    for i, ch in enumerate(text):
        s = sclass(ord(ch))
        if s != "M":
            b = s
        elif i == 0 or sclass(ord(text[i - 1])) in " \n":
            b = "O"
        out.append(b)
    return out


def reference_candidates(text):
    """(left, position, kind) of every candidate, from the definitions
    (no learned suffixes, nothing protected)."""
    base = bases(text)
    out = []
    chunks = [(i, j) for i, j in _chunks(text)]
    for n, (a, b) in enumerate(chunks):
        if n:
            gap = text[chunks[n - 1][1]:a]
            if not any(sclass(ord(c)) == "\n" for c in gap):
                if not (base[chunks[n - 1][1] - 1] in "LSD" and category(ord(text[a])) == 1):
                    out.append((chunks[n - 1][1], a, 3))
        for j in range(a + 1, b):
            if sclass(ord(text[j])) == "M" or text[j - 1] == "\u200d":
                continue
            if 0x1F1E6 <= ord(text[j]) <= 0x1F1FF:
                run = 0
                while j - run - 1 >= a and 0x1F1E6 <= ord(text[j - run - 1]) <= 0x1F1FF:
                    run += 1
                if run % 2:
                    continue
            lc, rc = base[j - 1], sclass(ord(text[j]))
            if lc == rc and lc in "LD":
                continue
            out.append((j, j, 1 if lc == rc == "S" else 0))
    return out


def _chunks(text):
    i, n = 0, len(text)
    while i < n:
        while i < n and sclass(ord(text[i])) in " \n":
            i += 1
        if i >= n:
            return
        j = i
        while j < n and sclass(ord(text[j])) not in " \n":
            j += 1
        yield i, j
        i = j


def str_hash(values):
    h = 0
    for v in values:
        h = (h * P + v) & MASK
    return mix64(h ^ (len(values) << 48))


def reference_row(text, left, pos, kind):
    """The attributes kind, l1, r1, kl1, kr1, wl, wr, left, right of a candidate."""
    chunks = list(_chunks(text))
    ls = next(a for a, b in chunks if a < left <= b)
    re_ = next(b for a, b in chunks if a <= pos < b)
    base = bases(text)
    lower = lower_table()

    def low(i):
        c = ord(text[i])
        return int(lower[c]) if c < 0x10000 else c
    gap = 0
    if kind == 3:
        w = text[left:pos]
        gap = 1 if len(w) == 1 else 2
    x = left
    while x > ls and x > left - 8 and base[x - 1] in "LSD":
        x -= 1
    y = pos
    while y < re_ and y < pos + 8 and base[y] in "LSD":
        y += 1
    values = {
        "kind": kind * 4 + gap,
        "l1": ord(text[left - 1]),
        "r1": ord(text[pos]),
        "kl1": category(ord(text[left - 1])),
        "kr1": category(ord(text[pos])),
        "wl": str_hash([low(i) for i in range(x, left)]) if x < left else NONE,
        "wr": str_hash([low(i) for i in range(pos, y)]) if y > pos else NONE,
        "left": str_hash([ord(c) for c in text[max(ls, left - 8):left]]),
        "right": str_hash([ord(c) for c in text[pos:min(re_, pos + 8)]]),
    }
    return {name: mix64(v ^ int(SEEDS[CAND_ATTRIBUTES.index(name)])) for name, v in values.items()}


# ---------------------------------------------------------------- compiled == reference

def featurizer():
    cat, _, _ = char_tables()
    return CandidateFeaturizer(cat, lower_table())


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(ALPHABET + ["\U0001F1E8", "\U0001F1F3"]) | st.characters(), max_size=50))
def test_candidates_match_the_reference(text):
    left, pos, kinds = featurizer().candidates(text)
    assert list(zip(left.tolist(), pos.tolist(), kinds.tolist())) == reference_candidates(text)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.sampled_from(ALPHABET), max_size=40))
def test_features_match_the_reference(text):
    fz = featurizer()
    left, pos, kinds = fz.candidates(text)
    attrs = fz.batch([text]).attrs
    assert attrs.shape == (len(pos), len(CAND_ATTRIBUTES))
    for row, a, p, k in zip(attrs, left.tolist(), pos.tolist(), kinds.tolist()):
        for name, value in reference_row(text, a, p, k).items():
            assert int(row[CAND_ATTRIBUTES.index(name)]) == value, (text, a, p, name)


def test_learned_suffixes_are_candidates_inside_letter_runs():
    cat, _, _ = char_tables()
    fz = CandidateFeaturizer(cat, lower_table(), [("n", ord("'")), ("not", 0)])
    _, pos, kinds = fz.candidates("I don't, cannot or knot")
    assert {(int(p), int(k)) for p, k in zip(pos, kinds) if k == 2} == {(4, 2), (12, 2), (20, 2)}


def test_protected_spans_are_one_token(tok):
    text = "see http://example.com/a?b=c now, ok?"
    learned = tok.protect
    try:
        tok.protect = None          # the hook off: the model alone splits the URL
        plain = [t.form for s in tok.sentence_tokens(text) for t in s]
        assert "http://example.com/a?b=c" not in plain
        tok.protect = lambda t: (np.array([t.index("http")]), np.array([t.index(" now")]), np.zeros(1))
        forms = [t.form for s in tok.sentence_tokens(text) for t in s]
        assert "http://example.com/a?b=c" in forms
        assert list(tok.tokenize_lines([text])) == [tok.tokenize(text)]
    finally:
        tok.protect = learned


# ---------------------------------------------------------------- well-formed output

@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(ALPHABET) | st.characters(), max_size=40), max_size=5))
def test_random_text_gives_well_formed_tokens(tok, lines):
    for text in lines:
        spans = tok.sentence_tokens(text)
        covered = np.zeros(len(text), dtype=int)
        last = 0
        for s in spans:
            assert s
            for t in s:
                assert last <= t.start < t.end <= len(text)
                assert text[t.start:t.end] == t.form
                assert not any(ch.isspace() for ch in t.form)
                covered[t.start:t.end] += 1
                last = t.end
                if len(t.words) > 1 and "".join(t.words) == t.form:
                    assert all(t.words)          # the words of a multiword token cut its form
        assert [covered[i] == (0 if ch.isspace() else 1) for i, ch in enumerate(text)] == [True] * len(text)
        assert tok.tokenize(text) == [[w for t in s for w in t.words] for s in spans]
    assert list(tok.tokenize_lines(lines)) == [tok.tokenize(t) for t in lines]
    assert list(tok.tokenize_lines(lines, offsets=True)) == [tok.tokenize(t, offsets=True) for t in lines]


def test_new_models_use_the_candidate_engine_and_old_files_the_character_tagger(tok, tmp_path):
    assert tok.candidates
    path = tmp_path / "tok.ftm"
    tok.save(path)
    assert Tokenizer.load(path).candidates
    previous = Path(__file__).resolve().parent / "data" / "previous" / "tokenizer.ftm"
    assert not Tokenizer.load(previous).candidates


def test_multiword_tokens_split_where_no_candidate_lies_are_expanded(tmp_path):
    """Portuguese "ao" = "a" + "o": the split lies inside a letter run, so
    the expansion table carries it; tokenize_lines' compiled path expands
    as tokenize does, offsets included."""
    rows = []
    for i in range(2):
        rows += ["1\tVou\t_\t_\t_\t_\t_\t_\t_\t_", "2-3\tao\t_\t_\t_\t_\t_\t_\t_\t_", "2\ta\t_\t_\t_\t_\t_\t_\t_\t_",
                 "3\to\t_\t_\t_\t_\t_\t_\t_\t_", "4\tmar\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No",
                 "5\t.\t_\t_\t_\t_\t_\t_\t_\t_", ""]
    # many letter runs end in "o" unsplit: "o" is no learned suffix, so "ao" needs the table
    rows += [f"{i}\tbelo\t_\t_\t_\t_\t_\t_\t_\t_" for i in range(1, 41)] + [""]
    path = tmp_path / "pt.conllu"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    tok = Tokenizer.train(path, epochs=10, verbose=False)
    assert tok.expansions == {"ao": ("a", "o")}
    texts = ["Vou ao mar.", "AO mar. Ao mar.", "aos mares"]
    assert tok.tokenize(texts[0]) == [["Vou", "a", "o", "mar", "."]]
    assert tok.tokenize(texts[0], offsets=True)[0][1:3] == [("a", 4, 5), ("o", 5, 6)]
    assert list(tok.tokenize_lines(texts)) == [tok.tokenize(t) for t in texts]
    assert list(tok.tokenize_lines(texts, offsets=True)) == [tok.tokenize(t, offsets=True) for t in texts]
