"""What the scripts that build a bundled model share: saving it with its
size checked against the limit of a bundled model."""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def save_bundled(model, path, max_bytes, hint="raise --prune"):
    """Save ``model`` to ``path``, report its size, and stop the script
    when it is over ``max_bytes``."""
    model.save(path)
    size = os.path.getsize(path)
    print(f"wrote {os.path.relpath(path, ROOT)}: {size / 1e6:.1f} MB", file=sys.stderr)
    if size > max_bytes:
        sys.exit(f"the model is over {max_bytes / 2**20:.0f} MB: {hint}")
