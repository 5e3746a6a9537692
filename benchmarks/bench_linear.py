"""fasttag.linear against scikit-learn's linear learners, side by side.

    python benchmarks/bench_linear.py [--quick] [--epochs N] [--seeds N]

Small dense tasks: the exercise's toy regression (n=1000, p=100,
x ~ N(0, I), w* = 1, y = x.w*) and iris, digits, breast_cancer, wine, each
with a fixed stratified 75/25 split (random_state=0) and standardised
features (scaler fitted on the training part); the score is the mean over
``--seeds`` learner seeds (random_state = 0, 1, ...) with the same
parameters on both sides (max_iter=1000, tol=1e-3).

Sparse NLP task: every token of UD English EWT train is a sample labelled
with its UPOS (17 classes), described by ~20 feature strings (word,
lowercase, prefixes and suffixes 1-4, shapes, flags, neighbouring words);
tested on EWT test.  fasttag takes the feature strings directly;
scikit-learn gets them through FeatureHasher(2^20).  Fit time includes
the hashing on both sides; both run exactly ``--epochs`` epochs (tol=None).
Fit times are CPU seconds of the fitting process (``time.process_time``:
both sides are single-threaded, and CPU time is much less disturbed than
wall time by other work on the machine).
Needs ``../shared/data/en_ewt`` (relative to the repository root); the
task is skipped with a message when it is absent.

The multi-layer perceptron (``--mlp``; ``--mlp-only`` for it alone):
fasttag's ``MLPClassifier`` against scikit-learn's with the same layers,
activation, solver (Adam), batch size, learning rate and exactly the same
number of epochs (``n_iter_no_change`` = epochs, so neither stops early) and
the same L2 penalty (scikit-learn divides ``alpha`` by the batch size in each
step, fasttag's objective is mean loss + alpha/2 ||W||^2: fasttag gets
alpha = 1e-4 / 200 where scikit-learn gets 1e-4), on
digits (standardised, the split above, mean over ``--seeds`` seeds, at most
5) and on the EWT token task, where scikit-learn gets the
FeatureHasher(2^``--mlp-hash-bits``) matrix and fasttag the feature strings
folded into the same hash space (``n_features``).  On EWT the MLP is also
set against fasttag's averaged perceptron, to see whether a hidden layer
pays for itself there.  On digits fasttag's dense matrix products use
scipy's BLAS when it is installed, else fasttag's own kernel
(``--mlp-gemm own`` measures that one, ``both`` both); the per-epoch time
is printed to stderr.
"""
import os

# One BLAS thread: process_time then measures one core's work on both sides
# (idle BLAS threads spin and would add their CPU time to scikit-learn's).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness  # noqa: E402

from fasttag import linear as ft  # noqa: E402

from sklearn import datasets  # noqa: E402
from sklearn import linear_model as sk  # noqa: E402
from sklearn.feature_extraction import FeatureHasher  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402


def pairs(common_ft, common_sk):
    """(name, fasttag factory, scikit-learn factory) of every compared learner."""
    return [
        ("Perceptron", lambda s: ft.Perceptron(random_state=s, **common_ft),
         lambda s: sk.Perceptron(random_state=s, **common_sk)),
        ("averaged perceptron", lambda s: ft.AveragedPerceptron(random_state=s, **common_ft),
         lambda s: sk.SGDClassifier(loss="perceptron", penalty=None, learning_rate="constant", eta0=1.0,
                                    average=True, random_state=s, **common_sk)),
        ("PA-I", lambda s: ft.PassiveAggressiveClassifier(random_state=s, **common_ft),
         lambda s: sk.PassiveAggressiveClassifier(random_state=s, **common_sk)),
        ("MIRA vs PA-I", lambda s: ft.PassiveAggressiveClassifier(variant="MIRA", random_state=s, **common_ft),
         lambda s: sk.PassiveAggressiveClassifier(random_state=s, **common_sk)),
        ("SGD hinge", lambda s: ft.SGDClassifier(random_state=s, **common_ft),
         lambda s: sk.SGDClassifier(random_state=s, **common_sk)),
        ("SGD log_loss", lambda s: ft.SGDClassifier(loss="log_loss", random_state=s, **common_ft),
         lambda s: sk.SGDClassifier(loss="log_loss", random_state=s, **common_sk)),
    ]


