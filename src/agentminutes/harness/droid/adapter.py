"""Factory Droid sessions: ``~/.factory/sessions/<cwd with / as ->/<session id>.jsonl``.

One JSON record a line, appended as the session goes:

* ``session_start`` (first): the session ``id``, ``title``, ``cwd``, ``version``
  (of the file format, 2 today), ``owner``, ``hostId``;
* ``message``: ``message.role`` is ``user`` or ``assistant`` and
  ``message.content`` Anthropic-shaped blocks (``text``, ``thinking`` with a
  signature, ``tool_use``; a user message holding ``tool_result`` blocks
  answers the calls). An assistant message names its model (``modelId``) and
  the provider's message id (``openaiMessageId`` for OpenAI-shaped providers).
  Each record has an ``id`` and a ``parentId``;
* ``agent_turn_outcome``: how a turn ended (``reason``, ``resultKind``);
* ``todo_state`` and ``compaction_state``: the to-do list and a compaction's
  state (named in Droid's code; not yet seen in a recording).

The usage is not in the transcript: ``<session id>.settings.json`` beside it
keeps the session's sums (``tokenUsage``: ``inputTokens`` fresh,
``cacheReadTokens``, ``cacheCreationTokens``, ``outputTokens``,
``thinkingTokens``), rewritten as the session goes. A transcript adapter reads
lines only, so assistant messages carry no usage here.

Mapping decisions:

* ``session_start`` becomes ``session_meta`` (id, cwd) plus a ``system`` event
  ``session_start`` whose details are the record.
* A user message whose ``id`` starts with ``context-`` is context Droid put
  before the person's message (a ``<system-reminder>`` of the tools at hand):
  ``origin`` ``harness``; other user text is ``human``. Tool results become
  ``tool_result`` events, one per block, and text beside them a user message.
* An assistant message is one API message: its thinking and tool calls first,
  then the ``assistant_message``; all share ``message_id`` = the provider's
  message id (the record id where there is none).
"""

from __future__ import annotations

from typing import ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._anthropic_wire import Block
from agentminutes.harness._content import Malformed, decoded, text_or_items
from agentminutes.harness._entries import Entry, EntryAdapter
from agentminutes.harness.base import Confidence, first_line, tool_call
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    Origin,
    SystemEvent,
    Thinking,
    ToolKind,
    UserMessage,
)
from agentminutes.timestamps import valid_timestamp

__all__ = ("HARNESS", "TOOL_KINDS", "DroidAdapter")

HARNESS: Final = "droid"

#: The newest session file format this adapter knows (``session_start.version``).
FORMAT_VERSION: Final = 2


class _Record(Entry, rename="camel"):
    title: str | None = None
    message: Raw = NO_RAW
    reason: str | None = None


class _Message(msgspec.Struct, rename="camel"):
    role: str | None = None
    content: Raw = NO_RAW
    model_id: str | None = None
    openai_message_id: str | None = None
    anthropic_message_id: str | None = None
    stop_reason: str | None = None


_decode_record = msgspec.json.Decoder(_Record).decode
_decode_message = msgspec.json.Decoder(_Message).decode
_decode_content = msgspec.json.Decoder(str | list[Raw] | None).decode
_decode_block = msgspec.json.Decoder(Block).decode

_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)

#: Every record type this adapter knows.
RECORD_TYPES: Final = frozenset(
    {"session_start", "message", "agent_turn_outcome", "todo_state", "compaction_state"}
)

#: Droid's tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "Read": ToolKind.READ,
    "LS": ToolKind.SEARCH,
    "Glob": ToolKind.SEARCH,
    "Grep": ToolKind.SEARCH,
    "Execute": ToolKind.EXECUTE,
    "Create": ToolKind.EDIT,
    "Edit": ToolKind.EDIT,
    "MultiEdit": ToolKind.EDIT,
    "ApplyPatch": ToolKind.EDIT,
    "WebSearch": ToolKind.FETCH,
    "FetchUrl": ToolKind.FETCH,
    "TodoWrite": ToolKind.THINK,
    "ExitSpecMode": ToolKind.SWITCH_MODE,
}


