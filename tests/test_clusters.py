"""Brown clusters: learning them (against a slow reference of the
objective), the clusters file format, cluster features in trained models
(stored inside the model), and the ``fasttag cluster`` command."""
import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasttag
from fasttag import SpanTagger, Tagger
from fasttag.model import modelfile
from fasttag._core.brown import merge, xlogx_table
from fasttag.features.clusters import Clusters, cluster, read_clusters
from fasttag.errors import InputError, ModelFormatError

# ---------------------------------------------------------------- reference


def _f(x):
    return x * math.log(x) if x > 0 else 0.0


def objective(N):
    """The class-bigram log-likelihood (up to a constant) of the class
    bigram counts ``N``: sum f(N) - sum f(row sums) - sum f(column sums)."""
    N = np.asarray(N)
    return (sum(_f(x) for x in N.flat) - sum(_f(x) for x in N.sum(axis=1))
            - sum(_f(x) for x in N.sum(axis=0)))


def class_counts(sentences, word_class, n_classes):
    """Class bigram counts, the slow way: sentence boundaries and words
    without a class are the fixed class ``n_classes``."""
    N = np.zeros((n_classes + 1, n_classes + 1), dtype=np.int64)
    for s in sentences:
        seq = [n_classes] + [word_class.get(w, n_classes) for w in s] + [n_classes]
        for a, b in zip(seq, seq[1:]):
            N[a, b] += 1
    return N


def leaf_classes(clusters):
    """word -> leaf index (the distinct bit strings, numbered)."""
    leaves = {b: i for i, b in enumerate(sorted(set(clusters.values())))}
    return {w: leaves[b] for w, b in clusters.items()}, len(leaves)


def _two_class_corpus(n=1500, seed=0):
    """Nouns only after "the" and before "runs"; verbs only after "we" and
    before "now": two word classes in disjoint contexts."""
    rng = random.Random(seed)
    nouns = [f"noun{i}" for i in range(8)]
    verbs = [f"verb{i}" for i in range(8)]
    sents = []
    for _ in range(n):
        if rng.random() < 0.5:
            sents.append(["the", rng.choice(nouns), "runs", "."])
        else:
            sents.append(["we", rng.choice(verbs), "now", "!"])
    return sents, nouns, verbs


# ---------------------------------------------------------------- learning

def test_words_of_disjoint_contexts_end_in_different_subtrees():
    sents, nouns, verbs = _two_class_corpus()
    c = cluster(sents, n_clusters=8, min_count=1)
    assert set(c) == set(nouns) | set(verbs) | {"the", "runs", "we", "now", ".", "!"}

    def common_prefix(words):
        bits = [c[w] for w in words]
        k = 0
        while all(len(b) > k and b[k] == bits[0][k] for b in bits):
            k += 1
        return bits[0][:k]
    noun_tree, verb_tree = common_prefix(nouns), common_prefix(verbs)
    # each class is a subtree that holds no word of the other
    assert not any(c[v].startswith(noun_tree) for v in verbs)
    assert not any(c[n].startswith(verb_tree) for n in nouns)
    assert c.counts["the"] + c.counts["we"] == 1500


def test_clustering_is_deterministic_for_a_seed_and_drops_rare_words():
    sents, _, _ = _two_class_corpus(400)
    sents = sents + [["rare", "words", "once"]]
    a = cluster(sents, n_clusters=5, min_count=2, seed=3)
    assert a == cluster(sents, n_clusters=5, min_count=2, seed=3)
    assert "rare" not in a and "the" in a
    assert len(set(a.values())) == 5
    assert all(set(b) <= {"0", "1"} and b for b in a.values())
    # a prefix code: no leaf is a prefix of another
    leaves = sorted(set(a.values()))
    assert not any(y.startswith(x) for x, y in zip(leaves, leaves[1:]))


corpora = st.lists(st.lists(st.sampled_from([f"w{i}" for i in range(14)]), min_size=1, max_size=8),
                   min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(corpora, st.integers(2, 6), st.integers(0, 3), st.integers(1, 2))
def test_exchange_ends_where_no_single_move_raises_the_reference_objective(sents, n_clusters, seed, min_count):
    counts = Counter(w for s in sents for w in s)
    if not any(c >= min_count for c in counts.values()):
        with pytest.raises(InputError):
            cluster(sents, n_clusters=n_clusters, min_count=min_count, seed=seed)
        return
    c = cluster(sents, n_clusters=n_clusters, min_count=min_count, seed=seed, iterations=1000)
    assert set(c) == {w for w, n in counts.items() if n >= min_count}
    classes, k = leaf_classes(c)
    q = objective(class_counts(sents, classes, k))
    for w in classes:
        for b in range(k):
            if b != classes[w]:
                moved = dict(classes, **{w: b})
                assert objective(class_counts(sents, moved, k)) <= q + 1e-7 * (1 + abs(q))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 7), st.integers(0, 10_000))