def timed_fit(est, X, y):
    """CPU seconds of the fit (the machine may be shared: wall time is noisy)."""
    t = time.process_time()
    est.fit(X, y)
    return time.process_time() - t


def dense_tasks(seeds):
    rows = []
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 100))
    y = X @ np.ones(100)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0)
    for system, make in (("fasttag SGDRegressor", lambda s: ft.SGDRegressor(random_state=s)),
                         ("sklearn SGDRegressor", lambda s: sk.SGDRegressor(random_state=s))):
        mse, secs = [], []
        for s in range(seeds):
            est = make(s)
            secs.append(timed_fit(est, Xtr, ytr))
            mse.append(float(np.mean((est.predict(Xte) - yte) ** 2)))
        rows.append({"task": "toy regression", "learner": "SGD squared_error", "system": system,
                     "score": f"MSE {np.mean(mse):.2e}", "fit": np.mean(secs)})
    common = dict(max_iter=1000, tol=1e-3)
    for name in ("iris", "digits", "breast_cancer", "wine"):
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
        scaler = StandardScaler().fit(Xtr)
        Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
        for learner, make_ft, make_sk in pairs(common, common):
            for system, make in (("fasttag", make_ft), ("sklearn", make_sk)):
                acc, secs = [], []
                for s in range(seeds):
                    est = make(s)
                    secs.append(timed_fit(est, Xtr, ytr))
                    acc.append(est.score(Xte, yte))
                rows.append({"task": name, "learner": learner, "system": system,
                             "score": f"acc {100 * np.mean(acc):.2f}", "acc": np.mean(acc),
                             "fit": np.mean(secs)})
    return rows


def shape(w):
    out = []
    for c in w:
        k = "X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c
        if not out or out[-1] != k:
            out.append(k)
    return "".join(out)


def token_features(words):
    """~20 feature strings per token (no tag history: every token is a sample)."""
    n = len(words)
    pad = ["<s2>", "<s1>"] + [w.lower() for w in words] + ["</s1>", "</s2>"]
    feats = []
    for i, w in enumerate(words):
        low = pad[i + 2]
        f = ["b", "w=" + w, "l=" + low, "sh=" + shape(w),
             "f=" + ("T" if w.istitle() else "") + ("U" if w.isupper() else "") +
             ("D" if any(c.isdigit() for c in w) else "") + ("H" if "-" in w else ""),
             "w-1=" + pad[i + 1], "w+1=" + pad[i + 3], "w-2=" + pad[i], "w+2=" + pad[i + 4],
             "s3-1=" + pad[i + 1][-3:], "s3+1=" + pad[i + 3][-3:], "w-1w=" + pad[i + 1] + "|" + low]
        for k in (1, 2, 3, 4):
            f.append(f"p{k}=" + low[:k])
            f.append(f"s{k}=" + low[-k:])
        feats.append(f)
    return feats


def ewt_samples(what):
    """(Ftr, ytr, Fte, yte): the feature strings and UPOS tags of every
    token of EWT train and test; None, saying that ``what`` is skipped,
    when the corpus cannot be read."""
    try:
        train = harness.load_conllu(harness.data_path("en_ewt", "en_ewt-ud-train.conllu"))
        test = harness.load_conllu(harness.data_path("en_ewt", "en_ewt-ud-test.conllu"))
    except (FileNotFoundError, OSError, SystemExit) as exc:
        print(f"skipping {what}: {exc}", file=sys.stderr)
        return None
    return ([f for words, _ in train for f in token_features(words)],
            np.array([t for _, tags in train for t in tags]),
            [f for words, _ in test for f in token_features(words)],
            np.array([t for _, tags in test for t in tags]))


