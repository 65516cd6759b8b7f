"""What the data-export adapters share (ChatGPT, claude.ai): the export's conversations, lenient JSON.

An export is one JSON array of conversations (``conversations.json``, alone or in
the export ZIP), or one conversation object. :class:`ExportAdapter` reads its
conversations one by one, each decoded when it is reached (a malformed one is the
error, named by its number), and opens each conversation's events.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, ClassVar, Final, TypeVar

import msgspec
from msgspec import Raw

from agentminutes.harness.base import BaseDocumentAdapter
from agentminutes.schema import Event
from agentminutes.timestamps import valid_timestamp

if TYPE_CHECKING:
    from agentminutes.harness.base import Document

__all__ = (
    "ExportAdapter",
    "as_bool",
    "as_str",
    "decode_object",
    "epoch_rfc3339",
    "first_byte",
    "split_export",
)

_decode_str = msgspec.json.Decoder(str | None).decode
_decode_obj = msgspec.json.Decoder(dict[str, Raw]).decode
_decode_list = msgspec.json.Decoder(list[Raw]).decode
_EPOCH: Final = re.compile(rb"\s*(\d+)(?:\.(\d+))?\s*")
_Conversation = TypeVar("_Conversation")


def split_export(adapter: BaseDocumentAdapter, payload: bytes, what: str) -> list[Raw]:
    """The conversations of an export: a JSON array of them, or one conversation object.

    The conversations stay raw (views into *payload*, not copies) until each is
    parsed. *what* names the export in the error for anything else.
    """
    start = payload[:64].lstrip()[:1]
    try:
        if start == b"[":
            return _decode_list(payload)
        if start == b"{":
            return [Raw(payload)]
    except msgspec.DecodeError as exc:
        raise adapter.error(f"invalid JSON: {exc}", 0) from None
    raise adapter.error(f"not a {what}: expected a JSON array of conversations", 0)


class ExportAdapter(BaseDocumentAdapter):
    """A data export's adapter: its conversations, from the export ZIP or its JSON."""

    containers: ClassVar[frozenset[str]] = frozenset({"json", "zip"})
    zip_member: ClassVar[str] = "conversations.json"
    #: The export as its errors name it: "not a {export_name}: …".
    export_name: ClassVar[str] = "data export"

    def exported(
        self, doc: Document, decode: Callable[[Raw], _Conversation]
    ) -> Iterator[tuple[int, _Conversation]]:
        """Each conversation of *doc*, numbered from 1, as *decode* reads it (or the error)."""
        for i, raw in enumerate(split_export(self, doc.payload(), self.export_name), 1):
            try:
                conversation = decode(raw)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise self.error(f"conversation #{i} is malformed: {exc}", 0) from None
            yield i, conversation

    def with_session_meta(
        self, events: list[Event], session_id: str, timestamp: str
    ) -> list[Event]:
        """A conversation's *events* after its ``session_meta`` (provenance: its first record)."""
        provenance = events[0].provenance if events else None
        return [self.session_meta(provenance, timestamp=timestamp, session_id=session_id), *events]


def first_byte(raw: Raw | None) -> bytes:
    """The first byte of a raw JSON value (which tells its type), without copying it."""
    if not raw:
        return b""
    return memoryview(raw)[:1].tobytes()


def as_str(raw: Raw | None) -> str:
    """The string a raw JSON value holds, or ``""`` for anything else."""
    if not raw:
        return ""
    try:
        return _decode_str(raw) or ""
    except (msgspec.DecodeError, msgspec.ValidationError):
        return ""


def as_bool(raw: Raw | None) -> bool:
    """True only for a raw JSON ``true``."""
    return raw is not None and len(raw) == 4 and bytes(raw) == b"true"


def decode_object(raw: Raw | None) -> dict[str, Raw]:
    """A raw JSON object's members (still raw); ``{}`` for anything else."""
    if raw is None or first_byte(raw) != b"{":
        return {}
    try:
        return _decode_obj(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return {}


def epoch_rfc3339(raw: Raw | None) -> str:
    """An epoch-seconds JSON number as an RFC 3339 UTC time, keeping the digits present.

    ``1686317999.727911`` becomes ``2023-06-09T13:39:59.727911Z``; fractional
    digits past nanoseconds are cut and trailing zeros dropped. A string value
    that already is RFC 3339 is kept; anything else gives ``""``.
    """
    if not raw:
        return ""
    data = bytes(raw)
    m = _EPOCH.fullmatch(data)
    if m is None:
        if data[:1] == b'"':
            return valid_timestamp(as_str(raw))
        try:
            value = float(data)
        except ValueError:
            return ""
        if not 0 <= value < 1e11:
            return ""
        seconds, frac = int(value), f"{value - int(value):.6f}"[2:]
    else:
        seconds, frac = int(m[1]), (m[2] or b"").decode()
    if seconds > 100_000_000_000:
        return ""
    try:
        t = time.gmtime(seconds)
    except (OverflowError, OSError, ValueError):
        return ""
    text = (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"
        f"T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    )
    frac = frac[:9].rstrip("0")
    return f"{text}.{frac}Z" if frac else f"{text}Z"
