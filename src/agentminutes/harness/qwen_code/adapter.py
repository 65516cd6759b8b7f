"""Qwen Code chat recordings: ``~/.qwen/projects/<sanitized-cwd>/chats/<session>.jsonl``.

Qwen Code forked Gemini CLI's recorder and made it append-only: one JSON
record per line, each written once and never re-appended. Every record
carries ``uuid``, ``parentUuid`` (the records form a tree; a rewind re-roots
the chain, leaving the rewound records on a dead branch), ``sessionId``,
``timestamp``, ``type``, ``cwd``, ``version`` and ``gitBranch``. By ``type``:

* ``user`` — ``message`` is a Gemini API content ``{role: "user", parts}``:
  ``text``, ``inlineData`` / ``fileData`` (attachments);
* ``assistant`` — one model response, ``{role: "model", parts}``: ``text``,
  ``thought: true`` parts (reasoning), ``functionCall`` parts; ``model`` and
  ``usageMetadata`` (Gemini's counters) beside it;
* ``tool_result`` — the function responses sent back to the model
  (``functionResponse`` parts) with ``toolCallResult`` (``callId``, ``status``,
  ``resultDisplay`` as the UI showed it, ``error``, ``errorType``);
* ``system`` — harness activity told apart by ``subtype``: ``ui_telemetry``
  (``systemPayload.uiEvent``: API responses, tool calls and API errors as the
  telemetry saw them), ``slash_command`` (invocation and result),
  ``chat_compression``, ``at_command``, ``custom_title``, ``rewind``,
  ``parent_session`` and many more in later releases.

Older releases wrote Gemini CLI's shapes under ``~/.qwen/tmp/<hash>/``: whole
``chats/session-*.json`` documents, ``logs.json`` (the prompts only) and
``checkpoint-*.json``. Those are read by the Gemini CLI adapter's rules (this
adapter hands them to it and labels the result ``qwen-code``); their content
is the same as Gemini CLI's, so detection alone names them ``gemini-cli``
(``--harness qwen-code`` labels them).

Mapping decisions:

* The first record's fields become ``session_meta`` (session id, cwd, version,
  git branch), emitted before that record's events. A ``parent_session`` record
  (a sub-session spawned by another) is a ``system`` event whose text is the
  parent's id; records a background subagent wrote (``isSidechain``) carry its
  ``agentId`` in ``agent_id``.
* ``user`` → ``user_message`` (``human``). ``assistant`` → its thinking and
  ``tool_call`` events, then one ``assistant_message`` (model, text, usage); all
  share ``message_id`` = the record's uuid. ``tool_result`` → one
  ``tool_result`` per function response (``is_error`` for an ``error`` or
  ``cancelled`` status, or a response that holds an ``error``), the
  ``toolCallResult`` verbatim as its enrichment.
* ``system`` → a ``system`` event of the record's subtype, ``details`` the
  ``systemPayload`` verbatim; its text is what the payload is about (the
  telemetry event name, the slash command, the title, the parent session). A
  system record that carries a ``message`` (a notification or a message typed
  mid-turn, sent to the model) also becomes a ``user_message``: ``human`` for
  ``mid_turn_user_message``, ``harness`` otherwise.
* **Tokens** follow the Gemini CLI rule: ``promptTokenCount`` *includes* the
  ``cachedContentTokenCount``, so ``input_tokens = prompt - cached`` (plus a
  ``toolUsePromptTokenCount``), ``cache_read_input_tokens = cached``;
  ``output_tokens`` is ``candidatesTokenCount`` plus ``thoughtsTokenCount``
  unless the record's ``totalTokenCount`` shows the thoughts already inside the
  candidates (OpenAI-compatible providers report reasoning within the
  completion). The counters not mapped stay verbatim in ``usage.extra``.
"""

from __future__ import annotations