def test_each_merge_loses_the_least_reference_likelihood(n_classes, seed):
    rng = np.random.default_rng(seed)
    N = rng.integers(0, 6, size=(n_classes + 1, n_classes + 1)) * rng.integers(0, 2, size=(n_classes + 1,
                                                                                           n_classes + 1))
    N = np.ascontiguousarray(N, dtype=np.int64)
    merges = merge(N, n_classes, xlogx_table())
    assert merges.shape == (n_classes - 1, 2)
    groups = {i: [i] for i in range(n_classes)}

    def merged_counts(groups):
        names = sorted(groups)
        M = np.zeros((len(names) + 1, len(names) + 1), dtype=np.int64)
        pos = {c: i for i, g in enumerate(names) for c in groups[g]}
        pos[n_classes] = len(names)
        for a in range(n_classes + 1):
            for b in range(n_classes + 1):
                M[pos[a], pos[b]] += N[a, b]
        return M
    for a, b in merges.tolist():
        assert a in groups and b in groups and a < b
        options = []
        for x in groups:
            for y in groups:
                if x < y:
                    trial = {g: m for g, m in groups.items() if g != y}
                    trial[x] = groups[x] + groups[y]
                    options.append(objective(merged_counts(trial)))
        groups[a] = groups[a] + groups.pop(b)
        got = objective(merged_counts(groups))
        assert got >= max(options) - 1e-7 * (1 + abs(got))


# ---------------------------------------------------------------- the file format

def test_format_round_trip(tmp_path):
    sents, _, _ = _two_class_corpus(300)
    c = cluster(sents, n_clusters=4, min_count=1)
    path = tmp_path / "clusters.txt"
    c.save(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert all(len(line.split("\t")) == 3 for line in lines)
    back = read_clusters(path)
    assert dict(back) == dict(c) and back.counts == c.counts


def test_a_clusters_file_from_another_tool_is_accepted(tmp_path):
    # Liang's wcluster "paths" file: bitstring TAB word TAB count, by cluster
    path = tmp_path / "paths"
    path.write_text("0\tthe\t120\n0\ta\t80\n10\tdog\t12\n10\tcat\t9\n110\truns\t7\n111\tsleeps\t3\n",
                    encoding="utf-8")
    c = read_clusters(path)
    assert c["dog"] == "10" and c.counts["the"] == 120 and len(c) == 6
    assert c.lookup("Dog") == "10" and c.lookup("zebra") == ""


@pytest.mark.parametrize("text, line, what", [
    ("0\tthe\t3\n01 dog 4\n", 2, "tab-separated"),
    ("0\tthe\t3\n0x2\tdog\t4\n", 2, "bit string"),
    ("0\tthe\t3\n\n1\tthe\t4\n", 3, "twice"),
    ("0\tthe\tmany\n", 1, "count"),
])
def test_malformed_clusters_name_the_line(tmp_path, text, line, what):
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=f"bad.txt:{line}: .*{what}"):
        read_clusters(path)


# ---------------------------------------------------------------- features in models

def _random_words(rng, n):
    """``n`` distinct random lowercase words: no spelling tells their
    groups apart, only the clusters can."""
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6)))
    return sorted(words)


def _cluster_tagging_data():
    """Tags decided by the cluster alone: words of cluster 0... are tagged
    A, words of cluster 1... are tagged B, in the same contexts."""
    rng = random.Random(1)
    words = _random_words(rng, 40)
    rng.shuffle(words)
    zero, one = words[:20], words[20:]
    clusters = {w: "00" + format(i % 4, "02b") for i, w in enumerate(zero)}
    clusters.update({w: "11" + format(i % 4, "02b") for i, w in enumerate(one)})
    train = []
    for _ in range(300):
        words, tags = ["x"], ["X"]
        for _ in range(3):
            if rng.random() < 0.5:
                words.append(rng.choice(zero[:10]))
                tags.append("A")
            else:
                words.append(rng.choice(one[:10]))
                tags.append("B")
        train.append((words, tags))
    return train, clusters, zero[10:], one[10:]


