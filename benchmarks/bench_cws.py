"""Chinese word segmentation: fasttag against spacy-pkuseg, python-crfsuite,
jieba and THULAC, side by side, in one run.

    python benchmarks/bench_cws.py [--quick] [--epochs N] [--pkuseg-epochs N]
                                   [--unlabeled [--n-clusters N] [--clusters FILE] [--no-candidates]]
                                   [--fasttag-only] [--options JSON]

Training: ``zh_pd1998/train.txt`` (People's Daily 1998, PKU standard);
fasttag keeps its best epoch on ``zh_pd1998/dev.txt``.  Tests:

* SIGHAN 2005 PKU: segment ``sighan2005/pku_test.utf8``, score against
  ``pku_test_gold.utf8``, OOV with respect to ``pku_training_words.utf8``;
* ``zh_pd1998/dev.txt`` (gold words joined as input), OOV with respect to
  the PD 1998 training vocabulary.  fasttag selected its epoch on this set,
  so its numbers here are slightly optimistic;
* UD Chinese GSDSimp dev, when present: another corpus and another
  segmentation standard (every system scores about 80-85), OOV with
  respect to the PD 1998 training vocabulary: a second opinion where two
  fasttag settings tie on PD dev.

``--options JSON`` adds training options to both trained fasttag rows
(for example ``'{"algorithm": "perceptron"}'``).

Every system runs in its own fresh process (``harness.run_isolated``), so
its peak memory (VmHWM) is its own; times are CPU seconds; speed is
characters per CPU second, single-threaded, over both test sets, from raw
lines to word lists.  The anchors run the way their users run them:
spacy-pkuseg and CRFsuite get their input mapped to full width (the PD 1998
convention; without it they lose 3 points); jieba and THULAC use their
bundled dictionaries/models on the input as it is.  fasttag needs no
mapping: it folds widths in its features.

``--quick`` skips spacy-pkuseg (about 11 minutes for 2 epochs).  Needs
``../shared/data`` (relative to the repository root).

Unlabeled text (issue 13): ``--unlabeled`` takes the PD 1998 training
text without its spaces, leaving out every line that shares 20 characters
with the PKU test text or equals a test line (PKU's test text is People's
Daily too), learns ``--n-clusters`` Brown clusters of its characters
(default 200; ``--clusters FILE``: a clusters file made elsewhere
instead) and adds a row "fasttag + unlabeled" trained with them
(``clusters=``) and with the text's word candidates (``unlabeled=``;
``--no-candidates``: clusters only).
"""
import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness as H  # noqa: E402
import anchors  # noqa: E402


def fasttag_cws(train_path, dev_path, test_lines, epochs=12, prune=0.04, model_path=None, clusters=None,
                unlabeled=None, options=None):
    """Train fasttag's segmenter (or load ``model_path``) and segment
    ``test_lines`` (raw lines) one batch of lines at a time.  ``clusters``:
    a file of character clusters to train with; ``unlabeled``: a file of
    raw text for the word candidates; ``options``: further training
    options."""
    from fasttag import load
    from fasttag import Segmenter

    train_t = None
    with tempfile.TemporaryDirectory(prefix="bench_fasttag_") as tmp:
        if model_path is None:
            extra = {k: v for k, v in (("clusters", clusters), ("unlabeled", unlabeled)) if v is not None}
            extra.update(options or {})
            with H.timer() as train_t:
                seg = Segmenter.train(train_path, dev_path, epochs=epochs, prune=prune, verbose=False, **extra)
                path = os.path.join(tmp, "zh.ftm")
                seg.save(path)
            best = seg.model.training_info.get("best_epoch")
        else:
            path = str(model_path)
            best = None
        with H.timer() as load_t:
            seg = load(path)
        size = os.path.getsize(path)
        with H.timer() as tag_t:
            pred = list(seg.segment_lines(test_lines))
    n_chars = sum(sum(not c.isspace() for c in line) for line in test_lines)
    name = "fasttag" if model_path is None else "fasttag (bundled model)"
    if clusters is not None or unlabeled is not None:
        name = "fasttag + unlabeled"
    res = H.make_result(name, train=train_t, load=load_t, tag=tag_t, n_items=n_chars, unit="chars",
                        model_bytes=size, epochs=epochs if model_path is None else None, best_epoch=best)
    res["pred"] = pred
    return res


