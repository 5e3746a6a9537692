"""k-best sequences, marginals, span probabilities and temperature against
brute-force enumeration of every tag sequence of short sentences."""
import itertools
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fasttag
from fasttag import SpanTagger, Tagger
from fasttag.model import confidence

WORDS = "the dog cat saw a big red barks runs ran and Paris Anna visited".split()


def _random_pairs(rng, tags, n=40):
    out = []
    for _ in range(n):
        k = rng.randint(1, 6)
        out.append(([rng.choice(WORDS) for _ in range(k)], [rng.choice(tags) for _ in range(k)]))
    return out


@pytest.fixture(scope="module")
def tagger():
    rng = random.Random(3)
    return Tagger.train(_random_pairs(rng, ["A", "B", "C"]), epochs=3, seed=1, verbose=False)


@pytest.fixture(scope="module")
def closed_tagger():
    """A tagger with a tag dictionary: words seen once are closed."""
    rng = random.Random(4)
    return Tagger.train(_random_pairs(rng, ["A", "B", "C", "D"]), epochs=2, seed=1,
                        tagdict_min_count=1, verbose=False)


@pytest.fixture(scope="module")
def span_tagger():
    rng = random.Random(5)
    sents = []
    for _ in range(40):
        k = rng.randint(1, 5)
        words = [rng.choice(WORDS) for _ in range(k)]
        tags = ["O"] * k
        i = rng.randrange(k)
        j = min(k, i + rng.randint(1, 2))
        typ = rng.choice(["PER", "LOC"])
        tags[i] = "B-" + typ
        for m in range(i + 1, j):
            tags[m] = "I-" + typ
        sents.append((words, tags))
    return SpanTagger.train(sents, epochs=3, seed=1, verbose=False)


def _brute(lat, tau=1.0):
    """Every valid sequence of the lattice with its score (mask applied,
    unless no sequence is valid, as the decoder does)."""
    n, T = lat.E.shape

    def run(A, start, end):
        out = []
        for seq in itertools.product(range(T), repeat=n):
            s = start[seq[0]] + sum(lat.E[i, t] for i, t in enumerate(seq)) + end[seq[-1]]
            s += sum(A[seq[i - 1], seq[i]] for i in range(1, n))
            if np.isfinite(s):
                out.append((float(s), seq))
        return out

    seqs = run(lat.A, lat.start, lat.end)
    return seqs if seqs else run(*lat.unmasked)


def _brute_marginals(seqs, n, T, tau=1.0):
    m = max(s for s, _ in seqs)
    w = [math.exp((s - m) / tau) for s, _ in seqs]
    z = sum(w)
    p = np.zeros((n, T))
    for wi, (_, seq) in zip(w, seqs):
        for i, t in enumerate(seq):
            p[i, t] += wi / z
    return p


sentences = st.lists(st.lists(st.sampled_from(WORDS + ["unseen", "Zz"]), min_size=1, max_size=4),
                     min_size=1, max_size=3)


@settings(max_examples=30, deadline=None)
@given(sents=sentences, tau=st.sampled_from([0.3, 1.0, 2.5]))
def test_marginals_equal_brute_force(tagger, sents, tau):
    model = tagger.model
    for lat, p in zip(confidence.lattices(model, [(s, None) for s in sents]),
                      confidence.marginals(model, [(s, None) for s in sents], tau)):
        seqs = _brute(lat)
        ref = _brute_marginals(seqs, *lat.E.shape, tau=tau)
        np.testing.assert_allclose(p, ref, atol=1e-9)
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(sents=sentences, k=st.integers(1, 6))
def test_kbest_scores_are_the_top_of_every_sequence(tagger, sents, k):
    """The compiled k-best decoder and the lattice read the same scores: its
    k best are the k highest of all enumerated sequences."""
    model = tagger.model
    ex = [(s, None) for s in sents]
    for lat, best in zip(confidence.lattices(model, ex), confidence.nbest_ids(model, ex, k)):
        scores = sorted((s for s, _ in _brute(lat)), reverse=True)[:k]
        assert len(best) == len(scores)
        np.testing.assert_allclose([s for s, _ in best], scores, rtol=1e-5, atol=1e-4)
        for s, ids in best:      # each sequence really has its score
            seq = tuple(ids.tolist())
            assert any(abs(s2 - s) < 1e-4 and q == seq for s2, q in _brute(lat))
    first = [b[0][1].tolist() for b in confidence.nbest_ids(model, ex, k)]
    assert first == [r.tolist() for r in model.predict_ids(ex)]


