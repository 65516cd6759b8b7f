"""pi coding agent sessions: ``~/.pi/agent/sessions/--<cwd>--/<timestamp>_<id>.jsonl``.

One JSON record per line, written once and appended (the file is created when
the first assistant message arrives, with everything buffered until then).
The first line is the ``session`` header; every later record is an *entry*:

* ``message`` — ``message.role`` is ``user``, ``assistant`` (one complete API
  message: text, thinking and ``toolCall`` blocks, ``usage`` with ``cost``,
  ``stopReason``), ``toolResult`` (paired to its call by ``toolCallId``),
  ``bashExecution`` (a command the person ran with ``!``), ``custom`` (``hookMessage``
  before format v3: extension content injected into the model's context) and,
  defensively, ``branchSummary`` / ``compactionSummary``;
* lifecycle entries: ``model_change``, ``thinking_level_change``, ``compaction``,
  ``branch_summary``, ``custom`` (extension state), ``custom_message``
  (extension content for the model), ``label``, ``session_info``.

Format versions: v1 (no ``version`` field; the header carries ``provider``,
``modelId``, ``thinkingLevel`` and, for a branched session, ``branchedFrom``;
entries have no ``id``/``parentId``), v2 (entries form a tree through
``id``/``parentId``) and v3 (``hookMessage`` renamed ``custom``; a forked
session names its source in ``parentSession``). The file records no pi release.

Mapping decisions:

* The header becomes ``session_meta`` plus a ``system`` event of subtype
  ``session`` whose ``details`` is the header verbatim. Fork lineage has no field
  of its own in the schema, so that companion event carries it: its ``text`` is
  the parent session's path (``parentSession``, or v1's ``branchedFrom``) and the
  verbatim header keeps the original key. A forked file begins with copies of
  its parent's entries; the lineage is what lets a consumer tell them apart.
* An assistant message is one API message, written complete: its thinking and
  tool-call events come first, then the ``assistant_message``; all share
  ``message_id`` = the entry id. ``usage`` maps ``input``/``output``/``cacheRead``/
  ``cacheWrite`` (pi reports fresh input apart from cached tokens, and counts
  reasoning inside ``output``); ``totalTokens`` and ``cost`` stay verbatim in
  ``usage.extra``. An ``errorMessage`` also becomes a ``system`` event
  ``assistant/<stopReason>``.
* Origin: ``user`` and ``bashExecution`` messages are ``human`` (what a person
  typed; a command run with ``!!``, kept out of the model's context, is a
  ``system`` event ``bashExecution`` instead); extension and summary messages
  injected into the context are ``harness``. Compactions and branch summaries are ``system`` events whose text
  is the summary.
"""

from __future__ import annotations

from typing import ClassVar, Final

import msgspec
from msgspec import Raw

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
    TokenUsage,
    ToolKind,
    UserMessage,
)
from agentminutes.timestamps import valid_timestamp

__all__ = ("PiAdapter",)

HARNESS: Final = "pi"

#: The newest session format this adapter knows.
FORMAT_VERSION: Final = 3


class _Entry(Entry, rename="camel"):
    """The fields of a record that steer parsing; bulky parts stay raw."""

    parent_session: str | None = None
    branched_from: str | None = None
    message: Raw = NO_RAW
    thinking_level: str | None = None
    provider: str | None = None
    model_id: str | None = None
    summary: str | None = None
    custom_type: str | None = None
    content: Raw = NO_RAW
    label: str | None = None
    name: str | None = None


class _Message(msgspec.Struct, rename="camel"):
    role: str | None = None
    content: Raw = NO_RAW
    model: str | None = None
    usage: Raw = NO_RAW
    stop_reason: str | None = None
    error_message: str | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool | None = None
    details: Raw = NO_RAW
    command: str | None = None
    exclude_from_context: bool | None = None
    summary: str | None = None


class _Block(msgspec.Struct, rename="camel"):
    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    thinking_signature: str | None = None
    id: str | None = None
    name: str | None = None
    arguments: Raw = NO_RAW
    mime_type: str | None = None


_decode_entry = msgspec.json.Decoder(_Entry).decode
_decode_message = msgspec.json.Decoder(_Message).decode
_decode_block = msgspec.json.Decoder(_Block).decode
_decode_content = msgspec.json.Decoder(str | list[Raw] | None).decode
_decode_usage = msgspec.json.Decoder(dict[str, Raw] | None).decode
_decode_number = msgspec.json.Decoder(int | float | None).decode

_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)

#: Every entry type of the v1–v3 formats.
ENTRY_TYPES: Final = frozenset(
    {
        "session",
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)

#: Native tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "read": ToolKind.READ,
    "bash": ToolKind.EXECUTE,
    "edit": ToolKind.EDIT,
    "write": ToolKind.EDIT,
    "grep": ToolKind.SEARCH,
    "find": ToolKind.SEARCH,
    "glob": ToolKind.SEARCH,
    "ls": ToolKind.SEARCH,
}