def unlabeled_text(train_sents, test_lines, shingle=20):
    """The PD training text without its spaces (width-folded), less every
    line that equals a test line or shares ``shingle`` characters with the
    test text; returns (lines, number left out)."""
    from fasttag.features.normalize import normalize_text

    test = {normalize_text("".join(line.split())) for line in test_lines} - {""}
    pieces = {t[i:i + shingle] for t in test for i in range(max(1, len(t) - shingle + 1))}
    kept, dropped = [], 0
    for ws in train_sents:
        line = normalize_text("".join(ws))
        if line in test or any(line[i:i + shingle] in pieces for i in range(max(1, len(line) - shingle + 1))):
            dropped += 1
        elif line:
            kept.append(line)
    return kept, dropped


def char_clusters(lines, n_clusters, path):
    """Learn ``n_clusters`` Brown clusters of the characters of ``lines``
    and save them at ``path``; returns (words, CPU seconds)."""
    from fasttag.features.segmentation import character_sentences
    from fasttag.features.clusters import cluster

    with H.timer() as t:
        clusters = cluster(character_sentences(lines), n_clusters=n_clusters, min_count=2)
        clusters.save(path)
    return len(clusters), t.cpu


def gsd_dev():
    """UD Chinese GSDSimp dev as word lists, or [] when it is absent."""
    from fasttag.text import formats as ftio
    try:
        path = H.data_path("zh_gsdsimp", "zh_gsdsimp-ud-dev.conllu")
    except SystemExit:
        return []
    return [s.words for s in ftio.read_conllu(path)]