@settings(max_examples=20, deadline=None)
@given(sents=sentences)
def test_masked_lattice_and_span_probability(span_tagger, sents):
    """Under the span scheme's transition mask only valid sequences count,
    and a span's probability is the mass of the sequences that contain it."""
    model = span_tagger.model
    ex = list(zip(sents, span_tagger._columns(sents)))
    tags = model.tags
    for lat, p in zip(confidence.lattices(model, ex), confidence.marginals(model, ex)):
        n, T = lat.E.shape
        if T ** n > 20000:
            continue
        seqs = _brute(lat)
        np.testing.assert_allclose(p, _brute_marginals(seqs, n, T), atol=1e-9)
        # the probability that tokens 0..m-1 hold the best sequence's tags
        best = max(seqs)[1]
        m = min(n, 2)
        cons = {i: [best[i]] for i in range(m)}
        z = _brute_marginals(seqs, n, T)     # only for its normaliser's shape
        mx = max(s for s, _ in seqs)
        mass = sum(math.exp(s - mx) for s, q in seqs if q[:m] == best[:m]) / \
            sum(math.exp(s - mx) for s, _ in seqs)
        assert lat.probability(cons) == pytest.approx(mass, abs=1e-9)
        assert z.shape == (n, T)
    assert any("-" in t for t in tags)


@settings(max_examples=15, deadline=None)
@given(sents=st.lists(st.lists(st.sampled_from(WORDS + ["unseen"]), min_size=0, max_size=9),
                      min_size=1, max_size=12), tau=st.sampled_from([0.5, 1.0, 3.0]))
def test_lockstep_marginals_equal_one_sentence_at_a_time(span_tagger, closed_tagger, sents, tau):
    """Padding sentences of different lengths into one array changes
    nothing: masked (span scheme) and closed (tag dictionary) lattices."""
    spans = [s for s in sents if s]         # a span tagger's document features need words
    for model, ex in ((span_tagger.model, list(zip(spans, span_tagger._columns(spans)))),
                      (closed_tagger.model, [(s, None) for s in sents])):
        lats = list(confidence.lattices(model, ex))
        batch = confidence.batch_marginals(lats, tau, max_cells=3 * len(model.tags) ** 2)
        for lat, p in zip(lats, batch):
            np.testing.assert_allclose(p, lat.marginals(tau), atol=1e-9)


def test_closed_words_have_probability_only_on_their_tags(closed_tagger):
    model = closed_tagger.model
    sents = [["the", "dog", "unseen"], ["Paris", "saw", "a"]]
    for s, p in zip(sents, confidence.marginals(model, [(s, None) for s in sents])):
        for i, w in enumerate(s):
            cls = model.tagdict.get(w)
            if cls is None:
                continue
            allowed = set(model.tagdict_classes[cls])
            assert all(p[i, t] == 0.0 for t in range(len(model.tags)) if t not in allowed)
            assert p[i, sorted(allowed)].sum() == pytest.approx(1.0)


def _noisy_pairs(rng, n, noise=0.25):
    """Tags that follow the word three times in four: a fitted temperature
    lies strictly inside the search range."""
    lexicon = {w: "ABC"[i % 3] for i, w in enumerate(WORDS)}
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
        out.append((words, [rng.choice("ABC") if rng.random() < noise else lexicon[w] for w in words]))
    return out


def test_temperature_minimises_gold_likelihood():
    rng = random.Random(9)
    tagger = Tagger.train(_noisy_pairs(rng, 60), epochs=3, seed=1, verbose=False)
    dev = _noisy_pairs(rng, 40)
    ex = [(w, None) for w, _ in dev]
    gold = [np.array([tagger.model.tag_index[t] for t in ts]) for _, ts in dev]
    tau = confidence.fit_temperature(tagger.model, ex, gold)

    def nll(t):
        return -sum(np.log(np.maximum(p[np.arange(len(g)), g], 1e-12)).sum()
                    for p, g in zip(confidence.marginals(tagger.model, ex, t), gold))
    grid = np.exp(np.linspace(np.log(0.05), np.log(50), 300))
    values = [nll(t) for t in grid]
    assert 0.05 * 1.05 < grid[int(np.argmin(values))] < 50 / 1.05      # an inside optimum
    assert nll(tau) <= min(values) + 1e-3 * abs(min(values))
    assert nll(tau) < nll(1.0)


