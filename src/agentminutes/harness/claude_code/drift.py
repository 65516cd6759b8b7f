"""Claude Code's drift vocabulary: where its format hides its churn (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from typing import Final

from agentminutes.harness.drift_vocabulary import Vocabulary, prefixes

__all__ = ("VOCABULARY",)


def _claude_dynamic(parent: str, key: str) -> bool:
    # Maps keyed by tool-use id (``wireToolInputs``, ``wireIngestContext``).
    return key.startswith("toolu_")


#: Claude Code's built-in tools, as its tool list documents them (settings: "Tools
#: available to Claude") and its releases added them: a transcript calling one no fixture
#: calls is no drift. MCP tools (``mcp__…``) are left out by ``normalize`` instead.
BUILTIN_TOOLS: Final = frozenset(
    {
        "Agent",
        "AskUserQuestion",
        "Bash",
        "BashOutput",
        "CronCreate",
        "CronDelete",
        "CronList",
        "Edit",
        "EnterPlanMode",
        "EnterWorktree",
        "ExitPlanMode",
        "ExitWorktree",
        "Glob",
        "Grep",
        "KillBash",
        "KillShell",
        "LS",
        "LSP",
        "ListMcpResourcesTool",
        "Monitor",
        "MultiEdit",
        "NotebookEdit",
        "NotebookRead",
        "Read",
        "ReadMcpResourceTool",
        "SendMessage",
        "Skill",
        "SlashCommand",
        "Task",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskOutput",
        "TaskStop",
        "TaskUpdate",
        "TeamCreate",
        "TeamDelete",
        "TodoRead",
        "TodoWrite",
        "ToolSearch",
        "WebFetch",
        "WebSearch",
        "Write",
    }
)

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
    # toolUseResult holds each tool's own result object (its keys are the tool's, as
    # a tool call's input is): one key per tool would read as format drift.
    dynamic=frozenset({"modelUsage", "toolUseResult"}),
    dynamic_key=_claude_dynamic,
    normalize=prefixes({"message.content[].name": ("mcp__",)}),
    known={"message.content[].name": BUILTIN_TOOLS},
)
