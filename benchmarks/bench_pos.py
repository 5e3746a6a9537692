"""POS tagging side by side: fasttag, NLTK's PerceptronTagger, python-crfsuite.

    python benchmarks/bench_pos.py [--corpora ewt,conll2000,brown] [--brown-anchor-epochs 1]

Every system trains on the same sentences and tags the same test sentences
end to end from token lists (feature extraction included), each in its own
process (peak memory is that process's own).  Corpora (../shared/data):
EWT UPOS (train -> test, dev for fasttag's epoch selection), CoNLL-2000 WSJ
POS (column 2, train -> test), Brown with its ~470 tags (first 90% of
sentences -> last 10%).  On Brown the anchors are too slow for full
training: they run ``--brown-anchor-epochs`` epochs and the table compares
time per epoch.  Throughput ratios use CPU seconds (steadier than wall time
on a shared machine).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import anchors  # noqa: E402
import harness as H  # noqa: E402


def fasttag_pos(train, test, dev=None, epochs=10, decoder="viterbi", tag_repeat=1):
    """fasttag's Tagger: train (best epoch on dev when given), tag the test
    sentences in one batch (``tag_repeat`` times, for a steadier rate)."""
    from fasttag import Tagger

    with H.timer() as t_train:
        tagger = Tagger.train(train, dev=dev, epochs=epochs, decoder=decoder, verbose=False)
    with H.timer() as t_tag:
        for _ in range(tag_repeat):
            pred = tagger.tag_sents([words for words, _ in test])
    size = len(tagger.to_bytes())
    return H.make_result(f"fasttag ({decoder})", train=t_train, tag=t_tag,
                         n_items=sum(len(w) for w, _ in test) * tag_repeat, model_bytes=size, epochs=epochs,
                         best_epoch=tagger.model.training_info.get("best_epoch"),
                         **H.tagging_metrics(test, pred, H.vocabulary(train)))


def fasttag_bundled(train, test, tag_repeat=1):
    """The bundled English model (trained by scripts/build_en_model.py with
    the shuffling seed chosen on dev), tagging the same test sentences."""
    import fasttag

    with H.timer() as t_load:
        tagger = fasttag.load()
    with H.timer() as t_tag:
        for _ in range(tag_repeat):
            pred = tagger.tag_sents([words for words, _ in test])
    return H.make_result("fasttag bundled model", load=t_load, tag=t_tag,
                         n_items=sum(len(w) for w, _ in test) * tag_repeat,
                         model_bytes=len(tagger.to_bytes()), epochs=None,
                         **H.tagging_metrics(test, pred, H.vocabulary(train)))


def load_corpus(name):
    if name == "ewt":
        d = ("en_ewt",)
        return (H.load_conllu(H.data_path(*d, "en_ewt-ud-train.conllu")),
                H.load_conllu(H.data_path(*d, "en_ewt-ud-dev.conllu")),
                H.load_conllu(H.data_path(*d, "en_ewt-ud-test.conllu")))
    if name == "conll2000":
        return (H.load_columns(H.data_path("conll2000", "train.txt"), 0, 1), None,
                H.load_columns(H.data_path("conll2000", "test.txt"), 0, 1))
    if name == "brown":
        sents = H.load_columns(H.data_path("brown", "brown.conll"), 0, -1)
        cut = int(len(sents) * 0.9)
        return sents[:cut], None, sents[cut:]
    raise SystemExit(f"unknown corpus {name!r}")


def jobs_for(name, train, dev, test, anchor_epochs):
    # every system tags the test set the same number of times
    r = {"tag_repeat": 1 if name == "brown" else 4}
    epochs = 10 if name != "brown" else 5
    jobs = [H.Job("fasttag viterbi", fasttag_pos, (train, test), {"dev": dev, "epochs": epochs, **r}),
            H.Job("fasttag greedy", fasttag_pos, (train, test),
                  {"dev": dev, "epochs": epochs, "decoder": "greedy", **r})]
    if name == "ewt":
        jobs.append(H.Job("fasttag bundled model", fasttag_bundled, (train, test), r))
    if name == "brown":
        jobs += [H.Job("nltk", anchors.nltk_pos, (train, test), {"epochs": anchor_epochs, **r}),
                 H.Job("crfsuite ap", anchors.crfsuite_pos, (train, test),
                       {"algorithm": "ap", "epochs": anchor_epochs, **r})]
    else:
        jobs += [H.Job("nltk", anchors.nltk_pos, (train, test), {"epochs": 5, **r}),
                 H.Job("crfsuite ap", anchors.crfsuite_pos, (train, test), {"algorithm": "ap", "epochs": 10, **r}),
                 H.Job("crfsuite lbfgs", anchors.crfsuite_pos, (train, test), {"algorithm": "lbfgs", **r})]
    return jobs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="ewt,conll2000,brown")
    parser.add_argument("--brown-anchor-epochs", type=int, default=1)
    args = parser.parse_args()
    print(f"# bench_pos: {' '.join(sys.argv[1:]) or '(defaults)'}\n")
    for name in args.corpora.split(","):
        train, dev, test = load_corpus(name)
        print(f"## {name}: {len(train)} training / {len(test)} test sentences", flush=True)
        rows, failures = H.run_jobs(jobs_for(name, train, dev, test, args.brown_anchor_epochs))
        by = {r["label"]: r for r in rows}
        for r in rows:
            r["train_cpu_per_epoch"] = r["train_cpu_s"] / r["epochs"] if r.get("epochs") else None
            r.setdefault("train_cpu_s", None)
        ft = by.get("fasttag viterbi")
        columns = [
            ("label", "system"), ("epochs", "epochs"),
            ("accuracy", "acc %", H.pct), ("known_accuracy", "known %", H.pct),
            ("unknown_accuracy", "unknown %", H.pct),
            ("train_cpu_s", "train CPU s", "{:.1f}"), ("train_cpu_per_epoch", "CPU s/epoch", "{:.2f}"),
            ("tag_tokens_per_cpu_s", "tag tokens/CPU s", "{:,.0f}"),
            ("model_bytes", "model MB", H.mb), ("peak_rss_mb", "peak RSS MB", "{:.0f}"),
        ]
        print()
        print(H.format_table(rows, columns))
        if ft:
            print()
            for label in ("nltk", "crfsuite ap", "crfsuite lbfgs", "fasttag greedy"):
                if label in by:
                    other = by[label]
                    print(f"- fasttag viterbi vs {label}: tagging "
                          f"{H.ratio(ft['tag_tokens_per_cpu_s'], other['tag_tokens_per_cpu_s'])} faster, "
                          f"training per epoch {H.ratio(other['train_cpu_per_epoch'], ft['train_cpu_per_epoch'])} "
                          f"faster, accuracy {100 * (ft['accuracy'] - other['accuracy']):+.2f} points")
        for label, tb in failures:
            print(f"- FAILED {label}: {tb.splitlines()[-1] if tb else ''}")
        print(flush=True)


if __name__ == "__main__":
    main()
