"""claude.ai privacy exports (the ZIP, or its ``conversations.json``).

The adapter and its rules are in :mod:`.adapter`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import EXPORT_ONLY, Harness

if TYPE_CHECKING:
    from agentminutes.harness.claude_ai.adapter import ClaudeAIAdapter

__all__ = ("DESCRIPTION", "ClaudeAIAdapter")


#: Everything the project knows about claude.ai.
DESCRIPTION: Final = Harness(
    name="claude-ai",
    display_name="claude.ai",
    provider="anthropic",
    reads="documents",
    adapter="agentminutes.harness.claude_ai.adapter:ClaudeAIAdapter",
    **EXPORT_ONLY,
)


__getattr__ = lazy_exports(globals())
