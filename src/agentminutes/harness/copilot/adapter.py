"""GitHub Copilot CLI transcripts.

``~/.copilot/session-state/<id>/events.jsonl`` and the older flat
``~/.copilot/session-state/<id>.jsonl`` share one format: one event per line,
``{"type", "data", "id", "timestamp", "parentId", "agentId"?}``.

* ``session.start`` opens the session (id, CLI version, cwd, branch).
* ``assistant.message`` carries the model's text, its reasoning and its
  ``toolRequests``; each becomes thinking, tool calls, then one anchor.
* ``tool.execution_complete`` is the result of the call with its
  ``toolCallId`` (correlation by id, no queue); ``tool.execution_start`` is
  telemetry, and names a call the message did not.
* Inline subagents write into the parent's file; their records carry
  ``agentId``, kept on every event as ``agent_id``.
* No usage reaches the events: per-message ``outputTokens`` and the usage in
  ``session.shutdown`` stay in the system events' details, as the reference
  keeps them, so ``totals`` is left out.
* Envelope keys match in any letter case, as the reference's Go decoder
  matches them; keys inside ``data`` are matched exactly.
* Records the reference rejects are read as well: ``hook.*`` (and
  ``custom_agent.*``, ``tool.execution_progress`` … telemetry) become system
  events of their own subtype, ``system.notification`` a system event with its
  text, ``assistant.reasoning`` a thinking event.

The oldest CLI releases wrote one pretty-printed JSON document per session
(``history-session-state/session_<id>_<ms>.json``: ``chatMessages`` as sent to
the model and a timestamped UI ``timeline``). It cannot be read line by line:
the adapter buffers it and converts it at end of input (see :func:`_legacy`).
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._gojson import fold_fields, json_kind, normalize_line
from agentminutes.harness.base import BaseAdapter, Confidence, ParseOptions, SkipHook
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
    ToolCall,
    ToolKind,
    ToolResult,
    Unknown,
    UserMessage,
)
from agentminutes.timestamps import valid_timestamp

__all__ = ("CopilotAdapter",)

HARNESS: Final = "copilot"


# -- record shapes ---------------------------------------------------------------


class _Envelope(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """The envelope. A key it does not list sends the line to Go's rules (``_envelope_go``)."""

    type: str | None = None
    data: Raw = NO_RAW
    id: str | None = None
    timestamp: str | None = None
    parent_id: str | None = None
    agent_id: str | None = None


class _Data(msgspec.Struct, rename="camel"):
    """Base of the ``data`` payloads that are read (exact keys; others are ignored)."""


class _Context(_Data):
    cwd: str | None = None
    branch: str | None = None


class _SessionStart(_Data):
    session_id: str | None = None
    copilot_version: str | None = None
    context: _Context | None = None


class _UserMessage(_Data):
    content: str | None = None
    source: str | None = None


class _SystemMessage(_Data):
    role: str | None = None
    content: str | None = None


class _ToolRequest(_Data):
    tool_call_id: str | None = None
    name: str | None = None
    arguments: Raw = NO_RAW


class _TextPart(_Data):
    type: str | None = None
    text: str | None = None


class _ReasoningBlock(msgspec.Struct):
    type: str | None = None
    thinking: str | None = None
    signature: str | None = None
    encrypted_content: str | None = None
    content: list[_TextPart | None] | None = None
    summary: list[_TextPart | None] | None = None


class _Reasoning(_Data):
    provider: str | None = None
    blocks: list[_ReasoningBlock | None] | None = None


class _AssistantMessage(_Data):
    message_id: str | None = None
    model: str | None = None
    content: str | None = None
    reasoning_text: str | None = None
    reasoning_opaque: str | None = None
    tool_requests: list[_ToolRequest | None] | None = None
    reasoning_blocks: _Reasoning | None = None


class _Binary(_Data):
    type: str | None = None
    mime_type: str | None = None


class _Result(_Data):
    content: Raw = NO_RAW
    binary_results_for_llm: list[Raw] | None = None


class _Shell(_Data):
    exit_code: int | None = None


class _Error(_Data):
    message: str | None = None
    code: str | None = None


class _Restricted(_Data):
    url: str | None = None


class _Metrics(_Data):
    http_status_code: int | None = None


class _Telemetry(_Data):
    restricted_properties: _Restricted | None = None
    metrics: _Metrics | None = None


