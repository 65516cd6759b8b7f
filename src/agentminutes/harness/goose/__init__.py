"""Goose (block/goose): the SQLite database ``~/.local/share/goose/sessions/sessions.db``.

Goose keeps every session in one database in its data folder
(``$GOOSE_PATH_ROOT/data``, else ``$XDG_DATA_HOME/goose``, else
``~/.local/share/goose``), under ``sessions/``: table ``sessions`` (id
``YYYYMMDD_N``, working directory, name, type ``user`` / ``sub_agent`` /
``scheduled`` / ``hidden``, running token totals and, from schema 13,
``accumulated_cost``) and ``messages`` (role, ``content_json``: a JSON array of
typed content, ``created_timestamp`` in seconds, ``metadata_json`` saying who
sees the message). Releases before 1.10 wrote one ``<id>.jsonl`` per session
there instead; those are not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home, path
from agentminutes.schema.usage import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.goose.adapter import GooseAdapter

__all__ = ("DESCRIPTION", "GooseAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # sessions/sessions.db in Goose's data folder: GOOSE_PATH_ROOT/data, else
    # XDG_DATA_HOME/goose, else ~/.local/share/goose.
    moved = env.get("GOOSE_PATH_ROOT", "").strip()
    if moved:
        return [path(moved).expanduser() / "data" / "sessions"]
    data = env.get("XDG_DATA_HOME", "").strip()
    base = path(data).expanduser() if data else home(env) / ".local" / "share"
    return [base / "goose" / "sessions"]


#: Everything the project knows about Goose.
DESCRIPTION: Final = Harness(
    name="goose",
    provider="",
    display_name="Goose",
    reads="documents",
    adapter="agentminutes.harness.goose.adapter:GooseAdapter",
    roots=_roots,
    env=("GOOSE_PATH_ROOT", "XDG_DATA_HOME"),
    patterns=("sessions.db",),
    archives=None,
    layout=None,
    tail=True,
    vocabulary=None,
    baseline=None,
    # The session's running totals (the provider's input counts the cache), Goose's
    # accumulated_cost as usage.cost; message ids are msg_<session>_<n>.
    usage=UsageRule(input_includes_cache=True, key_rule="message"),
    prompt="input",
)


__getattr__ = lazy_exports(globals())
