"""What the scripts that build a bundled model share: their options, the
messages of training, and saving the model with its size checked against
the limit of a bundled model."""
import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 10 * 1024 * 1024
"""A bundled model file's limit."""


def data_option(doc):
    """A parser described by the first paragraph of the script's ``doc``,
    with ``--data``, the folder of the shared corpora."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"),
                    help="folder of the shared corpora (default ../shared/data beside the repository)")
    return ap


def build_options(doc, model_file, epochs, prune=0.0):
    """The options of a build script: ``--data``, ``--epochs``, ``--seed``,
    ``--prune`` and ``-o`` (default: ``model_file`` among the bundled models)."""
    ap = data_option(doc)
    ap.add_argument("--epochs", type=int, default=epochs)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prune", type=float, default=prune, help="drop weights with |w| below this")
    ap.add_argument("-o", "--output", default=str(ROOT / "fasttag" / "models" / model_file))
    return ap


def need_corpus(path):
    """Stop the script when the training corpus ``path`` is absent."""
    if not Path(path).exists():
        sys.exit(f"training corpus not found: {path} (the shared corpora, ../shared/data)")


def report_training(model, cpu_start, score_name):
    """Say the CPU time of training since ``cpu_start``, the best epoch and
    its development score (named ``score_name``)."""
    info = model.model.training_info
    print(f"trained in {time.process_time() - cpu_start:.0f} CPU s; best epoch {info['best_epoch']}, "
          f"{score_name} {100 * info['dev_score']:.2f}", file=sys.stderr)


def prune(model, threshold):
    """Drop the weights below ``threshold`` in absolute value, saying how many are kept."""
    kept = model.prune(threshold)
    print(f"pruned below {threshold}: {kept} weights kept", file=sys.stderr)


def save_bundled(model, path, max_bytes=MAX_BYTES, hint="raise --prune"):
    """Save ``model`` to ``path``, report its size, and stop the script
    when it is over ``max_bytes``."""
    model.save(path)
    size = os.path.getsize(path)
    print(f"wrote {os.path.relpath(path, ROOT)}: {size / 1e6:.1f} MB", file=sys.stderr)
    if size > max_bytes:
        sys.exit(f"the model is over {max_bytes / 2**20:.0f} MB: {hint}")
