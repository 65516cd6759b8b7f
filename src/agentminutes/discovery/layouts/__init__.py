"""Where each harness keeps its sessions on disk: one locator module per harness.

:mod:`~agentminutes.discovery.layouts.base` holds what they share (``SessionRef``,
``ScanContext``, identity reads, the ``Locator`` base);
:mod:`~agentminutes.discovery.layouts.registry` maps harness names to locators.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentminutes._lazy import lazy_exports
from agentminutes.discovery.layouts.base import (
    Gathered,
    IdentityCache,
    Item,
    Locator,
    Root,
    ScanContext,
    SessionRef,
    build_ref,
    check_session_id,
    clean,
    join,
    read_identity,
    wanted_cwd,
)
from agentminutes.discovery.layouts.registry import LOCATORS, locator

if TYPE_CHECKING:
    from agentminutes.discovery.layouts.antigravity import (
        AntigravityLocator,
        conversation_folder,
        conversation_id_of,
    )
    from agentminutes.discovery.layouts.claude_code import ClaudeCodeLocator
    from agentminutes.discovery.layouts.codex import CodexLocator
    from agentminutes.discovery.layouts.copilot import CopilotLocator
    from agentminutes.discovery.layouts.documents import DocumentLocator
    from agentminutes.discovery.layouts.gemini_cli import GeminiCliLocator
    from agentminutes.discovery.layouts.pi import PiLocator

#: The names re-exported from one harness's module, imported when first used.
_LAZY = {
    "AntigravityLocator": "antigravity",
    "conversation_folder": "antigravity",
    "conversation_id_of": "antigravity",
    "ClaudeCodeLocator": "claude_code",
    "CodexLocator": "codex",
    "CopilotLocator": "copilot",
    "DocumentLocator": "documents",
    "GeminiCliLocator": "gemini_cli",
    "PiLocator": "pi",
}


__getattr__ = lazy_exports(__name__, _LAZY, globals())

__all__ = (
    "LOCATORS",
    "AntigravityLocator",
    "ClaudeCodeLocator",
    "CodexLocator",
    "CopilotLocator",
    "DocumentLocator",
    "Gathered",
    "GeminiCliLocator",
    "IdentityCache",
    "Item",
    "Locator",
    "PiLocator",
    "Root",
    "ScanContext",
    "SessionRef",
    "build_ref",
    "check_session_id",
    "clean",
    "conversation_folder",
    "conversation_id_of",
    "join",
    "locator",
    "read_identity",
    "wanted_cwd",
)
