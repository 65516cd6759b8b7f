"""The ACP projection: a session as the Agent Client Protocol's ``session/update`` stream.

An ACP agent reports a prompt turn to its client as ``session/update``
notifications: message chunks, tool calls and their updates. :func:`project`
answers, per transcript, what that stream would have said about a recorded
session, and a :class:`LossReport` counts what it could not carry: ACP updates
have no timestamps, no token usage, no harness-injected context, no system
activity. The event schema borrows ACP's vocabulary where an analog exists,
so the mapping is direct:

=====================  ==========================================================
event                  ``session/update``
=====================  ==========================================================
``user_message``       ``user_message_chunk`` per text block
``assistant_message``  ``agent_message_chunk`` per text block
``thinking``           ``agent_thought_chunk``
``tool_call``          ``tool_call`` (``title`` the tool name, ``kind``, status
                       ``pending``, ``rawInput`` the input)
``tool_result``        ``tool_call_update`` (status ``completed`` or ``failed``,
                       a ``content`` entry per text block, ``rawOutput`` the
                       harness's enrichment)
``session_meta``,      nothing (counted as dropped events)
``system``,
``unknown``
=====================  ==========================================================

Loss report keys (the reference's): ``dropped_events`` by reason
(``session_meta``, ``system/<subtype>``, ``unknown``, ``user_message_empty``,
``assistant_message_empty``, ``thinking_empty``) and ``dropped_fields``
(``timestamp`` for every event that had one, ``user_message.origin`` for
harness-injected user content, ``assistant_message.model`` / ``.stop_reason`` /
``.usage``, ``thinking.signature``, ``tool_result.fetch``,
``content_block:<kind>`` for non-text blocks and ``content_block:truncated``).
Bookkeeping (event, parent, message and agent ids, provenance) is never a loss.

The projection is per event, so it streams: :class:`Projector` takes events
one at a time (``agentminutes convert --format acp`` writes each update as
its event is parsed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import msgspec
from msgspec import Raw

from agentminutes.formats.losses import loss_summary
from agentminutes.schema import NO_RAW, ContentBlock, Event, EventKind, Origin, Session

if TYPE_CHECKING:
    from agentminutes.formats import Options

__all__ = (
    "AcpWriter",
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "LossReport",
    "Notification",
    "Projector",
    "SessionNotification",
    "TextContent",
    "ToolCallContent",
    "ToolCallStart",
    "ToolCallUpdate",
    "Update",
    "UserMessageChunk",
    "encode_notification",
    "project",
    "writer",
)

#: The JSON-RPC method of the notifications.
METHOD: Final = "session/update"


class TextContent(msgspec.Struct, tag_field="type", tag="text"):
    """ACP's text content block: ``{"type": "text", "text": …}``."""

    text: str


class _Update(
    msgspec.Struct, omit_defaults=True, kw_only=True, rename="camel", tag_field="sessionUpdate"
):
    """Base of the ``session/update`` payloads, told apart by ``sessionUpdate``."""


class UserMessageChunk(_Update, tag="user_message_chunk", kw_only=True):
    """A piece of the user's message."""

    content: TextContent


class AgentMessageChunk(_Update, tag="agent_message_chunk", kw_only=True):
    """A piece of the agent's response."""

    content: TextContent


class AgentThoughtChunk(_Update, tag="agent_thought_chunk", kw_only=True):
    """A piece of the agent's reasoning."""

    content: TextContent


class ToolCallContent(msgspec.Struct, tag_field="type", tag="content"):
    """A tool call's content entry holding a content block: ``{"type": "content", "content": …}``."""

    content: TextContent


class ToolCallStart(_Update, tag="tool_call", kw_only=True):
    """A new tool call, reported as the model requests it."""

    tool_call_id: str
    title: str
    kind: str = ""
    status: str
    raw_input: Raw = NO_RAW


