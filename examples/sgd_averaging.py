"""SGD on a binary task with and without averaging, and with averaging
started after t0 updates: the objective J against the updates.

    python examples/sgd_averaging.py      # writes docs/sgd_averaging.png
"""
from _common import DOCS, binary_task, fit_and_report

from fasttag.linear import SGDClassifier
from fasttag.plot import learning_curves

Xtr, Xte, ytr, yte = binary_task()
common = dict(loss="log_loss", alpha=1e-3, learning_rate="constant", eta0=0.1, max_iter=40, tol=None,
              random_state=0)
t0 = 5 * len(ytr)
runs = {"SGD": SGDClassifier(**common),
        "averaged SGD": SGDClassifier(average=True, **common),
        f"averaged after t0={t0}": SGDClassifier(average=t0, **common)}
fit_and_report(runs, Xtr, ytr, Xte, yte)
learning_curves(*runs.values(), labels=list(runs), x="updates", log_objective=True,
                title="SGD (log loss, constant step 0.1) on breast_cancer", path=DOCS / "sgd_averaging.png")
