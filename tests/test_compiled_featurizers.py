"""The compiled featurizer steps against slow, obviously correct Python.

The word-type ids and distinct types of the word featurizer, the hashed
feature columns of the span featurizer and the document features of span
tagging are compiled (``fasttag._core.wordtypes``, ``fasttag._core.documents``); the
references below are the Python they replaced.  Random words include
non-ASCII letters, titlecase and special-cased characters, digits,
punctuation, empty strings and very long words.
"""
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fasttag._core.wordtypes import column_values, distinct, lookup_ids
from fasttag.features.words import WordFeaturizer, hash_texts
from fasttag.features.spans import DOCUMENT_EXTRAS, SpanFeaturizer, cap_runs, document_extras

# characters whose case rules trip simple code: titlecase (ǅ), a lowercase
# letter without an uppercase form (ß), one with a two-character lowercase
# form (İ), an uppercase letter outside the Latin script, a modifier
# letter, digits of other scripts, CJK, an emoji beyond the BMP
SPECIAL = "aAbBzZǅǆǄßİıΩωДд١२ʰ中文𝐀😀-.,'0 9_"
chars = st.one_of(st.sampled_from(SPECIAL),
                  st.characters(blacklist_categories=("Cs",)))        # no lone surrogates
words = st.one_of(st.text(chars, min_size=0, max_size=6),
                  st.sampled_from(["A", "The", "NEW", "York", "a", "U.S.", "", "McDonald",
                                   "ǅemal", "İstanbul", "ÉCOLE", "x" * 300]),
                  st.builds(lambda w, k: w * k, st.text(chars, min_size=1, max_size=3),
                            st.integers(40, 150)))         # long words, cheaply


# ---------------------------------------------------------------- word types

@settings(max_examples=100, deadline=None)
@given(st.lists(words, max_size=20), st.lists(words, max_size=20))
def test_lookup_ids_is_dict_get(known, queries):
    index = {w: i for i, w in enumerate(dict.fromkeys(known))}
    ids, missing = lookup_ids(index, queries)
    expect = [index.get(w, -1) for w in queries]
    assert ids.dtype == np.int64 and ids.tolist() == expect
    assert missing == expect.count(-1)


def test_lookup_ids_of_an_unhashable_token_is_a_type_error():
    with pytest.raises(TypeError):
        lookup_ids({"a": 0}, ["a", ["not", "hashable"]])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 50) | st.integers(0, 2 ** 62), max_size=300))
def test_distinct_gives_each_value_once_in_first_occurrence_order(values):
    ids = np.array(values, dtype=np.int64)
    unique, index = distinct(ids)
    assert unique.tolist() == list(dict.fromkeys(values))
    assert unique[index].tolist() == values


def test_distinct_refuses_negative_ids():
    with pytest.raises(ValueError):
        distinct(np.array([3, -1], dtype=np.int64))


def reference_word_rows(words):
    """The hashed word attributes of each token, computed per token."""
    seeds = np.array(WordFeaturizer()._seeds, dtype=np.uint64)
    rows = [hash_texts(WordFeaturizer.word_attributes(w)) ^ seeds for w in words]
    return np.array(rows, dtype=np.uint64).reshape(len(words), len(WordFeaturizer.ATTRIBUTES))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(words, max_size=10), max_size=4))
def test_word_attributes_equal_the_per_token_reference(batches):
    fz = WordFeaturizer()                # one featurizer over the batches: its cache fills up
    for tokens in batches:
        assert np.array_equal(fz.attributes(tokens), reference_word_rows(tokens))
        ids, rows = fz.lookup(tokens)
        assert np.array_equal(rows[ids], reference_word_rows(tokens))


def test_word_featurizer_names_a_token_that_is_not_a_str():
    with pytest.raises(TypeError, match="a token must be a str, not int"):
        WordFeaturizer().attributes(["a", 3])
    with pytest.raises(TypeError, match="a token must be a str, not list"):
        WordFeaturizer().attributes(["a", ["b"]])


# ---------------------------------------------------------------- columns

def reference_columns(fz, columns):
    return np.array([[hash_texts([f"{fz.column_names[j]}={c[j]}"])[0] for j in range(fz.n_columns)]
                     for c in columns], dtype=np.uint64).reshape(len(columns), fz.n_columns)


