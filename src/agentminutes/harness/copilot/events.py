"""Building Copilot events: the stamp the events of one record share, and small value helpers."""

from __future__ import annotations

import hashlib

import msgspec
from msgspec import Raw

from agentminutes.harness.copilot.records import _TextPart
from agentminutes.schema import (
    AssistantMessage,
    Event,
    EventKind,
    Meta,
    Provenance,
    SystemEvent,
    Thinking,
    ToolCall,
    ToolResult,
    Unknown,
    UserMessage,
)

# -- helpers -----------------------------------------------------------------------


class _Stamp:
    """What every event of one record shares: time, ids, provenance."""

    __slots__ = ("agent", "id", "parent", "prov", "ts")

    def __init__(self, ts: str, id: str, parent: str, agent: str, prov: Provenance) -> None:
        self.ts, self.id, self.parent, self.agent, self.prov = ts, id, parent, agent, prov

    def _event(self, kind: str, message_id: str = "") -> Event:
        return Event(
            kind=kind,
            timestamp=self.ts,
            id=self.id,
            parent_id=self.parent,
            agent_id=self.agent,
            message_id=message_id,
            provenance=self.prov,
        )

    def meta(self, meta: Meta) -> Event:
        ev = self._event(EventKind.SESSION_META)
        ev.session_meta = meta
        return ev

    def system(self, system: SystemEvent) -> Event:
        ev = self._event(EventKind.SYSTEM)
        ev.system = system
        return ev

    def user(self, message: UserMessage) -> Event:
        ev = self._event(EventKind.USER_MESSAGE)
        ev.user_message = message
        return ev

    def thinking(self, message_id: str, thinking: Thinking) -> Event:
        ev = self._event(EventKind.THINKING, message_id)
        ev.thinking = thinking
        return ev

    def call(self, message_id: str, call: ToolCall) -> Event:
        ev = self._event(EventKind.TOOL_CALL, message_id)
        ev.tool_call = call
        return ev

    def anchor(self, message_id: str, message: AssistantMessage) -> Event:
        ev = self._event(EventKind.ASSISTANT_MESSAGE, message_id)
        ev.assistant_message = message
        return ev

    def result(self, result: ToolResult) -> Event:
        ev = self._event(EventKind.TOOL_RESULT)
        ev.tool_result = result
        return ev


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
