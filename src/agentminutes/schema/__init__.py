"""The normalized schema: msgspec Structs whose JSON is the output contract.

- :mod:`~agentminutes.schema.events` — the event Structs, kinds and the stats Structs.
- :mod:`~agentminutes.schema.stats` — folding events into totals, the report and stats.
- :mod:`~agentminutes.schema.session` — the whole-session Struct and its builder.

This is the bottom layer: it imports nothing of agentminutes but the time helpers.
"""

from __future__ import annotations

from agentminutes.schema.events import (
    NO_RAW,
    SCHEMA_VERSION,
    AgentStats,
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    FetchInfo,
    Meta,
    Origin,
    Provenance,
    Raw,
    Report,
    Stats,
    SystemEvent,
    TaskSkip,
    TaskStats,
    TaskTranscript,
    Thinking,
    TokenUsage,
    ToolCall,
    ToolInteraction,
    ToolKind,
    ToolResult,
    Unknown,
    UserMessage,
    to_builtins,
)
from agentminutes.schema.session import Session

__all__ = (
    "NO_RAW",
    "SCHEMA_VERSION",
    "AgentStats",
    "AssistantMessage",
    "ContentBlock",
    "Event",
    "EventKind",
    "FetchInfo",
    "Meta",
    "Origin",
    "Provenance",
    "Raw",
    "Report",
    "Session",
    "Stats",
    "SystemEvent",
    "TaskSkip",
    "TaskStats",
    "TaskTranscript",
    "Thinking",
    "TokenUsage",
    "ToolCall",
    "ToolInteraction",
    "ToolKind",
    "ToolResult",
    "Unknown",
    "UserMessage",
    "to_builtins",
)
