"""The perceptron, the averaged perceptron and MIRA on EWT token
classification (every token a sample, labelled with its UPOS): the
objective each one records, and the test accuracy, after every epoch.
The perceptrons record the mean loss of their training pass, which
averaging does not change (it changes only the weights predictions use):
their two objective curves are one.

    python examples/perceptrons_ewt.py    # writes docs/perceptrons_ewt.png
"""
import warnings

import numpy as np
from _common import DOCS, ewt_tokens

from fasttag.linear import AveragedPerceptron, PassiveAggressiveClassifier, Perceptron
from fasttag.plot import DPI, PANEL_INCHES, need_matplotlib, save_figure

Xtr, ytr = ewt_tokens("train", 4000)
Xte, yte = ewt_tokens("test", 1000)
classes = np.unique(np.concatenate([ytr, yte]))
print(f"{len(ytr)} training tokens, {len(yte)} test tokens")
runs = {"perceptron": Perceptron(random_state=0),
        "averaged perceptron": AveragedPerceptron(random_state=0),
        "MIRA (averaged)": PassiveAggressiveClassifier(variant="MIRA", average=True, random_state=0)}
epochs = 10
accuracy = {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, est in runs.items():
        accuracy[name] = []
        for _ in range(epochs):
            est.partial_fit(Xtr, ytr, classes=classes)
            accuracy[name].append(100 * est.score(Xte, yte))
        print(f"{name:>20}: test accuracy by epoch {' '.join(f'{a:.2f}' for a in accuracy[name])}")

Figure, Canvas = need_matplotlib()
fig = Figure(figsize=(2 * PANEL_INCHES[0], PANEL_INCHES[1]), dpi=DPI)
Canvas(fig)
left, right = fig.subplots(1, 2)
x = np.arange(1, epochs + 1)
for name, est in runs.items():
    left.plot(x, est.loss_curve_, label=name)
    right.plot(x, accuracy[name], label=name)
left.set(xlabel="epoch", ylabel="objective (mean loss)", title="training objective", yscale="log")
right.set(xlabel="epoch", ylabel="test accuracy (%)", title="EWT UPOS, one token a sample")
for ax in (left, right):
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
fig.tight_layout()
save_figure(fig, DOCS / "perceptrons_ewt.png")