def test_expected_calibration_error_by_hand():
    # two bins used: [0.2, 0.2667) holds 0.25 (right), [0.9333, 1] holds 0.95, 0.95 (one right)
    conf = [0.25, 0.95, 0.95]
    correct = [1, 1, 0]
    expected = (1 / 3) * abs(1 - 0.25) + (2 / 3) * abs(0.5 - 0.95)
    assert confidence.expected_calibration_error(conf, correct) == pytest.approx(expected)
    assert confidence.expected_calibration_error([1.0, 0.0], [1, 0]) == pytest.approx(0.0)
    assert confidence.expected_calibration_error([], []) == 0.0


def test_nbest_refuses_bad_k(tagger):
    for k in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            confidence.nbest_ids(tagger.model, [(["the"], None)], k)


# ---------------------------------------------------------------- public API

def test_tagger_n_best(tagger):
    sents = [["the", "dog", "barks"], ["Anna", "visited", "Paris", "and", "unseen"], ["a"]]
    best = tagger.tag_sents(sents, n_best=4)
    assert [b[0][0] for b in best] == tagger.tag_sents(sents)
    for s, b in zip(sents, best):
        scores = [score for _, score in b]
        assert scores == sorted(scores, reverse=True)
        assert len({tuple(t) for t, _ in b}) == len(b) == min(4, 3 ** len(s))
        assert all(len(t) == len(s) for t, _ in b)
    one = tagger.tag(["the", "dog"], n_best=1)
    assert len(one) == 1 and one[0][0] == tagger.tag(["the", "dog"])
    with pytest.raises(ValueError):
        tagger.tag(["the"], n_best=0)


def test_span_tagger_n_best_and_spans_with_confidence(span_tagger):
    sents = [["Anna", "visited", "Paris"], [], ["the", "big", "dog", "saw"]]
    best = span_tagger.tag_sents(sents, n_best=3)
    assert [b[0][0] for b in best] == span_tagger.tag_sents(sents)
    assert best[1] == [([], 0.0)]
    model = span_tagger.model
    for s in (sents[0], sents[2], ["Paris"]):
        found = span_tagger.spans(s, with_confidence=True)
        assert [f[:3] for f in found] == span_tagger.spans(s)
        lat = next(confidence.lattices(model, list(zip([s], span_tagger._columns([s])))))
        seqs = _brute(lat)
        mx = max(sc for sc, _ in seqs)
        weights = [(math.exp((sc - mx) / span_tagger.temperature), q) for sc, q in seqs]
        z = sum(w for w, _ in weights)
        from fasttag.text import schemes
        for typ, start, end, p in found:
            mass = sum(w for w, q in weights
                       if (typ, start, end) in schemes.spans([model.tags[i] for i in q], span_tagger.internal_scheme))
            assert p == pytest.approx(mass / z, abs=1e-9)
            assert 0.0 < p <= 1.0


def test_temperature_is_fitted_stored_and_checked():
    rng = random.Random(11)
    train, dev = _noisy_pairs(rng, 60), _noisy_pairs(rng, 30)
    tagger = Tagger.train(train, dev=dev, epochs=2, verbose=False)
    tau = tagger.temperature
    assert tau != 1.0 and 0.05 <= tau <= 50
    ex = [(w, None) for w, _ in dev]
    gold = [np.array([tagger.model.tag_index[t] for t in ts]) for _, ts in dev]
    assert tau == pytest.approx(confidence.fit_temperature(tagger.model, ex, gold))
    sents = [w for w, _ in dev[:5]]
    for p, q in zip(tagger.marginals(sents), confidence.marginals(tagger.model, [(s, None) for s in sents], tau)):
        np.testing.assert_allclose(p, q)
    again = fasttag.loads(tagger.to_bytes())
    assert again.temperature == tau
    assert Tagger.train(train, epochs=1, verbose=False).temperature == 1.0
    for bad in (-1.0, 0.0, "2", float("inf"), True, 1e9):
        tagger.meta["temperature"] = bad
        with pytest.raises(fasttag.ModelFormatError, match="temperature"):
            fasttag.loads(tagger.to_bytes())


