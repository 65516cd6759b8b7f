"""What the Copilot CLI format names: the harness, record types by how they are read, tool kinds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from agentminutes.harness.copilot.records import _Abort, _Content, _Data, _Info, _SystemMessage
from agentminutes.schema import ToolKind

HARNESS: Final = "copilot"


#: Native tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[Mapping[str, str]] = {
    "bash": ToolKind.EXECUTE,
    "stop_bash": ToolKind.EXECUTE,
    "create": ToolKind.EDIT,
    "edit": ToolKind.EDIT,
    "file_search": ToolKind.SEARCH,
    "glob": ToolKind.SEARCH,
    "grep": ToolKind.SEARCH,
    "grep_search": ToolKind.SEARCH,
    "read_agent": ToolKind.READ,
    "read_bash": ToolKind.READ,
    "read_file": ToolKind.READ,
    "view": ToolKind.READ,
    "web_fetch": ToolKind.FETCH,
}

#: Record types that are only telemetry: a system event of that subtype, ``data`` as details.
TELEMETRY_TYPES: Final = frozenset(
    {
        "assistant.turn_start",
        "assistant.turn_end",
        "permission.completed",
        "permission.requested",
        "session.model_change",
        "session.permissions_changed",
        "session.resume",
        "session.shutdown",
        "session.binary_asset",
        "session.usage_checkpoint",
        "skill.context_delivered_ref",
        "subagent.completed",
        "subagent.configured",
        "subagent.selected",
        "subagent.started",
        # Read by this adapter only (the reference rejects them).
        "assistant.usage",
        "assistant.intent",
        "tool.execution_progress",
        "tool.execution_partial_result",
        "tool.user_requested",
        "pending_messages.modified",
    }
)
#: Prefixes of telemetry record types (``hook.`` and ``custom_agent.``: this adapter only).
TELEMETRY_PREFIXES: Final = (
    "permission.",
    "session.",
    "skill.",
    "subagent.",
    "hook.",
    "custom_agent.",
)
#: Record types whose ``data`` field names the text of their system event.
TEXT_TYPES: Final[Mapping[str, tuple[type[_Data], str]]] = {
    "system.message": (_SystemMessage, "content"),
    "abort": (_Abort, "reason"),
    "session.info": (_Info, "message"),
    "system.notification": (_Content, "content"),
}
#: Types the reference's detection knows (a file starting with one is possibly Copilot's).
SNIFF_TYPES: Final = frozenset(
    {
        "abort",
        "assistant.message",
        "assistant.turn_end",
        "assistant.turn_start",
        "permission.completed",
        "permission.requested",
        "session.binary_asset",
        "session.info",
        "session.model_change",
        "session.permissions_changed",
        "session.resume",
        "session.shutdown",
        "session.start",
        "session.usage_checkpoint",
        "skill.context_delivered_ref",
        "skill.invoked",
        "skill.invoked_ref",
        "subagent.completed",
        "subagent.configured",
        "subagent.selected",
        "subagent.started",
        "system.message",
        "tool.execution_complete",
        "tool.execution_start",
        "user.message",
    }
)
