"""SIGINT/SIGTERM that arrive while ``follow`` is still starting.

Installed first thing (before the heavy imports), so a follower stopped
while it starts stops as cleanly as one stopped later: the runner replays
what was caught once its own handlers are in place.
"""

from __future__ import annotations

import signal

__all__ = ("catch_early_signals", "early_signals")

#: Signals caught before the runner took over, oldest first.
early_signals: list[int] = []


def _remember(signum: int, _frame: object) -> None:
    early_signals.append(signum)


def catch_early_signals() -> None:
    """Remember SIGINT and SIGTERM from now on instead of dying of them."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _remember)
