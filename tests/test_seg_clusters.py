"""Features of the segmenter learned from unlabeled text: character
clusters and word candidates (strings of high accessor variety).  Their
attributes against slow references, both stored in the model (and
corrupt ones refused at load), a word of unseen characters segmented by
their clusters, and ``fasttag train seg --clusters --unlabeled`` through
the console script."""
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasttag
from fasttag import Segmenter
from fasttag.model import modelfile
from fasttag._core.weights import hash_strings
from fasttag.features.chars import MAX_WORD, mix, word_hashes
from fasttag.features.segmentation import (ATTRIBUTES, CANDIDATE_ATTRIBUTES, CLUSTER_ATTRIBUTES, CLUSTER_PREFIXES,
                                           CharClusters, CharFeaturizer, accessor_variety, character_sentences,
                                           word_candidates)
from fasttag.features.clusters import Clusters, cluster, read_clusters
from fasttag.errors import InputError, ModelFormatError
from fasttag.features.normalize import normalize_text

# ---------------------------------------------------------------- the attributes against a reference

# Chinese characters, full- and half-width forms of the same letters and
# digits, characters beyond the BMP, and one never in any cluster
ALPHABET = "中国人民的一了是在不１1Ａa𠀀𠀁😀。，?"


def reference_cluster_values(line, clusters):
    """The cluster attributes of every non-space character of ``line``,
    the slow way: its folded form's entry (the entry that is its own
    folded form, else the smallest character folding to it), every prefix
    of the entry's bit string hashed (0 without an entry), then mixed with
    the attribute's seed as every character attribute is."""
    entries = {}
    for ch in sorted(clusters):
        f = normalize_text(ch)
        if f not in entries or ch == f:
            entries[f] = ch
    n_attrs = len(ATTRIBUTES) + len(CLUSTER_ATTRIBUTES)
    seeds = mix(np.arange(1, n_attrs + 1, dtype=np.uint64) * np.uint64(0x51ED27))[len(ATTRIBUTES):]
    rows = []
    for ch in line:
        if ch.isspace():
            continue
        bits = clusters.get(entries.get(normalize_text(ch)))
        row = []
        for j, k in enumerate(CLUSTER_PREFIXES + (None,)):
            value = np.uint64(0) if bits is None else hash_strings([bits[:k]])[0] | np.uint64(1)
            row.append(mix(np.array([value ^ seeds[j]], dtype=np.uint64))[0])
        rows.append(row)
    return np.array(rows, dtype=np.uint64).reshape(-1, len(CLUSTER_ATTRIBUTES))


bit_strings = st.text("01", min_size=1, max_size=14)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(ALPHABET[:-1]), bit_strings, min_size=1),
       st.lists(st.text(ALPHABET + " ", max_size=12), min_size=1, max_size=4))
def test_cluster_attributes_match_the_slow_reference(clusters, lines):
    plain = CharFeaturizer().batch(lines)
    with_clusters = CharFeaturizer(clusters=CharClusters(Clusters(clusters))).batch(lines)
    n = len(ATTRIBUTES)
    # the character attributes are those of a featurizer without clusters
    assert np.array_equal(with_clusters.attrs[:, :n], plain.attrs)
    assert np.array_equal(with_clusters.bounds, plain.bounds)
    expected = np.concatenate([reference_cluster_values(line, clusters) for line in lines])
    assert np.array_equal(with_clusters.attrs[:, n:], expected.reshape(-1, len(CLUSTER_ATTRIBUTES)))


def test_clusters_of_several_characters_are_refused():
    with pytest.raises(InputError, match="not one character"):
        CharClusters(Clusters({"中国": "01", "人": "1"}))
    with pytest.raises(InputError, match="not one character"):
        Segmenter.train(["中国 人民"], clusters={"中国": "01"}, epochs=1, verbose=False)


def test_character_sentences_fold_widths_and_drop_spaces():
    assert character_sentences(["中国 １９ ", "", " \t"]) == [["中", "国", "1", "9"]]


# ---------------------------------------------------------------- a tiny corpus where clusters decide

