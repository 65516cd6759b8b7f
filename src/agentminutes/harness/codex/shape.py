"""Telling the Codex transcript shapes apart by their first records."""

from __future__ import annotations

from typing import Final

from msgspec import Raw

from agentminutes.harness.base import Confidence
from agentminutes.harness.codex.records import (
    _decode_item_type,
    _decode_legacy_line,
    _decode_probe,
    _decode_sniff,
    _decode_str_list,
    _DecodeErrors,
    _lead,
    _raw_str,
)
from agentminutes.harness.codex.vocabulary import (
    _EXEC_TYPES,
    _ITEM_TYPES,
    _LBRACE,
    _LBRACKET,
    RECORD_TYPES,
)

_ROLLOUT: Final = "rollout"
_LEGACY: Final = "legacy"
_EXEC: Final = "exec"
_WRAPPED: Final = "wrapped"


def _is_thread_start(data: Raw) -> bool:
    try:
        return _decode_item_type(data) == "thread.started"
    except _DecodeErrors:
        return False


def _is_logger_header(line: bytes) -> bool:
    """Whether *line* is an exec-json logger's header (the command line that was run)."""
    try:
        probe = _decode_probe(line)
    except _DecodeErrors:
        return False
    return _is_exec_command(probe.command)


def _is_exec_command(command: Raw) -> bool:
    if _lead(command) != _LBRACKET:
        return False
    try:
        words = _decode_str_list(command)
    except _DecodeErrors:
        return False
    strs = [w for w in words if isinstance(w, str)]
    return (
        any(w == "codex" or w.endswith("/codex") for w in strs)
        and "exec" in strs
        and ("--json" in strs or "--experimental-json" in strs)
    )


def _shape_of(first: bytes, rest: bytes | None) -> tuple[str, Confidence]:
    """The transcript shape a first record shows, and how sure that is.

    *rest* is what follows the first line in a detection head, or ``None`` when
    the adapter already reads the transcript as Codex and only asks which shape.
    """
    try:
        p = _decode_probe(first)
    except _DecodeErrors:
        return "", Confidence.NO_MATCH
    rtype = _raw_str(p.type)
    if p.payload and rtype in RECORD_TYPES:
        return _ROLLOUT, Confidence.POSSIBLE
    if rtype in _EXEC_TYPES and not p.payload:
        if rtype == "thread.started" and _raw_str(p.thread_id):
            return _EXEC, Confidence.CERTAIN
        if rtype in ("turn.started", "item.started", "item.completed"):
            return _EXEC, Confidence.POSSIBLE
        return "", Confidence.NO_MATCH
    if _is_exec_command(p.command):
        return _WRAPPED, Confidence.CERTAIN
    if _raw_str(p.log_type) == "stream_output" and _lead(p.data) == _LBRACE:
        try:
            inner = _decode_item_type(p.data)
        except _DecodeErrors:
            inner = ""
        if inner in _EXEC_TYPES:
            return _WRAPPED, Confidence.CERTAIN
    if not p.type and not p.payload and _raw_str(p.id) and _raw_str(p.timestamp):
        # A legacy metadata line: confirmed by a state marker or bare item next.
        if rest is None:
            return _LEGACY, Confidence.POSSIBLE
        nxt = rest.split(b"\n", 1)[0].strip()
        try:
            n = _decode_legacy_line(nxt) if nxt else None
        except _DecodeErrors:
            n = None
        if n is not None and (n.record_type == "state" or n.type in _ITEM_TYPES):
            return _LEGACY, Confidence.CERTAIN
        if p.instructions:
            return _LEGACY, Confidence.POSSIBLE
    return "", Confidence.NO_MATCH


def _has_rollout_record(lines: bytes, limit: int = 50) -> bool:
    """Whether one of the first *limit* complete *lines* is a rollout envelope."""
    for line in lines.split(b"\n", limit)[:limit]:
        line = line.strip()
        if not line.startswith(b"{") or b'"payload"' not in line:
            continue
        try:
            rec = _decode_sniff(line)
        except _DecodeErrors:
            continue
        if rec.type in RECORD_TYPES and rec.timestamp and rec.payload is not None:
            return True
    return False
