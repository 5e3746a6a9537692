"""Build the bundled English tokenizer, fasttag/models/en_ewt_tok.ftm.

    python scripts/build_tok_model.py [--data ../shared/data] [--epochs 20] [--prune 0.0]

Trains the ``tok`` task (tokens, multiword tokens and sentences of raw
text) on UD English EWT train, keeps the epoch with the best mean of
token and sentence F1 on dev (the test set plays no part in the choice),
optionally drops averaged weights below ``--prune`` in absolute value (the
bundled file must stay under 10 MB), reports the scores on test, and writes
the model with its corpus and licence in the header.  Run from the
repository root; the corpora are read in place.
"""
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fasttag.tasks.tok import Tokenizer  # noqa: E402
from scripts.bundle import build_options, need_corpus, prune, report_training, save_bundled  # noqa: E402

CORPUS = "UD English EWT v2.15 (train; dev for model selection): raw text rebuilt from the tokens and SpaceAfter"
LICENCE = "CC BY-SA 4.0"


def main():
    args = build_options(__doc__, "en_ewt_tok.ftm", epochs=20).parse_args()

    ewt = Path(args.data) / "en_ewt"
    train = ewt / "en_ewt-ud-train.conllu"
    need_corpus(train)
    t0 = time.process_time()
    tok = Tokenizer.train(train, dev=ewt / "en_ewt-ud-dev.conllu", epochs=args.epochs, seed=args.seed,
                          verbose=True, corpus=CORPUS, licence=LICENCE)
    report_training(tok, t0, "dev mean F1")
    if args.prune:
        prune(tok, args.prune)
    scores = {}
    for split in ("dev", "test"):
        r = tok.evaluate(ewt / f"en_ewt-ud-{split}.conllu")
        scores[split] = {k: round(r[k], 4) for k in ("token_f1", "sentence_f1", "word_f1")}
        print(f"EWT {split}: " + ", ".join(f"{k} {100 * v:.2f}" for k, v in scores[split].items()),
              file=sys.stderr)
    tok.meta["ewt_test"] = scores["test"]
    save_bundled(tok, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
