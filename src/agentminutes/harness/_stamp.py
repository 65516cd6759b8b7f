"""The events of one record: what they share is written once, each kind's payload is set by name.

Every event an adapter builds from one record (a message, a row, a part) carries the
record's time and provenance, and the same ids (its own ``id``, the ``message_id`` of
the reply it belongs to, its ``parent_id``, the ``agent_id`` of a subagent's record). A :class:`Stamp` holds those; one method
per event kind makes the event with its payload. An adapter whose events of one
record differ in their ids (a reply's parts carry its ``message_id``, the reply also
its ``id``) makes one stamp for each.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any

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
    UserMessage,
)

__all__ = ("Stamp",)


@dataclass(slots=True)
class Stamp:
    """What the events of one record share: time, ids and provenance."""

    timestamp: str
    provenance: Provenance | None
    _: KW_ONLY
    id: str = ""
    message_id: str = ""
    parent_id: str = ""
    #: The subagent the record is of ("" for the main agent).
    agent_id: str = ""

    def event(self, kind: str, **payload: Any) -> Event:
        """An event of *kind* with this stamp and *payload* (one keyword: the kind's field)."""
        return Event(
            kind=kind,
            timestamp=self.timestamp,
            id=self.id,
            parent_id=self.parent_id,
            message_id=self.message_id,
            agent_id=self.agent_id,
            provenance=self.provenance,
            **payload,
        )

    # One method per kind, so that a caller's payload is type-checked against its kind.

    def session_meta(self, meta: Meta) -> Event:
        """A ``session_meta`` event."""
        return self.event(EventKind.SESSION_META, session_meta=meta)

    def user_message(self, message: UserMessage) -> Event:
        """A ``user_message`` event."""
        return self.event(EventKind.USER_MESSAGE, user_message=message)

    def assistant_message(self, message: AssistantMessage) -> Event:
        """An ``assistant_message`` event."""
        return self.event(EventKind.ASSISTANT_MESSAGE, assistant_message=message)

    def thinking(self, thinking: Thinking) -> Event:
        """A ``thinking`` event."""
        return self.event(EventKind.THINKING, thinking=thinking)

    def tool_call(self, call: ToolCall) -> Event:
        """A ``tool_call`` event."""
        return self.event(EventKind.TOOL_CALL, tool_call=call)

    def tool_result(self, result: ToolResult) -> Event:
        """A ``tool_result`` event."""
        return self.event(EventKind.TOOL_RESULT, tool_result=result)

    def system(self, system: SystemEvent) -> Event:
        """A ``system`` event."""
        return self.event(EventKind.SYSTEM, system=system)
