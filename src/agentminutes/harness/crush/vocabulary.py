"""Crush's tool names mapped onto ACP tool kinds, and its message part types."""

from __future__ import annotations

from typing import Final

from agentminutes.schema import ToolKind

HARNESS: Final = "crush"

#: Crush's tools (``internal/agent/tools``); any other name (MCP tools) is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "view": ToolKind.READ,
    "ls": ToolKind.SEARCH,
    "glob": ToolKind.SEARCH,
    "grep": ToolKind.SEARCH,
    "search": ToolKind.SEARCH,
    "sourcegraph": ToolKind.SEARCH,
    "lsp_references": ToolKind.SEARCH,
    "lsp_definition": ToolKind.SEARCH,
    "lsp_symbols": ToolKind.SEARCH,
    "lsp_call_hierarchy": ToolKind.SEARCH,
    "lsp_diagnostics": ToolKind.READ,
    "read_mcp_resource": ToolKind.READ,
    "list_mcp_resources": ToolKind.SEARCH,
    "crush_info": ToolKind.READ,
    "crush_logs": ToolKind.READ,
    "job_output": ToolKind.READ,
    "write": ToolKind.EDIT,
    "edit": ToolKind.EDIT,
    "multiedit": ToolKind.EDIT,
    "lsp_rename": ToolKind.EDIT,
    "lsp_replace_symbol": ToolKind.EDIT,
    "bash": ToolKind.EXECUTE,
    "job_kill": ToolKind.EXECUTE,
    "lsp_restart": ToolKind.EXECUTE,
    "fetch": ToolKind.FETCH,
    "web_fetch": ToolKind.FETCH,
    "web_search": ToolKind.FETCH,
    "agentic_fetch": ToolKind.FETCH,
    "download": ToolKind.FETCH,
    "todos": ToolKind.THINK,
}

#: The tool that starts a subagent: its session's id is the call's id.
AGENT_TOOL: Final = "agent"

#: Part types of a message's ``parts`` column (``internal/message``).
PART_TYPES: Final = frozenset(
    {
        "reasoning",
        "text",
        "image_url",
        "binary",
        "tool_call",
        "tool_result",
        "finish",
        "shell_command",
    }
)
