"""Build the bundled Chinese segmentation model, fasttag/models/zh_pku_seg.ftm.

    python scripts/build_zh_model.py [--data ../shared/data] [--epochs 12] [--prune 0.04]

Trains on People's Daily 1998 (``zh_pd1998/train.txt``, PKU segmentation
standard), keeps the epoch with the best word F1 on ``zh_pd1998/dev.txt``,
drops averaged weights below ``--prune`` in absolute value (the bundled file
must stay under 10 MB; 0.04 is in the units of 3-best MIRA, the segmenter's
default algorithm), reports the SIGHAN 2005 PKU test scores when that
corpus is present, and writes the model with its corpus and licence in the
header.  Run from the repository root; the corpora are read in place.
"""
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fasttag.tasks.seg import Segmenter  # noqa: E402
from scripts.bundle import build_options, need_corpus, report_training, save_bundled  # noqa: E402

CORPUS = "People's Daily 1998 (January-February), PKU segmentation standard: zh_pd1998/train.txt"
LICENCE = "trained on a corpus released for research purposes: research use"


def main():
    ap = build_options(__doc__, "zh_pku_seg.ftm", epochs=12, prune=0.04)
    ap.add_argument("--folds", type=int, default=3, help="jackknife folds of the dictionary features")
    args = ap.parse_args()

    data = Path(args.data)
    train, dev = data / "zh_pd1998" / "train.txt", data / "zh_pd1998" / "dev.txt"
    need_corpus(train)
    t0 = time.process_time()
    seg = Segmenter.train(train, dev, epochs=args.epochs, seed=args.seed, folds=args.folds,
                          prune=args.prune, verbose=True, corpus=CORPUS, licence=LICENCE)
    report_training(seg, t0, "PD dev word F1")
    test = data / "sighan2005" / "pku_test_gold.utf8"
    if test.exists():
        r = seg.evaluate(test, words=data / "sighan2005" / "pku_training_words.utf8")
        seg.meta["sighan2005_pku_test"] = {k: round(r[k], 4) for k in
                                          ("precision", "recall", "f1", "oov_rate", "oov_recall", "iv_recall")}
        print("SIGHAN 2005 PKU test: " + ", ".join(f"{k} {100 * v:.2f}" for k, v in
                                                  seg.meta["sighan2005_pku_test"].items()), file=sys.stderr)
    save_bundled(seg, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
