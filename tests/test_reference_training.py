"""Training through the public trainer against naive references.

``NaiveTrainer`` is Collins' averaged structured perceptron (and 1-best
MIRA, and greedy perceptron training) written plainly: dict weights, a
simple Viterbi, the whole weight vector added to an accumulator after every
example, averages as accumulator / examples.  It visits the examples in the
trainer's order (one ``np.random.default_rng(seed)`` drawing a permutation
per epoch) and decodes under the model's constraints, as training does:

* a dictionary word's candidates are its class's tags, an open word's its
  ``prune_k`` best (ties: the lower tag), all tags otherwise, and while
  training the gold tag is always added to the candidates;
* forbidden transitions are avoided; with no allowed path the sentence is
  decoded without the mask;
* ties go to the sequence smallest read right to left.

The simple Viterbi adds scores in the engine's order (features in template
order, then the transition), so its choices during training are exactly the
engine's, ties included.  The trained model (averaged, float32-rounded
weights) must hold the reference's averages, report its per-epoch training
accuracy, and predict a best sequence under them.
"""
import itertools
from math import inf

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fasttag._core.sequence import transition_size
from fasttag.features.words import WordFeaturizer
from fasttag.model.sequence import SequenceModel

VOCAB = ["a", "b", "c", "d", "e", "f"]
TEMPLATES = ["bias", "word[0]", "word[-1]"]


# ---------------------------------------------------------------- engine access

def featurize(model, examples):
    keys, bounds, _, _ = model.featurize(examples)
    return keys, bounds


def fit(model, train, **options):
    from fasttag.model.training import fit as trainer_fit
    return trainer_fit(model, train, **options)


# ---------------------------------------------------------------- reference

