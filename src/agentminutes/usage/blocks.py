"""Five-hour billing windows (``usage --by block``), as ccusage defines them.

A subscription's usage is metered in windows of five hours that start with the
first request after a pause. :func:`find_blocks` walks requests in time order:
a block starts at its first request's time floored to the hour and takes every
request until one comes five hours or more after the block's start, or after
a gap of five hours or more since the previous request; that request starts
the next block. A block is *active* when *now* is before its end and less than
five hours after its last request: its *burn rate* is the tokens (and cost)
per minute between its first and last request, and its *projection* adds
that rate over the minutes left to the block's end.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Final

__all__ = ("BLOCK_NS", "Block", "find_blocks", "floor_hour")

#: The length of a window, and the pause that ends one early.
BLOCK_NS: Final = 5 * 3600 * 10**9
_HOUR_NS: Final = 3600 * 10**9
_MINUTE_NS: Final = 60 * 10**9


def floor_hour(ns: int) -> int:
    """*ns* floored to the hour (UTC hours: every zone in use is offset by whole hours,
    or half and quarter hours that ccusage floors the same way, in UTC)."""
    return ns - ns % _HOUR_NS


@dataclass
class Block:
    """One window: when it starts and ends, its first and last request, what it holds."""

    start_ns: int
    first_ns: int
    last_ns: int
    requests: int = 0
    tokens: int = 0
    cost: Decimal | None = None

    @property
    def end_ns(self) -> int:
        """When the window closes (start + 5 h)."""
        return self.start_ns + BLOCK_NS

    def active(self, now_ns: int) -> bool:
        """Whether the window is still open at *now_ns* (and not ended by a pause)."""
        return now_ns < self.end_ns and now_ns - self.last_ns < BLOCK_NS

    def burn_per_minute(self) -> tuple[float, float | None]:
        """Tokens and dollars per minute between the first and the last request.

        A block of one request (or all in one instant) has no rate: (0, None).
        """
        minutes = (self.last_ns - self.first_ns) / _MINUTE_NS
        if minutes <= 0:
            return 0.0, None
        cost = None if self.cost is None else float(self.cost) / minutes
        return self.tokens / minutes, cost

    def projection(self, now_ns: int) -> tuple[int, float | None]:
        """Tokens and cost at the window's end if the burn rate holds from *now_ns*."""
        tokens_rate, cost_rate = self.burn_per_minute()
        left = max(0, self.end_ns - now_ns) / _MINUTE_NS
        tokens = self.tokens + round(tokens_rate * left)
        if self.cost is None:
            return tokens, None
        return tokens, float(self.cost) + (cost_rate or 0.0) * left


def find_blocks(times: list[int]) -> list[int]:
    """The start of each request's block, for request instants *times* (any order).

    Returns one start per entry of *times*, in the same order; a request
    without a time (0) gets 0.
    """
    order = sorted((t, i) for i, t in enumerate(times) if t)
    out = [0] * len(times)
    start = last = 0
    for t, i in order:
        if not start or t - start >= BLOCK_NS or t - last >= BLOCK_NS:
            start = floor_hour(t)
        out[i] = start
        last = t
    return out
