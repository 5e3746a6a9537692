"""Combining chunkers: span voting between directions and learners, and n-best reranking.  CoNLL-2000.

    python benchmarks/bench_chunk_combination.py --clusters CLUSTERS
        [--seeds 0,10,20] [--ensemble 4] [--holdout 936] [--rerank-seeds 0] [--processes 2]

Two published ways past a single tagger's errors, tried on the chunking
target of issue 13 (94.7 F1) with the chunk defaults and Brown clusters:

* **Voting** (Tjong Kim Sang 2000; Kudo & Matsumoto 2001; Shen & Sarkar
  2005): four members, the structured perceptron and 3-best MIRA, each
  trained left to right and on reversed sentences (spans mirrored; the
  labels are BIOES either way, but the features and the learner's path
  differ), each itself an ``--ensemble N`` of averaged weights.  A span is
  kept when most members predict it (3 of 4; 2 of 3): spans kept by a
  majority never overlap, since two of them would share a member.
  Every three-member vote is printed too.
* **Reranking** (Collins 2002): 10-best lists of each training sentence
  from a model trained on the other nine tenths, a reranker (an averaged
  perceptron over whole-chunk features: the chunk's POS sequence, length,
  first and last word, the POS before and after, the previous chunk's
  type) trained to pick the list's best candidate, with the tagger's
  score (scaled by its median top-two gap) at a fixed weight chosen on
  the held-out part; test lists come from the model trained on all of
  train.

``--holdout N`` also scores each vote on the last N training sentences
(trained without them): the choice a user could make without the test
set.  Needs ``../shared/data``.
"""
import argparse
import itertools
import multiprocessing
import random
import statistics
import sys
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness as H  # noqa: E402

MEMBERS = {"perceptron": {}, "perceptron, reversed": {},
           "3-best MIRA": {"algorithm": "mira", "k": 3}, "3-best MIRA, reversed": {"algorithm": "mira", "k": 3}}
DATA = {}            # "train", "test": [Sentence]; the workers fork after it is set


def spans(tags):
    """The (type, start, end) chunks of IOB2 ``tags``."""
    from fasttag.text import schemes
    return set(schemes.spans(tags, "iob2"))


def reversed_sentence(s):
    """``s`` read right to left, its chunks mirrored (IOB2 again)."""
    from fasttag.text import schemes
    from fasttag.text.formats import Sentence
    n = len(s.words)
    tags = schemes.encode([(t, n - e, n - b) for t, b, e in schemes.spans(s.tags, "iob2")], n, "iob2")
    rows = [[*r[:-1], t] for r, t in zip(reversed(s.rows), tags)]
    return Sentence(s.words[::-1], tags, rows, [], [], 0)


def member_spans(job):
    """(job, per test sentence the member's span set); ``holdout``: the
    last so many training sentences are the test."""
    name, seed, ensemble, holdout, clusters = job
    from fasttag import SpanTagger
    train, test = DATA["train"], DATA["test"]
    if holdout:
        train, test = train[:-holdout], train[-holdout:]
    backwards = name.endswith("reversed")
    if backwards:
        train, test = [reversed_sentence(s) for s in train], [reversed_sentence(s) for s in test]
    model = SpanTagger.train(train, task="chunk", seed=seed, ensemble=ensemble, verbose=False,
                             clusters=clusters, **MEMBERS[name])
    out = []
    for s, tags in zip(test, model.tag_sents(test)):
        n = len(s.words)
        out.append({(t, n - e, n - b) for t, b, e in spans(tags)} if backwards else spans(tags))
    return job, out


def f1(gold, pred):
    correct = sum(len(g & p) for g, p in zip(gold, pred))
    n_pred, n_gold = sum(map(len, pred)), sum(map(len, gold))
    p, r = correct / max(n_pred, 1), correct / n_gold
    return 200 * p * r / (p + r) if p + r else 0.0


def vote(members):
    """Per sentence the spans predicted by a majority of ``members``."""
    need = len(members) // 2 + 1
    return [{x for x, c in Counter(x for m in per for x in m).items() if c >= need} for per in zip(*members)]