def test_clusters_tag_words_never_seen_in_training(tmp_path):
    train, clusters, new_zero, new_one = _cluster_tagging_data()
    tagger = Tagger.train(train, clusters=clusters, epochs=3, verbose=False)
    sent = ["x"] + new_zero[:3] + [w.upper() for w in new_one[:3]]      # uppercase: found lowercased
    assert tagger.tag(sent) == ["X", "A", "A", "A", "B", "B", "B"]
    # clusters stored in the model: a loaded copy tags the same, and the
    # file has no reference to the clusters file
    cpath = tmp_path / "my-clusters.txt"
    Clusters(clusters).save(cpath)
    from_file = Tagger.train(train, clusters=str(cpath), epochs=3, verbose=False)
    assert from_file.tag(sent) == tagger.tag(sent)
    model_path = tmp_path / "m.ftm"
    from_file.save(model_path)
    cpath.unlink()
    loaded = fasttag.load(model_path)
    assert loaded.tag(sent) == tagger.tag(sent)
    assert b"my-clusters" not in model_path.read_bytes()


def test_models_without_clusters_have_no_cluster_features():
    train, clusters, _, _ = _cluster_tagging_data()
    plain = Tagger.train(train, epochs=1, verbose=False)
    assert not any("cluster" in t for t in plain.model.templates.names)
    header, arrays = modelfile.loads(plain.to_bytes())
    assert "clusters" not in arrays and "clusters" not in header["featurizer"]
    with_clusters = Tagger.train(train, epochs=1, verbose=False, clusters=clusters)
    assert "cluster4[0]" in with_clusters.model.templates.names


def test_span_tagger_stores_its_clusters():
    rng = random.Random(2)
    words = [w.title() for w in _random_words(rng, 40)]
    rng.shuffle(words)
    places, people = words[:20], words[20:]
    clusters = {w.lower(): "000000" + format(i, "05b") for i, w in enumerate(places)}
    clusters.update({w.lower(): "111111" + format(i, "05b") for i, w in enumerate(people)})
    train = []
    for _ in range(300):
        w = rng.choice(places[:15] + people[:15])
        train.append(([w, "came", "."], ["B-LOC" if w in places else "B-PER", "O", "O"]))
    model = SpanTagger.train(train, clusters=clusters, epochs=3, verbose=False, document_features=False)
    loaded = SpanTagger.from_bytes(model.to_bytes())
    for w in places[15:]:
        assert loaded.tag([w, "came", "."]) == model.tag([w, "came", "."]) == ["B-LOC", "O", "O"]
    for w in people[15:]:
        assert loaded.tag([w, "came", "."]) == ["B-PER", "O", "O"]


@pytest.mark.parametrize("corrupt", [
    lambda h, a: a.__setitem__("clusters", np.frombuffer(b"01\tdog\n2\tcat\n", dtype=np.uint8).copy()),
    lambda h, a: a.__setitem__("clusters", np.frombuffer(b"01\tdog", dtype=np.uint8).copy()),
    lambda h, a: a.__setitem__("clusters", np.frombuffer(b"\xff\xfe\n", dtype=np.uint8).copy()),
    lambda h, a: a.__setitem__("clusters", np.zeros(3, dtype=np.int32)),
    lambda h, a: a.pop("clusters"),
    lambda h, a: h["featurizer"].pop("clusters"),
])
def test_corrupt_clusters_in_a_model_are_a_format_error(corrupt, reload_corrupted):
    train, clusters, _, _ = _cluster_tagging_data()
    tagger = Tagger.train(train[:50], clusters=clusters, epochs=1, verbose=False)
    with pytest.raises(ModelFormatError):
        reload_corrupted(tagger, corrupt)


def test_bad_clusters_values_are_refused():
    train, _, _, _ = _cluster_tagging_data()
    with pytest.raises(InputError, match="bit string"):
        Tagger.train(train, clusters={"x": "012"}, epochs=1, verbose=False)
    with pytest.raises(TypeError):
        Tagger.train(train, clusters=42, epochs=1, verbose=False)
    with pytest.raises(InputError, match="no such file"):
        Tagger.train(train, clusters="no-such-clusters.txt", epochs=1, verbose=False)
    for bad in (1, 0, True, "5"):
        with pytest.raises((InputError, TypeError)):
            cluster([["a", "b"]], n_clusters=bad)


