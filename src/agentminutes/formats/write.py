"""The surface every format shares, and the one loop that writes a session in any of them.

A format's module defines ``writer(options)``, a :class:`Writer` for one session:
events in (``add``, bytes to write now), the rest out at the end (``finish``, given
the skipped records' counts), and a loss report (``loss``, after ``finish``; ``None``
where the format carries everything). :func:`write_feed` drives one over a
:class:`~agentminutes.pipeline.document_sources.Feed` into a binary stream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, NamedTuple, Protocol

from agentminutes.formats import DEFAULT, Format, Options
from agentminutes.formats.losses import LossReport
from agentminutes.pipeline.document_sources import Feed
from agentminutes.schema import Event

__all__ = ("Writer", "Written", "write_feed")


class Writer(Protocol):
    """One session in one format: events in, bytes out, a loss report."""

    def add(self, events: Sequence[Event]) -> bytes | bytearray:
        """*events* in this format: the bytes to write now (valid until the next call)."""
        ...

    def finish(self, skipped: Mapping[str, int]) -> bytes | bytearray:
        """The bytes that end the session; *skipped* counts the records it passed over."""
        ...

    def loss(self) -> LossReport | None:
        """What the format could not carry (after :meth:`finish`); ``None``: nothing lost."""
        ...


class Written(NamedTuple):
    """What :func:`write_feed` wrote: the session's events and the format's loss report."""

    events: int
    loss: LossReport | None


async def write_feed(
    fmt: Format,
    stream: IO[bytes],
    feed: Feed,
    *,
    options: Options = DEFAULT,
    flush: bool = False,
) -> Written:
    """Write *feed*'s session to *stream* as *fmt*; with *flush*, batch by batch."""
    writer = fmt.writer(options)
    events = 0
    async for batch in feed.batches:
        events += len(batch.events)
        data = writer.add(batch.events)
        if data:
            stream.write(data)
            if flush:
                stream.flush()
    stream.write(writer.finish(feed.skipped()))
    stream.flush()
    return Written(events, writer.loss())
