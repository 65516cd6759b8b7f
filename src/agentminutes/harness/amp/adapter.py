"""The Amp adapter: a thread document, converted when the input ends.

Mapping decisions:

* The thread becomes ``session_meta``: its id, the client release
  (``env.initial.platform.clientVersion``), the working directory (the first
  tree's ``file://`` URI) and git branch (the tree's ``repository.ref``);
  its time is the thread's ``created``.
* A ``user`` message becomes a ``user_message`` (``human``) of its text and
  image blocks, timed by ``meta.sentAt``; its ``tool_result`` blocks become
  ``tool_result`` events (``done`` is success; ``error``, ``cancelled`` and
  ``rejected-by-user`` are errors; the ``run`` is kept as enrichment).
* An ``assistant`` message becomes ``thinking`` and ``tool_call`` events and
  one ``assistant_message`` with the model, stop reason and usage of its
  ``usage`` (``inputTokens`` is fresh input; cache reads and writes are apart,
  as Anthropic counts them). A ``usageLedger`` event that names the message
  (``toMessageId``) gives its ``credits``, Amp's own charge, as the usage's
  ``cost``; a ledger event naming no message becomes a ``system`` event
  ``usage_ledger``.
* An ``info`` message (a summary, a handoff) becomes a ``system`` event
  ``info``; each ``relationships`` entry (a handoff or fork to another
  thread) a ``system`` event ``relationship`` whose text names the thread.
* Records are the elements of ``messages``: each event's lines are its
  message's lines in the file.

Followed, a thread is read again at each rewrite; a message still streaming,
a tool still running, or a reply whose charge the ledger has not booked yet
is held back (with everything after it) until it settles, so no event is
written before it is final.
"""

from __future__ import annotations

from typing import ClassVar, Final
from urllib.parse import unquote, urlparse

import msgspec
from msgspec import Raw

from agentminutes.harness._stamp import Stamp
from agentminutes.harness._whole_json import DocumentBuilder, JsonDocument, WholeJsonAdapter
from agentminutes.harness._whole_json import ms_time as _ms
from agentminutes.harness.amp.vocabulary import (
    FINISHED_RUNS,
    HARNESS,
    SETTLED_STATES,
    TOOL_KINDS,
)
from agentminutes.harness.base import Confidence
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
from agentminutes.timestamps import valid_timestamp

__all__ = ("AmpAdapter",)


class _Repository(msgspec.Struct):
    ref: str | None = None


class _Tree(msgspec.Struct):
    uri: str | None = None
    repository: _Repository | None = None


class _Platform(msgspec.Struct, rename="camel"):
    client_version: str | None = None


class _Initial(msgspec.Struct):
    trees: list[_Tree] | None = None
    platform: _Platform | None = None


class _Env(msgspec.Struct):
    initial: _Initial | None = None


class _Ledger(msgspec.Struct):
    events: list[Raw] | None = None


class _Thread(msgspec.Struct, rename="camel"):
    id: str | None = None
    created: int | float | None = None
    title: str | None = None
    env: _Env | None = None
    messages: list[Raw] | None = None
    usage_ledger: _Ledger | None = None
    relationships: list[Raw] | None = None


class _State(msgspec.Struct, rename="camel"):
    type: str | None = None
    stop_reason: str | None = None


class _Usage(msgspec.Struct, rename="camel"):
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    total_input_tokens: int | None = None
    timestamp: str | None = None


class _Sent(msgspec.Struct, rename="camel"):
    sent_at: int | float | None = None


class _Message(msgspec.Struct, rename="camel"):
    role: str | None = None
    message_id: int | str | None = None
    content: list[Raw] | None = None
    state: _State | None = None
    usage: _Usage | None = None
    meta: _Sent | None = None


class _Run(msgspec.Struct):
    status: str | None = None
    result: Raw = NO_RAW
    error: Raw = NO_RAW
    reason: str | None = None


class _Block(msgspec.Struct, rename="camel"):
    type: str = ""
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    id: str | None = None
    name: str | None = None
    input: Raw = NO_RAW
    tool_use_id: str | None = msgspec.field(default=None, name="toolUseID")
    run: _Run | None = None
    summary: Raw = NO_RAW


