"""Antigravity CLI step transcripts (``~/.gemini/antigravity-cli/brain/``).

The adapter and its rules are in :mod:`.adapter`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.antigravity.adapter import AntigravityAdapter

__all__ = ("DESCRIPTION", "AntigravityAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # The CLI's brain; the IDE's (~/.gemini/antigravity-ide/brain) holds no full transcripts.
    # <conversation>/.system_generated/logs/transcript_full.jsonl (+ sidecars)
    return [home(env) / ".gemini" / "antigravity-cli" / "brain"]


#: Everything the project knows about Antigravity.
DESCRIPTION: Final = Harness(
    name="antigravity",
    display_name="Antigravity",
    provider="gcp.gemini",
    reads="lines",
    adapter="agentminutes.harness.antigravity.adapter:AntigravityAdapter",
    roots=_roots,
    env=(),
    patterns=("transcript_full.jsonl",),
    archives=None,
    layout="agentminutes.harness.antigravity.layout:AntigravityLocator",
    tail=False,
    vocabulary="agentminutes.harness.antigravity.drift:VOCABULARY",
    baseline="agentminutes.harness.antigravity:baselines/antigravity.json",
    usage=None,
    prompt="",
)


__getattr__ = lazy_exports(globals())
