"""OpenHands CLI conversations: ``~/.openhands/conversations/<id>/`` (a folder per session).

The OpenHands SDK persists a conversation as a folder:

* ``events/event-<NNNNN>-<event id>.json``: one JSON document per event, written
  once, numbered in order. Each has ``id``, ``timestamp`` (local time, no zone),
  ``source`` (``user``, ``agent``, ``environment``) and ``kind``:
  ``SystemPromptEvent`` (the system prompt and tool definitions),
  ``MessageEvent`` (``llm_message``: a user's or the agent's message),
  ``ActionEvent`` (one tool call: ``thought``, ``reasoning_content``,
  ``tool_call``, the model response's ``llm_response_id``),
  ``ObservationEvent`` (a tool's result, ``observation.is_error``),
  ``AgentErrorEvent`` and ``UserRejectObservation`` (a call that failed
  before running, or was rejected), and bookkeeping (condensation, state
  updates, pauses, hooks, errors, logs);
* ``base_state.json``: the conversation's state, rewritten as it goes; its
  ``stats.usage_to_metrics`` keeps, per LLM use (``agent``, ``condenser``),
  one ``token_usages`` entry per model response, keyed by ``response_id``.

Records, for accounting, are the event files in order (1 …), then
``base_state.json``.

Mapping decisions:

* The tool calls of one model response are separate ``ActionEvent`` files
  sharing ``llm_response_id``: the first of them also carries the response's
  text (``thought``) and thinking, and becomes the response's
  ``assistant_message``; all share ``message_id`` = the response id. An agent
  ``MessageEvent`` (a reply with no tool call) is an ``assistant_message`` too.
* The usage of a response (``prompt_tokens`` counts the cached tokens;
  ``reasoning_tokens`` is part of ``completion_tokens``) is put on its
  assistant message; a response no event names (a condenser's summary) becomes
  an ``assistant_message`` of its own, with no content, at the end.
* ``AgentErrorEvent`` and ``UserRejectObservation`` are error results of their
  call. The system prompt is a ``system`` event ``system_prompt``; the state file
  a ``system`` event ``base_state`` (its id as text), after the events.
* Event times are written as local times with no zone (the SDK's
  ``datetime.now().isoformat()``). The CLI writes where it runs, so they are
  read in the reading machine's zone and given in UTC: right where the reader
  is the writer, off by the zones' difference where a conversation was copied
  from a machine in another zone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import (
    BaseDocumentAdapter,
    Confidence,
    ConversationInfo,
    DocumentSession,
    document_path,
    json_or_string,
    listed_title,
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
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)
from agentminutes.timestamps import valid_timestamp


def _local_time(value: str | None) -> str:
    """An RFC 3339 time as written, or a zone-less local time read in this machine's zone, in UTC."""
    if not value:
        return ""
    valid = valid_timestamp(value)
    if valid:
        return valid
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return ""
    if moment.tzinfo is None:
        moment = moment.astimezone()  # a naive time is the local time of the writer
    return valid_timestamp(moment.astimezone(UTC).isoformat().replace("+00:00", "Z"))


if TYPE_CHECKING:
    from agentminutes.harness.base import Document

__all__ = ("HARNESS", "TOOL_KINDS", "OpenHandsAdapter")

HARNESS: Final = "openhands"
STATE: Final = "base_state.json"
EVENTS: Final = "events"

_EVENT_FILE = re.compile(r"^event-(\d+)-[^/]*\.json$")
_EVENT_HEAD = re.compile(
    rb'^\{"id":"[^"]*","timestamp":"[^"]*","source":"(?:agent|user|environment|hook)"'
)
_STATE_HEAD = re.compile(rb'^\{"id":"[0-9a-f-]{36}","agent":\{')

#: The SDK's tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "terminal": ToolKind.EXECUTE,
    "file_editor": ToolKind.EDIT,
    "planning_file_editor": ToolKind.EDIT,
    "apply_patch": ToolKind.EDIT,
    "glob": ToolKind.SEARCH,
    "grep": ToolKind.SEARCH,
    "think": ToolKind.THINK,
    "task_tracker": ToolKind.THINK,
    "browser_use": ToolKind.FETCH,
}

