"""The scorers of fasttag.text.metrics against hand-computed examples and slow
references, and Segmenter.prune against the stored weights.

Every hand example has precision != recall (and known != unknown accuracy,
OOV != IV recall), so a swap of the two shows.  The scores are fractions in
[0, 1]; a ratio with a zero denominator is 0.0, except the accuracy or
recall of a subset with no member (no unknown word, no OOV word): None.
"""
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fasttag.errors import InputError

from fasttag.text import metrics

DATA = Path(__file__).resolve().parents[1] / "data"


def prf(correct, gold, pred):
    p = Fraction(correct, pred) if pred else Fraction(0)
    r = Fraction(correct, gold) if gold else Fraction(0)
    f = 2 * p * r / (p + r) if p + r else Fraction(0)
    return float(p), float(r), float(f)


def approx(x):
    return pytest.approx(x, abs=1e-12)


# ---------------------------------------------------------------- spans, by hand

def test_spans_by_hand_iob2():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O", "O"]]
    pred = [["B-PER", "O", "O", "B-LOC"], ["B-ORG", "B-LOC", "I-LOC"]]
    # gold PER(0,2) LOC(3,4) ORG(0,1); pred PER(0,1) LOC(3,4) ORG(0,1) LOC(1,3)
    s = metrics.score_spans(gold, pred, "iob2")
    assert (s["gold_chunks"], s["pred_chunks"], s["correct_chunks"]) == (3, 4, 2)
    assert s["precision"] == approx(0.5)
    assert s["recall"] == approx(2 / 3)
    assert s["f1"] == approx(4 / 7)
    assert s["accuracy"] == approx(4 / 7)
    assert s["tokens"] == 7
    loc = s["per_type"]["LOC"]
    assert (loc["gold"], loc["pred"], loc["correct"]) == (1, 2, 1)
    assert loc["precision"] == approx(0.5) and loc["recall"] == approx(1.0) and loc["f1"] == approx(2 / 3)
    per = s["per_type"]["PER"]
    assert (per["gold"], per["pred"], per["correct"]) == (1, 1, 0)
    assert per["precision"] == per["recall"] == per["f1"] == 0.0
    assert s["per_type"]["ORG"]["f1"] == approx(1.0)


def test_spans_by_hand_ill_formed_iob2_read_as_conlleval():
    # I- after O opens a chunk; a type change opens a chunk
    gold = [["O", "I-PER", "I-PER", "B-LOC", "I-ORG"]]
    pred = [["O", "B-PER", "I-PER", "B-LOC", "B-ORG"]]
    s = metrics.score_spans(gold, pred, "iob2")
    assert (s["gold_chunks"], s["pred_chunks"], s["correct_chunks"]) == (3, 3, 3)
    assert s["f1"] == approx(1.0)
    assert s["accuracy"] == approx(3 / 5)


def test_spans_by_hand_bioes():
    gold = [["B-PER", "E-PER", "S-LOC", "O"]]
    pred = [["S-PER", "O", "S-LOC", "S-LOC"]]
    # gold PER(0,2) LOC(2,3); pred PER(0,1) LOC(2,3) LOC(3,4)
    s = metrics.score_spans(gold, pred, "bioes")
    assert (s["gold_chunks"], s["pred_chunks"], s["correct_chunks"]) == (2, 3, 1)
    assert s["precision"] == approx(1 / 3) and s["recall"] == approx(1 / 2)
    assert s["f1"] == approx(0.4)


def test_spans_by_hand_iob1():
    gold = [["I-PER", "B-PER", "O", "I-LOC", "I-LOC"]]     # PER(0,1) PER(1,2) LOC(3,5)
    pred = [["I-PER", "I-PER", "O", "I-LOC", "I-LOC"]]     # PER(0,2) LOC(3,5)
    s = metrics.score_spans(gold, pred, "iob1")
    assert (s["gold_chunks"], s["pred_chunks"], s["correct_chunks"]) == (3, 2, 1)
    assert s["precision"] == approx(0.5) and s["recall"] == approx(1 / 3)
    assert s["f1"] == approx(0.4)


def test_spans_refuses_mismatched_lengths():
    with pytest.raises(InputError):
        metrics.score_spans([["O", "O"]], [["O"]], "iob2")
    with pytest.raises(InputError):
        metrics.score_spans([["O"], ["O"]], [["O"]], "iob2")