class _LedgerTokens(msgspec.Struct):
    input: int = 0
    output: int = 0


class _LedgerEvent(msgspec.Struct, rename="camel"):
    timestamp: str | None = None
    model: str | None = None
    credits: float | None = None
    tokens: _LedgerTokens | None = None
    to_message_id: int | str | None = None


class _Relationship(msgspec.Struct, rename="camel"):
    thread_id: str | None = msgspec.field(default=None, name="threadID")
    type: str | None = None
    role: str | None = None


_decode_thread = msgspec.json.Decoder(_Thread).decode
_decode_message = msgspec.json.Decoder(_Message).decode
_decode_block = msgspec.json.Decoder(_Block).decode
_decode_ledger_event = msgspec.json.Decoder(_LedgerEvent).decode
_decode_relationship = msgspec.json.Decoder(_Relationship).decode
_decode_any = msgspec.json.Decoder().decode
_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)


class AmpAdapter(WholeJsonAdapter[_Thread]):
    """Parses Amp thread documents (``T-<uuid>.json``)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "0.0.1768178000"

    document: ClassVar[str] = "thread"

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        head = head.lstrip(b"\xef\xbb\xbf").lstrip()
        if not head.startswith(b"{"):
            return Confidence.NO_MATCH
        window = head[:4096]
        if b'"id"' in window and b'"T-' in window and b'"messages"' in head:
            if b'"agentMode"' in head or b'"nextMessageId"' in head or b'"env"' in window:
                return Confidence.CERTAIN
            return Confidence.POSSIBLE
        return Confidence.NO_MATCH

    def decode(self, buf: bytes) -> _Thread:
        return _decode_thread(buf)

    def build(self, doc: JsonDocument, decoded: _Thread) -> list[Event]:
        return _Builder(self, doc, decoded).events()


class _Builder(DocumentBuilder):
    """One thread's events, built from its decoded document."""

    def __init__(self, adapter: AmpAdapter, doc: JsonDocument, thread: _Thread) -> None:
        super().__init__(adapter, doc)
        self.thread = thread
        self.model = ""
        self.when = ""
        self._unmatched: list[tuple[Raw, _LedgerEvent]] = []
        self._booked: set[str] = set()

    def events(self) -> list[Event]:
        t = self.thread
        messages = t.messages or []
        spans = self.doc.record_spans(b"messages", len(messages))
        self.adapter.version = self._version()
        meta = Meta(
            harness=HARNESS,
            harness_version=self.adapter.effective_version,
            session_id=t.id or "",
            cwd=self._cwd(),
            git_branch=self._branch(),
        )
        head = Stamp(_ms(t.created), self.head_prov(spans), id=t.id or "")
        self.out.append(head.session_meta(meta))
        credits = self._ledger()
        for raw, span in zip(messages, spans, strict=True):
            try:
                msg = _decode_message(raw)
            except _DECODE_ERRORS as exc:
                self.reject("message", raw, span, f"malformed message: {exc}")
                continue
            if self.adapter.options.live and not self._settled(msg):
                break  # a message still being written: shown once it settles
            role = msg.role or ""
            if role == "user":
                self._user(msg, raw, span)
            elif role == "assistant":
                self._assistant(msg, raw, span, credits)
            elif role == "info":
                self._info(msg, raw, span)
            else:
                self.reject(f"message/{role}", raw, span, f'unrecognized message role "{role}"')
        self._ledger_events()
        for raw in t.relationships or []:
            self._relationship(raw)
        return self.out

    def _settled(self, msg: _Message) -> bool:
        """Whether *msg* is final: done, its tools finished, its charge in the ledger.

        A thread that keeps a ledger books each reply's charge there once it is
        complete: a reply the ledger does not name yet may still get its cost.
        """
        if not _settled(msg):
            return False
        if msg.role != "assistant" or self.thread.usage_ledger is None or msg.usage is None:
            return True
        return _id(msg) in self._booked

    # -- thread fields ----------------------------------------------------------------

    def _initial(self) -> _Initial:
        env = self.thread.env
        return (env.initial if env is not None else None) or _Initial()

    def _version(self) -> str:
        platform = self._initial().platform
        return (platform.client_version if platform is not None else None) or ""

    def _cwd(self) -> str:
        for tree in self._initial().trees or []:
            uri = tree.uri or ""
            if uri.startswith("file://"):
                return unquote(urlparse(uri).path)
            if uri:
                return uri
        return ""

    def _branch(self) -> str:
        for tree in self._initial().trees or []:
            ref = tree.repository.ref if tree.repository is not None else None
            if ref:
                return ref.removeprefix("refs/heads/")
        return ""

    def _ledger(self) -> dict[str, float]:
        """Credits per assistant message; ledger events naming no message become events."""
        credits: dict[str, float] = {}
        ledger = self.thread.usage_ledger
        ids = {
            str(m.message_id)
            for m in (_try_message(r) for r in self.thread.messages or [])
            if m is not None and m.role == "assistant" and m.message_id is not None
        }
        for raw in (ledger.events if ledger is not None else None) or []:
            try:
                ev = _decode_ledger_event(raw)
            except _DECODE_ERRORS as exc:
                self.reject("usageLedger/event", raw, None, f"malformed usage ledger event: {exc}")
                continue
            key = str(ev.to_message_id) if ev.to_message_id is not None else ""
            self._booked.add(key)
            if key in ids:
                credits[key] = credits.get(key, 0.0) + (ev.credits or 0.0)
            else:
                self._unmatched.append((raw, ev))
        return credits

    def _ledger_events(self) -> None:
        for raw, ev in self._unmatched:
            booked = SystemEvent(subtype="usage_ledger", text=ev.model or "", details=raw)
            stamp = Stamp(valid_timestamp(ev.timestamp or ""), self.prov(None, bytes(raw)))
            self.out.append(stamp.system(booked))

    # -- messages ---------------------------------------------------------------------

    def _blocks(self, msg: _Message, raw: Raw, span: tuple[int, int] | None) -> list[_Block]:
        blocks: list[_Block] = []
        for item in msg.content or []:
            try:
                blocks.append(_decode_block(item))
            except _DECODE_ERRORS:
                blocks.append(_Block(type="", input=item))
        return blocks

    def _user(self, msg: _Message, raw: Raw, span: tuple[int, int] | None) -> None:
        ts = _ms(msg.meta.sent_at if msg.meta is not None else None)
        if ts:
            self.when = ts
        content: list[ContentBlock] = []
        for item, b in zip(msg.content or [], self._blocks(msg, raw, span), strict=True):
            if b.type == "tool_result":
                self._result(b, raw, span)
            elif b.type == "text":
                content.append(ContentBlock(kind="text", text=b.text or ""))
            elif b.type == "image":
                content.append(ContentBlock(kind="image", raw=item))
            else:
                content.append(ContentBlock(kind="other", raw=item))
        if content or not msg.content:
            said = Stamp(ts, self.prov(span, bytes(raw)), id=_id(msg))
            self.out.append(
                said.user_message(UserMessage(origin=Origin.HUMAN, content=content or None))
            )

    def _result(self, b: _Block, raw: Raw, span: tuple[int, int] | None) -> None:
        run = b.run or _Run()
        status = run.status or ""
        call_id = b.tool_use_id or ""
        failed = status in FINISHED_RUNS and status != "done"
        text = _result_text(run)
        result = ToolResult(
            tool_call_id=call_id,
            tool_name=self.adapter.tool_names.get(call_id, ""),
            is_error=failed,
            content=[ContentBlock(kind="text", text=text)] if text else None,
            enrichment=Raw(msgspec.json.encode({"status": status})) if status else NO_RAW,
        )
        self.out.append(Stamp("", self.prov(span, bytes(raw))).tool_result(result))

    def _assistant(
        self, msg: _Message, raw: Raw, span: tuple[int, int] | None, credits: dict[str, float]
    ) -> None:
        usage = msg.usage
        ts = valid_timestamp((usage.timestamp if usage is not None else None) or "")
        if ts:
            self.when = ts
        mid = _id(msg)
        texts: list[ContentBlock] = []
        for item, b in zip(msg.content or [], self._blocks(msg, raw, span), strict=True):
            if b.type == "text":
                texts.append(ContentBlock(kind="text", text=b.text or ""))
            elif b.type in ("thinking", "redacted_thinking"):
                thought = Thinking(text=b.thinking or "", signature=b.signature or "")
                self.out.append(
                    Stamp(ts, self.prov(span, bytes(raw)), message_id=mid).thinking(thought)
                )
            elif b.type == "tool_use":
                name = b.name or ""
                call_id = b.id or ""
                self.adapter.name_call(call_id, name)
                kind = TOOL_KINDS.get(name, ToolKind.OTHER)
                call = ToolCall(tool_call_id=call_id, name=name, kind=kind, input=b.input or NO_RAW)
                self.out.append(
                    Stamp(ts, self.prov(span, bytes(raw)), message_id=mid).tool_call(call)
                )
            else:
                texts.append(ContentBlock(kind="other", raw=item))
        if usage is not None and usage.model:
            self.model = usage.model
        state = msg.state or _State()
        stop = state.stop_reason or (state.type if state.type not in (None, "complete") else "")
        reply = AssistantMessage(
            model=(usage.model if usage is not None else None) or self.model,
            content=texts or None,
            stop_reason=stop or "",
            usage=_usage(usage, credits.get(mid)) if usage is not None else None,
        )
        whole = Stamp(ts, self.prov(span, bytes(raw)), id=mid, message_id=mid)
        self.out.append(whole.assistant_message(reply))

    def _info(self, msg: _Message, raw: Raw, span: tuple[int, int] | None) -> None:
        parts: list[str] = []
        for b in self._blocks(msg, raw, span):
            if b.text:
                parts.append(b.text)
            elif b.summary:
                try:
                    value = _decode_any(b.summary)
                except _DECODE_ERRORS:
                    value = None
                if isinstance(value, dict):
                    inner = value.get("summary") or value.get("thread") or ""
                    parts.append(inner if isinstance(inner, str) else "")
        info = SystemEvent(subtype="info", text="\n".join(parts), details=raw)
        self.out.append(Stamp("", self.prov(span, bytes(raw)), id=_id(msg)).system(info))

    def _relationship(self, raw: Raw) -> None:
        try:
            rel = _decode_relationship(raw)
        except _DECODE_ERRORS as exc:
            self.reject("relationship", raw, None, f"malformed relationship: {exc}")
            return
        related = SystemEvent(subtype="relationship", text=rel.thread_id or "", details=raw)
        self.out.append(Stamp("", self.prov(None, bytes(raw))).system(related))


