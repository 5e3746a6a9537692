"""The weight table against a pure-Python dict-of-dicts averaged perceptron.

    python benchmarks/bench_core.py [--examples 20000]

Both sides run the notes' algorithm on the same stream of examples (20-40
hashed string features each): an update adds +1 to the gold label and -1 to
a wrong label for every active feature, with lazily averaged
per-(label, feature) timestamps; scoring sums every active feature's label
weights.  Prints updates/s, scores/s and their ratios for 17 and 400 labels,
then the memory of one million stored weights.
"""
import argparse
import gc
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fasttag._core.weights import WeightTable, hash_strings  # noqa: E402


class DictAveraged:
    """The notes' algorithm in plain Python (as NLTK's perceptron does it)."""

    def __init__(self):
        self.weights = {}     # feature -> {label: weight}
        self.totals = {}      # (feature, label) -> accumulated total
        self.tstamps = {}     # (feature, label) -> last step

    def update(self, feats, label, delta, step):
        for f in feats:
            w = self.weights.setdefault(f, {})
            old = w.get(label, 0.0)
            key = (f, label)
            self.totals[key] = self.totals.get(key, 0.0) + (step - 1 - self.tstamps.get(key, 0)) * old
            self.tstamps[key] = step - 1
            w[label] = old + delta

    def score(self, feats, n_labels):
        scores = [0.0] * n_labels
        weights = self.weights
        for f in feats:
            w = weights.get(f)
            if w:
                for label, v in w.items():
                    scores[label] += v
        return scores


def make_stream(n, n_labels, seed=0):
    """Examples of 20-40 hashed features drawn from a Zipf-like vocabulary."""
    rng = np.random.default_rng(seed)
    vocab = hash_strings([f"feat={i}" for i in range(200_000)])
    examples = []
    for _ in range(n):
        k = int(rng.integers(20, 41))
        idx = np.minimum(rng.zipf(1.3, size=k) - 1, len(vocab) - 1)
        examples.append((np.ascontiguousarray(vocab[idx]), int(rng.integers(n_labels)),
                         int(rng.integers(n_labels))))
    return examples


def bench(n_examples, n_labels):
    stream = make_stream(n_examples, n_labels)
    py_stream = [(k.tolist(), g, p) for k, g, p in stream]
    table, ref = WeightTable(), DictAveraged()

    t0 = time.perf_counter()
    for step, (keys, gold, pred) in enumerate(stream, 1):
        table.update(keys, gold, 1.0, step)
        table.update(keys, pred, -1.0, step)
    fast_update = time.perf_counter() - t0
    t0 = time.perf_counter()
    for step, (keys, gold, pred) in enumerate(py_stream, 1):
        ref.update(keys, gold, 1.0, step)
        ref.update(keys, pred, -1.0, step)
    slow_update = time.perf_counter() - t0

    t0 = time.perf_counter()
    for keys, _, _ in stream:
        table.score(keys, n_classes=n_labels)
    fast_score = time.perf_counter() - t0
    t0 = time.perf_counter()
    for keys, _, _ in py_stream:
        ref.score(keys, n_labels)
    slow_score = time.perf_counter() - t0

    # the same model on both sides
    keys, _, _ = stream[-1]
    assert np.allclose(table.score(keys, n_classes=n_labels), ref.score(keys.tolist(), n_labels))

    # the batch entry points: one call for the whole stream, as the
    # learners use the core
    all_keys = np.concatenate([k for k, _, _ in stream for _ in (0, 1)])
    offsets = np.zeros(2 * n_examples + 1, dtype=np.int64)
    np.cumsum([len(k) for k, _, _ in stream for _ in (0, 1)], out=offsets[1:])
    labels = np.array([x for _, g, p in stream for x in (g, p)], dtype=np.int32)
    deltas = np.tile([1.0, -1.0], n_examples)
    steps = np.repeat(np.arange(1, n_examples + 1, dtype=np.int64), 2)
    batch_table = WeightTable()
    t0 = time.perf_counter()
    batch_table.update_batch(all_keys, offsets, labels, deltas, steps)
    batch_update = time.perf_counter() - t0
    score_keys = np.concatenate([k for k, _, _ in stream])
    score_offsets = np.zeros(n_examples + 1, dtype=np.int64)
    np.cumsum([len(k) for k, _, _ in stream], out=score_offsets[1:])
    t0 = time.perf_counter()
    rows = batch_table.score_batch(score_keys, score_offsets, n_classes=n_labels)
    batch_score = time.perf_counter() - t0
    assert np.allclose(rows[-1], ref.score(keys.tolist(), n_labels))
    n_updates = 2 * n_examples
    return {
        "batch_updates_per_s": n_updates / batch_update,
        "batch_scores_per_s": n_examples / batch_score,
        "labels": n_labels,
        "fast_updates_per_s": n_updates / fast_update,
        "slow_updates_per_s": n_updates / slow_update,
        "fast_scores_per_s": n_examples / fast_score,
        "slow_scores_per_s": n_examples / slow_score,
    }


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_for_one_million(n_labels=17):
    """Build 1,000,000 (feature, label) weights: 250,000 features touching
    4 labels each; report the table's bytes and the process RSS growth."""
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 2**63, size=250_000, dtype=np.uint64)
    gc.collect()
    before = rss_mb()
    table = WeightTable()
    step = 1
    for label in range(4):
        for chunk in np.array_split(keys, 50):
            table.update(np.ascontiguousarray(chunk), (label * 5) % n_labels, 1.0, step)
            step += 1
    after = rss_mb()
    frozen = table.averaged()
    return {"weights": table.n_weights, "train_bytes": table.nbytes,
            "train_bytes_per_weight": table.nbytes / table.n_weights,
            "rss_growth_mb": after - before,
            "averaged_bytes_per_weight": frozen.nbytes / frozen.n_weights}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20_000)
    args = parser.parse_args()
    print(f"# bench_core: {args.examples} examples, 20-40 active features each (pid {os.getpid()})\n")
    print("| labels | entry point | fasttag updates/s | dict updates/s | ratio "
          "| fasttag scores/s | dict scores/s | ratio |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n_labels in (17, 400):
        r = bench(args.examples, n_labels)
        for name, up, sc in (("one call per example", r["fast_updates_per_s"], r["fast_scores_per_s"]),
                             ("batch (update_batch / score_batch)", r["batch_updates_per_s"],
                              r["batch_scores_per_s"])):
            print(f"| {n_labels} | {name} | {up:,.0f} | {r['slow_updates_per_s']:,.0f} | "
                  f"{up / r['slow_updates_per_s']:.0f}x | {sc:,.0f} | "
                  f"{r['slow_scores_per_s']:,.0f} | {sc / r['slow_scores_per_s']:.0f}x |")
    m = memory_for_one_million()
    print(f"\nOne million stored weights: training table {m['train_bytes'] / 2**20:.1f} MiB "
          f"({m['train_bytes_per_weight']:.1f} bytes per weight; process RSS grew {m['rss_growth_mb']:.1f} MiB), "
          f"averaged table {m['averaged_bytes_per_weight']:.1f} bytes per weight.")


if __name__ == "__main__":
    main()