class NaiveTrainer:
    def __init__(self, T, allowed, tagdict, classes, prune_k):
        self.T = T
        self.allowed = allowed
        self.tagdict = tagdict
        self.classes = classes
        self.prune_k = prune_k if 0 < prune_k < T else 0
        self.w = {}                      # ("e", key, tag) or ("t", index) -> weight
        self.acc = {}
        self.steps = 0

    # scores, in the engine's order of additions
    def escores(self, row):
        out = []
        for t in range(self.T):
            s = 0.0
            for k in row:
                s += self.w.get(("e", int(k), t), 0.0)
            out.append(s)
        return out

    def tr(self, j):
        return self.w.get(("t", j), 0.0)

    def ok(self, j, masked):
        return not masked or self.allowed is None or bool(self.allowed[j])

    def candidates(self, token, E, gold=None, eps=0.0):
        """``eps``: also keep the open tags within eps of the pruning cut."""
        T = self.T
        if token in self.tagdict:
            cand = list(self.classes[self.tagdict[token]])
        elif self.prune_k:
            cand = sorted(sorted(range(T), key=lambda t: (-E[t], t))[:self.prune_k])
            if eps:
                cut = min(E[t] for t in cand)
                cand = [t for t in range(T) if t in cand or E[t] >= cut - eps * max(1.0, abs(cut))]
        else:
            cand = list(range(T))
        if gold is not None and gold not in cand:
            cand = sorted(cand + [gold])
        return cand

    def viterbi(self, E, cands, masked=True):
        T, n = self.T, len(E)
        delta, back = [{} for _ in range(n)], [{} for _ in range(n)]
        for t in cands[0]:
            delta[0][t] = E[0][t] + self.tr(T * T + t) if self.ok(T * T + t, masked) else -inf
        for i in range(1, n):
            for t in cands[i]:
                best, arg = -inf, None
                for p in cands[i - 1]:
                    if not self.ok(p * T + t, masked):
                        continue
                    v = delta[i - 1][p] + self.tr(p * T + t)
                    if arg is None or v > best:
                        best, arg = v, p
                delta[i][t] = best + E[i][t] if arg is not None else -inf
                back[i][t] = arg if arg is not None else cands[i - 1][0]
        best, last = -inf, cands[-1][0]
        for t in cands[-1]:
            if not self.ok((T + 1) * T + t, masked):
                continue
            v = delta[-1][t] + self.tr((T + 1) * T + t)
            if v > best:
                best, last = v, t
        if best == -inf and masked and self.allowed is not None:
            return self.viterbi(E, cands, masked=False)
        path = [last]
        for i in range(n - 1, 0, -1):
            path.append(back[i][path[-1]])
        return path[::-1]

    def phi(self, keys, seq):
        T, out = self.T, {}
        for row, t in zip(keys, seq):
            for k in row:
                out[("e", int(k), t)] = out.get(("e", int(k), t), 0) + 1
        path = [T] + list(seq)
        for j in [p * T + t for p, t in zip(path[:-1], path[1:])] + [(T + 1) * T + seq[-1]]:
            out[("t", j)] = out.get(("t", j), 0) + 1
        return out

    def path_score(self, E, seq):
        T, total, prev = self.T, 0.0, self.T
        for i, t in enumerate(seq):
            total += E[i][t]
            total += self.tr(prev * T + t)
            prev = t
        return total + self.tr((T + 1) * T + prev)

    def add(self, f, v):
        self.w[f] = self.w.get(f, 0.0) + v

    def end_step(self):
        self.steps += 1
        for f, v in self.w.items():
            self.acc[f] = self.acc.get(f, 0.0) + v

    # one example each; returns the tokens predicted wrong
    def perceptron(self, tokens, keys, gold):
        E = [self.escores(row) for row in keys]
        cands = [self.candidates(tok, E[i], gold[i]) for i, tok in enumerate(tokens)]
        pred = self.viterbi(E, cands)
        if pred != gold:
            for f, v in self.phi(keys, gold).items():
                self.add(f, v)
            for f, v in self.phi(keys, pred).items():
                self.add(f, -v)
        self.end_step()
        return sum(p != g for p, g in zip(pred, gold))

    def mira(self, tokens, keys, gold, C):
        E = [self.escores(row) for row in keys]
        cands = [self.candidates(tok, E[i], gold[i]) for i, tok in enumerate(tokens)]
        pred = self.viterbi(E, cands)
        loss = sum(p != g for p, g in zip(pred, gold))
        if loss:
            d = self.phi(keys, gold)
            for f, v in self.phi(keys, pred).items():
                d[f] = d.get(f, 0) - v
            d = {f: v for f, v in d.items() if v}
            norm = sum(v * v for v in d.values())
            resid = loss - (self.path_score(E, gold) - self.path_score(E, pred))
            if norm and resid > 0:
                alpha = min(C, resid / norm)
                for f, v in d.items():
                    self.add(f, alpha * v)
        self.end_step()
        return loss

    def greedy(self, tokens, keys, gold):
        """Token by token: the best candidate after the previous predicted
        tag, updated at once where wrong (scores see the earlier updates)."""
        T, prev, wrong = self.T, self.T, 0
        for i, tok in enumerate(tokens):
            E = self.escores(keys[i])
            best, pred = -inf, None
            for t in self.candidates(tok, E, gold[i]):
                if not self.ok(prev * T + t, True):
                    continue
                v = E[t] + self.tr(prev * T + t)
                if pred is None or v > best:
                    best, pred = v, t
            if pred is None:
                pred = self.candidates(tok, E, gold[i])[0]
            if pred != gold[i]:
                wrong += 1
                for k in keys[i]:
                    self.add(("e", int(k), gold[i]), 1.0)
                    self.add(("e", int(k), pred), -1.0)
                self.add(("t", prev * T + gold[i]), 1.0)
                self.add(("t", prev * T + pred), -1.0)
            prev = pred
        self.end_step()
        return wrong

    def average(self, f):
        return self.acc.get(f, 0.0) / self.steps


# ---------------------------------------------------------------- cases

