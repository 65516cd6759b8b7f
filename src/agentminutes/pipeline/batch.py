"""Batches: how events travel from an adapter through stages to a sink.

Events travel in :class:`Batch` objects, one per chunk of source lines, so
the async machinery costs an ``await`` per batch, never per line or event.
A batch carries a ``mark``: the source position its events complete. Sinks
report the marks of batches they have durably taken, which is what a
follower checkpoints.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentminutes.errors import UsageError
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


def apply_stages(
    batches: AsyncIterator[Batch], stages: Sequence[Stage], *, keep_marks: bool = False
) -> AsyncIterator[Batch]:
    """Chain *stages* over *batches*, first stage first.

    With *keep_marks* (a follow, whose marks name the transcript and the
    progress to record), each stage's output is checked against what it took:
    a batch with events but no ``mark`` gets the mark of the one batch of
    events the stage took since its previous output (a stage that builds one
    new batch per batch it takes, or drops empty ones). If the stage took
    several batches of events since, or none, the mark cannot be told, and
    :class:`~agentminutes.errors.UsageError` is raised rather than events going
    on without the transcript and progress they belong to.
    """
    if not keep_marks:
        for stage in stages:
            batches = stage(batches)
        return batches
    for stage in stages:
        taken = _Taken()
        tap = _tap(batches, taken)
        batches = _checked(stage(tap), tap, taken, stage)
    return batches


class _Taken:
    """What a stage took since its previous output: how many batches, the last one's mark."""

    __slots__ = ("count", "mark", "seen_marks")

    def __init__(self) -> None:
        self.count = 0
        self.mark: Any = None
        #: The source carries marks at all (a follow does; convert does not).
        self.seen_marks = False


async def _tap(batches: AsyncIterator[Batch], taken: _Taken) -> AsyncGenerator[Batch, None]:
    try:
        async for batch in batches:
            if batch.mark is not None:
                taken.seen_marks = True
            if batch.mark is not None and batch.events:
                taken.count += 1
                taken.mark = batch.mark
            yield batch
    finally:
        close = getattr(batches, "aclose", None)
        if close is not None:
            await close()


async def _checked(
    batches: AsyncIterator[Batch], tap: AsyncGenerator[Batch, None], taken: _Taken, stage: Stage
) -> AsyncGenerator[Batch, None]:
    try:
        async for batch in batches:
            if batch.mark is None and batch.events and taken.seen_marks:
                if taken.count == 1:
                    batch.mark = taken.mark
                else:
                    name = getattr(stage, "__name__", repr(stage))
                    raise UsageError(
                        f"stage {name} yielded {len(batch.events)} events without a batch mark "
                        f"after taking {taken.count} batches: a stage must pass each batch's "
                        "mark on with its events (see agentminutes.stages)"
                    )
            taken.count = 0
            taken.mark = None
            yield batch
    finally:
        # Close the chain behind us now, not when the garbage collector finds it.
        close = getattr(batches, "aclose", None)
        if close is not None:
            await close()
        await tap.aclose()
