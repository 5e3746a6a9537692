"""The dependency parser alone, on gold tokens and gold tags: trained on a
treebank's training file (with its dev file where it has one besides),
scored on its test file by the CoNLL 2018 definitions (UAS, LAS, MLAS,
BLEX), parsing speed in words per CPU second (best of 3, the model loaded,
reading and scoring excluded), training CPU seconds and model size.

    python benchmarks/bench_parser.py [--treebanks pt,fi,tr,ja,en]

The treebanks are those of ``udpipe_cache.py`` (dev is the training file
for Portuguese, Finnish and Japanese, so they train without dev data).
"""
from __future__ import annotations

import argparse
import io
import sys
import time

try:  # imported as benchmarks.bench_parser
    from . import udpipe_cache as UC
except ImportError:  # run from the benchmarks/ folder
    import udpipe_cache as UC

import fasttag
from fasttag.tasks.dep import DependencyParser
from fasttag.text.conllu import read_document


def dev_file(tb):
    """The treebank's dev file where it is not the training file, else None."""
    dev = tb.test.with_name(tb.test.name.replace("-test.", "-dev."))
    return dev if dev.exists() and dev != tb.train else None


def measure(tb) -> dict:
    dev = dev_file(tb)
    t0 = time.process_time()
    parser = DependencyParser.train(str(tb.train), dev=None if dev is None else str(dev), verbose=False)
    train_cpu = time.process_time() - t0
    data = parser.to_bytes()
    parser = fasttag.loads(data)
    result = parser.evaluate(str(tb.test))
    doc = read_document(str(tb.test))
    words = [[w.form for w in s.words] for s in doc.sentences]
    columns = {c: [[getattr(w, c) for w in s.words] for s in doc.sentences] for c in parser.reads}
    times = []
    for _ in range(3):
        t0 = time.process_time()
        parser.parse(words, columns)
        times.append(time.process_time() - t0)
    n = sum(len(s) for s in words)
    return {"treebank": tb.key, **{m: 100 * result[m]["f1"] for m in ("UAS", "LAS", "MLAS", "BLEX")},
            "words/CPU s": n / min(times), "train CPU s": train_cpu, "model MB": len(data) / 1e6,
            "prune": parser.meta["prune"], "labels": len(parser.labels)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--treebanks", default="pt,fi,tr,ja", help="comma-separated keys (pt, fi, tr, ja, en)")
    args = ap.parse_args(argv)
    known = UC.treebanks()
    keys = args.treebanks.split(",")
    unknown = [k for k in keys if k not in known]
    if unknown:
        ap.error(f"--treebanks: unknown {unknown[0]!r} (known: {', '.join(known)})")
    rows = []
    for key in keys:
        tb = known[key]
        if not (tb.train.exists() and tb.test.exists()):
            print(f"skipping {key}: {tb.train} or {tb.test} is missing", file=sys.stderr)
            continue
        rows.append(measure(tb))
    out = io.StringIO()
    cols = list(rows[0]) if rows else []
    out.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
    for r in rows:
        out.write("| " + " | ".join(f"{v:,.2f}" if isinstance(v, float) and c not in ("words/CPU s",)
                                     else f"{v:,.0f}" if c == "words/CPU s" else str(v)
                                     for c, v in r.items()) + " |\n")
    print(out.getvalue(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
