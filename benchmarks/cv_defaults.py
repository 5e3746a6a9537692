"""Defaults by cross-validation on the training files: epochs and the
learning rule of each part of ``fasttag train ud``, without dev data.

    python benchmarks/cv_defaults.py [--treebanks en,pt,fi,tr,ja] [--folds 3]
                                     [--parts upos,xpos,feats,lemma] [--epochs 15]
                                     [--rules perceptron,mira] [--json out.jsonl]
    python benchmarks/cv_defaults.py --table a.jsonl b.jsonl   # one table of several runs

Each treebank's training file (``../shared/data/README.md``: EWT train, of
which the first ~40k words; the ``ud/`` treebanks' dev file, Turkish's
train file) is cut into ``--folds`` contiguous blocks of sentences; each
part trains on all blocks but one and is scored on the one left out (gold
UPOS as the input of FEATS and lemmas).  One training of ``--epochs``
epochs per fold gives the score after every epoch (the held-out block is
passed as ``dev``, which only records the scores: the model of epoch N of
a longer run is the model trained N epochs).  Lemmas are the exception:
the lexicon of seen words, built once training is over, is not in the
per-epoch scores, so the lemmatizer trains anew for each of epochs 5, 10
and 15 and is scored by ``evaluate``.  No test file is read.
Printed: the mean over folds, per treebank and averaged over treebanks,
at epochs 5, 10, 15 (and the best epoch of the average).
"""
import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import fasttag

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TRAINING = {
    "en": "en_ewt/en_ewt-ud-train.conllu",
    "pt": "ud/UD_Portuguese-Bosque/pt_bosque-ud-dev.conllu",
    "fi": "ud/UD_Finnish-TDT/fi_tdt-ud-dev.conllu",
    "tr": "ud/UD_Turkish-IMST/tr_imst-ud-train.conllu",
    "ja": "ud/UD_Japanese-GSD/ja_gsd-ud-dev.conllu",
}
EN_WORDS = 40_000
#: learning rules compared: name -> training options
RULES = {"perceptron": {"algorithm": "perceptron"},
         "mira": {"algorithm": "mira"},
         "mira3": {"algorithm": "mira", "k": 3},
         "mira-C0.1": {"algorithm": "mira", "C": 0.1}}
#: part -> (class, options of the class naming the column)
PARTS = {"upos": (fasttag.Tagger, {"column": "upos"}),
         "xpos": (fasttag.Tagger, {"column": "xpos"}),
         "feats": (fasttag.Morphologizer, {}),
         "lemma": (fasttag.Lemmatizer, {})}
SHOWN = (5, 10, 15)
FIELD = {"upos": 3, "xpos": 4, "feats": 5, "lemma": 2}


def sentences(path, max_words=None):
    """The CoNLL-U file's sentence blocks (comment and word lines), up to ``max_words`` words."""
    blocks, words = [], 0
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        lines = [ln for ln in block.split("\n") if ln]
        if not lines:
            continue
        blocks.append(lines)
        words += sum(1 for ln in lines if ln.split("\t", 1)[0].isdigit())
        if max_words and words >= max_words:
            break
    return blocks


def annotated(blocks, part):
    """Whether the treebank fills the part's column."""
    f = FIELD[part]
    return any(ln.split("\t")[f] != "_" for b in blocks for ln in b if ln.split("\t", 1)[0].isdigit())


def write(blocks, path):
    path.write_text("".join("\n".join(b) + "\n\n" for b in blocks), encoding="utf-8")


def fold_files(blocks, k, tmp):
    """(train path, held-out path) of each of ``k`` contiguous folds."""
    n = len(blocks)
    cuts = [round(i * n / k) for i in range(k + 1)]
    out = []
    for i in range(k):
        held, rest = blocks[cuts[i]:cuts[i + 1]], blocks[:cuts[i]] + blocks[cuts[i + 1]:]
        tr, ho = Path(tmp) / f"train{i}.conllu", Path(tmp) / f"held{i}.conllu"
        write(rest, tr)
        write(held, ho)
        out.append((tr, ho))
    return out


