"""Cursor's drift vocabulary: agent transcript lines by role (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from typing import Final

from agentminutes.harness.drift_vocabulary import (
    Obj,
    Vocabulary,
    prefixes,
    string_at,
    type_field,
)

__all__ = ("VOCABULARY",)


def _record_type(record: Obj) -> str:
    return string_at(record, "role") or type_field(record)


VOCABULARY: Final = Vocabulary(
    harness="cursor",
    record_type=_record_type,
    discriminators={
        "assistant": ("message.content[].type", "message.content[].name"),
        "user": ("message.content[].type",),
        "turn_ended": ("status",),
    },
    deep={"assistant": ("message.content[]",), "user": ("message.content[]",)},
    normalize=prefixes({"message.content[].name": ("mcp_",)}),
)
