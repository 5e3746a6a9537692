"""Chunking and named entities: fasttag against python-crfsuite and NLTK,
side by side, in one run.

    python benchmarks/bench_chunk_ner.py [--quick] [--task chunk|ner|both]

* CoNLL-2000 chunking: train on ``conll2000/train.txt``, test on
  ``test.txt`` (no development set: every system trains a fixed number of
  epochs).
* CoNLL-2003 NER: train on ``conll2003/eng.train``; fasttag keeps its best
  epoch on ``eng.testa``; test on ``eng.testb``.

Systems: fasttag's structured perceptron and k-best MIRA (k = 1 and k = 3),
python-crfsuite ('lbfgs' CRF and 'ap' averaged perceptron) with the
standard feature set of ``anchors.span_features`` over the same columns
(word, POS, chunk), and NLTK's PerceptronTagger used as a greedy
chunker/tagger on words only.  Scores are conlleval's span F1, computed by
the harness on IOB2 (IOB1 files converted first) for every system alike.

Every system runs in its own fresh process (``harness.run_isolated``), so
its peak memory is its own.  Times are CPU seconds; tagging speed is tokens
per CPU second from token rows already in memory to tags (feature
extraction, document features and decoding included; file reading
excluded, for every system).  ``--quick`` skips the 'lbfgs' CRF (the
slowest anchor).  Needs ``../shared/data`` (relative to the repository
root).
"""
import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness as H  # noqa: E402
import anchors  # noqa: E402


def fasttag_spans(task, train_path, dev_path, test_path, epochs=None, algorithm="perceptron",
                  k=1, C=None, seed=0):
    """Train fasttag's SpanTagger (best epoch on ``dev_path`` when given),
    save and load it as a user would, and tag the test rows."""
    from fasttag.text import formats as ftio
    from fasttag import load
    from fasttag import SpanTagger

    train = list(ftio.read_conll(train_path))
    dev = list(ftio.read_conll(dev_path)) if dev_path else None
    test = list(ftio.read_conll(test_path))
    with tempfile.TemporaryDirectory(prefix="bench_fasttag_") as tmp:
        with H.timer() as train_t:
            tagger = SpanTagger.train(train, dev=dev, task=task, epochs=epochs, seed=seed,
                                      algorithm=algorithm, k=k, C=C, verbose=False,
                                      **(H.NER_COLUMN_OPTIONS if task == "ner" else {}))
        info = tagger.model.training_info
        path = os.path.join(tmp, "model.ftm")
        tagger.save(path)
        size = os.path.getsize(path)
        del tagger
        with H.timer() as load_t:
            tagger = load(path)
        with H.timer() as tag_t:
            pred = tagger.tag_sents(test)
    gold = [H.iob1_to_iob2(s.tags) for s in test]
    pred = [H.iob1_to_iob2(p) for p in pred]
    name = "fasttag perceptron" if algorithm == "perceptron" else f"fasttag MIRA (k={k})"
    n = sum(len(s.words) for s in test)
    return H.make_result(name, train=train_t, load=load_t, tag=tag_t, n_items=n, model_bytes=size,
                         epochs=info["epochs"], best_epoch=info["best_epoch"],
                         **H.conll_f1(gold, pred))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="skip python-crfsuite's lbfgs CRF")
    ap.add_argument("--task", choices=("chunk", "ner", "both"), default="both")
    ap.add_argument("--no-mira3", action="store_true", help="skip fasttag MIRA with k=3")
    args = ap.parse_args()
    try:
        corpora = {}
        if args.task in ("chunk", "both"):
            corpora["chunk"] = (H.data_path("conll2000", "train.txt"), None,
                                H.data_path("conll2000", "test.txt"))
        if args.task in ("ner", "both"):
            corpora["ner"] = (H.data_path("conll2003", "eng.train"), H.data_path("conll2003", "eng.testa"),
                              H.data_path("conll2003", "eng.testb"))
    except SystemExit as exc:        # the shared corpora are absent
        print(f"skipped: {exc}")
        return 0

    tables = {}
    results = {}
    for task, (train_path, dev_path, test_path) in corpora.items():
        title = "CoNLL-2000 chunking (train -> test)" if task == "chunk" else \
            "CoNLL-2003 NER (train, dev = testa, test = testb)"
        print(f"{title}", flush=True)
        train_rows = H.load_columns_all(train_path)
        test_rows = H.load_columns_all(test_path)
        paths = (task, str(train_path), str(dev_path) if dev_path else None, str(test_path))
        jobs = [H.Job("fasttag perceptron", fasttag_spans, paths, {}),
                H.Job("fasttag MIRA k=1", fasttag_spans, paths, {"algorithm": "mira", "k": 1})]
        if not args.no_mira3:
            jobs.append(H.Job("fasttag MIRA k=3", fasttag_spans, paths, {"algorithm": "mira", "k": 3}))
        if not args.quick:
            jobs.append(H.Job("python-crfsuite lbfgs", anchors.crfsuite_spans, (train_rows, test_rows),
                              {"algorithm": "lbfgs"}))
        jobs.append(H.Job("python-crfsuite ap", anchors.crfsuite_spans, (train_rows, test_rows),
                          {"algorithm": "ap"}))
        jobs.append(H.Job("nltk PerceptronTagger", anchors.nltk_spans, (train_rows, test_rows), {}))
        rows, failures = H.run_jobs(jobs)
        for label, tb in failures:
            print(f"FAILED {label}:\n{tb}")
        results[task] = rows
        tables[task] = (title, _table(task, rows))

    print()
    for task, (title, table) in tables.items():
        print(f"### {title}")
        print()
        print(table)
        print()
        _verdicts(task, results[task])
        print()
    return 0


