"""Build the bundled English named-entity model, fasttag/models/en_conll03_ner.ftm.

    python scripts/build_ner_model.py [--data ../shared/data] [--epochs 15] [--prune 0.0] [--clusters FILE]

Trains a span tagger on CoNLL-2003 ``eng.train`` from the words alone (no
POS or chunk column, and no document features: raw text has neither), keeps
the epoch with the best span F1 on ``eng.testa``, optionally drops averaged
weights below ``--prune`` (the bundled file must stay under 10 MB; the
bundled model is built with ``--prune 0.005``, see MODELS.md), reports
span F1 on ``eng.testb``, and writes the model with its corpus and terms in
the header.  ``--clusters``: Brown clusters (``fasttag cluster``) as
features, stored in the model.  CoNLL-2003 is distributed for research use: so is the model.
"""
import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fasttag.tasks.spans import SpanTagger  # noqa: E402
from scripts.bundle import save_bundled  # noqa: E402

MAX_BYTES = 10 * 1024 * 1024
CORPUS = "CoNLL-2003 English NER (Reuters): eng.train; eng.testa for model selection; words only"
LICENCE = "trained on a corpus distributed for research use: research use only"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"),
                    help="folder of the shared corpora (default ../shared/data beside the repository)")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--document-features", action="store_true",
                    help="document-level features (off: raw text is tagged one sentence at a time)")
    ap.add_argument("--prune", type=float, default=0.0, help="drop weights with |w| below this")
    ap.add_argument("--clusters", help="Brown clusters file (bitstring<TAB>word<TAB>count) as features")
    ap.add_argument("-o", "--output", default=str(ROOT / "fasttag" / "models" / "en_conll03_ner.ftm"))
    args = ap.parse_args()

    conll = Path(args.data) / "conll2003"
    if not (conll / "eng.train").exists():
        sys.exit(f"training corpus not found: {conll / 'eng.train'} (the shared corpora, ../shared/data)")
    # the clusters' text has its own terms: name it beside the corpus
    corpus = CORPUS + (f"; word clusters from {Path(args.clusters).name}" if args.clusters else "")
    t0 = time.process_time()
    ner = SpanTagger.train(conll / "eng.train", dev=conll / "eng.testa", task="ner", epochs=args.epochs,
                           seed=args.seed, feature_columns=[], document_features=args.document_features,
                           verbose=True, corpus=corpus, licence=LICENCE, clusters=args.clusters)
    info = ner.model.training_info
    print(f"trained in {time.process_time() - t0:.0f} CPU s; best epoch {info['best_epoch']}, "
          f"testa F1 {100 * info['dev_score']:.2f}", file=sys.stderr)
    if args.prune:
        kept = ner.prune(args.prune)
        print(f"pruned below {args.prune}: {kept} weights kept", file=sys.stderr)
        # the temperature fitted in training was for the weights before pruning
        print(f"temperature refitted on testa: {ner.calibrate(conll / 'eng.testa'):.4g}", file=sys.stderr)
    scores = {}
    for split in ("testa", "testb"):
        r = ner.evaluate(conll / f"eng.{split}")
        scores[split] = {k: round(r[k], 4) for k in ("precision", "recall", "f1")}
        scores[split].update({f"{t}_f1": round(v["f1"], 4) for t, v in r["per_type"].items()})
        print(f"{split}: " + ", ".join(f"{k} {100 * v:.2f}" for k, v in scores[split].items()), file=sys.stderr)
    ner.meta["conll2003_testb"] = scores["testb"]
    save_bundled(ner, args.output, MAX_BYTES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
