"""A whole JSON document fed line by line: buffered, then decoded at the end, with line spans.

Harnesses that rewrite one JSON file per session (an Amp thread, a Continue
session) are read by line adapters that hold the lines and convert the
document at the end of input (a follower re-reads the file on each rewrite).
:class:`JsonDocument` keeps the lines, decodes the whole, and says on which
lines each element of a top-level array sits, so every event's provenance
names the lines of the record it comes from. :class:`WholeJsonAdapter` is
the line adapter's side: hold the lines, decode them at the end, build;
:class:`DocumentBuilder` is what building the events of one document needs.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from datetime import UTC, datetime
from typing import ClassVar, Final, Generic, TypeVar

import msgspec
from msgspec import Raw

from agentminutes.harness.base import BaseAdapter, ParseOptions, SkipHook
from agentminutes.schema import Event, Provenance

__all__ = ("DocumentBuilder", "JsonDocument", "WholeJsonAdapter", "element_spans", "ms_time")

_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)
_Decoded = TypeVar("_Decoded")

#: A JSON string (a key when a colon follows) or a bracket: enough to find element bounds.
_TOKEN: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"(?:\s*:)?|[\[\]{}]', re.DOTALL)


class JsonDocument:
    """The lines of one JSON document, joined, with each line's starting offset."""

    __slots__ = ("buf", "linenos", "starts")

    def __init__(self, lines: list[tuple[int, bytes]]) -> None:
        self.linenos = [n for n, _ in lines]
        self.starts: list[int] = []
        pos = 0
        for _, text in lines:
            self.starts.append(pos)
            pos += len(text) + 1
        self.buf = b"\n".join(text for _, text in lines)

    @property
    def first(self) -> int:
        """The document's first line number (1 for an empty document)."""
        return self.linenos[0] if self.linenos else 1

    @property
    def last(self) -> int:
        """The document's last line number."""
        return self.linenos[-1] if self.linenos else 1

    def line(self, offset: int) -> int:
        """The line number of byte *offset* of the joined document."""
        if not self.linenos:
            return 1
        return self.linenos[max(0, bisect_right(self.starts, offset) - 1)]

    def lines_of(self, span: tuple[int, int] | None) -> tuple[int, int]:
        """The first and last line of *span* (the whole document for ``None``)."""
        if span is None:
            return self.first, self.last
        return self.line(span[0]), self.line(max(span[0], span[1] - 1))

    def provenance(
        self, span: tuple[int, int] | None, raw: bytes | None, keep_raw: bool
    ) -> Provenance:
        """The provenance of the record at *span*, with *raw* kept under ``--keep-raw``."""
        first, last = self.lines_of(span)
        if keep_raw and raw is not None:
            return Provenance(line=first, end_line=last, raw=[Raw(raw)])
        return Provenance(line=first, end_line=last)

    def error_line(self, message: str) -> int:
        """The line a decode error's ``byte N`` points at (the last line if none is named)."""
        m = re.search(r"byte (\d+)", message)
        return self.line(int(m.group(1))) if m else self.last

    def record_spans(self, key: bytes | None, count: int) -> list[tuple[int, int] | None]:
        """The spans of the *count* records of the array at top-level *key* (``None``: the
        document itself).

        Where the elements found are not *count* (a record that is no object or
        array), none is named: each record's provenance is the whole document.
        """
        found: list[tuple[int, int] | None] = list(self.element_spans(key))
        return found if len(found) == count else [None] * count

    def element_spans(self, key: bytes | None) -> list[tuple[int, int]]:
        """Byte spans of the elements of the array at top-level *key*, in order.

        Only object and array elements are found (the records of a session);
        the caller checks the count against the decoded array and falls back
        to the whole document's lines where they differ.
        """
        return element_spans(self.buf, key)