# ---------------------------------------------------------------- spans, properties

def encode(chunks, n, scheme):
    """Tags of well-formed chunks (type, start, end), written plainly."""
    tags = ["O"] * n
    prev_end, prev_type = -1, None
    for typ, a, b in chunks:
        for i in range(a, b):
            tags[i] = "I-" + typ
        if scheme == "iob2":
            tags[a] = "B-" + typ
        elif scheme == "iob1":
            if a == prev_end and typ == prev_type:
                tags[a] = "B-" + typ
        else:
            if b - a == 1:
                tags[a] = "S-" + typ
            else:
                tags[a] = "B-" + typ
                tags[b - 1] = "E-" + typ
        prev_end, prev_type = b, typ
    return tags


@st.composite
def chunkings(draw, n):
    """Non-overlapping chunks over n tokens, as (type, start, end)."""
    chunks, i = [], 0
    while i < n:
        length = draw(st.integers(1, min(3, n - i)))
        typ = draw(st.sampled_from([None, "A", "B", "LONG-TYPE"]))
        if typ is not None:
            chunks.append((typ, i, i + length))
        i += length
    return chunks


@st.composite
def span_corpora(draw):
    scheme = draw(st.sampled_from(["iob1", "iob2", "bioes"]))
    lengths = draw(st.lists(st.integers(0, 7), min_size=0, max_size=4))
    gold = [draw(chunkings(n)) for n in lengths]
    pred = [draw(chunkings(n)) for n in lengths]
    return scheme, lengths, gold, pred


@settings(max_examples=200, deadline=None)
@given(span_corpora())
def test_spans_equal_set_reference(corpus):
    scheme, lengths, gold, pred = corpus
    gold_tags = [encode(c, n, scheme) for c, n in zip(gold, lengths)]
    pred_tags = [encode(c, n, scheme) for c, n in zip(pred, lengths)]
    s = metrics.score_spans(gold_tags, pred_tags, scheme)
    # chunks of different sentences never meet: key them by sentence
    G = {(k,) + c for k, cs in enumerate(gold) for c in cs}
    P = {(k,) + c for k, cs in enumerate(pred) for c in cs}
    assert (s["gold_chunks"], s["pred_chunks"], s["correct_chunks"]) == (len(G), len(P), len(G & P))
    p, r, f = prf(len(G & P), len(G), len(P))
    assert (s["precision"], s["recall"], s["f1"]) == (approx(p), approx(r), approx(f))
    tokens = sum(lengths)
    same = sum(g == q for gs, ps in zip(gold_tags, pred_tags) for g, q in zip(gs, ps))
    assert s["tokens"] == tokens
    assert s["accuracy"] == approx(same / tokens if tokens else 0.0)
    types = {c[1] for c in G | P}
    assert set(s["per_type"]) == types
    for typ in types:
        g = {c for c in G if c[1] == typ}
        q = {c for c in P if c[1] == typ}
        row = s["per_type"][typ]
        assert (row["gold"], row["pred"], row["correct"]) == (len(g), len(q), len(g & q))
        p, r, f = prf(len(g & q), len(g), len(q))
        assert (row["precision"], row["recall"], row["f1"]) == (approx(p), approx(r), approx(f))


TAGS = ["O", "B-A", "I-A", "E-A", "S-A", "B-B", "I-B", "E-B", "S-B"]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["iob1", "iob2", "bioes"]),
       st.lists(st.integers(0, 6), max_size=4), st.data())
def test_spans_symmetry_and_micro_average_on_any_tags(scheme, lengths, data):
    """On arbitrary (also ill-formed) tags: swapping the sides swaps
    precision and recall; a corpus's counts are the sums of its sentences'."""
    gold = [data.draw(st.lists(st.sampled_from(TAGS), min_size=n, max_size=n)) for n in lengths]
    pred = [data.draw(st.lists(st.sampled_from(TAGS), min_size=n, max_size=n)) for n in lengths]
    s = metrics.score_spans(gold, pred, scheme)
    t = metrics.score_spans(pred, gold, scheme)
    assert (s["precision"], s["recall"], s["f1"]) == (approx(t["recall"]), approx(t["precision"]), approx(t["f1"]))
    assert (s["gold_chunks"], s["pred_chunks"]) == (t["pred_chunks"], t["gold_chunks"])
    for name in ("precision", "recall", "f1", "accuracy"):
        assert 0.0 <= s[name] <= 1.0
    parts = [metrics.score_spans([g], [q], scheme) for g, q in zip(gold, pred)]
    for name in ("gold_chunks", "pred_chunks", "correct_chunks", "tokens"):
        assert s[name] == sum(part[name] for part in parts)
    same = metrics.score_spans(gold, gold, scheme)
    assert same["correct_chunks"] == same["gold_chunks"] == same["pred_chunks"]
    if same["gold_chunks"]:
        assert same["precision"] == same["recall"] == same["f1"] == 1.0