# ---------------------------------------------------------------- reranking

def chunk_features(s, tags):
    words, pos, n = [w.lower() for w in s.words], [r[1] for r in s.rows], len(s.words)
    feats, inside, prev = [], [False] * n, "<s>"
    for t, b, e in sorted(spans(tags), key=lambda x: x[1]):
        inside[b:e] = [True] * (e - b)
        after = pos[e] if e < n else "</s>"
        feats += [f"pos|{t}|{' '.join(pos[b:e]) if e - b <= 6 else 'long'}", f"len|{t}|{min(e - b, 7)}",
                  f"first|{t}|{words[b]}", f"last|{t}|{words[e - 1]}", f"ends|{t}|{pos[b]}|{pos[e - 1]}",
                  f"before|{t}|{pos[b - 1] if b else '<s>'}", f"after|{t}|{after}",
                  f"types|{prev}|{t}", f"last-after|{t}|{words[e - 1]}|{after}"]
        prev = t
    return feats + [f"types|{prev}|</s>"] + [f"out|{pos[i]}" for i in range(n) if not inside[i]]


def nbest_job(job):
    """(job, per sentence its 10-best (features, score, spans)): fold f of
    10 of train from the other nine, or (fold None) test from all of train."""
    fold, seed, clusters = job
    from fasttag import SpanTagger
    train, test = DATA["train"], DATA["test"]
    if fold is not None:
        test = [s for i, s in enumerate(train) if i % 10 == fold]
        train = [s for i, s in enumerate(train) if i % 10 != fold]
    model = SpanTagger.train(train, task="chunk", seed=seed, verbose=False, clusters=clusters)
    return job, [[(chunk_features(s, tags), score, spans(tags)) for tags, score in nb]
                 for s, nb in zip(test, model.tag_sents(test, n_best=10))]


class Reranker:
    """An averaged perceptron over candidates: ``a`` times the tagger's
    score (relative to the top candidate) plus the feature weights."""

    def __init__(self, a):
        self.a, self.w, self.u, self.t = a, defaultdict(float), defaultdict(float), 1

    def score(self, feats, base, averaged):
        w, u, t = self.w, self.u, self.t
        return self.a * base + sum(w.get(f, 0.0) - (u.get(f, 0.0) / t if averaged else 0.0) for f in feats)

    def pick(self, cands, averaged=True):
        return max(range(len(cands)), key=lambda k: (self.score(cands[k][0], cands[k][1], averaged), -k))

    def train(self, lists, epochs, seed=0):
        order = list(range(len(lists)))
        rng = random.Random(seed)
        for _ in range(epochs):
            rng.shuffle(order)
            for i in order:
                cands, target = lists[i]
                k = self.pick(cands, averaged=False)
                if cands[k][3] < cands[target][3]:
                    for f in cands[target][0]:
                        self.w[f] += 1
                        self.u[f] += self.t
                    for f in cands[k][0]:
                        self.w[f] -= 1
                        self.u[f] -= self.t
                self.t += 1
        return self


