"""The Continue adapter: a session document, converted when the input ends.

Mapping decisions:

* The session becomes ``session_meta`` (its ``sessionId``, the
  ``workspaceDirectory``); the file records no release and no times.
* A ``user`` item becomes a ``user_message`` (``human``) of its text and
  images; the item's ``contextItems`` (files and snippets Continue attached)
  a second ``user_message`` (``harness``) of their contents.
* An ``assistant`` item becomes ``thinking`` for its ``reasoning``, a
  ``tool_call`` per ``toolCalls`` entry (the arguments string is the input
  when it is JSON), an ``assistant_message`` with the model its ``usage``
  names (else the session's model title) and that usage (``cost_cents``, the
  price Continue put on the request, as ``cost`` in dollars), then a ``tool_result`` per finished entry of
  ``toolCallStates`` (``done`` is success, ``errored`` and ``canceled`` are
  errors). Usage counts the prompt as OpenAI does (cache reads inside it),
  in the snake_case or camelCase shape alike.
* A ``thinking`` item becomes ``thinking``; a ``tool`` item a ``tool_result``;
  a ``system`` item a ``system`` event ``system_message``.
* The session's running ``usage`` (its ``totalCost`` is Continue's own
  figure, in US dollars, for all requests) becomes a last ``system`` event
  ``session_usage``, as no request's cost is recorded apart. Its id is a
  digest of the figures: a follower writes each new running total once, as
  the session grows (``convert`` writes the last).
* Records are the elements of ``history``: each event's lines are its item's.

Followed, the document is read again at each rewrite; an item whose tools
have not finished is held back, with what follows it, until they have.
"""

from __future__ import annotations

import hashlib
import re
from typing import ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._content import item_block
from agentminutes.harness._stamp import Stamp
from agentminutes.harness._whole_json import DocumentBuilder, JsonDocument, WholeJsonAdapter
from agentminutes.harness.base import Confidence, json_or_string
from agentminutes.harness.continue_cli.vocabulary import FINISHED, HARNESS, TOOL_KINDS
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    Meta,
    Origin,
    SystemEvent,
    Thinking,
    TokenUsage,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)

__all__ = ("ContinueAdapter",)


class _Session(msgspec.Struct, rename="camel"):
    session_id: str | None = None
    title: str | None = None
    workspace_directory: str | None = None
    history: list[Raw] | None = None
    chat_model_title: str | None = None
    usage: Raw = NO_RAW


class _Function(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class _ToolCall(msgspec.Struct):
    id: str | None = None
    function: _Function | None = None


class _Message(msgspec.Struct, rename="camel"):
    role: str | None = None
    content: Raw = NO_RAW
    tool_calls: list[_ToolCall] | None = None
    usage: Raw = NO_RAW
    tool_call_id: str | None = None
    signature: str | None = None


class _Output(msgspec.Struct):
    content: str | None = None
    name: str | None = None


class _State(msgspec.Struct, rename="camel"):
    tool_call_id: str | None = None
    tool_call: _ToolCall | None = None
    status: str | None = None
    output: list[_Output] | None = None


class _Reasoning(msgspec.Struct):
    text: str | None = None


class _Context(msgspec.Struct):
    name: str | None = None
    content: str | None = None


class _Item(msgspec.Struct, rename="camel"):
    message: _Message | None = None
    context_items: list[_Context] | None = None
    tool_call_states: list[_State] | None = None
    reasoning: _Reasoning | None = None


class _Part(msgspec.Struct, rename="camel"):
    type: str = ""
    text: str | None = None


class _Details(msgspec.Struct):
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cachedTokens: int = 0
    cacheWriteTokens: int = 0


class _Completion(msgspec.Struct):
    reasoning_tokens: int = 0
    reasoningTokens: int = 0


class _Usage(msgspec.Struct):
    model: str | None = None
    cost_cents: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    completion_tokens_details: _Completion | None = None
    completionTokensDetails: _Completion | None = None
    promptTokens: int = 0
    completionTokens: int = 0
    prompt_tokens_details: _Details | None = None
    promptTokensDetails: _Details | None = None


_decode_session = msgspec.json.Decoder(_Session).decode
_decode_item = msgspec.json.Decoder(_Item).decode
_decode_parts = msgspec.json.Decoder(str | list[Raw]).decode
_decode_part = msgspec.json.Decoder(_Part).decode
_decode_usage = msgspec.json.Decoder(_Usage).decode
_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)

