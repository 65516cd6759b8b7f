"""The sink protocol: ``send(batch)`` returns once the batch is taken; ``aclose()`` flushes.

A sink with ``deferred = True`` (the socket client) takes batches into a bounded buffer
and reports each batch's mark through its ``on_delivered`` callback, in order, once the
collector has it (acknowledged it, or without acknowledgements once the kernel accepted
it); checkpoints follow those reports instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from agentminutes.pipeline.batch import Batch

__all__ = ("Sink",)


@runtime_checkable
class Sink(Protocol):
    """Takes batches of events."""

    async def send(self, batch: Batch) -> None:
        """Take *batch*; return once its events are delivered."""
        ...

    async def aclose(self) -> None:
        """Flush and release what the sink holds."""
        ...


#: Told the mark of each batch a deferring sink has delivered, in order.
OnDelivered = Callable[[Any], None]
