"""Peak memory of the CoNLL-U commands on one very long sentence and on one
very long form.

    python benchmarks/bench_long_sentence.py [--tokens 1000000] [--form-mb 20] [--data ../shared/data]

Writes a CoNLL-U file of one sentence of ``--tokens`` words (the words of
UD English EWT train in order, repeated; made-up words where the corpus is
absent) and one of a single word of ``--form-mb`` megabytes, then runs
``fasttag tag -m en-ud --to conllu`` and ``fasttag eval en-ud`` on each, each
in its own process, and prints the input's size, each run's peak resident
memory, CPU time and the memory per token beyond that of loading the model.
"""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def words_of(data, n):
    path = Path(data) / "en_ewt" / "en_ewt-ud-train.conllu"
    if path.is_file():
        words = [line.split("\t")[1] for line in open(path, encoding="utf-8")
                 if line[:1].isdigit() and line.split("\t")[0].isdigit()]
    else:
        words = ["the", "cat", "sat", "on", "a", "mat", ",", "and", "dogs", "ran", "quickly", "."]
    return (words * (n // len(words) + 1))[:n]


def write_sentence(path, words):
    with open(path, "w", encoding="utf-8") as f:
        for i, w in enumerate(words, 1):
            f.write(f"{i}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_\n")
        f.write("\n")


def run(args):
    """(peak RSS MB, CPU s) of ``fasttag ARGS`` in a child process of its own."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with open(os.devnull, "w") as null:
        proc = subprocess.Popen([sys.executable, "-m", "fasttag", *args], stdout=null, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    if status:
        raise SystemExit(f"fasttag {' '.join(args)} failed")
    return usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1_000_000)
    parser.add_argument("--form-mb", type=int, default=20)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base, _ = run(["tag", "-m", "en-ud", "--to", "conllu", os.devnull])
        print(f"model loaded, nothing tagged: {base:.0f} MB")
        sentence = Path(tmp) / "sentence.conllu"
        write_sentence(sentence, words_of(opts.data, opts.tokens))
        form = Path(tmp) / "form.conllu"
        write_sentence(form, ["ab." * (opts.form_mb * 2 ** 20 // 3)])
        print(f"{'input':<40} {'command':<32} {'peak MB':>8} {'CPU s':>7} {'B/token':>8}")
        for path, what, n in ((sentence, f"one sentence of {opts.tokens:,} tokens", opts.tokens),
                              (form, f"one form of {opts.form_mb} MB", None)):
            size = path.stat().st_size / 2 ** 20
            for args in (["tag", "-m", "en-ud", "--to", "conllu", str(path)], ["eval", "en-ud", str(path)]):
                peak, cpu = run(args)
                per = f"{(peak - base) * 2 ** 20 / n:.0f}" if n else "-"
                print(f"{what + f' ({size:.0f} MB)':<40} {' '.join(args[:2]) + ' ...':<32} {peak:>8.0f} {cpu:>7.1f} "
                      f"{per:>8}")


if __name__ == "__main__":
    main()
