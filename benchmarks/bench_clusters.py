"""Brown clusters from unlabeled text: accuracy with and without them.

    python benchmarks/bench_clusters.py [--clusters FILE] [--n-clusters 1000] [--tasks pos,chunk,ner]
        [--options JSON] [--chunk-holdout N]

Clusters are learned (``fasttag.features.clusters.cluster``, the same as ``fasttag
cluster``) from ``unlabeled_en`` (ABC, State of the Union, web text;
tokenized by the bundled English tokenizer) plus the words of the Brown
corpus (its tags unused), unless ``--clusters`` names a clusters file made
before.  Then each task trains as its benchmark does (same corpora,
epochs, seed 0), once without and once with ``clusters=``, each in its
own process:

* pos: EWT UPOS, train -> test, best of 10 epochs on dev (bench_pos.py);
* chunk: CoNLL-2000, train -> test, 8 epochs, no dev (bench_chunk_ner.py);
* ner: CoNLL-2003, train, best of 15 epochs on testa, test on testb (the
  defaults: 3-best MIRA, document features and ambiguity classes).

``--options`` passes further training options to every task (for
example ``'{"algorithm": "mira", "k": 3}'``, ``'{"ensemble": 4}'`` or
``'{"seed": 1}'``).  ``--chunk-holdout N``
chooses on a development set for chunking, which has none: the last N
training sentences are held out and the chunker trains on the rest (the
test score is then that of the smaller training set).  The "dev" column
is the best development score over the epochs (testa for NER).

Prints the clustering time and tokens, and the table.  Needs
``../shared/data``.
"""
import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness as H  # noqa: E402

UNLABELED = ("abc.txt", "state_union.txt", "webtext.txt")