def sparse_task(epochs):
    samples = ewt_samples("the sparse task")
    if samples is None:
        return []
    Ftr, ytr, Fte, yte = samples
    n_feats = np.mean([len(f) for f in Ftr])
    print(f"EWT: {len(Ftr)} training tokens, {len(Fte)} test tokens, {len(set(ytr))} classes, "
          f"{n_feats:.1f} features per token", file=sys.stderr)
    hasher = FeatureHasher(n_features=2 ** 20, input_type="string", alternate_sign=False)
    common = dict(max_iter=epochs, tol=None)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for learner, make_ft, make_sk in pairs(common, common):
            est = make_ft(0)
            secs = timed_fit(est, Ftr, ytr)
            acc = est.score(Fte, yte)
            rows.append({"task": "EWT UPOS (sparse)", "learner": learner, "system": "fasttag",
                         "score": f"acc {100 * acc:.2f}", "acc": acc, "fit": secs})
            est = make_sk(0)
            t = time.process_time()
            est.fit(hasher.transform(Ftr), ytr)
            secs = time.process_time() - t
            acc = est.score(hasher.transform(Fte), yte)
            rows.append({"task": "EWT UPOS (sparse)", "learner": learner, "system": "sklearn",
                         "score": f"acc {100 * acc:.2f}", "acc": acc, "fit": secs})
            print(f"  {learner}: done", file=sys.stderr)
    return rows


#: scikit-learn's default L2 penalty of its MLP (divided by the batch size in each step)
SK_ALPHA = 1e-4


def mlp_digits(seeds, epochs, gemm="default"):
    """``gemm``: the kernel of fasttag's dense matrix products ("default":
    scipy's BLAS when installed; "own": fasttag's own kernel, as without
    scipy; "both": one row each)."""
    from sklearn.neural_network import MLPClassifier as SkMLP
    from fasttag.linear import _mlp
    X, y = datasets.load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
    scaler = StandardScaler().fit(Xtr)
    Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
    common = dict(hidden_layer_sizes=(100,), activation="relu", solver="adam", batch_size=200,
                  learning_rate_init=1e-3, max_iter=epochs, n_iter_no_change=epochs)
    kernels = {"default": [_mlp.gemm_backend()], "own": ["own"], "both": [_mlp.gemm_backend(), "own"]}[gemm]
    runs = [(f"fasttag ({k} gemm)" if gemm != "default" else "fasttag", ft.MLPClassifier, k)
            for k in dict.fromkeys(kernels)] + [("sklearn", SkMLP, None)]
    rows = []
    for system, cls, kernel in runs:
        acc, secs = [], []
        previous = _mlp.set_gemm_backend(kernel) if kernel else None
        try:
            for s in range(min(seeds, 5)):
                est = cls(random_state=s, alpha=SK_ALPHA / 200 if kernel else SK_ALPHA, **common)
                secs.append(timed_fit(est, Xtr, ytr))
                acc.append(est.score(Xte, yte))
        finally:
            if previous:
                _mlp.set_gemm_backend(previous)
        print(f"  digits {system}{f' ({kernel} gemm)' if kernel and gemm == 'default' else ''}: "
              f"{np.mean(secs):.3f} CPU s per fit, {1000 * np.mean(secs) / epochs:.2f} ms per epoch",
              file=sys.stderr)
        rows.append({"task": "digits", "learner": f"MLP (100 relu, Adam, {epochs} epochs)", "system": system,
                     "score": f"acc {100 * np.mean(acc):.2f}", "acc": np.mean(acc), "fit": np.mean(secs)})
    return rows


