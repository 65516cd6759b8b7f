"""pi's drift vocabulary: where its format hides its churn (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from typing import Final

from agentminutes.harness.drift_vocabulary import Vocabulary, typed_by

__all__ = ("VOCABULARY",)


VOCABULARY: Final = Vocabulary(
    harness="pi",
    record_type=typed_by("message", "message.role"),
    discriminators={
        "message": ("message.content[].type", "message.stopReason"),
        "message/assistant": ("message.content[].name",),
        "message/toolResult": ("message.toolName",),
    },
    deep={"message": ("message.usage", "message.content[]")},
)
