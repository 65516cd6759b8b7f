"""The harness adapters and their registry.

The registry is an explicit list, :data:`ADAPTERS`: adding a harness means
writing one module behind the :class:`~agentminutes.harness.Adapter` protocol
and adding its class here. Detection asks each adapter, in this order, to
grade the transcript head and takes the most confident answer.
"""

from __future__ import annotations

from agentminutes._errors import DetectError, UsageError
from agentminutes.harness._base import (
    SNIFF_BYTES,
    Adapter,
    BaseAdapter,
    Confidence,
    ParseOptions,
    version_newer,
)
from agentminutes.harness.claude_code import ClaudeCodeAdapter
from agentminutes.harness.codex import CodexAdapter

__all__ = (
    "ADAPTERS",
    "SNIFF_BYTES",
    "Adapter",
    "BaseAdapter",
    "Confidence",
    "ParseOptions",
    "adapter_class",
    "detect",
    "harness_names",
    "version_newer",
)

#: Every registered adapter class, in detection order (alphabetical by harness name).
ADAPTERS: tuple[type[Adapter], ...] = (ClaudeCodeAdapter, CodexAdapter)


def harness_names() -> list[str]:
    """The names of every registered harness."""
    return [a.name for a in ADAPTERS]


def adapter_class(name: str) -> type[Adapter]:
    """Return the adapter class registered for harness *name*."""
    for cls in ADAPTERS:
        if cls.name == name:
            return cls
    known = ", ".join(f'"{n}"' for n in harness_names())
    raise UsageError(f'unknown harness "{name}" (known: {known}, or "auto")')


def detect(head: bytes) -> tuple[type[Adapter], Confidence]:
    """Find the adapter whose format *head* (a transcript's first bytes) is.

    Raises:
        DetectError: no adapter recognizes the head; the message lists those tried.
    """
    head = head[:SNIFF_BYTES]
    best: type[Adapter] | None = None
    best_conf = Confidence.NO_MATCH
    for cls in ADAPTERS:
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
