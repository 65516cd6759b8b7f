"""What the Codex formats name: record, item and event types, tool kinds, tell-tale bytes."""

from __future__ import annotations

from typing import Final

from msgspec import Raw

from agentminutes.schema import ToolKind

HARNESS: Final = "codex"


# ---------------------------------------------------------------------------
# Vocabulary.

#: Envelope types of the modern rollout format.
RECORD_TYPES: Final = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "world_state",
        "compacted",
        "token_usage_record",
        "inter_agent_communication_metadata",
    }
)

#: Envelope types whose payload is kept verbatim as a system event.
_PASSTHROUGH: Final = frozenset(
    {"world_state", "compacted", "token_usage_record", "inter_agent_communication_metadata"}
)

#: ``event_msg`` subtypes that repeat a ``response_item`` (counted, not emitted).
_DUPLICATE_EVENTS: Final = frozenset({"user_message", "agent_message", "agent_reasoning"})

#: User-role text that the harness injected, by its leading tag.
HARNESS_PREFIXES: Final = (
    "<environment_context>",
    "<ENVIRONMENT_CONTEXT>",
    "<user_instructions>",
    "<turn_aborted>",
)

#: Native tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "exec": ToolKind.EXECUTE,
    "shell": ToolKind.EXECUTE,
    "local_shell": ToolKind.EXECUTE,
    "exec_command": ToolKind.EXECUTE,
    "unified_exec": ToolKind.EXECUTE,
    "apply_patch": ToolKind.EDIT,
    "update_plan": ToolKind.THINK,
    "web_search": ToolKind.FETCH,
    "view_image": ToolKind.READ,
    "read_thread_terminal": ToolKind.READ,
}

_TEXT_BLOCKS: Final = frozenset(
    {"text", "input_text", "output_text", "summary_text", "reasoning_text"}
)
_IMAGE_BLOCKS: Final = frozenset({"input_image", "image"})

#: Bare item types of legacy rollouts and response_item payloads we read.
_ITEM_TYPES: Final = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "function_call_output",
        "custom_tool_call_output",
        "web_search_call",
    }
)

#: Top-level event types of ``codex exec --json``.
_EXEC_TYPES: Final = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)

#: Go's unicode.IsSpace set, which the reference trims with.
_SPACE: Final = " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"

_NULL: Final = b"null"
_RAW_NULL: Final = Raw(_NULL)
_QUOTE: Final = ord('"')
_LBRACE: Final = ord("{")
_LBRACKET: Final = ord("[")
