"""claude.ai privacy exports: the ZIP (or its ``conversations.json``) from Settings → Export data.

``conversations.json`` is one JSON array of conversations ``{uuid, name,
summary, created_at, updated_at, chat_messages: [...]}``; a chat message is
``{uuid, sender: human|assistant, created_at, text, content: [blocks],
attachments, files}``. Newer exports link messages into a tree
(``parent_message_uuid``, ``current_leaf_message_uuid``); where they do, the
conversation is the path from the root to the current leaf.

Records, for accounting, are the chat messages, numbered from 1 in the order
the export lists them. Each becomes events or a counted skip (``off_branch``
for a message on an abandoned branch, ``empty/<sender>`` for one with no
content at all).

One assistant chat message spans several model calls when Claude used tools:
its blocks run ``thinking, text, tool_use, tool_result, text …``, the tool
results coming back between calls. Each stretch up to a tool result is one
API message: its ``thinking`` and ``tool_call`` events share the
``message_id`` of the ``assistant_message`` that closes it (the chat message's
uuid for the first stretch, ``<uuid>:<n>`` for the n-th after it), followed by
the ``tool_result`` events, paired by ``tool_use_id`` (or, where the export
has no ids, with the latest open call of the same tool name). Block
timestamps (``start_timestamp``) time thinking, calls and results.

Human messages become ``user_message`` (origin ``human``); attachments with
their extracted text and file references are kept verbatim as ``document`` or
``image`` blocks. Block types this adapter has no rule for are kept verbatim
as ``other`` content blocks. The export records no model per message and no
token usage: totals are omitted.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._export import ExportAdapter, as_str, decode_object
from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import BOM, Confidence, ConversationInfo, DocumentSession
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    Origin,
    Thinking,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)
from agentminutes.timestamps import valid_timestamp

if TYPE_CHECKING:
    from agentminutes.harness.base import Document

__all__ = ("ClaudeAIAdapter",)

HARNESS: Final = "claude-ai"


class _Message(msgspec.Struct):
    uuid: str | None = None
    sender: str | None = None
    text: str | None = None
    content: list[Raw] | None = None
    created_at: str | None = None
    attachments: list[Raw] | None = None
    files: list[Raw] | None = None
    parent_message_uuid: str | None = None
    stop_reason: str | None = None


class _Identity(msgspec.Struct):
    """What a conversation and its listing both read: identity, name, times, current leaf."""

    uuid: str | None = None
    name: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    current_leaf_message_uuid: str | None = None


class _Conversation(_Identity):
    model: str | None = None
    chat_messages: list[Raw] | None = None


class _Link(msgspec.Struct):
    uuid: str | None = None
    parent_message_uuid: str | None = None


class _ConversationHead(_Identity):
    chat_messages: list[_Link] | None = None


class _Block(msgspec.Struct):
    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    summaries: list[Raw] | None = None
    id: str | None = None
    name: str | None = None
    input: Raw = NO_RAW
    tool_use_id: str | None = None
    content: Raw = NO_RAW
    is_error: bool | None = None
    start_timestamp: str | None = None
    stop_timestamp: str | None = None


_decode_conversation = msgspec.json.Decoder(_Conversation).decode
_decode_head = msgspec.json.Decoder(_ConversationHead).decode
_decode_message = msgspec.json.Decoder(_Message).decode
_decode_block = msgspec.json.Decoder(_Block).decode
_decode_result = msgspec.json.Decoder(str | list[Raw] | None).decode

#: claude.ai's built-in tools by ACP kind (MCP tools, ``Server:tool``, are matched by
#: the tool part; anything else is ``other``).
TOOL_KINDS: Final[dict[str, str]] = {
    "view": ToolKind.READ,
    "present_files": ToolKind.READ,
    "read_file": ToolKind.READ,
    "read_text_file": ToolKind.READ,
    "read_multiple_files": ToolKind.READ,
    "get_file_info": ToolKind.READ,
    "list_directory": ToolKind.READ,
    "directory_tree": ToolKind.READ,
    "web_search": ToolKind.FETCH,
    "web_fetch": ToolKind.FETCH,
    "project_knowledge_search": ToolKind.SEARCH,
    "conversation_search": ToolKind.SEARCH,
    "recent_chats": ToolKind.SEARCH,
    "google_drive_search": ToolKind.SEARCH,
    "search_files": ToolKind.SEARCH,
    "str_replace": ToolKind.EDIT,
    "create_file": ToolKind.EDIT,
    "artifacts": ToolKind.EDIT,
    "memory_user_edits": ToolKind.EDIT,
    "write_file": ToolKind.EDIT,
    "edit_file": ToolKind.EDIT,
    "create_directory": ToolKind.EDIT,
    "move_file": ToolKind.MOVE,
    "bash_tool": ToolKind.EXECUTE,
    "repl": ToolKind.EXECUTE,
}


def _tool_kind(name: str) -> str:
    return TOOL_KINDS.get(name.rsplit(":", 1)[-1], ToolKind.OTHER)


class ClaudeAIAdapter(ExportAdapter):
    """Parses claude.ai privacy exports (the ZIP, or its ``conversations.json``)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = ""
    export_name: ClassVar[str] = "claude.ai export"

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        start = head.lstrip(BOM + b" \t\r\n")[:1]
        if start not in (b"[", b"{") or b'"chat_messages"' not in head:
            return Confidence.NO_MATCH
        if b'"sender"' in head or b'"uuid"' in head:
            return Confidence.CERTAIN
        return Confidence.POSSIBLE

    def conversations(self, doc: Document) -> list[ConversationInfo]:
        listed = []
        for i, head in self.exported(doc, _decode_head):
            links = head.chat_messages or []
            path = _active_path(
                [(m.uuid or "", m.parent_message_uuid) for m in links],
                head.current_leaf_message_uuid,
            )
            listed.append(
                ConversationInfo(
                    id=head.uuid or f"#{i}",
                    title=head.name or "",
                    created=valid_timestamp(head.created_at),
                    updated=valid_timestamp(head.updated_at),
                    messages=len(path),
                )
            )
        return listed

    def sessions(self, doc: Document, only: str | None = None) -> Iterator[DocumentSession]:
        for i, conv in self.exported(doc, _decode_conversation):
            conv_id = conv.uuid or f"#{i}"
            if only is not None and conv_id != only:
                continue
            yield self._session(conv, conv_id)

    def _session(self, conv: _Conversation, conv_id: str) -> DocumentSession:
        skipped = self.begin(conv_id)
        messages: list[tuple[int, Raw, _Message]] = []
        for n, raw in enumerate(conv.chat_messages or [], 1):
            try:
                messages.append((n, raw, _decode_message(raw)))
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise self.error(f"malformed chat message: {exc}", n) from None
        path = _active_path(
            [(m.uuid or f"#{n}", m.parent_message_uuid) for n, _, m in messages],
            conv.current_leaf_message_uuid,
        )
        on_path = set(path)
        state = _State(conv.model or "")
        for n, _, msg in messages:
            if (msg.uuid or f"#{n}") not in on_path:
                self.skip("off_branch", n)
        by_id = {m.uuid or f"#{n}": (n, raw, m) for n, raw, m in messages}
        for key in path:
            n, raw, msg = by_id[key]
            self._message(state, n, raw, msg)
        created = valid_timestamp(conv.created_at)
        events = self.with_session_meta(state.events, conv_id, created)
        info = ConversationInfo(
            id=conv_id,
            title=conv.name or "",
            created=created,
            updated=valid_timestamp(conv.updated_at),
            messages=len(path),
        )
        return DocumentSession(conversation=info, events=events, skipped=skipped)

    # -- one chat message ------------------------------------------------------

    def _message(self, state: _State, n: int, raw: Raw, msg: _Message) -> None:
        sender = msg.sender or ""
        if sender not in ("human", "assistant"):
            state.events.append(
                self.unknown_or_fail(sender, bytes(raw), n, f'unrecognized sender "{sender}"')
            )
            return
        blocks: list[tuple[Raw, _Block]] = []
        for b in msg.content or ():
            try:
                blocks.append((b, _decode_block(b)))
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                state.events.append(
                    self.unknown_or_fail(sender, bytes(raw), n, f"malformed content block: {exc}")
                )
                return
        before = len(state.events)
        turn = _Turn(self, state, n, raw, msg)
        if sender == "human":
            turn.human(blocks)
        else:
            turn.assistant(blocks)
        if len(state.events) == before:
            self.skip(f"empty/{sender}", n)


