"""The harness adapters and their registry.

The registry is an explicit list, :data:`ADAPTERS`: adding a harness means
writing one module behind the :class:`~agentminutes.harness.Adapter` protocol
and adding its class here. Whole-document formats (data exports, databases)
implement :class:`~agentminutes.harness.DocumentAdapter` and are listed in
:data:`DOCUMENT_ADAPTERS`. Detection asks each adapter, in this order, to
grade the transcript head and takes the most confident answer.
"""

from __future__ import annotations

from agentminutes._errors import DetectError, UsageError
from agentminutes.harness._base import (
    SNIFF_BYTES,
    Adapter,
    BaseAdapter,
    BaseDocumentAdapter,
    Confidence,
    ConversationInfo,
    DocumentAdapter,
    DocumentSession,
    ParseOptions,
    SkipHook,
    is_document_adapter,
    version_newer,
)
from agentminutes.harness.antigravity import AntigravityAdapter
from agentminutes.harness.chatgpt import ChatGPTAdapter
from agentminutes.harness.claude_ai import ClaudeAIAdapter
from agentminutes.harness.claude_code import ClaudeCodeAdapter
from agentminutes.harness.codex import CodexAdapter
from agentminutes.harness.copilot import CopilotAdapter
from agentminutes.harness.gemini_cli import GeminiCliAdapter
from agentminutes.harness.pi import PiAdapter
from agentminutes.harness.turns_db import TurnsDBAdapter

__all__ = (
    "ADAPTERS",
    "DOCUMENT_ADAPTERS",
    "SNIFF_BYTES",
    "Adapter",
    "BaseAdapter",
    "BaseDocumentAdapter",
    "Confidence",
    "ConversationInfo",
    "DocumentAdapter",
    "DocumentSession",
    "ParseOptions",
    "SkipHook",
    "adapter_class",
    "detect",
    "document_adapter_class",
    "harness_names",
    "is_document_adapter",
    "version_newer",
)

#: Every registered adapter class, in detection order (alphabetical by harness name).
ADAPTERS: tuple[type[Adapter], ...] = (
    AntigravityAdapter,
    ClaudeCodeAdapter,
    CodexAdapter,
    CopilotAdapter,
    GeminiCliAdapter,
    PiAdapter,
)

#: Every registered whole-document adapter class, in detection order (by harness name).
DOCUMENT_ADAPTERS: tuple[type[DocumentAdapter], ...] = (
    ChatGPTAdapter,
    ClaudeAIAdapter,
    TurnsDBAdapter,
)


def harness_names() -> list[str]:
    """The names of every registered harness, line and document formats alike."""
    return [a.name for a in ADAPTERS] + [a.name for a in DOCUMENT_ADAPTERS]


def document_adapter_class(name: str) -> type[DocumentAdapter] | None:
    """The document adapter class registered for harness *name*, or ``None``."""
    for cls in DOCUMENT_ADAPTERS:
        if cls.name == name:
            return cls
    return None


def adapter_class(name: str) -> type[Adapter]:
    """Return the adapter class registered for harness *name*."""
    for cls in ADAPTERS:
        if cls.name == name:
            return cls
    if document_adapter_class(name) is not None:
        raise UsageError(f'harness "{name}" reads whole documents (exports, databases), not lines')
    known = ", ".join(f'"{n}"' for n in harness_names())
    raise UsageError(f'unknown harness "{name}" (known: {known}, or "auto")')


def detect(head: bytes) -> tuple[type[Adapter] | type[DocumentAdapter], Confidence]:
    """Find the adapter whose format *head* (a transcript's first bytes) is.

    Line adapters come first; a document adapter is returned only where no
    line adapter is as sure. A ZIP archive is graded by the head of its
    conversations member, not its own (see :func:`agentminutes._documents.route`).

    Raises:
        DetectError: no adapter recognizes the head; the message lists those tried.
    """
    head = head[:SNIFF_BYTES]
    best: type[Adapter] | type[DocumentAdapter] | None = None
    best_conf = Confidence.NO_MATCH
    candidates: tuple[type[Adapter] | type[DocumentAdapter], ...] = ADAPTERS + DOCUMENT_ADAPTERS
    for cls in candidates:
        conf = cls.sniff(head)
        if conf > best_conf:
            best, best_conf = cls, conf
            if conf == Confidence.CERTAIN:
                break
    if best is None:
        tried = ", ".join(harness_names())
        raise DetectError(
            f"could not detect the source harness (tried {tried}); pass --harness explicitly"
        )
    return best, best_conf
