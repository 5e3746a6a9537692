"""What the example scripts share: where the figures go, the data sets."""
import sys
import warnings
from itertools import islice
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))           # run from a checkout without installing

DOCS = ROOT / "docs"
EWT = ROOT.parent / "shared" / "data" / "en_ewt"


def binary_task(seed=0):
    """breast_cancer, standardised, split 75/25: a small binary task."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler
    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, stratify=y, random_state=seed)
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte), ytr, yte


def digits_task():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    X, y = load_digits(return_X_y=True)
    return train_test_split(X / 16.0, y, test_size=0.25, stratify=y, random_state=0)


def fit_and_report(runs, Xtr, ytr, Xte, yte, objective=True):
    """Fit every estimator of ``runs`` ({label: estimator}) without its
    convergence warnings; print its test accuracy, after its final objective
    J when ``objective``."""
    width = max(map(len, runs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, est in runs.items():
            est.fit(Xtr, ytr)
            final = f"final J {est.loss_curve_[-1]:.4f}, " if objective else ""
            print(f"{name:>{width}}: {final}test accuracy {100 * est.score(Xte, yte):.2f}%")


def token_features(words):
    """Feature strings of every token: the word, its affixes and shape, and
    its neighbours (no tag history: every token is one sample)."""
    pad = ["<s>", "<s>"] + [w.lower() for w in words] + ["</s>", "</s>"]
    out = []
    for i, w in enumerate(words):
        low = pad[i + 2]
        shape = "".join("X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c
                        for c in w[:6])
        f = ["b", "w=" + low, "sh=" + shape, "w-1=" + pad[i + 1], "w+1=" + pad[i + 3],
             "w-2=" + pad[i], "w+2=" + pad[i + 4]]
        f += [f"p{k}=" + low[:k] for k in (1, 2, 3)] + [f"s{k}=" + low[-k:] for k in (1, 2, 3)]
        out.append(f)
    return out


def ewt_tokens(split, n_sentences):
    """(feature lists, UPOS tags) of the tokens of the first ``n_sentences``
    of UD English EWT ``split``; exits with a message when the corpus is absent."""
    from fasttag.text.formats import read_conllu
    path = EWT / f"en_ewt-ud-{split}.conllu"
    if not path.exists():
        raise SystemExit(f"this example needs UD English EWT at ../shared/data/en_ewt ({path.name} is missing)")
    X, y = [], []
    for sent in islice(read_conllu(path), n_sentences):
        X += token_features(sent.words)
        y += sent.tags
    return X, np.array(y)
