"""Crush (charmbracelet/crush): the SQLite database ``<project>/.crush/crush.db``.

Crush keeps one database per project, in the data directory it finds or makes
at the project's root (``.crush/``; ``--data-dir`` or ``options.data_directory``
move it). The global data folder (``$CRUSH_GLOBAL_DATA``, else
``$XDG_DATA_HOME/crush``, else ``~/.local/share/crush``) lists every project's
data directory in ``projects.json``. Tables read: ``sessions`` (id, parent
session, title, the last request's prompt and completion tokens, the
running cost, times) and ``messages`` (role, model, provider, ``parts``: a
JSON array of typed parts, times). ``files``, ``read_files`` and the migration
table are not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home, path
from agentminutes.schema.usage import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.crush.adapter import CrushAdapter

__all__ = ("DESCRIPTION", "CrushAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # The global data folder, whose projects.json lists each project's data directory
    # (<project>/.crush/crush.db): CRUSH_GLOBAL_DATA, else XDG_DATA_HOME/crush, else
    # ~/.local/share/crush.
    moved = env.get("CRUSH_GLOBAL_DATA", "").strip()
    if moved:
        return [path(moved).expanduser()]
    data = env.get("XDG_DATA_HOME", "").strip()
    return [(path(data).expanduser() if data else home(env) / ".local" / "share") / "crush"]


#: Everything the project knows about Crush.
DESCRIPTION: Final = Harness(
    name="crush",
    provider="",
    display_name="Crush",
    reads="documents",
    adapter="agentminutes.harness.crush.adapter:CrushAdapter",
    roots=_roots,
    env=("CRUSH_GLOBAL_DATA", "XDG_DATA_HOME"),
    patterns=("crush.db",),
    archives=None,
    layout="agentminutes.harness.crush.layout:CrushLocator",
    tail=True,
    vocabulary=None,
    baseline=None,
    # The session's last request: prompt_tokens counts the cache reads; its cost is
    # Crush's own (USD) running total, the session's share in usage.cost; message ids
    # are UUIDs.
    usage=UsageRule(input_includes_cache=True, key_rule="message"),
    prompt="input",
)


__getattr__ = lazy_exports(globals())
