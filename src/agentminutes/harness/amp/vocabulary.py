"""Amp's tool names mapped onto ACP tool kinds, and its run states."""

from __future__ import annotations

from typing import Final

from agentminutes.schema import ToolKind

HARNESS: Final = "amp"

#: Native tool names across Amp's releases; any other (MCP, toolbox tools) is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "Read": ToolKind.READ,
    "read_file": ToolKind.READ,
    "read_web_page": ToolKind.FETCH,
    "web_search": ToolKind.FETCH,
    "edit_file": ToolKind.EDIT,
    "create_file": ToolKind.EDIT,
    "apply_patch": ToolKind.EDIT,
    "format_file": ToolKind.EDIT,
    "undo_edit": ToolKind.EDIT,
    "delete_file": ToolKind.DELETE,
    "Bash": ToolKind.EXECUTE,
    "shell_command": ToolKind.EXECUTE,
    "Grep": ToolKind.SEARCH,
    "grep": ToolKind.SEARCH,
    "glob": ToolKind.SEARCH,
    "list_directory": ToolKind.SEARCH,
    "codebase_search_agent": ToolKind.SEARCH,
    "finder": ToolKind.SEARCH,
    "get_diagnostics": ToolKind.READ,
    "todo_write": ToolKind.THINK,
    "todo_read": ToolKind.THINK,
    "oracle": ToolKind.THINK,
}

#: Run states after which a tool has its outcome; ``done`` is success.
FINISHED_RUNS: Final = frozenset({"done", "error", "cancelled", "rejected-by-user"})

#: Message states after which an assistant message will not change.
SETTLED_STATES: Final = frozenset({"complete", "cancelled", "error"})