#: Continue writes ``sessionId`` first (its index, ``sessions.json``, is a list: no match).
_SESSION_HEAD: Final = re.compile(rb'\{\s*"sessionId"\s*:\s*"')


class ContinueAdapter(WholeJsonAdapter[_Session]):
    """Parses Continue session documents (``~/.continue/sessions/<id>.json``)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "1.5.0"

    document: ClassVar[str] = "session"

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        head = head.lstrip(b"\xef\xbb\xbf").lstrip()
        if not head.startswith(b"{"):
            return Confidence.NO_MATCH
        window = head[:4096]
        if (
            _SESSION_HEAD.match(window)
            and b'"workspaceDirectory"' in window
            and b'"history"' in window
        ):
            return Confidence.CERTAIN
        return Confidence.NO_MATCH

    def decode(self, buf: bytes) -> _Session:
        return _decode_session(buf)

    def build(self, doc: JsonDocument, decoded: _Session) -> list[Event]:
        return _Builder(self, doc, decoded).events()


class _Builder(DocumentBuilder):
    """One session's events, built from its decoded document."""

    def __init__(self, adapter: ContinueAdapter, doc: JsonDocument, session: _Session) -> None:
        super().__init__(adapter, doc)
        self.session = session

    def events(self) -> list[Event]:
        s = self.session
        items = s.history or []
        spans = self.doc.record_spans(b"history", len(items))
        meta = Meta(
            harness=HARNESS,
            harness_version=self.adapter.effective_version,
            session_id=s.session_id or "",
            cwd=s.workspace_directory or "",
        )
        self.out.append(Stamp("", self.head_prov(spans), id=s.session_id or "").session_meta(meta))
        for n, (raw, span) in enumerate(zip(items, spans, strict=True)):
            try:
                item = _decode_item(raw)
            except _DECODE_ERRORS as exc:
                self.reject("item", raw, span, f"malformed history item: {exc}")
                continue
            if self.adapter.options.live and not _settled(item):
                break  # its tools still run: shown once they have finished
            msg = item.message
            role = (msg.role if msg is not None else None) or ""
            if msg is None:
                self.reject("item", raw, span, "history item without a message")
            elif role == "user":
                self._user(item, msg, raw, span, n)
            elif role == "assistant":
                self._assistant(item, msg, raw, span, n)
            elif role == "thinking":
                self._thinking(_text(msg.content), msg.signature or "", raw, span, f"item-{n}")
            elif role == "tool":
                self._tool_message(msg, raw, span)
            elif role == "system":
                said = SystemEvent(subtype="system_message", text=_text(msg.content))
                self.out.append(Stamp("", self.prov(span, bytes(raw))).system(said))
            else:
                self.reject(f"message/{role}", raw, span, f'unrecognized message role "{role}"')
        if s.usage:
            # Known by its figures: a follower shows each new running total once.
            digest = hashlib.sha256(bytes(s.usage)).hexdigest()[:16]
            stamp = Stamp("", self.prov(None, bytes(s.usage)), id=f"usage-{digest}")
            self.out.append(stamp.system(SystemEvent(subtype="session_usage", details=s.usage)))
        return self.out

    def _user(
        self, item: _Item, msg: _Message, raw: Raw, span: tuple[int, int] | None, n: int
    ) -> None:
        typed = UserMessage(origin=Origin.HUMAN, content=_content(msg.content))
        self.out.append(Stamp("", self.prov(span, bytes(raw)), id=f"item-{n}").user_message(typed))
        context = [
            ContentBlock(kind="text", text=c.content or "")
            for c in item.context_items or []
            if c.content
        ]
        if context:
            added = UserMessage(origin=Origin.HARNESS, content=context)
            self.out.append(
                Stamp("", self.prov(span, bytes(raw)), id=f"item-{n}").user_message(added)
            )

    def _thinking(
        self, text: str, signature: str, raw: Raw, span: tuple[int, int] | None, mid: str
    ) -> None:
        thought = Thinking(text=text, signature=signature)
        self.out.append(Stamp("", self.prov(span, bytes(raw)), message_id=mid).thinking(thought))

    def _assistant(
        self, item: _Item, msg: _Message, raw: Raw, span: tuple[int, int] | None, n: int
    ) -> None:
        mid = f"item-{n}"
        if item.reasoning is not None and item.reasoning.text:
            self._thinking(item.reasoning.text, "", raw, span, mid)
        calls = list(msg.tool_calls or [])
        known = {c.id for c in calls}
        for state in item.tool_call_states or []:
            if state.tool_call is not None and state.tool_call.id not in known:
                calls.append(state.tool_call)
                known.add(state.tool_call.id)
        for call in calls:
            fn = call.function or _Function()
            name = fn.name or ""
            call_id = call.id or ""
            self.adapter.name_call(call_id, name)
            kind = TOOL_KINDS.get(name, ToolKind.OTHER)
            asked = ToolCall(
                tool_call_id=call_id, name=name, kind=kind, input=_arguments(fn.arguments)
            )
            self.out.append(Stamp("", self.prov(span, bytes(raw)), message_id=mid).tool_call(asked))
        used = _usage_of(msg.usage)
        model = (used.model if used is not None else None) or self.session.chat_model_title or ""
        reply = AssistantMessage(model=model, content=_content(msg.content), usage=_usage(used))
        whole = Stamp("", self.prov(span, bytes(raw)), id=mid, message_id=mid)
        self.out.append(whole.assistant_message(reply))
        for state in item.tool_call_states or []:
            if (state.status or "") not in FINISHED:
                continue
            call_id = state.tool_call_id or (state.tool_call.id if state.tool_call else "") or ""
            text = "\n".join(o.content or "" for o in state.output or [])
            result = ToolResult(
                tool_call_id=call_id,
                tool_name=self.adapter.tool_names.get(call_id, ""),
                is_error=state.status != "done",
                content=[ContentBlock(kind="text", text=text)] if text else None,
                enrichment=Raw(msgspec.json.encode({"status": state.status})),
            )
            self.out.append(Stamp("", self.prov(span, bytes(raw))).tool_result(result))

    def _tool_message(self, msg: _Message, raw: Raw, span: tuple[int, int] | None) -> None:
        call_id = msg.tool_call_id or ""
        text = _text(msg.content)
        result = ToolResult(
            tool_call_id=call_id,
            tool_name=self.adapter.tool_names.get(call_id, ""),
            content=[ContentBlock(kind="text", text=text)] if text else None,
        )
        self.out.append(Stamp("", self.prov(span, bytes(raw))).tool_result(result))