import re
from typing import ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._export import as_str, decode_object
from agentminutes.harness._gemini_wire import (
    FunctionResponse,
    Part,
    decode_function_call,
    decode_function_response,
    decode_part,
    decode_response,
    part_blocks,
)
from agentminutes.harness._qwen_records import RECORD_TYPES, is_qwen_record
from agentminutes.harness._qwen_records import Record as _Record
from agentminutes.harness._qwen_records import decode_record as _decode_record
from agentminutes.harness.base import (
    BOM,
    SNIFF_BYTES,
    SNIFF_RECORDS,
    BaseAdapter,
    Confidence,
    ParseOptions,
    SkipHook,
    tool_call,
)
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

__all__ = ("TOOL_KINDS", "QwenCodeAdapter")

HARNESS: Final = "qwen-code"

#: Native tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "read_file": ToolKind.READ,
    "read_many_files": ToolKind.READ,
    "write_file": ToolKind.EDIT,
    "edit": ToolKind.EDIT,
    "replace": ToolKind.EDIT,
    "run_shell_command": ToolKind.EXECUTE,
    "glob": ToolKind.SEARCH,
    "grep_search": ToolKind.SEARCH,
    "search_file_content": ToolKind.SEARCH,
    "list_directory": ToolKind.SEARCH,
    "web_fetch": ToolKind.FETCH,
    "web_search": ToolKind.FETCH,
    "google_web_search": ToolKind.FETCH,
    "todo_write": ToolKind.THINK,
    "save_memory": ToolKind.EDIT,
    "exit_plan_mode": ToolKind.SWITCH_MODE,
}

#: Tool statuses that mean the call did not succeed.
_FAILED: Final = frozenset({"error", "cancelled"})

#: What a system record's text is taken from, by subtype: a key of ``systemPayload``.
_SYSTEM_TEXT: Final[dict[str, str]] = {
    "slash_command": "rawCommand",
    "custom_title": "customTitle",
    "parent_session": "parentSessionId",
    "at_command": "userText",
    "notification": "displayText",
    "session_model": "modelId",
}


class _ToolCallResult(msgspec.Struct, rename="camel"):
    call_id: str | None = None
    status: str | None = None
    error: Raw = NO_RAW


class _Usage(msgspec.Struct, rename="camel"):
    prompt_token_count: int = 0
    candidates_token_count: int = 0
    thoughts_token_count: int = 0
    cached_content_token_count: int = 0
    tool_use_prompt_token_count: int = 0
    total_token_count: int = 0


_decode_parts = msgspec.json.Decoder(list[Raw] | None).decode
_decode_tool_call_result = msgspec.json.Decoder(_ToolCallResult | None).decode
_decode_usage = msgspec.json.Decoder(_Usage | None).decode
_decode_fields = msgspec.json.Decoder(dict[str, Raw] | None).decode

_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)

#: ``usageMetadata`` keys mapped onto the usage fields (the rest go to ``extra``).
_MAPPED_USAGE: Final = frozenset(
    {"promptTokenCount", "candidatesTokenCount", "cachedContentTokenCount"}
)


class _Rejected(Exception):
    def __init__(self, event: Event) -> None:
        self.event = event


