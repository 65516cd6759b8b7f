"""The Copilot CLI records as msgspec decodes them: envelope, ``data`` payloads, decoders."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import msgspec
from msgspec import Raw

from agentminutes.schema import NO_RAW

# -- record shapes ---------------------------------------------------------------


class _Envelope(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """The envelope. A key it does not list sends the line to Go's rules (``_envelope_go``)."""

    type: str | None = None
    data: Raw = NO_RAW
    id: str | None = None
    timestamp: str | None = None
    parent_id: str | None = None
    agent_id: str | None = None


class _Data(msgspec.Struct, rename="camel"):
    """Base of the ``data`` payloads that are read (exact keys; others are ignored)."""


class _Context(_Data):
    cwd: str | None = None
    branch: str | None = None


class _SessionStart(_Data):
    session_id: str | None = None
    copilot_version: str | None = None
    context: _Context | None = None


class _UserMessage(_Data):
    content: str | None = None
    source: str | None = None


class _SystemMessage(_Data):
    role: str | None = None
    content: str | None = None


class _ToolRequest(_Data):
    tool_call_id: str | None = None
    name: str | None = None
    arguments: Raw = NO_RAW


class _TextPart(_Data):
    type: str | None = None
    text: str | None = None


class _ReasoningBlock(msgspec.Struct):
    type: str | None = None
    thinking: str | None = None
    signature: str | None = None
    encrypted_content: str | None = None
    content: list[_TextPart | None] | None = None
    summary: list[_TextPart | None] | None = None


class _Reasoning(_Data):
    provider: str | None = None
    blocks: list[_ReasoningBlock | None] | None = None


class _AssistantMessage(_Data):
    message_id: str | None = None
    model: str | None = None
    content: str | None = None
    reasoning_text: str | None = None
    reasoning_opaque: str | None = None
    tool_requests: list[_ToolRequest | None] | None = None
    reasoning_blocks: _Reasoning | None = None


class _Binary(_Data):
    type: str | None = None
    mime_type: str | None = None


class _Result(_Data):
    content: Raw = NO_RAW
    binary_results_for_llm: list[Raw] | None = None


class _Shell(_Data):
    exit_code: int | None = None


class _Error(_Data):
    message: str | None = None
    code: str | None = None


class _Restricted(_Data):
    url: str | None = None


class _Metrics(_Data):
    http_status_code: int | None = None


class _Telemetry(_Data):
    restricted_properties: _Restricted | None = None
    metrics: _Metrics | None = None


class _ToolExecution(_Data):
    tool_call_id: str | None = None
    tool_name: str | None = None
    success: bool | None = None
    result: _Result | None = None
    shell_execution: _Shell | None = None
    error: _Error | None = None
    tool_telemetry: _Telemetry | None = None


class _Abort(_Data):
    reason: str | None = None


class _Info(_Data):
    message: str | None = None


class _Content(_Data):
    content: str | None = None


class _ContentRef(_Data):
    content_id: str | None = None


class _Delivered(_Data):
    content_id: str | None = None
    prefix: str | None = None
    suffix: str | None = None


class _Head(msgspec.Struct, rename="camel"):
    type: str | None = None
    id: str | None = None
    timestamp: str | None = None
    parent_id: Raw = NO_RAW
    data: _HeadData | None = None


class _HeadData(msgspec.Struct, rename="camel"):
    session_id: str | None = None
    producer: str | None = None
    copilot_version: str | None = None


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_head = msgspec.json.Decoder(_Head).decode
_decode_str = msgspec.json.Decoder(str | None).decode
_decode_binary = msgspec.json.Decoder(_Binary | None).decode
_DECODERS: Final[dict[type, Callable[[Raw], Any]]] = {
    shape: msgspec.json.Decoder(shape | None).decode
    for shape in (
        _SessionStart,
        _UserMessage,
        _SystemMessage,
        _AssistantMessage,
        _ToolExecution,
        _Abort,
        _Info,
        _Content,
        _ContentRef,
        _Delivered,
    )
}
