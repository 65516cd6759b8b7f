"""``stats``: the behavioural summary of a session, written once its events are folded.

:class:`StatsSink` is the same summary as a sink (``send``/``finish``/``aclose``)
over a stream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING

import msgspec

from agentminutes.schema import Event
from agentminutes.schema.stats import StatsBuilder

if TYPE_CHECKING:
    from agentminutes.formats import Options
    from agentminutes.pipeline.batch import Batch

__all__ = ("StatsSink", "StatsWriter", "writer")


class StatsWriter:
    """Folds events into the behavioural summary; gives it as JSON at the end."""

    def __init__(self, *, indent: int = 2) -> None:
        self._indent = indent
        self.builder = StatsBuilder()

    def add(self, events: Sequence[Event]) -> bytes:
        """Nothing yet: *events* are folded into the summary."""
        self.builder.add_all(events)
        return b""

    def finish(self, skipped: Mapping[str, int] | None = None) -> bytes:
        """The summary (its counts are the events'; *skipped* is not part of it)."""
        # Maps in key order, as the reference writes them.
        data = msgspec.json.encode(self.builder.build(), order="deterministic")
        if self._indent:
            data = msgspec.json.format(data, indent=self._indent)
        return data + b"\n"

    def loss(self) -> None:
        """Nothing: a summary is not meant to carry the events."""
        return None


class StatsSink:
    """Folds events into the behavioural summary; writes it as JSON on :meth:`finish`."""

    def __init__(self, stream: IO[bytes], *, indent: int = 2) -> None:
        self._stream = stream
        self._writer = StatsWriter(indent=indent)
        self.builder = self._writer.builder

    async def send(self, batch: Batch) -> None:
        self._writer.add(batch.events)

    def finish(self) -> None:
        """Write the summary."""
        self._stream.write(self._writer.finish())

    async def aclose(self) -> None:
        self._stream.flush()


def writer(options: Options) -> StatsWriter:
    """A writer of one session's summary, indented by ``options.indent`` (0: one line)."""
    return StatsWriter(indent=options.indent)