class QwenCodeAdapter(BaseAdapter):
    """Parses Qwen Code JSONL chat recordings (and its older Gemini-shaped documents)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "0.24.4"

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        #: ``"jsonl"``, or ``"gemini"`` for the older documents read by Gemini CLI's rules.
        self.mode = ""
        self.meta_sent = False
        #: The Gemini CLI adapter reading an older document, once one is seen.
        self.legacy: BaseAdapter | None = None
        #: Lines no record could be read from while the mode is undecided: the
        #: top of an older document, or lines before the first JSONL record.
        self.undecided: list[tuple[bytes, int]] = []
        self.undecided_bytes = 0

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        if head.startswith(BOM):
            head = head[3:]
        head = head.strip()
        if head == b"[]" or re.match(
            rb'\[\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"messageId"\s*:\s*\d', head
        ):
            # A prompt log (logs.json): Qwen Code and Gemini CLI both write one; only its
            # folder tells them apart (detection's path hint).
            return Confidence.POSSIBLE
        first = head.split(b"\n", 1)[0].strip()
        return Confidence.CERTAIN if is_qwen_record(first) else Confidence.NO_MATCH

    @property
    def whole_document(self) -> bool:
        return self.legacy is not None and self.legacy.whole_document

    # -- parsing -----------------------------------------------------------

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        if self.mode == "gemini":
            assert self.legacy is not None
            return self._relabel(self.legacy.feed(line, lineno))
        try:
            rec = _decode_record(line)
        except _DECODE_ERRORS as exc:
            if not self.mode:
                return self._undecided(line, lineno)
            event = self.undecodable(exc, line, lineno)
            return [event] if self.meta_sent else self.hold(event)
        if not self.mode:
            if not (rec.uuid and rec.session_id and rec.type):
                return self._undecided(line, lineno)
            self._start_jsonl()
        out: list[Event] = []
        try:
            self._record(rec, line, lineno, out)
        except _Rejected as r:
            if self.meta_sent:
                out.append(r.event)
            else:
                self.hold(r.event)
        return out

    def finish(self) -> list[Event]:
        if not self.mode and self.undecided:
            events = self._start_legacy()
        elif self.legacy is None:
            return self.release()
        else:
            events = []
        assert self.legacy is not None
        events += self._relabel(self.legacy.finish())
        self.version = self.version or self.legacy.version
        return events

    def snapshot(self) -> bytes:
        # The inner adapter's skip hook is configuration, not state (and may not pickle).
        if self.legacy is None:
            return super().snapshot()
        hook, self.legacy.on_skip = self.legacy.on_skip, None
        try:
            return super().snapshot()
        finally:
            self.legacy.on_skip = hook

    def restore(self, state: bytes) -> None:
        super().restore(state)
        if self.legacy is not None:
            self.legacy.on_skip = self.on_skip
            self.legacy.options = self.options

    def _undecided(self, line: bytes, lineno: int) -> list[Event]:
        """A line that is no JSONL record before any was: which mode it is waits for more.

        An older document's lines are no records (its first line is ``{`` or
        the whole document); nor is a comment or a cut record above JSONL
        records. The first record decides for JSONL (the lines before it are
        then fed as JSONL: unknowns, or the error for the first); past the
        detection window without one, or at the end, it is a document.
        """
        self.undecided.append((line, lineno))
        self.undecided_bytes += len(line)
        if len(self.undecided) < SNIFF_RECORDS and self.undecided_bytes < SNIFF_BYTES:
            return []
        return self._start_legacy()

    def _start_jsonl(self) -> None:
        self.mode = "jsonl"
        held, self.undecided, self.undecided_bytes = self.undecided, [], 0
        for line, lineno in held:
            # Each is an unknown (held until session_meta is out) or, strictly, the error.
            self.early += self.feed(line, lineno)

    def _start_legacy(self) -> list[Event]:
        from agentminutes.harness.gemini_cli import GeminiCliAdapter

        self.mode = "gemini"
        self.legacy = GeminiCliAdapter(self.options, on_skip=self.on_skip)
        # One skip table for both: the report reads this adapter's.
        self.legacy.skipped = self.skipped
        held, self.undecided, self.undecided_bytes = self.undecided, [], 0
        out: list[Event] = []
        for line, lineno in held:
            out += self.legacy.feed(line, lineno)
        return self._relabel(out)

    def _relabel(self, events: list[Event]) -> list[Event]:
        for ev in events:
            if ev.session_meta is not None:
                ev.session_meta.harness = HARNESS
        return events

    def _reject(self, kind: str, line: bytes, lineno: int, reason: str) -> _Rejected:
        return _Rejected(self.unknown_or_fail(kind, line, lineno, reason))

    def _record(self, rec: _Record, line: bytes, lineno: int, out: list[Event]) -> None:
        kind = rec.type or ""
        if kind not in RECORD_TYPES:
            raise self._reject(kind, line, lineno, f'unrecognized record type "{kind}"')
        if rec.version and not self.version:
            self.version = rec.version
        if not self.meta_sent:
            self.meta_sent = True
            meta = self.session_meta(
                self.prov(line, lineno),
                timestamp=valid_timestamp(rec.timestamp),
                harness_version=self.effective_version,
                session_id=rec.session_id or "",
                cwd=rec.cwd or "",
                git_branch=rec.git_branch or "",
            )
            out.extend(self.opening(meta))
        start = len(out)
        if kind == "user":
            self._user(rec, line, lineno, out, Origin.HUMAN)
        elif kind == "assistant":
            self._assistant(rec, line, lineno, out)
        elif kind == "tool_result":
            self._tool_result(rec, line, lineno, out)
        else:
            self._system(rec, line, lineno, out)
        agent = rec.agent_id if rec.is_sidechain or rec.agent_id else ""
        for ev in out[start:]:
            ev.parent_id = rec.parent_uuid or ""
            if agent:
                ev.agent_id = agent

    def _event(self, kind: str, rec: _Record, line: bytes, lineno: int, **payload: object) -> Event:
        return Event(
            kind=kind,
            timestamp=valid_timestamp(rec.timestamp),
            id=rec.uuid or "",
            provenance=self.prov(line, lineno),
            **payload,  # type: ignore[arg-type]
        )

    def _parts(self, rec: _Record, line: bytes, lineno: int) -> list[tuple[Part, Raw]]:
        if rec.message is None or not rec.message.parts:
            return []
        try:
            raws = _decode_parts(rec.message.parts) or []
            return [(decode_part(raw), raw) for raw in raws]
        except _DECODE_ERRORS as exc:
            raise self._reject(
                rec.type or "", line, lineno, f"malformed message parts: {exc}"
            ) from None

    def _user(self, rec: _Record, line: bytes, lineno: int, out: list[Event], origin: str) -> None:
        blocks: list[ContentBlock] = []
        for part, raw in self._parts(rec, line, lineno):
            blocks.extend(_blocks(part, raw))
        out.append(
            self._event(
                EventKind.USER_MESSAGE,
                rec,
                line,
                lineno,
                user_message=UserMessage(origin=origin, content=blocks or None),
            )
        )

    def _assistant(self, rec: _Record, line: bytes, lineno: int, out: list[Event]) -> None:
        message_id = rec.uuid or ""
        blocks: list[ContentBlock] = []
        for part, raw in self._parts(rec, line, lineno):
            if part.thought:
                ev = self._event(
                    EventKind.THINKING,
                    rec,
                    line,
                    lineno,
                    thinking=Thinking(text=part.text or "", signature=part.thought_signature or ""),
                )
                ev.message_id = message_id
                out.append(ev)
            elif part.function_call:
                try:
                    call = decode_function_call(part.function_call)
                except _DECODE_ERRORS as exc:
                    raise self._reject(
                        "assistant", line, lineno, f"malformed function call: {exc}"
                    ) from None
                name = call.name or ""
                call_id = call.id or ""
                self.name_call(call_id, name)
                ev = self._event(
                    EventKind.TOOL_CALL,
                    rec,
                    line,
                    lineno,
                    tool_call=tool_call(call_id, name, call.args or NO_RAW, TOOL_KINDS),
                )
                ev.message_id = message_id
                out.append(ev)
            else:
                blocks.extend(_blocks(part, raw))
        ev = self._event(
            EventKind.ASSISTANT_MESSAGE,
            rec,
            line,
            lineno,
            assistant_message=AssistantMessage(
                model=rec.model or "",
                content=blocks or None,
                usage=self._usage(rec, line, lineno),
            ),
        )
        ev.message_id = message_id
        out.append(ev)

    def _usage(self, rec: _Record, line: bytes, lineno: int) -> TokenUsage | None:
        if not rec.usage_metadata:
            return None
        try:
            fields = _decode_fields(rec.usage_metadata)
            if fields and b"null" in bytes(rec.usage_metadata):
                # A null counter counts nothing (Go leaves the field at zero).
                usage = _decode_usage(
                    msgspec.json.encode({k: v for k, v in fields.items() if bytes(v) != b"null"})
                )
            else:
                usage = _decode_usage(rec.usage_metadata)
        except _DECODE_ERRORS as exc:
            raise self._reject(
                "assistant", line, lineno, f"malformed usageMetadata: {exc}"
            ) from None
        if usage is None or fields is None:
            return None
        cached = usage.cached_content_token_count
        output = usage.candidates_token_count
        thoughts = usage.thoughts_token_count
        inside = (
            thoughts
            and usage.total_token_count
            and usage.total_token_count
            == usage.prompt_token_count + output + usage.tool_use_prompt_token_count
        )
        if not inside:
            output += thoughts
        extra = {k: v for k, v in fields.items() if k not in _MAPPED_USAGE}
        return TokenUsage(
            input_tokens=max(0, usage.prompt_token_count - cached)
            + usage.tool_use_prompt_token_count,
            output_tokens=output,
            cache_read_input_tokens=cached,
            extra=extra or None,
        )

    def _tool_result(self, rec: _Record, line: bytes, lineno: int, out: list[Event]) -> None:
        try:
            result = (
                _decode_tool_call_result(rec.tool_call_result) if rec.tool_call_result else None
            )
        except _DECODE_ERRORS as exc:
            raise self._reject(
                "tool_result", line, lineno, f"malformed toolCallResult: {exc}"
            ) from None
        status = (result.status if result is not None else None) or ""
        responses: list[FunctionResponse] = []
        blocks: list[ContentBlock] = []
        for part, raw in self._parts(rec, line, lineno):
            if part.function_response:
                try:
                    responses.append(decode_function_response(part.function_response))
                except _DECODE_ERRORS as exc:
                    raise self._reject(
                        "tool_result", line, lineno, f"malformed function response: {exc}"
                    ) from None
            else:
                blocks.extend(_blocks(part, raw))
        if not responses:
            call_id = (result.call_id if result is not None else None) or ""
            responses.append(FunctionResponse(id=call_id))
        for i, resp in enumerate(responses):
            call_id = resp.id or (result.call_id if result is not None else None) or ""
            content, errored = _response_blocks(resp.response)
            if i == len(responses) - 1:
                content.extend(blocks)  # media parts follow the responses they belong to
            ev = self._event(
                EventKind.TOOL_RESULT,
                rec,
                line,
                lineno,
                tool_result=self.tool_result(
                    call_id,
                    content,
                    is_error=errored or status in _FAILED,
                    name=resp.name or "",
                    enrichment=rec.tool_call_result,
                ),
            )
            out.append(ev)

    def _system(self, rec: _Record, line: bytes, lineno: int, out: list[Event]) -> None:
        subtype = rec.subtype or ""
        payload = decode_object(rec.system_payload)
        if subtype == "ui_telemetry":
            text = as_str(decode_object(payload.get("uiEvent")).get("event.name"))
        else:
            key = _SYSTEM_TEXT.get(subtype)
            text = as_str(payload.get(key)) if key else ""
        out.append(
            self._event(
                EventKind.SYSTEM,
                rec,
                line,
                lineno,
                system=SystemEvent(subtype=subtype, text=text, details=rec.system_payload),
            )
        )
        if rec.message is not None and rec.message.parts:
            origin = Origin.HUMAN if subtype == "mid_turn_user_message" else Origin.HARNESS
            self._user(rec, line, lineno, out, origin)


def _blocks(part: Part, raw: Raw) -> list[ContentBlock]:
    """A content part as blocks; a function call or response among content gives none."""
    if part.function_call or part.function_response:
        return []
    return part_blocks(part, raw)


def _response_blocks(raw: Raw) -> tuple[list[ContentBlock], bool]:
    """A function response's ``{output}`` or ``{error}`` as content, and whether it failed."""
    if not raw:
        return [], False
    try:
        body = decode_response(raw)
    except _DECODE_ERRORS:
        return [ContentBlock(kind="other", raw=raw)], False
    if body is None:
        return [], False
    blocks: list[ContentBlock] = []
    for value in (body.output, body.error):
        if not value:
            continue
        text = as_str(value)
        if text or bytes(value) == b'""':
            if text:
                blocks.append(ContentBlock(kind="text", text=text))
        else:
            blocks.append(ContentBlock(kind="other", raw=value))
    if not blocks and bytes(raw).strip() != b"{}":
        blocks.append(ContentBlock(kind="other", raw=raw))
    return blocks, bool(body.error)
