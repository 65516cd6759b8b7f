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

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home, path
from agentminutes.schema.usage_rule import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.claude_code.adapter import ClaudeCodeAdapter
    from agentminutes.harness.claude_code.vocabulary import HARNESS

__all__ = ("DESCRIPTION", "HARNESS", "ClaudeCodeAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # <project>/<session>.jsonl, <project>/<session>/subagents/**/agent-*.jsonl.
    # CLAUDE_CONFIG_DIR may list several directories, comma-separated; each has projects/.
    configured = [p.strip() for p in env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()]
    if configured:
        return [path(p).expanduser() / "projects" for p in configured]
    base = home(env)
    return [base / ".claude" / "projects", base / ".config" / "claude" / "projects"]


#: Everything the project knows about Claude Code.
DESCRIPTION: Final = Harness(
    name="claude-code",
    display_name="Claude Code",
    provider="anthropic",
    reads="lines",
    adapter="agentminutes.harness.claude_code.adapter:ClaudeCodeAdapter",
    roots=_roots,
    env=("CLAUDE_CONFIG_DIR",),
    patterns=("*.jsonl",),
    archives=None,
    layout="agentminutes.harness.claude_code.layout:ClaudeCodeLocator",
    tail=False,
    vocabulary="agentminutes.harness.claude_code.drift:VOCABULARY",
    baseline="agentminutes.harness.claude_code:baselines/claude-code.json",
    # Anthropic Messages API usage: input excludes the cache; thinking is inside
    # output and not reported apart.
    usage=UsageRule(
        input_includes_cache=False, cache_split_key="cache_creation", key_rule="message"
    ),
    prompt="all",
)


__getattr__ = lazy_exports(globals())
