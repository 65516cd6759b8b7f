"""``python -m agentminutes``: the command line (see :mod:`agentminutes.cli`)."""

from __future__ import annotations

import sys

from agentminutes.cli import main

__all__ = ("main",)

if __name__ == "__main__":
    sys.exit(main())
