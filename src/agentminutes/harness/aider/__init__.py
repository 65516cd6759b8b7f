"""Aider chat histories: ``.aider.chat.history.md`` in each repository Aider ran in.

Aider appends one Markdown file per repository (``--chat-history-file``,
``AIDER_CHAT_HISTORY_FILE``; by default ``<git root>/.aider.chat.history.md``).
Each run opens with ``# aider chat started at YYYY-MM-DD HH:MM:SS`` (local
time, no zone); what the person typed is written as ``#### `` lines, what
Aider itself reported (start-up banner, confirmations, token and cost
reports, applied edits, errors) as ``> `` block quotes, and each model reply
as plain Markdown between them. The file records no session id, no per-message
time and no tool calls (Aider edits files from the reply's text).
"""

from __future__ import annotations

from agentminutes.harness.aider.adapter import AiderAdapter
from agentminutes.harness.aider.vocabulary import HARNESS

__all__ = ("HARNESS", "AiderAdapter")
