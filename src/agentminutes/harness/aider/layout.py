"""Aider: ``.aider.chat.history.md`` at a repository's root (one file holds every run there)."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator

from agentminutes.harness.layout import (
    Item,
    Locator,
    ScanContext,
    is_dir_entry,
    is_dir_path,
    join,
    list_entries,
)


class AiderLocator(Locator):
    """``<root>/.aider.chat.history*.md`` and ``<root>/<repository>/.aider.chat.history*.md``.

    Aider writes its history at the root of the repository it runs in, so a
    root is a repository or a folder of repositories; nothing deeper is
    searched (a repository's own files are no sessions, and are not counted).
    """

    harness = "aider"
    join = "inline"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        if not is_dir_path(root):
            yield from self._ref(root, ctx)
            return
        patterns = self.patterns
        entries = yield from self._listing(root)
        if entries is None:
            return
        for e in entries:
            path = join(root, e.name)
            if not is_dir_entry(e):
                if _history(e.name, patterns):
                    yield from self._ref(path, ctx)
                continue
            try:
                inner = list_entries(path)
            except OSError:
                continue  # a folder we may not read is no repository of ours
            for f in inner:
                if not is_dir_entry(f) and _history(f.name, patterns):
                    yield from self._ref(join(path, f.name), ctx)


def _history(name: str, patterns: tuple[str, ...]) -> bool:
    # The history is a dot file, which the generic name test leaves out as hidden.
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)
