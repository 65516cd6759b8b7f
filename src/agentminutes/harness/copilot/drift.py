"""Copilot's drift vocabulary: where its format hides its churn (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from msgspec import Raw

from agentminutes.harness.drift_vocabulary import (
    Obj,
    Vocabulary,
    prefixes,
    split_document,
)

__all__ = ("VOCABULARY",)


def _copilot_document(doc: Raw) -> Iterator[tuple[str, Obj]]:
    # The legacy single-document session (``history-session-state/session_*.json``).
    return split_document(
        doc,
        "(legacy-session)",
        {"chatMessages": ("chatMessages/", "role"), "timeline": ("timeline/", "type")},
    )


VOCABULARY: Final = Vocabulary(
    harness="copilot",
    discriminators={
        "abort": ("data.reason",),
        "assistant.message": ("data.toolRequests[].name", "data.reasoningBlocks.provider"),
        "hook.start": ("data.hookType",),
        "hook.end": ("data.hookType",),
        "permission.completed": ("data.result.kind", "data.decisionSource"),
        "permission.requested": (
            "data.permissionRequest.kind",
            "data.promptRequest.kind",
            "data.permissionMode",
            "data.agentMode",
        ),
        "session.binary_asset": ("data.type", "data.mimeType"),
        "session.error": ("data.errorType",),
        "session.info": ("data.infoType",),
        "session.model_change": ("data.source", "data.cause"),
        "session.shutdown": ("data.shutdownType",),
        "skill.invoked": ("data.source", "data.trigger"),
        "subagent.completed": ("data.agentName",),
        "subagent.selected": ("data.tools[]",),
        "subagent.started": (
            "data.agentName",
            "data.agentType",
            "data.executionMode",
            "data.modelSelectionSource",
        ),
        "system.notification": ("data.kind",),
        "tool.execution_complete": ("data.error.code",),
        "tool.execution_start": ("data.toolName", "data.mcpConfigSource", "data.mcpTransport"),
        "user.message": ("data.delivery", "data.source"),
    },
    deep={
        "assistant.message": ("data.toolRequests[]",),
        "tool.execution_complete": ("data.result",),
    },
    normalize=prefixes(
        {
            "data.toolRequests[].name": ("github-mcp-server-",),
            "data.toolName": ("github-mcp-server-",),
            "data.source": ("agent-",),
        }
    ),
    document=_copilot_document,
)