def _chars(start, n):
    return "".join(chr(start + i) for i in range(n))


# Many two-character words, most seen once, so that the dictionary
# features (jackknifed) do not decide alone, as on real text
LEFT = _chars(0x4E00, 30)              # always the first character of a two-character word
RIGHT = _chars(0x4F00, 30)             # always the second
SINGLE = "金木水火土日月山川风" + _chars(0x5200, 20)      # always a word alone
NEW_LEFT = _chars(0x5000, 5)           # in the clusters only, never in the training text
NEW_RIGHT = _chars(0x5100, 5)
NEW_SINGLE = _chars(0x5300, 10)


def _tiny_corpus(n=400, seed=1):
    rng = random.Random(seed)
    sents = []
    for _ in range(n):
        words = []
        for _ in range(rng.randint(3, 7)):
            words.append(rng.choice(LEFT) + rng.choice(RIGHT) if rng.random() < 0.5 else rng.choice(SINGLE))
        sents.append(words)
    # one cluster per kind of character
    clusters = {c: "00" for c in LEFT + NEW_LEFT}
    clusters.update({c: "01" for c in RIGHT + NEW_RIGHT})
    clusters.update({c: "1" for c in SINGLE + NEW_SINGLE})
    return sents, clusters


def _new_words_right(seg):
    """How many lines of unseen characters come out right: two-character
    words (left and right kinds) and pairs of single-character words, in
    the same context.  Without clusters the two lines of each pair look
    the same to a model (unseen characters have no weights), so at most
    half of them can be right."""
    right = 0
    for a, b, x, y in zip(NEW_LEFT, NEW_RIGHT, NEW_SINGLE[::2], NEW_SINGLE[1::2]):
        right += seg.segment(f"金{a}{b}木") == ["金", a + b, "木"]
        right += seg.segment(f"金{x}{y}木") == ["金", x, y, "木"]
    return right


def test_unseen_characters_are_segmented_by_their_clusters():
    sents, clusters = _tiny_corpus()
    with_clusters = Segmenter.train(sents, clusters=clusters, epochs=3, verbose=False)
    without = Segmenter.train(sents, epochs=3, verbose=False)
    assert _new_words_right(with_clusters) == 2 * len(NEW_LEFT)
    assert _new_words_right(without) <= len(NEW_LEFT)
    # and the clusters are used through the model file
    assert _new_words_right(Segmenter.from_bytes(with_clusters.to_bytes())) == 2 * len(NEW_LEFT)


# ---------------------------------------------------------------- storage

def test_clusters_are_stored_in_the_model(tmp_path):
    sents, clusters = _tiny_corpus(100)
    cpath = tmp_path / "char-clusters.txt"
    Clusters(clusters).save(cpath)
    seg = Segmenter.train(sents, clusters=str(cpath), epochs=1, verbose=False)
    assert {"cl[-1]|cl[0]", "cl[0]|cl[1]"} <= set(seg.model.templates.names)
    model_path = tmp_path / "m.ftm"
    seg.save(model_path)
    cpath.unlink()
    assert b"char-clusters" not in model_path.read_bytes()
    loaded = fasttag.load(model_path)
    assert dict(loaded.model.featurizer.clusters.clusters) == clusters
    text = ["金" + LEFT[0] + RIGHT[0] + "木" + NEW_LEFT[0] + NEW_RIGHT[0], LEFT[1] + RIGHT[1] + " 火"]
    assert list(loaded.segment_lines(text)) == list(seg.segment_lines(text))
    header, arrays = modelfile.loads(loaded.to_bytes())
    assert header["featurizer"]["clusters"] is True and "clusters" in arrays


def test_models_without_clusters_are_written_as_before():
    sents, _ = _tiny_corpus(100)
    seg = Segmenter.train(sents, epochs=1, verbose=False)
    header, arrays = modelfile.loads(seg.to_bytes())
    assert "clusters" not in arrays and "clusters" not in header["featurizer"]
    assert not any(t.startswith("cl") for t in seg.model.templates.names)
    assert seg.model.featurizer.attribute_names == list(ATTRIBUTES)


