"""Tokenizing time on adversarial one-line inputs: each must be linear.

    python benchmarks/bench_adversarial.py [--mb 1 4] [--only a.,json] [--path raw|tokenize|ud] [--repeat 3]

Each family is one line without whitespace (or prose on one line, the
reference) of the given sizes in MB (UTF-8 bytes, approximately);
``--path raw`` (default) tokenizes it as ``fasttag tokenize`` does
(``fasttag.text.rawtext.raw_sentences`` with the bundled ``en-tok``:
pieces of at most 50,000 characters, protected patterns, the compiled
words path), ``--path tokenize`` calls ``Tokenizer.tokenize`` on the whole
string, ``--path ud`` runs ``fasttag.load("en-ud").to_conllu`` (the
tokenizer and every tagger after it).  Prints per family the CPU seconds
per MB at each size and the ratio of the largest size's time to the
smallest's (linear: the ratio of the sizes), each time the best of
``--repeat`` runs (one run's time on a shared machine varies by a
quarter).  Run from the repository root.
"""
import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

import fasttag  # noqa: E402
from fasttag.text.rawtext import raw_sentences  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _repeat(unit):
    """``unit`` repeated to about n bytes."""
    return lambda n: unit * max(1, n // len(unit.encode("utf-8")))


def _url(n):
    return "http://" + ".".join("abcdefghij"[i % 10] for i in range(n // 2))[: n - 7]


def _base64(n):
    rng = random.Random(0)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
    return "".join(rng.choice(alphabet) for _ in range(n))


def _prose(n):
    path = ROOT.parent / "shared" / "data" / "en_ewt" / "en_ewt-ud-train.conllu"
    words = [line[9:].strip() for line in open(path, encoding="utf-8") if line.startswith("# text = ")]
    text = " ".join(words) + " "
    return (text * (n // len(text) + 1))[:n].rstrip()


#: name -> function of a size in bytes giving one line of about that size
FAMILIES = {
    "prose": _prose,
    "a.": _repeat("a."), "a@": _repeat("a@"), "#": _repeat("#"), ":": _repeat(":"), "/": _repeat("/"),
    ".": _repeat("."), "url dots": _url, "1-": _repeat("1-"), "1/": _repeat("1/"), "1:": _repeat("1:"),
    "1'111": lambda n: "1" + "'111" * (n // 4) + "'1",
    "flags": _repeat("\U0001F1FA\U0001F1F8"),
    "zwj chain": _repeat("\U0001F468\u200d"),
    "json": _repeat('{"a":1,"b":[1,2,3]}'),
    "base64": _base64,
    "cjk": _repeat("\u4e2d\u6587\u5b57\u7b26\u4e32"),
    "marks": lambda n: "a" + "\u0301" * (n // 2),
    "letters": _repeat("abcdefghij"),
}


def cpu(fn, text):
    t0 = time.process_time()
    fn(text)
    return time.process_time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, nargs="+", default=[1, 4])
    ap.add_argument("--only", default=None, help="comma-separated family names")
    ap.add_argument("--path", choices=("raw", "tokenize", "ud"), default="raw")
    ap.add_argument("--repeat", type=int, default=3, help="runs per size, the best kept")
    args = ap.parse_args()
    if args.path == "ud":
        ud = fasttag.load("en-ud")
        run = ud.to_conllu
    else:
        tok = fasttag.load("en-tok")
        run = (lambda text: list(raw_sentences([text], tok))) if args.path == "raw" else tok.tokenize
    names = args.only.split(",") if args.only else list(FAMILIES)
    run("warm up: http://a.b.com 1,000 :) #tag")
    sizes = sorted(args.mb)
    print(f"path {args.path}; CPU s per MB at " + ", ".join(f"{mb:g} MB" for mb in sizes)
          + f"; ratio of the {sizes[-1]:g} MB time to the {sizes[0]:g} MB time")
    for name in names:
        times = []
        for mb in sizes:
            text = FAMILIES[name](int(mb * 1e6))
            real_mb = len(text.encode("utf-8")) / 1e6
            times.append(min(cpu(run, text) for _ in range(args.repeat)) / real_mb * mb)
        cells = "  ".join(f"{t / mb:7.3f}" for t, mb in zip(times, sizes))
        print(f"{name:10s} {cells}  ratio {times[-1] / max(times[0], 1e-9):5.2f}", flush=True)


if __name__ == "__main__":
    main()
