"""Claude Code's record types (conversation, skipped, quiet) and tool kinds."""

from __future__ import annotations

from typing import Final

from agentminutes.schema import (
    ToolKind,
)

HARNESS: Final = "claude-code"

#: Records that carry model-visible content and become events (``cost-state``
#: is the harness's running cost ledger, kept as a system event).
CONVERSATION_TYPES: Final = frozenset({"user", "assistant", "system", "attachment", "cost-state"})

#: Harness and UI bookkeeping with nothing the model saw: counted, not emitted.
SKIP_TYPES: Final = frozenset(
    {
        "mode",
        "permission-mode",
        "ai-title",
        "last-prompt",
        "file-history-snapshot",
        "file-history-delta",
        "queue-operation",
        "atis-latch",
        "bridge-session",
        "frame-link",
        "pr-link",
        # 2.1.3xx: the tools used so far, a running list the tool calls already say.
        "tools-used",
    }
)

#: 2.1.3xx records of what the model was sent, each kept whole as a system event of its
#: own subtype (the reference rejects them): ``api-request-shape`` the system prompt and
#: tool definitions (by ``shapeHash``), ``api-request-blob`` one message (by ``hash``),
#: ``api-request`` one request's parameters naming its shape and message blobs. Shapes and
#: blobs are content-addressed: a hash seen before in the transcript is counted, not emitted.
REQUEST_TYPES: Final = frozenset({"api-request-shape", "api-request-blob", "api-request"})

#: Record types the reference rejects that we read as documented skips: session
#: titles and naming, UI progress ticks (an ``agent_progress`` tick repeats what
#: the subagent's own transcript records, so counting it would double count),
#: workflow journal entries and links to other sessions or branches. None of
#: them carries anything the model saw.
QUIET_TYPES: Final = frozenset(
    {
        "progress",
        "summary",
        "custom-title",
        "agent-name",
        "worktree-state",
        "relocated",
        "started",
        "result",
        "fork-context-ref",
        "teleported-from",
    }
)

#: Early top-level tool records (``{"type": "tool_use", "name", "input"}`` and
#: ``{"type": "tool_result", "name", "output"}``) seen in drifted transcripts.
LOOSE_TOOL_TYPES: Final = frozenset({"tool_use", "tool_result"})

#: Native tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "Read": ToolKind.READ,
    "Glob": ToolKind.SEARCH,
    "Grep": ToolKind.SEARCH,
    "ToolSearch": ToolKind.SEARCH,
    "TaskOutput": ToolKind.READ,
    "Bash": ToolKind.EXECUTE,
    "Edit": ToolKind.EDIT,
    "Write": ToolKind.EDIT,
    "NotebookEdit": ToolKind.EDIT,
    "WebFetch": ToolKind.FETCH,
    "WebSearch": ToolKind.FETCH,
    "TodoWrite": ToolKind.THINK,
}

_USAGE_KEYS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
