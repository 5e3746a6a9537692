"""Smoke test of the benchmark anchors (not a pytest test).

Runs every anchor on a tiny slice of each corpus, each in its own process
(``harness.run_isolated``), and prints one Markdown table per task. The
numbers only show that everything runs end to end; they say nothing about
the systems (tiny training sets, one or two epochs).

    python benchmarks/smoke_anchors.py [--train 300] [--test 100]

Exits with status 1 if any anchor failed. fasttag's own functions can be
added to the job lists below (same result shape: ``harness.make_result``).
"""
from __future__ import annotations

import argparse
import sys
import time

try:
    from . import anchors as A, harness as H
except ImportError:
    import anchors as A
    import harness as H


def self_check() -> None:
    """Scorers on hand-made cases (cheap; catches a broken scorer before it
    misreports every system)."""
    # IOB1 -> IOB2, and conlleval span semantics on IOB1 and IOB2 input.
    iob1 = ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "O", "I-MISC"]
    iob2 = H.iob1_to_iob2(iob1)
    assert iob2 == ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "O", "B-MISC"], iob2
    assert H.iob1_to_iob2(iob2) == iob2
    assert H.conll_spans(iob1) == H.conll_spans(iob2) == {
        (0, 2, "PER"), (2, 3, "PER"), (4, 5, "LOC"), (5, 6, "ORG"), (7, 8, "MISC")}
    r = H.conll_f1([["B-NP", "I-NP", "O", "B-VP"]], [["B-NP", "B-NP", "O", "B-VP"]])
    assert (round(r["precision"], 4), round(r["recall"], 4)) == (0.3333, 0.5), r
    assert r["per_type"] == {"NP": 0.0, "VP": 1.0}, r
    # Segmentation scores, OOV/IV split.
    s = H.score_seg(["ab c de"], [["a", "b", "c", "de"]], {"ab", "c"})
    assert (s["precision"], s["recall"]) == (0.5, 2 / 3), s
    assert (s["iv_recall"], s["oov_recall"]) == (0.5, 1.0), s
    # Full-width mapping round trip.
    assert A.to_fullwidth("2001年A%") == "２００１年Ａ％"
    assert A._restore("2001年 A", ["２００１年", "Ａ"]) == ["2001年", "A"]
    assert A.from_bmes("abcd", A.bmes(["ab", "c", "d"])) == ["ab", "c", "d"]
    print("scorer self-check: ok")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", type=int, default=300, help="training sentences per task")
    ap.add_argument("--test", type=int, default=100, help="test sentences per task")
    ap.add_argument("--cws-train", type=int, default=200, help="training lines for segmentation")
    args = ap.parse_args(argv)
    ntr, nte = args.train, args.test

    self_check()
    t0 = time.perf_counter()

    # ---- data (tiny slices) ------------------------------------------------
    ewt_train = H.load_conllu(H.data_path("en_ewt", "en_ewt-ud-train.conllu"))[:ntr]
    ewt_test = H.load_conllu(H.data_path("en_ewt", "en_ewt-ud-test.conllu"))[:nte]
    c2k_train = H.load_columns_all(H.data_path("conll2000", "train.txt"))[:ntr]
    c2k_test = H.load_columns_all(H.data_path("conll2000", "test.txt"))[:nte]
    c3_train = H.load_columns_all(H.data_path("conll2003", "eng.train"))[:ntr]
    c3_test = H.load_columns_all(H.data_path("conll2003", "eng.testb"))[:nte]
    pd_train = H.load_segmented(H.data_path("zh_pd1998", "train.txt"))[:args.cws_train]
    pku_raw = H.load_lines(H.data_path("sighan2005", "pku_test.utf8"))[:nte]
    pku_gold = H.load_segmented(H.data_path("sighan2005", "pku_test_gold.utf8"))[:nte]
    pku_words = H.load_wordlist(H.data_path("sighan2005", "pku_training_words.utf8"))

    from sklearn.datasets import load_diabetes, load_digits

    Xd, yd = load_digits(return_X_y=True)
    Xr, yr = load_diabetes(return_X_y=True)
    tok_train = [(f, t) for w, tags in ewt_train for f, t in zip(A.token_feature_strings(w), tags)]
    tok_test = [(f, t) for w, tags in ewt_test for f, t in zip(A.token_feature_strings(w), tags)]
    htr_X, htr_y = [f for f, _ in tok_train], [t for _, t in tok_train]
    hte_X, hte_y = [f for f, _ in tok_test], [t for _, t in tok_test]

    J = H.Job
    seg_kw = dict(gold=pku_gold, training_words=pku_words, return_pred=False)
    tasks = {
        f"POS (en_ewt UPOS, {ntr} train / {nte} test sentences)": [
            J("nltk", A.nltk_pos, (ewt_train, ewt_test), {"epochs": 2}),
            J("crfsuite ap", A.crfsuite_pos, (ewt_train, ewt_test), {"algorithm": "ap", "epochs": 2}),
            J("crfsuite lbfgs", A.crfsuite_pos, (ewt_train, ewt_test), {"algorithm": "lbfgs", "epochs": 10}),
        ],
        f"Chunking (CoNLL-2000, {ntr} / {nte})": [
            J("crfsuite ap", A.crfsuite_spans, (c2k_train, c2k_test), {"algorithm": "ap", "epochs": 2}),
            J("nltk", A.nltk_spans, (c2k_train, c2k_test), {"epochs": 2}),
        ],
        f"NER (CoNLL-2003 train / testb, {ntr} / {nte}, IOB1 -> IOB2)": [
            J("crfsuite ap", A.crfsuite_spans, (c3_train, c3_test), {"algorithm": "ap", "epochs": 2}),
            J("nltk", A.nltk_spans, (c3_train, c3_test), {"epochs": 2}),
        ],
        f"Segmentation (PD1998 {args.cws_train} lines -> SIGHAN PKU test {nte} lines)": [
            J("pkuseg (default dict)", A.pkuseg_cws, (pd_train, pku_raw), {"epochs": 1, **seg_kw}),
            J("pkuseg (no dict)", A.pkuseg_cws, (pd_train, pku_raw),
              {"epochs": 1, "user_dict": None, **seg_kw}),
            J("crfsuite ap", A.crfsuite_cws, (pd_train, pku_raw), {"epochs": 2, **seg_kw}),
            J("jieba", A.jieba_cws, (pku_raw,), seg_kw),
        ],
        "Linear (sklearn digits / diabetes; hashed: en_ewt tokens -> UPOS)": [
            J("Perceptron", A.sklearn_linear, ("Perceptron", Xd[:1200], yd[:1200], Xd[1200:], yd[1200:]),
              {"max_iter": 5, "tol": None}),
            J("SGD hinge", A.sklearn_linear, ("SGDClassifier", Xd[:1200], yd[:1200], Xd[1200:], yd[1200:]),
              {"loss": "hinge", "max_iter": 5, "tol": None}),
            J("SGD log_loss", A.sklearn_linear, ("SGDClassifier", Xd[:1200], yd[:1200], Xd[1200:], yd[1200:]),
              {"loss": "log_loss", "max_iter": 5, "tol": None}),
            J("SGD avg perceptron", A.sklearn_linear,
              ("SGDClassifier", Xd[:1200], yd[:1200], Xd[1200:], yd[1200:]),
              {"loss": "perceptron", "average": True, "max_iter": 5, "tol": None}),
            J("PA", A.sklearn_linear, ("PassiveAggressiveClassifier", Xd[:1200], yd[:1200], Xd[1200:], yd[1200:]),
              {"max_iter": 5, "tol": None}),
            J("SGDRegressor", A.sklearn_linear, ("SGDRegressor", Xr[:350], yr[:350], Xr[350:], yr[350:]),
              {"max_iter": 50, "tol": None}),
            J("hashed Perceptron", A.sklearn_hashed_tokens, (htr_X, htr_y, hte_X, hte_y),
              {"estimator": ("Perceptron", {"max_iter": 5, "tol": None})}),
            J("hashed SGD avg perceptron", A.sklearn_hashed_tokens, (htr_X, htr_y, hte_X, hte_y),
              {"estimator": ("SGDClassifier", {"loss": "perceptron", "average": True,
                                               "max_iter": 5, "tol": None})}),
        ],
    }

    timing = [
        ("train_cpu_s", "train CPU s", "{:.2f}"),
        ("train_wall_s", "train wall s", "{:.2f}"),
        ("model_bytes", "model MB", lambda v: H.mb(v, 2)),
        ("peak_rss_mb", "peak RSS MB", "{:.0f}"),
        ("baseline_rss_mb", "base RSS MB", "{:.0f}"),
    ]
    columns = {
        "POS": [("accuracy", "acc", H.pct), ("known_accuracy", "known", H.pct),
                ("unknown_accuracy", "unk", H.pct), ("tag_tokens_per_s", "tok/s", "{:,.0f}")],
        "Chunking": [("f1", "F1", H.pct), ("precision", "P", H.pct), ("recall", "R", H.pct),
                     ("tag_tokens_per_s", "tok/s", "{:,.0f}")],
        "NER": [("f1", "F1", H.pct), ("precision", "P", H.pct), ("recall", "R", H.pct),
                ("tag_tokens_per_s", "tok/s", "{:,.0f}")],
        "Segmentation": [("f1", "F1", H.pct), ("precision", "P", H.pct), ("recall", "R", H.pct),
                         ("oov_recall", "OOV R", H.pct), ("iv_recall", "IV R", H.pct),
                         ("tag_chars_per_s", "chars/s", "{:,.0f}")],
        "Linear": [("accuracy", "acc", H.pct), ("r2", "R²", "{:.3f}"),
                   ("tag_rows_per_s", "rows/s", "{:,.0f}")],
    }

    all_failures = []
    for title, jobs in tasks.items():
        print(f"\n### {title}", flush=True)
        rows, failures = H.run_jobs(jobs)
        all_failures += failures
        cols = [("label", "run"), ("system", "system")]
        cols += columns[title.split(" ")[0]] + timing
        print()
        print(H.format_table(rows, cols), flush=True)
        if rows and "train_cpu_s" in rows[0]:
            base = rows[0]
            print("\ntrain CPU relative to first row: " + ", ".join(
                f"{r['label']} {H.ratio(r.get('train_cpu_s'), base['train_cpu_s'])}" for r in rows))

    print(f"\nsmoke test finished in {time.perf_counter() - t0:.0f}s; "
          f"{len(all_failures)} failure(s)")
    for label, tb in all_failures:
        print(f"\n--- {label} ---\n{tb}")
    return 1 if all_failures else 0


if __name__ == "__main__":
    sys.exit(main())
