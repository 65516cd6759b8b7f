"""Gemini CLI chat recordings: ``~/.gemini/tmp/<project>/chats/``.

Four shapes, told apart by the first line:

* **JSONL** (``session-<time>-<id>.jsonl``, Gemini CLI 0.39 and later; subagents in
  ``chats/<parent-id>/<id>.jsonl``): a metadata header ``{sessionId, projectHash,
  startTime, lastUpdated, kind, directories?}``, then *bare* message records
  ``{id, timestamp, type, content, …}`` appended whenever a message is recorded
  **or changed**: the recorder re-appends the whole message under the same ``id``
  when its token counts or tool calls arrive. Besides those, ``{"$set": {…}}``
  patches the conversation's metadata (``lastUpdated`` after every message,
  ``summary``, ``directories``, ``memoryScratchpad``), ``{"$set": {"messages":
  […]}}`` replaces the whole history (compression, rollback, output masking), and
  ``{"$rewindTo": id}`` drops a message and everything after it.
* **Legacy session JSON** (``session-*.json``, before 0.39): the same conversation
  as one document ``{sessionId, projectHash, …, messages: […]}``, rewritten on
  every turn. Buffered and converted at end of input.
* **Checkpoints**: ``checkpoint-<tag>.json`` from ``/chat save`` holds the model
  history as Gemini API contents (``[{role, parts}]``, or ``{history: […]}``);
  the restorable tool checkpoints in ``checkpoints/`` hold it as
  ``clientHistory`` next to the pending ``toolCall`` and its ``commitHash``.
* **``logs.json``**: the project's prompt log, ``[{sessionId, messageId, type:
  "user", message, timestamp}]`` across every session of the project.

Message types: ``user``; ``gemini`` (one model response: ``content``,
``thoughts`` summaries, ``toolCalls`` with their results, ``tokens``, ``model``);
``info``, ``warning`` and ``error`` (notices shown in the UI, never sent to the
model).

Mapping decisions:

* **Re-appended messages and ``$set``** — events are only ever appended, never
  retracted or re-emitted. A ``gemini`` message is *held* until a later record
  shows it is complete: any record for another message, a history rewrite, a
  rewind, or end of input. Its thinking, tool-call and tool-result events go out
  as soon as a version of the record shows them (each once, by tool-call id);
  the ``assistant_message`` with the final ``tokens`` goes out when it is
  released, with provenance spanning every line that carried it, as Claude
  Code's per-message fold does. A re-appended message that is no longer the
  held one adds only tool events not seen before, else it is a counted skip
  (``<type>/rewrite``). A ``$set`` of ``lastUpdated`` alone is a counted skip
  (``$set``); other metadata updates are ``system`` events ``metadata_update``
  (text: the summary, if set); a history replacement is a ``system`` event
  ``history_rewrite`` (text: how many messages were kept, added, removed),
  followed by events for the messages it adds (their user messages are
  ``harness``: compression summaries, tool-response turns); kept messages are
  not emitted again, and their content re-rendered as parts adds nothing.
  ``$rewindTo`` is a ``system`` event ``rewind`` (text: the message id); what
  it drops was already emitted and stays in the stream.
* **Tokens** — ``input`` is Gemini's ``promptTokenCount``, which *includes* the
  ``cached`` tokens, and ``output`` (``candidatesTokenCount``) *excludes* the
  ``thoughts`` tokens, which are billed as output. To match the other harnesses
  (fresh input apart from cache reads, reasoning inside output):
  ``input_tokens = input - cached + tool`` (``tool`` is the tool-use prompt,
  billed as input and counted apart by Gemini), ``cache_read_input_tokens =
  cached``, ``output_tokens = output + thoughts``. So ``input_tokens +
  cache_read_input_tokens + output_tokens`` equals Gemini's ``total``; ``thoughts``,
  ``tool`` and ``total`` stay verbatim in ``usage.extra`` (``thoughts`` is a part
  of ``output_tokens``, never to be added to it).
* **Tool calls** — each ``toolCalls`` entry is a ``tool_call`` (timestamp of the
  message) and, once it has a result or a final status, a ``tool_result``
  (timestamp of the tool call record; ``is_error`` for ``error`` and
  ``cancelled``; ``resultDisplay`` as enrichment). Newer releases also record
  the function responses sent back to the model as a ``user`` message; results
  already emitted from ``toolCalls`` are not repeated from it (a message of
  nothing else is a counted skip, ``user/functionResponse``), and a response
  whose call recorded no result becomes that call's ``tool_result``.
* The header becomes ``session_meta`` and a ``system`` event ``session`` whose
  details are the header verbatim (for a legacy document: its top-level fields
  other than the messages). ``logs.json`` is converted as one stream of ``human``
  user messages; a ``system`` event ``logs/session`` (text: the session id) opens
  each run of entries from one session. A tool checkpoint's pending call is a
  ``system`` event ``checkpoint/tool_call``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import ClassVar, Final

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
    UserMessage,
)
from agentminutes.timestamps import valid_timestamp

__all__ = ("GeminiCliAdapter",)

HARNESS: Final = "gemini-cli"


class _Record(msgspec.Struct, rename="camel"):
    """A JSONL line, a legacy document or one of its messages: the fields that steer parsing."""

    session_id: str | None = None
    project_hash: str | None = None
    start_time: str | None = None
    kind: str | None = None
    messages: Raw = NO_RAW
    id: str | None = None
    timestamp: str | None = None
    type: str | None = None
    content: Raw = NO_RAW
    parts: Raw = NO_RAW
    tool_calls: Raw = NO_RAW
    thoughts: Raw = NO_RAW
    tokens: Raw = NO_RAW
    model: str | None = None
    set: Raw = msgspec.field(default=NO_RAW, name="$set")
    rewind_to: str | None = msgspec.field(default=None, name="$rewindTo")


class _ToolCallRecord(msgspec.Struct, rename="camel"):
    id: str | None = None
    name: str | None = None
    args: Raw = NO_RAW
    result: Raw = NO_RAW
    status: str | None = None
    timestamp: str | None = None
    result_display: Raw = NO_RAW


class _Thought(msgspec.Struct):
    subject: str | None = None
    description: str | None = None
    timestamp: str | None = None


class _Part(msgspec.Struct, rename="camel"):
    text: str | None = None
    thought: bool | None = None
    thought_signature: str | None = None
    inline_data: Raw = NO_RAW
    file_data: Raw = NO_RAW
    function_call: Raw = NO_RAW
    function_response: Raw = NO_RAW


class _Blob(msgspec.Struct, rename="camel"):
    mime_type: str | None = None
    file_uri: str | None = None


class _FunctionCall(msgspec.Struct):
    id: str | None = None
    name: str | None = None
    args: Raw = NO_RAW


class _FunctionResponse(msgspec.Struct):
    id: str | None = None
    name: str | None = None
    response: Raw = NO_RAW


class _Response(msgspec.Struct):
    output: Raw = NO_RAW
    error: Raw = NO_RAW


class _Content(msgspec.Struct):
    role: str | None = None
    parts: Raw = NO_RAW


class _LogEntry(msgspec.Struct, rename="camel"):
    session_id: str | None = None
    message_id: int | str | None = None
    timestamp: str | None = None
    type: str | None = None
    message: str | None = None


class _ToolCheckpoint(msgspec.Struct, rename="camel"):
    client_history: Raw = NO_RAW
    history: Raw = NO_RAW
    tool_call: Raw = NO_RAW
    commit_hash: str | None = None
    message_id: str | None = None


class _Named(msgspec.Struct):
    name: str | None = None


_decode_record = msgspec.json.Decoder(_Record).decode
_decode_tool_calls = msgspec.json.Decoder(list[_ToolCallRecord] | None).decode
_decode_thoughts = msgspec.json.Decoder(list[_Thought] | None).decode
_decode_parts = msgspec.json.Decoder(str | list[Raw] | _Part | None).decode
_decode_part = msgspec.json.Decoder(_Part).decode
_decode_blob = msgspec.json.Decoder(_Blob).decode
_decode_function_call = msgspec.json.Decoder(_FunctionCall).decode
_decode_function_response = msgspec.json.Decoder(_FunctionResponse).decode
_decode_response = msgspec.json.Decoder(_Response | None).decode
_decode_str = msgspec.json.Decoder(str).decode
_decode_fields = msgspec.json.Decoder(dict[str, Raw] | None).decode
_decode_number = msgspec.json.Decoder(int | float | None).decode
_decode_list = msgspec.json.Decoder(list[Raw] | None).decode
_decode_top = msgspec.json.Decoder(list[Raw] | dict[str, Raw]).decode
_decode_content = msgspec.json.Decoder(_Content).decode
_decode_log_entry = msgspec.json.Decoder(_LogEntry).decode
_decode_tool_checkpoint = msgspec.json.Decoder(_ToolCheckpoint).decode
_decode_named = msgspec.json.Decoder(_Named).decode

_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)

#: Message types shown to the person and never sent to the model.
NOTICE_TYPES: Final = frozenset({"info", "warning", "error"})

#: Model-response message types: ``gemini``, and ``model`` in hand-made and converted files.
MODEL_TYPES: Final = frozenset({"gemini", "model"})

#: Tool-call statuses after which no result will follow.
FINAL_STATUSES: Final = frozenset({"success", "error", "cancelled"})

#: Native tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "read_file": ToolKind.READ,
    "read_many_files": ToolKind.READ,
    "read_mcp_resource": ToolKind.READ,
    "get_internal_docs": ToolKind.READ,
    "write_file": ToolKind.EDIT,
    "replace": ToolKind.EDIT,
    "edit": ToolKind.EDIT,
    "run_shell_command": ToolKind.EXECUTE,
    "glob": ToolKind.SEARCH,
    "grep_search": ToolKind.SEARCH,
    "search_file_content": ToolKind.SEARCH,
    "list_directory": ToolKind.SEARCH,
    "list_mcp_resources": ToolKind.SEARCH,
    "google_web_search": ToolKind.FETCH,
    "web_fetch": ToolKind.FETCH,
    "write_todos": ToolKind.THINK,
    "enter_plan_mode": ToolKind.SWITCH_MODE,
    "exit_plan_mode": ToolKind.SWITCH_MODE,
}

#: Keys of a ``$set`` that are bookkeeping only.
_BOOKKEEPING: Final = frozenset({"lastUpdated"})

_USAGE_KEYS: Final = ("input", "output", "cached", "thoughts", "tool")

_SPAN_TOKEN: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"(?:\s*:)?|[\[\]{}]', re.DOTALL)
_BYTE_POS: Final = re.compile(r"byte (\d+)")


class _Held:
    """A ``gemini`` message that a later record may still re-append."""

    def __init__(self, message_id: str, record: bytes, first: int) -> None:
        self.message_id = message_id
        self.record = record
        self.first = first
        self.last = first
        self.raw: list[bytes] = []
        self.thinking = 0


class _Src:
    """Where a record came from: its line range and its bytes."""

    __slots__ = ("first", "last", "raw")

    def __init__(self, first: int, last: int, raw: bytes) -> None:
        self.first = first
        self.last = last
        self.raw = raw


class _Rejected(Exception):
    """Carries the unknown event a rejected record became (permissive mode)."""

    def __init__(self, event: Event) -> None:
        self.event = event


class GeminiCliAdapter(BaseAdapter):
    """Parses Gemini CLI chat recordings (JSONL and legacy JSON), checkpoints and ``logs.json``."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "0.56.0"
    prompt_tokens: ClassVar[str] = "all"

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        #: ``"jsonl"`` or ``"document"`` once the first line has shown which.
        self.mode = ""
        self.meta_sent = False
        #: Lines of a whole-file document, kept until end of input.
        self.document: list[tuple[int, bytes]] = []
        self.held: _Held | None = None
        #: Every message id already turned into events.
        self.seen: set[str] = set()
        #: The conversation's message ids as the recorder now has them (for rewrites).
        self.current: list[str] = []
        self.tool_names: dict[str, str] = {}
        self.calls_sent: set[str] = set()
        self.results_sent: set[str] = set()

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        if head.startswith(b"\xef\xbb\xbf"):
            head = head[3:]
        head = head.lstrip()
        first = head.split(b"\n", 1)[0].strip()
        try:
            rec = _decode_record(first)
        except _DECODE_ERRORS:
            return _sniff_document(head)
        if rec.session_id and rec.project_hash:
            return Confidence.CERTAIN
        if rec.id and rec.type in NOTICE_TYPES | MODEL_TYPES | {"user"} and rec.timestamp:
            return Confidence.POSSIBLE
        if rec.set or rec.rewind_to:
            return Confidence.POSSIBLE
        if first.startswith(b"{"):
            return _sniff_document(head)
        return Confidence.NO_MATCH

    # -- parsing -----------------------------------------------------------

    @property
    def whole_document(self) -> bool:
        return self.mode == "document"

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        if self.mode == "document":
            self.document.append((lineno, line))
            return []
        try:
            rec = _decode_record(line)
        except msgspec.ValidationError as exc:
            if not self.mode:
                return self._start_document(line, lineno)
            return [self.unknown_or_fail("", line, lineno, f"invalid record: {exc}")]
        except msgspec.DecodeError as exc:
            if not self.mode:
                return self._start_document(line, lineno)
            return [self.unknown_or_fail("", line, lineno, f"invalid JSON: {exc}")]
        if not self.mode:
            if not (rec.session_id or rec.id or rec.set or rec.rewind_to):
                return self._start_document(line, lineno)
            self.mode = "jsonl"
        src = _Src(lineno, lineno, line)
        out: list[Event] = []
        try:
            self._record(rec, src, out)
        except _Rejected as r:
            out.append(r.event)
        return out

    def finish(self) -> list[Event]:
        out: list[Event] = []
        try:
            if self.mode == "document":
                self._document(out)
            self._release(out)
        except _Rejected as r:
            out.append(r.event)
        return out

    # -- JSONL records -----------------------------------------------------

    def _record(self, rec: _Record, src: _Src, out: list[Event]) -> None:
        if rec.id:
            self._message(rec, src, out)
        elif rec.set:
            self._set(rec, src, out)
        elif rec.rewind_to is not None:
            self._rewind(rec.rewind_to, src, out)
        elif rec.session_id:
            self._header(rec, src, out, details=Raw(src.raw))
        else:
            raise self._reject("", src, "record is neither metadata, a message nor an update")

    def _reject(self, record_type: str, src: _Src, reason: str) -> _Rejected:
        return _Rejected(self.unknown_or_fail(record_type, src.raw, src.first, reason))

    def _prov(self, src: _Src) -> Provenance:
        raw = [Raw(src.raw)] if self.options.keep_raw else None
        return Provenance(line=src.first, end_line=src.last, raw=raw)

    def _ensure_meta(self, src: _Src, out: list[Event], rec: _Record | None = None) -> None:
        if self.meta_sent:
            return
        self.meta_sent = True
        subagent = rec is not None and rec.kind == "subagent"
        session_id = (rec.session_id or "") if rec is not None else ""
        out.append(
            Event(
                kind=EventKind.SESSION_META,
                timestamp=valid_timestamp(rec.start_time) if rec is not None else "",
                provenance=self._prov(src),
                session_meta=Meta(
                    harness=HARNESS,
                    harness_version=self.options.harness_version,
                    session_id=session_id,
                    subagent_id=session_id if subagent else "",
                    is_subagent=subagent,
                ),
            )
        )

    def _header(self, rec: _Record, src: _Src, out: list[Event], details: Raw) -> None:
        self._ensure_meta(src, out, rec)
        out.append(
            Event(
                kind=EventKind.SYSTEM,
                timestamp=valid_timestamp(rec.start_time),
                id=rec.session_id or "",
                provenance=self._prov(src),
                system=SystemEvent(subtype="session", details=details),
            )
        )
        if rec.messages:
            self._messages(rec.messages, src, out)

    def _set(self, rec: _Record, src: _Src, out: list[Event]) -> None:
        try:
            fields = _decode_fields(rec.set) or {}
        except _DECODE_ERRORS as exc:
            raise self._reject("$set", src, f"malformed $set: {exc}") from None
        if "messages" in fields:
            self._history_rewrite(fields["messages"], src, out)
            return
        if set(fields) <= _BOOKKEEPING:
            self.skip("$set", src.first)
            return
        self._ensure_meta(src, out)
        text = ""
        summary = fields.get("summary")
        if summary is not None:
            try:
                text = _decode_str(summary)
            except _DECODE_ERRORS:
                text = ""
        out.append(
            Event(
                kind=EventKind.SYSTEM,
                provenance=self._prov(src),
                system=SystemEvent(subtype="metadata_update", text=text, details=Raw(src.raw)),
            )
        )

    def _history_rewrite(self, messages: Raw, src: _Src, out: list[Event]) -> None:
        self._release(out)
        self._ensure_meta(src, out)
        try:
            items = _decode_list(messages) or []
            recs = [_decode_record(item) for item in items]
        except _DECODE_ERRORS as exc:
            raise self._reject("$set", src, f"malformed history in $set: {exc}") from None
        ids = [r.id or "" for r in recs]
        new_set = set(ids)
        kept = sum(1 for i in ids if i in self.seen)
        removed = sum(1 for i in self.current if i not in new_set)
        text = f"{len(ids)} messages: {kept} kept, {len(ids) - kept} added, {removed} removed"
        out.append(
            Event(
                kind=EventKind.SYSTEM,
                provenance=self._prov(src),
                system=SystemEvent(subtype="history_rewrite", text=text, details=Raw(src.raw)),
            )
        )
        self.current = []
        for r, item in zip(recs, items, strict=True):
            self._message(r, _Src(src.first, src.last, bytes(item)), out, replayed=True)

    def _messages(self, messages: Raw, src: _Src, out: list[Event]) -> None:
        try:
            items = _decode_list(messages) or []
            recs = [_decode_record(item) for item in items]
        except _DECODE_ERRORS as exc:
            raise self._reject("", src, f"malformed messages: {exc}") from None
        for r, item in zip(recs, items, strict=True):
            self._message(r, _Src(src.first, src.last, bytes(item)), out)

    def _rewind(self, target: str, src: _Src, out: list[Event]) -> None:
        self._release(out)
        self._ensure_meta(src, out)
        if target in self.current:
            del self.current[self.current.index(target) :]
        else:
            self.current = []
        out.append(
            Event(
                kind=EventKind.SYSTEM,
                provenance=self._prov(src),
                system=SystemEvent(subtype="rewind", text=target, details=Raw(src.raw)),
            )
        )

    # -- messages ----------------------------------------------------------

    def _message(
        self, rec: _Record, src: _Src, out: list[Event], *, replayed: bool = False
    ) -> None:
        """One message record; *replayed* when it comes out of a history replacement."""
        message_id = rec.id or ""
        kind = rec.type or ""
        held = self.held
        if held is not None and held.message_id == message_id and message_id:
            self._update_held(held, rec, src, out)
            return
        self._release(out)
        self._ensure_meta(src, out)
        if message_id and message_id not in self.current:
            self.current.append(message_id)
        if message_id and message_id in self.seen:
            # An earlier message written again: only what it newly shows is an event.
            before = len(out)
            if kind in MODEL_TYPES:
                self._model_parts(rec, src, out, message_id, thinking_from=None)
            elif kind == "user":
                self._user(rec, src, out, results_only=True, replayed=True)
            if len(out) == before and not replayed:
                self.skip(f"{kind}/rewrite", src.first)
            return
        if message_id:
            self.seen.add(message_id)
        if kind in MODEL_TYPES:
            held = _Held(message_id, src.raw, src.first)
            held.last = src.last
            if self.options.keep_raw:
                held.raw.append(src.raw)
            held.thinking = self._model_parts(rec, src, out, message_id, thinking_from=0)
            self.held = held
        elif kind == "user":
            self._user(rec, src, out, replayed=replayed)
        elif kind in NOTICE_TYPES:
            out.append(self._notice(rec, src))
        else:
            reason = f'unrecognized message type "{kind}"' if kind else "message has no type"
            raise self._reject(kind, src, reason)

    def _update_held(self, held: _Held, rec: _Record, src: _Src, out: list[Event]) -> None:
        if (rec.type or "") not in MODEL_TYPES:
            raise self._reject(
                rec.type or "", src, f'message "{held.message_id}" changed its type to "{rec.type}"'
            )
        held.record = src.raw
        held.last = max(held.last, src.last)
        if self.options.keep_raw and src.raw not in held.raw:
            held.raw.append(src.raw)
        held.thinking = self._model_parts(rec, src, out, held.message_id, held.thinking)

    def _release(self, out: list[Event]) -> None:
        """Emit the held ``gemini`` message as it now stands."""
        held = self.held
        if held is None:
            return
        self.held = None
        src = _Src(held.first, held.last, held.record)
        raw = [Raw(r) for r in held.raw] if self.options.keep_raw else None
        out.append(self._assistant(_decode_record(held.record), src, held.message_id, raw))

    def _assistant(self, rec: _Record, src: _Src, message_id: str, raw: list[Raw] | None) -> Event:
        blocks, _, _ = self._parts(rec.content or rec.parts, src)
        return Event(
            kind=EventKind.ASSISTANT_MESSAGE,
            timestamp=valid_timestamp(rec.timestamp),
            id=message_id,
            message_id=message_id,
            provenance=Provenance(line=src.first, end_line=src.last, raw=raw),
            assistant_message=AssistantMessage(
                model=rec.model or "", content=blocks or None, usage=self._usage(rec.tokens, src)
            ),
        )

    def _model_parts(
        self, rec: _Record, src: _Src, out: list[Event], message_id: str, thinking_from: int | None
    ) -> int:
        """Thinking and tool events of one version of a model message; returns thoughts seen.

        *thinking_from* is how many thoughts were already emitted (``None``: the
        message was emitted before, and its content parts are a re-rendering of
        it, so only ``toolCalls`` entries not seen before count).
        """
        ts = valid_timestamp(rec.timestamp)
        try:
            thoughts = _decode_thoughts(rec.thoughts) if rec.thoughts else None
            calls = _decode_tool_calls(rec.tool_calls) if rec.tool_calls else None
        except _DECODE_ERRORS as exc:
            raise self._reject(rec.type or "", src, f"malformed message: {exc}") from None
        _, part_thoughts, part_calls = self._parts(rec.content or rec.parts, src)
        items: list[tuple[str, str, str]] = []
        if thoughts:
            for t in thoughts:
                text = "\n\n".join(x for x in (t.subject, t.description) if x)
                items.append((text, "", valid_timestamp(t.timestamp) or ts))
        else:
            items = [(text, sig, ts) for text, sig in part_thoughts]
        if thinking_from is not None:
            for text, sig, when in items[thinking_from:]:
                out.append(
                    Event(
                        kind=EventKind.THINKING,
                        timestamp=when,
                        id=message_id,
                        message_id=message_id,
                        provenance=self._prov(src),
                        thinking=Thinking(text=text, signature=sig),
                    )
                )
        recorded = {c.id for c in calls or () if c.id}
        for call in calls or ():
            self._tool_call(call.id or "", call.name or "", call.args, ts, message_id, src, out)
        for call_id, name, args in part_calls if thinking_from is not None else ():
            if call_id not in recorded:
                self._tool_call(call_id, name, args, ts, message_id, src, out)
        for call in calls or ():
            if call.result or call.status in FINAL_STATUSES:
                self._tool_record_result(call, ts, message_id, src, out)
        return max(len(items), thinking_from or 0)

    def _tool_call(
        self,
        call_id: str,
        name: str,
        args: Raw,
        ts: str,
        message_id: str,
        src: _Src,
        out: list[Event],
    ) -> None:
        if call_id:
            if call_id in self.calls_sent:
                return
            self.calls_sent.add(call_id)
            self.tool_names[call_id] = name
        out.append(
            Event(
                kind=EventKind.TOOL_CALL,
                timestamp=ts,
                id=message_id,
                message_id=message_id,
                provenance=self._prov(src),
                tool_call=ToolCall(
                    tool_call_id=call_id,
                    name=name,
                    kind=TOOL_KINDS.get(name, ToolKind.OTHER),
                    input=args,
                ),
            )
        )

    def _tool_record_result(
        self, call: _ToolCallRecord, ts: str, message_id: str, src: _Src, out: list[Event]
    ) -> None:
        call_id = call.id or ""
        if call_id and call_id in self.results_sent:
            return
        blocks: list[ContentBlock] = []
        failed = call.status in ("error", "cancelled")
        if call.result:
            try:
                value = _decode_parts(call.result)
            except _DECODE_ERRORS as exc:
                raise self._reject("gemini", src, f"malformed tool result: {exc}") from None
            if isinstance(value, str):
                blocks.append(ContentBlock(kind="text", text=value))
            else:
                for raw in _part_list(value, call.result):
                    part = self._part(raw, src)
                    if part.function_response:
                        got, error = self._response_blocks(part.function_response, src)
                        blocks.extend(got)
                        failed = failed or (error and call.status is None)
                    else:
                        blocks.extend(self._blocks(part, raw))
        if call_id:
            self.results_sent.add(call_id)
        display = call.result_display
        if display and bytes(display) in (b"null", b'""'):
            display = NO_RAW
        out.append(
            Event(
                kind=EventKind.TOOL_RESULT,
                timestamp=valid_timestamp(call.timestamp) or ts,
                id=message_id,
                message_id=message_id,
                provenance=self._prov(src),
                tool_result=ToolResult(
                    tool_call_id=call_id,
                    tool_name=call.name or self.tool_names.get(call_id, ""),
                    is_error=failed,
                    content=blocks or None,
                    enrichment=display,
                ),
            )
        )

    def _user(
        self,
        rec: _Record,
        src: _Src,
        out: list[Event],
        *,
        results_only: bool = False,
        replayed: bool = False,
    ) -> None:
        """A user message; *replayed* when it comes from a history replacement.

        A message first seen in a history replacement was added by the harness
        (a compression summary, a tool-response turn), not typed by a person.
        """
        ts = valid_timestamp(rec.timestamp)
        message_id = rec.id or ""
        content = rec.content or rec.parts
        value = self._decode_content(content, rec.type or "user", src)
        blocks: list[ContentBlock] = []
        responses = results = 0
        if isinstance(value, str):
            blocks.append(ContentBlock(kind="text", text=value))
        else:
            for raw in _part_list(value, content):
                part = self._part(raw, src)
                if part.function_response:
                    responses += 1
                    results += self._response_result(
                        part.function_response, ts, message_id, src, out
                    )
                else:
                    blocks.extend(self._blocks(part, raw))
        if results_only:
            return
        if not blocks and responses:
            # Function responses sent back to the model, already recorded with their calls.
            if not results and not replayed:
                self.skip("user/functionResponse", src.first)
            return
        out.append(
            Event(
                kind=EventKind.USER_MESSAGE,
                timestamp=ts,
                id=message_id,
                provenance=self._prov(src),
                user_message=UserMessage(
                    origin=Origin.HARNESS if responses or replayed else Origin.HUMAN,
                    content=blocks or None,
                ),
            )
        )

    def _response_result(
        self, raw: Raw, ts: str, message_id: str, src: _Src, out: list[Event]
    ) -> int:
        """A function response as a tool result, unless one was emitted for its call (0)."""
        try:
            fr = _decode_function_response(raw)
        except _DECODE_ERRORS as exc:
            raise self._reject("user", src, f"malformed function response: {exc}") from None
        call_id = fr.id or ""
        if call_id and call_id in self.results_sent:
            return 0
        if call_id:
            self.results_sent.add(call_id)
        blocks, error = self._response_blocks(raw, src)
        out.append(
            Event(
                kind=EventKind.TOOL_RESULT,
                timestamp=ts,
                id=message_id,
                provenance=self._prov(src),
                tool_result=ToolResult(
                    tool_call_id=call_id,
                    tool_name=fr.name or self.tool_names.get(call_id, ""),
                    is_error=error,
                    content=blocks or None,
                ),
            )
        )
        return 1

    def _response_blocks(self, raw: Raw, src: _Src) -> tuple[list[ContentBlock], bool]:
        """A function response's content, and whether it reports an error."""
        try:
            fr = _decode_function_response(raw)
            resp = _decode_response(fr.response) if fr.response else None
        except _DECODE_ERRORS as exc:
            raise self._reject("gemini", src, f"malformed function response: {exc}") from None
        if resp is None:
            return [], False
        blocks = []
        for value in (resp.output, resp.error):
            if not value:
                continue
            try:
                blocks.append(ContentBlock(kind="text", text=_decode_str(value)))
            except _DECODE_ERRORS:
                blocks.append(ContentBlock(kind="other", raw=value))
        if not blocks and fr.response and bytes(fr.response).strip() != b"{}":
            blocks.append(ContentBlock(kind="other", raw=fr.response))
        return blocks, bool(resp.error)

    def _notice(self, rec: _Record, src: _Src) -> Event:
        kind = rec.type or ""
        value = self._decode_content(rec.content, kind, src)
        if isinstance(value, str):
            text = value
        else:
            texts = []
            for raw in _part_list(value, rec.content):
                part = self._part(raw, src)
                if part.text:
                    texts.append(part.text)
            text = "\n".join(texts)
        return Event(
            kind=EventKind.SYSTEM,
            timestamp=valid_timestamp(rec.timestamp),
            id=rec.id or "",
            provenance=self._prov(src),
            system=SystemEvent(subtype=kind, level=kind, text=text, details=Raw(src.raw)),
        )

    # -- parts -------------------------------------------------------------

    def _decode_content(self, content: Raw, kind: str, src: _Src) -> str | list[Raw] | _Part | None:
        if not content:
            return None
        try:
            value: str | list[Raw] | _Part | None = _decode_parts(content)
        except _DECODE_ERRORS as exc:
            raise self._reject(kind, src, f"malformed {kind} content: {exc}") from None
        return value

    def _part(self, raw: Raw, src: _Src) -> _Part:
        try:
            return _decode_part(raw)
        except _DECODE_ERRORS as exc:
            raise self._reject("", src, f"malformed content part: {exc}") from None

    def _parts(
        self, content: Raw, src: _Src
    ) -> tuple[list[ContentBlock], list[tuple[str, str]], list[tuple[str, str, Raw]]]:
        """A model message's content: text blocks, thought parts, function-call parts."""
        value = self._decode_content(content, "gemini", src)
        if value is None:
            return [], [], []
        if isinstance(value, str):
            return ([ContentBlock(kind="text", text=value)] if value else []), [], []
        blocks: list[ContentBlock] = []
        thoughts: list[tuple[str, str]] = []
        calls: list[tuple[str, str, Raw]] = []
        for raw in _part_list(value, content):
            part = self._part(raw, src)
            if part.thought:
                thoughts.append((part.text or "", part.thought_signature or ""))
            elif part.function_call:
                try:
                    fc = _decode_function_call(part.function_call)
                except _DECODE_ERRORS as exc:
                    raise self._reject("gemini", src, f"malformed function call: {exc}") from None
                calls.append((fc.id or "", fc.name or "", fc.args))
            elif part.function_response:
                continue
            else:
                blocks.extend(self._blocks(part, raw))
        return blocks, thoughts, calls

    def _blocks(self, part: _Part, raw: Raw) -> list[ContentBlock]:
        if part.text is not None:
            return [ContentBlock(kind="text", text=part.text)] if part.text else []
        blob = part.inline_data or part.file_data
        if blob:
            try:
                b = _decode_blob(blob)
            except _DECODE_ERRORS:
                return [ContentBlock(kind="other", raw=raw)]
            mime = b.mime_type or ""
            if part.file_data:
                return [
                    ContentBlock(kind="resource", mime_type=mime, uri=b.file_uri or "", raw=raw)
                ]
            kind = "image" if mime.startswith("image/") else "document"
            return [ContentBlock(kind=kind, mime_type=mime, raw=raw)]
        return [ContentBlock(kind="other", raw=raw)]

    def _usage(self, raw: Raw, src: _Src) -> TokenUsage | None:
        if not raw:
            return None
        try:
            fields = _decode_fields(raw)
            if fields is None:
                return None
            counts = {k: int(_decode_number(fields[k]) or 0) for k in _USAGE_KEYS if k in fields}
        except _DECODE_ERRORS as exc:
            raise self._reject("gemini", src, f"malformed tokens: {exc}") from None
        for key in ("input", "output", "cached"):
            fields.pop(key, None)
        cached = counts.get("cached", 0)
        return TokenUsage(
            input_tokens=max(0, counts.get("input", 0) - cached) + counts.get("tool", 0),
            output_tokens=counts.get("output", 0) + counts.get("thoughts", 0),
            cache_read_input_tokens=cached,
            extra=fields or None,
        )

    # -- whole-file documents ---------------------------------------------

    def _start_document(self, line: bytes, lineno: int) -> list[Event]:
        self.mode = "document"
        self.document.append((lineno, line))
        return []

    def _document(self, out: list[Event]) -> None:
        doc = _Document(self.document)
        self.document = []
        first = doc.src(0, len(doc.buf))
        try:
            top = _decode_top(doc.buf)
        except _DECODE_ERRORS as exc:
            line = doc.line_at_error(str(exc))
            raise _Rejected(
                self.unknown_or_fail("", doc.buf, line, f"invalid JSON document: {exc}")
            ) from None
        if isinstance(top, dict):
            if "messages" in top or ("sessionId" in top and "projectHash" in top):
                self._legacy_session(top, doc, first, out)
            elif "clientHistory" in top or "toolCall" in top:
                self._tool_checkpoint(doc, first, out)
            elif "history" in top:
                self._contents(top["history"], doc, b"history", first, out)
            else:
                raise self._reject("", first, "unrecognized JSON document")
            return
        if not top:
            self._ensure_meta(first, out)
            return
        probe = bytes(top[0])
        if b'"messageId"' in probe and b'"message"' in probe:
            self._logs(top, doc, first, out)
        else:
            self._contents(None, doc, None, first, out, items=top)

    def _legacy_session(
        self, top: dict[str, Raw], doc: _Document, first: _Src, out: list[Event]
    ) -> None:
        rec = _decode_record(msgspec.json.encode({k: v for k, v in top.items() if k != "messages"}))
        header = {k: v for k, v in top.items() if k != "messages"}
        self._header(rec, first, out, details=Raw(msgspec.json.encode(header)))
        messages = top.get("messages")
        items = (_decode_list(messages) if messages else None) or []
        spans = doc.spans(b"messages", len(items))
        for item, span in zip(items, spans, strict=True):
            src = doc.src(*span) if span else first
            try:
                rec = _decode_record(item)
            except _DECODE_ERRORS as exc:
                raise self._reject("", src, f"malformed message: {exc}") from None
            self._message(rec, src, out)

    def _contents(
        self,
        raw: Raw | None,
        doc: _Document,
        key: bytes | None,
        first: _Src,
        out: list[Event],
        *,
        items: list[Raw] | None = None,
    ) -> None:
        """A list of Gemini API contents ``{role, parts}`` (a saved chat's history)."""
        self._ensure_meta(first, out)
        if items is None:
            try:
                items = (_decode_list(raw) if raw else None) or []
            except _DECODE_ERRORS as exc:
                raise self._reject("", first, f"malformed history: {exc}") from None
        spans = doc.spans(key, len(items))
        for item, span in zip(items, spans, strict=True):
            src = doc.src(*span) if span else first
            try:
                content = _decode_content(item)
            except _DECODE_ERRORS as exc:
                raise self._reject("", src, f"malformed content: {exc}") from None
            role = content.role or ""
            if role == "user":
                self._user(_Record(type="user", parts=content.parts), src, out)
            elif role == "model":
                rec = _Record(type="model", parts=content.parts)
                self._model_parts(rec, src, out, "", thinking_from=0)
                kept = [Raw(src.raw)] if self.options.keep_raw else None
                out.append(self._assistant(rec, src, "", kept))
            else:
                raise self._reject(role, src, f'unrecognized content role "{role}"')

    def _tool_checkpoint(self, doc: _Document, first: _Src, out: list[Event]) -> None:
        try:
            cp = _decode_tool_checkpoint(doc.buf)
            name = _decode_named(cp.tool_call).name if cp.tool_call else None
        except _DECODE_ERRORS as exc:
            raise self._reject("", first, f"malformed checkpoint: {exc}") from None
        self._contents(cp.client_history, doc, b"clientHistory", first, out)
        if cp.tool_call:
            out.append(
                Event(
                    kind=EventKind.SYSTEM,
                    id=cp.message_id or "",
                    provenance=self._prov(first),
                    system=SystemEvent(
                        subtype="checkpoint/tool_call",
                        text=name or "",
                        details=cp.tool_call,
                    ),
                )
            )

    def _logs(self, items: list[Raw], doc: _Document, first: _Src, out: list[Event]) -> None:
        spans = doc.spans(None, len(items))
        session = None
        for item, span in zip(items, spans, strict=True):
            src = doc.src(*span) if span else first
            try:
                entry = _decode_log_entry(item)
            except _DECODE_ERRORS as exc:
                raise self._reject("", src, f"malformed log entry: {exc}") from None
            if entry.type != "user":
                raise self._reject(
                    entry.type or "", src, f'unrecognized log entry type "{entry.type or ""}"'
                )
            if not self.meta_sent:
                self._ensure_meta(src, out, _Record(session_id=entry.session_id))
            ts = valid_timestamp(entry.timestamp)
            if entry.session_id != session:
                session = entry.session_id
                out.append(
                    Event(
                        kind=EventKind.SYSTEM,
                        timestamp=ts,
                        provenance=self._prov(src),
                        system=SystemEvent(subtype="logs/session", text=session or ""),
                    )
                )
            out.append(
                Event(
                    kind=EventKind.USER_MESSAGE,
                    timestamp=ts,
                    id="" if entry.message_id is None else str(entry.message_id),
                    provenance=self._prov(src),
                    user_message=UserMessage(
                        origin=Origin.HUMAN,
                        content=[ContentBlock(kind="text", text=entry.message or "")],
                    ),
                )
            )


