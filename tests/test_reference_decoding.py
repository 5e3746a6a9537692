"""Decoding through SequenceModel against a brute-force reference.

The reference enumerates every tag sequence a sentence's candidate lists
allow and takes the best under the same constraints: a transition mask, a
tag dictionary (a listed word takes only its class's tags), and pruning of
open words to their ``prune_k`` best tags by emission score.  Emission
scores come from the dict of weights the test wrote into the table, not
from the table.  The conventions checked, from ``fasttag._core.sequence``:

* pruning keeps an open word's ``prune_k`` highest-scoring tags, ties to the
  lower tag; dictionary words are never pruned;
* Viterbi's ties go to the sequence that is smallest read right to left;
* a sentence with no path the mask allows is decoded without the mask
  (over the same candidates);
* greedy decoding takes, left to right, the best candidate after the
  previous predicted tag (ties: the lower tag), skipping forbidden
  transitions (none allowed: the lowest candidate); it never looks at the
  end transitions.
"""
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fasttag._core.weights import WeightTable
from fasttag._core.sequence import transition_size
from fasttag.features.words import WordFeaturizer
from fasttag.model.sequence import SequenceModel

VOCAB = ["a", "b", "c", "d", "e", "f"]
TEMPLATES = ["bias", "word[0]", "word[-1]"]     # two per word type, one per context


# ---------------------------------------------------------------- engine access

def featurize(model, examples):
    """(keys, bounds, candidates) of token examples."""
    keys, bounds, cands, _ = model.featurize(examples)
    return keys, bounds, cands


def make_search(model, emit, trans, cands):
    return model.search(emit, trans, cands)


# ---------------------------------------------------------------- reference

def candidates(tokens, E, T, tagdict, classes, prune_k, worst=False):
    """Per token, its ascending candidate tags.  ``worst`` inverts the
    pruning (keeps the worst tags): only to show the tests would notice."""
    out = []
    for i, tok in enumerate(tokens):
        if tok in tagdict:
            out.append(sorted(classes[tagdict[tok]]))
        elif 0 < prune_k < T:
            sign = 1 if worst else -1
            ranked = sorted(range(T), key=lambda t: (sign * E[i][t], t))
            out.append(sorted(ranked[:prune_k]))
        else:
            out.append(list(range(T)))
    return out


def transitions_of(seq, T):
    path = [T] + list(seq)
    return [p * T + t for p, t in zip(path[:-1], path[1:])] + [(T + 1) * T + seq[-1]]


def brute_viterbi(E, trans, allowed, cands, T):
    """The best sequence by enumeration; ties: smallest read right to left.
    With no sequence the mask allows, the best one without the mask."""
    best, best_seq = None, None
    for seq in itertools.product(*cands):
        idx = transitions_of(seq, T)
        if allowed is not None and not all(allowed[j] for j in idx):
            continue
        score = sum(E[i][t] for i, t in enumerate(seq)) + sum(trans[j] for j in idx)
        if best is None or score > best or (score == best and seq[::-1] < best_seq[::-1]):
            best, best_seq = score, seq
    if best_seq is None:
        return brute_viterbi(E, trans, None, cands, T)
    return list(best_seq)


def reference_greedy(E, trans, allowed, cands, T):
    out, prev = [], T
    for i, cand in enumerate(cands):
        best, arg = None, None
        for t in cand:
            if allowed is not None and not allowed[prev * T + t]:
                continue
            v = E[i][t] + trans[prev * T + t]
            if best is None or v > best:
                best, arg = v, t
        if arg is None:
            arg = cand[0]
        out.append(arg)
        prev = arg
    return out


def emissions(keys, W, T):
    """Per token, per tag: the sum of the token's feature weights (from the
    dict the table was filled from)."""
    return [[sum(W.get((int(k), t), 0.0) for k in row) for t in range(T)] for row in keys]


# ---------------------------------------------------------------- random models

def weight_table(W, T, loaded):
    """A table holding the weights of dict W: as a loaded model's (from
    arrays) or as a training table's (by updates)."""
    if loaded:
        items = sorted(W.items())
        keys = sorted({k for (k, _), _ in items})
        counts = [sum(1 for (k, _), _ in items if k == key) for key in keys]
        return WeightTable.from_arrays(np.array(keys, np.uint64), np.array(counts, np.uint32),
                                       np.array([t for (_, t), _ in items], np.int32),
                                       np.array([v for _, v in items], np.float64), n_classes=T)
    table = WeightTable()
    for (k, t), v in W.items():
        table.update(np.array([k], np.uint64), t, v, 1)
    return table


