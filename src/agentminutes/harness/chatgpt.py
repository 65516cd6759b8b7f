"""ChatGPT data exports: ``conversations.json``, alone or inside the export ZIP.

The export is one JSON array of conversations (a per-conversation JSON file
holds one conversation object of the same shape). A conversation keeps its
messages as a tree, ``mapping``: node id → ``{id, message, parent, children}``,
where editing a prompt or regenerating an answer starts a sibling branch.
``current_node`` is the leaf the user last saw; the conversation as the model
saw it is the path from the root down to that leaf (the *active branch*).

Records, for accounting, are the mapping's nodes, numbered from 1 in the
order the export lists them. Each node becomes events or a counted skip:

* ``root`` — the message-less node at the top of the tree;
* ``off_branch`` — a node on an abandoned branch (an edited prompt, a
  regenerated answer);
* ``empty/<role>`` — a message with no content at all (the export's blank
  system message at the top of most conversations);
* ``reasoning_recap`` — the UI's "Thought for 12s" line after a reasoning phase.

Every other message on the active branch becomes events, by author role:

* ``user`` → ``user_message`` (origin ``harness`` for content the user did not
  type into the prompt: custom instructions, messages hidden from the
  conversation view);
* ``system`` → ``system`` with subtype ``system/<content_type>``;
* ``assistant`` → ``assistant_message`` (model from ``metadata.model_slug``,
  stop reason from ``metadata.finish_details.type``); a ``thoughts`` message
  becomes ``thinking`` events that share the ``message_id`` of the answer
  that follows it; a message addressed to a tool (``recipient`` other than
  ``all``: ``python``, ``browser``, ``web.run``, ``dalle.text2im``, a plugin
  operation …) becomes a ``tool_call`` (``tool_call_id`` = the message id, the
  input = the message's ``content`` verbatim) with its ``assistant_message``;
* ``tool`` → ``tool_result``, paired with the latest call since the last user
  message whose recipient names this tool, else with the latest call (several
  results may answer one call, as browsing quotes do); ``system_error``
  content is an error. A tool message with no call before it is an orphan.

Content types this adapter has no rule for keep their ``content`` object
verbatim as an ``other`` content block, next to whatever text they carry.
Exports record no token usage: assistant messages carry none and session
totals are omitted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._export import (
    as_bool,
    as_str,
    epoch_rfc3339,
    split_export,
)
from agentminutes.harness.base import (
    BaseDocumentAdapter,
    Confidence,
    ConversationInfo,
    DocumentSession,
)
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    FetchInfo,
    Meta,
    Origin,
    SystemEvent,
    Thinking,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)

if TYPE_CHECKING:
    from agentminutes.harness.base import Document

__all__ = ("ChatGPTAdapter",)

HARNESS: Final = "chatgpt"

#: Builds an event of a kind for the node being parsed (timestamp, ids, provenance filled in).
_EventFactory = Callable[..., Event]


class _Author(msgspec.Struct):
    role: str | None = None
    name: str | None = None


class _Message(msgspec.Struct):
    id: str | None = None
    author: _Author | None = None
    create_time: Raw = NO_RAW
    content: Raw = NO_RAW
    status: str | None = None
    metadata: Raw = NO_RAW
    recipient: str | None = None


class _Node(msgspec.Struct):
    id: str | None = None
    parent: str | None = None
    children: list[str] | None = None
    message: _Message | None = None


class _Conversation(msgspec.Struct):
    id: str | None = None
    conversation_id: str | None = None
    title: str | None = None
    create_time: Raw = NO_RAW
    update_time: Raw = NO_RAW
    current_node: str | None = None
    mapping: dict[str, Raw] | None = None


class _LinkMessage(msgspec.Struct):
    author: _Author | None = None


class _LinkNode(msgspec.Struct):
    parent: str | None = None
    children: list[str] | None = None
    message: _LinkMessage | None = None


class _ConversationHead(msgspec.Struct):
    """What a listing needs: identity, times, and the tree's shape (no content)."""

    id: str | None = None
    conversation_id: str | None = None
    title: str | None = None
    create_time: Raw = NO_RAW
    update_time: Raw = NO_RAW
    current_node: str | None = None
    mapping: dict[str, _LinkNode] | None = None