def rerank(seed, clusters, processes, gold_train, gold_test, holdout):
    """Lines of the reranking table of one seed."""
    jobs = [(f, seed, clusters) for f in range(10)] + [(None, seed, clusters)]
    train_lists, test_lists = [None] * len(gold_train), None
    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork")) as pool:
        for (fold, *_), lists in pool.map(nbest_job, jobs):
            if fold is None:
                test_lists = lists
            else:
                for i, nb in zip(range(fold, len(gold_train), 10), lists):
                    train_lists[i] = nb
    gaps = [nb[0][1] - nb[1][1] for nb in train_lists if len(nb) > 1]
    scale = statistics.median(gaps)

    def prepare(lists, gold):
        out = []
        for nb, g in zip(lists, gold):
            # a candidate: features, score below the top one (in median gaps), spans, correct minus wrong spans
            cands = [(f, (score - nb[0][1]) / scale, sp, 2 * len(sp & g) - len(sp)) for f, score, sp in nb]
            out.append((cands, max(range(len(cands)), key=lambda k: (cands[k][3], -k))))
        return out
    train_c, test_c = prepare(train_lists, gold_train), prepare(test_lists, gold_test)
    fit, held = train_c[:-holdout], train_c[-holdout:]

    def score(model, lists, gold):
        return f1(gold, [c[model.pick(c) if model else 0][2] for c, _ in lists])
    lines = [f"| seed {seed}: the tagger's best | - | {score(None, held, gold_train[-holdout:]):.2f} | "
             f"{score(None, test_c, gold_test):.2f} |",
             f"| seed {seed}: the oracle of 10 | - | - | "
             f"{f1(gold_test, [c[t][2] for c, t in test_c]):.2f} |"]
    for a in (2, 5, 10, 20):
        dev = score(Reranker(a).train(fit, 4, seed), held, gold_train[-holdout:])
        test = score(Reranker(a).train(train_c, 4, seed), test_c, gold_test)
        lines.append(f"| seed {seed}: reranked | {a} | {dev:.2f} | {test:.2f} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clusters", required=True, help="a clusters file (as bench_clusters.py uses)")
    ap.add_argument("--seeds", default="0,10,20", help="seeds of the voting runs")
    ap.add_argument("--ensemble", type=int, default=4, help="runs averaged in each member")
    ap.add_argument("--holdout", type=int, default=936, help="the last N training sentences as a dev set "
                    "(0: none)")
    ap.add_argument("--rerank-seeds", default="0")
    ap.add_argument("--processes", type=int, default=2)
    args = ap.parse_args()
    from fasttag.text import formats as ftio
    DATA["train"] = list(ftio.read_conll(H.data_path("conll2000", "train.txt")))
    DATA["test"] = list(ftio.read_conll(H.data_path("conll2000", "test.txt")))
    gold = {"test": [spans(s.tags) for s in DATA["test"]], "train": [spans(s.tags) for s in DATA["train"]]}
    gold["dev"] = gold["train"][-args.holdout:] if args.holdout else []
    seeds = [int(x) for x in args.seeds.split(",") if x]
    names = list(MEMBERS)
    jobs = [(name, seed, args.ensemble, holdout, args.clusters) for seed in seeds for name in names
            for holdout in ([0, args.holdout] if args.holdout else [0])]
    pred = {}
    with ProcessPoolExecutor(args.processes, mp_context=multiprocessing.get_context("fork")) as pool:
        for (name, seed, _, holdout, _), out in pool.map(member_spans, jobs):
            pred["dev" if holdout else "test", seed, name] = out
    parts = ["dev", "test"] if args.holdout else ["test"]
    print(f"\nVoting, each member an ensemble of {args.ensemble} runs (F1):\n")
    print("| seed | combination | " + " | ".join(parts) + " |\n|---:|---|" + "---:|" * len(parts))
    for seed in seeds:
        rows = [(name, [name]) for name in names]
        rows += [(" + ".join(c) + " (2 of 3)", list(c)) for c in itertools.combinations(names, 3)]
        rows += [("all four (3 of 4)", names)]
        for label, combo in rows:
            vals = [f1(gold[p], pred[p, seed, combo[0]] if len(combo) == 1
                       else vote([pred[p, seed, m] for m in combo])) for p in parts]
            print(f"| {seed} | {label} | " + " | ".join(f"{v:.2f}" for v in vals) + " |")
    rerank_seeds = [int(x) for x in args.rerank_seeds.split(",") if x]
    if rerank_seeds and args.holdout:
        print("\nReranking 10-best lists (F1; the dev column is the reranker's, trained without the last "
              f"{args.holdout} training sentences' lists):\n")
        print("| run | score weight | dev | test |\n|---|---:|---:|---:|")
        for seed in rerank_seeds:
            for line in rerank(seed, args.clusters, args.processes, gold["train"], gold["test"], args.holdout):
                print(line)


if __name__ == "__main__":
    main()