# ---------------------------------------------------------------- segmentation

def test_segmentation_by_hand():
    gold = [["我们", "今天", "去", "北京"], ["他", "好"]]
    pred = [["我们", "今天", "去北京"], ["他好"]]
    s = metrics.score_segmentation(gold, pred, words={"我们", "今天", "他"})
    # gold 6 words, pred 4, correct 2 (我们, 今天)
    assert (s["gold_words"], s["pred_words"], s["correct_words"], s["lines"]) == (6, 4, 2, 2)
    assert s["precision"] == approx(0.5)
    assert s["recall"] == approx(1 / 3)
    assert s["f1"] == approx(0.4)
    # OOV gold tokens: 去, 北京, 好 (none found); IV: 我们, 今天 found, 他 not
    assert s["oov_rate"] == approx(0.5)
    assert s["oov_recall"] == approx(0.0)
    assert s["iv_recall"] == approx(2 / 3)
    plain = metrics.score_segmentation(gold, pred)
    assert plain["f1"] == approx(0.4)
    assert plain["oov_rate"] is None and plain["oov_recall"] is None and plain["iv_recall"] is None


def test_segmentation_refuses_different_text():
    with pytest.raises(InputError):
        metrics.score_segmentation([["我们", "去"]], [["我", "去"]])
    with pytest.raises(InputError):
        metrics.score_segmentation([["我们"], ["去"]], [["我们"]])


@st.composite
def splits(draw, text):
    """Words of ``text`` cut at random places."""
    cuts = sorted(draw(st.sets(st.integers(1, max(len(text) - 1, 1)), max_size=len(text))))
    cuts = [c for c in cuts if 0 < c < len(text)]
    bounds = [0] + cuts + [len(text)]
    return [text[a:b] for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


@st.composite
def seg_corpora(draw):
    texts = draw(st.lists(st.text(alphabet="甲乙丙丁", min_size=0, max_size=8), max_size=4))
    gold = [draw(splits(t)) for t in texts]
    pred = [draw(splits(t)) for t in texts]
    vocab = draw(st.sets(st.text(alphabet="甲乙丙丁", min_size=1, max_size=3), max_size=10))
    return gold, pred, vocab


def spans_of(words):
    out, pos = set(), 0
    for w in words:
        out.add((pos, pos + len(w)))
        pos += len(w)
    return out


@settings(max_examples=200, deadline=None)
@given(seg_corpora())
def test_segmentation_equals_span_reference(corpus):
    gold, pred, vocab = corpus
    s = metrics.score_segmentation(gold, pred, words=vocab)
    n_gold = sum(len(g) for g in gold)
    n_pred = sum(len(p) for p in pred)
    correct = oov = oov_hit = 0
    for g, p in zip(gold, pred):
        hits = spans_of(p)
        pos = 0
        for w in g:
            hit = (pos, pos + len(w)) in hits
            correct += hit
            if w not in vocab:
                oov += 1
                oov_hit += hit
            pos += len(w)
    assert (s["gold_words"], s["pred_words"], s["correct_words"], s["lines"]) == \
        (n_gold, n_pred, correct, len(gold))
    p, r, f = prf(correct, n_gold, n_pred)
    assert (s["precision"], s["recall"], s["f1"]) == (approx(p), approx(r), approx(f))
    ratio = lambda a, b: a / b if b else 0.0
    assert s["oov_rate"] == approx(ratio(oov, n_gold))
    assert s["oov_recall"] == (approx(oov_hit / oov) if oov else None)        # no OOV word: undefined
    assert s["iv_recall"] == (approx((correct - oov_hit) / (n_gold - oov)) if n_gold > oov else None)


# ---------------------------------------------------------------- tagging

def test_tagging_by_hand():
    gold = [["N", "V", "N"], ["D", "N"]]
    pred = [["N", "N", "N"], ["D", "N"]]
    known = [True, False, True, True, False]
    s = metrics.score_tagging(gold, pred, known=known)
    assert s["accuracy"] == approx(4 / 5)
    # known: tokens 0, 2, 3, all right; unknown: 1 wrong, 4 right
    assert s["known_accuracy"] == approx(1.0)
    assert s["unknown_accuracy"] == approx(0.5)
    n = s["per_tag"]["N"]
    # N: predicted 4 times, 3 right, 3 gold
    assert n["precision"] == approx(3 / 4) and n["recall"] == approx(1.0) and n["f1"] == approx(6 / 7)
    assert n["support"] == 3
    v = s["per_tag"]["V"]
    assert v["precision"] == v["recall"] == v["f1"] == 0.0 and v["support"] == 1
    assert s["per_tag"]["D"]["f1"] == approx(1.0)
    assert metrics.score_tagging(gold, pred)["accuracy"] == approx(4 / 5)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=4), st.data())
