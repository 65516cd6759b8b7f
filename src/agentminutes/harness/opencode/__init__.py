"""OpenCode (and its Kilo fork): the SQLite database, and the older JSON storage trees.

The adapter and its rules are in :mod:`.adapter`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home, path
from agentminutes.schema.usage_rule import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.opencode.adapter import (
        TOOL_KINDS,
        DatabaseTail,
        OpenCodeAdapter,
        SessionRow,
        build_session,
        ms_rfc3339,
        tree_files,
    )

__all__ = (
    "DESCRIPTION",
    "TOOL_KINDS",
    "DatabaseTail",
    "OpenCodeAdapter",
    "SessionRow",
    "build_session",
    "ms_rfc3339",
    "tree_files",
)


def _roots(env: Mapping[str, str]) -> list[Path]:
    # opencode.db (opencode-stable.db, kilo.db); older storage/ and project/*/storage/ trees.
    # XDG_DATA_HOME (default ~/.local/share) holds opencode/ and the Kilo fork's kilo/.
    data = env.get("XDG_DATA_HOME", "").strip()
    base = path(data).expanduser() if data else home(env) / ".local" / "share"
    return [base / "opencode", base / "kilo"]


#: Everything the project knows about OpenCode.
DESCRIPTION: Final = Harness(
    name="opencode",
    display_name="OpenCode",
    provider="",
    reads="documents",
    adapter="agentminutes.harness.opencode.adapter:OpenCodeAdapter",
    roots=_roots,
    env=("XDG_DATA_HOME",),
    patterns=("*.db",),
    archives=None,
    layout="agentminutes.harness.opencode.layout:OpenCodeLocator",
    tail=True,
    vocabulary="agentminutes.harness.opencode.drift:VOCABULARY",
    baseline="agentminutes.harness.opencode:baselines/opencode.json",
    # Input excludes cache.read and cache.write; the adapter adds the reasoning
    # (extra.reasoning) to output; cost is usage.cost; message ids are globally unique
    # (msg_…).
    usage=UsageRule(input_includes_cache=False, reasoning_key="reasoning", key_rule="message"),
    prompt="all",
)


__getattr__ = lazy_exports(globals())
