"""Cline's drift vocabulary: where its format hides its churn (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from msgspec import Raw

from agentminutes.harness.drift_vocabulary import (
    UNTYPED,
    Obj,
    Vocabulary,
    as_obj,
    objects,
    prefixes,
    read_file,
    string_at,
)

__all__ = ("VOCABULARY",)


def _cline_source(path: str) -> Iterator[tuple[str, Obj]]:
    """A task folder's records: API messages by role, UI messages by type, the metadata."""
    import os

    folder = path if os.path.isdir(path) else os.path.dirname(path)
    for name, prefix in (("api_conversation_history.json", "api"), ("ui_messages.json", "ui")):
        data = read_file(os.path.join(folder, name))
        for rec in objects(Raw(data)) if data else ():
            if prefix == "api":
                yield f"api/{string_at(rec, 'role') or UNTYPED}", rec
            else:
                # ui/say and ui/ask: their kinds (dozens, growing) are discriminator values.
                yield f"ui/{string_at(rec, 'type') or UNTYPED}", rec
    data = read_file(os.path.join(folder, "task_metadata.json"))
    metadata = as_obj(Raw(data)) if data else None
    if metadata is not None:
        yield "task_metadata", metadata


#: The tools Cline defines itself (its system prompt's tool list): a task calling one
#: no fixture calls is no drift. MCP tools go through use_mcp_tool.
BUILTIN_TOOLS: Final = frozenset(
    {
        "access_mcp_resource",
        "ask_followup_question",
        "attempt_completion",
        "browser_action",
        "condense",
        "execute_command",
        "list_code_definition_names",
        "list_files",
        "load_mcp_documentation",
        "new_rule",
        "new_task",
        "plan_mode_respond",
        "read_file",
        "replace_in_file",
        "report_bug",
        "search_files",
        "summarize_task",
        "use_mcp_tool",
        "web_fetch",
        "write_to_file",
    }
)

VOCABULARY: Final = Vocabulary(
    harness="cline",
    discriminators={
        "api": ("content[].type", "content[].name"),
        "ui/say": ("say",),
        "ui/ask": ("ask",),
    },
    deep={"api/assistant": ("content[]", "metrics.tokens"), "api/user": ("content[]",)},
    normalize=prefixes({"content[].name": ("use_mcp_tool",)}),
    known={"content[].name": BUILTIN_TOOLS},
    source=_cline_source,
)
