"""``--format json``: the whole-session document, the output contract's.

It streams: the writer writes the schema version and meta first, the events as
they come, and the totals and report at the end, so nothing needs the whole
list in memory. :class:`SessionJsonSink` is the same document as a sink
(``send``/``finish``/``aclose``) over a stream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

import msgspec

from agentminutes.schema import SCHEMA_VERSION, Event, Meta, Report
from agentminutes.schema.session import SessionAggregates
from agentminutes.sinks.encoding import format_json, one_line

if TYPE_CHECKING:
    from agentminutes.formats import Options
    from agentminutes.pipeline.batch import Batch

__all__ = ("SessionDocument", "SessionJsonSink", "writer")


class SessionDocument:
    """The whole-session JSON document, written as events arrive, never holding them all.

    The document opens with the schema version and the meta of the first
    ``session_meta`` event, lists the events as they come, and closes with the
    usage totals and the report once :meth:`finish` gives the skip counts.
    Output is indented like the reference's (*indent* 0: one line).
    """

    def __init__(self, *, indent: int = 2) -> None:
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

    def add(self, events: Sequence[Event]) -> bytearray:
        """*events* as the document lists them (the buffer is reused by the next call)."""
        buf = self._buf
        del buf[:]
        if not events:
            return buf
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
            return buf
        nl = b"\n" if self._indent else b""
        pad = b" " * (self._indent * 2)
        for ev in events:
            buf += b"," if self._count else b"["
            buf += nl + pad + self._pretty(ev, 2)
            self._count += 1
        return buf

    def _listed(self, events: Sequence[Event]) -> bytes | None:
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

    def finish(self, skipped: Mapping[str, int]) -> bytes:
        """The document's end: totals from the events seen, *skipped* counts in the report."""
        out = bytearray()
        if not self._started:
            out += self._header(Meta(harness=""))
            self._started = True
        nl = b"\n" if self._indent else b""
        sp = b" " * self._indent
        colon = b": " if self._indent else b":"
        # An empty session has no events at all: the contract writes null, not [].
        out += (nl + sp + b"]") if self._count else b"null"
        totals = self._agg.totals()
        if totals is not None:
            out += b"," + nl + sp + b'"totals"' + colon + self._pretty(totals, 1)
        report: Report = self._agg.report(dict(skipped))
        report_json = msgspec.json.encode(report, order="deterministic")
        out += b"," + nl + sp + b'"report"' + colon + self._pretty(msgspec.Raw(report_json), 1)
        out += nl + b"}\n"
        return bytes(out)

    def loss(self) -> None:
        """Nothing: the document is the contract, it carries every event."""
        return None


class SessionJsonSink:
    """The whole-session document (:class:`SessionDocument`) as a sink writing to *stream*."""

    def __init__(self, stream: IO[bytes], *, indent: int = 2) -> None:
        self._stream = stream
        self._document = SessionDocument(indent=indent)

    async def send(self, batch: Batch) -> None:
        if batch.events:
            self._stream.write(self._document.add(batch.events))

    def finish(self, skipped: Mapping[str, int]) -> None:
        """Close the document: totals from the events seen, *skipped* counts in the report."""
        self._stream.write(self._document.finish(skipped))

    async def aclose(self) -> None:
        self._stream.flush()


def writer(options: Options) -> SessionDocument:
    """A writer of one whole-session document, indented by ``options.indent``."""
    return SessionDocument(indent=options.indent)
