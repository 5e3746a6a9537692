"""Would feature bagging make ensembles better?  Chunking, cross-validated.

    python benchmarks/bench_feature_bagging.py --clusters CLUSTERS [--runs 4] [--shares 0,0.25]
        [--seeds 0,10,20] [--folds 4] [--processes 2]

``--ensemble N`` averages N runs that differ only by their shuffles.
Feature bagging (Sutton, Sindelar and McCallum 2005) makes them differ
more: each run leaves out a share of the feature templates, a different
block of one shuffled template order for each run, so that a run learns
to use features that the strongest ones would have left at small
weights.  This script trains the chunker (``SpanTagger``, its default
templates with ``clusters``, 8 epochs) as N runs with seeds S, S+1 ...,
each with the task's templates less its block (the ``templates`` option),
averages their weights as ``--ensemble`` does
(:func:`fasttag.model.tables.mean_table`, the transitions' mean) and scores the
mean model by k-fold cross-validation on CoNLL-2000 train: every training
sentence is scored once, by the ensemble trained on the other folds.
Share 0 is the plain ensemble.

Cross-validation scores 211,727 tokens, nine times the 936 sentences
``bench_clusters.py --chunk-holdout`` holds out, whose differences of 0.1
between seeds are as large as the ideas measured on it.  Needs
``../shared/data``.
"""
import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness as H  # noqa: E402


def left_out(n_templates, share, seed, run):
    """The template indices run ``run`` leaves out: block ``run`` (of
    ``share`` of the templates, wrapping around) of a shuffled order."""
    size = min(int(share * n_templates + 0.5), n_templates - 1)
    order = np.random.default_rng(seed).permutation(n_templates)
    return set(order[(run * size + np.arange(max(size, 0))) % n_templates].tolist())


def fold_predictions(job):
    """(fold, predicted tags of its sentences) of one ensemble trained on
    the other folds."""
    fold, folds, runs, share, seed, clusters = job
    from fasttag import SpanTagger
    from fasttag.text import formats as ftio
    from fasttag.model.tables import mean_table
    data = list(ftio.read_conll(H.data_path("conll2000", "train.txt")))
    lo, hi = fold * len(data) // folds, (fold + 1) * len(data) // folds
    train, held = data[:lo] + data[hi:], data[lo:hi]
    # the mean model scores every template: a one-epoch model of them all holds it
    mean = SpanTagger.train(train, task="chunk", epochs=1, verbose=False, clusters=clusters)
    names = list(mean.model.templates.names)
    members = []
    for r in range(runs):
        gone = left_out(len(names), share, seed, r)
        members.append(SpanTagger.train(train, task="chunk", seed=seed + r, verbose=False, clusters=clusters,
                                        templates=[t for i, t in enumerate(names) if i not in gone]))
    assert all(list(m.model.tags) == list(mean.model.tags) for m in members)
    mean.model.emit = mean_table([m.model.emit for m in members], len(mean.model.tags))
    mean.model.trans = np.mean([m.model.trans for m in members], axis=0)
    return fold, mean.tag_sents(held)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clusters", required=True, help="a clusters file (as bench_clusters.py uses)")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--shares", default="0,0.25", help="shares of the templates each run leaves out")
    ap.add_argument("--seeds", default="0,10,20", help="first seeds: shuffles and template order")
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--processes", type=int, default=2)
    args = ap.parse_args()
    from fasttag.text import formats as ftio
    data = list(ftio.read_conll(H.data_path("conll2000", "train.txt")))
    gold = [s.tags for s in data]
    shares = [float(x) for x in args.shares.split(",")]
    seeds = [int(x) for x in args.seeds.split(",")]
    print(f"CoNLL-2000 train: {len(data):,} sentences, {sum(map(len, gold)):,} tokens, {args.folds} folds; "
          f"ensembles of {args.runs} runs", flush=True)
    rows = {}
    with ProcessPoolExecutor(args.processes) as pool:
        for seed in seeds:
            for share in shares:
                t0 = time.perf_counter()
                jobs = [(f, args.folds, args.runs, share, seed, args.clusters) for f in range(args.folds)]
                pred = [None] * len(data)
                per_fold = []
                for fold, tags in pool.map(fold_predictions, jobs):
                    lo, hi = fold * len(data) // args.folds, (fold + 1) * len(data) // args.folds
                    pred[lo:hi] = tags
                    per_fold.append(100 * H.conll_f1(gold[lo:hi], tags)["f1"])
                rows[seed, share] = 100 * H.conll_f1(gold, pred)["f1"]
                print(f"  seed {seed}, share {share}: {rows[seed, share]:.2f} (folds "
                      + ", ".join(f"{x:.2f}" for x in per_fold) + f"), {time.perf_counter() - t0:.0f} s",
                      flush=True)
    print()
    print("| first seed | " + " | ".join(f"share {s}" for s in shares) + " |")
    print("|---:|" + "---:|" * len(shares))
    for seed in seeds:
        print(f"| {seed} | " + " | ".join(f"{rows[seed, s]:.2f}" for s in shares) + " |")
    means = [np.mean([rows[seed, s] for seed in seeds]) for s in shares]
    print("| mean | " + " | ".join(f"{m:.2f}" for m in means) + " |")


if __name__ == "__main__":
    main()