#: Event kinds that are bookkeeping: ``system`` events of their kind.
_SYSTEM_KINDS: Final = frozenset(
    {
        "Condensation",
        "CondensationRequest",
        "CondensationSummaryEvent",
        "ConversationStateUpdateEvent",
        "ConversationErrorEvent",
        "PauseEvent",
        "HookExecutionEvent",
        "LLMCompletionLogEvent",
        "TokenEvent",
        "StreamingDeltaEvent",
        "ACPToolCallEvent",
    }
)

#: Every event kind this adapter knows.
EVENT_KINDS: Final = frozenset(
    {
        "SystemPromptEvent",
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "AgentErrorEvent",
        "UserRejectObservation",
        *_SYSTEM_KINDS,
    }
)


class _ToolCallField(msgspec.Struct):
    id: str | None = None
    name: str | None = None
    arguments: str | None = None


class _LLMMessage(msgspec.Struct):
    role: str | None = None
    content: Raw = NO_RAW
    reasoning_content: str | None = None


class _Observation(msgspec.Struct):
    content: Raw = NO_RAW
    is_error: bool = False


class _Event(msgspec.Struct):
    kind: str | None = None
    id: str | None = None
    timestamp: str | None = None
    source: str | None = None
    system_prompt: Raw = NO_RAW
    llm_message: _LLMMessage | None = None
    llm_response_id: str | None = None
    thought: Raw = NO_RAW
    reasoning_content: str | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    tool_call: _ToolCallField | None = None
    observation: _Observation | None = None
    error: str | None = None
    rejection_reason: str | None = None


class _Text(msgspec.Struct):
    type: str | None = None
    text: str | None = None


class _Usage(msgspec.Struct):
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int | None = None
    response_id: str = ""


class _Metrics(msgspec.Struct):
    model_name: str = ""
    token_usages: list[_Usage] = msgspec.field(default_factory=list)


class _Stats(msgspec.Struct):
    usage_to_metrics: dict[str, _Metrics] = msgspec.field(default_factory=dict)


class _State(msgspec.Struct):
    id: str | None = None
    stats: _Stats | None = None
    workspace: dict[str, Any] | None = None


_decode_event = msgspec.json.Decoder(_Event).decode
_decode_state = msgspec.json.Decoder(_State).decode
_decode_texts = msgspec.json.Decoder(list[_Text] | str | None).decode
_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)


def _blocks(raw: Raw) -> list[ContentBlock]:
    """Text content (a list of ``{"type": "text"}`` items, or a string) as content blocks."""
    if not raw:
        return []
    value = _decode_texts(raw)
    if value is None:
        return []
    if isinstance(value, str):
        return [ContentBlock(kind="text", text=value)] if value else []
    return [
        ContentBlock(kind="text", text=t.text or "")
        if t.type == "text"
        else ContentBlock(kind=t.type or "other")
        for t in value
    ]


