"""The tokenizer on raw text: accuracy on UD treebanks and speed on web text.

    python benchmarks/bench_tokenizer.py [--data ../shared/data] [--only en,pt,fi,tr,ja] [--epochs N]

For each treebank, trains ``fasttag.Tokenizer`` on the file the shared
data's README names (EWT train with dev for the epoch; the dev file of
Portuguese Bosque, Finnish TDT and Japanese GSD; Turkish IMST train with
dev), scores the test file's raw text with the CoNLL 2018 definitions
(``Tokenizer.evaluate``: Tokens, Words, Sentences F1) and prints one JSON
line per treebank with the training CPU seconds.  ``--speed`` adds the
words per CPU second of ``tokenize_lines`` on ``unlabeled_en/webtext.txt``
with the bundled English model, on 1 and 2 threads (wall-clock words per
second for 2 threads), with and without its protected patterns.  Run from the repository root.
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

import fasttag  # noqa: E402
from fasttag.tasks.tok import Tokenizer  # noqa: E402

TREEBANKS = {
    "en": ("en_ewt", "en_ewt-ud-train.conllu", "en_ewt-ud-dev.conllu", "en_ewt-ud-test.conllu"),
    "pt": ("ud/UD_Portuguese-Bosque", "pt_bosque-ud-dev.conllu", None, "pt_bosque-ud-test.conllu"),
    "fi": ("ud/UD_Finnish-TDT", "fi_tdt-ud-dev.conllu", None, "fi_tdt-ud-test.conllu"),
    "tr": ("ud/UD_Turkish-IMST", "tr_imst-ud-train.conllu", "tr_imst-ud-dev.conllu", "tr_imst-ud-test.conllu"),
    "ja": ("ud/UD_Japanese-GSD", "ja_gsd-ud-dev.conllu", None, "ja_gsd-ud-test.conllu"),
}


def accuracy(data, lang, epochs):
    folder, train, dev, test = TREEBANKS[lang]
    d = Path(data) / folder
    options = {} if epochs is None else {"epochs": epochs}
    t0 = time.process_time()
    tok = Tokenizer.train(d / train, dev=d / dev if dev else None, verbose=False, seed=0, **options)
    seconds = time.process_time() - t0
    r = tok.evaluate(d / test)
    return {"treebank": lang, "token_f1": round(100 * r["token_f1"], 2), "word_f1": round(100 * r["word_f1"], 2),
            "sentence_f1": round(100 * r["sentence_f1"], 2), "train_cpu_s": round(seconds, 1),
            "epochs": tok.model.training_info.get("epochs"), "best_epoch": tok.model.training_info.get("best_epoch")}


def speed(data, n_threads, protect=True):
    tok = fasttag.load("en-tok")
    if not protect:
        tok.protect = None              # the model's protected patterns off: what they cost
    lines = (Path(data) / "unlabeled_en" / "webtext.txt").read_text(encoding="utf-8").splitlines()
    list(tok.tokenize_lines(lines[:2000], n_threads=n_threads))          # warm
    t0, w0 = time.process_time(), time.perf_counter()
    n = sum(len(s) for out in tok.tokenize_lines(lines, n_threads=n_threads) for s in out)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    return {"speed": "tokenize_lines webtext.txt", "threads": n_threads, "protected": protect, "words": n,
            "words_per_cpu_s": round(n / cpu), "words_per_wall_s": round(n / wall)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--only", default="en,pt,fi,tr,ja")
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--speed", action="store_true")
    args = ap.parse_args()
    if args.speed:
        for n in (1, 2):
            for protect in (True, False):
                print(json.dumps(speed(args.data, n, protect)), flush=True)
    for lang in args.only.split(","):
        if lang:
            print(json.dumps(accuracy(args.data, lang, args.epochs)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