class DroidAdapter(EntryAdapter[_Record]):
    """Parses Factory Droid session files (format version 2)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "0.225.2"
    newest_format: ClassVar[int] = FORMAT_VERSION
    header_type: ClassVar[str] = "session_start"
    record_types: ClassVar[frozenset[str]] = RECORD_TYPES

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        first = first_line(head)
        try:
            rec = _decode_record(first)
        except _DECODE_ERRORS:
            return Confidence.NO_MATCH
        if rec.type == "session_start" and rec.id and rec.cwd is not None and b'"hostId"' in first:
            return Confidence.CERTAIN
        if rec.type == "message" and rec.message and b'"interactionMode"' in first:
            return Confidence.POSSIBLE
        return Confidence.NO_MATCH

    def decode_record(self, line: bytes) -> _Record:
        return _decode_record(line)

    def entry(self, rec: _Record, kind: str, line: bytes, lineno: int, out: list[Event]) -> None:
        try:
            if kind == "message":
                self._message(rec, line, lineno, out)
            else:
                text = rec.reason or "" if kind == "agent_turn_outcome" else ""
                out.append(
                    self.stamp(rec, line, lineno).system(
                        SystemEvent(subtype=kind, text=text, details=Raw(line))
                    )
                )
        except Malformed as exc:
            out.append(self.unknown_or_fail(kind, line, lineno, str(exc)))

    def header(self, rec: _Record, line: bytes, lineno: int, out: list[Event]) -> None:
        self.read_format(rec.version)
        self.open_once(rec, line, lineno, out, header=True)
        out.append(
            Event(
                kind=EventKind.SYSTEM,
                timestamp=valid_timestamp(rec.timestamp),
                provenance=self.prov(line, lineno),
                system=SystemEvent(
                    subtype="session_start", text=rec.title or "", details=Raw(line)
                ),
            )
        )

    def _message(self, rec: _Record, line: bytes, lineno: int, out: list[Event]) -> None:
        if not rec.message:
            raise Malformed("message record has no message")
        try:
            msg = _decode_message(rec.message)
            blocks = _decode_content(msg.content) if msg.content else None
        except _DECODE_ERRORS as exc:
            raise Malformed(f"malformed message: {exc}") from None
        if isinstance(blocks, str):
            blocks = [Raw(msgspec.json.encode({"type": "text", "text": blocks}))]
        role = msg.role or ""
        if role == "user":
            self._user(rec, blocks or [], line, lineno, out)
        elif role == "assistant":
            self._assistant(rec, msg, blocks or [], line, lineno, out)
        else:
            reason = f'unrecognized message role "{role}"' if role else "message has no role"
            raise Malformed(self.drift(reason))

    def _user(
        self, rec: _Record, blocks: list[Raw], line: bytes, lineno: int, out: list[Event]
    ) -> None:
        content: list[ContentBlock] = []
        results: list[Event] = []
        for raw in blocks:
            b = _block(raw)
            if b.type == "text":
                content.append(ContentBlock(kind="text", text=b.text or ""))
            elif b.type == "tool_result":
                results.append(
                    self.stamp(rec, line, lineno).tool_result(
                        self.tool_result(
                            b.tool_use_id or "",
                            _result_blocks(b.content),
                            is_error=bool(b.is_error),
                        )
                    )
                )
            elif b.type == "image":
                content.append(ContentBlock(kind="image", raw=raw))
            else:
                content.append(ContentBlock(kind="other", raw=raw))
        if content or not results:
            injected = (rec.id or "").startswith("context-")
            out.append(
                self.stamp(rec, line, lineno).user_message(
                    UserMessage(
                        origin=Origin.HARNESS if injected else Origin.HUMAN,
                        content=content or None,
                    )
                )
            )
        out.extend(results)

    def _assistant(
        self,
        rec: _Record,
        msg: _Message,
        blocks: list[Raw],
        line: bytes,
        lineno: int,
        out: list[Event],
    ) -> None:
        message_id = msg.openai_message_id or msg.anthropic_message_id or rec.id or ""
        text: list[ContentBlock] = []
        calls = False
        for raw in blocks:
            b = _block(raw)
            if b.type == "text":
                text.append(ContentBlock(kind="text", text=b.text or ""))
            elif b.type == "thinking":
                out.append(
                    self.stamp(rec, line, lineno, message_id=message_id).thinking(
                        Thinking(text=b.thinking or "", signature=b.signature or "")
                    )
                )
            elif b.type == "tool_use":
                calls = True
                call_id = b.id or ""
                name = b.name or ""
                self.name_call(call_id, name)
                out.append(
                    self.stamp(rec, line, lineno, message_id=message_id).tool_call(
                        tool_call(call_id, name, b.input, TOOL_KINDS)
                    )
                )
            else:
                raise Malformed(
                    self.drift(f'unrecognized assistant content block "{b.type or ""}"')
                )
        out.append(
            self.stamp(rec, line, lineno, message_id=message_id).assistant_message(
                AssistantMessage(
                    model=msg.model_id or "",
                    content=text or None,
                    stop_reason=msg.stop_reason or ("tool_use" if calls else ""),
                )
            )
        )


def _block(raw: Raw) -> Block:
    return decoded(_decode_block, raw, "content block")


def _result_blocks(content: Raw) -> list[ContentBlock]:
    """A tool result's content (a string, or text and image blocks) as content blocks."""
    return text_or_items(content, _decode_content, _result_block, "tool result")


def _result_block(raw: Raw) -> ContentBlock:
    b = _block(raw)
    if b.type == "text":
        return ContentBlock(kind="text", text=b.text or "")
    if b.type == "image":
        return ContentBlock(kind="image", raw=raw)
    return ContentBlock(kind="other", raw=raw)