class _Content(msgspec.Struct):
    """The fields of a message's ``content`` this adapter reads (kept raw: types vary)."""

    content_type: Raw = NO_RAW
    parts: list[Raw] | None = None
    thoughts: Raw = NO_RAW
    text: Raw = NO_RAW
    result: Raw = NO_RAW
    content: Raw = NO_RAW
    summary: Raw = NO_RAW
    title: Raw = NO_RAW
    url: Raw = NO_RAW
    user_profile: Raw = NO_RAW
    user_instructions: Raw = NO_RAW
    model_set_context: Raw = NO_RAW


class _Finish(msgspec.Struct):
    type: Raw = NO_RAW


class _Aggregate(msgspec.Struct):
    status: Raw = NO_RAW


class _Metadata(msgspec.Struct):
    """The fields of a message's ``metadata`` this adapter reads."""

    model_slug: Raw = NO_RAW
    finish_details: Raw = NO_RAW
    is_visually_hidden_from_conversation: Raw = NO_RAW
    is_user_system_message: Raw = NO_RAW
    status: Raw = NO_RAW
    aggregate_result: Raw = NO_RAW


class _Part(msgspec.Struct):
    content_type: Raw = NO_RAW
    asset_pointer: Raw = NO_RAW
    text: Raw = NO_RAW


class _Thought(msgspec.Struct):
    summary: str | None = None
    content: str | None = None


_decode_conversation = msgspec.json.Decoder(_Conversation).decode
_decode_head = msgspec.json.Decoder(_ConversationHead).decode
_decode_node = msgspec.json.Decoder(_Node).decode
_decode_thoughts = msgspec.json.Decoder(list[_Thought]).decode
_decode_content = msgspec.json.Decoder(_Content).decode
_decode_metadata = msgspec.json.Decoder(_Metadata).decode
_decode_finish = msgspec.json.Decoder(_Finish).decode
_decode_aggregate = msgspec.json.Decoder(_Aggregate).decode
_decode_part = msgspec.json.Decoder(str | _Part | None).decode
_EMPTY_CONTENT: Final = _Content()
_EMPTY_METADATA: Final = _Metadata()


def _struct(decode: Callable[[Raw], Any], raw: Raw, empty: Any) -> Any:
    """Decode an object field leniently: *empty* for an absent or malformed one."""
    if not raw:
        return empty
    try:
        return decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return empty


#: Content types whose every field this adapter maps (others also keep ``content`` verbatim).
_KNOWN_CONTENT: Final = frozenset(
    {
        "text",
        "multimodal_text",
        "code",
        "execution_output",
        "tether_browsing_display",
        "tether_quote",
        "system_error",
        "thoughts",
        "reasoning_recap",
        "user_editable_context",
        "model_editable_context",
        "sonic_webpage",
    }
)

#: Where the text of each known content type lives (``parts`` is read for any type).
_TEXT_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "code": ("text",),
    "execution_output": ("text",),
    "tether_browsing_display": ("result", "summary"),
    "tether_quote": ("title", "text"),
    "system_error": ("text",),
    "reasoning_recap": ("content",),
    "user_editable_context": ("user_profile", "user_instructions"),
    "model_editable_context": ("model_set_context",),
    "sonic_webpage": ("title", "text"),
}
_FALLBACK_TEXT_FIELDS: Final = ("text", "result", "content", "summary")

#: Tools (a message's ``recipient``, a tool message's author name) by ACP kind;
#: matched on the name, then on its namespace before the first dot.
TOOL_KINDS: Final[dict[str, str]] = {
    "python": ToolKind.EXECUTE,
    "container": ToolKind.EXECUTE,
    "computer": ToolKind.EXECUTE,
    "browser": ToolKind.FETCH,
    "web": ToolKind.FETCH,
    "file_search": ToolKind.SEARCH,
    "myfiles_browser": ToolKind.READ,
    "canmore": ToolKind.EDIT,
    "bio": ToolKind.EDIT,
}


def _tool_kind(name: str) -> str:
    kind = TOOL_KINDS.get(name)
    if kind is None:
        kind = TOOL_KINDS.get(name.split(".", 1)[0], ToolKind.OTHER)
    return kind


def _same_tool(call: str, author: str) -> bool:
    """Does a tool message by *author* answer a call addressed to *call*?"""
    if not author or call == author:
        return True
    return call.startswith(author + ".") or author.startswith(call + ".")