class ToolCallUpdate(_Update, tag="tool_call_update", kw_only=True):
    """A tool call's outcome: its final status, what it returned, the harness's raw view."""

    tool_call_id: str
    status: str
    content: list[ToolCallContent] | None = None
    raw_output: Raw = NO_RAW


#: One ``session/update`` payload.
Update = UserMessageChunk | AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallUpdate


class SessionNotification(msgspec.Struct, rename="camel"):
    """The ``params`` of a ``session/update`` notification."""

    session_id: str
    update: Update


class Notification(msgspec.Struct, kw_only=True):
    """A complete JSON-RPC ``session/update`` notification."""

    jsonrpc: str = "2.0"
    method: str = METHOD
    params: SessionNotification


class LossReport(msgspec.Struct, omit_defaults=True, kw_only=True):
    """What a session's ACP projection could not carry.

    ``projected_events`` counts the events that produced at least one update;
    ``dropped_events`` and ``dropped_fields`` count losses by reason and are
    left out when empty.
    """

    total_events: int = 0
    projected_events: int = 0
    updates: int = 0
    dropped_events: dict[str, int] | None = None
    dropped_fields: dict[str, int] | None = None

    def summary(self) -> str:
        """One line: the counts, then each loss by reason (sorted)."""
        head = (
            f"{self.total_events} events, {self.projected_events} projected, {self.updates} updates"
        )
        return loss_summary(head, self.dropped_events, self.dropped_fields)


def _one_line(raw: Raw) -> Raw:
    """*raw* without line breaks: a payload taken from a pretty-printed document is
    re-spaced onto one line (strings, numbers and key order untouched), so every
    notification stays one line of JSONL."""
    if not len(raw):
        return raw
    data = bytes(raw)
    if b"\n" not in data and b"\r" not in data:
        return raw
    return Raw(msgspec.json.format(data, indent=0))


