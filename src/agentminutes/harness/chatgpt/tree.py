"""Walking a conversation's message tree: the active branch, thoughts and content blocks."""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec import Raw

from agentminutes.harness._export import (
    as_str,
)
from agentminutes.harness.chatgpt.records import _Content, _decode_part, _decode_thoughts, _LinkNode
from agentminutes.schema import (
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
)

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


class _Call:
    __slots__ = ("id", "name")

    def __init__(self, call_id: str, name: str) -> None:
        self.id = call_id
        self.name = name


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

    def flush_thinking(self) -> None:
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
