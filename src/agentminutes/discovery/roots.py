"""Where each harness keeps its transcripts: default roots and file-name patterns.

One small table, :data:`ROOTS`, that ``follow`` reads when no target is given
and that ``sessions``, ``scan()``, ``archive`` and ``stats --include-subagents``
read for the folders to search. A harness adds one :class:`HarnessRoot` here
when its adapter lands. Roots are additive and a missing root is not an error:
a user may have several config directories, or none yet.

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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

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


def _path(text: str) -> Path:
    # pathlib (with urllib.parse and ipaddress) only once a default root is asked for:
    # a follow of a named transcript writes its first events without it.
    from pathlib import Path

    return Path(text)


def _home(env: Mapping[str, str]) -> Path:
    return _path(env.get("HOME") or os.path.expanduser("~"))


def _claude_roots(env: Mapping[str, str]) -> list[Path]:
    # CLAUDE_CONFIG_DIR may list several directories, comma-separated; each has projects/.
    configured = [p.strip() for p in env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()]
    if configured:
        return [_path(p).expanduser() / "projects" for p in configured]
    home = _home(env)
    return [home / ".claude" / "projects", home / ".config" / "claude" / "projects"]


#: VS Code and its forks, whose global storage holds the extensions' task folders.
_EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
#: Cline and its forks, by extension id.
_CLINE_EXTENSIONS = ("saoudrizwan.claude-dev", "rooveterinaryinc.roo-cline", "kilocode.kilo-code")


def _cline_roots(env: Mapping[str, str]) -> list[Path]:
    # The CLI keeps tasks in ~/.cline/data/tasks; the extensions in each editor's globalStorage.
    home = _home(env)
    config = env.get("XDG_CONFIG_HOME", "").strip()
    bases = [_path(config).expanduser() if config else home / ".config"]
    bases.append(home / "Library" / "Application Support")
    if env.get("APPDATA", "").strip():
        bases.append(_path(env["APPDATA"]))
    roots = [home / ".cline" / "data" / "tasks"]
    roots.extend(
        base / editor / "User" / "globalStorage" / ext / "tasks"
        for base in bases
        for editor in _EDITORS
        for ext in _CLINE_EXTENSIONS
    )
    return roots


def _codex_home(env: Mapping[str, str]) -> Path:
    codex_home = env.get("CODEX_HOME", "").strip()
    return _path(codex_home).expanduser() if codex_home else _home(env) / ".codex"


def _codex_roots(env: Mapping[str, str]) -> list[Path]:
    return [_codex_home(env) / "sessions"]


def _codex_archives(env: Mapping[str, str]) -> list[Path]:
    return [_codex_home(env) / "archived_sessions"]


def _copilot_home(env: Mapping[str, str]) -> Path:
    copilot_home = env.get("COPILOT_HOME", "")
    return _path(copilot_home).expanduser() if copilot_home else _home(env) / ".copilot"


def _copilot_roots(env: Mapping[str, str]) -> list[Path]:
    return [_copilot_home(env) / "session-state"]


def _copilot_archives(env: Mapping[str, str]) -> list[Path]:
    # Legacy whole-document sessions (session_<id>_<ms>.json), written before session-state.
    return [_copilot_home(env) / "history-session-state"]


def _antigravity_roots(env: Mapping[str, str]) -> list[Path]:
    # The CLI's brain; the IDE's (~/.gemini/antigravity-ide/brain) holds no full transcripts.
    return [_home(env) / ".gemini" / "antigravity-cli" / "brain"]


def _gemini_roots(env: Mapping[str, str]) -> list[Path]:
    # GEMINI_CLI_HOME stands in for the home directory: state lives in its .gemini/.
    home = env.get("GEMINI_CLI_HOME", "").strip()
    base = _path(home).expanduser() if home else _home(env)
    return [base / ".gemini" / "tmp"]


def _pi_roots(env: Mapping[str, str]) -> list[Path]:
    agent_dir = env.get("PI_CODING_AGENT_DIR", "").strip()
    base = _path(agent_dir).expanduser() if agent_dir else _home(env) / ".pi" / "agent"
    return [base / "sessions"]


def _qwen_roots(env: Mapping[str, str]) -> list[Path]:
    # QWEN_RUNTIME_DIR holds the session state; QWEN_HOME relocates the whole ~/.qwen.
    configured = env.get("QWEN_RUNTIME_DIR", "").strip() or env.get("QWEN_HOME", "").strip()
    base = _path(configured).expanduser() if configured else _home(env) / ".qwen"
    return [base / "projects", base / "tmp"]


def _opencode_roots(env: Mapping[str, str]) -> list[Path]:
    # XDG_DATA_HOME (default ~/.local/share) holds opencode/ and the Kilo fork's kilo/.
    data = env.get("XDG_DATA_HOME", "").strip()
    base = _path(data).expanduser() if data else _home(env) / ".local" / "share"
    return [base / "opencode", base / "kilo"]


#: Every harness with a known transcript location, by harness name.
ROOTS: dict[str, HarnessRoot] = {
    r.harness: r
    for r in (
        # <conversation>/.system_generated/logs/transcript_full.jsonl (+ sidecars)
        HarnessRoot("antigravity", _antigravity_roots, ("transcript_full.jsonl",)),
        # <project>/<session>.jsonl, <project>/<session>/subagents/**/agent-*.jsonl
        HarnessRoot("claude-code", _claude_roots, ("*.jsonl",)),
        # YYYY/MM/DD/rollout-<time>-<id>.jsonl; archived: rollout-<time>-<id>.jsonl
        # <task id>/{api_conversation_history,ui_messages,task_metadata}.json
        HarnessRoot("cline", _cline_roots, ("ui_messages.json", "api_conversation_history.json")),
        HarnessRoot("codex", _codex_roots, ("rollout-*.jsonl",), _codex_archives),
        # <session>/events.jsonl (+ workspace.yaml, checkpoints/ …)
        HarnessRoot("copilot", _copilot_roots, ("*.jsonl",), _copilot_archives),
        # <project>/chats/session-<time>-<id>.jsonl, chats/<session id>/<subagent id>.jsonl
        HarnessRoot("gemini-cli", _gemini_roots, ("*.jsonl",)),
        # --<cwd>--/<time>_<id>.jsonl
        # opencode.db (opencode-stable.db, kilo.db); older storage/ and project/*/storage/ trees
        HarnessRoot("opencode", _opencode_roots, ("*.db",)),
        HarnessRoot("pi", _pi_roots, ("*.jsonl",)),
        # projects/<sanitized cwd>/chats/<id>.jsonl; older tmp/<hash>/chats/session-*.json
        HarnessRoot("qwen-code", _qwen_roots, ("*.jsonl", "session-*.json")),
    )
}

#: File names taken as transcripts in a folder when no harness is named.
GENERIC_PATTERNS: tuple[str, ...] = ("*.jsonl",)


def default_roots(harness: str, env: Mapping[str, str] | None = None) -> list[Path]:
    """The folders *harness* writes transcripts under (existing or not), first one first."""
    entry = ROOTS.get(harness)
    if entry is None:
        from agentminutes.errors import UsageError

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


def archive_roots(harness: str, env: Mapping[str, str] | None = None) -> list[Path]:
    """The folders of *harness*'s finished sessions (existing or not); none for most harnesses."""
    entry = ROOTS.get(harness)
    if entry is None or entry.archives is None:
        return []
    return entry.archives(os.environ if env is None else env)


def transcript_patterns(harness: str) -> tuple[str, ...]:
    """File-name patterns of *harness*'s transcripts (any ``*.jsonl`` for ``auto``)."""
    entry = ROOTS.get(harness)
    return entry.patterns if entry is not None else GENERIC_PATTERNS


def is_transcript_name(name: str, patterns: tuple[str, ...]) -> bool:
    """True when file *name* matches one of *patterns* and is not a sidecar."""
    if name.startswith(".") or name.endswith(".meta.json"):
        return False
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)