@st.composite
def cases(draw, mask, tagdict, prune, max_tags=4, min_tags=2):
    T = draw(st.integers(min_tags, max_tags))
    sents = draw(st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=5),
                          min_size=1, max_size=3))
    seed = draw(st.integers(0, 2**32 - 1))
    integer = draw(st.booleans())                # small integers: ties in scores
    loaded = draw(st.booleans())
    rng = np.random.default_rng(seed)
    allowed = None
    if mask:
        allowed = (rng.random(transition_size(T)) < 0.7).astype(np.uint8)
    words, classes = {}, []
    if tagdict:
        classes = [tuple(sorted(rng.choice(T, size=int(rng.integers(1, T + 1)), replace=False).tolist()))
                   for _ in range(int(rng.integers(1, 4)))]
        for w in VOCAB:
            if rng.random() < 0.5:
                words[w] = int(rng.integers(len(classes)))
    prune_k = int(rng.integers(1, T)) if prune else 0
    return dict(T=T, sents=sents, rng=rng, integer=integer, loaded=loaded, allowed=allowed,
                tagdict=words, classes=classes, prune_k=prune_k)


def build(case, decoder="viterbi"):
    """The model of a case, its random weights (dict), and per sentence the
    reference's emissions and candidate lists."""
    T, rng = case["T"], case["rng"]
    model = SequenceModel([f"T{i}" for i in range(T)], WordFeaturizer(), TEMPLATES,
                          allowed=case["allowed"], tagdict=case["tagdict"],
                          tagdict_classes=case["classes"], prune_k=case["prune_k"], decoder=decoder)
    examples = [(s, None) for s in case["sents"]]
    keys, bounds, cands = featurize(model, examples)
    W = {}
    for k in np.unique(keys).tolist():
        for t in range(T):
            if rng.random() < 0.8:
                v = float(rng.integers(-2, 3)) if case["integer"] else float(rng.normal())
                if v:
                    W[(k, t)] = v
    if case["integer"]:
        trans = rng.integers(-2, 3, transition_size(T)).astype(np.float64)
    else:
        trans = rng.normal(size=transition_size(T))
    model.emit = weight_table(W, T, case["loaded"])
    model.trans = trans
    return model, examples, keys, bounds, cands, W


def check_decoder(case, greedy, worst=False):
    model, examples, keys, bounds, cands, W = build(case, "greedy" if greedy else "viterbi")
    T = case["T"]
    expected, Es = [], []
    for s, (tokens, _) in enumerate(examples):
        E = emissions(keys[bounds[s]:bounds[s + 1]], W, T)
        cand = candidates(tokens, E, T, case["tagdict"], case["classes"], case["prune_k"], worst)
        decode = reference_greedy if greedy else brute_viterbi
        expected.append(decode(E, model.trans, case["allowed"], cand, T))
        Es.append(E)

    def same(got):
        """Equal to the reference, or (Viterbi) a sequence whose score ties
        the best one's but for rounding: a repeated token with symmetric
        transitions scores two sequences equally, summed in another order."""
        if got == expected:
            return True
        if greedy or len(got) != len(expected):
            return False
        for E, g, e in zip(Es, got, expected):
            if g != e:
                score_g, score_e = (sum(E[i][t] for i, t in enumerate(q)) + sum(model.trans[j] for j in
                                                                                transitions_of(q, T))
                                    for q in (g, e))
                if abs(score_g - score_e) > 1e-9 * max(1.0, abs(score_e)):
                    return False
                ok = case["allowed"] is None or all(case["allowed"][j] for j in transitions_of(g, T)) \
                    or not all(case["allowed"][j] for j in transitions_of(e, T))     # (no sequence allowed)
                if not ok:
                    return False
        return True
    # the public path (per-type scores, then context features) ...
    got = [p.tolist() for p in model.predict_ids(examples)]
    assert same(got), (got, expected)
    # ... and the search over every template's keys
    ids = make_search(model, model.emit, model.trans, cands).decode(keys, bounds, greedy=greedy)
    searched = [ids[bounds[s]:bounds[s + 1]].tolist() for s in range(len(examples))]
    assert same(searched), (searched, expected)


VARIANTS = {"mask": (1, 0, 0), "tagdict": (0, 1, 0), "prune": (0, 0, 1), "all": (1, 1, 1),
            "none": (0, 0, 0)}
SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("variant", list(VARIANTS))
@SETTINGS
@given(data=st.data())
def test_viterbi_equals_brute_force(variant, data):
    check_decoder(data.draw(cases(*VARIANTS[variant])), greedy=False)


@pytest.mark.parametrize("variant", ["none", "all"])
@SETTINGS
@given(data=st.data())
def test_greedy_equals_reference(variant, data):
    check_decoder(data.draw(cases(*VARIANTS[variant])), greedy=True)