def _table(task, rows):
    by = {r["label"]: r for r in rows}
    base = by.get("python-crfsuite lbfgs") or by.get("python-crfsuite ap")

    def speedup_train(r):
        return H.ratio(base and base.get("train_cpu_s"), r.get("train_cpu_s")) if base else "n/a"

    def speedup_tag(r):
        return H.ratio(r.get("tag_tokens_per_cpu_s"), base and base.get("tag_tokens_per_cpu_s")) \
            if base else "n/a"

    columns = [
        ("system", "system"),
        ("epochs", "epochs", H.plain),
        ("precision", "P", H.pct), ("recall", "R", H.pct), ("f1", "F1", H.pct),
    ]
    if task == "ner":
        for t in ("PER", "LOC", "ORG", "MISC"):
            columns.append((lambda r, t=t: r.get("per_type", {}).get(t), f"{t} F1", H.pct))
    else:
        for t in ("NP", "VP", "PP"):
            columns.append((lambda r, t=t: r.get("per_type", {}).get(t), f"{t} F1", H.pct))
    base_name = base["label"] if base else "crfsuite"
    columns += [
        ("train_cpu_s", "train CPU s", H.seconds),
        (speedup_train, f"train speed vs {base_name}"),
        ("tag_tokens_per_cpu_s", "tokens/s", H.whole),
        (speedup_tag, f"tag speed vs {base_name}"),
        ("peak_rss_mb", "peak RSS MB", H.whole),
        ("model_bytes", "model MB", H.mb),
    ]
    return H.format_table(rows, columns)


def _verdicts(task, rows):
    by = {r["label"]: r for r in rows}
    ft = by.get("fasttag perceptron")
    if not ft:
        return
    target = 0.943 if task == "chunk" else 0.860
    lines = [f"fasttag perceptron F1 {H.pct(ft['f1'])} (target >= {H.pct(target)}; "
             f"best epoch {ft.get('best_epoch')} of {ft.get('epochs')})"]
    for label in ("fasttag MIRA k=1", "fasttag MIRA k=3"):
        m = by.get(label)
        if m:
            lines.append(f"{label} F1 {H.pct(m['f1'])} ({100 * (m['f1'] - ft['f1']):+.2f} vs the "
                         f"perceptron; target >= -0.30)")
    for label in ("python-crfsuite lbfgs", "python-crfsuite ap", "nltk PerceptronTagger"):
        o = by.get(label)
        if o:
            lines.append(f"vs {label}: F1 {100 * (ft['f1'] - o['f1']):+.2f}, training "
                         f"{H.ratio(o.get('train_cpu_s'), ft.get('train_cpu_s'))} faster, tagging "
                         f"{H.ratio(ft.get('tag_tokens_per_cpu_s'), o.get('tag_tokens_per_cpu_s'))} faster")
    for line in lines:
        print(f"- {line}")


if __name__ == "__main__":
    sys.exit(main())