def _try_message(raw: Raw) -> _Message | None:
    try:
        return _decode_message(raw)
    except _DECODE_ERRORS:
        return None


def _id(msg: _Message) -> str:
    return "" if msg.message_id is None else str(msg.message_id)


def _settled(msg: _Message) -> bool:
    """Whether a message is final: an assistant message done, every tool run finished."""
    if msg.role == "assistant":
        return (msg.state.type if msg.state is not None else None) in SETTLED_STATES
    if msg.role == "user":
        for item in msg.content or []:
            try:
                b = _decode_block(item)
            except _DECODE_ERRORS:
                continue
            if b.type == "tool_result" and (b.run is None or b.run.status not in FINISHED_RUNS):
                return False
    return True


def _result_text(run: _Run) -> str:
    """What a run produced, as text: its output, its error's message, or the reason it stopped."""
    for value in (run.result, run.error):
        if not value:
            continue
        try:
            decoded = _decode_any(value)
        except _DECODE_ERRORS:
            continue
        if isinstance(decoded, str):
            return decoded
        if isinstance(decoded, dict):
            for key in ("output", "message", "content"):
                inner = decoded.get(key)
                if isinstance(inner, str):
                    return inner
        return bytes(value).decode()
    return run.reason or ""


def _usage(u: _Usage, credits: float | None) -> TokenUsage:
    extra: dict[str, Raw] = {}
    if u.total_input_tokens is not None:
        extra["totalInputTokens"] = Raw(msgspec.json.encode(u.total_input_tokens))
    if credits is not None:
        extra["credits"] = Raw(msgspec.json.encode(credits))
    return TokenUsage(
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_read_input_tokens=u.cache_read_input_tokens,
        cache_creation_input_tokens=u.cache_creation_input_tokens,
        cost=credits,
        extra=extra or None,
    )
