"""Where each harness keeps its transcripts: default roots and file-name patterns.

One small table, :data:`ROOTS`, that ``follow`` (and later ``sessions``/``scan``)
reads when no target is given. A harness adds one :class:`HarnessRoot` here
when its adapter lands. Roots are additive and a missing root is not an error:
a user may have several config directories, or none yet.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ("ROOTS", "HarnessRoot", "default_roots", "is_transcript_name", "transcript_patterns")


@dataclass(frozen=True, slots=True)
class HarnessRoot:
    """A harness's transcript folders and the file names that are transcripts in them."""

    harness: str
    #: The folders to watch, from the environment (called each time: env can change).
    roots: Callable[[Mapping[str, str]], list[Path]]
    #: ``fnmatch`` patterns of transcript file names (not paths).
    patterns: tuple[str, ...]


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def _claude_roots(env: Mapping[str, str]) -> list[Path]:
    # CLAUDE_CONFIG_DIR may list several directories, comma-separated; each has projects/.
    configured = [p.strip() for p in env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()]
    if configured:
        return [Path(p).expanduser() / "projects" for p in configured]
    home = _home(env)
    return [home / ".claude" / "projects", home / ".config" / "claude" / "projects"]


def _codex_roots(env: Mapping[str, str]) -> list[Path]:
    codex_home = env.get("CODEX_HOME", "").strip()
    base = Path(codex_home).expanduser() if codex_home else _home(env) / ".codex"
    return [base / "sessions"]


#: Every harness with a known transcript location, by harness name.
ROOTS: dict[str, HarnessRoot] = {
    r.harness: r
    for r in (
        # <project>/<session>.jsonl, <project>/<session>/subagents/**/agent-*.jsonl
        HarnessRoot("claude-code", _claude_roots, ("*.jsonl",)),
        # YYYY/MM/DD/rollout-<time>-<id>.jsonl
        HarnessRoot("codex", _codex_roots, ("rollout-*.jsonl",)),
    )
}

#: File names taken as transcripts in a folder when no harness is named.
GENERIC_PATTERNS: tuple[str, ...] = ("*.jsonl",)


def default_roots(harness: str, env: Mapping[str, str] | None = None) -> list[Path]:
    """The folders *harness* writes transcripts under (existing or not), first one first."""
    entry = ROOTS.get(harness)
    if entry is None:
        from agentminutes._errors import UsageError

        known = ", ".join(f'"{n}"' for n in sorted(ROOTS))
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


def transcript_patterns(harness: str) -> tuple[str, ...]:
    """File-name patterns of *harness*'s transcripts (any ``*.jsonl`` for ``auto``)."""
    entry = ROOTS.get(harness)
    return entry.patterns if entry is not None else GENERIC_PATTERNS


def is_transcript_name(name: str, patterns: tuple[str, ...]) -> bool:
    """True when file *name* matches one of *patterns* and is not a sidecar."""
    if name.startswith(".") or name.endswith(".meta.json"):
        return False
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)
