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
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fasttag.tasks.spans import SpanTagger  # noqa: E402
from scripts.bundle import build_options, need_corpus, prune, report_training, save_bundled  # noqa: E402

CORPUS = "CoNLL-2003 English NER (Reuters): eng.train; eng.testa for model selection; words only"
LICENCE = "trained on a corpus distributed for research use: research use only"


def main():
    ap = build_options(__doc__, "en_conll03_ner.ftm", epochs=15)
    ap.add_argument("--document-features", action="store_true",
                    help="document-level features (off: raw text is tagged one sentence at a time)")
    ap.add_argument("--clusters", help="Brown clusters file (bitstring<TAB>word<TAB>count) as features")
    args = ap.parse_args()

    conll = Path(args.data) / "conll2003"
    need_corpus(conll / "eng.train")
    # the clusters' text has its own terms: name it beside the corpus
    corpus = CORPUS + (f"; word clusters from {Path(args.clusters).name}" if args.clusters else "")
    t0 = time.process_time()
    ner = SpanTagger.train(conll / "eng.train", dev=conll / "eng.testa", task="ner", epochs=args.epochs,
                           seed=args.seed, feature_columns=[], document_features=args.document_features,
                           verbose=True, corpus=corpus, licence=LICENCE, clusters=args.clusters)
    report_training(ner, t0, "testa F1")
    if args.prune:
        prune(ner, args.prune)
        # the temperature fitted in training was for the weights before pruning
        print(f"temperature refitted on testa: {ner.calibrate(conll / 'eng.testa'):.4g}", file=sys.stderr)
    scores = {}
    for split in ("testa", "testb"):
        r = ner.evaluate(conll / f"eng.{split}")
        scores[split] = {k: round(r[k], 4) for k in ("precision", "recall", "f1")}
        scores[split].update({f"{t}_f1": round(v["f1"], 4) for t, v in r["per_type"].items()})
        print(f"{split}: " + ", ".join(f"{k} {100 * v:.2f}" for k, v in scores[split].items()), file=sys.stderr)
    ner.meta["conll2003_testb"] = scores["testb"]
    save_bundled(ner, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
