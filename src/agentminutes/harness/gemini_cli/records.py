"""The Gemini CLI records as msgspec decodes them: messages, tool calls, their decoders.

The Gemini API's own shapes inside them (content parts) are :mod:`agentminutes.harness._gemini_wire`'s.
"""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec import Raw

from agentminutes.harness._gemini_wire import Part
from agentminutes.schema import NO_RAW


class _Record(msgspec.Struct, rename="camel"):
    """A JSONL line, a legacy document or one of its messages: the fields that steer parsing."""

    session_id: str | None = None
    project_hash: str | None = None
    start_time: str | None = None
    kind: str | None = None
    messages: Raw = NO_RAW
    id: str | None = None
    timestamp: str | None = None
    type: str | None = None
    content: Raw = NO_RAW
    parts: Raw = NO_RAW
    tool_calls: Raw = NO_RAW
    thoughts: Raw = NO_RAW
    tokens: Raw = NO_RAW
    model: str | None = None
    set: Raw = msgspec.field(default=NO_RAW, name="$set")
    rewind_to: str | None = msgspec.field(default=None, name="$rewindTo")


class _ToolCallRecord(msgspec.Struct, rename="camel"):
    id: str | None = None
    name: str | None = None
    args: Raw = NO_RAW
    result: Raw = NO_RAW
    status: str | None = None
    timestamp: str | None = None
    result_display: Raw = NO_RAW


class _Thought(msgspec.Struct):
    subject: str | None = None
    description: str | None = None
    timestamp: str | None = None


class _LogEntry(msgspec.Struct, rename="camel"):
    session_id: str | None = None
    message_id: int | str | None = None
    timestamp: str | None = None
    type: str | None = None
    message: str | None = None


class _ToolCheckpoint(msgspec.Struct, rename="camel"):
    client_history: Raw = NO_RAW
    history: Raw = NO_RAW
    tool_call: Raw = NO_RAW
    commit_hash: str | None = None
    message_id: str | None = None


class _Named(msgspec.Struct):
    name: str | None = None


_decode_record = msgspec.json.Decoder(_Record).decode
_decode_tool_calls = msgspec.json.Decoder(list[_ToolCallRecord] | None).decode
_decode_thoughts = msgspec.json.Decoder(list[_Thought] | None).decode
_decode_parts = msgspec.json.Decoder(str | list[Raw] | Part | None).decode
_decode_str = msgspec.json.Decoder(str).decode
_decode_fields = msgspec.json.Decoder(dict[str, Raw] | None).decode
_decode_number = msgspec.json.Decoder(int | float | None).decode
_decode_list = msgspec.json.Decoder(list[Raw] | None).decode
_decode_top = msgspec.json.Decoder(list[Raw] | dict[str, Raw]).decode
_decode_log_entry = msgspec.json.Decoder(_LogEntry).decode
_decode_tool_checkpoint = msgspec.json.Decoder(_ToolCheckpoint).decode
_decode_named = msgspec.json.Decoder(_Named).decode

_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)
