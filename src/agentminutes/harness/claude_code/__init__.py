"""Claude Code transcripts: ``~/.claude/projects/<project>/<session>.jsonl``.

Subagent transcripts (``<session>/subagents/**/agent-*.jsonl``, and the older
flat ``agent-*.jsonl``) are the same format with ``isSidechain`` set.

Each line is one record ``{"type": ..., "uuid", "parentUuid", "timestamp",
"sessionId", "version", "cwd", ...}``. One API message is split across several
``assistant`` records (one content block each) that share ``message.id``, with
usage written as a growing snapshot; they fold into exactly one
``assistant_message`` carrying the final snapshot. Tool results arrive inside
``user`` records, with the harness's structured view of the result in the
``toolUseResult`` sidecar."""

from __future__ import annotations

from agentminutes.harness.claude_code.adapter import ClaudeCodeAdapter
from agentminutes.harness.claude_code.vocabulary import HARNESS

__all__ = ("HARNESS", "ClaudeCodeAdapter")
