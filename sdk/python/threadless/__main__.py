"""``python -m threadless mcp …``: the ``threadless`` command without relying on PATH."""

import sys

from .cli import main

sys.exit(main())
