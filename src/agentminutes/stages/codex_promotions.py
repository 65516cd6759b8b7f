"""Opt-in promotions of Codex telemetry into tool events (``--promote codex:…``).

Codex records some tool activity only as harness telemetry: ``event_msg``
records such as ``patch_apply_end`` and ``web_search_end``, and the
``item_completed`` records of the app-server item stream. The adapter keeps
them as ``system`` events; these stages replace each one with a
``tool_call`` and its ``tool_result``, both marked ``promoted_from`` and both
keeping the system event's timestamp and provenance, so line accounting holds.

Payloads are read leniently, the way the reference does: a field of the wrong
type is as good as absent, and keys match case-insensitively.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import msgspec
from msgspec import Raw

from agentminutes.errors import UsageError
from agentminutes.harness.codex import HARNESS
from agentminutes.pipeline.batch import Stage, per_event
from agentminutes.schema import (
    NO_RAW,
    Event,
    EventKind,
    ToolCall,
    ToolKind,
    ToolResult,
)

__all__ = ("PATCH_APPLY", "WEB_SEARCH", "patch_apply", "web_search")

PATCH_APPLY: Final = "codex:patch-apply"
WEB_SEARCH: Final = "codex:web-search"

_decode_fields = msgspec.json.Decoder(dict[str, Raw]).decode
_decode_str = msgspec.json.Decoder(str).decode
_RAW_NULL: Final = Raw(b"null")
_RAW_TRUE: Final = Raw(b"true")

Fields = dict[str, Raw]
#: Build the replacement pair for a system event's payload, or None to keep it.
Rule = Callable[[Fields, int], "tuple[str, str, str, str, Raw, bool] | None"]


def _fields(raw: Raw) -> Fields | None:
    """An object's members (verbatim), or None when *raw* is not an object."""
    if not raw or memoryview(raw)[0] != ord("{"):
        return None
    try:
        return _decode_fields(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _get(fields: Fields, name: str) -> Raw:
    """Member *name*, matched as Go does: the last key equal to it ignoring case."""
    found = fields.get(name, NO_RAW)
    if len(fields) > 1 or not found:
        for key, value in fields.items():
            if key == name or key.lower() == name:
                found = value
    return found


def _str(fields: Fields, name: str) -> str:
    raw = _get(fields, name)
    if not raw or memoryview(raw)[0] != ord('"'):
        return ""
    try:
        return _decode_str(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return ""


def _item(fields: Fields) -> Fields | None:
    return _fields(_get(fields, "item"))


def _patch_apply_end(p: Fields, line: int) -> tuple[str, str, str, str, Raw, bool] | None:
    success = _get(p, "success")
    failed = bool(success) and success != _RAW_NULL and success != _RAW_TRUE
    call_id = _str(p, "call_id") or f"patch_apply_end:L{line}"
    return (
        call_id,
        "apply_patch",
        ToolKind.EDIT,
        "event_msg/patch_apply_end",
        _get(p, "changes"),
        failed,
    )


def _file_change(p: Fields, line: int) -> tuple[str, str, str, str, Raw, bool] | None:
    item = _item(p)
    if item is None or _str(item, "type") != "FileChange":
        return None
    status = _str(item, "status")
    call_id = _str(item, "id") or f"item_completed:L{line}"
    return (
        call_id,
        "apply_patch",
        ToolKind.EDIT,
        "event_msg/item_completed/FileChange",
        _get(item, "changes"),
        bool(status) and status != "completed",
    )


def _web_search_end(p: Fields, line: int) -> tuple[str, str, str, str, Raw, bool] | None:
    call_id = _str(p, "call_id") or f"web_search_end:L{line}"
    return (
        call_id,
        "web_search",
        ToolKind.FETCH,
        "event_msg/web_search_end",
        _get(p, "action"),
        False,
    )


def _web_search_item(p: Fields, line: int) -> tuple[str, str, str, str, Raw, bool] | None:
    item = _item(p)
    if item is None or _str(item, "type") != "Extension" or _str(item, "kind") != "web.search":
        return None
    call_id = _str(item, "id") or f"item_completed:L{line}"
    return (
        call_id,
        "web_search",
        ToolKind.FETCH,
        "event_msg/item_completed/Extension",
        _get(item, "action"),
        False,
    )


def _promotion(name: str, rules: dict[str, Rule]) -> Stage:
    checked = False

    def promote(ev: Event) -> Event | list[Event]:
        nonlocal checked
        if not checked and ev.session_meta is not None:
            checked = True
            harness = ev.session_meta.harness
            if harness and harness != HARNESS:
                raise UsageError(
                    f'promotion "{name}" applies to {HARNESS} transcripts, not {harness}'
                )
        sys_ev = ev.system
        if sys_ev is None:
            return ev
        rule = rules.get(sys_ev.subtype)
        if rule is None:
            return ev
        line = ev.provenance.line if ev.provenance is not None else 0
        pair = rule(_fields(sys_ev.details) or {}, line)
        if pair is None:
            return ev
        call_id, tool, kind, source, tool_input, is_error = pair
        call = Event(
            kind=EventKind.TOOL_CALL,
            timestamp=ev.timestamp,
            message_id=ev.message_id,
            provenance=ev.provenance,
            tool_call=ToolCall(
                tool_call_id=call_id, name=tool, kind=kind, input=tool_input, promoted_from=source
            ),
        )
        result = Event(
            kind=EventKind.TOOL_RESULT,
            timestamp=ev.timestamp,
            message_id=ev.message_id,
            provenance=ev.provenance,
            tool_result=ToolResult(
                tool_call_id=call_id,
                tool_name=tool,
                is_error=is_error,
                enrichment=sys_ev.details,
                promoted_from=source,
            ),
        )
        return [call, result]

    promote.__name__ = name
    return per_event(promote)


def patch_apply() -> Stage:
    """``codex:patch-apply``: ``patch_apply_end`` and FileChange items become apply_patch calls."""
    return _promotion(
        PATCH_APPLY, {"patch_apply_end": _patch_apply_end, "item_completed": _file_change}
    )


def web_search() -> Stage:
    """``codex:web-search``: ``web_search_end`` and web.search items become web_search calls."""
    return _promotion(
        WEB_SEARCH, {"web_search_end": _web_search_end, "item_completed": _web_search_item}
    )
