"""Calibration of marginals and fine-tuning, measured on real corpora.

    PYTHONPATH=. python benchmarks/bench_confidence.py [--finetune-sentences 300] [--seed 0]

1. Calibration: the bundled EWT UPOS tagger's per-token marginals on EWT
   test, at temperature 1 (and the one stored in the model, when another)
   and at the temperature fitted on EWT dev: expected calibration error
   (15 bins), negative log-likelihood of the gold tags, and the accuracy
   of the most probable tag.  Then the bundled NER model's span
   confidences on CoNLL-2003 testb, with the stored temperature and one
   fitted on testa: ECE against whether each predicted span is right.
2. Fine-tuning (domain adaptation news -> web, one tag set): a Penn
   Treebank tagger trained on WSJ (CoNLL-2000 train, POS column) is
   fine-tuned on the first N sentences of EWT train (XPOS column) and
   evaluated on EWT test (XPOS), beside the WSJ model alone and a model
   trained on the N EWT sentences alone.  EWT's XPOS has tags WSJ lacks
   (ADD, NFP, GW, ...): they are added with ``allow_new_tags``.
"""
import argparse
import sys
import time

import numpy as np

from harness import DATA_ROOT

import fasttag
from fasttag import Tagger
from fasttag.model import confidence
from fasttag.text import schemes
from fasttag.text import formats as ftio

EWT = DATA_ROOT / "en_ewt"
WSJ = DATA_ROOT / "conll2000"
CONLL = DATA_ROOT / "conll2003"


def _conllu(path, column):
    return [(s.words, s.tags) for s in ftio.read(path, format="conllu", column=column) if s.words]


def calibration(tagger):
    dev = _conllu(EWT / "en_ewt-ud-dev.conllu", "upos")
    test = _conllu(EWT / "en_ewt-ud-test.conllu", "upos")
    index = tagger.model.tag_index
    stored = tagger.temperature
    refit = fasttag.loads(tagger.to_bytes())
    t0 = time.perf_counter()
    tau = refit.calibrate(dev)
    fit_seconds = time.perf_counter() - t0
    rows = []
    temperatures = [("temperature 1", 1.0), (f"fitted on dev ({tau:.2f})", tau)]
    if round(stored, 2) not in (1.0, round(tau, 2)):
        temperatures.insert(1, (f"stored in the model ({stored:.2f})", stored))
    for name, t in temperatures:
        probs = confidence.marginals(tagger.model, [(w, None) for w, _ in test], t)
        g = np.concatenate([np.array([index.get(x, -1) for x in ts]) for _, ts in test])
        p = np.concatenate(probs)
        best = p.argmax(axis=1)
        ece = confidence.expected_calibration_error(p.max(axis=1), best == g)
        nll = -np.mean(np.log(np.maximum(p[np.arange(len(g)), g], 1e-12)))
        rows.append((name, ece, nll, float(np.mean(best == g))))
    print(f"## Calibration: bundled EWT UPOS tagger, EWT test ({len(g):,} tokens)\n")
    print(f"Temperature fitted on EWT dev (`calibrate`) in {fit_seconds:.1f} s.\n")
    print("| marginals | ECE (15 bins) | NLL of gold | accuracy of argmax |")
    print("|---|---:|---:|---:|")
    for name, ece, nll, acc in rows:
        print(f"| {name} | {100 * ece:.2f}% | {nll:.3f} | {100 * acc:.2f}% |")
    print()


def span_calibration(ner):
    """Span confidences of the bundled NER model on CoNLL-2003 testb: the
    probability of each predicted span against whether it is right."""
    gold = [(s.words, set(schemes.spans(s.tags, "iob1")))
            for s in ftio.read_conll(CONLL / "eng.testb") if s.words and s.words[0] != "-DOCSTART-"]
    stored = ner.temperature
    refit = fasttag.loads(ner.to_bytes())
    t0 = time.perf_counter()
    tau = refit.calibrate(CONLL / "eng.testa")
    fit_seconds = time.perf_counter() - t0
    print(f"## Calibration: bundled CoNLL-2003 NER model, testb ({len(gold):,} sentences)\n")
    print(f"Temperature fitted on testa (`calibrate`) in {fit_seconds:.1f} s.\n")
    print("| span confidences | ECE (15 bins) | mean confidence | precision of the spans |")
    print("|---|---:|---:|---:|")
    for name, model in ((f"stored in the model ({stored:.2f})", ner), (f"fitted on testa ({tau:.2f})", refit)):
        conf, right = [], []
        for words, spans in gold:
            for typ, a, b, p in model.spans(words, with_confidence=True):
                conf.append(p)
                right.append((typ, a, b) in spans)
        ece = confidence.expected_calibration_error(conf, right)
        print(f"| {name} | {100 * ece:.2f}% | {100 * np.mean(conf):.2f}% | {100 * np.mean(right):.2f}% |")
    print()


def finetuning(n, seed, epochs):
    wsj = [(s.words, s.tags) for s in ftio.read(WSJ / "train.txt", format="conll", column=1) if s.words]
    ewt_train = _conllu(EWT / "en_ewt-ud-train.conllu", "xpos")[:n]
    test = EWT / "en_ewt-ud-test.conllu"
    base = Tagger.train(wsj, epochs=10, seed=seed, verbose=False)
    tuned = Tagger.train(ewt_train, init=base, epochs=epochs, seed=seed, allow_new_tags=True, verbose=False)
    alone = Tagger.train(ewt_train, epochs=epochs, seed=seed, verbose=False)
    print(f"## Fine-tuning: WSJ tagger adapted with {n} EWT sentences, EWT test (XPOS)\n")
    print("| model | EWT test XPOS accuracy | unknown words |")
    print("|---|---:|---:|")
    for name, model in (("WSJ only (CoNLL-2000 train, 10 epochs)", base),
                        (f"{n} EWT sentences only ({epochs} epochs)", alone),
                        (f"WSJ fine-tuned on the {n} EWT sentences ({epochs} epochs)", tuned)):
        r = model.evaluate(test, format="conllu", column="xpos")
        print(f"| {name} | {100 * r['accuracy']:.2f}% | {100 * r['unknown_accuracy']:.2f}% |")
    new = [t for t in tuned.tags if t not in base.tags]
    print(f"\nTags added by fine-tuning: {', '.join(new) or 'none'}.\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--finetune-sentences", type=int, default=300)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not EWT.exists() or not WSJ.exists():
        sys.exit("the EWT and CoNLL-2000 corpora are needed (../shared/data)")
    calibration(fasttag.load())
    if CONLL.exists():
        span_calibration(fasttag.load("en-ner"))
    finetuning(args.finetune_sentences, args.seed, args.epochs)


if __name__ == "__main__":
    main()
