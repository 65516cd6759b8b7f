"""Every harness with a layout, by name.

A locator's module is imported when its harness is first asked for: ``sessions
--harness claude-code`` loads one layout module, not all ten (start-up is most of a
short listing's time).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Final

from agentminutes.discovery.layouts.base import Locator

__all__ = (
    "LOCATORS",
    "locator",
)

#: Each harness with a folder layout: the module (in this package) and class of its locator.
_LAYOUTS: Final = {
    "antigravity": ("antigravity", "AntigravityLocator"),
    "claude-code": ("claude_code", "ClaudeCodeLocator"),
    "cline": ("cline", "ClineLocator"),
    "codex": ("codex", "CodexLocator"),
    "copilot": ("copilot", "CopilotLocator"),
    "gemini-cli": ("gemini_cli", "GeminiCliLocator"),
    "opencode": ("opencode", "OpenCodeLocator"),
    "pi": ("pi", "PiLocator"),
    "qwen-code": ("qwen_code", "QwenCodeLocator"),
}
_made: dict[str, Locator] = {}


def _layout(harness: str) -> Locator | None:
    """The one locator of a harness with a folder layout (its module imported on first use)."""
    found = _made.get(harness)
    if found is None and harness in _LAYOUTS:
        module, name = _LAYOUTS[harness]
        cls = getattr(importlib.import_module(f"{__package__}.{module}"), name)
        found = _made[harness] = cls()
    return found


class _Locators(Mapping[str, Locator]):
    """:data:`LOCATORS`: a read-only mapping whose values are made as they are read."""

    def __getitem__(self, harness: str) -> Locator:
        found = _layout(harness)
        if found is None:
            raise KeyError(harness)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_LAYOUTS)

    def __len__(self) -> int:
        return len(_LAYOUTS)

    def __contains__(self, harness: object) -> bool:
        return harness in _LAYOUTS


#: Every harness with a layout, by name.
LOCATORS: Final[Mapping[str, Locator]] = _Locators()


def locator(harness: str) -> Locator | None:
    """The locator of *harness*, or ``None`` for a harness discovery does not know.

    Whole-document harnesses (data exports, ``turns.db``) get a
    :class:`DocumentLocator`, which needs an explicit root.
    """
    found = _layout(harness)
    if found is not None:
        return found
    from agentminutes.harness import document_adapter_class

    if document_adapter_class(harness) is None:
        return None
    from agentminutes.discovery.layouts.documents import DocumentLocator

    return DocumentLocator(harness)
