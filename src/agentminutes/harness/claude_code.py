"""Claude Code transcripts: ``~/.claude/projects/<project>/<session>.jsonl``.

Subagent transcripts (``<session>/subagents/**/agent-*.jsonl``, and the older
flat ``agent-*.jsonl``) are the same format with ``isSidechain`` set.

Each line is one record ``{"type": ..., "uuid", "parentUuid", "timestamp",
"sessionId", "version", "cwd", ...}``. One API message is split across several
``assistant`` records (one content block each) that share ``message.id``, with
usage written as a growing snapshot; they fold into exactly one
``assistant_message`` carrying the final snapshot. Tool results arrive inside
``user`` records, with the harness's structured view of the result in the
``toolUseResult`` sidecar.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes._time import valid_timestamp
from agentminutes.harness._base import BaseAdapter, Confidence, ParseOptions, SkipHook
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    FetchInfo,
    Meta,
    Origin,
    Provenance,
    SystemEvent,
    Thinking,
    TokenUsage,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)

__all__ = ("ClaudeCodeAdapter",)

HARNESS: Final = "claude-code"


class _Record(msgspec.Struct, rename="camel"):
    """The fields of a record's envelope that steer parsing; bulky parts stay raw."""

    type: str | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    timestamp: str | None = None
    session_id: str | None = None
    version: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    is_sidechain: bool | None = None
    agent_id: str | None = None
    is_meta: bool | None = None
    is_compact_summary: bool | None = None
    subtype: str | None = None
    level: str | None = None
    name: str | None = None
    id: str | None = None
    tool_use_id: str | None = msgspec.field(default=None, name="tool_use_id")
    input: Raw = NO_RAW
    output: Raw = NO_RAW
    content: Raw = NO_RAW
    message: Raw = NO_RAW
    attachment: Raw = NO_RAW
    tool_use_result: Raw = NO_RAW
    is_api_error_message: bool | None = None


class _Message(msgspec.Struct):
    id: str | None = None
    model: str | None = None
    stop_reason: str | None = None
    content: Raw = NO_RAW
    usage: Raw = NO_RAW


class _Block(msgspec.Struct):
    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    id: str | None = None
    name: str | None = None
    input: Raw = NO_RAW
    tool_use_id: str | None = None
    is_error: bool | None = None
    content: Raw = NO_RAW


class _Attachment(msgspec.Struct, rename="camel"):
    """The attachment fields a system event's text may come from."""

    type: str | None = None
    content: Raw = NO_RAW
    prompt: Raw = NO_RAW
    snippet: str | None = None
    banner: str | None = None
    text: str | None = None
    added_lines: list[str] | None = None
    added_blocks: list[str] | None = None


class _TextBlock(msgspec.Struct):
    type: str | None = None
    text: str | None = None


class _Fetch(msgspec.Struct):
    url: str | None = None
    bytes: int | None = None
    code: int | None = None
    duration_ms: int | None = msgspec.field(default=None, name="durationMs")


_decode_record = msgspec.json.Decoder(_Record).decode
_decode_message = msgspec.json.Decoder(_Message).decode
_decode_block = msgspec.json.Decoder(_Block).decode
_decode_blocks = msgspec.json.Decoder(str | list[Raw] | None).decode
_decode_attachment = msgspec.json.Decoder(_Attachment).decode
_decode_prompt = msgspec.json.Decoder(str | list[_TextBlock] | None).decode
_decode_usage = msgspec.json.Decoder(dict[str, Raw] | None).decode
_decode_int = msgspec.json.Decoder(int | None).decode
_decode_str = msgspec.json.Decoder(str).decode
_decode_fetch = msgspec.json.Decoder(_Fetch).decode

#: Records that carry model-visible content and become events.
CONVERSATION_TYPES: Final = frozenset({"user", "assistant", "system", "attachment"})

#: Harness and UI bookkeeping with nothing the model saw: counted, not emitted.
SKIP_TYPES: Final = frozenset(
    {
        "mode",
        "permission-mode",
        "ai-title",
        "last-prompt",
        "file-history-snapshot",
        "file-history-delta",
        "queue-operation",
    }
)

