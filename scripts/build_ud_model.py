"""Build the bundled English UD pipeline, fasttag/models/en_ewt_ud.ftm.

    python scripts/build_ud_model.py [--data ../shared/data] [--seed 0] [--tokenizer MODEL]
                                     [--prune tok=T,upos=T,...] [--scan 0,0.5,1,2]

Trains ``fasttag train ud`` on UD English EWT train with dev for each
part's epoch (the tokenizer with the current code, unless ``--tokenizer``
names a model to put in its place), prunes each part's averaged weights below
its ``--prune`` threshold (chosen on dev: ``--scan`` prints, for each
part and threshold, the dev score of the part's metric and the file size,
with the other parts unpruned; the test set plays no part in any choice),
reports the CoNLL 2018 scores from raw text on dev and test, and writes
the model with its corpus and licence in the header.  Run from the
repository root; the corpora are read in place.
"""
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import fasttag  # noqa: E402
from fasttag.pipeline import TOKENIZER, Pipeline  # noqa: E402
from scripts.bundle import data_option, need_corpus, save_bundled  # noqa: E402

CORPUS = "UD English EWT v2.15 (train; dev for model selection)"
LICENCE = "CC BY-SA 4.0"
#: Each part's pruning threshold, chosen on EWT dev (MODELS.md); the tokenizer's weights are MIRA's (small).
PRUNE = {"tok": 0.01, "upos": 1.0, "xpos": 1.0, "feats": 1.0, "lemma": 2.0}
#: The dev score a part's threshold is judged by.
#: part -> the CoNLL 2018 metric its dev score is
METRIC = {"tok": "Tokens", "upos": "UPOS", "xpos": "XPOS", "feats": "UFeats", "lemma": "Lemmas"}
#: the model meta's key (as the bundled model records them) -> the metric
SCORES = {"token_f1": "Tokens", "sentence_f1": "Sentences", "word_f1": "Words", "upos": "UPOS", "xpos": "XPOS",
          "ufeats": "UFeats", "alltags": "AllTags", "lemmas": "Lemmas"}


def thresholds(text):
    """``{part: threshold}`` of ``--prune``'s ``name=value,...``."""
    out = dict(PRUNE)
    for item in filter(None, (text or "").split(",")):
        name, _, value = item.partition("=")
        if name not in out:
            sys.exit(f"--prune: unknown part {name!r}; parts: {', '.join(out)}")
        out[name] = float(value)
    return out


def with_part(pipe, name, model):
    """A copy of ``pipe`` whose part ``name`` is ``model``."""
    if name == TOKENIZER:
        return Pipeline(model, pipe.parts, pipe.meta)
    return Pipeline(pipe.tokenizer, {**pipe.parts, name: model}, pipe.meta)


def part_of(pipe, name):
    return pipe.tokenizer if name == TOKENIZER else pipe.parts[name]


def pruned_copy(model, threshold):
    copy = type(model).from_bytes(model.to_bytes())
    if threshold:
        copy.prune(threshold)
    return copy


def scan(pipe, dev, values):
    """Print each part's dev score and size at each threshold of ``values``."""
    for name in METRIC:
        model = part_of(pipe, name)
        for t in values:
            copy = pruned_copy(model, t)
            r = with_part(pipe, name, copy).evaluate(dev, gold_tokens=name != TOKENIZER)
            extra = f" Sentences {100 * r['Sentences']['f1']:.2f}" if name == TOKENIZER else \
                f" AllTags {100 * r['AllTags']['f1']:.2f}"
            print(f"scan {name} prune {t:g}: dev {METRIC[name]} {100 * r[METRIC[name]]['f1']:.2f}{extra}, "
                  f"{len(copy.to_bytes()) / 1e6:.2f} MB", file=sys.stderr, flush=True)


def main():
    ap = data_option(__doc__)
    ap.add_argument("--epochs", type=int, default=0, help="epochs of every part (default: each part's own)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prune", help="part=threshold,... overriding the chosen thresholds " + str(PRUNE))
    ap.add_argument("--tokenizer", help="replace the trained tokenizer with this model (path or bundled name)")
    ap.add_argument("--trained", help="an unpruned pipeline this script trained (--save-trained): skip training")
    ap.add_argument("--save-trained", help="also save the unpruned pipeline here")
    ap.add_argument("--scan", help="thresholds to measure on dev, comma-separated (writes no model)")
    ap.add_argument("-o", "--output", default=str(ROOT / "fasttag" / "models" / "en_ewt_ud.ftm"))
    args = ap.parse_args()
    ewt = Path(args.data) / "en_ewt"
    train, dev, test = (ewt / f"en_ewt-ud-{s}.conllu" for s in ("train", "dev", "test"))
    need_corpus(train)
    t0 = time.process_time()
    options = {"seed": args.seed, "corpus": CORPUS, "licence": LICENCE}
    if args.epochs:
        options["epochs"] = args.epochs
    if args.trained:
        pipe = Pipeline.load(args.trained)
    else:
        pipe = Pipeline.train(train, dev=dev, verbose=True, **options)
        print(f"trained in {time.process_time() - t0:.0f} CPU s", file=sys.stderr)
    if args.save_trained:
        pipe.save(args.save_trained)
    if args.tokenizer:
        pipe = Pipeline(fasttag.load(args.tokenizer), pipe.parts, pipe.meta)
    if args.scan:
        scan(pipe, dev, [float(v) for v in args.scan.split(",")])
        return 0
    for name, t in thresholds(args.prune).items():
        if t:
            kept = part_of(pipe, name).prune(t)
            print(f"{name}: pruned below {t:g}, {kept} weights kept", file=sys.stderr)
    scores = {}
    for split, path in (("dev", dev), ("test", test)):
        r = pipe.evaluate(path)
        scores[split] = {k: round(r[m]["f1"], 4) for k, m in SCORES.items()}
        print(f"EWT {split} from raw text: " + ", ".join(f"{k} {100 * v:.2f}" for k, v in scores[split].items()),
              file=sys.stderr)
    pipe.meta["ewt_test"] = scores["test"]
    save_bundled(pipe, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
