"""The sinks behind ``convert`` and ``stats``: JSONL, the whole-session JSON document, the stats summary.

All three stream: the whole-session writer writes meta first, events as they come and
totals and report at the end, so nothing needs the whole list in memory.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

import msgspec

from agentminutes.pipeline.batch import Batch
from agentminutes.schema import SCHEMA_VERSION, Event, Meta, Report
from agentminutes.schema.session import SessionAggregates
from agentminutes.schema.summary import StatsBuilder

if TYPE_CHECKING:
    pass
from agentminutes.sinks.encoding import append_jsonl, format_json, one_line

__all__ = (
    "JsonlSink",
    "SessionJsonSink",
    "StatsSink",
)


class JsonlSink:
    """Writes one compact JSON event per line to a binary stream (stdout by default)."""

    def __init__(self, stream: IO[bytes], *, flush: bool = True) -> None:
        self._stream = stream
        self._flush = flush
        self._buf = bytearray()
        self._encoder = msgspec.json.Encoder()

    def encode(self, events: list[Event]) -> bytearray:
        """Encode *events* as JSONL into the sink's reusable buffer."""
        buf = self._buf
        del buf[:]
        append_jsonl(self._encoder, events, buf)
        return buf

    async def send(self, batch: Batch) -> None:
        if not batch.events:
            return
        self._stream.write(self.encode(batch.events))
        if self._flush:
            self._stream.flush()

    async def aclose(self) -> None:
        self._stream.flush()


class SessionJsonSink:
    """Writes the whole-session JSON document as events arrive, never holding them all.

    The document opens with the schema version and the meta of the first
    ``session_meta`` event, lists the events as they come, and closes with the
    usage totals and the report once :meth:`finish` gives the skip counts.
    Output is indented like the reference's.
    """

    def __init__(self, stream: IO[bytes], *, indent: int = 2) -> None:
        self._stream = stream
        self._indent = indent
        self._encoder = msgspec.json.Encoder()
        self._started = False
        self._count = 0
        self._agg = SessionAggregates()
        self._buf = bytearray()

    def _pretty(self, obj: Any, depth: int) -> bytes:
        data = self._encoder.encode(obj)
        if not self._indent:
            return one_line(data)
        data = format_json(data, self._indent)
        pad = b"\n" + b" " * (self._indent * depth)
        return data.replace(b"\n", pad)

    def _header(self, meta: Meta) -> bytes:
        sp = b" " * self._indent
        nl = b"\n" if self._indent else b""
        colon = b": " if self._indent else b":"
        return (
            b"{" + nl + sp + b'"agentminutes_schema"' + colon + b'"' + SCHEMA_VERSION.encode() + b'",'
            + nl + sp + b'"meta"' + colon + self._pretty(meta, 1) + b","
            + nl + sp + b'"events"' + colon
        )  # fmt: skip

    async def send(self, batch: Batch) -> None:
        events = batch.events
        if not events:
            return
        buf = self._buf
        del buf[:]
        if not self._started:
            first = events[0]
            buf += self._header(first.session_meta or Meta(harness=""))
            self._started = True
        add = self._agg.add
        for ev in events:
            add(ev)
        listed = self._listed(events)
        if listed is not None:
            buf += b"," if self._count else b"["
            buf += listed
            self._count += len(events)
            self._stream.write(buf)
            return
        nl = b"\n" if self._indent else b""
        pad = b" " * (self._indent * 2)
        for ev in events:
            buf += b"," if self._count else b"["
            buf += nl + pad + self._pretty(ev, 2)
            self._count += 1
        self._stream.write(buf)

    def _listed(self, events: list[Event]) -> bytes | None:
        """*events* as the document lists them, without the opening bracket; ``None`` to go one by one.

        The batch is encoded and re-indented as one array, which costs one
        encode and one format per batch instead of per event; shifting every
        line by one level puts the elements where the ``events`` member nests
        them. What the array form cannot do (no indent, or a lone surrogate
        escape that only the per-event fallback re-indents) goes event by event.
        """
        if not self._indent:
            return None
        try:
            data = msgspec.json.format(self._encoder.encode(events), indent=self._indent)
        except msgspec.DecodeError:
            return None
        pad = b" " * self._indent
        # "[\n  {...},\n  {...}\n]" -> "\n    {...},\n    {...}" (the "]" is written at the end).
        return data[1 : data.rindex(b"\n")].replace(b"\n", b"\n" + pad)

    def finish(self, skipped: dict[str, int]) -> None:
        """Close the document: totals from the events seen, *skipped* counts in the report."""
        if not self._started:
            self._stream.write(self._header(Meta(harness="")))
            self._started = True
        nl = b"\n" if self._indent else b""
        sp = b" " * self._indent
        colon = b": " if self._indent else b":"
        out = bytearray()
        # An empty session has no events at all: the contract writes null, not [].
        out += (nl + sp + b"]") if self._count else b"null"
        totals = self._agg.totals()
        if totals is not None:
            out += b"," + nl + sp + b'"totals"' + colon + self._pretty(totals, 1)
        report: Report = self._agg.report(skipped)
        report_json = msgspec.json.encode(report, order="deterministic")
        out += b"," + nl + sp + b'"report"' + colon + self._pretty(msgspec.Raw(report_json), 1)
        out += nl + b"}\n"
        self._stream.write(out)

    async def aclose(self) -> None:
        self._stream.flush()


class StatsSink:
    """Folds events into the behavioural summary; writes it as JSON on :meth:`finish`."""

    def __init__(self, stream: IO[bytes], *, indent: int = 2) -> None:
        self._stream = stream
        self._indent = indent
        self.builder = StatsBuilder()

    async def send(self, batch: Batch) -> None:
        self.builder.add_all(batch.events)

    def finish(self) -> None:
        """Write the summary."""
        # Maps in key order, as the reference writes them.
        data = msgspec.json.encode(self.builder.build(), order="deterministic")
        if self._indent:
            data = msgspec.json.format(data, indent=self._indent)
        self._stream.write(data + b"\n")

    async def aclose(self) -> None:
        self._stream.flush()
