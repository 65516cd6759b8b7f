"""Kimi CLI wire logs: ``~/.kimi/sessions/<md5 of the work dir>/<session id>/wire.jsonl``.

The wire log is what Kimi CLI's agent loop sent to its user interface, merged
(streamed text and tool-call fragments joined) and appended one record a line:

* line 1 is ``{"type": "metadata", "protocol_version": "1.10"}``;
* every later line is ``{"timestamp": <epoch seconds>, "message": {"type": T,
  "payload": {...}}}`` where ``T`` names a wire message: ``TurnBegin`` (what the
  person typed), ``StepBegin`` (one model request starts), ``ContentPart`` (a
  ``text`` or ``think`` part, an image, audio or video), ``ToolCall``,
  ``ToolResult``, ``StatusUpdate`` (after a request: the API message id and its
  ``token_usage``), ``TurnEnd`` and the rarer control messages (retries,
  interruptions, compaction, hooks, approvals, notifications, plans, side
  questions, MCP loading); ``SubagentEvent`` wraps a wire message of a subagent
  run inside the parent's turn.

The session beside it also has ``context.jsonl`` (the model's context, which a
compaction rewrites) and ``state.json``; neither is read: the wire log is the
complete, append-only record. A subagent's own ``subagents/<id>/wire.jsonl``
repeats what the parent's log holds inline as ``SubagentEvent`` records.

Mapping decisions:

* The metadata line opens the stream (``session_meta``, and a ``system`` event
  ``metadata`` whose text is the wire protocol version). The log records no
  session id, work folder or Kimi CLI release (they are in its path and in
  ``~/.kimi/kimi.json``); discovery takes the id from the folder name.
* One step is one model request. Its thinking, text and tool calls are held
  until the step's ``StatusUpdate`` names the API message (``message_id``) and
  its usage, then go out as ``thinking`` and ``tool_call`` events followed by the
  ``assistant_message`` (text, usage), all sharing that message id. Tool results
  that arrive while the step is still open (tools run while the model streams)
  follow the assistant message. A step closed by anything else (the next
  ``StepBegin``, ``TurnEnd``, an interruption, the end of the file) is emitted
  without usage.
* ``token_usage`` is ``input_other`` (input neither read from nor written to the
  cache), ``input_cache_read``, ``input_cache_creation`` and ``output`` (reasoning
  included, never reported apart).
* A ``SubagentEvent``'s inner message is read with the same rules, in its own
  step state, and its events carry the subagent's ``agent_id``.
* ``StepBegin``, ``TurnEnd``, a ``StatusUpdate`` without usage (context gauge, MCP
  status) and MCP loading markers are counted skips: bookkeeping with no content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._content import Malformed, decoded, text_or_items
from agentminutes.harness._export import epoch_rfc3339
from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import (
    BaseAdapter,
    Confidence,
    ParseOptions,
    SkipHook,
    first_line,
    json_or_string,
    newer_format,
    tool_call,
)
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    Origin,
    Provenance,
    SystemEvent,
    Thinking,
    TokenUsage,
    ToolKind,
    UserMessage,
)

__all__ = ("HARNESS", "TOOL_KINDS", "KimiAdapter")

HARNESS: Final = "kimi"

#: The newest wire protocol this adapter was checked against.
PROTOCOL_VERSION: Final = "1.10"


class _Line(msgspec.Struct):
    type: str | None = None
    protocol_version: str | None = None
    timestamp: Raw = NO_RAW
    message: Raw = NO_RAW


class _Envelope(msgspec.Struct):
    type: str | None = None
    payload: Raw = NO_RAW


class _Function(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class _Payload(msgspec.Struct):
    """The payload fields of every wire message this adapter reads (each uses a few)."""

    user_input: Raw = NO_RAW
    # ContentPart
    type: str | None = None
    text: str | None = None
    think: str | None = None
    encrypted: str | None = None
    # ToolCall
    id: str | None = None
    function: _Function | None = None
    arguments_part: str | None = None
    # ToolResult
    tool_call_id: str | None = None
    return_value: Raw = NO_RAW
    # StatusUpdate
    token_usage: dict[str, int | float | None] | None = None
    message_id: str | None = None
    # StepRetry
    n: int | None = None
    error_type: str | None = None
    status_code: int | None = None
    # Notification, PlanDisplay, side questions, hooks, approvals
    title: str | None = None
    body: str | None = None
    severity: str | None = None
    content: str | None = None
    question: str | None = None
    response: Raw = NO_RAW
    error: str | None = None
    event: Raw = NO_RAW
    target: str | None = None
    action: str | None = None
    reason: str | None = None
    description: str | None = None
    name: str | None = None
    # SubagentEvent
    parent_tool_call_id: str | None = None
    agent_id: str | None = None
    subagent_type: str | None = None


class _ReturnValue(msgspec.Struct):
    is_error: bool = False
    output: Raw = NO_RAW
    message: str | None = None
    display: Raw = NO_RAW
    extras: Raw = NO_RAW


_decode_line = msgspec.json.Decoder(_Line).decode
_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_payload = msgspec.json.Decoder(_Payload).decode
_decode_return = msgspec.json.Decoder(_ReturnValue).decode
_decode_parts = msgspec.json.Decoder(str | list[Raw] | None).decode
_decode_part = msgspec.json.Decoder(_Payload).decode

_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)

#: Bookkeeping wire messages: counted skips.
_SKIPPED: Final = frozenset({"StepBegin", "TurnEnd", "MCPLoadingBegin", "MCPLoadingEnd"})

#: Wire messages that become ``system`` events, with their subtype and level.
_SYSTEM: Final[dict[str, tuple[str, str]]] = {
    "StepInterrupted": ("step_interrupted", "warning"),
    "StepRetry": ("step_retry", "warning"),
    "CompactionBegin": ("compaction_begin", ""),
    "CompactionEnd": ("compaction_end", ""),
    "HookTriggered": ("hook_triggered", ""),
    "HookResolved": ("hook_resolved", ""),
    "HookRequest": ("hook_request", ""),
    "Notification": ("notification", ""),
    "PlanDisplay": ("plan", ""),
    "BtwBegin": ("btw_begin", ""),
    "BtwEnd": ("btw_end", ""),
    "ApprovalRequest": ("approval_request", ""),
    "ApprovalResponse": ("approval_response", ""),
    "ApprovalRequestResolved": ("approval_response", ""),
    "QuestionRequest": ("question_request", ""),
    "ToolCallRequest": ("tool_call_request", ""),
}

#: Every wire message type of protocol 1.x this adapter knows.
MESSAGE_TYPES: Final = frozenset(
    {
        "TurnBegin",
        "SteerInput",
        "ContentPart",
        "ToolCall",
        "ToolCallPart",
        "ToolResult",
        "StatusUpdate",
        "SubagentEvent",
        *_SKIPPED,
        *_SYSTEM,
    }
)

#: Kimi CLI's tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "Shell": ToolKind.EXECUTE,
    "ReadFile": ToolKind.READ,
    "ReadMediaFile": ToolKind.READ,
    "WriteFile": ToolKind.EDIT,
    "StrReplaceFile": ToolKind.EDIT,
    "Glob": ToolKind.SEARCH,
    "Grep": ToolKind.SEARCH,
    "SearchWeb": ToolKind.FETCH,
    "FetchURL": ToolKind.FETCH,
    "Think": ToolKind.THINK,
    "SetTodoList": ToolKind.THINK,
    "EnterPlanMode": ToolKind.SWITCH_MODE,
    "ExitPlanMode": ToolKind.SWITCH_MODE,
}

_USAGE_KEYS: Final = ("input_other", "output", "input_cache_read", "input_cache_creation")


@dataclass
class _Step:
    """One model request of one agent, held until its ``StatusUpdate``."""

    thinking: list[Event] = field(default_factory=list)
    calls: list[Event] = field(default_factory=list)
    text: list[ContentBlock] = field(default_factory=list)
    results: list[Event] = field(default_factory=list)
    first_line: int = 0
    last_line: int = 0
    timestamp: str = ""
    raw: list[Raw] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.thinking or self.calls or self.text)


class KimiAdapter(BaseAdapter):
    """Parses Kimi CLI ``wire.jsonl`` logs (wire protocol 1.x)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "1.51.0"

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        self.meta_sent = False
        self.protocol = ""
        #: The open step of each agent ("" for the main agent).
        self.steps: dict[str, _Step] = {}

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        first = first_line(head)
        try:
            rec = _decode_line(first)
        except _DECODE_ERRORS:
            return Confidence.NO_MATCH
        if rec.type == "metadata" and rec.protocol_version is not None and not rec.message:
            return Confidence.CERTAIN
        if rec.type is None and rec.message and rec.timestamp:
            try:
                env = _decode_envelope(rec.message)
            except _DECODE_ERRORS:
                return Confidence.NO_MATCH
            if env.type in MESSAGE_TYPES and env.payload:
                return Confidence.POSSIBLE
        return Confidence.NO_MATCH

    # -- parsing -----------------------------------------------------------

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        try:
            rec = _decode_line(line)
        except _DECODE_ERRORS as exc:
            return [self.undecodable(exc, line, lineno)]
        if rec.type == "metadata":
            return self._metadata(rec, line, lineno)
        if rec.type is not None or not rec.message:
            what = f'unrecognized record type "{rec.type}"' if rec.type else "record has no message"
            return [self.unknown_or_fail(rec.type or "", line, lineno, self._drift(what))]
        out: list[Event] = []
        if not self.meta_sent:
            self.meta_sent = True
            out.append(self._meta(line, lineno))
        timestamp = epoch_rfc3339(rec.timestamp)
        try:
            self._message(rec.message, "", timestamp, line, lineno, out)
        except Malformed as exc:
            out.append(self.unknown_or_fail("", line, lineno, str(exc)))
        return out

    def finish(self) -> list[Event]:
        out: list[Event] = []
        for agent in list(self.steps):
            self._close(agent, None, None, out)
        return out

    def _drift(self, reason: str) -> str:
        if self.protocol and _newer(self.protocol, PROTOCOL_VERSION):
            recorded = f"a wire log of protocol {self.protocol}"
            return newer_format(reason, recorded, PROTOCOL_VERSION)
        return reason

    def _meta(self, line: bytes, lineno: int) -> Event:
        return self.session_meta(self.prov(line, lineno))

    def _metadata(self, rec: _Line, line: bytes, lineno: int) -> list[Event]:
        self.protocol = rec.protocol_version or ""
        out: list[Event] = []
        if not self.meta_sent:
            self.meta_sent = True
            out.append(self._meta(line, lineno))
        out.append(
            Event(
                kind=EventKind.SYSTEM,
                provenance=self.prov(line, lineno),
                system=SystemEvent(subtype="metadata", text=self.protocol, details=Raw(line)),
            )
        )
        return out

    def _message(
        self, message: Raw, agent: str, timestamp: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        try:
            env = _decode_envelope(message)
            payload = _decode_payload(env.payload) if env.payload else _Payload()
        except _DECODE_ERRORS as exc:
            raise Malformed(f"malformed wire message: {exc}") from None
        kind = env.type or ""
        if kind not in MESSAGE_TYPES:
            what = f'unrecognized wire message "{kind}"' if kind else "wire message has no type"
            raise Malformed(self._drift(what))
        if kind in _SKIPPED:
            self.skip(f"SubagentEvent/{kind}" if agent else kind, lineno)
            if kind in ("StepBegin", "TurnEnd"):
                self._close(agent, None, None, out)
            return
        if kind in ("TurnBegin", "SteerInput"):
            self._close(agent, None, None, out)
            out.append(
                self._stamp(agent, timestamp, line, lineno).user_message(
                    UserMessage(origin=Origin.HUMAN, content=_parts(payload.user_input) or None)
                )
            )
        elif kind == "ContentPart":
            self._content(payload, env.payload, agent, timestamp, line, lineno)
        elif kind == "ToolCall":
            self._tool_call(payload, agent, timestamp, line, lineno)
        elif kind == "ToolCallPart":
            raise Malformed("a tool-call fragment outside a tool call (the log merges them)")
        elif kind == "ToolResult":
            self._tool_result(payload, agent, timestamp, line, lineno, out)
        elif kind == "StatusUpdate":
            if payload.token_usage is None:
                self.skip("SubagentEvent/StatusUpdate" if agent else "StatusUpdate", lineno)
                return
            self._close(agent, payload, timestamp, out, line, lineno)
        elif kind == "SubagentEvent":
            self._subagent(payload, timestamp, line, lineno, out)
        else:
            self._system(kind, payload, env.payload, agent, timestamp, line, lineno, out)

    def _stamp(self, agent: str, timestamp: str, line: bytes, lineno: int) -> Stamp:
        """What an event of the wire message on line *lineno* carries, for *agent*'s step."""
        return Stamp(timestamp, self.prov(line, lineno), agent_id=agent)

    def _step(self, agent: str, timestamp: str, line: bytes, lineno: int) -> _Step:
        step = self.steps.get(agent)
        if step is None:
            step = self.steps[agent] = _Step(first_line=lineno, timestamp=timestamp)
        step.last_line = lineno
        if self.options.keep_raw:
            step.raw.append(Raw(line))
        return step

    def _content(
        self, payload: _Payload, raw: Raw, agent: str, timestamp: str, line: bytes, lineno: int
    ) -> None:
        step = self._step(agent, timestamp, line, lineno)
        part = payload.type or ""
        if part == "text":
            step.text.append(ContentBlock(kind="text", text=payload.text or ""))
        elif part == "think":
            step.thinking.append(
                self._stamp(agent, timestamp, line, lineno).thinking(
                    Thinking(text=payload.think or "", signature=payload.encrypted or "")
                )
            )
        elif part in ("image_url", "audio_url", "video_url"):
            step.text.append(ContentBlock(kind=part.split("_", 1)[0], raw=raw))
        else:
            raise Malformed(self._drift(f'unrecognized content part "{part}"'))

    def _tool_call(
        self, payload: _Payload, agent: str, timestamp: str, line: bytes, lineno: int
    ) -> None:
        step = self._step(agent, timestamp, line, lineno)
        fn = payload.function or _Function()
        call_id = payload.id or ""
        name = fn.name or ""
        self.name_call(call_id, name)
        arguments = fn.arguments
        step.calls.append(
            self._stamp(agent, timestamp, line, lineno).tool_call(
                tool_call(call_id, name, _arguments(arguments), TOOL_KINDS)
            )
        )

    def _tool_result(
        self,
        payload: _Payload,
        agent: str,
        timestamp: str,
        line: bytes,
        lineno: int,
        out: list[Event],
    ) -> None:
        try:
            value = _decode_return(payload.return_value) if payload.return_value else _ReturnValue()
        except _DECODE_ERRORS as exc:
            raise Malformed(f"malformed tool result: {exc}") from None
        blocks: list[ContentBlock] = []
        if value.message:
            blocks.append(ContentBlock(kind="text", text=value.message))
        blocks.extend(_parts(value.output))
        display = (
            value.display
            if value.display and bytes(value.display) not in (b"[]", b"null")
            else NO_RAW
        )
        event = self._stamp(agent, timestamp, line, lineno).tool_result(
            self.tool_result(
                payload.tool_call_id or "", blocks, is_error=value.is_error, enrichment=display
            )
        )
        step = self.steps.get(agent)
        if step is not None and not step.empty:
            step.results.append(event)
        else:
            out.append(event)

    def _close(
        self,
        agent: str,
        status: _Payload | None,
        timestamp: str | None,
        out: list[Event],
        line: bytes = b"",
        lineno: int = 0,
    ) -> None:
        """Emit the open step of *agent*: thinking, calls, the message (with *status*'s usage)."""
        step = self.steps.pop(agent, None)
        if step is None or step.empty:
            if step is not None:
                out.extend(step.results)
            if status is not None:
                # Usage with no content: a request whose reply was empty.
                step = _Step(first_line=lineno, last_line=lineno, timestamp=timestamp or "")
                if self.options.keep_raw:
                    step.raw.append(Raw(line))
            else:
                return
        message_id = ""
        usage: TokenUsage | None = None
        end = step.last_line
        if status is not None:
            message_id = status.message_id or ""
            usage = _usage(status.token_usage)
            end = lineno
            if self.options.keep_raw:
                step.raw.append(Raw(line))
        for ev in (*step.thinking, *step.calls):
            ev.message_id = message_id
            out.append(ev)
        out.append(
            Event(
                kind=EventKind.ASSISTANT_MESSAGE,
                timestamp=step.timestamp,
                message_id=message_id,
                agent_id=agent,
                provenance=Provenance(
                    line=step.first_line or lineno,
                    end_line=end,
                    raw=step.raw or None if self.options.keep_raw else None,
                ),
                assistant_message=AssistantMessage(
                    content=step.text or None,
                    stop_reason="tool_use" if step.calls else ("end_turn" if status else ""),
                    usage=usage,
                ),
            )
        )
        out.extend(step.results)

    def _subagent(
        self, payload: _Payload, timestamp: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        if not payload.event:
            raise Malformed("SubagentEvent has no event")
        agent = payload.agent_id or payload.parent_tool_call_id or "subagent"
        self._message(payload.event, agent, timestamp, line, lineno, out)

    def _system(
        self,
        kind: str,
        payload: _Payload,
        raw: Raw,
        agent: str,
        timestamp: str,
        line: bytes,
        lineno: int,
        out: list[Event],
    ) -> None:
        subtype, level = _SYSTEM[kind]
        if kind in ("StepInterrupted", "CompactionBegin"):
            self._close(agent, None, None, out)
        text = ""
        if kind == "StepRetry":
            text = payload.error_type or ""
        elif kind == "Notification":
            text = payload.title or payload.body or ""
            level = payload.severity or level
        elif kind == "PlanDisplay":
            text = payload.content or ""
        elif kind == "BtwBegin":
            text = payload.question or ""
        elif kind == "BtwEnd":
            text = payload.error or _as_text(payload.response)
        elif kind in ("HookTriggered", "HookResolved", "HookRequest"):
            text = _as_text(payload.event)
        elif kind == "ApprovalRequest":
            text = payload.action or payload.description or ""
        elif kind in ("ApprovalResponse", "ApprovalRequestResolved"):
            text = _as_text(payload.response)
        elif kind == "ToolCallRequest":
            text = payload.name or ""
        out.append(
            self._stamp(agent, timestamp, line, lineno).system(
                SystemEvent(subtype=subtype, level=level, text=text, details=raw)
            )
        )


def _newer(version: str, than: str) -> bool:
    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) if p.isdigit() else 0 for p in v.split("."))

    return key(version) > key(than)


