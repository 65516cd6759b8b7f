"""Factory Droid's drift vocabulary: where its session format hides its churn."""

from __future__ import annotations

from typing import Final

from agentminutes.harness.drift_vocabulary import Vocabulary, prefixes, typed_by

__all__ = ("VOCABULARY",)


VOCABULARY: Final = Vocabulary(
    harness="droid",
    record_type=typed_by("message", "message.role"),
    discriminators={
        "message": ("message.content[].type",),
        "message/assistant": ("message.content[].name", "message.modelId"),
        "agent_turn_outcome": ("reason", "resultKind"),
    },
    deep={"message": ("message.content[]",)},
    normalize=prefixes({"message.content[].name": ("mcp__",), "message.modelId": ("custom:",)}),
)
