"""Goose's tool names (``<extension>__<tool>``) mapped onto ACP tool kinds."""

from __future__ import annotations

from typing import Final

from agentminutes.schema import ToolKind

HARNESS: Final = "goose"

#: By the tool's own name (after the extension's ``__``); any other is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "shell": ToolKind.EXECUTE,
    "text_editor": ToolKind.EDIT,
    "write": ToolKind.EDIT,
    "edit": ToolKind.EDIT,
    "read": ToolKind.READ,
    "view": ToolKind.READ,
    "analyze": ToolKind.SEARCH,
    "tree": ToolKind.SEARCH,
    "list_windows": ToolKind.READ,
    "screen_capture": ToolKind.READ,
    "image_processor": ToolKind.READ,
    "read_resource": ToolKind.READ,
    "list_resources": ToolKind.SEARCH,
    "search_available_extensions": ToolKind.SEARCH,
    "manage_extensions": ToolKind.OTHER,
    "todo_write": ToolKind.THINK,
    "todo_read": ToolKind.THINK,
    "write_todo": ToolKind.THINK,
    "read_todo": ToolKind.THINK,
    "fetch": ToolKind.FETCH,
    "web_search": ToolKind.FETCH,
}

#: Content types of a message's ``content_json`` (``MessageContent``, tagged by ``type``).
CONTENT_TYPES: Final = frozenset(
    {
        "text",
        "image",
        "toolRequest",
        "toolResponse",
        "toolConfirmationRequest",
        "actionRequired",
        "frontendToolRequest",
        "thinking",
        "redactedThinking",
        "systemNotification",
    }
)


def tool_kind(name: str) -> str:
    """The ACP kind of a Goose tool, by the part of its name after the extension's ``__``."""
    return TOOL_KINDS.get(name.rsplit("__", 1)[-1], ToolKind.OTHER)
