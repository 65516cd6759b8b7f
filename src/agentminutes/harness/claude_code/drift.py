"""Claude Code's drift vocabulary: where its format hides its churn (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from typing import Final

from agentminutes.harness.drift_vocabulary import Vocabulary, prefixes

__all__ = ("VOCABULARY",)


def _claude_dynamic(parent: str, key: str) -> bool:
    # Maps keyed by tool-use id (``wireToolInputs``, ``wireIngestContext``).
    return key.startswith("toolu_")


VOCABULARY: Final = Vocabulary(
    harness="claude-code",
    discriminators={
        "assistant": ("message.content[].type", "message.content[].name"),
        "user": ("message.content[].type", "origin.kind"),
        "system": ("subtype", "level"),
        "attachment": ("attachment.type",),
        "progress": ("data.type",),
        "queue-operation": ("operation",),
    },
    deep={
        "assistant": ("message.usage", "message.content[]"),
        "user": ("message.content[]",),
    },
    dynamic=frozenset({"modelUsage"}),
    dynamic_key=_claude_dynamic,
    normalize=prefixes({"message.content[].name": ("mcp__",)}),
)