def mlp_ewt(epochs, hash_bits, hidden, with_sklearn=True):
    from sklearn.neural_network import MLPClassifier as SkMLP
    samples = ewt_samples("the MLP's sparse task")
    if samples is None:
        return []
    Ftr, ytr, Fte, yte = samples
    common = dict(hidden_layer_sizes=(hidden,), activation="relu", solver="adam", batch_size=200,
                  learning_rate_init=1e-3, max_iter=epochs, n_iter_no_change=epochs, random_state=0)
    task = "EWT UPOS (sparse)"
    learner = f"MLP ({hidden} relu, Adam, {epochs} epochs)"
    rows = []
    est = ft.MLPClassifier(n_features=2 ** hash_bits, alpha=SK_ALPHA / 200, **common)
    secs = timed_fit(est, Ftr, ytr)
    acc = est.score(Fte, yte)
    rows.append({"task": task, "learner": learner, "system": "fasttag", "score": f"acc {100 * acc:.2f}",
                 "acc": acc, "fit": secs})
    print(f"  fasttag MLP: {secs:.1f} s, acc {100 * acc:.2f}", file=sys.stderr)
    ap = ft.AveragedPerceptron(max_iter=epochs, tol=None, random_state=0)
    secs = timed_fit(ap, Ftr, ytr)
    acc = ap.score(Fte, yte)
    rows.append({"task": task, "learner": f"averaged perceptron ({epochs} epochs)", "system": "fasttag",
                 "score": f"acc {100 * acc:.2f}", "acc": acc, "fit": secs})
    if not with_sklearn:
        return rows
    hasher = FeatureHasher(n_features=2 ** hash_bits, input_type="string", alternate_sign=False)
    est = SkMLP(alpha=SK_ALPHA, **common)
    t = time.process_time()
    est.fit(hasher.transform(Ftr), ytr)
    secs = time.process_time() - t
    acc = est.score(hasher.transform(Fte), yte)
    rows.append({"task": task, "learner": learner, "system": "sklearn", "score": f"acc {100 * acc:.2f}",
                 "acc": acc, "fit": secs})
    print(f"  sklearn MLP: {secs:.1f} s, acc {100 * acc:.2f}", file=sys.stderr)
    return rows


def add_comparisons(rows):
    """Accuracy gap and fit-time ratio of each fasttag row against its sklearn twin."""
    by_key = {(r["task"], r["learner"], r["system"].split()[0]): r for r in rows}
    for r in rows:
        if r["system"].startswith("fasttag"):
            twin = by_key.get((r["task"], r["learner"], "sklearn"))
            if twin:
                if "acc" in r:
                    r["gap"] = f"{100 * (r['acc'] - twin['acc']):+.2f}"
                r["speed"] = f"{twin['fit'] / r['fit']:.1f}x"
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5, help="epochs on the sparse task")
    ap.add_argument("--seeds", type=int, default=25, help="learner seeds averaged on small tasks")
    ap.add_argument("--quick", action="store_true", help="small tasks only")
    ap.add_argument("--mlp", action="store_true", help="also the multi-layer perceptron")
    ap.add_argument("--mlp-only", action="store_true", help="only the multi-layer perceptron")
    ap.add_argument("--mlp-epochs", type=int, default=100, help="MLP epochs on digits")
    ap.add_argument("--mlp-sparse-epochs", type=int, default=2, help="MLP epochs on EWT")
    ap.add_argument("--mlp-hidden", type=int, default=100, help="MLP hidden units on EWT")
    ap.add_argument("--mlp-hash-bits", type=int, default=18, help="hash space of the MLP on EWT (bits)")
    ap.add_argument("--mlp-gemm", choices=("default", "own", "both"), default="default",
                    help="fasttag's dense matrix products on digits: scipy's BLAS when installed (default), "
                         "fasttag's own kernel, or both")
    ap.add_argument("--mlp-no-sklearn-ewt", action="store_true",
                    help="skip scikit-learn's MLP on EWT (tens of CPU minutes)")
    args = ap.parse_args()
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not args.mlp_only:
            rows += dense_tasks(args.seeds)
        if args.mlp or args.mlp_only:
            rows += mlp_digits(args.seeds, args.mlp_epochs, args.mlp_gemm)
            if not args.quick:
                rows += mlp_ewt(args.mlp_sparse_epochs, args.mlp_hash_bits, args.mlp_hidden,
                                with_sklearn=not args.mlp_no_sklearn_ewt)
    if not args.quick and not args.mlp_only:
        rows += sparse_task(args.epochs)
    add_comparisons(rows)
    print(harness.format_table(rows, [
        ("task", "data set"), ("learner", "learner"), ("system", "system"), ("score", "test score"),
        ("gap", "acc. gap (points)"), ("fit", "fit CPU s", "{:.3f}"), ("speed", "fit speed-up vs sklearn")]))


if __name__ == "__main__":
    main()