def curve(cls, train, held, epochs, opts):
    """{epoch: held-out score}, and the seconds of the training."""
    t0 = time.process_time()
    if cls is fasttag.Lemmatizer:
        scores = {e: cls.train(str(train), epochs=e, verbose=False, **opts).evaluate(str(held))["accuracy"]
                  for e in SHOWN if e <= epochs}
    else:
        model = cls.train(str(train), dev=str(held), epochs=epochs, verbose=False, **opts)
        scores = {e + 1: h["dev_score"] for e, h in enumerate(model.meta["history"])}
    return scores, time.process_time() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--treebanks", default="en,pt,fi,tr,ja")
    ap.add_argument("--parts", default="upos,xpos,feats,lemma")
    ap.add_argument("--rules", default="perceptron,mira")
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--json", help="append each result as a JSON line to this file")
    ap.add_argument("--table", nargs="+", metavar="JSONL", help="print the table of earlier --json files only")
    a = ap.parse_args(argv)
    if a.table:
        lines = [json.loads(ln) for f in a.table for ln in open(f, encoding="utf-8") if ln.strip()]
        table({(d["treebank"], d["part"], d["rule"]): {int(e): v for e, v in d["mean_by_epoch"].items()}
               for d in lines}, a.epochs)
        return
    if not DATA.is_dir():
        sys.exit(f"cv_defaults: {DATA} is absent (see the shared data README)")
    results = {}
    for tb in a.treebanks.split(","):
        blocks = sentences(DATA / TRAINING[tb], EN_WORDS if tb == "en" else None)
        with tempfile.TemporaryDirectory() as tmp:
            folds = fold_files(blocks, a.folds, tmp)
            for part in a.parts.split(","):
                if not annotated(blocks, part):
                    continue
                cls, part_opts = PARTS[part]
                for rule in a.rules.split(","):
                    curves, secs = [], 0.0
                    for tr, ho in folds:
                        c, s = curve(cls, tr, ho, a.epochs, {**part_opts, **RULES[rule]})
                        curves.append(c)
                        secs += s
                    mean = {e: 100 * sum(c[e] for c in curves) / len(curves) for e in curves[0]}
                    results[(tb, part, rule)] = mean
                    line = {"treebank": tb, "part": part, "rule": rule, "mean_by_epoch": mean, "cpu_s": secs}
                    print(json.dumps(line), flush=True)
                    if a.json:
                        with open(a.json, "a", encoding="utf-8") as f:
                            f.write(json.dumps(line) + "\n")
    table(results, a.epochs)


def table(results, epochs):
    """Per part and rule: each treebank's mean at epochs 5/10/15 and the average over treebanks."""
    show = [e for e in SHOWN if e <= epochs]
    for part in dict.fromkeys(p for _, p, _ in results):
        tbs = list(dict.fromkeys(t for t, p, _ in results if p == part))
        print(f"\n{part}: mean held-out accuracy over folds, at epochs {'/'.join(map(str, show))}")
        print(f"{'rule':<12}" + "".join(f"{t:>22}" for t in tbs) + f"{'average':>22}")
        for rule in dict.fromkeys(r for _, p, r in results if p == part):
            row = [results.get((t, part, rule)) for t in tbs]
            done = [r for r in row if r is not None]
            # the average only over every treebank of the part (a missing cell: "-")
            avg = {e: sum(r[e] for r in done) / len(done) for e in done[0]} if len(done) == len(row) else None
            cells = ["-" if r is None else "/".join(f"{r[e]:.2f}" for e in show) for r in row + [avg]]
            best = "" if avg is None else f"   best avg epoch {max(avg, key=avg.get)}"
            print(f"{rule:<12}" + "".join(f"{c:>22}" for c in cells) + best)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