def _part_list(value: str | list[Raw] | _Part | None, raw: Raw) -> list[Raw]:
    """Content parts as a list of raw parts (a single part object becomes a list of one)."""
    if value is None or isinstance(value, str):
        return []
    if isinstance(value, list):
        return value
    return [raw]


class _Document:
    """A buffered whole-file JSON document and where its parts sit."""

    def __init__(self, lines: list[tuple[int, bytes]]) -> None:
        self.linenos = [n for n, _ in lines]
        self.starts: list[int] = []
        pos = 0
        for _, text in lines:
            self.starts.append(pos)
            pos += len(text) + 1
        self.buf = b"\n".join(text for _, text in lines)

    def line(self, offset: int) -> int:
        if not self.linenos:
            return 1
        return self.linenos[max(0, bisect_right(self.starts, offset) - 1)]

    def src(self, start: int, end: int) -> _Src:
        return _Src(self.line(start), self.line(max(start, end - 1)), self.buf[start:end])

    def line_at_error(self, message: str) -> int:
        m = _BYTE_POS.search(message)
        return self.line(int(m.group(1))) if m else (self.linenos[-1] if self.linenos else 1)

    def spans(self, key: bytes | None, count: int) -> list[tuple[int, int] | None]:
        """Byte spans of the elements of the array at top-level *key* (``None``: the document)."""
        found = _element_spans(self.buf, key)
        if len(found) != count:
            return [None] * count
        return list(found)