@pytest.mark.parametrize("corrupt", [
    lambda h, a: a.__setitem__("clusters", np.frombuffer("01\t中国\n".encode(), dtype=np.uint8).copy()),
    lambda h, a: a.__setitem__("clusters", np.frombuffer("01\t中\n2\t国\n".encode(), dtype=np.uint8).copy()),
    lambda h, a: a.__setitem__("clusters", np.frombuffer("01\t中".encode(), dtype=np.uint8).copy()),
    lambda h, a: a.__setitem__("clusters", np.frombuffer(b"\xff\xfe\n", dtype=np.uint8).copy()),
    lambda h, a: a.__setitem__("clusters", np.zeros(3, dtype=np.int32)),
    lambda h, a: a.__setitem__("clusters", np.zeros(0, dtype=np.uint8)),
    lambda h, a: a.pop("clusters"),
    lambda h, a: h["featurizer"].pop("clusters"),
    lambda h, a: h["featurizer"].__setitem__("clusters", "yes"),
])
def test_corrupt_clusters_in_a_model_are_a_format_error(corrupt, reload_corrupted):
    sents, clusters = _tiny_corpus(50)
    seg = Segmenter.train(sents, clusters=clusters, epochs=1, verbose=False)
    with pytest.raises(ModelFormatError):
        reload_corrupted(seg, corrupt)


def test_cluster_templates_need_the_clusters(reload_corrupted):
    """A model whose templates use cluster attributes but holds no clusters
    is refused (the featurizer would not have those attributes)."""
    sents, clusters = _tiny_corpus(50)
    seg = Segmenter.train(sents, clusters=clusters, epochs=1, verbose=False)
    with pytest.raises(ModelFormatError):
        reload_corrupted(seg, lambda h, a: (h["featurizer"].pop("clusters"), a.pop("clusters")))


# ---------------------------------------------------------------- learning character clusters

def test_character_clusters_learned_from_text_separate_the_kinds():
    sents, _ = _tiny_corpus(600, seed=3)
    learned = cluster(character_sentences("".join(ws) for ws in sents), n_clusters=3, min_count=1)
    groups = {kind: {learned[c] for c in chars} for kind, chars in
              (("left", LEFT), ("right", RIGHT), ("single", SINGLE))}
    assert all(len(g) == 1 for g in groups.values())
    assert len(set.union(*groups.values())) == 3


# ---------------------------------------------------------------- the command