def thulac_cws(test_lines):
    """THULAC's bundled model (``thulac.thulac(seg_only=True)``), per line."""
    import thulac

    with H.quiet():
        with H.timer() as load_t:
            th = thulac.thulac(seg_only=True)
    with H.timer() as tag_t:
        pred = [th.cut(line, text=True).split() if line.strip() else [] for line in test_lines]
    n_chars = sum(sum(not c.isspace() for c in line) for line in test_lines)
    package = Path(thulac.__file__).resolve().parent / "models"
    size = sum(f.stat().st_size for f in package.glob("cws_*")) if package.is_dir() else None
    res = H.make_result("THULAC (bundled model)", load=load_t, tag=tag_t, n_items=n_chars, unit="chars",
                        model_bytes=size)
    res["pred"] = pred
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="skip spacy-pkuseg training")
    ap.add_argument("--epochs", type=int, default=12, help="fasttag epochs (default 12; best on dev kept)")
    ap.add_argument("--prune", type=float, default=0.04,
                    help="fasttag weight pruning threshold (default 0.04, the bundled model's, in 3-best MIRA's units)")
    ap.add_argument("--pkuseg-epochs", type=int, default=2, help="spacy-pkuseg epochs (default 2)")
    ap.add_argument("--crfsuite-epochs", type=int, default=10, help="python-crfsuite 'ap' epochs (default 10)")
    ap.add_argument("--fasttag-only", action="store_true", help="run fasttag's rows only (no anchors)")
    ap.add_argument("--unlabeled", action="store_true",
                    help="also train fasttag with features from the PD training text without its spaces")
    ap.add_argument("--n-clusters", type=int, default=200, metavar="N", help="character clusters (default 200)")
    ap.add_argument("--clusters", metavar="FILE", help="--unlabeled: these character clusters instead")
    ap.add_argument("--no-candidates", action="store_true", help="--unlabeled: clusters only")
    ap.add_argument("--options", type=json.loads, default={}, metavar="JSON",
                    help="further fasttag training options, as a JSON object")
    args = ap.parse_args()

    try:
        train_path = H.data_path("zh_pd1998", "train.txt")
        dev_path = H.data_path("zh_pd1998", "dev.txt")
        test_raw = H.load_lines(H.data_path("sighan2005", "pku_test.utf8"))
        test_gold = H.load_segmented(H.data_path("sighan2005", "pku_test_gold.utf8"))
        pku_words = H.load_wordlist(H.data_path("sighan2005", "pku_training_words.utf8"))
    except SystemExit as exc:        # the shared corpora are absent
        print(f"skipped: {exc}")
        return 0
    train_sents = H.load_segmented(train_path)
    dev_gold = H.load_segmented(dev_path)
    dev_raw = ["".join(ws) for ws in dev_gold]
    pd_words = H.vocabulary(train_sents)
    assert len(test_raw) == len(test_gold)
    gsd_gold = gsd_dev()
    inputs = test_raw + dev_raw + ["".join(ws) for ws in gsd_gold]
    cut, cut2 = len(test_raw), len(test_raw) + len(dev_raw)
    print(f"train {len(train_sents)} lines; PKU test {len(test_raw)} lines, "
          f"{sum(map(len, test_raw)):,} chars; PD dev {len(dev_raw)} lines, {sum(map(len, dev_raw)):,} chars",
          flush=True)

    jobs = [H.Job("fasttag", fasttag_cws, (str(train_path), str(dev_path), inputs),
                  {"epochs": args.epochs, "prune": args.prune, "options": args.options})]
    tmp = tempfile.TemporaryDirectory(prefix="bench_cws_")
    if args.unlabeled:
        lines, dropped = unlabeled_text(train_sents, test_raw)
        raw_path = os.path.join(tmp.name, "unlabeled.txt")
        with open(raw_path, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
        print(f"unlabeled text: {len(lines):,} PD training lines, {sum(map(len, lines)):,} chars "
              f"({dropped} lines sharing 20 characters with the PKU test text left out)", flush=True)
        clusters = args.clusters
        if clusters is None:
            clusters = os.path.join(tmp.name, "char-clusters.txt")
            n_words, cpu = char_clusters(lines, args.n_clusters, clusters)
            print(f"{n_words:,} characters in {args.n_clusters} clusters, {cpu:.1f} CPU s", flush=True)
        jobs.append(H.Job("fasttag + unlabeled", fasttag_cws, (str(train_path), str(dev_path), inputs),
                          {"epochs": args.epochs, "prune": args.prune, "clusters": clusters,
                           "unlabeled": None if args.no_candidates else raw_path, "options": args.options}))
    bundled = H.REPO_ROOT / "fasttag" / "models" / "zh_pku_seg.ftm"
    if bundled.exists():
        jobs.append(H.Job("fasttag (bundled)", fasttag_cws, (None, None, inputs), {"model_path": str(bundled)}))
    if args.fasttag_only:
        pass
    elif not args.quick:
        jobs.append(H.Job("spacy-pkuseg", anchors.pkuseg_cws, (str(train_path), inputs),
                          {"epochs": args.pkuseg_epochs, "fullwidth_input": True}))
    if not args.fasttag_only:
        jobs.append(H.Job("python-crfsuite", anchors.crfsuite_cws, (train_sents, inputs),
                          {"epochs": args.crfsuite_epochs, "algorithm": "ap", "fullwidth_input": True}))
        jobs.append(H.Job("jieba", anchors.jieba_cws, (inputs,), {}))
        jobs.append(H.Job("THULAC", thulac_cws, (inputs,), {}))
    rows, failures = H.run_jobs(jobs)

    for r in rows:
        pred = r.pop("pred")
        pku = H.score_seg(test_gold, pred[:cut], pku_words)
        dev = H.score_seg(dev_gold, pred[cut:cut2], pd_words)
        r.update({f"pku_{k}": v for k, v in pku.items()})
        r.update({f"dev_{k}": v for k, v in dev.items()})
        if gsd_gold:
            r.update({f"gsd_{k}": v for k, v in H.score_seg(gsd_gold, pred[cut2:], pd_words).items()})
        ep = r.get("epochs")
        r["train_cpu_per_epoch"] = r["train_cpu_s"] / ep if r.get("train_cpu_s") and ep else None

    columns = [
        ("system", "system"),
        ("epochs", "epochs", H.plain),
        ("pku_precision", "PKU P", H.pct), ("pku_recall", "PKU R", H.pct), ("pku_f1", "PKU F1", H.pct),
        ("pku_oov_recall", "PKU OOV R", H.pct), ("pku_iv_recall", "PKU IV R", H.pct),
        ("dev_f1", "PD dev F1", H.pct), ("dev_oov_recall", "PD dev OOV R", H.pct),
    ] + ([("gsd_f1", "GSD dev F1", H.pct), ("gsd_oov_recall", "GSD dev OOV R", H.pct)] if gsd_gold else []) + [
        ("train_cpu_s", "train CPU s", H.seconds), ("train_cpu_per_epoch", "CPU s/epoch", H.seconds),
        ("tag_chars_per_cpu_s", "chars/s", H.whole),
        ("peak_rss_mb", "peak RSS MB", H.whole),
        ("model_bytes", "model MB", H.mb),
    ]
    print()
    print(H.format_table(rows, columns))
    print()
    by = {r["label"]: r for r in rows}
    ft = by.get("fasttag")
    if ft:
        def line(text):
            print(f"- {text}")
        print(f"PKU test: OOV rate {H.pct(ft['pku_oov_rate'])}% (vs pku_training_words); "
              f"PD dev: OOV rate {H.pct(ft['dev_oov_rate'])}% (vs PD 1998 train). "
              f"fasttag best epoch {ft.get('best_epoch')} of {ft.get('epochs')}.")
        print()
        line(f"fasttag PKU F1 {H.pct(ft['pku_f1'])} (target >= 95.50), "
             f"OOV recall {H.pct(ft['pku_oov_recall'])} (target >= 81.00)")
        for label in ("spacy-pkuseg", "python-crfsuite", "jieba", "THULAC"):
            o = by.get(label)
            if not o:
                continue
            parts = [f"F1 {100 * (ft['pku_f1'] - o['pku_f1']):+.2f} points",
                     f"speed {H.ratio(ft['tag_chars_per_cpu_s'], o['tag_chars_per_cpu_s'])}"]
            if o.get("train_cpu_per_epoch"):
                parts.append(f"training per epoch {H.ratio(o['train_cpu_per_epoch'], ft['train_cpu_per_epoch'])} faster")
            if o.get("peak_rss_mb"):
                parts.append(f"peak memory {H.ratio(ft['peak_rss_mb'], o['peak_rss_mb'], 2)} of theirs")
            line(f"fasttag vs {label}: " + ", ".join(parts))
    fc = by.get("fasttag + unlabeled")
    if ft and fc:
        print(f"- with unlabeled text: PKU F1 {H.pct(fc['pku_f1'])} ({100 * (fc['pku_f1'] - ft['pku_f1']):+.2f}; "
              f"target >= 96.20), OOV recall {H.pct(fc['pku_oov_recall'])} "
              f"({100 * (fc['pku_oov_recall'] - ft['pku_oov_recall']):+.2f}; target >= 83.00); "
              f"PD dev F1 {H.pct(fc['dev_f1'])} ({100 * (fc['dev_f1'] - ft['dev_f1']):+.2f}); "
              f"speed {H.ratio(fc['tag_chars_per_cpu_s'], ft['tag_chars_per_cpu_s'], 2)}; "
              f"model {H.mb(fc['model_bytes'])} MB")
    tmp.cleanup()
    for label, err in failures:
        print(f"FAILED {label}: {err.strip().splitlines()[-1] if err.strip() else err}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
