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

from agentminutes.harness.goose.adapter import GooseAdapter
from agentminutes.harness.goose.vocabulary import HARNESS

__all__ = ("HARNESS", "GooseAdapter")
