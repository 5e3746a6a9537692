"""Tagging on many threads: throughput per thread count, where the serial
time goes, and the commands' peak memory on small and large inputs.

    python benchmarks/bench_parallel_tagging.py [--threads 1,2] [--reps 5] [--data ../shared/data]
        [--split] [--rss]

Throughput (end to end from token lists or lines, feature extraction
included): POS tagging with the bundled ``en`` model on UD English EWT
test repeated 8 times, span tagging with ``en-ner`` on CoNLL-2003 testb
repeated 4 times, segmentation with ``zh`` on the SIGHAN 2005 PKU test
input repeated 8 times.  Thread counts alternate within each repetition
(one process, one warm model per task), and the best and the median of
``--reps`` runs are printed, with the speedup over the first thread count.

``--split``: one thread's time per step of the POS prediction path, and
whether the step holds the GIL (the serial share that bounds the speedup).
``--rss``: peak resident memory of ``fasttag tag`` (pretokenized and raw
text), ``fasttag ner --json`` and ``fasttag segment`` on an input of
several batches (about 1 MB) and on 10 times that input, each run in its
own process.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import fasttag  # noqa: E402
from fasttag.text import formats as ftio


def workloads(data):
    """(name, unit, units, call(n_threads)) per task."""
    data = Path(data)
    pos = fasttag.load("en")
    ewt = [s.words for s in ftio.read(data / "en_ewt" / "en_ewt-ud-test.conllu")] * 8
    ner = fasttag.load("en-ner")
    testb = [s.words for s in ftio.read(data / "conll2003" / "eng.testb", format="conll") if s.words] * 4
    seg = fasttag.load("zh")
    pku = (data / "sighan2005" / "pku_test.utf8").read_text(encoding="utf-8").splitlines() * 8
    return [("pos en, EWT test x8", "tokens", sum(map(len, ewt)), lambda n: pos.tag_sents(ewt, n_threads=n)),
            ("ner en-ner, CoNLL-2003 testb x4", "tokens", sum(map(len, testb)),
             lambda n: ner.tag_sents(testb, n_threads=n)),
            ("seg zh, PKU test x8", "chars", sum(map(len, pku)),
             lambda n: list(seg.segment_lines(pku, n_threads=n)))]


def throughput(data, threads, reps):
    for name, unit, units, call in workloads(data):
        call(threads[0])                                   # warm: word-type cache, first allocations
        seconds = {n: [] for n in threads}
        for _ in range(reps):
            for n in threads:
                t0 = time.perf_counter()
                call(n)
                seconds[n].append(time.perf_counter() - t0)
        base = min(seconds[threads[0]])
        for n in threads:
            best, median = min(seconds[n]), statistics.median(seconds[n])
            print(f"{name:34s} threads {n:2d}: best {units / best / 1e6:.3f}M {unit}/s, median "
                  f"{units / median / 1e6:.3f}M, speedup {base / best:.2f}x", flush=True)


def split(data):
    """One thread's seconds per step of SequenceModel._featurize_split and
    the decoder, on EWT test x8 (the POS path)."""
    from fasttag.model.sequence import BATCH_TOKENS, _chunks
    tagger = fasttag.load("en")
    m = tagger.model
    sents = [s.words for s in ftio.read(Path(data) / "en_ewt" / "en_ewt-ud-test.conllu")] * 8
    tagger.tag_sents(sents)
    steps = {}

    def step(name, gil, fn, *args, **kw):
        t0 = time.perf_counter()
        out = fn(*args, **kw)
        key = (name, gil)
        steps[key] = steps.get(key, 0.0) + time.perf_counter() - t0
        return out
    type_templates, context_templates = m._split
    names = np.array(m.tags, dtype=object)
    t_all = time.perf_counter()
    from fasttag.features.words import token_lists
    sents = step("token_lists (caller)", "GIL", token_lists, sents)
    examples = step("examples, chunks (caller)", "GIL", lambda: list(_chunks([(s, None) for s in sents],
                                                                               BATCH_TOKENS)))
    for chunk in examples:
        bounds, tokens, columns = step("_flatten", "GIL", m._flatten, chunk)
        ids, rows = step("featurizer.lookup (dict per token)", "GIL", m.featurizer.lookup, tokens)
        attrs = step("attribute rows gather", "numpy", m.featurizer.attributes, tokens, columns, ids=ids,
                     rows=rows)
        unique, index = step("np.unique", "numpy", np.unique, ids, return_inverse=True)
        type_keys = step("type template keys", "nogil", type_templates.keys, m.featurizer.type_rows(unique, rows),
                         np.array([0, len(unique)], dtype=np.int64))
        F = type_keys.shape[1]
        offsets = np.arange(0, len(unique) * F + 1, F, dtype=np.int64)
        base = step("score_batch per type", "nogil", m.emit.score_batch, type_keys.ravel(), offsets,
                    n_classes=len(m.tags))
        keys = step("context template keys", "nogil", context_templates.keys, attrs, bounds)
        cands = m._candidates(m._token_classes(tokens))
        out = step("Search.decode", "nogil", lambda: m.search(m.emit, m.trans, cands).decode(
            keys, bounds, base=base, base_index=index.astype(np.int64)))
        def per_sentence(flat, b):
            return [flat[i:j] for i, j in zip(b[:-1], b[1:])]
        step("tag names per sentence", "GIL", lambda: per_sentence(names[out].tolist(), bounds.tolist()))
    total = time.perf_counter() - t_all
    print(f"POS path, one thread, {sum(map(len, sents)):,} tokens: {total:.3f} s")
    for (name, gil), s in sorted(steps.items(), key=lambda kv: -kv[1]):
        print(f"  {name:38s} {gil:6s} {1000 * s:8.1f} ms  {100 * s / total:5.1f}%")
    held = sum(s for (_, gil), s in steps.items() if gil == "GIL")
    print(f"  holding the GIL: {100 * held / total:.1f}% (numpy steps release it for their loops)")


def peak_rss(data):
    """Peak RSS of the commands on an input and on 10 times that input."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    words = [line[9:].strip() for line in open(Path(data) / "en_ewt" / "en_ewt-ud-train.conllu", encoding="utf-8")
             if line.startswith("# text = ")]
    en = "\n".join(" ".join(w.split()) for w in words[:4000]) + "\n"
    zh = (Path(data) / "sighan2005" / "pku_test.utf8").read_text(encoding="utf-8")
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    with tempfile.TemporaryDirectory() as tmp:
        for label, args, text in (("tag --pretokenized", ["tag", "--pretokenized"], en),
                                  ("tag (raw text)", ["tag"], en), ("ner --json", ["ner", "--json"], en),
                                  ("segment", ["segment"], zh)):
            for threads in ("1", "2"):
                for times in (3, 30):
                    path = os.path.join(tmp, "in.txt")
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(text * times)
                    out = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "fasttag", *args,
                                          path, "-o", os.path.join(tmp, "out.txt"), "--threads", threads],
                                         capture_output=True, env=env, check=True)
                    print(f"fasttag {label} --threads {threads}: {len(text.encode()) * times / 1e6:6.1f} MB in, "
                          f"peak RSS {int(out.stdout) / 1024:6.1f} MB", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--split", action="store_true", help="the POS path's time per step (one thread)")
    ap.add_argument("--rss", action="store_true", help="the commands' peak memory, small and large input")
    args = ap.parse_args()
    if args.split:
        split(args.data)
    elif args.rss:
        peak_rss(args.data)
    else:
        throughput(args.data, [int(n) for n in args.threads.split(",")], args.reps)


if __name__ == "__main__":
    main()
