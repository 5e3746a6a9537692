"""``python -m fasttag.cli``: the same as the ``fasttag`` command."""
import sys

from .dispatch import main

sys.exit(main())
