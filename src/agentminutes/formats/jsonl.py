"""``--format jsonl``: one compact JSON event per line, written as the events come.

It is what ``follow`` writes too. :class:`JsonlSink` is the same lines as a sink
(``send``/``aclose``) over a stream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING

import msgspec

from agentminutes.schema import Event
from agentminutes.sinks.encoding import append_jsonl

if TYPE_CHECKING:
    from agentminutes.formats import Options
    from agentminutes.pipeline.batch import Batch

__all__ = ("JsonlSink", "JsonlWriter", "writer")


class JsonlWriter:
    """Events as JSON lines, encoded into one reused buffer."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._encoder = msgspec.json.Encoder()

    def add(self, events: Sequence[Event]) -> bytearray:
        """*events* as JSONL (the buffer is reused by the next call)."""
        buf = self._buf
        del buf[:]
        append_jsonl(self._encoder, events, buf)
        return buf

    def finish(self, skipped: Mapping[str, int]) -> bytes:
        """Nothing: every line was written as its event came."""
        return b""

    def loss(self) -> None:
        """Nothing: every event is a line."""
        return None


class JsonlSink:
    """Writes one compact JSON event per line to a binary stream (stdout by default)."""

    def __init__(self, stream: IO[bytes], *, flush: bool = True) -> None:
        self._stream = stream
        self._flush = flush
        self._writer = JsonlWriter()

    def encode(self, events: Sequence[Event]) -> bytearray:
        """Encode *events* as JSONL into the sink's reusable buffer."""
        return self._writer.add(events)

    async def send(self, batch: Batch) -> None:
        if not batch.events:
            return
        self._stream.write(self._writer.add(batch.events))
        if self._flush:
            self._stream.flush()

    async def aclose(self) -> None:
        self._stream.flush()


def writer(options: Options) -> JsonlWriter:
    """A writer of one session's events as JSON lines (no options apply)."""
    return JsonlWriter()
