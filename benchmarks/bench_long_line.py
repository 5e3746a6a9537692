"""Peak memory of the tagging commands on one very long line.

    python benchmarks/bench_long_line.py [--mb 20] [--data ../shared/data] [--keep FILE]

Writes one line of ``--mb`` megabytes (the sentences of UD English EWT
train, repeated) to a temporary file, then runs ``fasttag tag`` on it as
raw text and ``--pretokenized``, each in its own process, and prints each
run's peak resident memory and CPU time.  Long lines are tagged in pieces
(see ``fasttag/text/rawtext.py``), so the peak should not grow with the line.
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_line(data, size):
    words = [line[9:].strip() for line in open(Path(data) / "en_ewt" / "en_ewt-ud-train.conllu", encoding="utf-8")
             if line.startswith("# text = ")]
    text = " ".join(words) + " "
    return ((text * (size // len(text) + 1))[:size]).rstrip() + "\n"


def run(args, path):
    """(peak RSS MB, CPU s) of ``fasttag tag ARGS PATH`` in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with open(os.devnull, "w") as null:
        subprocess.run([sys.executable, "-m", "fasttag", "tag", *args, path], stdout=null, check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return after.ru_maxrss / 1024, cpu        # ru_maxrss: the largest child so far, in KiB on Linux


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=20)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "long.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(one_line(args.data, int(args.mb * 1e6)))
        # pretokenized first: ru_maxrss is the maximum over all children so far
        for label, extra in (("pretokenized", ["--pretokenized"]), ("raw text", [])):
            rss, cpu = run(extra, path)
            print(f"{args.mb:g} MB one-line file, {label}: peak RSS {rss:,.0f} MB (largest run so far), "
                  f"{cpu:.1f} CPU s")


if __name__ == "__main__":
    main()