#: Record types the reference rejects that we read as documented skips: session
#: titles and naming, UI progress ticks (an ``agent_progress`` tick repeats what
#: the subagent's own transcript records, so counting it would double count),
#: workflow journal entries and links to other sessions or branches. None of
#: them carries anything the model saw.
QUIET_TYPES: Final = frozenset(
    {
        "progress",
        "summary",
        "custom-title",
        "agent-name",
        "bridge-session",
        "frame-link",
        "pr-link",
        "worktree-state",
        "relocated",
        "atis-latch",
        "started",
        "result",
        "fork-context-ref",
        "teleported-from",
    }
)

#: Early top-level tool records (``{"type": "tool_use", "name", "input"}`` and
#: ``{"type": "tool_result", "name", "output"}``) seen in drifted transcripts.
LOOSE_TOOL_TYPES: Final = frozenset({"tool_use", "tool_result"})

#: Native tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "Read": ToolKind.READ,
    "Glob": ToolKind.SEARCH,
    "Grep": ToolKind.SEARCH,
    "ToolSearch": ToolKind.SEARCH,
    "TaskOutput": ToolKind.READ,
    "Bash": ToolKind.EXECUTE,
    "Edit": ToolKind.EDIT,
    "Write": ToolKind.EDIT,
    "NotebookEdit": ToolKind.EDIT,
    "WebFetch": ToolKind.FETCH,
    "WebSearch": ToolKind.FETCH,
    "TodoWrite": ToolKind.THINK,
}

_USAGE_KEYS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


class _Fold:
    """The records of one assistant API message seen so far."""

    __slots__ = (
        "first_line",
        "last_line",
        "message_id",
        "model",
        "parent_uuid",
        "raw",
        "stop_reason",
        "text",
        "timestamp",
        "usage",
        "uuid",
    )

    def __init__(self, message_id: str, rec: _Record, msg: _Message, lineno: int) -> None:
        self.message_id = message_id
        self.uuid = rec.uuid or ""
        self.parent_uuid = rec.parent_uuid or ""
        self.timestamp = valid_timestamp(rec.timestamp)
        self.model = msg.model or ""
        self.first_line = lineno
        self.last_line = lineno
        self.stop_reason = ""
        self.usage: TokenUsage | None = None
        self.text: list[ContentBlock] = []
        self.raw: list[Raw] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)


