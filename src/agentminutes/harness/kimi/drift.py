"""Kimi CLI's drift vocabulary: where its wire log hides its churn (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from typing import Final

from agentminutes.harness.drift_vocabulary import (
    UNTYPED,
    Obj,
    Vocabulary,
    prefixes,
    string_at,
    type_field,
)

__all__ = ("VOCABULARY",)


def _record_type(record: Obj) -> str:
    """A wire log line's type: ``metadata``, else its wire message's (a part's or a subagent's refined)."""
    if "message" not in record or "type" in record:
        return type_field(record)
    rtype = string_at(record, "message.type") or UNTYPED
    refine = {"ContentPart": "message.payload.type", "SubagentEvent": "message.payload.event.type"}
    sub = string_at(record, refine[rtype]) if rtype in refine else None
    return f"{rtype}/{sub}" if sub else rtype


VOCABULARY: Final = Vocabulary(
    harness="kimi",
    record_type=_record_type,
    discriminators={
        "ToolCall": ("message.payload.function.name",),
        "ContentPart": ("message.payload.type",),
    },
    deep={
        "StatusUpdate": ("message.payload.token_usage",),
        "ToolResult": ("message.payload.return_value",),
        "SubagentEvent": ("message.payload.event.payload",),
    },
    normalize=prefixes({"message.payload.function.name": ("mcp__",)}),
)