class _State:
    __slots__ = ("events", "model", "open_calls")

    def __init__(self, model: str) -> None:
        self.model = model
        self.events: list[Event] = []
        #: Tool calls without a result yet: (call id, tool name), oldest first.
        self.open_calls: list[tuple[str, str]] = []


class _Turn:
    """Turns one chat message into events."""

    def __init__(
        self, adapter: ClaudeAIAdapter, state: _State, n: int, raw: Raw, msg: _Message
    ) -> None:
        self.adapter = adapter
        self.state = state
        self.msg = msg
        self.uuid = msg.uuid or f"#{n}"
        self.ts = valid_timestamp(msg.created_at)
        parent = msg.parent_message_uuid or ""
        self.said = Stamp(self.ts, adapter.record_prov(raw, n), id=self.uuid, parent_id=parent)
        self.segment = 0
        self.text: list[ContentBlock] = []
        self.opened = False
        self.segment_ts = ""

    def _at(self, ts: str, message_id: str = "") -> Stamp:
        """The chat message's stamp for an event at *ts* (its own time if none) of *message_id*."""
        return replace(self.said, timestamp=ts or self.ts, message_id=message_id)

    def human(self, blocks: list[tuple[Raw, _Block]]) -> None:
        content: list[ContentBlock] = []
        for raw, b in blocks:
            if b.type == "text":
                if b.text:
                    content.append(ContentBlock(kind="text", text=b.text))
            elif b.type == "tool_result":
                self._result(raw, b)
            elif b.type == "image":
                content.append(ContentBlock(kind="image", raw=raw))
            else:
                content.append(ContentBlock(kind="other", raw=raw))
        if not any(c.kind == "text" for c in content) and self.msg.text:
            content.insert(0, ContentBlock(kind="text", text=self.msg.text))
        content.extend(ContentBlock(kind="document", raw=a) for a in self.msg.attachments or ())
        for f in self.msg.files or ():
            kind = "image" if as_str(decode_object(f).get("file_kind")) == "image" else "document"
            content.append(ContentBlock(kind=kind, raw=f))
        if content:
            message = UserMessage(origin=Origin.HUMAN, content=content)
            self.state.events.append(self.said.user_message(message))

    # -- assistant ---------------------------------------------------------------

    @property
    def message_id(self) -> str:
        return self.uuid if self.segment == 0 else f"{self.uuid}:{self.segment}"

    def _open(self, ts: str) -> None:
        if not self.opened:
            self.opened = True
            self.segment_ts = ts

    def _close(self) -> None:
        """End the current API message: its ``assistant_message``, if it had anything."""
        if not self.opened:
            return
        reply = AssistantMessage(
            model=self.state.model,
            content=self.text or None,
            stop_reason=self.msg.stop_reason or "",
        )
        ts = self.ts if self.segment == 0 else self.segment_ts
        self.state.events.append(self._at(ts, self.message_id).assistant_message(reply))
        self.text = []
        self.opened = False
        self.segment += 1

    def assistant(self, blocks: list[tuple[Raw, _Block]]) -> None:
        if not blocks and self.msg.text:
            self._open(self.ts)
            self.text.append(ContentBlock(kind="text", text=self.msg.text))
        for i, (raw, b) in enumerate(blocks):
            ts = valid_timestamp(b.start_timestamp)
            btype = b.type
            if btype == "tool_result":
                self._close()
                self._result(raw, b)
                continue
            self._open(ts)
            if btype == "text":
                if b.text:
                    self.text.append(ContentBlock(kind="text", text=b.text))
            elif btype in ("thinking", "redacted_thinking"):
                thought = Thinking(text=b.thinking or _summaries(b.summaries))
                self.state.events.append(self._at(ts, self.message_id).thinking(thought))
            elif btype == "tool_use":
                self._call(b, ts, i)
            else:
                self.text.append(ContentBlock(kind="other", raw=raw))
        self._close()

    def _call(self, b: _Block, ts: str, index: int) -> None:
        """A tool call; one the export gives no id is known as ``<message uuid>#<block index>``."""
        name = b.name or ""
        call_id = b.id or f"{self.uuid}#{index}"
        self.state.open_calls.append((call_id, name))
        call = ToolCall(tool_call_id=call_id, name=name, kind=_tool_kind(name), input=b.input)
        self.state.events.append(self._at(ts, self.message_id).tool_call(call))

    def _result(self, raw: Raw, b: _Block) -> None:
        calls = self.state.open_calls
        call_id = b.tool_use_id or ""
        name = b.name or ""
        match = next((c for c in calls if c[0] == call_id), None) if call_id else None
        if match is None and not call_id:
            match = next((c for c in reversed(calls) if not name or c[1] == name), None)
            if match is not None:
                call_id = match[0]
        if match is not None:
            calls.remove(match)
            name = name or match[1]
        ts = valid_timestamp(b.start_timestamp) or valid_timestamp(b.stop_timestamp)
        result = ToolResult(
            tool_call_id=call_id,
            tool_name=name,
            is_error=bool(b.is_error),
            content=_result_blocks(b.content) or None,
        )
        self.state.events.append(self._at(ts).tool_result(result))