def _settled(item: _Item) -> bool:
    """Whether an item is final: every tool it called has finished."""
    return all((s.status or "") in FINISHED for s in item.tool_call_states or [])


def _content(raw: Raw) -> list[ContentBlock] | None:
    """A message's content (a string, or text and image parts) as content blocks."""
    if not raw:
        return None
    try:
        value = _decode_parts(raw)
    except _DECODE_ERRORS:
        return [ContentBlock(kind="other", raw=raw)]
    if isinstance(value, str):
        return [ContentBlock(kind="text", text=value)]
    return [item_block(part, _decode_part, image="imageUrl") for part in value] or None


def _text(raw: Raw) -> str:
    return "\n".join(b.text for b in _content(raw) or [] if b.kind == "text")


def _arguments(arguments: str | None) -> Raw:
    """A call's arguments string as its input: the JSON it holds, else the string itself."""
    return json_or_string(arguments) if arguments else NO_RAW


def _usage_of(raw: Raw) -> _Usage | None:
    if not raw:
        return None
    try:
        return _decode_usage(raw)
    except _DECODE_ERRORS:
        return None


def _usage(u: _Usage | None) -> TokenUsage | None:
    """A reply's usage: the prompt counts the cache reads (OpenAI's way); the reasoning is
    inside the output (kept apart in ``extra.reasoning``); ``cost_cents`` is Continue's own
    price of the request, in US cents (``cost`` in dollars)."""
    if u is None:
        return None
    details = u.prompt_tokens_details or u.promptTokensDetails or _Details()
    done = u.completion_tokens_details or u.completionTokensDetails or _Completion()
    extra: dict[str, Raw] = {}
    reasoning = done.reasoning_tokens or done.reasoningTokens
    if reasoning:
        extra["reasoning"] = Raw(msgspec.json.encode(reasoning))
    if u.cost_cents is not None:
        extra["cost_cents"] = Raw(msgspec.json.encode(u.cost_cents))
    return TokenUsage(
        input_tokens=u.prompt_tokens or u.promptTokens,
        output_tokens=u.completion_tokens or u.completionTokens,
        cache_read_input_tokens=details.cached_tokens or details.cachedTokens,
        cache_creation_input_tokens=details.cache_write_tokens or details.cacheWriteTokens,
        cost=None if u.cost_cents is None else round(u.cost_cents / 100, 10),
        extra=extra or None,
    )