def test_cli_nbest_json(run_cli, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("I saw her duck.\nAngela Merkel visited Paris.\n", encoding="utf-8")
    r = run_cli("tag", text, "--json", "--nbest", "3")
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.decode().splitlines()]
    tagger = fasttag.load()
    for rec in records:
        best = tagger.tag(rec["tokens"], n_best=3)
        assert [a["tags"] for a in rec["nbest"]] == [t for t, _ in best]
        assert rec["tags"] == rec["nbest"][0]["tags"]
        np.testing.assert_allclose([a["score"] for a in rec["nbest"]], [s for _, s in best])
    r = run_cli("ner", text, "--json", "--nbest", "2")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout.decode().splitlines()[1])
    assert len(rec["nbest"]) == 2 and rec["nbest"][0]["tags"] == rec["tags"]
    assert [(s["label"], s["start"], s["end"]) for s in rec["nbest"][0]["spans"]] == \
        [(s["label"], s["start"], s["end"]) for s in rec["spans"]]
    for args in (["--nbest", "2"], ["--json", "--nbest", "0"]):
        r = run_cli("tag", text, *args)
        err = r.stderr.decode()
        assert r.returncode == 2 and "--nbest" in err and len(err.splitlines()) == 1


# ---------------------------------------------------------------- calibrate

DATA = Path(__file__).resolve().parents[1] / "data"


def _write_scheme(sentences, scheme, path):
    """The NER sample's sentences with their tags in ``scheme``."""
    from fasttag.text import schemes
    with open(path, "w", encoding="utf-8") as f:
        for s in sentences:
            tags = schemes.convert(s.tags, "iob1", scheme)
            for row, t in zip(s.rows, tags):
                f.write(" ".join(row[:-1] + [t]) + "\n")
            f.write("\n")
    return path


def test_span_temperature_is_fitted_on_gold_of_the_learned_scheme(tmp_path):
    """The temperature of a span tagger is fitted on gold in its internal
    BIOES tags, whatever scheme the dev file is written in: the same
    value from IOB1, IOB2 and BIOES files, and the one a reference
    computes from BIOES gold ids by hand."""
    sents = [s for s in fasttag.text.formats.read_conll(DATA / "sample_ner.conll") if s.words]
    half = len(sents) // 2
    train = _write_scheme(sents[:half], "iob1", tmp_path / "train.iob1")
    ner = SpanTagger.train(str(train), task="ner", epochs=2, feature_columns=[], verbose=False)
    dev = sents[half:]

    def reference(model):
        from fasttag.text import schemes
        index = model.model.tag_index
        gold = [np.array([index[t] for t in schemes.convert(s.tags, "iob1", "bioes")]) for s in dev]
        inputs = list(zip([s.words for s in dev], model._columns([s.words for s in dev])))
        return confidence.fit_temperature(model.model, inputs, gold)
    expected = reference(ner)
    assert 0.05 * 1.05 < expected < 50 / 1.05
    for scheme in ("iob1", "iob2", "bioes"):
        assert ner.calibrate(str(_write_scheme(dev, scheme, tmp_path / f"dev.{scheme}"))) == \
            pytest.approx(expected), scheme
    trained = SpanTagger.train(str(train), task="ner", epochs=2, feature_columns=[], verbose=False,
                               dev=str(_write_scheme(dev, "iob2", tmp_path / "dev2.iob2")))
    assert trained.temperature == pytest.approx(reference(trained))


def test_tokenizer_temperature_is_fitted_on_its_gold_labels(dev_copy):
    """Gold of all "O" (outside any token) would push the temperature to
    the top of the search range, 50: the character labels of the dev
    tokens keep it well inside."""
    sample = str(DATA / "sample_tok.conllu")
    # dev: a copy of the training file (training refuses the file itself): the same gold is the point
    tok = fasttag.Tokenizer.train(sample, dev=dev_copy(sample), epochs=5, verbose=False)
    assert tok.calibrate(sample) == pytest.approx(tok.temperature)     # training fits it on the same gold
    # (on this tiny set dev selection keeps epoch 2, whose small scores want
    # the top of the range: fitted again on the last epoch's model)
    last = fasttag.Tokenizer.train(sample, epochs=5, verbose=False)
    assert 0.05 < last.calibrate(sample) < 20


