"""Reading a Copilot envelope as the reference's Go decoder does, errors in Go's words included."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import msgspec

from agentminutes.harness._gojson import fold_fields, json_kind, normalize_line
from agentminutes.harness.copilot.records import (
    _AssistantMessage,
    _decode_envelope,
    _decode_str,
    _Envelope,
    _SessionStart,
    _SystemMessage,
    _ToolExecution,
    _UserMessage,
)
from agentminutes.schema import NO_RAW

_ENVELOPE_FIELDS: Final = frozenset({"type", "data", "id", "timestamp", "parentid", "agentid"})
_ENVELOPE_STRINGS: Final = frozenset({"type", "id", "timestamp", "parentid", "agentid"})
#: Go's struct name for each decoded payload, for type-error messages.
_GO_STRUCTS: Final[Mapping[type, str]] = {
    _SessionStart: "sessionStart",
    _UserMessage: "userMessage",
    _SystemMessage: "systemMessage",
    _AssistantMessage: "assistantMessage",
    _ToolExecution: "toolExecution",
}
_GOT: Final = {"int": "number", "float": "number", "str": "string"}
_EXPECTED: Final = re.compile(r"Expected `(.+?)`, got `(\w+)`(?: - at `\$(.*)`)?")


class _Bad(Exception):
    """A line that is not a readable envelope: the reason, and whether it is JSON at all."""

    def __init__(self, reason: str, is_json: bool) -> None:
        super().__init__(reason, is_json)
        self.reason = reason
        self.is_json = is_json


def _read_envelope(line: bytes) -> tuple[_Envelope, bytes] | None:
    """Decode an envelope as the reference reads it; ``None`` for a line of Unicode
    white space (blank to Go); raise :class:`_Bad` if it cannot."""
    try:
        try:
            env = _decode_envelope(line)
        except msgspec.ValidationError:
            # The typed decode stops at the first field it cannot take, before the
            # end of the line: reading it Go's way may still find it is not JSON.
            env = _envelope_go(line)
    except msgspec.DecodeError as exc:
        fixed = normalize_line(line)
        if fixed is None:
            raise _Bad(f"invalid JSON: {exc}", False) from None
        return _read_envelope(fixed) if fixed else None
    return env, line


def _envelope_go(line: bytes) -> _Envelope:
    """Read an envelope with Go's rules: keys in any letter case, Go's type errors."""
    try:
        fields = fold_fields(line, _ENVELOPE_FIELDS, _ENVELOPE_STRINGS)
    except msgspec.ValidationError:
        msg = f"json: cannot unmarshal {json_kind(line)} into Go value of type copilot.envelope"
        raise _Bad(f"invalid JSON: {msg}", True) from None
    if fields is None:
        return _Envelope()
    values: dict[str, Any] = {}
    for name, raw in fields.items():
        if name == "data":
            values["data"] = raw
            continue
        try:
            values[name] = _decode_str(raw)
        except msgspec.ValidationError:
            go_name = {"parentid": "parentId", "agentid": "agentId"}.get(name, name)
            msg = f"json: cannot unmarshal {json_kind(raw)} into Go struct field envelope.{go_name} of type string"
            raise _Bad(f"invalid JSON: {msg}", True) from None
    return _Envelope(
        type=values.get("type"),
        data=values.get("data", NO_RAW),
        id=values.get("id"),
        timestamp=values.get("timestamp"),
        parent_id=values.get("parentid"),
        agent_id=values.get("agentid"),
    )


def _go_message(shape: type, exc: Exception) -> str:
    """A msgspec decoding error in Go's words, as far as the message allows."""
    text = str(exc)
    m = _EXPECTED.match(text)
    if not isinstance(exc, msgspec.ValidationError) or m is None:
        return text
    expected, got, path = m.groups()
    kind = _GOT.get(got, got)
    struct = _GO_STRUCTS.get(shape, "")
    if not path:
        return f"json: cannot unmarshal {kind} into Go value of type copilot.{struct}"
    field = re.sub(r"\[\d+\]", "", path).lstrip(".")
    gotype = expected.replace(" | null", "")
    gotype = {"str": "string", "array": "[]", "object": "struct"}.get(gotype, gotype)
    return f"json: cannot unmarshal {kind} into Go struct field {struct}.{field} of type {gotype}"