def _element_spans(buf: bytes, key: bytes | None) -> list[tuple[int, int]]:
    """Spans of the object elements of one array, found by a structural scan of *buf*."""
    depth = 0
    target = -1
    last_key = b""
    start = 0
    spans: list[tuple[int, int]] = []
    want = None if key is None else b'"' + key + b'"'
    for m in _SPAN_TOKEN.finditer(buf):
        tok = m.group()
        c = tok[0]
        if c == 0x22:  # a string: remember keys of the top-level object
            if depth == 1 and tok.endswith(b":"):
                last_key = tok[:-1].rstrip()
            continue
        if c in (0x5B, 0x7B):  # [ {
            if target < 0:
                if c == 0x5B and (
                    (want is None and depth == 0) or (depth == 1 and last_key == want)
                ):
                    target = depth + 1
            elif depth == target:
                start = m.start()
            depth += 1
        else:
            depth -= 1
            if target >= 0:
                if depth == target:
                    spans.append((start, m.end()))
                elif depth < target:
                    break
    return spans


def _sniff_document(head: bytes) -> Confidence:
    """Grade a head that is not one JSON record per line: a whole-file document."""
    if head.startswith(b"{"):
        if b'"sessionId"' in head and b'"projectHash"' in head:
            return Confidence.CERTAIN
        if b'"clientHistory"' in head and b'"toolCall"' in head:
            return Confidence.CERTAIN
        # A saved chat ({history: contents}) or a tool checkpoint whose UI history
        # fills the head ({history: [{type, text, id}], clientHistory, toolCall}).
        if re.match(rb'\{\s*"history"\s*:\s*\[\s*(?:\]|\{\s*"(?:role|type)")', head):
            return Confidence.POSSIBLE
        return Confidence.NO_MATCH
    if head.startswith(b"["):
        if re.match(rb'\[\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"messageId"\s*:\s*\d', head):
            return Confidence.CERTAIN
        if re.match(rb'\[\s*\{\s*"role"\s*:\s*"(?:user|model)"\s*,\s*"parts"\s*:', head):
            return Confidence.POSSIBLE
    return Confidence.NO_MATCH
