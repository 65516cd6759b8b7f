"""Every harness with a layout, by name."""

from __future__ import annotations

from agentminutes.discovery.layouts.antigravity import AntigravityLocator
from agentminutes.discovery.layouts.base import Locator
from agentminutes.discovery.layouts.claude_code import ClaudeCodeLocator
from agentminutes.discovery.layouts.cline import ClineLocator
from agentminutes.discovery.layouts.codex import CodexLocator
from agentminutes.discovery.layouts.copilot import CopilotLocator
from agentminutes.discovery.layouts.documents import DocumentLocator
from agentminutes.discovery.layouts.gemini_cli import GeminiCliLocator
from agentminutes.discovery.layouts.opencode import OpenCodeLocator
from agentminutes.discovery.layouts.pi import PiLocator
from agentminutes.discovery.layouts.qwen_code import QwenCodeLocator

__all__ = (
    "LOCATORS",
    "locator",
)


#: Every harness with a layout, by name.
LOCATORS: dict[str, Locator] = {
    loc.harness: loc
    for loc in (
        AntigravityLocator(),
        ClaudeCodeLocator(),
        ClineLocator(),
        CodexLocator(),
        CopilotLocator(),
        GeminiCliLocator(),
        OpenCodeLocator(),
        PiLocator(),
        QwenCodeLocator(),
    )
}


def locator(harness: str) -> Locator | None:
    """The locator of *harness*, or ``None`` for a harness discovery does not know.

    Whole-document harnesses (data exports, ``turns.db``) get a
    :class:`DocumentLocator`, which needs an explicit root.
    """
    found = LOCATORS.get(harness)
    if found is not None:
        return found
    from agentminutes.harness import document_adapter_class

    return DocumentLocator(harness) if document_adapter_class(harness) is not None else None