column_values_st = st.text(chars, max_size=5)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 4), st.data())
def test_span_columns_equal_the_per_token_reference(n_columns, data):
    fz = SpanFeaturizer(n_columns)
    for _ in range(3):                   # the column caches persist across batches
        tokens = data.draw(st.lists(words, max_size=15))
        columns = [tuple(data.draw(column_values_st) for _ in range(n_columns)) for _ in tokens]
        attrs = fz.attributes(tokens, columns)
        n_word = len(WordFeaturizer.ATTRIBUTES)
        assert np.array_equal(attrs[:, :n_word], reference_word_rows(tokens))
        assert np.array_equal(attrs[:, n_word:], reference_columns(fz, columns))


def test_column_caches_start_over_when_full():
    fz = SpanFeaturizer(1)
    fz.MAX_CACHE = 5
    for batch in range(4):
        columns = [(f"v{batch}-{i}",) for i in range(8)]
        attrs = fz.attributes(["w"] * 8, columns)
        assert np.array_equal(attrs[:, -1:], reference_columns(fz, columns))


def test_a_column_value_that_is_not_a_str_is_named():
    with pytest.raises(TypeError, match="feature column c2: a value must be a str, not int"):
        SpanFeaturizer(2).attributes(["a"], [("NN", 5)])


def test_column_values_checks_its_arguments():
    out = np.zeros((1, 2), dtype=np.uint64)
    with pytest.raises(ValueError):
        column_values([("a", "b", "c")], [{}, {}], out, 0)
    with pytest.raises(ValueError):
        column_values([("a", "b")], [{}, {}], out, 1)
    assert column_values([("a", "b")], [{"a": 7}, {}], out, 0) == 1
    assert out[0, 0] == 7


# ---------------------------------------------------------------- documents

def reference_cap_runs(words):
    n = len(words)
    roles = [""] * n
    i = 0
    while i < n:
        if words[i][:1].isupper():
            j = i
            while j + 1 < n and words[j + 1][:1].isupper():
                j += 1
            if i == j:
                roles[i] = "A"
            else:
                roles[i] = "F"
                roles[j] = "L"
                for m in range(i + 1, j):
                    roles[m] = "M"
            i = j + 1
        else:
            i += 1
    return roles


_ROLE_SLOT = {"A": 3, "F": 4, "M": 5, "L": 6}


def reference_document_extras(sentences, doc_ids, extras):
    """The Python implementation the compiled one replaced, unchanged."""
    want = [e in extras for e in ("doc", "headline", "docrun")]
    out = [None] * len(sentences)
    by_doc = {}
    for i, d in enumerate(doc_ids):
        by_doc.setdefault(d, []).append(i)
    for members in by_doc.values():
        heads, roles_of, occ = {}, {}, Counter()
        for i in members:
            words = sentences[i]
            n_cased = n_upper = 0
            for w in words:
                if not w.isalpha() and not any(ch.isalpha() for ch in w):
                    continue
                n_cased += 1
                n_upper += w.isupper()
            head = n_cased > 1 and 2 * n_upper > n_cased
            heads[i] = head
            roles = reference_cap_runs(words)
            roles_of[i] = roles
            if not head:
                occ.update(zip(words, roles))
                occ[(words[0], "^")] += 1
                occ[(words[0], roles[0])] -= 1
        stats = {}
        for (w, role), c in occ.items():
            if not c:
                continue
            st_ = stats.setdefault(w.lower(), [0] * 7)
            if w.islower():
                st_[0] += c
            elif role != "^" and w[:1].isupper():
                st_[2 if w.isupper() and len(w) > 1 else 1] += c
                st_[_ROLE_SLOT[role]] += c
        cache = {}
        for i in members:
            words, head, roles = sentences[i], heads[i], roles_of[i]
            rows = []
            for p, w in enumerate(words):
                role = "^" if p == 0 else roles[p]
                key = (w, role, head)         # (the cache the models were trained with)
                if key not in cache:
                    cache[key] = reference_row(w, role, head, want, stats, roles[p])
                rows.append(cache[key])
            out[i] = rows
    return out


