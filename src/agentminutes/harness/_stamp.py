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

    def event(self, kind: str) -> Event:
        """An event of *kind* with this stamp and no payload yet."""
        return Event(
            kind=kind,
            timestamp=self.timestamp,
            id=self.id,
            parent_id=self.parent_id,
            message_id=self.message_id,
            agent_id=self.agent_id,
            provenance=self.provenance,
        )

    def session_meta(self, meta: Meta) -> Event:
        """A ``session_meta`` event."""
        ev = self.event(EventKind.SESSION_META)
        ev.session_meta = meta
        return ev

    def user_message(self, message: UserMessage) -> Event:
        """A ``user_message`` event."""
        ev = self.event(EventKind.USER_MESSAGE)
        ev.user_message = message
        return ev

    def assistant_message(self, message: AssistantMessage) -> Event:
        """An ``assistant_message`` event."""
        ev = self.event(EventKind.ASSISTANT_MESSAGE)
        ev.assistant_message = message
        return ev

    def thinking(self, thinking: Thinking) -> Event:
        """A ``thinking`` event."""
        ev = self.event(EventKind.THINKING)
        ev.thinking = thinking
        return ev

    def tool_call(self, call: ToolCall) -> Event:
        """A ``tool_call`` event."""
        ev = self.event(EventKind.TOOL_CALL)
        ev.tool_call = call
        return ev

    def tool_result(self, result: ToolResult) -> Event:
        """A ``tool_result`` event."""
        ev = self.event(EventKind.TOOL_RESULT)
        ev.tool_result = result
        return ev

    def system(self, system: SystemEvent) -> Event:
        """A ``system`` event."""
        ev = self.event(EventKind.SYSTEM)
        ev.system = system
        return ev
