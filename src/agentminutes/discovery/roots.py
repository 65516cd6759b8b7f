"""Where each harness keeps its transcripts: default roots and file-name patterns.

Each harness declares them in its folder's description
(:class:`agentminutes.harness.description.Harness`: ``roots``, ``env``,
``patterns``, ``archives``); this module answers from the registry for
``follow`` (when no target is given), ``sessions``, ``scan()``, ``archive``
and ``stats --include-subagents``. :data:`ROOTS` is a view of the registry,
kept for code that reads it. Roots are additive and a missing root is not an
error: a user may have several config directories, or none yet.

Each harness's relocation variable is honoured (``CLAUDE_CONFIG_DIR``, also a
comma-separated list; ``CODEX_HOME``; ``COPILOT_HOME``; ``GEMINI_CLI_HOME``;
``PI_CODING_AGENT_DIR``; ``QWEN_RUNTIME_DIR`` or ``QWEN_HOME``; ``XDG_DATA_HOME``). With none of them
set, the first root of each harness
is the reference CLI's default root. *Archive* roots hold finished sessions
(Codex moves archived rollouts to ``archived_sessions/``): discovery searches
them, ``follow`` does not watch them (a rollout moved there is not new).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.description import Harness

__all__ = (
    "ROOTS",
    "HarnessRoot",
    "archive_roots",
    "default_roots",
    "is_transcript_name",
    "transcript_patterns",
)


@dataclass(frozen=True, slots=True)
class HarnessRoot:
    """A harness's transcript folders and the file names that are transcripts in them."""

    harness: str
    #: The folders to watch, from the environment (called each time: env can change).
    roots: Callable[[Mapping[str, str]], list[Path]]
    #: ``fnmatch`` patterns of transcript file names (not paths).
    patterns: tuple[str, ...]
    #: Folders of finished sessions: searched by discovery, never watched by ``follow``.
    archives: Callable[[Mapping[str, str]], list[Path]] | None = None


def _roots_view() -> dict[str, HarnessRoot]:
    from agentminutes.harness.registry import harnesses

    return {
        h.name: HarnessRoot(h.name, h.roots, h.patterns, h.archives)
        for h in harnesses()
        if h.roots is not None
    }


def __getattr__(name: str) -> Any:
    # ROOTS: a view of the registry, built when first read.
    if name == "ROOTS":
        return _roots_view()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:
    #: Every harness with a known transcript location, by harness name (a view of the
    #: registry: each harness declares its roots in its folder's description).
    ROOTS: dict[str, HarnessRoot]


#: File names taken as transcripts in a folder when no harness is named.
GENERIC_PATTERNS: tuple[str, ...] = ("*.jsonl",)


def _described(harness: str) -> Harness | None:
    from agentminutes.harness.registry import described

    found = described(harness)
    return found if found is not None and found.roots is not None else None


def default_roots(harness: str, env: Mapping[str, str] | None = None) -> list[Path]:
    """The folders *harness* writes transcripts under (existing or not), first one first."""
    entry = _described(harness)
    if entry is None or entry.roots is None:
        from agentminutes.errors import UsageError

        known = ", ".join(f'"{n}"' for n in sorted(_roots_view()))
        raise UsageError(
            f'no default transcript folder is known for harness "{harness}" '
            f"(known: {known}); give a TARGET"
        )
    roots = entry.roots(os.environ if env is None else env)
    seen: list[Path] = []
    for r in roots:
        if r not in seen:
            seen.append(r)
    return seen


def archive_roots(harness: str, env: Mapping[str, str] | None = None) -> list[Path]:
    """The folders of *harness*'s finished sessions (existing or not); none for most harnesses."""
    entry = _described(harness)
    if entry is None or entry.archives is None:
        return []
    return entry.archives(os.environ if env is None else env)


def transcript_patterns(harness: str) -> tuple[str, ...]:
    """File-name patterns of *harness*'s transcripts (any ``*.jsonl`` for ``auto``)."""
    entry = _described(harness)
    return entry.patterns if entry is not None else GENERIC_PATTERNS


def is_transcript_name(name: str, patterns: tuple[str, ...]) -> bool:
    """True when file *name* matches one of *patterns* and is not a sidecar."""
    if name.startswith(".") or name.endswith(".meta.json"):
        return False
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)