def reference_row(w, role, head, want, stats, own_role):
    st_ = list(stats.get(w.lower(), (0,) * 7))
    if not head:
        if w.islower():
            st_[0] -= 1
        elif role != "^" and w[:1].isupper():
            st_[2 if w.isupper() and len(w) > 1 else 1] -= 1
            st_[_ROLE_SLOT[role]] -= 1
    row = []
    if want[0]:
        row.append(("l" if st_[0] > 0 else "-") + ("t" if st_[1] > 0 else "-") + ("a" if st_[2] > 0 else "-")
                   + ("0" if role == "^" else ""))
    if want[1]:
        row.append("H" if head else "-")
    if want[2]:
        row.append("".join(r for r, n in zip("AFML", st_[3:]) if n > 0) or "-")
        row.append(own_role or "-")
    return tuple(row)


# words that repeat, so documents have statistics to find
doc_words = st.one_of(st.sampled_from(["the", "The", "THE", "new", "New", "NEW", "York", "york", "YORK",
                                       "A", "a", "I", "ǅemal", "ǆemal", "İ", "i", "ß", "SS", "Ω", "ω",
                                       ",", ".", "1990", "U.S.", "", "x" * 200]),
                      st.text(chars, min_size=1, max_size=3))
EXTRAS_SETS = [list(DOCUMENT_EXTRAS), ["doc"], ["headline"], ["docrun", "caprole"],
               ["doc", "headline"]]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(doc_words, min_size=1, max_size=10), min_size=1, max_size=8),
       st.data(), st.sampled_from(EXTRAS_SETS))
def test_document_extras_equal_the_python_reference(sentences, data, extras):
    docs = data.draw(st.lists(st.integers(0, 2), min_size=len(sentences), max_size=len(sentences)))
    assert document_extras(sentences, docs, extras) == reference_document_extras(sentences, docs, extras)


@settings(max_examples=100, deadline=None)
@given(st.lists(words, max_size=15))
def test_capitalisation_runs_equal_the_python_reference(sentence):
    assert cap_runs(sentence) == reference_cap_runs(sentence)


def test_every_character_alone_has_the_case_python_gives_it():
    # one-character words, the whole BMP (surrogates left out) and a few
    # beyond it, in sentences of four: the case tests run per character
    cps = [c for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF] + [0x1D400, 0x1F600, 0x10400, 0x10428]
    sentences = [[chr(c) for c in cps[i:i + 4]] for i in range(0, len(cps), 4)]
    doc_ids = [i // 50 for i in range(len(sentences))]
    got = document_extras(sentences, doc_ids, DOCUMENT_EXTRAS)
    assert got == reference_document_extras(sentences, doc_ids, DOCUMENT_EXTRAS)


def test_docrun_without_caprole_is_refused():
    with pytest.raises(ValueError, match="docrun and caprole go together"):
        document_extras([["A"]], [0], ["docrun"])


def test_document_extras_name_a_token_that_is_not_a_str():
    with pytest.raises(TypeError, match="a token must be a str"):
        document_extras([["A", 3]], [0], ["doc"])


def test_document_extras_of_real_news(shared_data):
    """CoNLL-2003 test documents, all extras: the compiled values are the
    reference's."""
    from fasttag.tasks.spans import _read_sentences
    sents, docs = _read_sentences(str(shared_data / "conll2003" / "eng.testb"))
    pairs = [(list(s.words), d) for s, d in zip(sents, docs) if s.words][:1500]
    words, doc_ids = [p[0] for p in pairs], [p[1] for p in pairs]
    assert document_extras(words, doc_ids, DOCUMENT_EXTRAS) == \
        reference_document_extras(words, doc_ids, DOCUMENT_EXTRAS)


# ---------------------------------------------------------------- template keys

M64 = (1 << 64) - 1


def mix64(x):
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def reference_keys(attrs, bounds, templates):
    """Every template's key at every token, one hash_combine at a time."""
    from fasttag._core.weights import combine
    out = np.zeros((attrs.shape[0], len(templates)), dtype=np.uint64)
    for s in range(len(bounds) - 1):
        start, end = int(bounds[s]), int(bounds[s + 1])
        for i in range(start, end):
            for t in range(len(templates)):
                h = int(templates.seeds[t])
                for p in range(templates.n_parts[t]):
                    pos = i + int(templates.offsets[t, p])
                    a = int(templates.attr_ids[t, p])
                    if start <= pos < end:
                        v = int(attrs[pos, a])
                    else:
                        outside = pos - start if pos < start else pos - end + 1
                        v = mix64(0x5EED5EED00000000 ^ ((a + 1) << 16) ^ ((outside + 0x8000) & M64))
                    h = combine(h, v)
                out[i, t] = h
    return out


template_parts = st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(-3, 3))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(template_parts, max_size=4), min_size=1, max_size=5, unique_by=str),
       st.lists(st.integers(0, 6), min_size=1, max_size=6), st.data())
