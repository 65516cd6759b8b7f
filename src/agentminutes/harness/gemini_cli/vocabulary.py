"""What the Gemini CLI format names: the harness, message types, tool statuses and tool kinds."""

from __future__ import annotations

from typing import Final

from agentminutes.schema import ToolKind

HARNESS: Final = "gemini-cli"


#: Message types shown to the person and never sent to the model.
NOTICE_TYPES: Final = frozenset({"info", "warning", "error"})

#: Model-response message types: ``gemini``, and ``model`` in hand-made and converted files.
MODEL_TYPES: Final = frozenset({"gemini", "model"})

#: Tool-call statuses after which no result will follow.
FINAL_STATUSES: Final = frozenset({"success", "error", "cancelled"})

#: Native tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "read_file": ToolKind.READ,
    "read_many_files": ToolKind.READ,
    "read_mcp_resource": ToolKind.READ,
    "get_internal_docs": ToolKind.READ,
    "write_file": ToolKind.EDIT,
    "replace": ToolKind.EDIT,
    "edit": ToolKind.EDIT,
    "run_shell_command": ToolKind.EXECUTE,
    "glob": ToolKind.SEARCH,
    "grep_search": ToolKind.SEARCH,
    "search_file_content": ToolKind.SEARCH,
    "list_directory": ToolKind.SEARCH,
    "list_mcp_resources": ToolKind.SEARCH,
    "google_web_search": ToolKind.FETCH,
    "web_fetch": ToolKind.FETCH,
    "write_todos": ToolKind.THINK,
    "enter_plan_mode": ToolKind.SWITCH_MODE,
    "exit_plan_mode": ToolKind.SWITCH_MODE,
}

#: Keys of a ``$set`` that are bookkeeping only.
_BOOKKEEPING: Final = frozenset({"lastUpdated"})

_USAGE_KEYS: Final = ("input", "output", "cached", "thoughts", "tool")