def test_train_seg_with_clusters_through_the_command(run_cli, tmp_path):
    sents, clusters = _tiny_corpus(300)
    train = tmp_path / "train.txt"
    train.write_text("".join(" ".join(ws) + "\n" for ws in sents), encoding="utf-8")
    cpath = tmp_path / "clusters.txt"
    Clusters(clusters).save(cpath)
    model = tmp_path / "m.ftm"
    result = run_cli("train", "seg", train, "-o", model, "--clusters", cpath, "--epochs", "3", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    raw = tmp_path / "raw.txt"
    raw.write_text("".join(f"金{a}{b}木\n" for a, b in zip(NEW_LEFT, NEW_RIGHT)), encoding="utf-8")
    out = tmp_path / "out.txt"
    result = run_cli("segment", raw, "-m", model, "-o", out, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8").splitlines() == [f"金 {a}{b} 木" for a, b in zip(NEW_LEFT, NEW_RIGHT)]


def test_train_seg_with_word_clusters_stops_with_one_line(run_cli, tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("中国 人民\n", encoding="utf-8")
    cpath = tmp_path / "words.txt"
    cpath.write_text("01\t中国\t5\n", encoding="utf-8")
    model = tmp_path / "m.ftm"
    result = run_cli("train", "seg", train, "-o", model, "--clusters", cpath, cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.decode("utf-8").strip().splitlines()
    assert len(lines) == 1 and "clusters" in lines[0] and "not one character" in lines[0]
    assert not model.exists()


# ---------------------------------------------------------------- word candidates (accessor variety)

def reference_accessor_variety(lines, lengths):
    """{n-gram: AV}: the fewer of its distinct left and right neighbours
    (a line's start or end being one more neighbour), the slow way."""
    left, right = {}, {}
    for line in lines:
        for L in lengths:
            for i in range(len(line) - L + 1):
                g = line[i:i + L]
                left.setdefault(g, set()).add(line[i - 1] if i > 0 else None)
                right.setdefault(g, set()).add(line[i + L] if i + L < len(line) else None)
    return {g: min(len(left[g]), len(right[g])) for g in left}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text("ab中国𠀀", max_size=14), max_size=8), st.sets(st.integers(2, 5), min_size=1))
def test_accessor_variety_matches_the_slow_reference(lines, lengths):
    hashes, lens, av = accessor_variety(lines, sorted(lengths))
    expected = reference_accessor_variety(lines, lengths)
    assert len(hashes) == len(expected)
    ref_hashes, ref_lens = word_hashes(list(expected))
    got = dict(zip(hashes.tolist(), zip(lens.tolist(), av.tolist())))
    assert got == dict(zip(ref_hashes.tolist(), zip(ref_lens.tolist(), expected.values())))


def reference_candidate_lengths(line, candidates):
    """(ub, ue, um) of every non-space character: the longest candidate
    (2..MAX_WORD characters, within the line's whitespace-free text)
    starting at, ending at and strictly containing it."""
    text = normalize_text("".join(line.split()))
    n = len(text)
    ub, ue, um = [0] * n, [0] * n, [0] * n
    for i in range(n):
        for L in range(2, MAX_WORD + 1):
            if i + L <= n and text[i:i + L] in candidates:
                ub[i] = max(ub[i], L)
                ue[i + L - 1] = max(ue[i + L - 1], L)
                for j in range(i + 1, i + L - 1):
                    um[j] = max(um[j], L)
    return list(zip(ub, ue, um))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text("ab中国人", max_size=30), min_size=1, max_size=6),
       st.lists(st.text("ab中国人 ", max_size=10), min_size=1, max_size=4), st.integers(1, 4))
def test_candidate_attributes_match_the_slow_reference(unlabeled, lines, min_av):
    candidates = word_candidates(unlabeled, min_av=min_av)
    folded = [normalize_text("".join(u.split())) for u in unlabeled]
    expected_words = {g for g, av in reference_accessor_variety(folded, range(2, MAX_WORD + 1)).items()
                      if av >= min_av}
    assert len(candidates) == len(expected_words)
    batch = CharFeaturizer(candidates=candidates).batch(lines)
    plain = CharFeaturizer().batch(lines)
    n = len(ATTRIBUTES)
    assert np.array_equal(batch.attrs[:, :n], plain.attrs)
    # the same lengths give the same values: compare through a featurizer's
    # own value of each length
    fz = CharFeaturizer(candidates=candidates)
    expected = [row for line in lines for row in reference_candidate_lengths(line, expected_words)]
    for k in range(len(CANDIDATE_ATTRIBUTES)):
        want = np.array([row[k] for row in expected], dtype=np.int64)
        assert np.array_equal(batch.attrs[:, n + k], fz._attr(n + k, want))


def _many_contexts():
    """Lines where two words (中国, 人民) occur between many characters."""
    return [a + "中国" + b + "人民" + c for a in SINGLE[:6] for b in SINGLE[:6] for c in SINGLE[:6]]


def test_word_candidates_are_stored_in_the_model(tmp_path):
    sents, clusters = _tiny_corpus(200)
    raw = ["".join(ws) for ws in sents] + _many_contexts()
    seg = Segmenter.train(sents, clusters=clusters, unlabeled=raw, epochs=1, verbose=False)
    assert {"ub[0]|ue[0]|um[0]", "cl[0]|cl[1]"} <= set(seg.model.templates.names)
    loaded = Segmenter.from_bytes(seg.to_bytes())
    assert len(word_candidates(raw)) >= 2
    assert np.array_equal(loaded.model.featurizer.candidates.hashes, word_candidates(raw).hashes)
    text = raw[:20]
    assert list(loaded.segment_lines(text)) == list(seg.segment_lines(text))
    # from a file, the same
    path = tmp_path / "raw.txt"
    path.write_text("\n".join(raw) + "\n", encoding="utf-8")
    from_file = Segmenter.train(sents, clusters=clusters, unlabeled=str(path), epochs=1, verbose=False)
    assert np.array_equal(from_file.model.featurizer.candidates.hashes, loaded.model.featurizer.candidates.hashes)
    with pytest.raises(InputError, match="no such file"):
        Segmenter.train(sents, unlabeled=str(tmp_path / "missing.txt"), epochs=1, verbose=False)
    with pytest.raises(InputError, match="fine-tuning"):
        Segmenter.train(sents, init=seg, unlabeled=raw, epochs=1, verbose=False)


