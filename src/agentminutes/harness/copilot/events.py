"""Building Copilot events: an unknown record, telemetry, and small value helpers."""

from __future__ import annotations

import hashlib

import msgspec
from msgspec import Raw

from agentminutes.harness.copilot.records import _TextPart
from agentminutes.schema import (
    Event,
    EventKind,
    Provenance,
    SystemEvent,
    Unknown,
)

# -- helpers -----------------------------------------------------------------------


def _unknown(record_type: str, reason: str, line: bytes, lineno: int, is_json: bool) -> Event:
    # A line that is not JSON is kept as a JSON string, so the output stays JSON.
    raw = Raw(line) if is_json else Raw(msgspec.json.encode(line.decode("utf-8", "replace")))
    return Event(
        kind=EventKind.UNKNOWN,
        provenance=Provenance(line=lineno, end_line=lineno),
        unknown=Unknown(record_type=record_type, reason=reason, raw=raw),
    )


def _telemetry(kind: str, data: Raw) -> SystemEvent:
    return SystemEvent(subtype=kind, details=data)


def _is_null(raw: Raw) -> bool:
    return len(raw) == 4 and bytes(raw) == b"null"


def _join(parts: list[_TextPart | None] | None) -> str:
    return "\n".join(p.text for p in parts or () if p is not None and p.text)


def _content_id(body: str) -> str:
    return "sha256:" + hashlib.sha256(body.encode()).hexdigest()