class _Call:
    __slots__ = ("id", "name")

    def __init__(self, call_id: str, name: str) -> None:
        self.id = call_id
        self.name = name


class ChatGPTAdapter(BaseDocumentAdapter):
    """Parses ChatGPT data exports (``conversations.json``, the export ZIP, per-conversation JSON)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = ""
    containers: ClassVar[frozenset[str]] = frozenset({"json", "zip"})
    zip_member: ClassVar[str] = "conversations.json"

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        start = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
        if start not in (b"[", b"{") or b'"mapping"' not in head:
            return Confidence.NO_MATCH
        if b'"current_node"' in head or (b'"author"' in head and b'"content_type"' in head):
            return Confidence.CERTAIN
        return Confidence.POSSIBLE

    # -- the document --------------------------------------------------------

    def _conversations(self, doc: Document) -> list[Raw]:
        return split_export(self, doc.payload(), "ChatGPT export")

    def conversations(self, doc: Document) -> list[ConversationInfo]:
        listed = []
        for i, raw in enumerate(self._conversations(doc), 1):
            try:
                head = _decode_head(raw)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise self.error(f"conversation #{i} is malformed: {exc}", 0) from None
            mapping = head.mapping or {}
            messages = 0
            for node_id in _active_path(mapping, head.current_node):
                node = mapping[node_id]
                role = node.message.author.role if node.message and node.message.author else None
                if role in ("user", "assistant", "tool"):
                    messages += 1
            listed.append(
                ConversationInfo(
                    id=head.conversation_id or head.id or f"#{i}",
                    title=head.title or "",
                    created=epoch_rfc3339(head.create_time),
                    updated=epoch_rfc3339(head.update_time),
                    messages=messages,
                )
            )
        return listed

    def sessions(self, doc: Document, only: str | None = None) -> Iterator[DocumentSession]:
        for i, raw in enumerate(self._conversations(doc), 1):
            try:
                conv = _decode_conversation(raw)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise self.error(f"conversation #{i} is malformed: {exc}", 0) from None
            conv_id = conv.conversation_id or conv.id or f"#{i}"
            if only is not None and conv_id != only:
                continue
            yield self._session(conv, conv_id)

    # -- one conversation ------------------------------------------------------

    def _session(self, conv: _Conversation, conv_id: str) -> DocumentSession:
        skipped = self.begin(conv_id)
        raw_nodes = conv.mapping or {}
        nodes: dict[str, tuple[int, Raw, _Node]] = {}
        for n, (key, raw) in enumerate(raw_nodes.items(), 1):
            try:
                node = _decode_node(raw)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise self.error(f"malformed node {key}: {exc}", n) from None
            nodes[key] = (n, raw, node)
        links = {k: _LinkNode(parent=v[2].parent, children=v[2].children) for k, v in nodes.items()}
        path = _active_path(links, conv.current_node)
        on_path = set(path)
        for key, (n, _, _) in nodes.items():
            if key not in on_path:
                self.skip("off_branch", n)
        state = _State(conv_id)
        for key in path:
            n, raw, node = nodes[key]
            self._node(state, key, n, raw, node)
        state.flush_thinking(self)
        events = state.events
        meta = Event(
            kind=EventKind.SESSION_META,
            timestamp=epoch_rfc3339(conv.create_time),
            provenance=events[0].provenance if events else None,
            session_meta=Meta(
                harness=HARNESS,
                harness_version=self.options.harness_version,
                session_id=conv_id,
            ),
        )
        info = ConversationInfo(
            id=conv_id,
            title=conv.title or "",
            created=meta.timestamp,
            updated=epoch_rfc3339(conv.update_time),
            messages=state.messages,
        )
        return DocumentSession(conversation=info, events=[meta, *events], skipped=skipped)

    def _node(self, state: _State, key: str, n: int, raw: Raw, node: _Node) -> None:
        msg = node.message
        if msg is None:
            self.skip("root" if node.parent is None else "empty/node", n)
            return
        role = (msg.author.role if msg.author else None) or ""
        content: _Content = _struct(_decode_content, msg.content, _EMPTY_CONTENT)
        ctype = as_str(content.content_type)
        meta: _Metadata = _struct(_decode_metadata, msg.metadata, _EMPTY_METADATA)
        ts = epoch_rfc3339(msg.create_time)
        msg_id = msg.id or key
        parent = node.parent or ""
        prov = self.record_prov(raw, n)

        def event(kind: str, **payload: Any) -> Event:
            return Event(
                kind=kind, timestamp=ts, id=msg_id, parent_id=parent, provenance=prov, **payload
            )

        if role == "user":
            blocks = _blocks(ctype, content, msg.content)
            if not blocks:
                self.skip("empty/user", n)
                return
            state.flush_thinking(self)
            state.calls.clear()
            state.messages += 1
            harness = (
                ctype == "user_editable_context"
                or as_bool(meta.is_visually_hidden_from_conversation)
                or as_bool(meta.is_user_system_message)
            )
            origin = Origin.HARNESS if harness else Origin.HUMAN
            state.events.append(
                event(
                    EventKind.USER_MESSAGE, user_message=UserMessage(origin=origin, content=blocks)
                )
            )
        elif role == "system":
            blocks = _blocks(ctype, content, msg.content)
            if not blocks:
                self.skip("empty/system", n)
                return
            state.flush_thinking(self)
            state.events.append(
                event(
                    EventKind.SYSTEM,
                    system=SystemEvent(
                        subtype=f"system/{ctype or 'unknown'}",
                        text=_text(blocks),
                        details=msg.content,
                    ),
                )
            )
        elif role == "assistant":
            self._assistant(state, msg, ctype, content, meta, n, event)
        elif role == "tool":
            self._tool(state, msg, ctype, content, meta, n, event)
        else:
            state.flush_thinking(self)
            state.events.append(
                self.unknown_or_fail(role, bytes(raw), n, f'unrecognized author role "{role}"')
            )

    def _assistant(
        self,
        state: _State,
        msg: _Message,
        ctype: str,
        content: _Content,
        meta: _Metadata,
        n: int,
        event: _EventFactory,
    ) -> None:
        if ctype == "reasoning_recap":
            self.skip("reasoning_recap", n)
            return
        if ctype == "thoughts":
            thoughts = _thoughts(content)
            if not thoughts:
                self.skip("empty/thoughts", n)
                return
            for text in thoughts:
                state.thinking.append(event(EventKind.THINKING, thinking=Thinking(text=text)))
            return
        msg_id = msg.id or ""
        model = as_str(meta.model_slug)
        stop = as_str(_struct(_decode_finish, meta.finish_details, _Finish()).type)
        recipient = msg.recipient or "all"
        if recipient != "all":
            state.take_thinking(msg_id)
            state.calls.append(_Call(msg_id, recipient))
            state.events.append(
                event(
                    EventKind.TOOL_CALL,
                    message_id=msg_id,
                    tool_call=ToolCall(
                        tool_call_id=msg_id,
                        name=recipient,
                        kind=_tool_kind(recipient),
                        input=msg.content,
                    ),
                )
            )
            blocks = None
        else:
            blocks = _blocks(ctype, content, msg.content)
            if not blocks and not state.thinking:
                self.skip("empty/assistant", n)
                return
            state.take_thinking(msg_id)
        state.messages += 1
        state.events.append(
            event(
                EventKind.ASSISTANT_MESSAGE,
                message_id=msg_id,
                assistant_message=AssistantMessage(
                    model=model, content=blocks or None, stop_reason=stop
                ),
            )
        )

    def _tool(
        self,
        state: _State,
        msg: _Message,
        ctype: str,
        content: _Content,
        meta: _Metadata,
        n: int,
        event: _EventFactory,
    ) -> None:
        state.flush_thinking(self)
        author = (msg.author.name if msg.author else None) or ""
        call = next((c for c in reversed(state.calls) if _same_tool(c.name, author)), None)
        if call is None and state.calls:  # a tool naming itself unlike the call's recipient
            call = state.calls[-1]
        status = as_str(meta.status)
        aggregate = as_str(_struct(_decode_aggregate, meta.aggregate_result, _Aggregate()).status)
        is_error = (
            ctype == "system_error"
            or status in ("failed", "error")
            or aggregate
            in (
                "failed",
                "error",
                "failed_with_in_kernel_exception",
            )
        )
        url = as_str(content.url)
        state.messages += 1
        state.events.append(
            event(
                EventKind.TOOL_RESULT,
                tool_result=ToolResult(
                    tool_call_id=call.id if call else "",
                    tool_name=author or (call.name if call else ""),
                    is_error=is_error,
                    content=_blocks(ctype, content, msg.content) or None,
                    fetch=FetchInfo(url=url) if url else None,
                    enrichment=msg.metadata if len(msg.metadata) > 2 else NO_RAW,
                ),
            )
        )


class _State:
    """Per-conversation parsing state along the active branch."""

    __slots__ = ("calls", "conversation_id", "events", "messages", "thinking")

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self.events: list[Event] = []
        self.thinking: list[Event] = []
        self.calls: list[_Call] = []
        self.messages = 0

    def take_thinking(self, message_id: str) -> None:
        """Emit held thinking as part of the assistant message *message_id*."""
        for ev in self.thinking:
            ev.message_id = message_id
        self.events.extend(self.thinking)
        self.thinking = []

    def flush_thinking(self, adapter: ChatGPTAdapter) -> None:
        """Thinking with no answer after it: emit it with an empty assistant message of its own."""
        if not self.thinking:
            return
        first = self.thinking[0]
        self.take_thinking(first.id)
        self.messages += 1
        self.events.append(
            Event(
                kind=EventKind.ASSISTANT_MESSAGE,
                timestamp=first.timestamp,
                id=first.id,
                parent_id=first.parent_id,
                message_id=first.id,
                provenance=self.events[-1].provenance,
                assistant_message=AssistantMessage(),
            )
        )


def _active_path(mapping: dict[str, _LinkNode], current: str | None) -> list[str]:
    """Node ids from the root down to *current* (or, without it, to the newest leaf)."""
    if not mapping:
        return []
    if current is None or current not in mapping:
        roots = [k for k, v in mapping.items() if v.parent is None or v.parent not in mapping]
        current = roots[0] if roots else next(iter(mapping))
        seen = {current}
        while True:
            children = [c for c in (mapping[current].children or ()) if c in mapping]
            if not children or children[-1] in seen:
                break
            current = children[-1]
            seen.add(current)
    path: list[str] = []
    seen = set()
    node_id: str | None = current
    while node_id is not None and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        path.append(node_id)
        node_id = mapping[node_id].parent
    path.reverse()
    return path


def _thoughts(content: _Content) -> list[str]:
    raw = content.thoughts
    if not raw:
        return []
    try:
        thoughts = _decode_thoughts(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return []
    out = []
    for t in thoughts:
        parts = [p for p in (t.summary, t.content) if p]
        if parts:
            out.append("\n\n".join(parts))
    return out


def _blocks(ctype: str, content: _Content, raw: Raw) -> list[ContentBlock]:
    """The content blocks of a message's ``content`` object."""
    blocks: list[ContentBlock] = []
    for part in content.parts or ():
        try:
            value = _decode_part(part)
        except (msgspec.DecodeError, msgspec.ValidationError):
            blocks.append(ContentBlock(kind="other", raw=part))
            continue
        if isinstance(value, str):
            if value:
                blocks.append(ContentBlock(kind="text", text=value))
        elif value is not None:
            ptype = as_str(value.content_type)
            if ptype == "image_asset_pointer":
                uri = as_str(value.asset_pointer)
                blocks.append(ContentBlock(kind="image", uri=uri, raw=part))
            elif ptype == "audio_transcription":
                text = as_str(value.text)
                if text:
                    blocks.append(ContentBlock(kind="text", text=text))
            else:
                blocks.append(ContentBlock(kind="other", raw=part))
    for key in _TEXT_FIELDS.get(ctype, () if ctype in _KNOWN_CONTENT else _FALLBACK_TEXT_FIELDS):
        text = as_str(getattr(content, key))
        if text:
            blocks.append(ContentBlock(kind="text", text=text))
    if ctype == "thoughts":
        blocks.extend(ContentBlock(kind="text", text=t) for t in _thoughts(content))
    if ctype not in _KNOWN_CONTENT and raw:
        blocks.append(ContentBlock(kind="other", raw=raw))
    return blocks


def _text(blocks: list[ContentBlock]) -> str:
    return "\n".join(b.text for b in blocks if b.text)
