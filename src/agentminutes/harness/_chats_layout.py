"""The layout Gemini CLI and its fork Qwen Code share: ``<root>/<project>/chats/``.

Each project folder under a root holds the recordings of its sessions in
``chats/``; everything else there (``logs.json``, ``/chat save`` checkpoints,
tool checkpoints, shell history) is skipped: those are not session recordings.
What ``chats/`` holds, and how it is read, is each harness's own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from agentminutes.harness.layout import Item, Locator, ScanContext, is_dir_entry

__all__ = ("ChatsLocator",)


class ChatsLocator(Locator):
    """A locator of ``<root>/<project>/chats/``: each listed ``chats/`` folder is :meth:`chats`."""

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        return self._project_entries(root, ctx, self._project_entry)

    def _project_entry(self, path: str, e: os.DirEntry[str], ctx: ScanContext) -> Iterator[Item]:
        if not (e.name == "chats" and is_dir_entry(e)):
            ctx.skip_tree(path, is_dir_entry(e), "not a chat recording")
            return
        entries = yield from self._listing(path)
        if entries is not None:
            yield from self.chats(path, entries, ctx)

    def chats(
        self, folder: str, entries: list[os.DirEntry[str]], ctx: ScanContext
    ) -> Iterator[Item]:
        """The sessions in the ``chats/`` folder *folder*, whose listing is *entries*."""
        raise NotImplementedError