def _as_text(raw: Raw) -> str:
    if not raw:
        return ""
    try:
        value = msgspec.json.decode(raw)
    except _DECODE_ERRORS:
        return ""
    return value if isinstance(value, str) else ""


def _arguments(arguments: str | None) -> Raw:
    """The tool input: the arguments' JSON as sent, or the text as a JSON string if it is none."""
    if arguments is None or not arguments.strip():
        return NO_RAW
    return json_or_string(arguments)


def _parts(raw: Raw) -> list[ContentBlock]:
    """User input or tool output (a string, or content parts) as content blocks."""
    return text_or_items(raw, _decode_parts, _part, "content", empty_text=False)


def _part(raw: Raw) -> ContentBlock:
    part = decoded(_decode_part, raw, "content part")
    if part.type == "text":
        return ContentBlock(kind="text", text=part.text or "")
    if part.type in ("image_url", "audio_url", "video_url"):
        return ContentBlock(kind=(part.type or "").split("_", 1)[0], raw=raw)
    return ContentBlock(kind="other", raw=raw)


def _usage(fields: dict[str, int | float | None] | None) -> TokenUsage | None:
    if fields is None:
        return None
    counts = [int(fields.get(k) or 0) for k in _USAGE_KEYS]
    extra = {k: Raw(msgspec.json.encode(v)) for k, v in fields.items() if k not in _USAGE_KEYS}
    return TokenUsage(
        input_tokens=counts[0],
        output_tokens=counts[1],
        cache_read_input_tokens=counts[2],
        cache_creation_input_tokens=counts[3],
        extra=extra or None,
    )
