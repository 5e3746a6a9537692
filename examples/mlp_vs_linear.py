"""The multi-layer perceptron against a linear learner on digits: the
log-loss objective of each per epoch (one-vs-rest SGD sums the binary log
losses of its ten problems), and the MLPs' validation accuracy.

    python examples/mlp_vs_linear.py      # writes docs/mlp_vs_linear.png
"""
from _common import DOCS, digits_task, fit_and_report

from fasttag.linear import MLPClassifier, SGDClassifier
from fasttag.plot import learning_curves

Xtr, Xte, ytr, yte = digits_task()
runs = {"MLP (64 relu, Adam)": MLPClassifier(hidden_layer_sizes=(64,), max_iter=60, random_state=0,
                                             learning_rate_init=0.01, early_stopping=True, n_iter_no_change=60),
        "MLP (64 tanh, averaged SGD)": MLPClassifier(hidden_layer_sizes=(64,), activation="tanh", solver="sgd",
                                                     learning_rate_init=0.1, average=True, max_iter=60,
                                                     random_state=0, early_stopping=True, n_iter_no_change=60),
        "SGD log_loss (OvR)": SGDClassifier(loss="log_loss", max_iter=60, tol=None, random_state=0),
        "averaged SGD log_loss (OvR)": SGDClassifier(loss="log_loss", average=True, max_iter=60, tol=None,
                                                     random_state=0)}
fit_and_report(runs, Xtr, ytr, Xte, yte, objective=False)
learning_curves(*runs.values(), labels=list(runs), log_objective=True,
                title="digits: MLP against linear learners", path=DOCS / "mlp_vs_linear.png")