class ClaudeCodeAdapter(BaseAdapter):
    """Parses Claude Code session transcripts (main sessions and subagents)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "2.1.232"
    prompt_tokens: ClassVar[str] = "all"

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        self.meta_sent = False
        self.tool_names: dict[str, str] = {}
        self.fold: _Fold | None = None
        # Re-recorded copies: Claude Code re-appends earlier rows with their
        # uuids on a second compaction, and re-records an already answered API
        # message (same message id, new uuids) on a rewound branch. Both are
        # counted as duplicates instead of being accounted twice.
        self.seen_uuids: set[str] = set()
        self.closed_ids: set[str] = set()
        self.answered: set[str] = set()
        self.recopied_calls: set[str] = set()
        self.pending_loose: dict[str, list[str]] = {}

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        if head.startswith(b"\xef\xbb\xbf"):
            head = head[3:]
        first = head.split(b"\n", 1)[0].strip()
        try:
            rec = _decode_record(first)
        except (msgspec.DecodeError, msgspec.ValidationError):
            if b'"parentUuid"' in head and b'"sessionId"' in head:
                return Confidence.POSSIBLE
            return Confidence.NO_MATCH
        kind = rec.type or ""
        if kind in CONVERSATION_TYPES and rec.session_id and rec.uuid:
            return Confidence.CERTAIN
        if kind in SKIP_TYPES and (
            rec.session_id or kind in ("file-history-snapshot", "file-history-delta")
        ):
            return Confidence.CERTAIN
        if kind in CONVERSATION_TYPES or kind in SKIP_TYPES or kind == "summary":
            return Confidence.POSSIBLE
        if kind and (rec.session_id or b'"parentUuid"' in first or b'"leafUuid"' in first):
            return Confidence.POSSIBLE
        return Confidence.NO_MATCH

    # -- parsing -----------------------------------------------------------

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        try:
            rec = _decode_record(line)
        except msgspec.ValidationError as exc:
            return [self.unknown_or_fail("", line, lineno, f"invalid record: {exc}")]
        except msgspec.DecodeError as exc:
            return [self.unknown_or_fail("", line, lineno, f"invalid JSON: {exc}")]
        kind = rec.type or ""
        if kind in SKIP_TYPES or kind in QUIET_TYPES:
            self.skip(kind, lineno)
            return []
        if kind not in CONVERSATION_TYPES and kind not in LOOSE_TOOL_TYPES:
            return [self.unknown_or_fail(kind, line, lineno, f'unrecognized record type "{kind}"')]
        uuid = rec.uuid
        if uuid:
            if uuid in self.seen_uuids:
                self.skip(f"{kind}/duplicate", lineno)
                return []
            self.seen_uuids.add(uuid)
        if not self.version and rec.version:
            self.version = rec.version
        out: list[Event] = []
        if not self.meta_sent:
            self.meta_sent = True
            out.append(self._meta(rec, line, lineno))
        if kind == "user":
            self._user(rec, line, lineno, out)
        elif kind == "assistant":
            self._assistant(rec, line, lineno, out)
        elif kind == "system":
            out.append(self._system(rec, line, lineno))
        elif kind == "attachment":
            out.append(self._attachment(rec, line, lineno))
        else:
            out.append(self._loose_tool(rec, line, lineno))
        return out

    def finish(self) -> list[Event]:
        if self.fold is None:
            return []
        return [self._close_fold()]

    def _meta(self, rec: _Record, line: bytes, lineno: int) -> Event:
        return Event(
            kind=EventKind.SESSION_META,
            timestamp=valid_timestamp(rec.timestamp),
            provenance=self.prov(line, lineno),
            session_meta=Meta(
                harness=HARNESS,
                harness_version=rec.version or self.options.harness_version,
                session_id=rec.session_id or "",
                subagent_id=rec.agent_id or "",
                is_subagent=bool(rec.is_sidechain),
                cwd=rec.cwd or "",
                git_branch=rec.git_branch or "",
            ),
        )

    def _message(self, rec: _Record, line: bytes, lineno: int) -> tuple[_Message, list[Raw] | str]:
        if not rec.message:
            raise self._reject(rec, line, lineno, f"{rec.type} record has no message")
        try:
            msg = _decode_message(rec.message)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise self._reject(rec, line, lineno, f"malformed {rec.type} message: {exc}") from None
        try:
            blocks = _decode_blocks(msg.content) if msg.content else None
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise self._reject(rec, line, lineno, f"malformed {rec.type} content: {exc}") from None
        return msg, blocks if blocks is not None else []

    def _reject(self, rec: _Record, line: bytes, lineno: int, reason: str) -> _Rejected:
        return _Rejected(self.unknown_or_fail(rec.type or "", line, lineno, reason))

    def _user(self, rec: _Record, line: bytes, lineno: int, out: list[Event]) -> None:
        try:
            _, blocks = self._message(rec, line, lineno)
        except _Rejected as r:
            out.append(r.event)
            return
        content: list[ContentBlock] = []
        results = False
        if isinstance(blocks, str):
            content.append(ContentBlock(kind="text", text=blocks))
        else:
            for raw in blocks:
                try:
                    b = _decode_block(raw)
                except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                    out.append(
                        self.unknown_or_fail("user", line, lineno, f"malformed user content: {exc}")
                    )
                    return
                if b.type == "tool_result":
                    call_id = b.tool_use_id or ""
                    results = True
                    if call_id in self.recopied_calls and call_id in self.answered:
                        continue  # the re-recorded branch's copy of an earlier result
                    ev = self._tool_result(rec, b, line, lineno)
                    out.append(ev)
                    if ev.kind == EventKind.UNKNOWN:
                        return
                    self.answered.add(call_id)
                    continue
                content.append(_content_block(b, raw))
        if not content and results:
            if not any(ev.provenance is not None and ev.provenance.line == lineno for ev in out):
                self.skip("user/duplicate", lineno)
            return
        origin = Origin.HARNESS if rec.is_meta else Origin.HUMAN
        out.append(
            Event(
                kind=EventKind.USER_MESSAGE,
                timestamp=valid_timestamp(rec.timestamp),
                id=rec.uuid or "",
                parent_id=rec.parent_uuid or "",
                provenance=self.prov(line, lineno),
                user_message=UserMessage(origin=origin, content=content or None),
            )
        )

    def _tool_result(self, rec: _Record, b: _Block, line: bytes, lineno: int) -> Event:
        blocks: list[ContentBlock] = []
        if b.content:
            try:
                inner = _decode_blocks(b.content)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                return self.unknown_or_fail(
                    "user", line, lineno, f"malformed tool_result content: {exc}"
                )
            if isinstance(inner, str):
                blocks.append(ContentBlock(kind="text", text=inner))
            elif inner:
                for raw in inner:
                    try:
                        blocks.append(_content_block(_decode_block(raw), raw))
                    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                        return self.unknown_or_fail(
                            "user", line, lineno, f"malformed tool_result content: {exc}"
                        )
        call_id = b.tool_use_id or ""
        enrichment = rec.tool_use_result
        return Event(
            kind=EventKind.TOOL_RESULT,
            timestamp=valid_timestamp(rec.timestamp),
            id=rec.uuid or "",
            parent_id=rec.parent_uuid or "",
            provenance=self.prov(line, lineno),
            tool_result=ToolResult(
                tool_call_id=call_id,
                tool_name=self.tool_names.get(call_id, ""),
                is_error=bool(b.is_error),
                content=blocks or None,
                fetch=_fetch_info(enrichment),
                enrichment=enrichment,
            ),
        )

    def _assistant(self, rec: _Record, line: bytes, lineno: int, out: list[Event]) -> None:
        try:
            msg, blocks = self._message(rec, line, lineno)
        except _Rejected as r:
            out.append(r.event)
            return
        ts = valid_timestamp(rec.timestamp)
        uuid = rec.uuid or ""
        parent = rec.parent_uuid or ""
        if rec.is_api_error_message:
            text = blocks if isinstance(blocks, str) else _plain_text(blocks)
            out.append(
                Event(
                    kind=EventKind.SYSTEM,
                    timestamp=ts,
                    id=uuid,
                    parent_id=parent,
                    provenance=self.prov(line, lineno),
                    system=SystemEvent(
                        subtype="api_error", level="error", text=text, details=Raw(line)
                    ),
                )
            )
            return
        message_id = msg.id or ""
        fold = self.fold
        if fold is not None and fold.message_id != message_id:
            out.append(self._close_fold())
            fold = None
        if fold is None:
            if message_id in self.closed_ids:
                self._recopied(rec, blocks, line, lineno, message_id, out)
                return
            fold = self.fold = _Fold(message_id, rec, msg, lineno)
        fold.last_line = lineno
        if msg.stop_reason:
            fold.stop_reason = msg.stop_reason
        if msg.usage:
            try:
                usage = _usage(msg.usage)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                out.append(
                    self.unknown_or_fail("assistant", line, lineno, f"malformed usage: {exc}")
                )
                return
            if usage is not None:
                fold.usage = usage
        if self.options.keep_raw:
            if fold.raw is None:
                fold.raw = []
            fold.raw.append(Raw(line))
        if isinstance(blocks, str):
            fold.text.append(ContentBlock(kind="text", text=blocks))
            return
        for raw in blocks:
            try:
                b = _decode_block(raw)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                out.append(
                    self.unknown_or_fail(
                        "assistant", line, lineno, f"malformed assistant content: {exc}"
                    )
                )
                return
            btype = b.type
            if btype == "text":
                fold.text.append(ContentBlock(kind="text", text=b.text or ""))
            elif btype == "thinking":
                out.append(
                    Event(
                        kind=EventKind.THINKING,
                        timestamp=ts,
                        id=uuid,
                        parent_id=parent,
                        message_id=message_id,
                        provenance=self.prov(line, lineno),
                        thinking=Thinking(text=b.thinking or "", signature=b.signature or ""),
                    )
                )
            elif btype == "tool_use":
                call_id = b.id or ""
                name = b.name or ""
                self.tool_names[call_id] = name
                out.append(
                    Event(
                        kind=EventKind.TOOL_CALL,
                        timestamp=ts,
                        id=uuid,
                        parent_id=parent,
                        message_id=message_id,
                        provenance=self.prov(line, lineno),
                        tool_call=ToolCall(
                            tool_call_id=call_id,
                            name=name,
                            kind=TOOL_KINDS.get(name, ToolKind.OTHER),
                            input=b.input,
                        ),
                    )
                )
            elif btype == "fallback":
                out.append(
                    Event(
                        kind=EventKind.SYSTEM,
                        timestamp=ts,
                        id=uuid,
                        parent_id=parent,
                        message_id=message_id,
                        provenance=self.prov(line, lineno),
                        system=SystemEvent(subtype="assistant/fallback", details=raw),
                    )
                )
            else:
                out.append(
                    self.unknown_or_fail(
                        "assistant", line, lineno, f'unrecognized assistant content block "{btype}"'
                    )
                )
                return

    def _recopied(
        self,
        rec: _Record,
        blocks: list[Raw] | str,
        line: bytes,
        lineno: int,
        message_id: str,
        out: list[Event],
    ) -> None:
        """A record of an API message whose fold already closed: a re-recorded copy.

        Its usage and text were accounted by the message's one
        ``assistant_message``; tool calls it repeats are remembered (so their
        repeated results are recognized too) and any call not seen before is
        still emitted, so nothing new is lost.
        """
        emitted = len(out)
        for raw in blocks if not isinstance(blocks, str) else ():
            try:
                b = _decode_block(raw)
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue
            if b.type != "tool_use":
                continue
            call_id = b.id or ""
            if call_id in self.tool_names:
                self.recopied_calls.add(call_id)
                continue
            name = b.name or ""
            self.tool_names[call_id] = name
            out.append(
                Event(
                    kind=EventKind.TOOL_CALL,
                    timestamp=valid_timestamp(rec.timestamp),
                    id=rec.uuid or "",
                    parent_id=rec.parent_uuid or "",
                    message_id=message_id,
                    provenance=self.prov(line, lineno),
                    tool_call=ToolCall(
                        tool_call_id=call_id,
                        name=name,
                        kind=TOOL_KINDS.get(name, ToolKind.OTHER),
                        input=b.input,
                    ),
                )
            )
        if len(out) == emitted:
            self.skip("assistant/duplicate", lineno)

    def _loose_tool(self, rec: _Record, line: bytes, lineno: int) -> Event:
        """An early top-level ``tool_use`` / ``tool_result`` record."""
        name = rec.name or ""
        ts = valid_timestamp(rec.timestamp)
        if rec.type == "tool_use":
            call_id = rec.id or rec.uuid or f"line-{lineno}"
            self.tool_names[call_id] = name
            self.pending_loose.setdefault(name, []).append(call_id)
            return Event(
                kind=EventKind.TOOL_CALL,
                timestamp=ts,
                id=rec.uuid or "",
                parent_id=rec.parent_uuid or "",
                provenance=self.prov(line, lineno),
                tool_call=ToolCall(
                    tool_call_id=call_id,
                    name=name,
                    kind=TOOL_KINDS.get(name, ToolKind.OTHER),
                    input=rec.input,
                ),
            )
        call_id = rec.tool_use_id or ""
        if not call_id:
            pending = self.pending_loose.get(name)
            call_id = pending.pop(0) if pending else rec.uuid or f"line-{lineno}"
        content: list[ContentBlock] | None = None
        if rec.output:
            try:
                text = _decode_str(rec.output)
                content = [ContentBlock(kind="text", text=text)]
            except (msgspec.DecodeError, msgspec.ValidationError):
                content = [ContentBlock(kind="other", raw=rec.output)]
        self.answered.add(call_id)
        return Event(
            kind=EventKind.TOOL_RESULT,
            timestamp=ts,
            id=rec.uuid or "",
            parent_id=rec.parent_uuid or "",
            provenance=self.prov(line, lineno),
            tool_result=ToolResult(
                tool_call_id=call_id,
                tool_name=self.tool_names.get(call_id, name),
                content=content,
            ),
        )

    def _close_fold(self) -> Event:
        fold = self.fold
        assert fold is not None
        self.fold = None
        if fold.message_id:
            self.closed_ids.add(fold.message_id)
        return Event(
            kind=EventKind.ASSISTANT_MESSAGE,
            timestamp=fold.timestamp,
            id=fold.uuid,
            parent_id=fold.parent_uuid,
            message_id=fold.message_id,
            provenance=Provenance(line=fold.first_line, end_line=fold.last_line, raw=fold.raw),
            assistant_message=AssistantMessage(
                model=fold.model,
                content=fold.text or None,
                stop_reason=fold.stop_reason,
                usage=fold.usage,
            ),
        )

    def _system(self, rec: _Record, line: bytes, lineno: int) -> Event:
        text = ""
        if rec.content:
            try:
                text = _decode_str(rec.content)
            except (msgspec.DecodeError, msgspec.ValidationError):
                text = ""
        return Event(
            kind=EventKind.SYSTEM,
            timestamp=valid_timestamp(rec.timestamp),
            id=rec.uuid or "",
            parent_id=rec.parent_uuid or "",
            provenance=self.prov(line, lineno),
            system=SystemEvent(
                subtype=rec.subtype or "", level=rec.level or "", text=text, details=Raw(line)
            ),
        )

    def _attachment(self, rec: _Record, line: bytes, lineno: int) -> Event:
        if not rec.attachment:
            return self.unknown_or_fail(
                "attachment", line, lineno, "attachment record has no attachment"
            )
        try:
            att = _decode_attachment(rec.attachment)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            return self.unknown_or_fail("attachment", line, lineno, f"malformed attachment: {exc}")
        text = _attachment_text(att)
        return Event(
            kind=EventKind.SYSTEM,
            timestamp=valid_timestamp(rec.timestamp),
            id=rec.uuid or "",
            parent_id=rec.parent_uuid or "",
            provenance=self.prov(line, lineno),
            system=SystemEvent(
                subtype=f"attachment/{att.type or ''}", text=text, details=Raw(line)
            ),
        )


class _Rejected(Exception):
    """Carries the unknown event a rejected record became (permissive mode)."""

    def __init__(self, event: Event) -> None:
        self.event = event


#: Attachment types whose text is one of their string fields, by field.
_TEXT_FIELD: Final = {
    "edited_text_file": "snippet",
    "read_truncation_notice": "banner",
    "total_tokens_reminder": "text",
    "batching_reminder_sent": "text",
    "silent_turn_reminder": "text",
}
#: Attachment types whose text is a list field joined by a separator.
_JOINED: Final = {
    "agent_listing_delta": ("added_lines", "\n"),
    "deferred_tools_delta": ("added_lines", "\n"),
    "mcp_instructions_delta": ("added_blocks", "\n\n"),
}


def _attachment_text(att: _Attachment) -> str:
    """The human-readable text of an attachment, where the attachment type has one.

    Most types carry it in ``content`` (a string; structured content has no
    text form), some in a named field, listing deltas as joined lines, and
    queued commands in ``prompt`` (a string or text blocks).
    """
    kind = att.type or ""
    field = _TEXT_FIELD.get(kind)
    if field is not None:
        value = getattr(att, field)
        return value if isinstance(value, str) else ""
    joined = _JOINED.get(kind)
    if joined is not None:
        items = getattr(att, joined[0])
        return joined[1].join(items) if items else ""
    if kind == "queued_command":
        return _prompt_text(att.prompt)
    if att.content:
        try:
            return _decode_str(att.content)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return ""
    return ""


def _prompt_text(raw: Raw) -> str:
    if not raw:
        return ""
    try:
        prompt = _decode_prompt(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return ""
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(b.text for b in prompt if b.type == "text" and b.text)


def _content_block(b: _Block, raw: Raw) -> ContentBlock:
    if b.type == "text":
        return ContentBlock(kind="text", text=b.text or "")
    if b.type == "image":
        return ContentBlock(kind="image", raw=raw)
    if b.type == "document":
        return ContentBlock(kind="document", raw=raw)
    return ContentBlock(kind="other", raw=raw)


def _plain_text(blocks: list[Raw]) -> str:
    parts = []
    for raw in blocks:
        try:
            b = _decode_block(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        if b.type == "text" and b.text:
            parts.append(b.text)
    return "\n".join(parts)


def _usage(raw: Raw) -> TokenUsage | None:
    fields = _decode_usage(raw)
    if fields is None:
        return None
    counts = [0, 0, 0, 0]
    for i, key in enumerate(_USAGE_KEYS):
        value = fields.pop(key, None)
        if value is not None:
            counts[i] = _decode_int(value) or 0
    return TokenUsage(
        input_tokens=counts[0],
        output_tokens=counts[1],
        cache_read_input_tokens=counts[2],
        cache_creation_input_tokens=counts[3],
        extra=fields or None,
    )


def _fetch_info(raw: Raw) -> FetchInfo | None:
    if not raw or not bytes(raw).lstrip().startswith(b"{"):
        return None
    try:
        f = _decode_fetch(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if not f.url:
        return None
    return FetchInfo(
        url=f.url, raw_bytes=f.bytes or 0, status_code=f.code or 0, duration_ms=f.duration_ms or 0
    )
