"""Would a token column learned from other data help span tagging?  CoNLL-2000, CoNLL-2003.

    python benchmarks/bench_span_columns.py --clusters CLUSTERS [--task chunk|ner]
        [--columns vectors,xpos] [--cv-seeds 0,1,2] [--test-seeds 0,1,2,3,4,5]
        [--ensemble-seeds 0] [--processes 2]

Each candidate is one or more feature columns after the corpus's own (the
POS tags of CoNLL-2000; the POS and chunk tags of CoNLL-2003), given to
``SpanTagger`` (the task's default options and templates with Brown
clusters) with a few templates of its own:

* ``vectors``: distributional word classes, the other way to learn from
  unlabeled text than Brown clusters (issue 13 names both).  Each
  lowercased word of the clustering text (``bench_clusters.py``'s:
  unlabeled_en and Brown's words, 2.7M tokens) seen 3 times or more is
  described by the counts of the 2,000 commonest words at offsets -2, -1,
  +1 and +2; the rows are normalised and square-rooted (Hellinger), reduced
  to 100 dimensions by a randomized SVD and clustered by k-means into 64,
  256 and 1,024 classes: three columns, coarse to fine, "-" for other
  words.
* ``xpos``: a second opinion on the POS tags: the Penn Treebank tags of a
  fasttag ``Tagger`` trained on EWT's XPOS column (with the same
  clusters), a different tagger trained on a different corpus from the
  tagger that wrote the corpus's POS tags.

Each is scored against the tagger without the column on the same seeds:
by k-fold cross-validation of the training set (single runs: every
training sentence tagged once, by the model trained on the other folds;
chunking only, NER has its own dev set: testa, whose score of the kept
epoch is printed too) and on the test set (CoNLL-2003 testb; single
runs, and ``--ensemble 4``).  Needs ``../shared/data`` and scikit-learn.
"""
import argparse
import multiprocessing
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench_clusters  # noqa: E402
import harness as H  # noqa: E402

CLASSES = (64, 256, 1024)
CORPORA = {"chunk": ("conll2000", "train.txt", None, "test.txt"),
           "ner": ("conll2003", "eng.train", "eng.testa", "eng.testb")}
SPLITS = {}          # name -> {"train", "dev", "test": [Sentence]}: the workers fork after it is set


def column_templates(name, k):
    """The templates of candidate ``name`` whose first column is ``ck``."""
    if name == "vectors":
        # the classes at 0, the coarsest and finest at +-1, the middle one with the POS tag and its bigrams
        a, b, c = f"c{k}", f"c{k + 1}", f"c{k + 2}"
        return [f"{a}[0]", f"{b}[0]", f"{c}[0]", f"{a}[-1]", f"{a}[1]", f"{c}[-1]", f"{c}[1]",
                f"c1[0]|{b}[0]", f"{b}[-1]|{b}[0]", f"{b}[0]|{b}[1]"]
    if name == "xpos":
        a = f"c{k}"
        return [f"{a}[0]", f"{a}[-1]", f"{a}[1]", f"c1[0]|{a}[0]", f"{a}[-1]|{a}[0]", f"{a}[0]|{a}[1]"]
    return []


def word_classes(min_count=3, n_context=2000, dims=100):
    """{lowercased word: (class at 64, 256, 1024)} from the clustering text."""
    import scipy.sparse as sp
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.utils.extmath import randomized_svd
    sents = [[w.lower() for w in s] for s in bench_clusters.clustering_sentences()]
    counts = Counter(w for s in sents for w in s)
    vocab = [w for w, c in counts.most_common() if c >= min_count]
    ids = {w: i for i, w in enumerate(vocab)}
    context = {w: i for i, w in enumerate(vocab[:n_context])}
    width = n_context + 2                    # the context words, any other word, a sentence boundary
    rows, cols = [], []
    for s in sents:
        padded = [None, None] + s + [None, None]
        for i in range(2, len(padded) - 2):
            row = ids.get(padded[i])
            if row is None:
                continue
            for k, off in enumerate((-2, -1, 1, 2)):
                c = padded[i + off]
                rows.append(row)
                cols.append(k * width + (n_context + 1 if c is None else context.get(c, n_context)))
    m = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(vocab), 4 * width))
    m = sp.diags(1 / np.asarray(m.sum(1)).ravel()) @ m
    m.data = np.sqrt(m.data)
    u, s, _ = randomized_svd(m, dims, random_state=0)
    x = u * np.sqrt(s)
    x /= np.linalg.norm(x, axis=1, keepdims=True) + 1e-12
    labels = [MiniBatchKMeans(k, random_state=0, n_init=3, batch_size=4096).fit(x).labels_ for k in CLASSES]
    return {w: tuple(f"{k}:{lab[i]}" for k, lab in zip(CLASSES, labels)) for i, w in enumerate(vocab)}


