"""Build the bundled English UPOS model from UD English EWT.

    python scripts/build_en_model.py [--data ../shared/data] [--epochs 10] [--seeds 0,1,2,3] [--clusters FILE]

Trains on en_ewt train once per shuffling seed, keeps the best epoch and
the best seed on dev (the test set plays no part in the choice), reports
test accuracy, and writes fasttag/models/en_ewt_upos.ftm (the corpus and
its licence go into the model header).  ``--clusters``: Brown clusters
(``fasttag cluster``) as features, stored in the model.
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fasttag.tasks.pos import Tagger  # noqa: E402

CORPUS = "UD English EWT v2.15 (train; dev for model selection)"
LICENCE = "CC BY-SA 4.0"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seeds", default="0,1,2,3")
    parser.add_argument("--clusters", help="Brown clusters file (bitstring<TAB>word<TAB>count) as features")
    parser.add_argument("-o", "--output", default=str(ROOT / "fasttag" / "models" / "en_ewt_upos.ftm"))
    args = parser.parse_args()
    ewt = Path(args.data) / "en_ewt"
    # the clusters' text has its own terms: name it beside the corpus
    corpus = CORPUS + (f"; word clusters from {Path(args.clusters).name}" if args.clusters else "")
    best = None
    for seed in (int(s) for s in args.seeds.split(",")):
        tagger = Tagger.train(ewt / "en_ewt-ud-train.conllu", dev=ewt / "en_ewt-ud-dev.conllu",
                              epochs=args.epochs, seed=seed, corpus=corpus, licence=LICENCE,
                              verbose=True, clusters=args.clusters)
        dev = tagger.model.training_info["dev_score"]
        print(f"seed {seed}: dev accuracy {100 * dev:.2f}% "
              f"(epoch {tagger.model.training_info['best_epoch']})")
        if best is None or dev > best[0]:
            best = (dev, tagger)
    tagger = best[1]
    result = tagger.evaluate(ewt / "en_ewt-ud-test.conllu")
    tagger.meta["test_accuracy"] = round(result["accuracy"], 5)
    tagger.save(args.output)
    size = Path(args.output).stat().st_size
    print(f"test accuracy {100 * result['accuracy']:.2f}% (unknown words "
          f"{100 * result['unknown_accuracy']:.2f}%), {size / 1e6:.1f} MB -> {args.output}")


if __name__ == "__main__":
    main()
