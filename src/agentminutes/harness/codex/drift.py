"""Codex's drift vocabulary: where its format hides its churn (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from typing import Final

from agentminutes.harness.drift_vocabulary import (
    UNTYPED,
    Obj,
    Vocabulary,
    prefixes,
    string_at,
    type_field,
)

__all__ = ("VOCABULARY",)


def _codex_type(record: Obj) -> str:
    """Rollout envelopes by ``type/payload.type``, ``exec --json`` items by ``type/item.type``.

    Legacy rollouts' bare items keep their own ``type``; their metadata line and
    state markers, and a logger's wrapping of ``exec --json`` events, are named
    by what they are.
    """
    rtype = type_field(record)
    if rtype != UNTYPED:
        if rtype in ("response_item", "event_msg"):
            sub = string_at(record, "payload.type")
        elif rtype.startswith("item."):
            sub = string_at(record, "item.type")
        else:
            sub = None
        return f"{rtype}/{sub}" if sub else rtype
    log = string_at(record, "log_type")
    if log:
        inner = string_at(record, "data.type")
        return f"{log}/{inner}" if inner else log
    state = string_at(record, "record_type")
    if state:
        return f"record_type/{state}"
    if "id" in record and "timestamp" in record:
        return "(legacy-meta)"
    return UNTYPED


#: The tools Codex CLI defines itself (its tool specs in codex-rs), whatever the model
#: family or the features on: a rollout calling one no fixture calls is no drift.
BUILTIN_TOOLS: Final = frozenset(
    {
        "apply_patch",
        "close_agent",
        "container.exec",
        "exec_command",
        "grep_files",
        "list_dir",
        "list_mcp_resource_templates",
        "list_mcp_resources",
        "local_shell",
        "read_file",
        "read_mcp_resource",
        "request_user_input",
        "send_input",
        "shell",
        "shell_command",
        "spawn_agent",
        "update_plan",
        "view_image",
        "wait",
        "web_search",
        "write_stdin",
    }
)

VOCABULARY: Final = Vocabulary(
    harness="codex",
    record_type=_codex_type,
    discriminators={
        "response_item": ("payload.name", "payload.role", "payload.content[].type"),
        "event_msg": ("payload.item.type",),
        "message": ("role", "content[].type"),
        "function_call": ("name",),
        "stream_output": ("data.item.type",),
    },
    deep={
        "response_item": ("payload.content[]",),
        "event_msg/token_count": (
            "payload.info.last_token_usage",
            "payload.info.total_token_usage",
        ),
        "stream_output": ("data.item",),
    },
    normalize=prefixes({"payload.name": ("mcp__",), "name": ("mcp__",)}),
    known={"payload.name": BUILTIN_TOOLS, "name": BUILTIN_TOOLS},
)