def xpos_tagger(clusters):
    """A tagger of EWT's XPOS column."""
    from fasttag import Tagger
    from fasttag.text import formats as ftio
    def read(name):
        return [(s.words, s.tags) for s in ftio.read_conllu(H.data_path("en_ewt", name), column="xpos")]
    return Tagger.train(read("en_ewt-ud-train.conllu"), dev=read("en_ewt-ud-dev.conllu"), seed=0,
                        verbose=False, clusters=clusters)


def with_columns(sentences, columns):
    """The sentences with ``columns`` (per sentence, per token, a tuple)
    before the tag column; their other lines (``-DOCSTART-``) kept."""
    from fasttag.text.formats import Sentence
    out = []
    for s, extra in zip(sentences, columns):
        rows = [[*r[:-1], *x, r[-1]] for r, x in zip(s.rows, extra)]
        out.append(Sentence(list(s.words), list(s.tags), rows, list(s.lines), list(s.word_lines), s.start_line))
    return out


def column_options(task, sentences):
    """NER's options of the recorded runs: every column between the word
    and the tag a feature, and the document features (chunking's defaults
    are those already)."""
    if task != "ner":
        return {}
    return {**H.NER_COLUMN_OPTIONS, "feature_columns": list(range(1, len(sentences[0].rows[0]) - 1))}