class Projector:
    """Projects events one at a time, keeping the loss counts.

    ``session_id`` is the id the ``session_meta`` event named (the
    notifications' ``sessionId``), once it has passed.
    """

    def __init__(self) -> None:
        self.session_id = ""
        self._total = 0
        self._projected = 0
        self._updates = 0
        self._events: dict[str, int] = {}
        self._fields: dict[str, int] = {}

    def _event_lost(self, reason: str) -> None:
        self._events[reason] = self._events.get(reason, 0) + 1

    def _field_lost(self, reason: str) -> None:
        self._fields[reason] = self._fields.get(reason, 0) + 1

    def project(self, ev: Event) -> list[Update]:
        """The updates *ev* becomes (none for events ACP has no place for)."""
        self._total += 1
        if ev.timestamp:
            # ACP is live: time is when an update arrives, never a field.
            self._field_lost("timestamp")
        out: list[Update] = []
        kind = ev.kind
        if kind == EventKind.TOOL_CALL and ev.tool_call is not None:
            call = ev.tool_call
            out.append(
                ToolCallStart(
                    tool_call_id=call.tool_call_id,
                    title=call.name,
                    kind=call.kind,
                    status="pending",
                    raw_input=_one_line(call.input),
                )
            )
        elif kind == EventKind.TOOL_RESULT and ev.tool_result is not None:
            result = ev.tool_result
            if result.fetch is not None:
                self._field_lost("tool_result.fetch")
            content = [ToolCallContent(TextContent(t)) for t in self._texts(result.content)]
            out.append(
                ToolCallUpdate(
                    tool_call_id=result.tool_call_id,
                    status="failed" if result.is_error else "completed",
                    content=content or None,
                    raw_output=_one_line(result.enrichment),
                )
            )
        elif kind == EventKind.ASSISTANT_MESSAGE and ev.assistant_message is not None:
            msg = ev.assistant_message
            if msg.model:
                self._field_lost("assistant_message.model")
            if msg.stop_reason:
                self._field_lost("assistant_message.stop_reason")
            if msg.usage is not None:
                self._field_lost("assistant_message.usage")
            out.extend(AgentMessageChunk(content=TextContent(t)) for t in self._texts(msg.content))
            if not out:
                # An accounting anchor whose content all became thinking or tool calls.
                self._event_lost("assistant_message_empty")
        elif kind == EventKind.USER_MESSAGE and ev.user_message is not None:
            if ev.user_message.origin == Origin.HARNESS:
                self._field_lost("user_message.origin")
            out.extend(
                UserMessageChunk(content=TextContent(t))
                for t in self._texts(ev.user_message.content)
            )
            if not out:
                self._event_lost("user_message_empty")
        elif kind == EventKind.THINKING and ev.thinking is not None:
            if ev.thinking.signature:
                self._field_lost("thinking.signature")
            if ev.thinking.text:
                out.append(AgentThoughtChunk(content=TextContent(ev.thinking.text)))
            else:
                # Encrypted reasoning without plaintext: nothing an ACP client would see.
                self._event_lost("thinking_empty")
        elif kind == EventKind.SESSION_META:
            # ACP names the session in session/new, not in an update.
            if ev.session_meta is not None and not self.session_id:
                self.session_id = ev.session_meta.session_id
            self._event_lost("session_meta")
        elif kind == EventKind.SYSTEM and ev.system is not None:
            self._event_lost(f"system/{ev.system.subtype}")
        else:
            self._event_lost("unknown")
        if out:
            self._projected += 1
            self._updates += len(out)
        return out

    def _texts(self, blocks: list[ContentBlock] | None) -> list[str]:
        """The texts of the blocks that project as text, counting the blocks that cannot."""
        texts: list[str] = []
        for block in blocks or ():
            if block.truncated:
                self._field_lost("content_block:truncated")
            elif block.kind == "text":
                if block.text:
                    texts.append(block.text)
            else:
                self._field_lost(f"content_block:{block.kind}")
        return texts

    def report(self) -> LossReport:
        """The loss report so far."""
        return LossReport(
            total_events=self._total,
            projected_events=self._projected,
            updates=self._updates,
            dropped_events=dict(self._events) or None,
            dropped_fields=dict(self._fields) or None,
        )


def project(session: Session | Iterable[Event]) -> tuple[list[Update], LossReport]:
    """Project a session (or its events) onto ACP ``session/update`` payloads, in event order.

    Returns the updates and the :class:`LossReport` of what they could not carry.
    """
    projector = Projector()
    events = session.events if isinstance(session, Session) else session
    updates: list[Update] = []
    for ev in events:
        updates.extend(projector.project(ev))
    return updates, projector.report()


_encoder: Final = msgspec.json.Encoder()


def encode_notification(session_id: str, update: Update) -> bytes:
    """One update as a compact JSON-RPC ``session/update`` notification (no newline)."""
    return _encoder.encode(Notification(params=SessionNotification(session_id, update)))


class AcpWriter:
    """``--format acp``: each event's updates as notifications, one JSON-RPC message a line."""

    def __init__(self) -> None:
        self._projector = Projector()
        self._buf = bytearray()

    def add(self, events: Sequence[Event]) -> bytearray:
        """The notifications of *events*' updates (the buffer is reused by the next call)."""
        buf = self._buf
        del buf[:]
        projector = self._projector
        for ev in events:
            for update in projector.project(ev):
                params = SessionNotification(projector.session_id, update)
                _encoder.encode_into(Notification(params=params), buf, -1)
                buf += b"\n"
        return buf

    def finish(self, skipped: Mapping[str, int]) -> bytes:
        """Nothing: every update was written as its event came."""
        return b""

    def loss(self) -> LossReport:
        """What the updates could not carry."""
        return self._projector.report()


def writer(options: Options) -> AcpWriter:
    """A writer of one session's ACP notifications (no options apply)."""
    return AcpWriter()