@pytest.mark.parametrize("variant", ["none", "tagdict", "all"])
@SETTINGS
@given(data=st.data())
def test_greedy_over_hundreds_of_tags_equals_reference(variant, data):
    """The decoder's paths for many tags: a loaded table's heavy features
    added as dense rows, a greedy pick straight from the scores, a word with
    few candidates scored for those alone, and its type's scores summed
    from its type keys rather than a row of every tag's."""
    check_decoder(data.draw(cases(*VARIANTS[variant], max_tags=160, min_tags=40)), greedy=True)


# ---------------------------------------------------------------- pruning, by hand

def one_token_model(T, prune_k, scores, allowed):
    """A model whose only word "x" has emission ``scores`` (one feature)."""
    model = SequenceModel([f"T{i}" for i in range(T)], WordFeaturizer(), ["word[0]"],
                          allowed=allowed, prune_k=prune_k)
    keys, _, _ = featurize(model, [(["x"], None)])
    W = {(int(keys[0, 0]), t): float(v) for t, v in enumerate(scores) if v}
    model.emit = weight_table(W, T, loaded=True)
    model.trans = np.zeros(transition_size(T))
    return model


def test_pruning_keeps_the_best_tags():
    """Start -> tag 0 forbidden.  Unpruned, the best valid tag is 1;
    pruned to the best tag (0), no valid path is left and the unconstrained
    decode gives 0; pruning to the worst tag would give 2."""
    T = 3
    allowed = np.ones(transition_size(T), np.uint8)
    allowed[T * T + 0] = 0
    assert one_token_model(T, 0, [3, 2, 1], allowed).predict_ids([(["x"], None)])[0].tolist() == [1]
    assert one_token_model(T, 1, [3, 2, 1], allowed).predict_ids([(["x"], None)])[0].tolist() == [0]
    # two kept: 0 and 1, and 1 is allowed
    assert one_token_model(T, 2, [3, 2, 1], allowed).predict_ids([(["x"], None)])[0].tolist() == [1]
    # only tag 2 allowed at the start: pruned away with k = 2, so fallback to 0
    allowed[T * T + 1] = 0
    assert one_token_model(T, 2, [3, 2, 1], allowed).predict_ids([(["x"], None)])[0].tolist() == [0]


def test_pruning_ties_keep_the_lower_tag():
    """Scores [2, 2, 1], k = 1: tag 0 is kept (the lower of the tied
    tags), so with start -> 0 forbidden the fallback decodes 0; keeping tag
    1 instead would decode 1."""
    T = 3
    allowed = np.ones(transition_size(T), np.uint8)
    allowed[T * T + 0] = 0
    assert one_token_model(T, 1, [2, 2, 1], allowed).predict_ids([(["x"], None)])[0].tolist() == [0]
    assert one_token_model(T, 0, [2, 2, 1], allowed).predict_ids([(["x"], None)])[0].tolist() == [1]



def test_candidates_beyond_the_tables_labels_score_nothing_from_it():
    """A table that never saw the last tags (a model's tags outnumber the
    labels it learned): a word whose few candidates include them reads no
    weight of theirs, also through a dense row of a heavy feature."""
    T, seen = 64, 40
    rng = np.random.default_rng(3)
    model = SequenceModel([f"T{i}" for i in range(T)], WordFeaturizer(), TEMPLATES,
                          tagdict={"a": 0, "c": 1}, tagdict_classes=[(5, 39, 50, 63), (0, 45)], decoder="greedy")
    examples = [(["a", "b", "c", "a"], None), (["c", "a"], None)]
    keys, bounds, cands = featurize(model, examples)
    W = {(k, t): float(rng.integers(-3, 4)) or 1.0 for k in np.unique(keys).tolist() for t in range(seen)}
    items = sorted(W.items())
    ks = sorted({k for (k, _), _ in items})
    table = WeightTable.from_arrays(np.array(ks, np.uint64), np.array([seen] * len(ks), np.uint32),
                                    np.array([t for (_, t), _ in items], np.int32),
                                    np.array([v for _, v in items], np.float64))
    assert table.n_classes == seen
    model.emit = table
    model.trans = rng.integers(-2, 3, transition_size(T)).astype(np.float64)
    classes = [(5, 39, 50, 63), (0, 45)]
    for s, (tokens, _) in enumerate(examples):
        E = emissions(keys[bounds[s]:bounds[s + 1]], W, T)
        cand = [list(classes[model.tagdict[w]]) if w in model.tagdict else list(range(T)) for w in tokens]
        expected = reference_greedy(E, model.trans, None, cand, T)
        assert model.predict_ids([examples[s]])[0].tolist() == expected