def _text_lines(path):
    """Lines of a raw text file: UTF-8, or Latin-1 for a file that is not
    (ABC and State of the Union have a few Windows-1252 bytes), as
    ``fasttag tokenize --encoding latin-1`` reads it."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    lines = text.split("\n")          # only at line feeds, as fasttag reads lines
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def clustering_sentences():
    """Token lists of unlabeled_en (tokenized) and of Brown (its words)."""
    from fasttag.tasks.base import tokenizer_of
    from fasttag.text import rawtext
    sents = []
    tokenizer = tokenizer_of(None)
    for name in UNLABELED:
        sents += [s.words for s in rawtext.raw_sentences(_text_lines(H.data_path("unlabeled_en", name)),
                                                         tokenizer)]
    sents += [words for words, _ in H.load_columns(H.data_path("brown", "brown.conll"), 0, -1)]
    return sents


def make_clusters(path, n_clusters):
    from fasttag.features.clusters import cluster
    t0 = time.process_time()
    sents = clustering_sentences()
    t_read = time.process_time() - t0
    n_tokens = sum(map(len, sents))
    t0, w0 = time.process_time(), time.perf_counter()
    clusters = cluster(sents, n_clusters=n_clusters)
    t_cluster, w_cluster = time.process_time() - t0, time.perf_counter() - w0
    clusters.save(path)
    return {"tokens": n_tokens, "words": len(clusters), "read_cpu_s": t_read,
            "cluster_cpu_s": t_cluster, "cluster_wall_s": w_cluster}


def pos(clusters=None, options=None):
    from fasttag import Tagger
    d = ("en_ewt",)
    train = H.load_conllu(H.data_path(*d, "en_ewt-ud-train.conllu"))
    dev = H.load_conllu(H.data_path(*d, "en_ewt-ud-dev.conllu"))
    test = H.load_conllu(H.data_path(*d, "en_ewt-ud-test.conllu"))
    with H.timer() as t_train:
        tagger = Tagger.train(train, dev=dev, epochs=10, verbose=False, clusters=clusters,
                              **{"seed": 0, **(options or {})})
    with H.timer() as t_tag:
        pred = tagger.tag_sents([w for w, _ in test])
    return H.make_result("pos", train=t_train, tag=t_tag, n_items=sum(len(w) for w, _ in test),
                         model_bytes=len(tagger.to_bytes()), epochs=10,
                         best_epoch=tagger.model.training_info.get("best_epoch"),
                         dev=tagger.model.training_info.get("dev_score"),
                         score=H.tagging_metrics(test, pred, H.vocabulary(train))["accuracy"],
                         **H.tagging_metrics(test, pred, H.vocabulary(train)))


def spans(task, clusters=None, options=None, holdout=0):
    from fasttag import SpanTagger, load
    from fasttag.text import formats as ftio
    if task == "chunk":
        train_path, dev_path, test_path = (H.data_path("conll2000", "train.txt"), None,
                                           H.data_path("conll2000", "test.txt"))
    else:
        train_path, dev_path, test_path = (H.data_path("conll2003", "eng.train"),
                                           H.data_path("conll2003", "eng.testa"),
                                           H.data_path("conll2003", "eng.testb"))
    train = list(ftio.read_conll(train_path))
    dev = list(ftio.read_conll(dev_path)) if dev_path else None
    if dev is None and holdout:
        train, dev = train[:-holdout], train[-holdout:]
    test = list(ftio.read_conll(test_path))
    with tempfile.TemporaryDirectory(prefix="bench_clusters_") as tmp:
        with H.timer() as t_train:
            tagger = SpanTagger.train(train, dev=dev, task=task, verbose=False, clusters=clusters,
                                      **{"seed": 0, **(H.NER_COLUMN_OPTIONS if task == "ner" else {}),
                                         **(options or {})})
        path = os.path.join(tmp, "model.ftm")
        tagger.save(path)
        size = os.path.getsize(path)
        info = tagger.model.training_info
        tagger = load(path)
        with H.timer() as t_tag:
            pred = tagger.tag_sents(test)
    gold = [H.iob1_to_iob2(s.tags) for s in test]
    pred = [H.iob1_to_iob2(p) for p in pred]
    f1 = H.conll_f1(gold, pred)
    return H.make_result(task, train=t_train, tag=t_tag, n_items=sum(len(s.words) for s in test),
                         model_bytes=size, epochs=info["epochs"], best_epoch=info["best_epoch"],
                         dev=info.get("dev_score"),            # the kept model's (an ensemble's: its mean's)
                         score=f1["f1"], **f1)


TASKS = {"pos": (pos, (), "EWT UPOS accuracy (test)", 0.955),
         "chunk": (spans, ("chunk",), "CoNLL-2000 chunking F1 (test)", 0.947),
         "ner": (spans, ("ner",), "CoNLL-2003 NER F1 (testb)", 0.875)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clusters", help="a clusters file to use instead of learning them")
    ap.add_argument("--n-clusters", type=int, default=1000)
    ap.add_argument("--tasks", default="pos,chunk,ner")
    ap.add_argument("--with-only", action="store_true", help="skip the runs without clusters")
    ap.add_argument("--options", type=json.loads, default={},
                    help="further training options of every task, as a JSON object")
    ap.add_argument("--chunk-holdout", type=int, default=0, metavar="N",
                    help="chunking: hold out the last N training sentences as the development set")
    args = ap.parse_args()
    try:
        H.data_path("unlabeled_en")
    except SystemExit as exc:
        print(f"skipped: {exc}")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench_clusters_") as tmp:
        path = args.clusters
        if path is None:
            path = os.path.join(tmp, "clusters.txt")
            info = H.run_isolated(make_clusters, path, args.n_clusters)
            print(f"clustered {info['tokens']:,} tokens ({info['words']:,} words of count >= 2) into "
                  f"{args.n_clusters} clusters: {info['cluster_cpu_s']:.0f} CPU s "
                  f"({info['cluster_wall_s']:.0f} s wall), reading and tokenizing "
                  f"{info['read_cpu_s']:.0f} CPU s", flush=True)
        rows = []
        for task in args.tasks.split(","):
            fn, extra, title, target = TASKS[task]
            more = {"options": args.options, "holdout": args.chunk_holdout} if fn is spans \
                else {"options": args.options}
            jobs = [] if args.with_only else [H.Job(f"{task} without", fn, extra, more)]
            jobs.append(H.Job(f"{task} with clusters", fn, extra, {"clusters": path, **more}))
            done, failures = H.run_jobs(jobs)
            for label, tb in failures:
                print(f"FAILED {label}:\n{tb}")
            for r in done:
                r["title"], r["target"] = title, target
            rows += done
    print()
    columns = [("title", "task"), ("label", "run"), ("dev", "dev %", H.pct), ("score", "score %", H.pct),
               ("target", "target %", H.pct), ("best_epoch", "best epoch"),
               ("train_cpu_s", "train CPU s", "{:.0f}"),
               ("tag_tokens_per_cpu_s", "tag tokens/CPU s", "{:,.0f}"), ("model_bytes", "model MB", H.mb)]
    print(H.format_table(rows, columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
