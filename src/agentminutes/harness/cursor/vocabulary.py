"""Cursor's tool names mapped onto ACP tool kinds."""

from __future__ import annotations

from typing import Final

from agentminutes.schema import ToolKind

HARNESS: Final = "cursor"

#: Native tool names (``cursor-agent`` and the IDE agent); any other (MCP tools) is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "Read": ToolKind.READ,
    "ReadFile": ToolKind.READ,
    "read_file": ToolKind.READ,
    "Write": ToolKind.EDIT,
    "Edit": ToolKind.EDIT,
    "StrReplace": ToolKind.EDIT,
    "MultiEdit": ToolKind.EDIT,
    "ApplyPatch": ToolKind.EDIT,
    "EditNotebook": ToolKind.EDIT,
    "edit_file": ToolKind.EDIT,
    "search_replace": ToolKind.EDIT,
    "write": ToolKind.EDIT,
    "Delete": ToolKind.DELETE,
    "delete_file": ToolKind.DELETE,
    "Shell": ToolKind.EXECUTE,
    "Bash": ToolKind.EXECUTE,
    "run_terminal_cmd": ToolKind.EXECUTE,
    "Grep": ToolKind.SEARCH,
    "Glob": ToolKind.SEARCH,
    "LS": ToolKind.SEARCH,
    "SemanticSearch": ToolKind.SEARCH,
    "codebase_search": ToolKind.SEARCH,
    "grep": ToolKind.SEARCH,
    "glob_file_search": ToolKind.SEARCH,
    "list_dir": ToolKind.SEARCH,
    "ReadLints": ToolKind.READ,
    "read_lints": ToolKind.READ,
    "WebSearch": ToolKind.FETCH,
    "WebFetch": ToolKind.FETCH,
    "web_search": ToolKind.FETCH,
    "TodoWrite": ToolKind.THINK,
    "todo_write": ToolKind.THINK,
    "CreatePlan": ToolKind.SWITCH_MODE,
    "SwitchMode": ToolKind.SWITCH_MODE,
}

#: Where a subagent is started (its transcript lands under ``subagents/``).
SUBAGENT_TOOLS: Final = frozenset({"Task"})