class _ToolExecution(_Data):
    tool_call_id: str | None = None
    tool_name: str | None = None
    success: bool | None = None
    result: _Result | None = None
    shell_execution: _Shell | None = None
    error: _Error | None = None
    tool_telemetry: _Telemetry | None = None


class _Abort(_Data):
    reason: str | None = None


class _Info(_Data):
    message: str | None = None


class _Content(_Data):
    content: str | None = None


class _ContentRef(_Data):
    content_id: str | None = None


class _Delivered(_Data):
    content_id: str | None = None
    prefix: str | None = None
    suffix: str | None = None


class _Head(msgspec.Struct, rename="camel"):
    type: str | None = None
    id: str | None = None
    timestamp: str | None = None
    parent_id: Raw = NO_RAW
    data: _HeadData | None = None


class _HeadData(msgspec.Struct, rename="camel"):
    session_id: str | None = None
    producer: str | None = None
    copilot_version: str | None = None


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_head = msgspec.json.Decoder(_Head).decode
_decode_str = msgspec.json.Decoder(str | None).decode
_decode_binary = msgspec.json.Decoder(_Binary | None).decode
_DECODERS: Final[dict[type, Callable[[Raw], Any]]] = {
    shape: msgspec.json.Decoder(shape | None).decode
    for shape in (
        _SessionStart,
        _UserMessage,
        _SystemMessage,
        _AssistantMessage,
        _ToolExecution,
        _Abort,
        _Info,
        _Content,
        _ContentRef,
        _Delivered,
    )
}


#: Native tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[Mapping[str, str]] = {
    "bash": ToolKind.EXECUTE,
    "stop_bash": ToolKind.EXECUTE,
    "create": ToolKind.EDIT,
    "edit": ToolKind.EDIT,
    "file_search": ToolKind.SEARCH,
    "glob": ToolKind.SEARCH,
    "grep": ToolKind.SEARCH,
    "grep_search": ToolKind.SEARCH,
    "read_agent": ToolKind.READ,
    "read_bash": ToolKind.READ,
    "read_file": ToolKind.READ,
    "view": ToolKind.READ,
    "web_fetch": ToolKind.FETCH,
}

#: Record types that are only telemetry: a system event of that subtype, ``data`` as details.
TELEMETRY_TYPES: Final = frozenset(
    {
        "assistant.turn_start",
        "assistant.turn_end",
        "permission.completed",
        "permission.requested",
        "session.model_change",
        "session.permissions_changed",
        "session.resume",
        "session.shutdown",
        "session.binary_asset",
        "session.usage_checkpoint",
        "skill.context_delivered_ref",
        "subagent.completed",
        "subagent.configured",
        "subagent.selected",
        "subagent.started",
        # Read by this adapter only (the reference rejects them).
        "assistant.usage",
        "assistant.intent",
        "tool.execution_progress",
        "tool.execution_partial_result",
        "tool.user_requested",
        "pending_messages.modified",
    }
)
#: Prefixes of telemetry record types (``hook.`` and ``custom_agent.``: this adapter only).
TELEMETRY_PREFIXES: Final = (
    "permission.",
    "session.",
    "skill.",
    "subagent.",
    "hook.",
    "custom_agent.",
)
#: Record types whose ``data`` field names the text of their system event.
TEXT_TYPES: Final[Mapping[str, tuple[type[_Data], str]]] = {
    "system.message": (_SystemMessage, "content"),
    "abort": (_Abort, "reason"),
    "session.info": (_Info, "message"),
    "system.notification": (_Content, "content"),
}
#: Types the reference's detection knows (a file starting with one is possibly Copilot's).
SNIFF_TYPES: Final = frozenset(
    {
        "abort",
        "assistant.message",
        "assistant.turn_end",
        "assistant.turn_start",
        "permission.completed",
        "permission.requested",
        "session.binary_asset",
        "session.info",
        "session.model_change",
        "session.permissions_changed",
        "session.resume",
        "session.shutdown",
        "session.start",
        "session.usage_checkpoint",
        "skill.context_delivered_ref",
        "skill.invoked",
        "skill.invoked_ref",
        "subagent.completed",
        "subagent.configured",
        "subagent.selected",
        "subagent.started",
        "system.message",
        "tool.execution_complete",
        "tool.execution_start",
        "user.message",
    }
)

