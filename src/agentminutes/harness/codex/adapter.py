"""Codex CLI transcripts, in the three shapes Codex has written them.

* **Rollouts** (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``, also
  ``archived_sessions/``), CLI 0.3x and later: one ``{timestamp, type,
  payload}`` envelope a line. ``response_item`` records are the model's
  conversation (Responses API items), ``event_msg`` records the harness's
  telemetry, ``turn_context`` the per-turn settings (the model among them).
* **Legacy rollouts** (before 0.3x): a bare metadata object on line 1, then
  bare Responses API items without envelope or timestamp, and
  ``{"record_type": "state"}`` markers.
* **``codex exec --json`` streams** (``thread.started``, ``turn.*``,
  ``item.*``), also as written by loggers that wrap each event as
  ``{"log_type": "stream_output", "timestamp_unix": …, "data": {…}}``.

The shape is decided by the first record, so one adapter serves them all and
every output says ``harness: codex``.

Accounting follows the reference implementation: an assistant message is
held until the next conversation item (or turn boundary) shows it complete,
and carries every ``token_count`` recorded since the previous assistant
message closed. ``event_msg`` copies of conversation items
(``user_message``, ``agent_message``, ``agent_reasoning``, ``*_delta``) are
counted skips; telemetry stays ``system`` unless a promotion stage
(:mod:`agentminutes.stages.codex_promotions`) turns it into tool events.

Beyond what the reference reads (its output is a subsequence of ours there):

* ``ghost_snapshot`` (0.58-0.72, the harness's undo commit) is a ``system``
  event; ``tool_search_call`` / ``tool_search_output`` (0.140+) are a
  ``tool_search`` call of kind ``search`` and its result, one content block per
  tool definition loaded; ``image_generation_call`` is an ``image_generation``
  call and result on its line, like ``web_search_call``.
* Legacy rollouts: line 1 is the ``session_meta`` (its ``instructions`` a
  ``session_meta/instructions`` system event), bare items read exactly as
  ``response_item`` payloads (without timestamps), ``{"record_type":"state"}``
  markers are counted skips (``record_type/state``).
* ``exec --json``: ``thread.started`` is the ``session_meta``; items map onto
  the rollout vocabulary (``command_execution`` is ``exec_command``,
  ``file_change`` ``apply_patch``, ``todo_list`` ``update_plan``, MCP calls
  ``mcp__<server>__<tool>``), a command's or MCP call's ``tool_call`` at its
  ``item.started`` and its result at ``item.completed``, other started and
  updated items are counted skips; ``turn.completed`` usage goes to the turn's
  last agent message. A logger's wrapping supplies timestamps
  (``timestamp_unix``, in UTC), the working directory and the prompt (a human
  ``user_message``); its header and the ``thread.started`` line form the meta.
* A pretty-printed rollout (records spread over several lines) is gathered
  record by record; each event's provenance spans its record's lines.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness.base import BaseAdapter, Confidence, ParseOptions, SkipHook
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    Meta,
    Origin,
    Provenance,
    SystemEvent,
    Thinking,
    TokenUsage,
    ToolCall,
    ToolKind,
    ToolResult,
    Unknown,
    UserMessage,
)
from agentminutes.timestamps import format_ns, valid_timestamp

__all__ = ("HARNESS", "CodexAdapter")

HARNESS: Final = "codex"

_DecodeErrors = (msgspec.DecodeError, msgspec.ValidationError)

# ---------------------------------------------------------------------------
# Native shapes. Only the fields that steer parsing are typed; bulky parts
# stay msgspec.Raw and are copied through verbatim.


class _Envelope(msgspec.Struct):
    timestamp: str | None = None
    type: str | None = None
    payload: Raw = NO_RAW


class _Git(msgspec.Struct):
    branch: str | None = None


class _SessionMeta(msgspec.Struct):
    session_id: str | None = None
    id: str | None = None
    cwd: str | None = None
    cli_version: str | None = None
    thread_source: str | None = None
    git: _Git | None = None
    base_instructions: Raw = NO_RAW


class _BaseInstructionsOnly(msgspec.Struct):
    base_instructions: Raw = NO_RAW


class _Instructions(msgspec.Struct):
    text: str | None = None


class _TurnContext(msgspec.Struct):
    model: str | None = None


class _Info(msgspec.Struct):
    last_token_usage: Raw = NO_RAW


class _EventMsg(msgspec.Struct):
    type: str | None = None
    message: str | None = None
    info: _Info | None = None


class _Usage(msgspec.Struct):
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_input_tokens: int | None = None
    output_tokens: int | None = None


class _Item(msgspec.Struct):
    """A ``response_item`` payload (or a bare legacy line) as the reference types it."""

    type: str | None = None
    role: str | None = None
    encrypted_content: str | None = None
    id: str | None = None
    call_id: str | None = None
    name: str | None = None
    input: str | None = None
    arguments: str | None = None
    status: str | None = None
    success: bool | None = None
    content: Raw = NO_RAW
    summary: Raw = NO_RAW
    output: Raw = NO_RAW
    action: Raw = NO_RAW


class _ToolSearchCall(msgspec.Struct):
    """``tool_search_call``: its ``arguments`` are an object (0.140+)."""

    id: str | None = None
    call_id: str | None = None
    arguments: Raw = NO_RAW


class _ItemExtras(msgspec.Struct):
    """Fields of item types the reference does not know."""

    tools: Raw = NO_RAW
    revised_prompt: Raw = NO_RAW


class _Block(msgspec.Struct):
    type: str | None = None
    text: str | None = None


class _OutputObject(msgspec.Struct):
    content: str | None = None
    output: str | None = None


class _ExitCode(msgspec.Struct):
    exit_code: int | None = None


class _OutputMetadata(msgspec.Struct):
    metadata: _ExitCode | None = None


class _Probe(msgspec.Struct):
    """The first record, read leniently to tell the transcript shape."""

    type: Raw = NO_RAW
    payload: Raw = NO_RAW
    id: Raw = NO_RAW
    timestamp: Raw = NO_RAW
    instructions: Raw = NO_RAW
    thread_id: Raw = NO_RAW
    log_type: Raw = NO_RAW
    command: Raw = NO_RAW
    data: Raw = NO_RAW


class _SniffPayload(msgspec.Struct):
    id: str | None = None
    session_id: str | None = None
    cli_version: str | None = None


class _SniffLine(msgspec.Struct):
    type: str | None = None
    timestamp: str | None = None
    payload: _SniffPayload | None = None


class _LegacyMeta(msgspec.Struct):
    id: str | None = None
    timestamp: str | None = None
    instructions: Raw = NO_RAW
    git: _Git | None = None


class _LegacyLine(msgspec.Struct):
    type: str | None = None
    record_type: str | None = None
    payload: Raw = NO_RAW


class _ExecEvent(msgspec.Struct):
    type: str | None = None
    thread_id: str | None = None
    message: str | None = None
    item: Raw = NO_RAW
    usage: Raw = NO_RAW
    error: Raw = NO_RAW


class _ExecError(msgspec.Struct):
    message: str | None = None


class _ExecItem(msgspec.Struct):
    id: str | None = None
    type: str | None = None
    item_type: str | None = None
    text: str | None = None
    message: str | None = None
    command: Raw = NO_RAW
    aggregated_output: str | None = None
    exit_code: int | None = None
    status: str | None = None
    changes: Raw = NO_RAW
    query: str | None = None
    action: Raw = NO_RAW
    server: str | None = None
    tool: str | None = None
    arguments: Raw = NO_RAW
    result: Raw = NO_RAW
    error: Raw = NO_RAW
    items: Raw = NO_RAW


class _McpResult(msgspec.Struct):
    content: Raw = NO_RAW


class _Wrapped(msgspec.Struct):
    log_type: str | None = None
    timestamp_unix: float | None = None
    data: Raw = NO_RAW


class _WrapHeader(msgspec.Struct):
    workspace: str | None = None
    prompt: str | None = None
    timestamp_unix: float | None = None


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_session_meta = msgspec.json.Decoder(_SessionMeta).decode
_decode_base_only = msgspec.json.Decoder(_BaseInstructionsOnly).decode
_decode_instructions = msgspec.json.Decoder(_Instructions).decode
_decode_turn_context = msgspec.json.Decoder(_TurnContext).decode
_decode_event_msg = msgspec.json.Decoder(_EventMsg).decode
_decode_usage = msgspec.json.Decoder(_Usage).decode
_decode_item = msgspec.json.Decoder(_Item).decode
_decode_tool_search = msgspec.json.Decoder(_ToolSearchCall).decode
_decode_extras = msgspec.json.Decoder(_ItemExtras).decode
_decode_blocks = msgspec.json.Decoder(str | list[_Block | None] | None).decode
_decode_raw_list = msgspec.json.Decoder(list[Raw]).decode
_decode_output_object = msgspec.json.Decoder(_OutputObject).decode
_decode_exit_code = msgspec.json.Decoder(_ExitCode).decode
_decode_output_metadata = msgspec.json.Decoder(_OutputMetadata).decode
_decode_str = msgspec.json.Decoder(str).decode
_decode_raw = msgspec.json.Decoder(Raw).decode
_decode_probe = msgspec.json.Decoder(_Probe).decode
_decode_sniff = msgspec.json.Decoder(_SniffLine).decode
_decode_legacy_meta = msgspec.json.Decoder(_LegacyMeta).decode
_decode_legacy_line = msgspec.json.Decoder(_LegacyLine).decode
_decode_exec = msgspec.json.Decoder(_ExecEvent).decode
_decode_exec_error = msgspec.json.Decoder(_ExecError).decode
_decode_exec_item = msgspec.json.Decoder(_ExecItem).decode
_decode_mcp_result = msgspec.json.Decoder(_McpResult).decode
_decode_wrapped = msgspec.json.Decoder(_Wrapped).decode
_decode_wrap_header = msgspec.json.Decoder(_WrapHeader).decode
_decode_str_list = msgspec.json.Decoder(list[Any]).decode
_encode = msgspec.json.encode

# ---------------------------------------------------------------------------
# Vocabulary.

#: Envelope types of the modern rollout format.
RECORD_TYPES: Final = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "world_state",
        "compacted",
        "token_usage_record",
        "inter_agent_communication_metadata",
    }
)

#: Envelope types whose payload is kept verbatim as a system event.
_PASSTHROUGH: Final = frozenset(
    {"world_state", "compacted", "token_usage_record", "inter_agent_communication_metadata"}
)

#: ``event_msg`` subtypes that repeat a ``response_item`` (counted, not emitted).
_DUPLICATE_EVENTS: Final = frozenset({"user_message", "agent_message", "agent_reasoning"})

#: User-role text that the harness injected, by its leading tag.
HARNESS_PREFIXES: Final = (
    "<environment_context>",
    "<ENVIRONMENT_CONTEXT>",
    "<user_instructions>",
    "<turn_aborted>",
)

#: Native tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "exec": ToolKind.EXECUTE,
    "shell": ToolKind.EXECUTE,
    "local_shell": ToolKind.EXECUTE,
    "exec_command": ToolKind.EXECUTE,
    "unified_exec": ToolKind.EXECUTE,
    "apply_patch": ToolKind.EDIT,
    "update_plan": ToolKind.THINK,
    "web_search": ToolKind.FETCH,
    "view_image": ToolKind.READ,
    "read_thread_terminal": ToolKind.READ,
}

_TEXT_BLOCKS: Final = frozenset(
    {"text", "input_text", "output_text", "summary_text", "reasoning_text"}
)
_IMAGE_BLOCKS: Final = frozenset({"input_image", "image"})

#: Bare item types of legacy rollouts and response_item payloads we read.
_ITEM_TYPES: Final = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "function_call_output",
        "custom_tool_call_output",
        "web_search_call",
    }
)

#: Top-level event types of ``codex exec --json``.
_EXEC_TYPES: Final = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)

#: Go's unicode.IsSpace set, which the reference trims with.
_SPACE: Final = " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"

_NULL: Final = b"null"
_RAW_NULL: Final = Raw(_NULL)
_QUOTE: Final = ord('"')
_LBRACE: Final = ord("{")
_LBRACKET: Final = ord("[")

_Held = list[Any]

#: How many call ids the adapter remembers the tool name of.
_MAX_TOOL_NAMES: Final = 4096

_ROLLOUT: Final = "rollout"
_LEGACY: Final = "legacy"
_EXEC: Final = "exec"
_WRAPPED: Final = "wrapped"

# A JSON string literal on one line (JSON strings cannot hold raw newlines).
_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"')


class CodexAdapter(BaseAdapter):
    """Parses Codex CLI rollouts (modern and legacy) and ``codex exec --json`` streams."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "0.146.0"
    #: Codex's ``input_tokens`` already include the cached ones.
    prompt_tokens: ClassVar[str] = "input"  # input_tokens already count cached tokens

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        #: The transcript shape, decided by the first record.
        self.shape = ""
        self.meta_sent = False
        #: The model of the latest turn_context.
        self.model = ""
        #: call id -> tool name, for results.
        self.tool_names: dict[str, str] = {}
        #: The assistant message waiting to be shown complete, as plain data (it
        #: is pickled by snapshots): first and last line, timestamp, model,
        #: content blocks as (kind, text, raw bytes or None), the record under --keep-raw.
        self.pending: _Held | None = None
        #: Usage recorded since the last assistant message closed:
        #: input, cache read, cache write, output (None: nothing recorded).
        self.pool: list[int] | None = None
        #: exec --json: items whose tool_call went out at item.started.
        self.started: set[str] = set()
        #: A wrapped exec log's header, held until its thread id is known.
        self.header: tuple[bytes, int] | None = None
        #: Whether records are pretty-printed over several lines each.
        self.pretty = False
        #: A pretty-printed record being gathered: start line, parts, depth.
        self.gather: tuple[int, list[bytes], int] | None = None

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        if head.startswith(b"\xef\xbb\xbf"):
            head = head[3:]
        first, _, rest = head.partition(b"\n")
        first = first.strip()
        try:
            rec = _decode_sniff(first)
        except _DecodeErrors:
            rec = None
        if rec is not None:
            p = rec.payload
            if (
                rec.type == "session_meta"
                and p is not None
                and (p.session_id or p.id)
                and p.cli_version
            ):
                return Confidence.CERTAIN
            if rec.type in RECORD_TYPES and rec.timestamp:
                return Confidence.POSSIBLE
        shape, conf = _shape_of(first, rest)
        if shape and shape != _ROLLOUT:
            return conf
        if b'"payload"' in head and b'"cli_version"' in head:
            return Confidence.POSSIBLE
        if b'"log_type"' in head and b'"stream_output"' in head and b'"thread.started"' in head:
            return Confidence.POSSIBLE
        if b'"payload"' in head and _has_rollout_record(rest):
            # Not Codex-shaped at the top, but rollout records follow: a
            # drifted Codex format, which parsing then reports loudly.
            return Confidence.POSSIBLE
        return Confidence.NO_MATCH

    # -- parsing -----------------------------------------------------------

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        if self.pretty or (not self.shape and line == b"{"):
            self.pretty = True
            return self._gather(line, lineno)
        shape = self.shape
        if shape == _ROLLOUT:
            return self._rollout(line, lineno)
        if not shape:
            shape = self.shape = _shape_of(line, None)[0] or _ROLLOUT
            if shape == _ROLLOUT:
                return self._rollout(line, lineno)
        if shape == _EXEC:
            return self._exec_line(line, lineno)
        if shape == _WRAPPED:
            return self._wrapped_line(line, lineno)
        return self._legacy_line(line, lineno)

    def finish(self) -> list[Event]:
        out: list[Event] = []
        if self.gather is not None:
            start, parts, _ = self.gather
            self.gather = None
            record = b"\n".join(parts)
            out.append(
                self._unknown("", record, start, "incomplete multi-line record at end of input")
            )
        if self.header is not None:
            out.extend(self._flush_header(None, 0))
        self._close(out)
        return out

    # -- pretty-printed records ----------------------------------------------

    def _gather(self, line: bytes, lineno: int) -> list[Event]:
        """Collect a record written over several lines (a pretty-printed rollout)."""
        if self.gather is None:
            self.gather = (lineno, [], 0)
        start, parts, depth = self.gather
        parts.append(line)
        bare = _STRING.sub(b"", line)
        depth += bare.count(b"{") + bare.count(b"[") - bare.count(b"}") - bare.count(b"]")
        if depth > 0:
            self.gather = (start, parts, depth)
            return []
        self.gather = None
        record = b"\n".join(parts)
        if not self.shape:
            self.shape = _shape_of(record, None)[0] or _ROLLOUT
        if self.shape == _ROLLOUT:
            events = self._rollout(record, start)
        elif self.shape == _LEGACY:
            events = self._legacy_line(record, start)
        elif self.shape == _EXEC:
            events = self._exec_line(record, start)
        else:
            events = self._wrapped_line(record, start)
        for ev in events:
            p = ev.provenance
            if p is not None and p.line == start:
                p.end_line = lineno
        pending = self.pending
        if pending is not None and pending[0] == start:
            pending[1] = lineno
        return events

    # -- shared helpers ----------------------------------------------------

    def _unknown(self, record_type: str, line: bytes, lineno: int, reason: str) -> Event:
        """Raise the loud-failure error, or in permissive mode keep *line* as ``unknown``.

        A line that is not JSON at all is kept as a JSON string, so the output
        stays JSON.
        """
        if not self.options.permissive:
            raise self.error(reason, lineno)
        try:
            raw = _decode_raw(line)
        except _DecodeErrors:
            raw = Raw(_encode(line.decode("utf-8", "replace")))
        return Event(
            kind=EventKind.UNKNOWN,
            provenance=Provenance(line=lineno, end_line=lineno),
            unknown=Unknown(record_type=record_type, reason=reason, raw=raw),
        )

    def _meta_event(self, ts: str, prov: Provenance, meta: Meta) -> Event:
        return Event(kind=EventKind.SESSION_META, timestamp=ts, provenance=prov, session_meta=meta)

    def _sparse_meta(self, ts: str, line: bytes, lineno: int) -> Event:
        self.meta_sent = True
        return self._meta_event(
            ts,
            self.prov(line, lineno),
            Meta(harness=HARNESS, harness_version=self.options.harness_version),
        )

    def _system(
        self,
        ts: str,
        line: bytes,
        lineno: int,
        subtype: str,
        details: Raw,
        *,
        text: str = "",
        level: str = "",
    ) -> Event:
        return Event(
            kind=EventKind.SYSTEM,
            timestamp=ts,
            provenance=self.prov(line, lineno),
            system=SystemEvent(subtype=subtype, level=level, text=text, details=details),
        )

    def _close(self, out: list[Event]) -> None:
        """Emit the held assistant message, with the usage pooled since the last one."""
        held = self.pending
        if held is None:
            return
        self.pending = None
        start, end, ts, model, blocks, raw = held
        usage = None
        pool = self.pool
        if pool is not None:
            self.pool = None
            usage = TokenUsage(
                input_tokens=pool[0],
                output_tokens=pool[3],
                cache_read_input_tokens=pool[1],
                cache_creation_input_tokens=pool[2],
            )
        content = [
            ContentBlock(kind=kind, text=text, raw=Raw(data) if data is not None else NO_RAW)
            for kind, text, data in blocks
        ]
        out.append(
            Event(
                kind=EventKind.ASSISTANT_MESSAGE,
                timestamp=ts,
                provenance=Provenance(
                    line=start, end_line=end, raw=[Raw(raw)] if raw is not None else None
                ),
                assistant_message=AssistantMessage(
                    model=model, content=content or None, usage=usage
                ),
            )
        )

    def _add_usage(self, usage: _Usage) -> None:
        pool = self.pool
        if pool is None:
            pool = self.pool = [0, 0, 0, 0]
        pool[0] += usage.input_tokens or 0
        pool[1] += usage.cached_input_tokens or 0
        pool[2] += usage.cache_write_input_tokens or 0
        pool[3] += usage.output_tokens or 0

    def _open_assistant(
        self, ts: str, line: bytes, lineno: int, content: list[ContentBlock] | None
    ) -> None:
        blocks = [(b.kind, b.text, bytes(b.raw) if b.raw else None) for b in content or ()]
        raw = bytes(line) if self.options.keep_raw else None
        self.pending = [lineno, lineno, ts, self.model, blocks, raw]

    def _tool_call(
        self,
        ts: str,
        prov: Provenance,
        call_id: str,
        name: str,
        tool_input: Raw,
        kind: str | None = None,
    ) -> Event:
        names = self.tool_names
        names[call_id] = name
        if len(names) > _MAX_TOOL_NAMES:
            # Results follow their calls closely: forget the oldest half.
            for old in list(names)[: _MAX_TOOL_NAMES // 2]:
                del names[old]
        return Event(
            kind=EventKind.TOOL_CALL,
            timestamp=ts,
            provenance=prov,
            tool_call=ToolCall(
                tool_call_id=call_id,
                name=name,
                kind=kind or TOOL_KINDS.get(name, ToolKind.OTHER),
                input=tool_input,
            ),
        )

    # -- modern rollouts -----------------------------------------------------

    def _rollout(self, line: bytes, lineno: int) -> list[Event]:
        try:
            rec = _decode_envelope(line)
        except _DecodeErrors as exc:
            return [self._unknown("", line, lineno, f"invalid JSON: {exc}")]
        rtype = rec.type or ""
        if rtype not in RECORD_TYPES:
            return [self._unknown(rtype, line, lineno, f'unrecognized record type "{rtype}"')]
        ts = _timestamp(rec.timestamp) if rec.timestamp else ""
        out: list[Event] = []
        if not self.meta_sent:
            if rtype == "session_meta":
                return self._first_meta(rec.payload, ts, line, lineno)
            out.append(self._sparse_meta(ts, line, lineno))
        if rtype == "response_item":
            self._response_item(rec.payload, ts, line, lineno, out)
        elif rtype == "event_msg":
            self._event_msg(rec.payload, ts, line, lineno, out)
        elif rtype == "turn_context":
            payload = rec.payload
            if payload:
                try:
                    model = _decode_turn_context(payload).model
                except _DecodeErrors:
                    model = None
                if model:
                    self.model = model
            out.append(self._system(ts, line, lineno, "turn_context", payload))
        elif rtype == "session_meta":
            out.append(self._system(ts, line, lineno, "session_meta", rec.payload))
            payload = rec.payload
            if payload:
                try:
                    base = _decode_base_only(payload).base_instructions
                except _DecodeErrors:
                    base = NO_RAW
                self._base_instructions(base, payload, ts, lineno, out)
        else:
            out.append(self._system(ts, line, lineno, rtype, rec.payload))
        return out

    def _first_meta(self, payload: Raw, ts: str, line: bytes, lineno: int) -> list[Event]:
        self.meta_sent = True
        try:
            sm = (
                _decode_session_meta(payload)
                if payload and payload != _RAW_NULL
                else _SessionMeta()
            )
        except _DecodeErrors as exc:
            sparse = self._meta_event(
                ts,
                self.prov(line, lineno),
                Meta(harness=HARNESS, harness_version=self.options.harness_version),
            )
            reason = f"malformed session_meta: {exc}"
            return [sparse, self._unknown("session_meta", line, lineno, reason)]
        version = sm.cli_version or ""
        if version:
            self.version = version
        subagent = sm.thread_source == "subagent"
        meta = Meta(
            harness=HARNESS,
            harness_version=version or self.options.harness_version,
            session_id=sm.session_id or sm.id or "",
            subagent_id=(sm.id or "") if subagent else "",
            is_subagent=subagent,
            cwd=sm.cwd or "",
            git_branch=(sm.git.branch or "") if sm.git is not None else "",
        )
        out = [self._meta_event(ts, self.prov(line, lineno), meta)]
        self._base_instructions(sm.base_instructions, payload, ts, lineno, out)
        return out

    def _base_instructions(
        self, base: Raw, payload: Raw, ts: str, lineno: int, out: list[Event]
    ) -> None:
        """The system prompt a session_meta records, as its own system event."""
        if _lead(base) != _LBRACE:
            return
        try:
            text = _decode_instructions(base).text
        except _DecodeErrors:
            return
        if text:
            out.append(
                Event(
                    kind=EventKind.SYSTEM,
                    timestamp=ts,
                    provenance=Provenance(line=lineno, end_line=lineno),
                    system=SystemEvent(
                        subtype="session_meta/base_instructions", text=text, details=payload
                    ),
                )
            )

    def _event_msg(self, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]) -> None:
        try:
            if payload == _RAW_NULL:
                msg: _EventMsg | None = _EventMsg()
            else:
                msg = _decode_event_msg(payload) if payload else None
        except _DecodeErrors as exc:
            out.append(self._unknown("event_msg", line, lineno, f"malformed event_msg: {exc}"))
            return
        if msg is None:
            out.append(self._unknown("event_msg", line, lineno, "event_msg record has no payload"))
            return
        sub = msg.type or ""
        if sub in _DUPLICATE_EVENTS or sub.endswith("_delta"):
            self.skip("event_msg/" + sub, lineno)
            return
        if sub == "token_count":
            info = msg.info
            if info is not None and info.last_token_usage and info.last_token_usage != _RAW_NULL:
                try:
                    usage = _decode_usage(info.last_token_usage)
                except _DecodeErrors as exc:
                    out.append(
                        self._unknown("event_msg", line, lineno, f"malformed token usage: {exc}")
                    )
                    return
                self._add_usage(usage)
            out.append(self._system(ts, line, lineno, sub, payload))
        elif sub == "task_started" or sub == "task_complete":
            self._close(out)
            out.append(self._system(ts, line, lineno, sub, payload))
        elif sub == "error" or sub == "stream_error":
            out.append(
                self._system(ts, line, lineno, sub, payload, text=msg.message or "", level="error")
            )
        else:
            out.append(self._system(ts, line, lineno, sub, payload))

    def _response_item(
        self, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        try:
            item = _decode_item(payload) if payload else _Item()
        except _DecodeErrors as exc:
            # tool_search_call carries object arguments, which the reference
            # cannot type; it leaves the open assistant message open, and so
            # do we, so that both agree on what that message carries.
            if self._tool_search_call(payload, ts, line, lineno, out):
                return
            out.append(
                self._unknown("response_item", line, lineno, f"malformed response_item: {exc}")
            )
            return
        if self.pending is not None:
            self._close(out)
        self._item(item, payload, ts, line, lineno, out)

    def _item(
        self, item: _Item, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        """One conversation item (a response_item payload, or a bare legacy line)."""
        itype = item.type or ""
        if itype == "message":
            self._message(item, payload, ts, line, lineno, out)
        elif itype == "reasoning":
            try:
                text = _plain_text(_content_blocks(item.content))
            except _DecodeErrors:
                text = ""
            if not text:
                try:
                    text = _plain_text(_content_blocks(item.summary))
                except _DecodeErrors:
                    text = ""
            out.append(
                Event(
                    kind=EventKind.THINKING,
                    timestamp=ts,
                    provenance=self.prov(line, lineno),
                    thinking=Thinking(text=text, signature=item.encrypted_content or ""),
                )
            )
        elif itype == "function_call" or itype == "custom_tool_call":
            source = item.arguments if itype == "function_call" else item.input
            out.append(
                self._tool_call(
                    ts,
                    self.prov(line, lineno),
                    item.call_id or "",
                    item.name or "",
                    _input_value(source),
                )
            )
        elif itype == "function_call_output" or itype == "custom_tool_call_output":
            self._tool_output(item, payload, ts, line, lineno, out)
        elif itype == "local_shell_call":
            out.append(
                self._tool_call(
                    ts,
                    self.prov(line, lineno),
                    item.call_id or item.id or "",
                    "local_shell",
                    item.action,
                    ToolKind.EXECUTE,
                )
            )
        elif itype == "web_search_call":
            self._paired(
                ts,
                line,
                lineno,
                item.id or f"web_search_call:L{lineno}",
                "web_search",
                ToolKind.FETCH,
                item.action,
                bool(item.status) and item.status != "completed",
                payload,
                out,
            )
        elif itype == "agent_message":
            try:
                text = _plain_text(_content_blocks(item.content))
            except _DecodeErrors as exc:
                out.append(
                    self._unknown(
                        "response_item", line, lineno, f"malformed agent_message content: {exc}"
                    )
                )
                return
            out.append(self._system(ts, line, lineno, "agent_message", payload, text=text))
        elif itype == "ghost_snapshot":
            # The harness's own undo snapshot (a git commit), never shown to the model.
            out.append(self._system(ts, line, lineno, "ghost_snapshot", payload))
        elif itype == "tool_search_call":
            self._tool_search_call(payload, ts, line, lineno, out)
        elif itype == "tool_search_output":
            self._tool_search_output(item, payload, ts, line, lineno, out)
        elif itype == "image_generation_call":
            try:
                prompt = _decode_extras(payload).revised_prompt
            except _DecodeErrors:
                prompt = NO_RAW
            self._paired(
                ts,
                line,
                lineno,
                item.id or f"image_generation_call:L{lineno}",
                "image_generation",
                ToolKind.OTHER,
                prompt,
                bool(item.status) and item.status not in ("completed", "generating"),
                payload,
                out,
            )
        else:
            out.append(
                self._unknown(
                    "response_item", line, lineno, f'unrecognized response_item type "{itype}"'
                )
            )

    def _paired(
        self,
        ts: str,
        line: bytes,
        lineno: int,
        call_id: str,
        name: str,
        kind: str,
        tool_input: Raw,
        is_error: bool,
        enrichment: Raw,
        out: list[Event],
    ) -> None:
        """A tool call and its result recorded by one record."""
        out.append(self._tool_call(ts, self.prov(line, lineno), call_id, name, tool_input, kind))
        out.append(
            Event(
                kind=EventKind.TOOL_RESULT,
                timestamp=ts,
                provenance=self.prov(line, lineno),
                tool_result=ToolResult(
                    tool_call_id=call_id, tool_name=name, is_error=is_error, enrichment=enrichment
                ),
            )
        )

    def _message(
        self, item: _Item, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        content = item.content
        try:
            decoded = _decode_blocks(content) if content else None
            blocks = _map_blocks(decoded, content)
        except _DecodeErrors as exc:
            out.append(
                self._unknown("response_item", line, lineno, f"malformed message content: {exc}")
            )
            return
        role = item.role or ""
        if role == "user":
            first = ""
            if isinstance(decoded, str):
                first = decoded
            elif decoded and decoded[0] is not None:
                first = decoded[0].text or ""
            origin = (
                Origin.HARNESS
                if first.lstrip(_SPACE).startswith(HARNESS_PREFIXES)
                else Origin.HUMAN
            )
            out.append(
                Event(
                    kind=EventKind.USER_MESSAGE,
                    timestamp=ts,
                    provenance=self.prov(line, lineno),
                    user_message=UserMessage(origin=origin, content=blocks),
                )
            )
        elif role == "assistant":
            self._open_assistant(ts, line, lineno, blocks)
        elif role == "developer" or role == "system":
            out.append(
                self._system(ts, line, lineno, "message/" + role, payload, text=_plain_text(blocks))
            )
        else:
            out.append(
                self._unknown("response_item", line, lineno, f'unrecognized message role "{role}"')
            )

    def _tool_output(
        self, item: _Item, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        output = item.output
        try:
            content, is_error = _tool_output(output)
        except _DecodeErrors as exc:
            out.append(
                self._unknown("response_item", line, lineno, f"malformed tool output: {exc}")
            )
            return
        if item.success is not None:
            is_error = not item.success
        call_id = item.call_id or ""
        out.append(
            Event(
                kind=EventKind.TOOL_RESULT,
                timestamp=ts,
                provenance=self.prov(line, lineno),
                tool_result=ToolResult(
                    tool_call_id=call_id,
                    tool_name=self.tool_names.get(call_id, ""),
                    is_error=is_error,
                    content=content,
                    enrichment=payload,
                ),
            )
        )

    def _tool_search_call(
        self, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> bool:
        """A ``tool_search_call`` (the model looking up deferred tools); False if it is not one."""
        try:
            item = _decode_tool_search(payload)
            itype = _decode_item_type(payload)
        except _DecodeErrors:
            return False
        if itype != "tool_search_call":
            return False
        call_id = item.call_id or item.id or f"tool_search_call:L{lineno}"
        out.append(
            self._tool_call(
                ts,
                self.prov(line, lineno),
                call_id,
                "tool_search",
                _input_value(item.arguments),
                ToolKind.SEARCH,
            )
        )
        return True

    def _tool_search_output(
        self, item: _Item, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        """The tool definitions a ``tool_search_call`` loaded, one content block each."""
        try:
            tools = _decode_extras(payload).tools
            blocks = (
                [ContentBlock(kind="other", raw=r) for r in _decode_raw_list(tools)]
                if (tools and tools != _RAW_NULL)
                else []
            )
        except _DecodeErrors as exc:
            out.append(
                self._unknown("response_item", line, lineno, f"malformed tool output: {exc}")
            )
            return
        call_id = item.call_id or ""
        out.append(
            Event(
                kind=EventKind.TOOL_RESULT,
                timestamp=ts,
                provenance=self.prov(line, lineno),
                tool_result=ToolResult(
                    tool_call_id=call_id,
                    tool_name=self.tool_names.get(call_id, ""),
                    is_error=bool(item.status) and item.status != "completed",
                    content=blocks or None,
                    enrichment=payload,
                ),
            )
        )

    # -- legacy rollouts -----------------------------------------------------

    def _legacy_line(self, line: bytes, lineno: int) -> list[Event]:
        if not self.meta_sent:
            return self._legacy_meta(line, lineno)
        try:
            probe = _decode_legacy_line(line)
        except _DecodeErrors as exc:
            return [self._unknown("", line, lineno, f"invalid JSON: {exc}")]
        if probe.record_type is not None:
            if probe.record_type == "state" and probe.type is None:
                self.skip("record_type/state", lineno)
                return []
            rt = probe.record_type
            return [self._unknown(rt, line, lineno, f'unrecognized record_type "{rt}"')]
        if probe.payload and probe.type in RECORD_TYPES:
            # A modern envelope in a legacy file: the format changed mid-session.
            return self._rollout(line, lineno)
        out: list[Event] = []
        try:
            item = _decode_item(line)
        except _DecodeErrors as exc:
            if not self._tool_search_call(Raw(line), "", line, lineno, out):
                out.append(self._unknown("", line, lineno, f"malformed item: {exc}"))
            return out
        self._close(out)
        self._item(item, Raw(line), "", line, lineno, out)
        return out

    def _legacy_meta(self, line: bytes, lineno: int) -> list[Event]:
        self.meta_sent = True
        try:
            lm = _decode_legacy_meta(line)
        except _DecodeErrors as exc:
            sparse = self._sparse_meta("", line, lineno)
            return [sparse, self._unknown("", line, lineno, f"malformed session metadata: {exc}")]
        ts = _timestamp(lm.timestamp) if lm.timestamp else ""
        meta = Meta(
            harness=HARNESS,
            harness_version=self.options.harness_version,
            session_id=lm.id or "",
            git_branch=(lm.git.branch or "") if lm.git is not None else "",
        )
        out = [self._meta_event(ts, self.prov(line, lineno), meta)]
        instructions = lm.instructions
        if _lead(instructions) == _QUOTE:
            text = _decode_str(instructions)
            if text:
                out.append(
                    Event(
                        kind=EventKind.SYSTEM,
                        timestamp=ts,
                        provenance=Provenance(line=lineno, end_line=lineno),
                        system=SystemEvent(
                            subtype="session_meta/instructions", text=text, details=Raw(line)
                        ),
                    )
                )
        return out

    # -- codex exec --json ---------------------------------------------------

    def _exec_line(self, line: bytes, lineno: int) -> list[Event]:
        out: list[Event] = []
        self._exec(Raw(line), "", line, lineno, out)
        return out

    def _exec(self, data: Raw, ts: str, line: bytes, lineno: int, out: list[Event]) -> None:
        """One ``codex exec --json`` event (*data*), recorded on *line*."""
        try:
            ev = _decode_exec(data)
        except _DecodeErrors as exc:
            out.append(self._unknown("", line, lineno, f"invalid exec event: {exc}"))
            return
        etype = ev.type or ""
        if etype not in _EXEC_TYPES:
            out.append(
                self._unknown(etype, line, lineno, f'unrecognized exec event type "{etype}"')
            )
            return
        if not self.meta_sent:
            self.meta_sent = True
            if etype == "thread.started":
                prov = self.prov(line, lineno)
                if self.header is not None:
                    out.extend(self._flush_header(ev.thread_id or "", lineno, line))
                    return
                meta = Meta(
                    harness=HARNESS,
                    harness_version=self.options.harness_version,
                    session_id=ev.thread_id or "",
                )
                out.append(self._meta_event(ts, prov, meta))
                return
            out.append(self._sparse_meta(ts, line, lineno))
        if etype == "item.completed" or etype == "item.started" or etype == "item.updated":
            self._exec_item(etype, ev.item, ts, line, lineno, out)
        elif etype == "turn.completed":
            if ev.usage and ev.usage != _RAW_NULL:
                try:
                    usage = _decode_usage(ev.usage)
                except _DecodeErrors as exc:
                    out.append(self._unknown(etype, line, lineno, f"malformed token usage: {exc}"))
                    return
                self._add_usage(usage)
            self._close(out)
            out.append(self._system(ts, line, lineno, etype, data))
        elif etype == "turn.started":
            self._close(out)
            out.append(self._system(ts, line, lineno, etype, data))
        elif etype == "turn.failed":
            self._close(out)
            text = ""
            if _lead(ev.error) == _LBRACE:
                try:
                    text = _decode_exec_error(ev.error).message or ""
                except _DecodeErrors:
                    text = ""
            out.append(self._system(ts, line, lineno, etype, data, text=text, level="error"))
        elif etype == "error":
            out.append(
                self._system(ts, line, lineno, etype, data, text=ev.message or "", level="error")
            )
        else:  # a thread.started after the first record
            out.append(self._system(ts, line, lineno, etype, data))

    def _exec_item(
        self, etype: str, raw_item: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        try:
            item = _decode_exec_item(raw_item)
        except _DecodeErrors as exc:
            out.append(self._unknown(etype, line, lineno, f"malformed {etype} item: {exc}"))
            return
        itype = item.type or item.item_type or ""
        if itype == "assistant_message":  # its name before exec --json 0.4x settled
            itype = "agent_message"
        item_id = item.id or ""
        if etype != "item.completed":
            # Started and updated items repeat the completed one, except that a
            # tool's start is when its call was made.
            if etype == "item.started" and itype in ("command_execution", "mcp_tool_call"):
                self._close(out)
                prov = self.prov(line, lineno)
                out.append(self._exec_call(item, itype, ts, prov))
                self.started.add(item_id)
                return
            self.skip(f"{etype}/{itype}", lineno)
            return
        self._close(out)
        if itype == "agent_message":
            text = item.text or ""
            self._open_assistant(
                ts, line, lineno, [ContentBlock(kind="text", text=text)] if text else None
            )
        elif itype == "reasoning":
            out.append(
                Event(
                    kind=EventKind.THINKING,
                    timestamp=ts,
                    provenance=self.prov(line, lineno),
                    thinking=Thinking(text=item.text or ""),
                )
            )
        elif itype == "user_message":
            text = item.text or ""
            origin = (
                Origin.HARNESS if text.lstrip(_SPACE).startswith(HARNESS_PREFIXES) else Origin.HUMAN
            )
            out.append(
                Event(
                    kind=EventKind.USER_MESSAGE,
                    timestamp=ts,
                    provenance=self.prov(line, lineno),
                    user_message=UserMessage(
                        origin=origin, content=[ContentBlock(kind="text", text=text)]
                    ),
                )
            )
        elif itype in _EXEC_TOOLS:
            if item_id in self.started:
                self.started.discard(item_id)
            else:
                out.append(self._exec_call(item, itype, ts, self.prov(line, lineno)))
            try:
                out.append(self._exec_result(item, itype, raw_item, ts, self.prov(line, lineno)))
            except _DecodeErrors as exc:
                out.append(self._unknown(etype, line, lineno, f"malformed {itype} result: {exc}"))
        elif itype == "error":
            out.append(
                self._system(
                    ts, line, lineno, "error", raw_item, text=item.message or "", level="error"
                )
            )
        else:
            out.append(self._unknown(etype, line, lineno, f'unrecognized item type "{itype}"'))

    def _exec_call(self, item: _ExecItem, itype: str, ts: str, prov: Provenance) -> Event:
        name, kind = _EXEC_TOOLS[itype]
        call_id = item.id or ""
        if itype == "command_execution":
            tool_input = Raw(b'{"command":' + bytes(item.command or _RAW_NULL) + b"}")
        elif itype == "file_change":
            tool_input = item.changes
        elif itype == "web_search":
            tool_input = item.action or Raw(_encode({"type": "search", "query": item.query or ""}))
        elif itype == "todo_list":
            tool_input = Raw(b'{"items":' + bytes(item.items or _RAW_NULL) + b"}")
        else:  # mcp_tool_call
            name = f"mcp__{item.server or ''}__{item.tool or ''}"
            tool_input = item.arguments
        return self._tool_call(ts, prov, call_id, name, tool_input, kind)

    def _exec_result(
        self, item: _ExecItem, itype: str, raw_item: Raw, ts: str, prov: Provenance
    ) -> Event:
        status = item.status or ""
        content: list[ContentBlock] | None = None
        if itype == "command_execution":
            is_error = (item.exit_code is not None and item.exit_code != 0) or status in (
                "failed",
                "declined",
            )
            if item.aggregated_output is not None:
                content = [ContentBlock(kind="text", text=item.aggregated_output)]
        elif itype == "mcp_tool_call":
            is_error = bool(item.error and item.error != _RAW_NULL) or status == "failed"
            if item.result and item.result != _RAW_NULL:
                blocks = _decode_mcp_result(item.result).content
                if blocks and blocks != _RAW_NULL:
                    content = _map_blocks(_decode_blocks(blocks), blocks)
        elif itype == "web_search":
            is_error = status not in ("", "completed")
        else:  # file_change, todo_list
            is_error = status not in ("", "completed")
        call_id = item.id or ""
        return Event(
            kind=EventKind.TOOL_RESULT,
            timestamp=ts,
            provenance=prov,
            tool_result=ToolResult(
                tool_call_id=call_id,
                tool_name=self.tool_names.get(call_id, ""),
                is_error=is_error,
                content=content,
                enrichment=raw_item,
            ),
        )

    def _wrapped_line(self, line: bytes, lineno: int) -> list[Event]:
        """A line of a logger's capture of ``codex exec --json``."""
        if not self.meta_sent and self.header is None and _is_logger_header(line):
            self.header = (line, lineno)
            return []
        try:
            rec = _decode_wrapped(line)
        except _DecodeErrors as exc:
            return [self._unknown("", line, lineno, f"invalid JSON: {exc}")]
        ts = _unix_time(rec.timestamp_unix)
        out: list[Event] = []
        log_type = rec.log_type or ""
        if log_type == "stream_output" and rec.data:
            if self.header is not None and not _is_thread_start(rec.data):
                out.extend(self._flush_header(None, 0))
            self._exec(rec.data, ts, line, lineno, out)
            return out
        if self.header is not None:
            out.extend(self._flush_header(None, 0))
        if log_type == "session_end":
            if not self.meta_sent:
                out.append(self._sparse_meta(ts, line, lineno))
            self._close(out)
            out.append(self._system(ts, line, lineno, log_type, Raw(line)))
            return out
        out.append(self._unknown(log_type, line, lineno, f'unrecognized log_type "{log_type}"'))
        return out

    def _flush_header(self, thread_id: str | None, lineno: int, line: bytes = b"") -> list[Event]:
        """Emit the held logger header as the session's meta (and its prompt).

        With *thread_id* the meta also covers the ``thread.started`` line *lineno*.
        """
        assert self.header is not None
        head, head_no = self.header
        self.header = None
        self.meta_sent = True
        try:
            h = _decode_wrap_header(head)
        except _DecodeErrors:
            h = _WrapHeader()
        ts = _unix_time(h.timestamp_unix)
        if thread_id is not None:
            raw = [Raw(head), Raw(line)] if self.options.keep_raw else None
            prov = Provenance(line=head_no, end_line=lineno, raw=raw)
        else:
            prov = self.prov(head, head_no)
        meta = Meta(
            harness=HARNESS,
            harness_version=self.options.harness_version,
            session_id=thread_id or "",
            cwd=h.workspace or "",
        )
        out = [self._meta_event(ts, prov, meta)]
        if h.prompt:
            out.append(
                Event(
                    kind=EventKind.USER_MESSAGE,
                    timestamp=ts,
                    provenance=self.prov(head, head_no),
                    user_message=UserMessage(
                        origin=Origin.HUMAN, content=[ContentBlock(kind="text", text=h.prompt)]
                    ),
                )
            )
        return out


#: exec --json tool items: the rollout tool name and kind each stands for.
_EXEC_TOOLS: Final[dict[str, tuple[str, str]]] = {
    "command_execution": ("exec_command", ToolKind.EXECUTE),
    "file_change": ("apply_patch", ToolKind.EDIT),
    "web_search": ("web_search", ToolKind.FETCH),
    "mcp_tool_call": ("", ToolKind.OTHER),
    "todo_list": ("update_plan", ToolKind.THINK),
}


class _TypeOnly(msgspec.Struct):
    type: Raw = NO_RAW


_decode_type_only = msgspec.json.Decoder(_TypeOnly).decode


def _decode_item_type(payload: Raw | bytes) -> str:
    raw = _decode_type_only(payload).type
    return _decode_str(raw) if _lead(raw) == _QUOTE else ""


def _is_thread_start(data: Raw) -> bool:
    try:
        return _decode_item_type(data) == "thread.started"
    except _DecodeErrors:
        return False


def _is_logger_header(line: bytes) -> bool:
    """Whether *line* is an exec-json logger's header (the command line that was run)."""
    try:
        probe = _decode_probe(line)
    except _DecodeErrors:
        return False
    return _is_exec_command(probe.command)


def _is_exec_command(command: Raw) -> bool:
    if _lead(command) != _LBRACKET:
        return False
    try:
        words = _decode_str_list(command)
    except _DecodeErrors:
        return False
    strs = [w for w in words if isinstance(w, str)]
    return (
        any(w == "codex" or w.endswith("/codex") for w in strs)
        and "exec" in strs
        and ("--json" in strs or "--experimental-json" in strs)
    )


def _lead(raw: Raw) -> int:
    """The first byte of a verbatim JSON value (0 when absent)."""
    return memoryview(raw)[0] if raw else 0


def _raw_str(raw: Raw) -> str | None:
    if _lead(raw) != _QUOTE:
        return None
    try:
        return _decode_str(raw)
    except _DecodeErrors:
        return None


def _shape_of(first: bytes, rest: bytes | None) -> tuple[str, Confidence]:
    """The transcript shape a first record shows, and how sure that is.

    *rest* is what follows the first line in a detection head, or ``None`` when
    the adapter already reads the transcript as Codex and only asks which shape.
    """
    try:
        p = _decode_probe(first)
    except _DecodeErrors:
        return "", Confidence.NO_MATCH
    rtype = _raw_str(p.type)
    if p.payload and rtype in RECORD_TYPES:
        return _ROLLOUT, Confidence.POSSIBLE
    if rtype in _EXEC_TYPES and not p.payload:
        if rtype == "thread.started" and _raw_str(p.thread_id):
            return _EXEC, Confidence.CERTAIN
        if rtype in ("turn.started", "item.started", "item.completed"):
            return _EXEC, Confidence.POSSIBLE
        return "", Confidence.NO_MATCH
    if _is_exec_command(p.command):
        return _WRAPPED, Confidence.CERTAIN
    if _raw_str(p.log_type) == "stream_output" and _lead(p.data) == _LBRACE:
        try:
            inner = _decode_item_type(p.data)
        except _DecodeErrors:
            inner = ""
        if inner in _EXEC_TYPES:
            return _WRAPPED, Confidence.CERTAIN
    if not p.type and not p.payload and _raw_str(p.id) and _raw_str(p.timestamp):
        # A legacy metadata line: confirmed by a state marker or bare item next.
        if rest is None:
            return _LEGACY, Confidence.POSSIBLE
        nxt = rest.split(b"\n", 1)[0].strip()
        try:
            n = _decode_legacy_line(nxt) if nxt else None
        except _DecodeErrors:
            n = None
        if n is not None and (n.record_type == "state" or n.type in _ITEM_TYPES):
            return _LEGACY, Confidence.CERTAIN
        if p.instructions:
            return _LEGACY, Confidence.POSSIBLE
    return "", Confidence.NO_MATCH


#: The everyday shape of a valid timestamp (days past the 28th take the full check).
_COMMON_TIMESTAMP: Final = re.compile(
    r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d"
    r"(?:\.\d{1,9})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)"
).fullmatch


def _timestamp(value: str) -> str:
    """*value* when it is a valid RFC 3339 timestamp, else ``""``."""
    if _COMMON_TIMESTAMP(value) is not None:
        return value
    return valid_timestamp(value)


def _has_rollout_record(lines: bytes, limit: int = 50) -> bool:
    """Whether one of the first *limit* complete *lines* is a rollout envelope."""
    for line in lines.split(b"\n", limit)[:limit]:
        line = line.strip()
        if not line.startswith(b"{") or b'"payload"' not in line:
            continue
        try:
            rec = _decode_sniff(line)
        except _DecodeErrors:
            continue
        if rec.type in RECORD_TYPES and rec.timestamp and rec.payload is not None:
            return True
    return False


def _unix_time(value: float | None) -> str:
    if value is None:
        return ""
    return format_ns(round(value * 1_000_000) * 1000)


_JSON_OPENERS: Final = frozenset('{["-0123456789tfn')


def _input_value(source: str | Raw | None) -> Raw:
    """A tool input as recorded: the JSON a string holds when it holds one, else the string."""
    if not source:
        return NO_RAW
    if isinstance(source, Raw):
        if _lead(source) != _QUOTE:
            return source
        text = _decode_str(source)
        if not text:
            return NO_RAW
    else:
        text = source
    # Only a string whose first non-blank character can open a JSON value is
    # worth parsing (a patch script or shell line never is).
    if text.lstrip(" \t\r\n")[:1] in _JSON_OPENERS:
        try:
            return _decode_raw(text.encode())
        except _DecodeErrors:
            pass
    return Raw(_encode(text))


def _content_blocks(content: Raw) -> list[ContentBlock] | None:
    if not content:
        return None
    return _map_blocks(_decode_blocks(content), content)


def _map_blocks(decoded: str | list[_Block | None] | None, content: Raw) -> list[ContentBlock]:
    """Map native content (a string or a list of blocks) onto schema blocks."""
    if decoded is None:
        return []
    if isinstance(decoded, str):
        return [ContentBlock(kind="text", text=decoded)]
    out: list[ContentBlock] = []
    raws: list[Raw] | None = None
    for i, b in enumerate(decoded):
        btype = b.type if b is not None else None
        if b is not None and btype in _TEXT_BLOCKS:
            out.append(ContentBlock(kind="text", text=b.text or ""))
            continue
        if raws is None:
            raws = _decode_raw_list(content)
        kind = "image" if btype in _IMAGE_BLOCKS else "other"
        out.append(ContentBlock(kind=kind, raw=raws[i]))
    return out


def _plain_text(blocks: list[ContentBlock] | None) -> str:
    if not blocks:
        return ""
    return "\n".join(b.text for b in blocks if b.kind == "text" and b.text)


def _tool_output(output: Raw) -> tuple[list[ContentBlock] | None, bool]:
    """A tool result's content, and whether its recorded exit code says it failed."""
    if not output or output == _RAW_NULL:
        return None, False
    first = _lead(output)
    if first == _QUOTE:
        text = _decode_str(output)
        return [ContentBlock(kind="text", text=text)], _metadata_failed(text)
    if first == _LBRACKET:
        decoded = _decode_blocks(output)
        blocks = _map_blocks(decoded, output)
        return blocks, _chunks_failed(decoded)
    if first == _LBRACE:
        obj = _decode_output_object(output)
        text = obj.content or obj.output or ""
        if text:
            blocks = [ContentBlock(kind="text", text=text)]
        else:
            blocks = [ContentBlock(kind="other", raw=output)]
        return blocks, _metadata_failed(output)
    # A number or a bool: not content in any shape the harness writes.
    return _map_blocks(_decode_blocks(output), output), False


def _metadata_failed(text: str | Raw) -> bool:
    """A ``{"output": …, "metadata": {"exit_code": N}}`` document with N != 0."""
    if isinstance(text, str):
        if not text.lstrip(_SPACE).startswith("{"):
            return False
        data: bytes | Raw = text.encode()
    else:
        data = text
    try:
        meta = _decode_output_metadata(data).metadata
    except _DecodeErrors:
        return False
    return meta is not None and meta.exit_code is not None and meta.exit_code != 0


def _chunks_failed(decoded: str | list[_Block | None] | None) -> bool:
    """Output chunks of a custom tool: ``Script failed``, or a JSON chunk's exit code."""
    if not isinstance(decoded, list):
        return False
    for i, b in enumerate(decoded):
        if b is None or not b.text:
            continue
        text = b.text.strip(_SPACE)
        if i == 0 and text.startswith("Script failed"):
            return True
        if text.startswith("{"):
            try:
                code = _decode_exit_code(text.encode()).exit_code
            except _DecodeErrors:
                continue
            if code is not None:
                return code != 0
    return False
