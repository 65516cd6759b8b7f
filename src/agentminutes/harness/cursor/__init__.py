"""Cursor agent transcripts: ``~/.cursor/projects/<cwd slug>/agent-transcripts/<id>/<id>.jsonl``.

Cursor (the IDE's agent and ``cursor-agent``) appends one JSON line per message:
``{"role": "user" | "assistant", "message": {"content": …}}`` with
Anthropic-shaped blocks (``text``, ``tool_use`` with ``name`` and ``input``,
``tool_result``), and ``{"type": "turn_ended", "status": …}`` when a turn
ends. A subagent's transcript sits in ``<id>/subagents/<agent id>.jsonl``.
Nothing in a line records a time, a model, token usage, a tool-use id or the
working directory. (The IDE's own chat store, ``~/.cursor/chats/…/store.db``,
holds protobuf blobs and is not read.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.cursor.adapter import CursorAdapter

__all__ = ("DESCRIPTION", "CursorAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # <cwd slug>/agent-transcripts/<id>/<id>.jsonl, <id>/subagents/<agent id>.jsonl.
    return [home(env) / ".cursor" / "projects"]


#: Everything the project knows about Cursor.
DESCRIPTION: Final = Harness(
    name="cursor",
    provider="",
    display_name="Cursor",
    reads="lines",
    adapter="agentminutes.harness.cursor.adapter:CursorAdapter",
    roots=_roots,
    env=(),
    patterns=("*.jsonl",),
    archives=None,
    layout="agentminutes.harness.cursor.layout:CursorLocator",
    tail=False,
    vocabulary="agentminutes.harness.cursor.drift:VOCABULARY",
    baseline="agentminutes.harness.cursor:baselines/cursor.json",
    usage=None,  # the transcripts record no usage
    prompt="",
)


__getattr__ = lazy_exports(globals())
