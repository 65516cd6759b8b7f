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

from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness
from agentminutes.schema.usage import UsageRule

if TYPE_CHECKING:
    from agentminutes.harness.aider.adapter import AiderAdapter

__all__ = ("DESCRIPTION", "AiderAdapter")


#: Everything the project knows about Aider.
DESCRIPTION: Final = Harness(
    name="aider",
    provider="",
    display_name="Aider",
    reads="lines",
    adapter="agentminutes.harness.aider.adapter:AiderAdapter",
    # No home folder: Aider writes in each repository it runs in (the git root, else the
    # working directory), so a history is found under a --root given, not by default.
    roots=None,
    env=(),
    patterns=(".aider.chat.history*.md",),
    archives=None,
    layout="agentminutes.harness.aider.layout:AiderLocator",
    tail=False,
    vocabulary="agentminutes.harness.aider.drift:VOCABULARY",
    baseline="agentminutes.harness.aider:baselines/aider.json",
    # The report under each reply: "sent" is the whole prompt (cache hits inside it),
    # the message's cost as printed in usage.cost; no ids, so each request counts.
    usage=UsageRule(input_includes_cache=True, key_rule=""),
    prompt="input",
)


__getattr__ = lazy_exports(globals())
