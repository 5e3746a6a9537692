"""``python -m fasttag``: the same as the ``fasttag`` command."""
import sys

from .cli import main

sys.exit(main())