class OpenHandsAdapter(BaseDocumentAdapter):
    """Parses an OpenHands CLI conversation folder (events and ``base_state.json``)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "1.16.0"
    containers: ClassVar[frozenset[str]] = frozenset({"folder"})
    zip_member: ClassVar[str] = ""

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        if _STATE_HEAD.match(head) and b'"persistence_dir"' in head:
            return Confidence.CERTAIN
        if _EVENT_HEAD.match(head) and re.search(rb'"kind":"[A-Za-z]+(?:Event|Observation)"', head):
            return Confidence.CERTAIN
        return Confidence.NO_MATCH

    @classmethod
    def sniff_folder(cls, names: frozenset[str]) -> Confidence:
        return Confidence.CERTAIN if STATE in names and EVENTS in names else Confidence.NO_MATCH

    @classmethod
    def folder_transcript(cls, folder: str, names: frozenset[str]) -> str | None:
        if cls.sniff_folder(names) < Confidence.CERTAIN:
            return None
        return os.path.join(folder, STATE)

    @classmethod
    def folder_of(cls, path: str, head: bytes) -> tuple[str, str] | None:
        folder, name = os.path.split(path)
        if name == STATE:
            return folder, ""
        if _EVENT_FILE.match(name) and os.path.basename(folder) == EVENTS:
            return os.path.dirname(folder), ""
        return None

    def _conversation_id(self, doc: Document) -> str:
        path = document_path(doc)
        return os.path.basename(os.path.normpath(path))

    def _event_files(self, doc: Document) -> list[str]:
        names = [name for name, is_dir in doc.entries(EVENTS) if not is_dir]
        found = sorted(
            (int(m.group(1)), name) for name in names if (m := _EVENT_FILE.match(name)) is not None
        )
        return [name for _, name in found]

    def conversations(self, doc: Document) -> list[ConversationInfo]:
        cid = self._conversation_id(doc)
        files = self._event_files(doc)
        first = last = ""
        title = ""
        messages = 0
        for name in files:
            data = doc.read(f"{EVENTS}/{name}") or b""
            try:
                ev = _decode_event(data)
            except _DECODE_ERRORS:
                continue
            first = first or _local_time(ev.timestamp)
            last = _local_time(ev.timestamp) or last
            if ev.kind == "MessageEvent" or (ev.kind == "ActionEvent" and ev.thought):
                messages += 1
            if not title and ev.kind == "MessageEvent" and ev.source == "user" and ev.llm_message:
                texts = _blocks(ev.llm_message.content)
                title = listed_title(texts[0].text if texts else "")
        return [
            ConversationInfo(id=cid, title=title, created=first, updated=last, messages=messages)
        ]

    def sessions(self, doc: Document, only: str | None = None) -> Iterator[DocumentSession]:
        cid = self._conversation_id(doc)
        if only is not None and only != cid:
            return
        skipped = self.begin(cid)
        files = self._event_files(doc)
        state_raw = doc.read(STATE)
        if not files and state_raw is None:
            raise self.error(f"no {EVENTS}/ or {STATE} in the conversation folder", 0)
        events = self._build(doc, cid, files, state_raw)
        info = self.conversations(doc)[0]
        yield DocumentSession(conversation=info, events=events, skipped=skipped)

    # -- one conversation ----------------------------------------------------------------

    def _build(
        self, doc: Document, cid: str, files: list[str], state_raw: bytes | None
    ) -> list[Event]:
        usage: dict[str, _Usage] = {}
        state = _State()
        if state_raw is not None:
            try:
                state = _decode_state(state_raw)
            except _DECODE_ERRORS as exc:
                raise self.error(f"{STATE}: {exc}", len(files) + 1) from None
            for metrics in (state.stats.usage_to_metrics if state.stats else {}).values():
                for u in metrics.token_usages:
                    usage.setdefault(u.response_id or f"#{len(usage)}", u)
        cwd = ""
        if state.workspace and isinstance(state.workspace.get("working_dir"), str):
            cwd = state.workspace["working_dir"]
        out = [self.session_meta(self.record_prov(NO_RAW, 1), session_id=cid, cwd=cwd)]
        answered: set[str] = set()
        for n, name in enumerate(files, 1):
            data = doc.read(f"{EVENTS}/{name}")
            raw = Raw(data) if data else NO_RAW
            try:
                ev = _decode_event(data or b"")
            except _DECODE_ERRORS as exc:
                out.append(self.unknown_or_fail("", data or b"", n, f"{name}: {exc}"))
                continue
            kind = ev.kind or ""
            if kind not in EVENT_KINDS:
                reason = f'unrecognized event kind "{kind}"' if kind else "event has no kind"
                out.append(self.unknown_or_fail(kind, data or b"", n, f"{name}: {reason}"))
                continue
            try:
                out.extend(self._event(ev, kind, raw, n, usage, answered))
            except _DECODE_ERRORS as exc:
                out.append(self.unknown_or_fail(kind, data or b"", n, f"{name}: {exc}"))
        if out[0].timestamp == "" and len(out) > 1:
            out[0].timestamp = out[1].timestamp
        n = len(files) + 1
        if state_raw is not None:
            # The state file is read for its usage: one event says so (its text, the state id).
            read = SystemEvent(subtype="base_state", text=state.id or "")
            out.append(Stamp("", self.record_prov(NO_RAW, n)).system(read))
        for rid, u in usage.items():
            if rid in answered:
                continue
            mid = rid if not rid.startswith("#") else ""
            stamp = Stamp("", self.record_prov(NO_RAW, n), message_id=mid)
            out.append(stamp.assistant_message(AssistantMessage(model=u.model, usage=_usage(u))))
        return out

    def _event(
        self,
        ev: _Event,
        kind: str,
        raw: Raw,
        n: int,
        usage: dict[str, _Usage],
        answered: set[str],
    ) -> list[Event]:
        base = Stamp(_local_time(ev.timestamp), self.record_prov(raw, n), id=ev.id or "")
        if kind == "SystemPromptEvent":
            texts = _blocks(Raw(b"[" + bytes(ev.system_prompt) + b"]")) if ev.system_prompt else []
            prompt = "".join(t.text for t in texts)
            return [base.system(SystemEvent(subtype="system_prompt", text=prompt))]
        if kind in _SYSTEM_KINDS:
            return [base.system(SystemEvent(subtype=kind, details=raw))]
        if kind == "MessageEvent":
            msg = ev.llm_message or _LLMMessage()
            content = _blocks(msg.content)
            if ev.source == "user" or msg.role == "user":
                return [
                    base.user_message(UserMessage(origin=Origin.HUMAN, content=content or None))
                ]
            return self._answer(
                base, ev.llm_response_id or "", content, msg.reasoning_content, usage, answered
            )
        if kind == "ActionEvent":
            rid = ev.llm_response_id or ""
            call = ev.tool_call or _ToolCallField()
            name = ev.tool_name or call.name or ""
            call_id = ev.tool_call_id or call.id or ""
            self.name_call(call_id, name)
            out: list[Event] = []
            if rid not in answered:
                out = self._answer(
                    base, rid, _blocks(ev.thought), ev.reasoning_content, usage, answered
                )
            asked = ToolCall(
                tool_call_id=call_id,
                name=name,
                kind=TOOL_KINDS.get(name, ToolKind.OTHER),
                input=_arguments(call.arguments),
            )
            tool = replace(base, message_id=rid).tool_call(asked)
            # The calls come before the message they belong to, as in every adapter.
            at = next(
                (i for i, e in enumerate(out) if e.kind == EventKind.ASSISTANT_MESSAGE), len(out)
            )
            out.insert(at, tool)
            return out
        # ObservationEvent, AgentErrorEvent, UserRejectObservation: the call's result.
        call_id = ev.tool_call_id or ""
        if kind == "ObservationEvent":
            obs = ev.observation or _Observation()
            content, is_error = _blocks(obs.content), obs.is_error
        elif kind == "AgentErrorEvent":
            content, is_error = [ContentBlock(kind="text", text=ev.error or "")], True
        else:
            content, is_error = [ContentBlock(kind="text", text=ev.rejection_reason or "")], True
        result = ToolResult(
            tool_call_id=call_id,
            tool_name=ev.tool_name or self.tool_names.get(call_id, ""),
            is_error=is_error,
            content=content or None,
        )
        return [base.tool_result(result)]

    def _answer(
        self,
        base: Stamp,
        rid: str,
        content: list[ContentBlock],
        thinking: str | None,
        usage: dict[str, _Usage],
        answered: set[str],
    ) -> list[Event]:
        """A model response's thinking and ``assistant_message`` (with its usage, if recorded)."""
        if rid:
            answered.add(rid)
        u = usage.get(rid) if rid else None
        part = replace(base, message_id=rid)
        out = [part.thinking(Thinking(text=thinking))] if thinking else []
        reply = AssistantMessage(
            model=u.model if u else "", content=content or None, usage=_usage(u) if u else None
        )
        out.append(part.assistant_message(reply))
        return out


def _usage(u: _Usage) -> TokenUsage:
    extra = (
        {"reasoning_tokens": Raw(msgspec.json.encode(u.reasoning_tokens))}
        if u.reasoning_tokens is not None
        else None
    )
    return TokenUsage(
        input_tokens=u.prompt_tokens,
        output_tokens=u.completion_tokens,
        cache_read_input_tokens=u.cache_read_tokens,
        cache_creation_input_tokens=u.cache_write_tokens,
        extra=extra,
    )


def _arguments(arguments: str | None) -> Raw:
    if arguments is None or not arguments.strip():
        return NO_RAW
    return json_or_string(arguments)
