"""Learning curves: fasttag.plot, ``fasttag train --plot`` and ``fasttag plot``
write valid PNGs of the expected size; errors are one line."""
import struct
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")

import fasttag  # noqa: E402
from fasttag.errors import FasttagError  # noqa: E402
from fasttag.linear import MLPClassifier, SGDClassifier  # noqa: E402
from fasttag.plot import DPI, PANEL_INCHES, history, learning_curves  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.conllu"


def png_size(path):
    """(width, height) of a PNG, after checking its signature and that
    matplotlib decodes it."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    from matplotlib.image import imread
    assert imread(path).shape[:2] == (height, width)
    return width, height


def expected(panels):
    return round(PANEL_INCHES[0] * panels * DPI), round(PANEL_INCHES[1] * DPI)


@pytest.fixture(scope="module")
def learners():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 5))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sgd = SGDClassifier(max_iter=8, tol=None, random_state=0).fit(X, y)
        mlp = MLPClassifier(hidden_layer_sizes=(8,), max_iter=8, early_stopping=True, random_state=0).fit(X, y)
    return sgd, mlp


def test_learning_curves_of_estimators(tmp_path, learners):
    sgd, mlp = learners
    out = tmp_path / "curves.png"
    fig = learning_curves(sgd, mlp, labels=["SGD", "MLP"], path=out)
    assert png_size(out) == expected(2)          # the objective and the MLP's validation accuracy
    objective_ax = fig.axes[0]
    np.testing.assert_allclose(objective_ax.lines[0].get_ydata(), sgd.loss_curve_)
    assert list(objective_ax.lines[1].get_xdata()) == list(range(1, mlp.n_iter_ + 1))
    fig = learning_curves(sgd, x="updates", path=tmp_path / "one.png")
    assert png_size(tmp_path / "one.png") == expected(1)
    assert fig.axes[0].lines[0].get_xdata()[0] == sgd.t_ / sgd.n_iter_
    with pytest.raises(FasttagError, match="2 labels for 1 models"):
        learning_curves(sgd, labels=["a", "b"])
    with pytest.raises(FasttagError, match="no recorded history"):
        learning_curves(object())
    assert history(mlp)["dev"] == mlp.validation_scores_


def test_train_plot_and_plot_command(tmp_path, run_cli, learners, dev_copy):
    model = tmp_path / "pos.ftm"
    curve = tmp_path / "curve.png"
    # dev: a copy of the training file (training refuses the file itself); the test is not about held-out data
    r = run_cli("train", "pos", SAMPLE, "-o", model, "--dev", dev_copy(SAMPLE), "--epochs", "3", "--quiet",
                "--plot", curve)
    assert r.returncode == 0, r.stderr
    assert png_size(curve) == expected(1)        # a tagger has accuracies, no objective
    info = fasttag.load(model).model.training_info
    assert len(info["train_accuracy"]) == len(info["dev_scores"]) == 3
    assert all(0 <= v <= 1 for v in info["train_accuracy"] + info["dev_scores"])
    assert max(info["dev_scores"]) == info["dev_score"]

    mlp_path = tmp_path / "mlp.ftm"
    learners[1].save(mlp_path)
    out = tmp_path / "both.png"
    r = run_cli("plot", model, mlp_path, "-o", out, "--labels", "tagger,mlp")
    assert r.returncode == 0, r.stderr
    assert png_size(out) == expected(2)

    r = run_cli("plot", model, "-o", tmp_path / "x.png", "--labels", "a,b")
    assert r.returncode == 2 and r.stderr.decode().count("\n") == 1 and "--labels" in r.stderr.decode()
    r = run_cli("plot", model, "-o", tmp_path / "x.gif")
    assert r.returncode == 2 and ".png" in r.stderr.decode() and not (tmp_path / "x.gif").exists()
    r = run_cli("plot", tmp_path / "missing.ftm", "-o", tmp_path / "x.png")
    assert r.returncode == 2 and "missing.ftm" in r.stderr.decode()
    old = fasttag.default_model_path("en")            # built before learning curves were recorded
    for x in ("epochs", "updates"):
        r = run_cli("plot", old, "-o", tmp_path / "x.png", "--labels", "mine", "--x", x)
        err = r.stderr.decode()
        assert r.returncode == 2 and old.name in err and "mine" not in err, err     # the file, not the label
    assert not list(tmp_path.glob(".fasttag-plot-*"))
    # a figure format matplotlib is not asked to write is refused before training
    r = run_cli("train", "pos", SAMPLE, "-o", tmp_path / "never.ftm", "--epochs", "1", "--quiet",
                "--plot", tmp_path / "curve.jpg")
    assert r.returncode == 2 and "curve.jpg: the figure format must be" in r.stderr.decode()
    assert not (tmp_path / "never.ftm").exists()


def test_a_clear_message_without_matplotlib(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None; from fasttag.cli import main; "
            f"sys.exit(main(['plot', {str(tmp_path / 'm.ftm')!r}, '-o', {str(tmp_path / 'o.png')!r}]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={"PYTHONPATH": str(Path(fasttag.__file__).resolve().parents[1])})
    assert r.returncode == 2
    assert r.stderr == "fasttag: error: plotting needs matplotlib: pip install 'fasttag-nlp[plot]'\n"
