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

from agentminutes.harness.cursor.adapter import CursorAdapter
from agentminutes.harness.cursor.vocabulary import HARNESS

__all__ = ("HARNESS", "CursorAdapter")
