"""Scale: single-core tagging and training rates of every task side by side
with NLTK, python-crfsuite and jieba, tagging at several thread counts,
Dask training and streaming memory, in one run.

    python benchmarks/bench_scale.py [--tasks pos,chunk,ner,seg] [--threads 1,2]
                                     [--reps 3] [--repeat 4] [--epochs 5]
                                     [--no-anchors] [--train-threads] [--dask [pos,seg,ner]]
                                     [--stream-mb 1024]

Every row is measured the same way, whatever the system: in its own fresh
process (``harness.run_isolated``: its peak memory is its own), the model
trained or loaded first, then one untimed warm-up pass over the test data,
then ``--reps`` timed passes over it; a rate is items per CPU second of
the median pass (single core) or per wall second (thread rows, where CPU
seconds add up over the threads).  The test data is the test set repeated
``--repeat`` times, for every row alike.  So the bundled models' rows are
comparable with the others (a model loaded from the package and one just
trained are measured in the same process layout, warmed up alike).

Data (../shared/data): POS on UD English EWT test (bundled ``en``; a
tagger trained ``--epochs`` epochs on EWT train; NLTK's PerceptronTagger
trained as benchmarks/bench_pos.py does; python-crfsuite 'ap' with
anchors.pos_features), chunking on CoNLL-2000 (fasttag trained as
benchmarks/bench_chunk_ner.py trains it, ``--epochs`` epochs; crfsuite
'ap' with anchors.span_features), NER on CoNLL-2003 testb (bundled
``en-ner``; fasttag trained with the NER defaults, document features
included; crfsuite 'ap'), segmentation on the SIGHAN 2005 PKU test
(bundled ``zh``; jieba with its default dictionary and HMM).

Thread rows need ``tag_sents(..., n_threads=N)`` in the installed fasttag
(``Segmenter.segment_lines(..., n_threads=N)``); without it they are
skipped with the reason printed.  ``bench_dask`` (``--dask``) and
``bench_streaming`` (``--stream-mb``) likewise skip, saying why, where the
installed fasttag or Dask lacks what they measure.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import anchors  # noqa: E402
import harness as H  # noqa: E402


# ---------------------------------------------------------------- measuring

def measure(tag, n_items, reps):
    """One untimed warm-up call of ``tag()``, then ``reps`` timed calls:
    (median CPU seconds, median wall seconds, output of the last call)."""
    out = tag()
    cpu, wall = [], []
    for _ in range(reps):
        with H.timer() as t:
            out = tag()
        cpu.append(t.cpu)
        wall.append(t.wall)
    return statistics.median(cpu), statistics.median(wall), out


def rate_fields(n_items, cpu, wall, unit="tokens"):
    return {"n_items": n_items, "unit": unit, "tag_cpu_s": cpu, "tag_wall_s": wall,
            "rate_cpu": n_items / cpu if cpu > 0 else None,
            "rate_wall": n_items / wall if wall > 0 else None}


def supports_threads(method):
    """Whether a tagging method takes ``n_threads`` (added by the
    multi-threaded tagging work; absent before it)."""
    try:
        return "n_threads" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


def thread_rates(method, data, n_items, reps, threads, run=None):
    """{N: items per wall second} of ``run(data, n_threads=N)`` (default:
    ``method``) for each N > 1, or {} with a note when ``method`` has no
    ``n_threads``."""
    out, note = {}, None
    counts = [n for n in threads if n > 1]
    if not counts:
        return out, note
    if not supports_threads(method):
        return out, (f"{getattr(method, '__qualname__', method)} takes no n_threads in this fasttag: "
                     "thread rows skipped")
    run = run or method
    for n in counts:
        _, wall, _ = measure(lambda: run(data, n_threads=n), n_items, reps)
        out[n] = n_items / wall if wall > 0 else None
    return out, note


def result(system, task, n_items, cpu, wall, unit="tokens", **extra):
    return {"system": system, "task": task, **rate_fields(n_items, cpu, wall, unit), **extra}


# ---------------------------------------------------------------- fasttag rows

def fasttag_tagger(task, test, reps, threads, model=None, train=None, epochs=5, train_opts=None):
    """A fasttag tagger (POS or spans): ``model`` (a bundled name or a
    path) loaded, or trained on ``train`` for ``epochs`` epochs; then
    ``tag_sents`` over ``test`` (token lists or Sentence objects)."""
    import fasttag

    train_cpu = None
    if model is not None:
        tagger = fasttag.load(model)
    else:
        cls = fasttag.Tagger if task == "pos" else fasttag.SpanTagger
        with H.timer() as t:
            tagger = cls.train(train, epochs=epochs, seed=0, verbose=False, **(train_opts or {}))
        train_cpu = t.cpu
    n = sum(len(s.words if hasattr(s, "words") else s) for s in test)
    cpu, wall, pred = measure(lambda: tagger.tag_sents(test), n, reps)
    by_threads, note = thread_rates(tagger.tag_sents, test, n, reps, threads)
    return result("fasttag", task, n, cpu, wall, train_cpu_s=train_cpu, epochs=None if model else epochs,
                  threads=by_threads, note=note, pred=pred)


def fasttag_segmenter(lines, reps, threads, model="zh"):
    import fasttag

    seg = fasttag.load(model)
    n = sum(len(line) for line in lines)

    def run(data, **kw):        # (segment_lines is lazy: consume it)
        return list(seg.segment_lines(data, **kw))
    cpu, wall, pred = measure(lambda: run(lines), n, reps)
    by_threads, note = thread_rates(seg.segment_lines, lines, n, reps, threads, run=run)
    return result("fasttag", "seg", n, cpu, wall, unit="chars", threads=by_threads, note=note, pred=pred)


# ---------------------------------------------------------------- anchors

def nltk_tagger(train, test, reps, epochs=5, seed=0):
    """NLTK's averaged perceptron, trained as benchmarks/anchors.nltk_pos
    trains it; tagging each sentence with ``tag``."""
    from nltk.tag.perceptron import PerceptronTagger

    random.seed(seed)
    with H.timer() as t:
        tagger = PerceptronTagger(load=False)
        tagger.train([list(zip(w, g)) for w, g in train], nr_iter=epochs)
    n = sum(len(w) for w in test)
    cpu, wall, pred = measure(lambda: [[t for _, t in tagger.tag(w)] for w in test], n, reps)
    return result("nltk PerceptronTagger", "pos", n, cpu, wall, train_cpu_s=t.cpu, epochs=epochs, pred=pred)


def crfsuite_tagger(task, train_x, train_y, test_x, reps, epochs=5):
    """python-crfsuite 'ap' with the anchors' feature functions
    (``pos_features`` on words, ``span_features`` on token rows)."""
    import pycrfsuite

    featurize = anchors.pos_features if task == "pos" else anchors.span_features
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        path = os.path.join(tmp, "model.crfsuite")
        with H.timer() as t:
            trainer = pycrfsuite.Trainer(algorithm="ap", params={"max_iterations": epochs}, verbose=False)
            for x, y in zip(train_x, train_y):
                trainer.append(featurize(x), y)
            trainer.train(path)
        del trainer
        tagger = pycrfsuite.Tagger()
        tagger.open(path)
        n = sum(len(x) for x in test_x)
        cpu, wall, pred = measure(lambda: [tagger.tag(featurize(x)) for x in test_x], n, reps)
        tagger.close()
    return result("python-crfsuite (ap)", task, n, cpu, wall, train_cpu_s=t.cpu, epochs=epochs, pred=pred)


def jieba_segmenter(lines, reps):
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    n = sum(len(line) for line in lines)
    cpu, wall, pred = measure(lambda: [jieba.lcut(line, HMM=True) for line in lines], n, reps)
    return result("jieba (default dict, HMM)", "seg", n, cpu, wall, unit="chars", pred=pred)


# ---------------------------------------------------------------- training on threads

def fasttag_training(task, train_path, test, epochs, n_threads):
    """Train ``task`` (``pos`` on EWT, ``seg`` on PD 1998) on ``n_threads``
    threads (iterative parameter mixing): wall seconds per epoch (the
    median epoch of the model's history: reading and featurizing left
    out), CPU seconds per epoch of the whole call, and the test score
    (EWT accuracy, PKU F1)."""
    import fasttag

    cls = fasttag.Tagger if task == "pos" else fasttag.Segmenter
    with H.timer() as t:
        model = cls.train(str(train_path), epochs=epochs, seed=0, verbose=False, threads=n_threads)
    if task == "pos":
        score = H.tagging_metrics(test, model.tag_sents([w for w, _ in test]))["accuracy"]
    else:
        lines, gold = test
        score = H.score_seg(gold, [" ".join(words) for words in model.segment_lines(lines)])["f1"]
    epoch_wall = statistics.median(h["seconds"] for h in model.meta["history"])
    return {"threads": n_threads, "wall_per_epoch": epoch_wall, "cpu_per_epoch": t.cpu / epochs,
            "score": score}


def bench_training_threads(task, train_path, test, epochs, threads):
    """One row per thread count, each in its own process; speedups are of
    wall time per epoch against one thread."""
    jobs = [H.Job(f"fasttag {task}, {n} thread{'s' if n > 1 else ''}", fasttag_training,
                  (task, train_path, test, epochs, n)) for n in threads]
    rows, failures = H.run_jobs(jobs, verbose=False)
    one = next((r for r in rows if r["threads"] == 1), None)
    for r in rows:
        r["speedup"] = H.ratio(one["wall_per_epoch"], r["wall_per_epoch"]) if one else None
        r["gap"] = f"{100 * (r['score'] - one['score']):+.2f}" if one else None
    print(H.format_table(rows, [("label", "training"), ("wall_per_epoch", "wall s/epoch", "{:.2f}"),
                                ("cpu_per_epoch", "CPU s/epoch", "{:.2f}"), ("speedup", "speedup (wall)"),
                                ("score", "test acc/F1 %", H.pct), ("gap", "vs 1 thread"),
                                ("peak_rss_mb", "peak RSS MB", "{:.0f}")]))
    for label, tb in failures:
        print(f"- FAILED {label}: {tb.strip().splitlines()[-1] if tb else ''}")
    return rows


# ---------------------------------------------------------------- beyond one process

DASK_TASKS = {                 # task -> (model class, training options, training file, test file, score key)
    "pos": ("Tagger", {}, ("en_ewt", "en_ewt-ud-train.conllu"), ("en_ewt", "en_ewt-ud-test.conllu"), "accuracy"),
    "seg": ("Segmenter", {}, ("zh_pd1998", "train.txt"), ("sighan2005", "pku_test_gold.utf8"), "f1"),
    "ner": ("SpanTagger", {"task": "ner", **H.NER_COLUMN_OPTIONS}, ("conll2003", "eng.train"),
            ("conll2003", "eng.testb"), "f1"),
}


def bench_dask(tasks=("pos",), epochs=5, n_workers=2):
    """Distributed training on a ``LocalCluster`` of ``n_workers`` worker
    processes against single-process training, per task (``pos`` on EWT,
    ``seg`` on People's Daily scored on PKU test, ``ner`` on CoNLL-2003
    testb): score (the model's own ``evaluate``) and wall time.  Skips
    (printing why) without ``dask.distributed`` or without distributed
    training in the installed fasttag (``fasttag.distributed``)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("- Dask: skipped (dask.distributed is not installed: pip install 'fasttag-nlp[dask]')")
        return None
    import fasttag

    if importlib.util.find_spec("fasttag.distributed") is None:
        print("- Dask: skipped (this fasttag has no distributed training: no fasttag.distributed)")
        return None
    rows = []
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        for task in tasks:
            name, opts, train, test, key = DASK_TASKS[task]
            cls = getattr(fasttag, name)
            for setup, extra in (("single process", {}), (f"Dask LocalCluster, {n_workers} workers",
                                                          {"client": client})):
                with H.timer() as t:
                    model = cls.train(str(H.data_path(*train)), epochs=epochs, seed=0, verbose=False,
                                      **opts, **extra)
                rows.append({"task": task, "setup": setup, "wall": t.wall,
                             "score": model.evaluate(H.data_path(*test))[key]})
            rows[-1]["gap"] = f"{100 * (rows[-1]['score'] - rows[-2]['score']):+.2f}"
    print(H.format_table(rows, [("task", "task"), ("setup", "training"), ("wall", "wall s", "{:.1f}"),
                                ("score", "test acc/F1 %", H.pct), ("gap", "Dask vs one process")]))
    return rows


def _stream_once(command, path, out):
    subprocess.run(command + [str(path), "-o", str(out)], check=True, stdout=subprocess.DEVNULL)
    return {}


def bench_streaming(sentences, size_mb, threads=1):
    """Peak memory of ``fasttag tag --pretokenized --threads N`` over a
    file of ``size_mb`` MB (EWT test sentences repeated) and over one of a
    sixteenth of that size: streaming keeps the two close.  Skips (printing
    why) where the installed command has no ``--threads`` (the streaming
    CLI came with it)."""
    command = [sys.executable, "-m", "fasttag", "tag"]
    help_text = subprocess.run(command + ["--help"], capture_output=True, text=True).stdout
    if "--threads" not in help_text:
        print("- Streaming: skipped (this fasttag's 'tag' command has no --threads, the streaming CLI)")
        return None
    lines = [" ".join(words) + "\n" for words in sentences]
    block = "".join(lines).encode("utf-8")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_stream_") as tmp:
        for mb_size in (size_mb / 16, size_mb):
            path = Path(tmp) / "input.txt"
            target = int(mb_size * 1e6)
            with open(path, "wb") as f:
                written = 0
                while written < target:
                    f.write(block)
                    written += len(block)
            cmd = command + ["--pretokenized", "--threads", str(threads)]
            with H.timer() as t:
                res = H.run_isolated(_stream_once, cmd, path, Path(tmp) / "out.txt")
            rows.append({"input_mb": written / 1e6, "wall_s": t.wall, "mb_per_s": written / 1e6 / t.wall,
                         "peak_mb": res.get("peak_rss_children_mb")})
            path.unlink()
    print(H.format_table(rows, [("input_mb", "input MB", "{:.0f}"), ("wall_s", "wall s", "{:.1f}"),
                                ("mb_per_s", "MB/s", "{:.2f}"), ("peak_mb", "peak RSS MB", "{:.0f}")]))
    return rows


# ---------------------------------------------------------------- main

def load_data(tasks):
    data = {}
    if "pos" in tasks:
        d = ("en_ewt",)
        data["pos"] = (H.load_conllu(H.data_path(*d, "en_ewt-ud-train.conllu")),
                       H.load_conllu(H.data_path(*d, "en_ewt-ud-test.conllu")),
                       H.data_path(*d, "en_ewt-ud-train.conllu"))
    if "chunk" in tasks:
        data["chunk"] = (H.data_path("conll2000", "train.txt"), H.data_path("conll2000", "test.txt"))
    if "ner" in tasks:
        data["ner"] = (H.data_path("conll2003", "eng.train"), H.data_path("conll2003", "eng.testb"))
    if "seg" in tasks:
        data["seg"] = H.load_lines(H.data_path("sighan2005", "pku_test.utf8"))
    return data


def jobs_for(task, data, args, threads):
    from fasttag.text import formats as ftio

    reps, k, epochs = args.reps, args.repeat, args.epochs
    jobs = []
    if task == "pos":
        train, test, _ = data
        words = [w for w, _ in test] * k
        jobs.append(H.Job("fasttag bundled 'en'", fasttag_tagger, ("pos", words, reps, threads), {"model": "en"}))
        jobs.append(H.Job(f"fasttag trained ({epochs} epochs)", fasttag_tagger, ("pos", words, reps, threads),
                          {"train": train, "epochs": epochs}))
        if args.anchors:
            jobs.append(H.Job("nltk", nltk_tagger, (train, words, reps), {"epochs": epochs}))
            jobs.append(H.Job("crfsuite ap", crfsuite_tagger,
                              ("pos", [w for w, _ in train], [t for _, t in train], words, reps),
                              {"epochs": epochs}))
    elif task in ("chunk", "ner"):
        train_path, test_path = data
        test = list(ftio.read_conll(test_path)) * k
        train = list(ftio.read_conll(train_path))
        if task == "ner":
            jobs.append(H.Job("fasttag bundled 'en-ner'", fasttag_tagger,
                              (task, [s.words for s in test if s.words], reps, threads), {"model": "en-ner"}))
        jobs.append(H.Job(f"fasttag trained ({epochs} epochs)", fasttag_tagger, (task, test, reps, threads),
                          {"train": train, "epochs": epochs,
                           # the averaged perceptron, as crfsuite ap (NER defaults to 3-best MIRA)
                           "train_opts": {"task": task, "algorithm": "perceptron",
                                          **(H.NER_COLUMN_OPTIONS if task == "ner" else {})}}))
        if args.anchors:
            train_rows = H.rows_iob1_to_iob2(H.load_columns_all(train_path))
            test_rows = H.load_columns_all(test_path) * k
            jobs.append(H.Job("crfsuite ap", crfsuite_tagger,
                              (task, train_rows, [[r[-1] for r in s] for s in train_rows],
                               test_rows, reps), {"epochs": epochs}))
    elif task == "seg":
        lines = data * k
        jobs.append(H.Job("fasttag bundled 'zh'", fasttag_segmenter, (lines, reps, threads)))
        jobs.append(H.Job("jieba", jieba_segmenter, (lines, reps)))
    return jobs


ANCHOR_OF = {"pos": ("nltk", "crfsuite ap"), "chunk": ("crfsuite ap",), "ner": ("crfsuite ap",),
             "seg": ("jieba",)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default="pos,chunk,ner,seg")
    ap.add_argument("--threads", default="1,2", help="thread counts for the thread rows (e.g. 1,2,4,8,16)")
    ap.add_argument("--reps", type=int, default=3, help="timed passes per row after one warm-up (median)")
    ap.add_argument("--repeat", type=int, default=4, help="test set repeated this many times per pass")
    ap.add_argument("--epochs", type=int, default=5, help="training epochs of every trained row")
    ap.add_argument("--no-anchors", dest="anchors", action="store_false",
                    help="skip NLTK and python-crfsuite (jieba is kept: it does not train)")
    ap.add_argument("--train-threads", action="store_true",
                    help="also time training per epoch at each --threads count (EWT POS, PKU segmentation)")
    ap.add_argument("--dask", nargs="?", const="pos", default="",
                    help="also time Dask training on a LocalCluster for these tasks (pos,seg,ner; default pos)")
    ap.add_argument("--stream-mb", type=float, default=0,
                    help="also measure streaming peak memory over a file of this many MB (e.g. 1024)")
    args = ap.parse_args()
    tasks = [t for t in args.tasks.split(",") if t]
    threads = sorted({int(n) for n in args.threads.split(",") if n})
    print(f"# bench_scale: {' '.join(sys.argv[1:]) or '(defaults)'}")
    print(f"# every row: own process, 1 warm-up pass, median of {args.reps} passes over the test set "
          f"x{args.repeat}; single-core rates per CPU second, thread rates per wall second\n", flush=True)
    try:
        data = load_data(tasks)
    except SystemExit as exc:           # the shared corpora are absent
        print(f"skipped: {exc}")
        return 0
    all_rows = []
    for task in tasks:
        print(f"## {task}", flush=True)
        rows, failures = H.run_jobs(jobs_for(task, data[task], args, threads))
        for r in rows:
            r.pop("pred", None)
            r["train_cpu_per_epoch"] = (r["train_cpu_s"] / r["epochs"]
                                        if r.get("train_cpu_s") and r.get("epochs") else None)
        by = {r["label"]: r for r in rows}
        anchors_here = [by[a] for a in ANCHOR_OF[task] if a in by]
        for r in rows:
            for a in anchors_here:
                r[f"vs {a['label']}"] = H.ratio(r.get("rate_cpu"), a.get("rate_cpu"))
                if r.get("train_cpu_per_epoch") and a.get("train_cpu_per_epoch"):
                    r[f"train vs {a['label']}"] = H.ratio(a["train_cpu_per_epoch"], r["train_cpu_per_epoch"])
            for n, rate in (r.get("threads") or {}).items():
                r[f"{n} threads/s"] = rate
                r[f"{n}t speedup"] = H.ratio(rate, r.get("rate_wall"))
        unit = rows[0]["unit"] if rows else "tokens"
        columns = [("label", "system"), ("rate_cpu", f"{unit}/CPU s", "{:,.0f}")]
        columns += [(f"vs {a['label']}", f"vs {a['label']}") for a in anchors_here]
        columns += [("train_cpu_per_epoch", "train CPU s/epoch", "{:.2f}")]
        columns += [(f"train vs {a['label']}", f"train vs {a['label']}") for a in anchors_here
                    if a.get("train_cpu_per_epoch")]
        columns += [("rate_wall", f"{unit}/wall s (1 thread)", "{:,.0f}")]
        for n in threads:
            if n > 1:
                columns += [(f"{n} threads/s", f"{n} threads {unit}/s", "{:,.0f}"),
                            (f"{n}t speedup", f"{n}t speedup")]
        columns += [("peak_rss_mb", "peak RSS MB", "{:.0f}")]
        print()
        print(H.format_table(rows, columns))
        notes = {r["note"] for r in rows if r.get("note")}
        for note in sorted(notes):
            print(f"- {note}")
        for label, tb in failures:
            print(f"- FAILED {label}: {tb.strip().splitlines()[-1] if tb else ''}")
        print(flush=True)
        all_rows += rows
    if args.train_threads:
        for task in ("pos", "seg"):
            print(f"## Training on threads ({task}, {args.epochs} epochs)", flush=True)
            if task == "pos":
                pos = data.get("pos") or load_data(["pos"])["pos"]
                bench_training_threads("pos", pos[2], pos[1], args.epochs, threads)
            else:
                test = (H.load_lines(H.data_path("sighan2005", "pku_test.utf8")),
                        H.load_lines(H.data_path("sighan2005", "pku_test_gold.utf8")))
                bench_training_threads("seg", H.data_path("zh_pd1998", "train.txt"), test,
                                       args.epochs, threads)
            print()
    if args.dask:
        print(f"## Dask training ({args.dask})", flush=True)
        bench_dask(args.dask.split(","), epochs=args.epochs)
        print()
    if args.stream_mb:
        print(f"## Streaming ({args.stream_mb:.0f} MB, {max(threads)} threads)", flush=True)
        pos = data.get("pos") or load_data(["pos"])["pos"]
        bench_streaming([w for w, _ in pos[1]], args.stream_mb, max(threads))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
