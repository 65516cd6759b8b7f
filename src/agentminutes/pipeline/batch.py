"""Batches: how events travel from an adapter through stages to a sink.

Events travel in :class:`Batch` objects, one per chunk of source lines, so
the async machinery costs an ``await`` per batch, never per line or event.
A batch carries a ``mark``: the source position its events complete. Sinks
report the marks of batches they have durably taken, which is what a
follower checkpoints.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentminutes.schema import Event

__all__ = ("Batch", "Stage", "apply_stages", "per_event")


@dataclass(slots=True)
class Batch:
    """Events completed by one run of source lines, and the position they reach."""

    events: list[Event]
    mark: Any = None


#: A transform stage: an async iterator of batches in, one out.
Stage = Callable[[AsyncIterator[Batch]], AsyncIterator[Batch]]


def per_event(fn: Callable[[Event], Event | Iterable[Event] | None]) -> Stage:
    """Lift a per-event function into a stage.

    *fn* returns the event (changed or not), several events, or ``None`` to
    drop it. Marks pass through untouched.
    """

    async def stage(batches: AsyncIterator[Batch]) -> AsyncIterator[Batch]:
        async for batch in batches:
            out: list[Event] = []
            for ev in batch.events:
                res = fn(ev)
                if res is None:
                    continue
                if isinstance(res, Event):
                    out.append(res)
                else:
                    out.extend(res)
            batch.events = out
            yield batch

    stage.__name__ = getattr(fn, "__name__", "per_event")
    return stage


def apply_stages(batches: AsyncIterator[Batch], stages: Sequence[Stage]) -> AsyncIterator[Batch]:
    """Chain *stages* over *batches*, first stage first."""
    for stage in stages:
        batches = stage(batches)
    return batches