def test_template_keys_equal_one_combine_at_a_time(parts, lengths, data):
    from fasttag.features.words import Templates
    names = sorted({"|".join(f"{a}[{o}]" for a, o in ps) if ps else "bias" for ps in parts})
    templates = Templates(names, ["a", "b", "c"])
    bounds = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    values = data.draw(st.lists(st.integers(0, M64), min_size=3 * int(bounds[-1]),
                                max_size=3 * int(bounds[-1])))
    attrs = np.array(values, dtype=np.uint64).reshape(-1, 3)
    assert np.array_equal(templates.keys(attrs, bounds), reference_keys(attrs, bounds, templates))


def test_template_keys_across_blocks_of_many_tokens():
    # the compiled extractor works through blocks of thousands of tokens:
    # sentences that straddle them, long ones and empty ones
    from fasttag.features.words import Templates
    rng = np.random.default_rng(5)
    lengths = [0, 4095, 3, 0, 5000, 1, 2, 4100, 7]
    bounds = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    attrs = rng.integers(0, 2 ** 63, size=(int(bounds[-1]), 2), dtype=np.uint64)
    templates = Templates(["bias", "x[0]", "x[-2]|y[1]", "y[-1]|x[0]|y[2]", "x[5]"], ["x", "y"])
    assert np.array_equal(templates.keys(attrs, bounds), reference_keys(attrs, bounds, templates))


# ---------------------------------------------------------------- segmentation dictionary

zh_chars = st.sampled_from("中国人民日报北京大学生一二三〇○ＡAａa１1 　𠀀𠀁\t")
zh_text = st.text(zh_chars, max_size=30)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(zh_chars.filter(lambda c: not c.isspace()), min_size=1, max_size=9), max_size=30),
       st.lists(zh_text, max_size=8))
def test_compiled_dictionary_matching_equals_the_vector_path(words, lines):
    # the per-fold dictionaries of jackknifed training still take the
    # numpy path (match_lengths): one fold holding the same words must
    # give the same db/de/dm attributes as the compiled matcher
    from fasttag.features.chars import WordSet
    from fasttag.features.segmentation import CharFeaturizer
    ws = WordSet(words, min_length=2)
    fz = CharFeaturizer(dictionary=ws)
    compiled = fz.batch(lines)
    fz.fold_dictionaries = [ws]
    vector = fz.batch(lines, [0] * len(lines))
    assert np.array_equal(compiled.attrs, vector.attrs)
    assert np.array_equal(compiled.bounds, vector.bounds)


def test_dictionary_matching_finds_the_longest_words():
    from fasttag.features.chars import WordSet
    from fasttag.features.segmentation import ATTRIBUTES, CharFeaturizer
    fz = CharFeaturizer(dictionary=WordSet(["北京", "北京大学", "大学生", "学生"]))
    attrs = fz.batch(["北京大学生 北京"]).attrs
    plain = CharFeaturizer()
    # db/de/dm are hashes of lengths: compare with a featurizer fed known lengths
    def lengths(column):
        code = {int(plain._attr(column, np.array([L]))[0]): L for L in range(8)}
        return [code[int(v)] for v in attrs[:, column]]
    db, de, dm = (ATTRIBUTES.index(a) for a in ("db", "de", "dm"))
    assert lengths(db) == [4, 0, 3, 2, 0, 2, 0]     # the space is a boundary: 北京 only
    assert lengths(de) == [0, 2, 0, 4, 3, 0, 2]
    assert lengths(dm) == [0, 4, 4, 3, 0, 0, 0]
