"""Continue's built-in tool names mapped onto ACP tool kinds, and its tool states."""

from __future__ import annotations

from typing import Final

from agentminutes.schema import ToolKind

HARNESS: Final = "continue-cli"

#: The CLI's built-in tools (``extensions/cli/src/tools``) and the IDE's; others (MCP) are ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "Read": ToolKind.READ,
    "Write": ToolKind.EDIT,
    "Edit": ToolKind.EDIT,
    "MultiEdit": ToolKind.EDIT,
    "List": ToolKind.SEARCH,
    "Search": ToolKind.SEARCH,
    "Bash": ToolKind.EXECUTE,
    "Fetch": ToolKind.FETCH,
    "Diff": ToolKind.READ,
    "Status": ToolKind.READ,
    "Checklist": ToolKind.THINK,
    "Exit": ToolKind.SWITCH_MODE,
    "read_file": ToolKind.READ,
    "read_currently_open_file": ToolKind.READ,
    "create_new_file": ToolKind.EDIT,
    "edit_existing_file": ToolKind.EDIT,
    "single_find_and_replace": ToolKind.EDIT,
    "multi_edit": ToolKind.EDIT,
    "run_terminal_command": ToolKind.EXECUTE,
    "grep_search": ToolKind.SEARCH,
    "file_glob_search": ToolKind.SEARCH,
    "ls": ToolKind.SEARCH,
    "search_web": ToolKind.FETCH,
    "fetch_url_content": ToolKind.FETCH,
    "view_diff": ToolKind.READ,
}

#: Tool states after which a call has its outcome (``done`` is success).
FINISHED: Final = frozenset({"done", "errored", "canceled"})
