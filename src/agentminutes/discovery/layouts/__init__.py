"""Finding sessions on disk: each harness's layout, made with discovery's reader.

The layouts themselves are path logic and live in each harness's folder
(``harness/<name>/layout.py``, on :mod:`agentminutes.harness.layout`, whose
shared names, ``SessionRef``, ``ScanContext``, the ``Locator`` base …, are
re-exported here); its description names the class. Here is what discovery
adds: :mod:`~agentminutes.discovery.layouts.base` reads a transcript's identity
through the pipeline (the :class:`~agentminutes.harness.layout.Reader` every
locator is made with); :mod:`~agentminutes.discovery.layouts.registry` makes
the locator of a harness by name.

The per-harness locators once imported from here (``ClaudeCodeLocator`` …)
still are, with a :class:`DeprecationWarning` naming their new module.
"""

from __future__ import annotations

from typing import Any, Final

from agentminutes._lazy import moved
from agentminutes.discovery.layouts.base import READER, build_ref, read_identity
from agentminutes.discovery.layouts.registry import LOCATORS, locator
from agentminutes.harness.layout import (
    Gathered,
    IdentityCache,
    Item,
    Locator,
    Reader,
    Root,
    ScanContext,
    SessionRef,
    check_session_id,
    clean,
    join,
    wanted_cwd,
)

#: Names that moved into the harness folders, and their modules now.
_MOVED: Final = {
    "AntigravityLocator": "agentminutes.harness.antigravity.layout",
    "conversation_folder": "agentminutes.harness.antigravity.layout",
    "conversation_id_of": "agentminutes.harness.antigravity.layout",
    "ClaudeCodeLocator": "agentminutes.harness.claude_code.layout",
    "CodexLocator": "agentminutes.harness.codex.layout",
    "CopilotLocator": "agentminutes.harness.copilot.layout",
    "DocumentLocator": "agentminutes.harness.documents_layout",
    "GeminiCliLocator": "agentminutes.harness.gemini_cli.layout",
    "PiLocator": "agentminutes.harness.pi.layout",
}


def __getattr__(name: str) -> Any:
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return moved(__name__, home)(name)


__all__ = (
    "LOCATORS",
    "READER",
    "Gathered",
    "IdentityCache",
    "Item",
    "Locator",
    "Reader",
    "Root",
    "ScanContext",
    "SessionRef",
    "build_ref",
    "check_session_id",
    "clean",
    "join",
    "locator",
    "read_identity",
    "wanted_cwd",
)
