"""OpenHands CLI: ``conversations/<id>/`` folders (``events/`` and ``base_state.json``)."""

from __future__ import annotations

from collections.abc import Iterator

from agentminutes.discovery.layouts.base import Item, ScanContext, is_dir_entry, join
from agentminutes.discovery.layouts.documents import DocumentLocator


class OpenHandsLocator(DocumentLocator):
    """One session per conversation folder; the folder is the session's source."""

    def __init__(self, harness: str = "openhands") -> None:
        super().__init__(harness)

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        entries = yield from self._listing(root)
        if entries is None:
            return
        names = {e.name for e in entries}
        if "base_state.json" in names:  # the root is a conversation folder
            yield from self._document(root, ctx, named=True)
            return
        for e in entries:
            path = join(root, e.name)
            if is_dir_entry(e):
                yield from self._document(path, ctx, named=False)
            else:
                ctx.skip(path, "not a conversation folder")