# ---------------------------------------------------------------- the command

def test_cluster_command_then_train_with_its_clusters(run_cli, tmp_path):
    sents, nouns, verbs = _two_class_corpus(600)
    raw = tmp_path / "raw.txt"
    raw.write_text("".join(" ".join(s) + "\n" for s in sents), encoding="utf-8")
    out = tmp_path / "clusters.txt"
    result = run_cli("cluster", raw, "--pretokenized", "-o", out, "--clusters", "6", "--min-count", "1",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    c = read_clusters(out)
    assert set(nouns) <= set(c) and len(set(c.values())) == 6
    train = tmp_path / "train.tsv"
    train.write_text("".join(f"{w}\t{'N' if w in nouns else 'V' if w in verbs else 'F'}\n" + ("\n" if w in ".!" else "")
                             for s in sents[:100] for w in s), encoding="utf-8")
    model = tmp_path / "m.ftm"
    result = run_cli("train", "pos", train, "-o", model, "--clusters", out, "--epochs", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "cluster[0]" in fasttag.load(model).model.templates.names


def test_cluster_command_tokenizes_raw_text(run_cli, tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text("The dog runs. The cat sleeps.\n" * 20 + "A dog sleeps, a cat runs.\n" * 20, encoding="utf-8")
    out = tmp_path / "c.txt"
    result = run_cli("cluster", raw, "-o", out, "--clusters", "3", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    c = read_clusters(out)
    assert "runs" in c and "." in c and "," in c       # "runs." and "sleeps," were split
    piped = tmp_path / "piped.txt"                     # "-" is standard input, as everywhere
    result = run_cli("cluster", "-", "-o", piped, "--clusters", "3", cwd=tmp_path, input=raw.read_bytes())
    assert result.returncode == 0, result.stderr
    assert piped.read_bytes() == out.read_bytes()


@pytest.mark.parametrize("args, message", [
    (["cluster", "missing.txt", "-o", "c.txt"], "missing.txt: RAW: no such file"),
    (["cluster", "raw.txt", "-o", "c.txt", "--clusters", "1"], "--clusters must be an integer from 2 to 5000"),
    (["cluster", "raw.txt", "-o", "c.txt", "--clusters", "6000"], "--clusters must be an integer from 2 to 5000"),
    (["cluster", "raw.txt", "-o", "c.txt", "--clusters", "many"], "--clusters: invalid int value"),
    (["cluster", "raw.txt", "-o", "c.txt", "--min-count", "0"], "--min-count must be an integer of at least 1"),
    (["cluster", "raw.txt", "-o", "c.txt", "--pretokenized", "--min-count", "50"], "no word occurs at least 50"),
    (["cluster", "raw.txt", "-o", "no/such/folder/c.txt"], "does not exist"),
    (["cluster", "-", "-", "-o", "c.txt"], "RAW names standard input .* twice"),
    (["train", "pos", "train.tsv", "-o", "m.ftm", "--clusters", "missing.txt"],
     "missing.txt: --clusters: no such file"),
    (["train", "pos", "train.tsv", "-o", "m.ftm", "--clusters", "bad.txt"], "bad.txt:2: .*bit string"),
    (["train", "tok", "train.tsv", "-o", "m.ftm", "--clusters", "good.txt"], "unrecognized arguments: --clusters"),
])
def test_cli_errors_are_one_line(run_cli, tmp_path, args, message):
    import re
    (tmp_path / "raw.txt").write_text("a b c\nb c a\n", encoding="utf-8")
    (tmp_path / "train.tsv").write_text("a\tX\nb\tY\n\n", encoding="utf-8")
    (tmp_path / "bad.txt").write_text("0\ta\t1\n0b1\tb\t1\n", encoding="utf-8")
    (tmp_path / "good.txt").write_text("0\ta\t1\n1\tb\t1\n", encoding="utf-8")
    result = run_cli(*args, cwd=tmp_path)
    err = result.stderr.decode()
    assert result.returncode == 2, err
    assert "Traceback" not in err and ": error: " in err.strip().splitlines()[-1]
    assert sum("error" in line for line in err.splitlines()) == 1
    assert re.search(message, err), err
    assert not (tmp_path / "c.txt").exists() and not (tmp_path / "m.ftm").exists()