def test_calibrate_changes_only_the_temperature(tmp_path):
    rng = random.Random(12)
    train, held = _noisy_pairs(rng, 60), _noisy_pairs(rng, 30)
    tagger = Tagger.train(train, epochs=2, verbose=False)
    sents = [w for w, _ in held]
    before_tags, before_bytes = tagger.tag_sents(sents), tagger.to_bytes()
    tau = tagger.calibrate(held)
    gold = [np.array([tagger.model.tag_index[t] for t in ts]) for _, ts in held]
    assert tau == tagger.temperature == pytest.approx(
        confidence.fit_temperature(tagger.model, [(w, None) for w in sents], gold))
    assert tau != 1.0 and tagger.tag_sents(sents) == before_tags
    assert fasttag.loads(tagger.to_bytes()).temperature == tau
    assert fasttag.loads(before_bytes).temperature == 1.0
    with pytest.raises(fasttag.InputError, match="no sentences"):
        tagger.calibrate([])
    with pytest.raises(fasttag.InputError, match="tag set"):
        tagger.calibrate([(["the", "dog"], ["NN", "VB"])])


def test_ctrl_c_with_a_dev_set_still_fits_the_temperature(monkeypatch):
    """A model saved after Ctrl-C is the best completed epoch's, and its
    temperature is fitted on dev as a finished model's is."""
    from fasttag.errors import TrainingInterrupted
    rng = random.Random(13)
    train, dev = _noisy_pairs(rng, 60), _noisy_pairs(rng, 30)
    real = Tagger._dev_scorer

    def interrupting(self, examples):
        score, calls = real(self, examples), []

        def scored(ids):
            calls.append(1)
            if len(calls) == 2:              # Ctrl-C during the second epoch's dev scoring
                raise KeyboardInterrupt
            return score(ids)
        return scored
    monkeypatch.setattr(Tagger, "_dev_scorer", interrupting)
    with pytest.raises(TrainingInterrupted) as info:
        Tagger.train(train, dev=dev, epochs=5, verbose=False)
    model = info.value.model
    ex = [(w, None) for w, _ in dev]
    gold = [np.array([model.model.tag_index[t] for t in ts]) for _, ts in dev]
    assert model.temperature != 1.0
    assert model.temperature == pytest.approx(confidence.fit_temperature(model.model, ex, gold))


def _exact_marginals(lat, tau):
    """Brute-force marginals with every sequence's score summed exactly
    (fractions): the reference for weights far beyond float64's precision
    of their sums."""
    from fractions import Fraction
    n, T = lat.E.shape
    seqs = []
    for seq in itertools.product(range(T), repeat=n):
        parts = [lat.start[seq[0]], lat.end[seq[-1]]] + [lat.E[i, t] for i, t in enumerate(seq)] \
            + [lat.A[seq[i - 1], seq[i]] for i in range(1, n)]
        if all(np.isfinite(parts)):
            seqs.append((sum(Fraction(float(x)) for x in parts), seq))
    top = max(s for s, _ in seqs)
    w = [math.exp(float((s - top) / Fraction(tau))) for s, _ in seqs]
    p = np.zeros((n, T))
    for wi, (_, seq) in zip(w, seqs):
        for i, t in enumerate(seq):
            p[i, t] += wi / sum(w)
    return p


@pytest.mark.parametrize("scale", [1e13, 1e20, 1e30, float(np.finfo(np.float32).max)])
@pytest.mark.parametrize("tau", [1.0, 0.001])
def test_marginals_of_extreme_weights_are_probabilities(tagger, scale, tau):
    """Weights the loader accepts, up to float32's maximum, at the lowest
    temperature it accepts: every token's marginals are finite, sum to 1
    and equal exact enumeration (the scores of 1e13 and more once gave
    "probabilities" summing to 20, or inf)."""
    from fasttag.model import modelfile
    header, arrays = modelfile.loads(tagger.to_bytes())
    w = arrays["emit.weights"].astype(np.float64)
    arrays["emit.weights"] = (w / np.abs(w).max() * scale).astype(np.float32)
    header["meta"] = dict(header["meta"], temperature=tau)
    model = fasttag.loads(modelfile.dumps(header, arrays))
    sents = [["the", "dog", "barks", "and", "Anna", "ran"], ["Paris", "unseen"], ["a"]]
    got = model.marginals(sents)
    for s, p, lat in zip(sents, got, confidence.lattices(model.model, [(s, None) for s in sents])):
        assert p.shape == (len(s), len(model.tags)) and np.all(np.isfinite(p))
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
        ref = _exact_marginals(lat, tau)
        np.testing.assert_allclose(p, ref, atol=1e-6)
        np.testing.assert_allclose(lat.marginals(tau), ref, atol=1e-6)
        best = max(range(len(model.tags)), key=lambda t: ref[0, t])
        assert lat.probability({0: [best]}, tau) == pytest.approx(ref[0, best], abs=1e-6)
