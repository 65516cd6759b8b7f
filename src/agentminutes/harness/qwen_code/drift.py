"""Qwen Code's drift vocabulary: where its format hides its churn (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from typing import Final

from agentminutes.harness.drift_vocabulary import Vocabulary, prefixes, typed_by

__all__ = ("VOCABULARY",)


VOCABULARY: Final = Vocabulary(
    harness="qwen-code",
    record_type=typed_by("system", "subtype"),
    discriminators={
        "assistant": ("message.parts[].*", "message.parts[].functionCall.name"),
        "user": ("message.parts[].*",),
        "tool_result": ("message.parts[].*", "toolCallResult.status"),
        "system/ui_telemetry": ("systemPayload.uiEvent.event.name",),
    },
    deep={
        "assistant": ("message.parts[]", "usageMetadata"),
        "tool_result": ("message.parts[]", "toolCallResult"),
        "system": ("systemPayload",),
    },
    normalize=prefixes({"message.parts[].functionCall.name": ("mcp__",)}),
)