def _summaries(raw: list[Raw] | None) -> str:
    return "\n\n".join(s for s in (as_str(decode_object(r).get("summary")) for r in raw or ()) if s)


def _result_blocks(raw: Raw) -> list[ContentBlock]:
    if not raw:
        return []
    try:
        value = _decode_result(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return [ContentBlock(kind="other", raw=raw)]
    if value is None:
        return []
    if isinstance(value, str):
        return [ContentBlock(kind="text", text=value)] if value else []
    blocks = []
    for item in value:
        fields = decode_object(item)
        btype = as_str(fields.get("type"))
        if btype == "text":
            text = as_str(fields.get("text"))
            if text:
                blocks.append(ContentBlock(kind="text", text=text))
        elif btype == "knowledge":
            blocks.append(ContentBlock(kind="resource", uri=as_str(fields.get("url")), raw=item))
        elif btype == "image":
            blocks.append(ContentBlock(kind="image", raw=item))
        else:
            blocks.append(ContentBlock(kind="other", raw=item))
    return blocks


def _active_path(links: list[tuple[str, str | None]], leaf: str | None) -> list[str]:
    """Message ids in conversation order: the path to *leaf* where messages form a tree."""
    ids = [uuid for uuid, _ in links]
    parents = dict(links)
    if not any(p in parents for p in parents.values() if p):
        return ids  # a flat list: the export's order is the conversation
    if leaf is None or leaf not in parents:
        leaf = ids[-1]
    path: list[str] = []
    seen: set[str] = set()
    node: str | None = leaf
    while node is not None and node in parents and node not in seen:
        seen.add(node)
        path.append(node)
        node = parents[node]
    path.reverse()
    return path
