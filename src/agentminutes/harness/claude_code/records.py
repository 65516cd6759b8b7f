"""The record Structs a Claude Code line decodes into, and their decoders (the fields that steer dispatch; bulky parts stay ``Raw``)."""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec import Raw

from agentminutes.harness._anthropic_wire import Block
from agentminutes.schema import NO_RAW


class _Rendered(msgspec.Struct):
    content: str | None = None


class _Origin(msgspec.Struct):
    kind: str | None = None


class _Record(msgspec.Struct, rename="camel"):
    """The fields of a record's envelope that steer parsing; bulky parts stay raw."""

    type: str | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    timestamp: str | None = None
    session_id: str | None = None
    version: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    is_sidechain: bool | None = None
    agent_id: str | None = None
    is_meta: bool | None = None
    is_compact_summary: bool | None = None
    subtype: str | None = None
    level: str | None = None
    name: str | None = None
    id: str | None = None
    tool_use_id: str | None = msgspec.field(default=None, name="tool_use_id")
    input: Raw = NO_RAW
    output: Raw = NO_RAW
    content: Raw = NO_RAW
    message: Raw = NO_RAW
    attachment: Raw = NO_RAW
    tool_use_result: Raw = NO_RAW
    is_api_error_message: bool | None = None
    origin: _Origin | None = None
    rendered: list[_Rendered | None] | None = None
    rendered_in_human_turn: list[_Rendered | None] | None = None


class _Message(msgspec.Struct):
    id: str | None = None
    model: str | None = None
    stop_reason: str | None = None
    content: Raw = NO_RAW
    usage: Raw = NO_RAW


_EMPTY_MESSAGE: Final = _Message()

#: A message's content block (the API's shape: :mod:`agentminutes.harness._anthropic_wire`).
_Block = Block


class _File(msgspec.Struct):
    content: str | None = None


class _Attachment(msgspec.Struct, rename="camel"):
    """The attachment fields a system event's text may come from.

    The string and list fields are typed (a wrong type makes the attachment
    malformed); ``content``, ``text`` and ``prompt`` take many shapes and are
    read loosely.
    """

    type: str | None = None
    content: Raw = NO_RAW
    text: Raw = NO_RAW
    prompt: Raw = NO_RAW
    snippet: str | None = None
    banner: str | None = None
    added_lines: list[str | None] | None = None
    added_blocks: list[str | None] | None = None
    system_prompt: list[str | None] | None = None
    files: list[_File | None] | None = None


class _Fetch(msgspec.Struct):
    url: str | None = None
    bytes: int | None = None
    code: int | None = None
    duration_ms: int | None = msgspec.field(default=None, name="durationMs")


_decode_record = msgspec.json.Decoder(_Record).decode
_decode_message = msgspec.json.Decoder(_Message | None).decode
_decode_block = msgspec.json.Decoder(_Block | None).decode
_decode_blocks = msgspec.json.Decoder(str | list[Raw] | None).decode
_decode_attachment = msgspec.json.Decoder(_Attachment).decode
_decode_usage = msgspec.json.Decoder(dict[str, Raw] | None).decode
_decode_int = msgspec.json.Decoder(int | None).decode
_decode_str = msgspec.json.Decoder(str).decode
_decode_fetch = msgspec.json.Decoder(_Fetch).decode


# -- the one-pass decode ------------------------------------------------------------------
#
# A conversation record decoded in one pass, its message and content blocks typed
# instead of kept raw: the adapter's fast path. The types of every field the
# adapter reads are those the step-by-step decoders above give it, so a record
# this decoder accepts is read exactly as they read it; anything it rejects (and
# any record whose blocks need their verbatim JSON) takes the step-by-step path.


class _FastBlock(_Block):
    """A content block whose own ``content`` (a tool result's) is decoded with it."""

    content: str | list[_Block | None] | msgspec.UnsetType | None = msgspec.UNSET  # type: ignore[assignment]


class _FastMessage(_Message):
    """A message with its content blocks and its usage map decoded with it."""

    content: str | list[_FastBlock | None] | msgspec.UnsetType | None = msgspec.UNSET  # type: ignore[assignment]
    usage: dict[str, Raw] | msgspec.UnsetType | None = msgspec.UNSET  # type: ignore[assignment]


class _FastRecord(_Record):
    """A record with its message decoded with it (absent: ``UNSET``)."""

    message: _FastMessage | msgspec.UnsetType | None = msgspec.UNSET  # type: ignore[assignment]


_decode_fast_record = msgspec.json.Decoder(_FastRecord).decode


# -- the lean decode ----------------------------------------------------------------------
#
# A projected read (``ParseOptions.kinds``) that wants no user messages, tool calls,
# tool results, thinking or system events reads a record's envelope, and of its
# message the id, model, stop reason, usage and content blocks as the step-by-step
# decoders give them (a tool result's own content stays raw: nobody reads it). A
# record this decoder refuses takes the one-pass, then the step-by-step path.


class _LeanMessage(_FastMessage):
    """A message whose blocks are decoded as :data:`_decode_block` decodes each one."""

    content: str | list[_Block | None] | msgspec.UnsetType | None = msgspec.UNSET  # type: ignore[assignment]


class _LeanRecord(_Record):
    """A record with its message decoded leanly with it (absent: ``UNSET``)."""

    message: _LeanMessage | msgspec.UnsetType | None = msgspec.UNSET  # type: ignore[assignment]


_decode_lean_record = msgspec.json.Decoder(_LeanRecord).decode


class _Kind(msgspec.Struct):
    """A record's type alone: a lean read's first look at a record it may pass over.

    Decoded, not searched for in the bytes: a type spelled with escapes is read
    as the adapter reads it, and a line that is no JSON fails here as it fails
    every decoder (msgspec passes over the other fields without building them).
    """

    type: str | None = None


_decode_kind = msgspec.json.Decoder(_Kind).decode
