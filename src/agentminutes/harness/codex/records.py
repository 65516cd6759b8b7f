"""The Codex records as msgspec decodes them: Structs, decoders, readers of verbatim values."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import Raw

from agentminutes.harness.codex.vocabulary import _QUOTE
from agentminutes.schema import NO_RAW

_DecodeErrors = (msgspec.DecodeError, msgspec.ValidationError)

# ---------------------------------------------------------------------------
# Native shapes. Only the fields that steer parsing are typed; bulky parts
# stay msgspec.Raw and are copied through verbatim.


class _Envelope(msgspec.Struct):
    timestamp: str | None = None
    type: str | None = None
    payload: Raw = NO_RAW


class _Git(msgspec.Struct):
    branch: str | None = None


class _SessionMeta(msgspec.Struct):
    session_id: str | None = None
    id: str | None = None
    cwd: str | None = None
    cli_version: str | None = None
    thread_source: str | None = None
    git: _Git | None = None
    base_instructions: Raw = NO_RAW


class _BaseInstructionsOnly(msgspec.Struct):
    base_instructions: Raw = NO_RAW


class _Instructions(msgspec.Struct):
    text: str | None = None


class _TurnContext(msgspec.Struct):
    model: str | None = None


class _Info(msgspec.Struct):
    last_token_usage: Raw = NO_RAW


class _EventMsg(msgspec.Struct):
    type: str | None = None
    message: str | None = None
    info: _Info | None = None


class _Usage(msgspec.Struct):
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_input_tokens: int | None = None
    output_tokens: int | None = None


class _Item(msgspec.Struct):
    """A ``response_item`` payload (or a bare legacy line) as the reference types it."""

    type: str | None = None
    role: str | None = None
    encrypted_content: str | None = None
    id: str | None = None
    call_id: str | None = None
    name: str | None = None
    input: str | None = None
    arguments: str | None = None
    status: str | None = None
    success: bool | None = None
    content: Raw = NO_RAW
    summary: Raw = NO_RAW
    output: Raw = NO_RAW
    action: Raw = NO_RAW


class _ToolSearchCall(msgspec.Struct):
    """``tool_search_call``: its ``arguments`` are an object (0.140+)."""

    id: str | None = None
    call_id: str | None = None
    arguments: Raw = NO_RAW


class _ItemExtras(msgspec.Struct):
    """Fields of item types the reference does not know."""

    tools: Raw = NO_RAW
    revised_prompt: Raw = NO_RAW


class _Block(msgspec.Struct):
    type: str | None = None
    text: str | None = None


class _OutputObject(msgspec.Struct):
    content: str | None = None
    output: str | None = None


class _ExitCode(msgspec.Struct):
    exit_code: int | None = None


class _OutputMetadata(msgspec.Struct):
    metadata: _ExitCode | None = None


class _Probe(msgspec.Struct):
    """The first record, read leniently to tell the transcript shape."""

    type: Raw = NO_RAW
    payload: Raw = NO_RAW
    id: Raw = NO_RAW
    timestamp: Raw = NO_RAW
    instructions: Raw = NO_RAW
    thread_id: Raw = NO_RAW
    log_type: Raw = NO_RAW
    command: Raw = NO_RAW
    data: Raw = NO_RAW


class _SniffPayload(msgspec.Struct):
    id: str | None = None
    session_id: str | None = None
    cli_version: str | None = None


class _SniffLine(msgspec.Struct):
    type: str | None = None
    timestamp: str | None = None
    payload: _SniffPayload | None = None


class _LegacyMeta(msgspec.Struct):
    id: str | None = None
    timestamp: str | None = None
    instructions: Raw = NO_RAW
    git: _Git | None = None


class _LegacyLine(msgspec.Struct):
    type: str | None = None
    record_type: str | None = None
    payload: Raw = NO_RAW


class _ExecEvent(msgspec.Struct):
    type: str | None = None
    thread_id: str | None = None
    message: str | None = None
    item: Raw = NO_RAW
    usage: Raw = NO_RAW
    error: Raw = NO_RAW


class _ExecError(msgspec.Struct):
    message: str | None = None


class _ExecItem(msgspec.Struct):
    id: str | None = None
    type: str | None = None
    item_type: str | None = None
    text: str | None = None
    message: str | None = None
    command: Raw = NO_RAW
    aggregated_output: str | None = None
    exit_code: int | None = None
    status: str | None = None
    changes: Raw = NO_RAW
    query: str | None = None
    action: Raw = NO_RAW
    server: str | None = None
    tool: str | None = None
    arguments: Raw = NO_RAW
    result: Raw = NO_RAW
    error: Raw = NO_RAW
    items: Raw = NO_RAW


class _McpResult(msgspec.Struct):
    content: Raw = NO_RAW


class _Wrapped(msgspec.Struct):
    log_type: str | None = None
    timestamp_unix: float | None = None
    data: Raw = NO_RAW


class _WrapHeader(msgspec.Struct):
    workspace: str | None = None
    prompt: str | None = None
    timestamp_unix: float | None = None


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_session_meta = msgspec.json.Decoder(_SessionMeta).decode
_decode_base_only = msgspec.json.Decoder(_BaseInstructionsOnly).decode
_decode_instructions = msgspec.json.Decoder(_Instructions).decode
_decode_turn_context = msgspec.json.Decoder(_TurnContext).decode
_decode_event_msg = msgspec.json.Decoder(_EventMsg).decode
_decode_usage = msgspec.json.Decoder(_Usage).decode
_decode_item = msgspec.json.Decoder(_Item).decode
_decode_tool_search = msgspec.json.Decoder(_ToolSearchCall).decode
_decode_extras = msgspec.json.Decoder(_ItemExtras).decode
_decode_blocks = msgspec.json.Decoder(str | list[_Block | None] | None).decode
_decode_raw_list = msgspec.json.Decoder(list[Raw]).decode
_decode_output_object = msgspec.json.Decoder(_OutputObject).decode
_decode_exit_code = msgspec.json.Decoder(_ExitCode).decode
_decode_output_metadata = msgspec.json.Decoder(_OutputMetadata).decode
_decode_str = msgspec.json.Decoder(str).decode
_decode_raw = msgspec.json.Decoder(Raw).decode
_decode_probe = msgspec.json.Decoder(_Probe).decode
_decode_sniff = msgspec.json.Decoder(_SniffLine).decode
_decode_legacy_meta = msgspec.json.Decoder(_LegacyMeta).decode
_decode_legacy_line = msgspec.json.Decoder(_LegacyLine).decode
_decode_exec = msgspec.json.Decoder(_ExecEvent).decode
_decode_exec_error = msgspec.json.Decoder(_ExecError).decode
_decode_exec_item = msgspec.json.Decoder(_ExecItem).decode
_decode_mcp_result = msgspec.json.Decoder(_McpResult).decode
_decode_wrapped = msgspec.json.Decoder(_Wrapped).decode
_decode_wrap_header = msgspec.json.Decoder(_WrapHeader).decode
_decode_str_list = msgspec.json.Decoder(list[Any]).decode
_encode = msgspec.json.encode


class _TypeOnly(msgspec.Struct):
    type: Raw = NO_RAW


_decode_type_only = msgspec.json.Decoder(_TypeOnly).decode


def _decode_item_type(payload: Raw | bytes) -> str:
    raw = _decode_type_only(payload).type
    return _decode_str(raw) if _lead(raw) == _QUOTE else ""


def _lead(raw: Raw) -> int:
    """The first byte of a verbatim JSON value (0 when absent)."""
    return memoryview(raw)[0] if raw else 0


def _raw_str(raw: Raw) -> str | None:
    if _lead(raw) != _QUOTE:
        return None
    try:
        return _decode_str(raw)
    except _DecodeErrors:
        return None
