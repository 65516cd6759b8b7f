"""OpenHands CLI: ``conversations/<id>/`` folders (``events/`` and ``base_state.json``)."""

from __future__ import annotations

from collections.abc import Iterator

from agentminutes.harness.documents_layout import DocumentLocator
from agentminutes.harness.layout import Item, ScanContext, is_dir_entry, join


class OpenHandsLocator(DocumentLocator):
    """One session per conversation folder; the folder is the session's source."""

    harness = "openhands"

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