def test_tagging_equals_count_reference(lengths, data):
    tagset = ["A", "B", "C"]
    gold = [data.draw(st.lists(st.sampled_from(tagset), min_size=n, max_size=n)) for n in lengths]
    pred = [data.draw(st.lists(st.sampled_from(tagset), min_size=n, max_size=n)) for n in lengths]
    N = sum(lengths)
    known = data.draw(st.lists(st.booleans(), min_size=N, max_size=N))
    s = metrics.score_tagging(gold, pred, known=known)
    g = [t for ts in gold for t in ts]
    p = [t for ts in pred for t in ts]
    right = [a == b for a, b in zip(g, p)]
    ratio = lambda a, b: a / b if b else 0.0
    assert s["accuracy"] == approx(ratio(sum(right), N))
    n_known = sum(known)
    assert s["known_accuracy"] == (approx(sum(r for r, k in zip(right, known) if k) / n_known)
                                   if n_known else None)
    assert s["unknown_accuracy"] == (approx(sum(r for r, k in zip(right, known) if not k) / (N - n_known))
                                     if N > n_known else None)
    assert set(s["per_tag"]) == set(g) | set(p)
    for t in set(g) | set(p):
        tp = sum(a == b == t for a, b in zip(g, p))
        pr, rc, f = prf(tp, g.count(t), p.count(t))
        row = s["per_tag"][t]
        assert (row["precision"], row["recall"], row["f1"]) == (approx(pr), approx(rc), approx(f))
        assert row["support"] == g.count(t)


# ---------------------------------------------------------------- segmenter pruning

def _triples(arrays):
    keys = np.repeat(arrays["emit.keys"], arrays["emit.counts"].astype(np.int64))
    return list(zip(keys.tolist(), arrays["emit.labels"].astype(np.int64).tolist(),
                    arrays["emit.weights"].tolist()))


def test_segmenter_prune_drops_exactly_the_small_weights():
    import fasttag
    from fasttag.model.modelfile import loads
    lines = (DATA / "sample_zh_train.txt").read_text(encoding="utf-8").splitlines()[:15]
    seg = fasttag.Segmenter.train(lines, epochs=2, verbose=False)
    _, before = loads(seg.to_bytes())
    weights = np.abs(before["emit.weights"])
    # a threshold equal to a stored weight: that weight is kept (|w| < t drops)
    threshold = float(np.sort(weights)[len(weights) // 2])
    expected = [t for t in _triples(before) if abs(t[2]) >= threshold]
    dropped = len(weights) - len(expected)
    assert 0 < dropped < len(weights) and any(abs(t[2]) == threshold for t in expected)
    kept = seg.prune(threshold)
    _, after = loads(seg.to_bytes())
    assert _triples(after) == expected
    assert kept == len(expected)
    assert np.array_equal(after["transitions"], before["transitions"])
    # no feature is left without weights
    assert (after["emit.counts"] > 0).all()
    # the pruned model still segments every line into its characters
    for line, words in zip(lines, seg.segment_lines(lines)):
        assert "".join(words) == "".join(line.split())
