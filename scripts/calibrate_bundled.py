"""Refit the temperature of the bundled English models on their dev sets.

    python scripts/calibrate_bundled.py [--data ../shared/data]

Only the temperature of the marginals and span confidences changes
(:meth:`fasttag.tasks.base.SequenceTask.calibrate`); the weights, and so every
prediction, stay as built.  The POS tagger was built before temperatures
were fitted (it had 1.0), and the NER model's was fitted on gold in the
wrong tag scheme and before its weights were pruned.  The build scripts
now fit it themselves; this serves the models already built.
"""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import fasttag  # noqa: E402
from scripts.bundle import data_option  # noqa: E402

# bundled name -> dev set under the data folder
DEV = {"en": "en_ewt/en_ewt-ud-dev.conllu", "en-ner": "conll2003/eng.testa"}


def main():
    args = data_option(__doc__).parse_args()
    for name, dev in DEV.items():
        path = fasttag.default_model_path(name)
        model = fasttag.load(path)
        before = model.temperature
        after = model.calibrate(Path(args.data) / dev)
        model.save(path)
        print(f"{name}: temperature {before:.4g} -> {after:.4g} (fitted on {dev}); "
              f"{os.path.getsize(path) / 1e6:.1f} MB -> {os.path.relpath(path, ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