@st.composite
def cases(draw, mask=False, tagdict=False, prune=False):
    T = draw(st.integers(2, 3))
    sents = draw(st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4),
                          min_size=2, max_size=6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # gold: mostly a function of the word, with noise
    word_tag = {w: int(rng.integers(T)) for w in VOCAB}
    gold = [[word_tag[w] if rng.random() < 0.8 else int(rng.integers(T)) for w in s] for s in sents]
    allowed = (rng.random(transition_size(T)) < 0.7).astype(np.uint8) if mask else None
    words, classes = {}, []
    if tagdict:
        classes = [tuple(sorted(rng.choice(T, size=int(rng.integers(1, T + 1)), replace=False).tolist()))
                   for _ in range(2)]
        words = {w: int(rng.integers(2)) for w in VOCAB if rng.random() < 0.5}
    prune_k = int(rng.integers(1, T)) if prune else 0
    return dict(T=T, sents=sents, gold=gold, allowed=allowed, tagdict=words, classes=classes,
                prune_k=prune_k, epochs=draw(st.integers(1, 3)), seed=draw(st.integers(0, 1000)))


def train_both(case, algorithm="perceptron", C=1.0, decoder="viterbi"):
    T = case["T"]
    model = SequenceModel([f"T{i}" for i in range(T)], WordFeaturizer(), TEMPLATES,
                          allowed=case["allowed"], tagdict=case["tagdict"],
                          tagdict_classes=case["classes"], prune_k=case["prune_k"], decoder=decoder)
    train = [(s, None, g) for s, g in zip(case["sents"], case["gold"])]
    keys, bounds = featurize(model, [(s, None) for s in case["sents"]])
    history = fit(model, train, epochs=case["epochs"], seed=case["seed"], algorithm=algorithm,
                  k=1, C=C, verbose=False)
    naive = NaiveTrainer(T, case["allowed"], case["tagdict"], model.tagdict_classes, case["prune_k"])
    rng = np.random.default_rng(case["seed"])
    n_tokens = int(bounds[-1])
    for epoch in range(case["epochs"]):
        wrong = 0
        for s in rng.permutation(len(train)):
            tokens, _, gold = train[s]
            rows = keys[bounds[s]:bounds[s + 1]]
            if decoder == "greedy":
                wrong += naive.greedy(tokens, rows, list(gold))
            elif algorithm == "mira":
                wrong += naive.mira(tokens, rows, list(gold), C)
            else:
                wrong += naive.perceptron(tokens, rows, list(gold))
        assert history[epoch]["train_accuracy"] == pytest.approx(1 - wrong / n_tokens, abs=1e-12)
    assert naive.steps == case["epochs"] * len(train)
    return model, naive, keys, bounds, train


def close(got, want):
    """Equal up to the float32 rounding of the stored weights."""
    return abs(got - want) <= 1e-6 * max(1.0, abs(want))


def check_weights(model, naive, keys):
    T = naive.T
    for k in np.unique(keys).tolist():
        for t in range(T):
            want = naive.average(("e", k, t))
            got = model.emit.get(k, t)
            assert close(got, want), (k, t, got, want)
    # nothing stored beyond the reference's features
    arrays = model.emit.to_arrays()
    assert set(arrays["keys"].tolist()) <= set(np.unique(keys).tolist())
    for j in range(transition_size(T)):
        assert close(model.trans[j], naive.average(("t", j))), j


