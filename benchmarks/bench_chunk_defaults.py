"""The chunker's defaults against the ones before them.  CoNLL-2000.

    python benchmarks/bench_chunk_defaults.py --clusters CLUSTERS [--seeds 0,10,20] [--holdout 936]

The defaults now: 3-best MIRA, and with a POS column the chunk templates
(``fasttag.features.spans.CHUNK_TEMPLATES``; with clusters also
``CHUNK_CLUSTER_TEMPLATES``).  Before: the structured perceptron over the
span templates alone.  Both train 8 epochs without a dev set, without and
with Brown clusters, on each seed:

* dev: trained on all but the last ``--holdout`` training sentences,
  scored on those (what the defaults were chosen on);
* test: trained on all of train, scored on test (span F1, conlleval).

Then, on the first seed with clusters, the costs: training CPU seconds,
model file size, and tagging speed (tokens per CPU second over the test
set, median of 5 alternating passes, and its ratio).  Needs
``../shared/data``.
"""
import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness as H  # noqa: E402
from fasttag import SpanTagger
from fasttag.text import schemes
from fasttag.text import formats as ftio
from fasttag.features.words import CLUSTER_TEMPLATES  # noqa: E402
from fasttag.features.spans import span_templates  # noqa: E402


def before(clusters):
    """The options that give the defaults before: the perceptron, span templates."""
    return {"algorithm": "perceptron",
            "templates": span_templates(1, []) + (list(CLUSTER_TEMPLATES) if clusters else [])}


def f1(tagger, sentences):
    correct = n_pred = n_gold = 0
    for s, tags in zip(sentences, tagger.tag_sents(sentences)):
        gold, pred = set(schemes.spans(s.tags, "iob2")), set(schemes.spans(tags, "iob2"))
        correct += len(gold & pred)
        n_pred += len(pred)
        n_gold += len(gold)
    p, r = correct / n_pred, correct / n_gold
    return 200 * p * r / (p + r)


def train(sentences, clusters, seed, old):
    options = {"task": "chunk", "seed": seed, "verbose": False, "clusters": clusters}
    if old:
        options.update(before(clusters))
    t0 = time.process_time()
    tagger = SpanTagger.train(sentences, **options)
    return tagger, time.process_time() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clusters", required=True, help="a clusters file (fasttag cluster)")
    ap.add_argument("--seeds", default="0,10,20")
    ap.add_argument("--holdout", type=int, default=936)
    args = ap.parse_args(argv)
    train_all = [s for s in ftio.read_conll(H.data_path("conll2000", "train.txt")) if s.words]
    test = [s for s in ftio.read_conll(H.data_path("conll2000", "test.txt")) if s.words]
    fit, dev = train_all[:-args.holdout], train_all[-args.holdout:]
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"## Chunker defaults, CoNLL-2000 (dev: the last {args.holdout} training sentences)\n")
    print("| clusters | defaults | " + " | ".join(f"dev s{s}" for s in seeds) + " | dev mean | "
          + " | ".join(f"test s{s}" for s in seeds) + " | test mean |")
    print("|---|---|" + "---:|" * (2 * len(seeds) + 2))
    kept = {}
    for clusters in (None, args.clusters):
        for old in (True, False):
            devs, tests = [], []
            for seed in seeds:
                devs.append(f1(train(fit, clusters, seed, old)[0], dev))
                tagger, seconds = train(train_all, clusters, seed, old)
                tests.append(f1(tagger, test))
                if clusters and seed == seeds[0]:
                    kept[old] = (tagger, seconds)
            print(f"| {'yes' if clusters else 'no'} | {'before' if old else 'now'} | "
                  + " | ".join(f"{v:.2f}" for v in devs) + f" | {statistics.mean(devs):.2f} | "
                  + " | ".join(f"{v:.2f}" for v in tests) + f" | {statistics.mean(tests):.2f} |", flush=True)
    n_tokens = sum(len(s.words) for s in test)
    speeds = {True: [], False: []}
    for _ in range(5):
        for old in (True, False):
            tagger = kept[old][0]
            t0 = time.process_time()
            tagger.tag_sents(test)
            speeds[old].append(n_tokens / (time.process_time() - t0))
    print(f"\nCosts, seed {seeds[0]} with clusters (test set, {n_tokens:,} tokens):\n")
    print("| defaults | train CPU s | model MB | tag tokens/CPU s (median of 5) |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for old in (True, False):
            tagger, seconds = kept[old]
            path = Path(tmp) / "m.ftm"
            tagger.save(path)
            print(f"| {'before' if old else 'now'} | {seconds:.0f} | {path.stat().st_size / 1e6:.1f} | "
                  f"{statistics.median(speeds[old]):,.0f} |")
    ratio = statistics.median(speeds[False]) / statistics.median(speeds[True])
    print(f"\nTagging speed now / before: {ratio:.2f}")


if __name__ == "__main__":
    main()
