"""The Structs a ChatGPT export's conversations and nodes decode into, and their decoders."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import msgspec
from msgspec import Raw

from agentminutes.schema import (
    NO_RAW,
)


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


class _Identity(msgspec.Struct):
    """What a conversation and its listing both read: identity, title, times, current node."""

    id: str | None = None
    conversation_id: str | None = None
    title: str | None = None
    create_time: Raw = NO_RAW
    update_time: Raw = NO_RAW
    current_node: str | None = None


class _Conversation(_Identity):
    mapping: dict[str, Raw] | None = None


class _LinkMessage(msgspec.Struct):
    author: _Author | None = None


class _LinkNode(msgspec.Struct):
    parent: str | None = None
    children: list[str] | None = None
    message: _LinkMessage | None = None


class _ConversationHead(_Identity):
    """What a listing needs: identity, times, and the tree's shape (no content)."""

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