@pytest.mark.parametrize("corrupt", [
    lambda h, a: a.__setitem__("candidates", a["candidates"][::-1].copy()),
    lambda h, a: a.__setitem__("candidates", a["candidates"].astype(np.int64)),
    lambda h, a: a.__setitem__("candidates", np.concatenate([a["candidates"], a["candidates"][-1:]])),
    lambda h, a: a.pop("candidates"),
    lambda h, a: h["featurizer"].pop("candidate_lengths"),
    lambda h, a: h["featurizer"].__setitem__("candidate_lengths", [1, 2]),
    lambda h, a: h["featurizer"].__setitem__("candidate_lengths", [3, 2]),
    lambda h, a: h["featurizer"].__setitem__("candidate_lengths", [2, MAX_WORD + 1]),
    lambda h, a: h["featurizer"].__setitem__("candidate_lengths", "2"),
])
def test_corrupt_word_candidates_are_a_format_error(corrupt):
    sents, _ = _tiny_corpus(100)
    seg = Segmenter.train(sents, unlabeled=_many_contexts(), epochs=1, verbose=False)
    header, arrays = modelfile.loads(seg.to_bytes())
    header.pop("arrays", None)
    assert len(arrays["candidates"]) > 1
    corrupt(header, arrays)
    with pytest.raises(ModelFormatError):
        Segmenter.from_bytes(modelfile.dumps(header, arrays))


def test_train_seg_with_unlabeled_text_through_the_command(run_cli, tmp_path):
    sents, clusters = _tiny_corpus(200)
    train = tmp_path / "train.txt"
    train.write_text("".join(" ".join(ws) + "\n" for ws in sents), encoding="utf-8")
    raw = tmp_path / "raw.txt"
    raw.write_text("".join("".join(ws) + "\n" for ws in sents), encoding="utf-8")
    model = tmp_path / "m.ftm"
    result = run_cli("train", "seg", train, "-o", model, "--unlabeled", raw, "--epochs", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "ub[0]|ue[0]|um[0]" in fasttag.load(model).model.templates.names
    result = run_cli("train", "seg", train, "-o", model, "--unlabeled", tmp_path / "missing.txt", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.decode("utf-8").strip().splitlines()
    assert len(lines) == 1 and "missing.txt" in lines[0]


def test_cluster_chars_then_train_seg_with_them(run_cli, tmp_path):
    sents, _ = _tiny_corpus(600, seed=3)
    raw = tmp_path / "raw.txt"
    raw.write_text("".join(" ".join(ws) + "\n" for ws in sents), encoding="utf-8")   # spaces are dropped
    out = tmp_path / "chars.txt"
    result = run_cli("cluster", raw, "--chars", "-o", out, "--clusters", "3", "--min-count", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    learned = read_clusters(out)
    assert all(len(w) == 1 for w in learned) and set(LEFT + RIGHT + SINGLE[:10]) <= set(learned)
    assert len({learned[c] for c in LEFT}) == 1 and learned[LEFT[0]] != learned[RIGHT[0]]
    train = tmp_path / "train.txt"
    train.write_text("".join(" ".join(ws) + "\n" for ws in sents[:100]), encoding="utf-8")
    model = tmp_path / "m.ftm"
    result = run_cli("train", "seg", train, "-o", model, "--clusters", out, "--epochs", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(fasttag.load(model).model.featurizer.clusters) == len(learned)