def check_predictions(model, naive, keys, bounds, train, greedy=False):
    """The model's averaged predictions are a best sequence under the
    reference's averaged weights (exactly the best where it is clear by a
    margin; near-ties may round either way in float32)."""
    T, pred = naive.T, model.predict_ids([(s, None) for s, _, _ in train])
    naive.w = {f: naive.average(f) for f in naive.acc}
    for s, (tokens, _, _) in enumerate(train):
        got = pred[s].tolist()
        E = [naive.escores(row) for row in keys[bounds[s]:bounds[s + 1]]]
        cands = [naive.candidates(tok, E[i]) for i, tok in enumerate(tokens)]
        loose = [naive.candidates(tok, E[i], eps=EPS) for i, tok in enumerate(tokens)]
        assert all(t in c for t, c in zip(got, loose))
        if greedy or loose != cands:
            continue        # pruning near a tie: the float32 weights may keep other tags
        seqs = list(itertools.product(*cands))
        valid = [q for q in seqs if naive.allowed is None or all(
            naive.allowed[j] for j in _transitions(q, T))] or seqs
        scores = sorted(((naive.path_score(E, q), list(q)) for q in valid), reverse=True)
        best = scores[0][0]
        assert tuple(got) in {tuple(q) for q in valid}
        assert naive.path_score(E, got) >= best - EPS * max(1.0, abs(best))
        if len(scores) == 1 or scores[1][0] < best - 10 * EPS * max(1.0, abs(best)):
            assert got == scores[0][1]


EPS = 1e-5


def _transitions(seq, T):
    path = [T] + list(seq)
    return [p * T + t for p, t in zip(path[:-1], path[1:])] + [(T + 1) * T + seq[-1]]


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VARIANTS = {"plain": {}, "mask": {"mask": True}, "tagdict": {"tagdict": True},
            "prune": {"prune": True}, "all": {"mask": True, "tagdict": True, "prune": True}}


# ---------------------------------------------------------------- tests

@pytest.mark.parametrize("variant", list(VARIANTS))
@SETTINGS
@given(data=st.data())
def test_perceptron_equals_naive_collins(variant, data):
    case = data.draw(cases(**VARIANTS[variant]))
    model, naive, keys, bounds, train = train_both(case)
    check_weights(model, naive, keys)
    check_predictions(model, naive, keys, bounds, train)


@pytest.mark.parametrize("variant", ["plain", "mask", "tagdict", "all"])
@SETTINGS
@given(data=st.data(), C=st.sampled_from([0.05, 0.5, 5.0]))
def test_mira_k1_equals_naive_passive_aggressive(variant, data, C):
    case = data.draw(cases(**VARIANTS[variant]))
    model, naive, keys, bounds, train = train_both(case, algorithm="mira", C=C)
    check_weights(model, naive, keys)
    check_predictions(model, naive, keys, bounds, train)


@pytest.mark.parametrize("variant", ["plain", "all"])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_greedy_perceptron_equals_naive(variant, data):
    case = data.draw(cases(**VARIANTS[variant]))
    model, naive, keys, bounds, train = train_both(case, decoder="greedy")
    check_weights(model, naive, keys)
    check_predictions(model, naive, keys, bounds, train, greedy=True)


def test_mira_step_size_is_clipped_at_C():
    """One sentence, one epoch: the first update from zero weights is
    alpha * (phi(gold) - phi(pred)) with alpha = min(C, loss / ||d||^2), so
    the gold word feature's averaged weight is alpha (one step)."""
    for C, expect in ((0.01, 0.01), (100.0, None)):
        model = SequenceModel(["X", "Y"], WordFeaturizer(), ["word[0]"])
        # all-zero weights: Viterbi picks X X; gold Y Y; loss 2
        fit(model, [(["a", "b"], None, [1, 1])], epochs=1, seed=0, algorithm="mira", k=1, C=C,
            verbose=False)
        keys, _ = featurize(model, [(["a", "b"], None)])
        # d: +1 (a,Y), -1 (a,X), +1 (b,Y), -1 (b,X), start->Y +1, start->X -1,
        # Y->Y +1, X->X -1, Y->end +1, X->end -1: ||d||^2 = 10
        alpha = expect if expect is not None else 2 / 10
        assert close(model.emit.get(int(keys[0, 0]), 1), alpha)
        assert close(model.emit.get(int(keys[0, 0]), 0), -alpha)
        assert close(model.trans[0 * 2 + 0], -alpha) and close(model.trans[1 * 2 + 1], alpha)
