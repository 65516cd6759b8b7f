"""The oldest Copilot CLI sessions: one JSON document, buffered and converted at end of input."""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Final, Protocol

import msgspec
from msgspec import Raw

from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import ParseOptions, tool_call
from agentminutes.harness.copilot.records import _decode_str
from agentminutes.harness.copilot.vocabulary import HARNESS, TOOL_KINDS
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
    ToolResult,
    UserMessage,
)
from agentminutes.timestamps import valid_timestamp

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


class _Reader(Protocol):
    """What :func:`_legacy` uses of the adapter."""

    options: ParseOptions
    meta_sent: bool


def _legacy(adapter: _Reader, lines: list[tuple[int, bytes]]) -> list[Event] | None:
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
        turn = Stamp(ts, where, message_id=message_id)
        for call in chat.tool_calls or ():
            fn = (call.function if call is not None else None) or _Function()
            call_id = (call.id if call is not None else None) or ""
            out.append(turn.tool_call(tool_call(call_id, fn.name or "", fn.arguments, TOOL_KINDS)))
        text = _chat_text(chat.content)
        content = [ContentBlock(kind="text", text=text)] if text else None
        out.append(turn.assistant_message(AssistantMessage(model=model, content=content)))

    for index, (entry, raw) in enumerate(zip(entries, document.timeline or (), strict=True)):
        ts = valid_timestamp(entry.timestamp)
        where = prov("timeline", index, raw)
        said = Stamp(ts, where, id=entry.id or "")
        kind = entry.type or ""
        text = entry.text or ""
        if kind == "user":
            block = ContentBlock(kind="text", text=text)
            out.append(said.user_message(UserMessage(origin=Origin.HUMAN, content=[block])))
        elif kind == "copilot":
            content = [ContentBlock(kind="text", text=text)] if text else None
            message = AssistantMessage(model=model, content=content)
            its = Stamp(ts, where, id=entry.id or "", message_id=entry.id or "")
            out.append(its.assistant_message(message))
        elif kind == "tool_call_completed":
            call_id = entry.call_id or ""
            made_by = owner.get(call_id)
            if made_by is not None and made_by not in shown:
                show_calls(made_by, ts)
            outcome = entry.result or _Outcome()
            reply = replies.get(call_id, outcome.log)
            out.append(
                said.tool_result(
                    ToolResult(
                        tool_call_id=call_id,
                        tool_name=entry.name or "",
                        is_error=outcome.type != "success",
                        content=[ContentBlock(kind="text", text=reply or "")],
                        enrichment=raw,
                    )
                )
            )
        else:
            if kind == "info":
                changed = _MODEL_CHANGED.match(text)
                if changed is not None:
                    model = changed[1]
            system = SystemEvent(subtype=f"timeline.{kind}", text=text, details=raw)
            out.append(said.system(system))
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