_ENVELOPE_FIELDS: Final = frozenset({"type", "data", "id", "timestamp", "parentid", "agentid"})
_ENVELOPE_STRINGS: Final = frozenset({"type", "id", "timestamp", "parentid", "agentid"})
#: Go's struct name for each decoded payload, for type-error messages.
_GO_STRUCTS: Final[Mapping[type, str]] = {
    _SessionStart: "sessionStart",
    _UserMessage: "userMessage",
    _SystemMessage: "systemMessage",
    _AssistantMessage: "assistantMessage",
    _ToolExecution: "toolExecution",
}
_GOT: Final = {"int": "number", "float": "number", "str": "string"}
_EXPECTED: Final = re.compile(r"Expected `(.+?)`, got `(\w+)`(?: - at `\$(.*)`)?")


class CopilotAdapter(BaseAdapter):
    """Parses GitHub Copilot CLI session transcripts (events.jsonl and the legacy JSON)."""

    name: ClassVar[str] = HARNESS
    #: Newest Copilot CLI release among the transcripts this adapter was checked on.
    last_checked: ClassVar[str] = "1.0.77"

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        self.meta_sent = False
        #: Tool name by toolCallId, from tool requests (always) and execution starts (first).
        self.names: dict[str, str] = {}
        #: Skill bodies by ``sha256:<hex>`` content id.
        self.skills: dict[str, str] = {}
        #: A skill event waiting for the next record: ``(line number, line, body)``.
        self.held: tuple[int, bytes, str] | None = None
        #: The legacy single-document session, buffered: ``(line number, line)``.
        self.document: list[tuple[int, bytes]] | None = None
        self.started = False

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        if head.startswith(b"\xef\xbb\xbf"):
            head = head[3:]
        first = head.split(b"\n", 1)[0].strip()
        try:
            rec = _decode_head(first)
        except (msgspec.DecodeError, msgspec.ValidationError):
            if head.lstrip().startswith(b"{") and _is_legacy_head(head):
                return Confidence.CERTAIN
            if b'"copilotVersion"' in head and b'"producer"' in head:
                return Confidence.POSSIBLE
            return Confidence.NO_MATCH
        kind = rec.type or ""
        data = rec.data
        if (
            kind == "session.start"
            and data is not None
            and data.session_id
            and (data.producer == "copilot-agent" or data.copilot_version)
        ):
            return Confidence.CERTAIN
        if kind in SNIFF_TYPES and rec.id and rec.timestamp and rec.parent_id:
            return Confidence.POSSIBLE
        if not kind and _is_legacy_head(head):
            return Confidence.CERTAIN
        return Confidence.NO_MATCH

    # -- reading -------------------------------------------------------------

    @property
    def whole_document(self) -> bool:
        return self.document is not None

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        if self.started and self.held is None and self.document is None:
            # The common case, kept short: an exact-case envelope, nothing held.
            try:
                env = _decode_envelope(line)
            except (msgspec.ValidationError, msgspec.DecodeError):
                return self._line(line, lineno)
            out: list[Event] = []
            self._record(env, line, lineno, out)
            return out
        if self.document is not None:
            self.document.append((lineno, line))
            return []
        if not self.started:
            self.started = True
            if line.startswith(b"{") and _starts_document(line):
                self.document = [(lineno, line)]
                return []
        return self._line(line, lineno)

    def finish(self) -> list[Event]:
        out: list[Event] = []
        if self.document is not None:
            lines, self.document = self.document, None
            converted = _legacy(self, lines)
            if converted is not None:
                return converted
            # Not a JSON document after all: read the lines as events.
            for lineno, line in lines:
                out.extend(self._line(line, lineno))
        if self.held is not None:
            out.append(self._release(None))
        return out

    def _line(self, line: bytes, lineno: int) -> list[Event]:
        out: list[Event] = []
        try:
            read = _read_envelope(line)
        except _Bad as bad:
            if self.held is not None:
                out.append(self._release(None))
            if not self.options.permissive:
                raise self.error(bad.reason, lineno) from None
            out.append(_unknown("", bad.reason, line, lineno, bad.is_json))
            return out
        if read is None:
            return out
        env, line = read
        if self.held is not None:
            out.append(self._release(env))
        self._record(env, line, lineno, out)
        return out

    # -- one record ----------------------------------------------------------

    def _record(self, env: _Envelope, line: bytes, lineno: int, out: list[Event]) -> None:
        kind = env.type or ""
        ts = valid_timestamp(env.timestamp)
        prov = self.prov(line, lineno)
        event = _Stamp(ts, env.id or "", env.parent_id or "", env.agent_id or "", prov)
        if not self.meta_sent:
            self.meta_sent = True
            if kind == "session.start":
                self._session_start(env, line, lineno, event, out)
                return
            meta = Meta(harness=HARNESS, harness_version=self.options.harness_version)
            out.append(
                Event(
                    kind=EventKind.SESSION_META,
                    timestamp=ts,
                    provenance=Provenance(line=lineno, end_line=lineno),
                    session_meta=meta,
                )
            )
        if kind == "assistant.message":
            self._assistant(env, line, lineno, event, out)
        elif kind == "tool.execution_complete":
            self._tool_result(env, line, lineno, event, out)
        elif kind == "tool.execution_start":
            data = self._data(env, _ToolExecution, line, lineno, out)
            if data is not None:
                call_id, name = data.tool_call_id, data.tool_name
                if call_id and name and call_id not in self.names:
                    self.names[call_id] = name
                out.append(event.system(_telemetry(kind, env.data)))
        elif kind == "user.message":
            data = self._data(env, _UserMessage, line, lineno, out)
            if data is not None:
                source = data.source or ""
                origin = Origin.HARNESS if source.startswith("agent-") else Origin.HUMAN
                block = ContentBlock(kind="text", text=data.content or "")
                out.append(event.user(UserMessage(origin=origin, content=[block])))
        elif kind in TEXT_TYPES:
            shape, field = TEXT_TYPES[kind]
            data = self._data(env, shape, line, lineno, out)
            if data is not None:
                text = getattr(data, field) or ""
                system = SystemEvent(subtype=kind, text=text, details=env.data)
                out.append(event.system(system))
        elif kind == "skill.invoked" or kind == "skill.invoked_ref":
            self._skill(env, line, lineno, event, out)
        elif kind == "assistant.reasoning":
            data = self._data(env, _Content, line, lineno, out)
            if data is not None:
                thinking = Thinking(text=data.content or "")
                out.append(event.thinking("", thinking))
        elif kind in TELEMETRY_TYPES or kind.startswith(TELEMETRY_PREFIXES):
            # A later session.start too: the meta came from the first record.
            out.append(event.system(_telemetry(kind, env.data)))
        else:
            reason = f'unrecognized record type "{kind}"'
            out.append(self.unknown_or_fail(kind, line, lineno, reason))

    def _data(
        self, env: _Envelope, shape: type[Any], line: bytes, lineno: int, out: list[Event]
    ) -> Any:
        """The record's ``data`` decoded as *shape*, or ``None`` when it is malformed
        (then the record became an ``unknown``, or this raised in strict mode)."""
        kind = env.type or ""
        try:
            data = _DECODERS[shape](env.data) if env.data else None
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            reason = f"malformed {kind}: {_go_message(shape, exc)}"
            out.append(self.unknown_or_fail(kind, line, lineno, reason))
            return None
        if not env.data:
            reason = f"malformed {kind}: unexpected end of JSON input"
            out.append(self.unknown_or_fail(kind, line, lineno, reason))
            return None
        return data if data is not None else shape()

    def _session_start(
        self, env: _Envelope, line: bytes, lineno: int, event: _Stamp, out: list[Event]
    ) -> None:
        sparse: list[Event] = []
        data = self._data(env, _SessionStart, line, lineno, sparse)
        if data is None:
            meta = Meta(harness=HARNESS, harness_version=self.options.harness_version)
            out.append(event.meta(meta))
            out.extend(sparse)
            return
        self.version = data.copilot_version or ""
        context = data.context or _Context()
        meta = Meta(
            harness=HARNESS,
            harness_version=self.effective_version,
            session_id=data.session_id or "",
            cwd=context.cwd or "",
            git_branch=context.branch or "",
        )
        out.append(event.meta(meta))

    def _assistant(
        self, env: _Envelope, line: bytes, lineno: int, event: _Stamp, out: list[Event]
    ) -> None:
        data: _AssistantMessage | None = self._data(env, _AssistantMessage, line, lineno, out)
        if data is None:
            return
        message_id = data.message_id or ""
        reasoning = data.reasoning_blocks
        if reasoning is not None:
            for block in reasoning.blocks or ():
                b = block or _ReasoningBlock()
                if b.type == "thinking":
                    thinking = Thinking(text=b.thinking or "", signature=b.signature or "")
                elif b.type == "reasoning":
                    text = _join(b.content) or _join(b.summary)
                    thinking = Thinking(text=text, signature=b.encrypted_content or "")
                else:
                    reason = (
                        f'unrecognized reasoning block type "{b.type or ""}" '
                        f'(provider "{reasoning.provider or ""}")'
                    )
                    out.append(self.unknown_or_fail("assistant.message", line, lineno, reason))
                    return
                out.append(event.thinking(message_id, thinking))
        elif data.reasoning_text or data.reasoning_opaque:
            thinking = Thinking(
                text=data.reasoning_text or "", signature=data.reasoning_opaque or ""
            )
            out.append(event.thinking(message_id, thinking))
        names = self.names
        for request in data.tool_requests or ():
            r = request or _ToolRequest()
            call_id, name = r.tool_call_id or "", r.name or ""
            names[call_id] = name
            call = ToolCall(
                tool_call_id=call_id,
                name=name,
                kind=TOOL_KINDS.get(name, ToolKind.OTHER),
                input=r.arguments,
            )
            out.append(event.call(message_id, call))
        content = [ContentBlock(kind="text", text=data.content)] if data.content else None
        message = AssistantMessage(model=data.model or "", content=content)
        out.append(event.anchor(message_id, message))

    def _tool_result(
        self, env: _Envelope, line: bytes, lineno: int, event: _Stamp, out: list[Event]
    ) -> None:
        data: _ToolExecution | None = self._data(env, _ToolExecution, line, lineno, out)
        if data is None:
            return
        blocks: list[ContentBlock] = []
        result = data.result
        if result is not None:
            raw = result.content
            if raw and not _is_null(raw):
                try:
                    text = _decode_str(raw)
                    blocks.append(ContentBlock(kind="text", text=text or ""))
                except msgspec.ValidationError:
                    blocks.append(ContentBlock(kind="other", raw=raw))
            for item in result.binary_results_for_llm or ():
                try:
                    binary = _decode_binary(item) or _Binary()
                except msgspec.ValidationError as exc:
                    reason = f"malformed {env.type}: {_go_message(_ToolExecution, exc)}"
                    out.append(self.unknown_or_fail(env.type or "", line, lineno, reason))
                    return
                kind = "image" if binary.type == "image" else "other"
                blocks.append(ContentBlock(kind=kind, mime_type=binary.mime_type or "", raw=item))
        error = data.error
        if error is not None and not blocks and error.message:
            blocks.append(ContentBlock(kind="text", text=error.message))
        shell = data.shell_execution
        is_error = (
            data.success is False
            or (shell is not None and bool(shell.exit_code))
            or error is not None
        )
        call_id = data.tool_call_id or ""
        name = self.names.get(call_id, "")
        fetch = None
        telemetry = data.tool_telemetry
        if telemetry is not None and TOOL_KINDS.get(name) == ToolKind.FETCH:
            restricted, metrics = telemetry.restricted_properties, telemetry.metrics
            url = (restricted.url if restricted is not None else None) or ""
            status = (metrics.http_status_code if metrics is not None else None) or 0
            if url or status:
                fetch = FetchInfo(url=url, status_code=status)
        out.append(
            event.result(
                ToolResult(
                    tool_call_id=call_id,
                    tool_name=name,
                    is_error=is_error,
                    content=blocks or None,
                    fetch=fetch,
                    enrichment=env.data,
                ),
            )
        )

    # -- skills: a body is delivered wrapped, as the next record says ----------

    def _skill(
        self, env: _Envelope, line: bytes, lineno: int, event: _Stamp, out: list[Event]
    ) -> None:
        kind = env.type or ""
        if kind == "skill.invoked":
            data = self._data(env, _Content, line, lineno, out)
            if data is None:
                return
            body = data.content or ""
            if body:
                self.skills[_content_id(body)] = body
        else:
            ref = self._data(env, _ContentRef, line, lineno, out)
            if ref is None:
                return
            body = self.skills.get(ref.content_id or "", "")
        if body:
            self.held = (lineno, line, body)
            return
        out.append(event.system(_telemetry(kind, env.data)))

    def _release(self, following: _Envelope | None) -> Event:
        """The held skill event, its text wrapped if *following* delivers that body."""
        assert self.held is not None
        lineno, line, body = self.held
        self.held = None
        text = body
        if following is not None and following.type == "skill.context_delivered_ref":
            try:
                delivered = _DECODERS[_Delivered](following.data) if following.data else None
            except (msgspec.ValidationError, msgspec.DecodeError):
                delivered = None
            if delivered is not None and delivered.content_id == _content_id(body):
                text = (delivered.prefix or "") + body + (delivered.suffix or "")
        read = _read_envelope(line)
        assert read is not None
        env = read[0]
        return Event(
            kind=EventKind.SYSTEM,
            timestamp=valid_timestamp(env.timestamp),
            id=env.id or "",
            parent_id=env.parent_id or "",
            agent_id=env.agent_id or "",
            provenance=self.prov(line, lineno),
            system=SystemEvent(subtype=env.type or "", text=text, details=env.data),
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


class _Bad(Exception):
    """A line that is not a readable envelope: the reason, and whether it is JSON at all."""

    def __init__(self, reason: str, is_json: bool) -> None:
        super().__init__(reason, is_json)
        self.reason = reason
        self.is_json = is_json


def _read_envelope(line: bytes) -> tuple[_Envelope, bytes] | None:
    """Decode an envelope as the reference reads it; ``None`` for a line of Unicode
    white space (blank to Go); raise :class:`_Bad` if it cannot."""
    try:
        return _decode_envelope(line), line
    except msgspec.ValidationError:
        return _envelope_go(line), line
    except msgspec.DecodeError as exc:
        fixed = normalize_line(line)
        if fixed is None:
            raise _Bad(f"invalid JSON: {exc}", False) from None
        return _read_envelope(fixed) if fixed else None


def _envelope_go(line: bytes) -> _Envelope:
    """Read an envelope with Go's rules: keys in any letter case, Go's type errors."""
    try:
        fields = fold_fields(line, _ENVELOPE_FIELDS, _ENVELOPE_STRINGS)
    except msgspec.ValidationError:
        msg = f"json: cannot unmarshal {json_kind(line)} into Go value of type copilot.envelope"
        raise _Bad(f"invalid JSON: {msg}", True) from None
    if fields is None:
        return _Envelope()
    values: dict[str, Any] = {}
    for name, raw in fields.items():
        if name == "data":
            values["data"] = raw
            continue
        try:
            values[name] = _decode_str(raw)
        except msgspec.ValidationError:
            go_name = {"parentid": "parentId", "agentid": "agentId"}.get(name, name)
            msg = f"json: cannot unmarshal {json_kind(raw)} into Go struct field envelope.{go_name} of type string"
            raise _Bad(f"invalid JSON: {msg}", True) from None
    return _Envelope(
        type=values.get("type"),
        data=values.get("data", NO_RAW),
        id=values.get("id"),
        timestamp=values.get("timestamp"),
        parent_id=values.get("parentid"),
        agent_id=values.get("agentid"),
    )


def _go_message(shape: type, exc: Exception) -> str:
    """A msgspec decoding error in Go's words, as far as the message allows."""
    text = str(exc)
    m = _EXPECTED.match(text)
    if not isinstance(exc, msgspec.ValidationError) or m is None:
        return text
    expected, got, path = m.groups()
    kind = _GOT.get(got, got)
    struct = _GO_STRUCTS.get(shape, "")
    if not path:
        return f"json: cannot unmarshal {kind} into Go value of type copilot.{struct}"
    field = re.sub(r"\[\d+\]", "", path).lstrip(".")
    gotype = expected.replace(" | null", "")
    gotype = {"str": "string", "array": "[]", "object": "struct"}.get(gotype, gotype)
    return f"json: cannot unmarshal {kind} into Go struct field {struct}.{field} of type {gotype}"


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


# -- the legacy single-document session ------------------------------------------------

_LEGACY_MARKERS: Final = (b'"sessionId"', b'"chatMessages"')


def _is_legacy_head(head: bytes) -> bool:
    return all(marker in head for marker in _LEGACY_MARKERS)


class _DocumentProbe(msgspec.Struct, rename="camel"):
    type: Raw = NO_RAW
    chat_messages: Raw = NO_RAW


_decode_probe = msgspec.json.Decoder(_DocumentProbe).decode


def _starts_document(line: bytes) -> bool:
    """A first line that opens a session document rather than holding one event:
    ``{`` alone (the CLI pretty-prints it), or the whole document on one line."""
    if line == b"{":
        return True
    try:
        probe = _decode_probe(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    return not probe.type and bool(probe.chat_messages)


class _Function(msgspec.Struct):
    name: str | None = None
    arguments: Raw = NO_RAW


class _ChatCall(msgspec.Struct):
    id: str | None = None
    function: _Function | None = None


class _ChatMessage(msgspec.Struct):
    role: str | None = None
    content: Raw = NO_RAW
    tool_calls: list[_ChatCall | None] | None = None
    tool_call_id: str | None = None


class _Outcome(msgspec.Struct):
    type: str | None = None
    log: str | None = None


class _Entry(msgspec.Struct, rename="camel"):
    id: str | None = None
    timestamp: str | None = None
    type: str | None = None
    text: str | None = None
    call_id: str | None = None
    name: str | None = None
    result: _Outcome | None = None


class _Document(msgspec.Struct, rename="camel"):
    session_id: str | None = None
    start_time: str | None = None
    selected_model: str | None = None
    chat_messages: list[Raw] | None = None
    timeline: list[Raw] | None = None


_decode_document = msgspec.json.Decoder(_Document).decode
_decode_chat = msgspec.json.Decoder(_ChatMessage).decode
_decode_entry = msgspec.json.Decoder(_Entry).decode
#: Strings, and the brackets that open or close a value: enough to find element spans.
_TOKEN: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_MODEL_CHANGED: Final = re.compile(r"Model changed to: (.+?)\.(?:\s|$)")
#: White space between tokens (strings are matched whole, and kept).
_SPACE: Final = re.compile(rb'("[^"\\]*(?:\\.[^"\\]*)*")|[ \t\r\n]+')


def _keep_strings(m: re.Match[bytes]) -> bytes:
    return m.group(1) or b""


def _legacy(adapter: CopilotAdapter, lines: list[tuple[int, bytes]]) -> list[Event] | None:
    """Convert a legacy session document, or ``None`` when the lines are not one.

    The ``timeline`` is the only timestamped, chronological record, so it
    drives the events: ``user`` entries are user messages, ``copilot`` entries
    assistant messages, ``tool_call_completed`` entries tool results, any other
    entry a ``timeline.<type>`` system event. The first result of a chat
    message's tool calls brings that message's calls and its anchor first, as
    a live session would have shown them; results are the text the model saw
    (the chat ``tool`` message), else the timeline's log. Each event's
    provenance is the line span of its entry (of its chat message, for calls
    and anchors); the session_meta spans the whole document.
    """
    starts: list[int] = []
    offset = 0
    for _, line in lines:
        starts.append(offset)
        offset += len(line) + 1
    doc = b"\n".join(line for _, line in lines)
    # Events are one line each: verbatim parts keep their values, not the layout.
    compact = _SPACE.sub(_keep_strings, doc)
    try:
        document = _decode_document(compact)
        chats = [_decode_chat(raw) for raw in document.chat_messages or ()]
        entries = [_decode_entry(raw) for raw in document.timeline or ()]
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    spans = _array_spans(doc)
    linenos = [lineno for lineno, _ in lines]

    def span(key: str, index: int) -> tuple[int, int]:
        found = spans.get(key, [])
        if len(found) != len(getattr(document, _ATTRS[key]) or ()):
            return linenos[0], linenos[-1]
        start, end = found[index]
        return linenos[bisect_right(starts, start) - 1], linenos[bisect_right(starts, end - 1) - 1]

    keep_raw = adapter.options.keep_raw

    def prov(key: str, index: int, raw: Raw) -> Provenance:
        first, last = span(key, index)
        return Provenance(line=first, end_line=last, raw=[raw] if keep_raw else None)

    adapter.meta_sent = True
    out = [
        Event(
            kind=EventKind.SESSION_META,
            timestamp=valid_timestamp(document.start_time),
            provenance=Provenance(
                line=linenos[0], end_line=linenos[-1], raw=[Raw(compact)] if keep_raw else None
            ),
            session_meta=Meta(
                harness=HARNESS,
                harness_version=adapter.options.harness_version,
                session_id=document.session_id or "",
            ),
        )
    ]
    # Which chat message made each call, and what the model got back.
    owner: dict[str, int] = {}
    replies: dict[str, str] = {}
    for index, chat in enumerate(chats):
        for call in chat.tool_calls or ():
            if call is not None and call.id:
                owner.setdefault(call.id, index)
        if chat.role == "tool" and chat.tool_call_id:
            text = _chat_text(chat.content)
            if text is not None:
                replies[chat.tool_call_id] = text
    model = document.selected_model or ""
    shown: set[int] = set()

    def show_calls(index: int, ts: str) -> None:
        shown.add(index)
        chat = chats[index]
        message_id = f"chat-{index}"
        where = prov("chatMessages", index, (document.chat_messages or [])[index])
        for call in chat.tool_calls or ():
            fn = (call.function if call is not None else None) or _Function()
            name = fn.name or ""
            out.append(
                Event(
                    kind=EventKind.TOOL_CALL,
                    timestamp=ts,
                    message_id=message_id,
                    provenance=where,
                    tool_call=ToolCall(
                        tool_call_id=(call.id if call is not None else None) or "",
                        name=name,
                        kind=TOOL_KINDS.get(name, ToolKind.OTHER),
                        input=fn.arguments,
                    ),
                )
            )
        text = _chat_text(chat.content)
        out.append(
            Event(
                kind=EventKind.ASSISTANT_MESSAGE,
                timestamp=ts,
                message_id=message_id,
                provenance=where,
                assistant_message=AssistantMessage(
                    model=model, content=[ContentBlock(kind="text", text=text)] if text else None
                ),
            )
        )

    for index, (entry, raw) in enumerate(zip(entries, document.timeline or (), strict=True)):
        ts = valid_timestamp(entry.timestamp)
        where = prov("timeline", index, raw)
        event = partial(Event, timestamp=ts, id=entry.id or "", provenance=where)
        kind = entry.type or ""
        text = entry.text or ""
        if kind == "user":
            block = ContentBlock(kind="text", text=text)
            out.append(
                event(
                    kind=EventKind.USER_MESSAGE,
                    user_message=UserMessage(origin=Origin.HUMAN, content=[block]),
                )
            )
        elif kind == "copilot":
            content = [ContentBlock(kind="text", text=text)] if text else None
            message = AssistantMessage(model=model, content=content)
            out.append(
                event(
                    kind=EventKind.ASSISTANT_MESSAGE,
                    message_id=entry.id or "",
                    assistant_message=message,
                )
            )
        elif kind == "tool_call_completed":
            call_id = entry.call_id or ""
            made_by = owner.get(call_id)
            if made_by is not None and made_by not in shown:
                show_calls(made_by, ts)
            outcome = entry.result or _Outcome()
            reply = replies.get(call_id, outcome.log)
            out.append(
                event(
                    kind=EventKind.TOOL_RESULT,
                    tool_result=ToolResult(
                        tool_call_id=call_id,
                        tool_name=entry.name or "",
                        is_error=outcome.type != "success",
                        content=[ContentBlock(kind="text", text=reply or "")],
                        enrichment=raw,
                    ),
                )
            )
        else:
            if kind == "info":
                changed = _MODEL_CHANGED.match(text)
                if changed is not None:
                    model = changed[1]
            system = SystemEvent(subtype=f"timeline.{kind}", text=text, details=raw)
            out.append(event(kind=EventKind.SYSTEM, system=system))
    # Calls no timeline entry answered, with their messages, last.
    for index, chat in enumerate(chats):
        if chat.tool_calls and index not in shown:
            show_calls(index, "")
    return out


_ATTRS: Final = {"chatMessages": "chat_messages", "timeline": "timeline"}


def _chat_text(raw: Raw) -> str | None:
    if not raw:
        return None
    try:
        return _decode_str(raw)
    except msgspec.ValidationError:
        return None


def _array_spans(doc: bytes) -> dict[str, list[tuple[int, int]]]:
    """Byte spans of the elements of each top-level array of *doc*, by key."""
    spans: dict[str, list[tuple[int, int]]] = {}
    depth = 0
    key = b""
    current: list[tuple[int, int]] | None = None
    start = 0
    for m in _TOKEN.finditer(doc):
        c = doc[m.start()]
        if c == 0x22:  # a string: at depth 1, the last one before a value is its key
            if depth == 1:
                key = m.group()
            continue
        if c in (0x7B, 0x5B):  # { [
            depth += 1
            if depth == 2 and c == 0x5B:
                current = spans.setdefault(key[1:-1].decode(errors="replace"), [])
            elif depth == 3 and current is not None:
                start = m.start()
        else:
            if depth == 3 and current is not None:
                current.append((start, m.end()))
            elif depth == 2:
                current = None
            depth -= 1
    return spans
