"""Crush: one ``crush.db`` per project, listed in the global data folder's ``projects.json``."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

from agentminutes.harness.documents_layout import DocumentLocator
from agentminutes.harness.layout import Item, ScanContext, is_dir_path, join


class CrushLocator(DocumentLocator):
    """The databases a root leads to: the projects its ``projects.json`` lists, or its own.

    The default root is Crush's global data folder, whose ``projects.json``
    names each project's data directory (``<project>/.crush``); each holds a
    ``crush.db`` of many sessions. A root may also be such a data directory,
    or the database itself. The data folder's other files (settings, logs) are
    not opened.
    """

    harness = "crush"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        if not is_dir_path(root):
            yield from self._document(root, ctx, named=True)
            return
        own = join(root, "crush.db")
        if os.path.isfile(own):
            yield from self._document(own, ctx, named=True)
        for folder in _projects(join(root, "projects.json")):
            db = join(folder, "crush.db")
            if os.path.isfile(db) and db != own:
                yield from self._document(db, ctx, named=True)


def _projects(listing: str) -> list[str]:
    """The data directories ``projects.json`` lists (none when it is missing or unreadable)."""
    try:
        with open(listing, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return []
    projects = data.get("projects") if isinstance(data, dict) else None
    found: list[str] = []
    for p in projects if isinstance(projects, list) else []:
        folder = p.get("data_dir") if isinstance(p, dict) else None
        if isinstance(folder, str) and folder and folder not in found:
            found.append(folder)
    return found