def predict(job):
    """(job, predicted tags, dev score or None) of the tagger with column
    ``name``: trained on the folds other than ``fold`` and tagging it, or
    (fold None) trained on train and tagging test."""
    task, name, seed, fold, folds, ensemble, clusters, templates = job
    from fasttag import SpanTagger
    train, dev, test = (SPLITS[name][part] for part in ("train", "dev", "test"))
    dev = dev or None
    if fold is not None:
        lo, hi = fold * len(train) // folds, (fold + 1) * len(train) // folds
        train, test = train[:lo] + train[hi:], train[lo:hi]
    model = SpanTagger.train(train, dev=dev, task=task, seed=seed, verbose=False, clusters=clusters,
                             templates=templates, ensemble=ensemble, **column_options(task, train))
    return job, model.tag_sents(test), model.model.training_info.get("dev_score")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clusters", required=True, help="a clusters file (as bench_clusters.py uses)")
    ap.add_argument("--task", choices=sorted(CORPORA), default="chunk")
    ap.add_argument("--columns", default="vectors,xpos")
    ap.add_argument("--cv-seeds", default="0,1,2")
    ap.add_argument("--test-seeds", default="0,1,2,3,4,5")
    ap.add_argument("--ensemble-seeds", default="0")
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--processes", type=int, default=2)
    args = ap.parse_args()
    from fasttag.text import formats as ftio
    names = ["none"] + args.columns.split(",")
    seeds = {k: [int(x) for x in v.split(",") if x] for k, v in
             (("cv", args.cv_seeds), ("test", args.test_seeds), ("ensemble", args.ensemble_seeds))}
    corpus, *files = CORPORA[args.task]
    plain = {part: [] if f is None else list(ftio.read_conll(H.data_path(corpus, f)))
             for part, f in zip(("train", "dev", "test"), files)}
    SPLITS["none"] = plain
    if plain["dev"]:
        seeds["cv"] = []                    # cross-validation only where there is no dev set
    t0 = time.process_time()
    if "vectors" in names:
        classes = word_classes()
        SPLITS["vectors"] = {part: with_columns(s, [[classes.get(w.lower(), ("-",) * len(CLASSES))
                                                     for w in x.words] for x in s])
                             for part, s in plain.items()}
        print(f"vectors: {len(classes):,} words, {time.process_time() - t0:.0f} CPU s", flush=True)
    if "xpos" in names:
        SPLITS["xpos"] = {}
        tagger = xpos_tagger(args.clusters)
        for part, s in plain.items():
            if not s:
                SPLITS["xpos"][part] = s
                continue
            tags = tagger.tag_sents([x.words for x in s])
            agree = np.mean([t == r[1] for x, ts in zip(s, tags) for t, r in zip(ts, x.rows)])
            SPLITS["xpos"][part] = with_columns(s, [[(t,) for t in ts] for ts in tags])
            print(f"xpos on {part}: agrees with the corpus's POS tags on {100 * agree:.2f}% of tokens", flush=True)
    gold = {part: [H.iob1_to_iob2(s.tags) for s in sents] for part, sents in plain.items()}
    n = len(plain["train"])
    # the task's default templates (a one-epoch model of a few sentences holds them), then each column's
    from fasttag import SpanTagger
    defaults = SpanTagger.train(plain["train"][:200], task=args.task, epochs=1, verbose=False,
                                clusters=args.clusters,
                                **column_options(args.task, plain["train"])).model.templates.names
    first = len(plain["train"][0].rows[0]) - 1      # the first added column's number: c1 .. are the corpus's
    templates = {name: list(defaults) + column_templates(name, first) for name in names}
    jobs = [(args.task, name, seed, f, args.folds, 1, args.clusters, templates[name])
            for seed in seeds["cv"] for name in names for f in range(args.folds)]
    jobs += [(args.task, name, seed, None, args.folds, 1, args.clusters, templates[name])
             for seed in seeds["test"] for name in names]
    jobs += [(args.task, name, seed, None, args.folds, 4, args.clusters, templates[name])
             for seed in seeds["ensemble"] for name in names]
    cv_pred, scores = {}, {}
    with ProcessPoolExecutor(args.processes, mp_context=multiprocessing.get_context("fork")) as pool:
        for (_, name, seed, fold, folds, ensemble, *_), tags, dev in pool.map(predict, jobs):
            tags = [H.iob1_to_iob2(t) for t in tags]
            if fold is None:
                scores["test", ensemble, name, seed] = 100 * H.conll_f1(gold["test"], tags)["f1"]
                if dev is not None:
                    scores["dev", ensemble, name, seed] = 100 * dev
                continue
            pred = cv_pred.setdefault((name, seed), [None] * n)
            pred[fold * n // folds:(fold + 1) * n // folds] = tags
            if all(p is not None for p in pred):
                scores["cv", 1, name, seed] = 100 * H.conll_f1(gold["train"], pred)["f1"]
    print()
    for kind, ensemble, label in (("cv", 1, f"{args.folds}-fold CV of train, single runs"),
                                  ("dev", 1, "dev, single runs (the kept epoch's)"),
                                  ("test", 1, "test, single runs"),
                                  ("dev", 4, "dev, 4-run ensembles"), ("test", 4, "test, 4-run ensembles")):
        rows = sorted({k[3] for k in scores if k[:2] == (kind, ensemble)})
        if not rows:
            continue
        print(f"{label}:\n\n| seed | " + " | ".join(names) + " |\n|---:|" + "---:|" * len(names))
        for seed in rows + ["mean"]:
            vals = [np.mean([scores[kind, ensemble, name, s] for s in rows]) if seed == "mean"
                    else scores[kind, ensemble, name, seed] for name in names]
            print(f"| {seed} | " + " | ".join(f"{v:.2f}" for v in vals) + " |")
        print()


if __name__ == "__main__":
    main()