class DocumentBuilder:
    """The events of one decoded document, each record's provenance the lines it sits on."""

    def __init__(self, adapter: BaseAdapter, doc: JsonDocument) -> None:
        self.adapter = adapter
        self.doc = doc
        self.out: list[Event] = []
        self.keep_raw = adapter.options.keep_raw

    def prov(self, span: tuple[int, int] | None, raw: bytes | None = None) -> Provenance:
        """The provenance of the record at *span* (see :meth:`JsonDocument.provenance`)."""
        return self.doc.provenance(span, raw, self.keep_raw)

    def head_prov(self, spans: list[tuple[int, int] | None]) -> Provenance:
        """The document's head: its lines before the first record (*spans*), the whole kept raw."""
        first = self.doc.first
        head_end = self.doc.line(spans[0][0]) - 1 if spans and spans[0] else first
        head = Provenance(line=first, end_line=max(first, head_end))
        if self.keep_raw:
            head.raw = [Raw(self.doc.buf)]
        return head

    def reject(self, record_type: str, raw: bytes, span: tuple[int, int] | None, why: str) -> None:
        """The record *raw* at *span* is not one this format knows (its lines named)."""
        first, last = self.doc.lines_of(span)
        ev = self.adapter.unknown_or_fail(record_type, bytes(raw), first, why)
        if ev.provenance is not None:
            ev.provenance.end_line = last
        self.out.append(ev)


class WholeJsonAdapter(BaseAdapter, Generic[_Decoded]):
    """A line adapter for a one-JSON-document session: lines held, read whole at the end."""

    #: What the document is, as its decode error says: "invalid {document} document: …".
    document: ClassVar[str] = ""

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        self.lines: list[tuple[int, bytes]] = []

    @property
    def whole_document(self) -> bool:
        return True

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        self.lines.append((lineno, line))
        return []

    def finish(self) -> list[Event]:
        if not self.lines:
            return []
        doc = JsonDocument(self.lines)
        self.lines = []
        try:
            decoded = self.decode(doc.buf)
        except _DECODE_ERRORS as exc:
            line = doc.error_line(str(exc))
            reason = f"invalid {self.document} document: {exc}"
            return [self.unknown_or_fail("", doc.buf, line, reason)]
        return self.build(doc, decoded)

    def decode(self, buf: bytes) -> _Decoded:
        """The document *buf* decoded (a msgspec decode or validation error if it is not one)."""
        raise NotImplementedError

    def build(self, doc: JsonDocument, decoded: _Decoded) -> list[Event]:
        """The events of the decoded document *decoded*, read from *doc*."""
        raise NotImplementedError


def element_spans(buf: bytes, key: bytes | None) -> list[tuple[int, int]]:
    """Byte spans of the object and array elements of one array of the JSON text *buf*, in order.

    The array is the value of the top-level key *key*, or with ``None`` the
    document itself; a structural scan of strings and brackets finds them
    without decoding (strings are skipped whole, so a bracket in one is no bound).
    """
    want = None if key is None else b'"' + key + b'"'
    depth = 0
    inside = -1  # the depth of the target array's elements, once entered
    last_key = b""
    start = 0
    spans: list[tuple[int, int]] = []
    for m in _TOKEN.finditer(buf):
        tok = m.group()
        c = tok[0]
        if c == 0x22:  # a string: remember the keys of the top-level object
            if depth == 1 and tok.endswith(b":"):
                last_key = tok[:-1].rstrip()
            continue
        if c in (0x5B, 0x7B):  # [ {
            if inside < 0:
                if c == 0x5B and (
                    (want is None and depth == 0) or (depth == 1 and last_key == want)
                ):
                    inside = depth + 1
            elif depth == inside:
                start = m.start()
            depth += 1
        else:
            depth -= 1
            if inside >= 0:
                if depth == inside:
                    spans.append((start, m.end()))
                elif depth < inside:
                    break
    return spans


def ms_time(ms: int | float | None) -> str:
    """Epoch milliseconds as an RFC 3339 UTC time, to the millisecond ("" for none)."""
    if ms is None or ms <= 0:
        return ""
    try:
        when = datetime.fromtimestamp(int(ms) / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return ""
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(ms) % 1000:03d}Z"
