"""Raw text to CoNLL-U: words per CPU second of a fasttag pipeline (and,
given one, of a UDPipe 1 model) on the raw text of a CoNLL-U file.

    python benchmarks/bench_ud_speed.py PIPELINE.ftm TEST.conllu [--udpipe MODEL.udpipe]
                                        [--repeat 3] [--profile]

The text is the document's raw text (``# newpar`` breaks as line ends);
each run takes it through :meth:`fasttag.pipeline.Pipeline.to_conllu`
(UDPipe 1: its tokenizer, tagger and lemmatizer, CoNLL-U out).  Words are
the syntactic words of each one's output; the first run (word caches
cold, as in one ``fasttag tag``) and the best of ``--repeat`` runs are
reported, in CPU seconds of this process.
"""
import argparse
import cProfile
import pstats
import time

import fasttag
from fasttag.text.conllu import read_document


def words_of(conllu):
    return sum(1 for line in conllu.split("\n") if line and line[0].isdigit() and "\t" in line
               and "-" not in line.split("\t", 1)[0] and "." not in line.split("\t", 1)[0])


def best(fn, repeat):
    """(output, CPU seconds of the first run, of the best run)."""
    out, cpus = None, []
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        cpus.append(time.process_time() - t0)
    return out, cpus[0], min(cpus)


def udpipe_run(path, text):
    from ufal.udpipe import Model, Pipeline
    model = Model.load(path)
    if model is None:
        raise SystemExit(f"cannot load UDPipe model {path}")
    pipe = Pipeline(model, "tokenize", Pipeline.DEFAULT, Pipeline.NONE, "conllu")
    return lambda: (model, pipe.process(text))[1]      # the pipeline needs its model alive


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pipeline")
    ap.add_argument("conllu")
    ap.add_argument("--udpipe")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="print the top of a cProfile of one fasttag run")
    args = ap.parse_args()
    text = read_document(args.conllu).text
    pipe = fasttag.load(args.pipeline)
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(pipe.to_conllu, text)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        pipe = fasttag.load(args.pipeline)     # cold again
    out, first, cpu = best(lambda: pipe.to_conllu(text), args.repeat)
    n = words_of(out)
    print(f"fasttag  {n} words  first run {n / first:,.0f}, best {n / cpu:,.0f} words/CPU s")
    if args.udpipe:
        out_u, first_u, cpu_u = best(udpipe_run(args.udpipe, text), args.repeat)
        n_u = words_of(out_u)
        print(f"UDPipe 1 {n_u} words  first run {n_u / first_u:,.0f}, best {n_u / cpu_u:,.0f} words/CPU s  "
              f"(fasttag {n / cpu / (n_u / cpu_u):.1f}x, best against best)")


if __name__ == "__main__":
    main()
