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

from agentminutes.harness.crush.adapter import CrushAdapter
from agentminutes.harness.crush.vocabulary import HARNESS

__all__ = ("HARNESS", "CrushAdapter")