#: Message roles whose content the harness injected into the model's context.
_INJECTED_ROLES: Final = frozenset({"custom", "hookMessage", "branchSummary", "compactionSummary"})

_USAGE_KEYS: Final = ("input", "output", "cacheRead", "cacheWrite")


class PiAdapter(EntryAdapter[_Entry]):
    """Parses pi coding-agent session files (format v1 to v3; v1 headers number none)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "0.73.1"
    newest_format: ClassVar[int] = FORMAT_VERSION
    header_type: ClassVar[str] = "session"
    record_types: ClassVar[frozenset[str]] = ENTRY_TYPES

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        first = first_line(head)
        try:
            rec = _decode_entry(first)
        except _DECODE_ERRORS:
            return Confidence.NO_MATCH
        kind = rec.type or ""
        if kind == "session" and rec.id and rec.timestamp and rec.cwd is not None:
            return Confidence.CERTAIN
        if kind in ENTRY_TYPES and rec.timestamp and b'"parentId"' in first:
            return Confidence.POSSIBLE
        return Confidence.NO_MATCH

    # -- parsing -----------------------------------------------------------

    def decode_record(self, line: bytes) -> _Entry:
        return _decode_entry(line)

    def entry(self, rec: _Entry, kind: str, line: bytes, lineno: int, out: list[Event]) -> None:
        if kind == "message":
            self._message(rec, line, lineno, out)
        elif kind == "custom_message":
            out.append(self._injected(rec, rec.content, line, lineno))
        else:
            out.append(self._lifecycle(rec, kind, line, lineno))

    def header(self, rec: _Entry, line: bytes, lineno: int, out: list[Event]) -> None:
        self.read_format(rec.version)
        if rec.version is None:
            self.format_version = self.format_version or 1
        self.open_once(rec, line, lineno, out, header=True)
        parent = rec.parent_session or rec.branched_from or ""
        out.append(
            Event(
                kind=EventKind.SYSTEM,
                timestamp=valid_timestamp(rec.timestamp),
                id=rec.id or "",
                provenance=self.prov(line, lineno),
                system=SystemEvent(subtype="session", text=parent, details=Raw(line)),
            )
        )

    def _lifecycle(self, rec: _Entry, kind: str, line: bytes, lineno: int) -> Event:
        subtype = kind
        text = ""
        if kind == "model_change":
            text = rec.model_id or ""
        elif kind == "thinking_level_change":
            text = rec.thinking_level or ""
        elif kind in ("compaction", "branch_summary"):
            text = rec.summary or ""
        elif kind == "custom":
            subtype = f"custom/{rec.custom_type or ''}"
        elif kind == "label":
            text = rec.label or ""
        elif kind == "session_info":
            text = rec.name or ""
        return self.stamp(rec, line, lineno).system(
            SystemEvent(subtype=subtype, text=text, details=Raw(line))
        )

    def _message(self, rec: _Entry, line: bytes, lineno: int, out: list[Event]) -> None:
        if not rec.message:
            out.append(
                self.unknown_or_fail("message", line, lineno, "message record has no message")
            )
            return
        try:
            msg = _decode_message(rec.message)
        except _DECODE_ERRORS as exc:
            out.append(self.unknown_or_fail("message", line, lineno, f"malformed message: {exc}"))
            return
        role = msg.role or ""
        try:
            if role == "user":
                out.append(self._user(rec, msg, line, lineno))
            elif role == "assistant":
                self._assistant(rec, msg, line, lineno, out)
            elif role == "toolResult":
                out.append(self._tool_result(rec, msg, line, lineno))
            elif role == "bashExecution":
                out.append(self._bash(rec, msg, line, lineno))
            elif role in _INJECTED_ROLES:
                content = msg.content
                if not content and msg.summary is not None:
                    content = Raw(msgspec.json.encode(msg.summary))
                out.append(self._injected(rec, content, line, lineno))
            else:
                reason = f'unrecognized message role "{role}"' if role else "message has no role"
                out.append(self.unknown_or_fail("message", line, lineno, self.drift(reason)))
        except Malformed as exc:
            out.append(self.unknown_or_fail("message", line, lineno, str(exc)))

    def _user(self, rec: _Entry, msg: _Message, line: bytes, lineno: int) -> Event:
        return self.stamp(rec, line, lineno).user_message(
            UserMessage(origin=Origin.HUMAN, content=_blocks(msg.content) or None)
        )

    def _injected(self, rec: _Entry, content: Raw, line: bytes, lineno: int) -> Event:
        try:
            blocks = _blocks(content)
        except Malformed as exc:
            return self.unknown_or_fail(rec.type or "", line, lineno, str(exc))
        return self.stamp(rec, line, lineno).user_message(
            UserMessage(origin=Origin.HARNESS, content=blocks or None)
        )

    def _bash(self, rec: _Entry, msg: _Message, line: bytes, lineno: int) -> Event:
        if msg.exclude_from_context:
            # "!!": run for the person only, never shown to the model.
            return self.stamp(rec, line, lineno).system(
                SystemEvent(subtype="bashExecution", text=msg.command or "", details=Raw(line))
            )
        # What the person typed after "!", then the execution record as pi kept it.
        blocks = [
            ContentBlock(kind="text", text=msg.command or ""),
            ContentBlock(kind="other", raw=rec.message),
        ]
        return self.stamp(rec, line, lineno).user_message(
            UserMessage(origin=Origin.HUMAN, content=blocks)
        )

    def _tool_result(self, rec: _Entry, msg: _Message, line: bytes, lineno: int) -> Event:
        return self.stamp(rec, line, lineno).tool_result(
            self.tool_result(
                msg.tool_call_id or "",
                _blocks(msg.content),
                is_error=bool(msg.is_error),
                name=msg.tool_name or "",
                enrichment=msg.details if msg.details and bytes(msg.details) != b"null" else NO_RAW,
            )
        )

    def _assistant(
        self, rec: _Entry, msg: _Message, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        try:
            raw_blocks = _decode_content(msg.content) if msg.content else None
        except _DECODE_ERRORS as exc:
            raise Malformed(f"malformed assistant content: {exc}") from None
        try:
            usage = _usage(msg.usage) if msg.usage else None
        except _DECODE_ERRORS as exc:
            raise Malformed(f"malformed usage: {exc}") from None
        message_id = rec.id or ""
        events: list[Event] = []
        text: list[ContentBlock] = []
        if isinstance(raw_blocks, str):
            text.append(ContentBlock(kind="text", text=raw_blocks))
        for raw in raw_blocks if isinstance(raw_blocks, list) else ():
            try:
                b = _decode_block(raw)
            except _DECODE_ERRORS as exc:
                raise Malformed(f"malformed assistant content: {exc}") from None
            if b.type == "text":
                text.append(ContentBlock(kind="text", text=b.text or ""))
            elif b.type == "thinking":
                events.append(
                    self.stamp(rec, line, lineno, message_id=message_id).thinking(
                        Thinking(text=b.thinking or "", signature=b.thinking_signature or "")
                    )
                )
            elif b.type == "toolCall":
                call_id = b.id or ""
                name = b.name or ""
                self.name_call(call_id, name)
                events.append(
                    self.stamp(rec, line, lineno, message_id=message_id).tool_call(
                        tool_call(call_id, name, b.arguments, TOOL_KINDS)
                    )
                )
            elif b.type == "image":
                text.append(ContentBlock(kind="image", mime_type=b.mime_type or "", raw=raw))
            else:
                raise Malformed(
                    self.drift(f'unrecognized assistant content block "{b.type or ""}"')
                )
        out.extend(events)
        stop = msg.stop_reason or ""
        out.append(
            self.stamp(rec, line, lineno, message_id=message_id).assistant_message(
                AssistantMessage(
                    model=msg.model or "", content=text or None, stop_reason=stop, usage=usage
                )
            )
        )
        if msg.error_message:
            out.append(
                self.stamp(rec, line, lineno, message_id=message_id).system(
                    SystemEvent(
                        subtype=f"assistant/{stop or 'error'}",
                        level="warning" if stop == "aborted" else "error",
                        text=msg.error_message,
                    )
                )
            )


def _blocks(content: Raw) -> list[ContentBlock]:
    """User-role content (a string, or text and image blocks) as content blocks."""
    return text_or_items(content, _decode_content, _block, "content")


def _block(raw: Raw) -> ContentBlock:
    b = decoded(_decode_block, raw, "content block")
    if b.type == "text":
        return ContentBlock(kind="text", text=b.text or "")
    if b.type == "image":
        return ContentBlock(kind="image", mime_type=b.mime_type or "", raw=raw)
    return ContentBlock(kind="other", raw=raw)


def _usage(raw: Raw) -> TokenUsage | None:
    fields = _decode_usage(raw)
    if fields is None:
        return None
    counts = [0, 0, 0, 0]
    for i, key in enumerate(_USAGE_KEYS):
        value = fields.pop(key, None)
        if value is not None:
            counts[i] = int(_decode_number(value) or 0)
    return TokenUsage(
        input_tokens=counts[0],
        output_tokens=counts[1],
        cache_read_input_tokens=counts[2],
        cache_creation_input_tokens=counts[3],
        extra=fields or None,
    )
