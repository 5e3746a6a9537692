"""Constant against decreasing steps: SGD's objective against the updates
with a constant step, eta0 / t^0.5 and Bottou's 1 / (alpha (t0 + t)).

    python examples/sgd_steps.py          # writes docs/sgd_steps.png
"""
from _common import DOCS, binary_task, fit_and_report

from fasttag.linear import SGDClassifier
from fasttag.plot import learning_curves

Xtr, Xte, ytr, yte = binary_task()
common = dict(loss="log_loss", alpha=1e-3, max_iter=40, tol=None, random_state=0)
runs = {"constant 0.1": SGDClassifier(learning_rate="constant", eta0=0.1, **common),
        "constant 0.01": SGDClassifier(learning_rate="constant", eta0=0.01, **common),
        "0.5 / t^0.5": SGDClassifier(learning_rate="invscaling", eta0=0.5, power_t=0.5, **common),
        "1 / (alpha (t0 + t))": SGDClassifier(learning_rate="optimal", **common)}
fit_and_report(runs, Xtr, ytr, Xte, yte)
learning_curves(*runs.values(), labels=list(runs), x="updates", log_objective=True,
                title="SGD step schedules (log loss) on breast_cancer", path=DOCS / "sgd_steps.png")
