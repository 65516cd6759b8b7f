"""The ChatGPT export adapter: each conversation's active branch, node by node, into events."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._export import ExportAdapter, as_bool, as_str, epoch_rfc3339
from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import BOM, Confidence, ConversationInfo, DocumentSession
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    FetchInfo,
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
from agentminutes.harness.chatgpt.records import (
    _EMPTY_CONTENT,
    _EMPTY_METADATA,
    _Aggregate,
    _Content,
    _Conversation,
    _decode_aggregate,
    _decode_content,
    _decode_conversation,
    _decode_finish,
    _decode_head,
    _decode_metadata,
    _decode_node,
    _Finish,
    _LinkNode,
    _Message,
    _Metadata,
    _Node,
    _struct,
)
from agentminutes.harness.chatgpt.tree import _active_path, _blocks, _Call, _State, _text, _thoughts

__all__ = ("ChatGPTAdapter",)


HARNESS: Final = "chatgpt"

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


class ChatGPTAdapter(ExportAdapter):
    """Parses ChatGPT data exports (``conversations.json``, the export ZIP, per-conversation JSON)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = ""
    export_name: ClassVar[str] = "ChatGPT export"

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        start = head.lstrip(BOM + b" \t\r\n")[:1]
        if start not in (b"[", b"{") or b'"mapping"' not in head:
            return Confidence.NO_MATCH
        if b'"current_node"' in head or (b'"author"' in head and b'"content_type"' in head):
            return Confidence.CERTAIN
        return Confidence.POSSIBLE

    # -- the document --------------------------------------------------------

    def conversations(self, doc: Document) -> list[ConversationInfo]:
        listed = []
        for i, head in self.exported(doc, _decode_head):
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
        for i, conv in self.exported(doc, _decode_conversation):
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
        state.flush_thinking()
        created = epoch_rfc3339(conv.create_time)
        events = self.with_session_meta(state.events, conv_id, created)
        info = ConversationInfo(
            id=conv_id,
            title=conv.title or "",
            created=created,
            updated=epoch_rfc3339(conv.update_time),
            messages=state.messages,
        )
        return DocumentSession(conversation=info, events=events, skipped=skipped)

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
        prov = self.record_prov(raw, n)
        said = Stamp(ts, prov, id=msg.id or key, parent_id=node.parent or "")

        if role in ("user", "system"):  # their content, or a counted skip when it has none
            blocks = _blocks(ctype, content, msg.content)
            if not blocks:
                self.skip(f"empty/{role}", n)
                return
            state.flush_thinking()
        if role == "user":
            state.calls.clear()
            state.messages += 1
            harness = (
                ctype == "user_editable_context"
                or as_bool(meta.is_visually_hidden_from_conversation)
                or as_bool(meta.is_user_system_message)
            )
            origin = Origin.HARNESS if harness else Origin.HUMAN
            state.events.append(said.user_message(UserMessage(origin=origin, content=blocks)))
        elif role == "system":
            subtype = f"system/{ctype or 'unknown'}"
            system = SystemEvent(subtype=subtype, text=_text(blocks), details=msg.content)
            state.events.append(said.system(system))
        elif role == "assistant":
            self._assistant(state, msg, ctype, content, meta, n, said)
        elif role == "tool":
            self._tool(state, msg, ctype, content, meta, n, said)
        else:
            state.flush_thinking()
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
        said: Stamp,
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
                state.thinking.append(said.thinking(Thinking(text=text)))
            return
        msg_id = msg.id or ""
        model = as_str(meta.model_slug)
        stop = as_str(_struct(_decode_finish, meta.finish_details, _Finish()).type)
        recipient = msg.recipient or "all"
        if recipient != "all":
            state.take_thinking(msg_id)
            state.calls.append(_Call(msg_id, recipient))
            call = ToolCall(
                tool_call_id=msg_id, name=recipient, kind=_tool_kind(recipient), input=msg.content
            )
            state.events.append(replace(said, message_id=msg_id).tool_call(call))
            blocks = None
        else:
            blocks = _blocks(ctype, content, msg.content)
            if not blocks and not state.thinking:
                self.skip("empty/assistant", n)
                return
            state.take_thinking(msg_id)
        state.messages += 1
        reply = AssistantMessage(model=model, content=blocks or None, stop_reason=stop)
        state.events.append(replace(said, message_id=msg_id).assistant_message(reply))

    def _tool(
        self,
        state: _State,
        msg: _Message,
        ctype: str,
        content: _Content,
        meta: _Metadata,
        n: int,
        said: Stamp,
    ) -> None:
        state.flush_thinking()
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
        result = ToolResult(
            tool_call_id=call.id if call else "",
            tool_name=author or (call.name if call else ""),
            is_error=is_error,
            content=_blocks(ctype, content, msg.content) or None,
            fetch=FetchInfo(url=url) if url else None,
            enrichment=msg.metadata if len(msg.metadata) > 2 else NO_RAW,
        )
        state.events.append(said.tool_result(result))
