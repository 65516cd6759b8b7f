"""The records of Qwen Code's JSONL recording, and the cheap test that tells one apart.

Its own module because Claude Code's detection asks it (the two share the
record envelope): sniffing a Claude Code transcript loads these few Structs,
not the Qwen Code adapter (see :mod:`agentminutes.harness.qwen_code`).
"""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec import Raw

from agentminutes.schema import NO_RAW

__all__ = ("RECORD_TYPES", "Message", "Record", "decode_record", "is_qwen_record")

#: The record types of the JSONL recording.
RECORD_TYPES: Final = frozenset({"user", "assistant", "tool_result", "system"})


class Message(msgspec.Struct):
    """A record's ``message``: a Gemini API content, its parts raw."""

    role: str | None = None
    parts: Raw = NO_RAW


class Record(msgspec.Struct, rename="camel"):
    """A JSONL record: the fields that steer parsing; payloads stay raw."""

    uuid: str | None = None
    parent_uuid: str | None = None
    session_id: str | None = None
    timestamp: str | None = None
    type: str | None = None
    subtype: str | None = None
    cwd: str | None = None
    version: str | None = None
    git_branch: str | None = None
    model: str | None = None
    message: Message | None = None
    usage_metadata: Raw = NO_RAW
    tool_call_result: Raw = NO_RAW
    system_payload: Raw = NO_RAW
    agent_id: str | None = None
    is_sidechain: bool | None = None


decode_record = msgspec.json.Decoder(Record).decode


def is_qwen_record(line: bytes) -> bool:
    """Whether *line* is a record of a Qwen Code JSONL recording (cheap, for detection)."""
    try:
        rec = decode_record(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    if not (rec.uuid and rec.session_id and rec.type in RECORD_TYPES):
        return False
    if rec.type == "system":
        return bool(rec.system_payload)  # Claude Code's system records have no payload object
    return rec.message is not None and bool(rec.message.parts)
