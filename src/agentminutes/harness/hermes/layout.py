"""Hermes Agent: ``<HERMES_HOME>/state.db``, and a profile's ``profiles/<name>/state.db``."""

from __future__ import annotations

import os
from collections.abc import Iterator

from agentminutes.harness.documents_layout import DocumentLocator
from agentminutes.harness.layout import Item, ScanContext, is_dir_path, join


class HermesLocator(DocumentLocator):
    """The sessions of Hermes's session stores: one database per home, one per profile.

    Only ``state.db`` files are opened: the rest of the home (skills, memories,
    logs, the credential and config files) is never read. A root may also be
    a database itself.
    """

    harness = "hermes"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        if not is_dir_path(root):
            yield from self._document(root, ctx, named=True)
            return
        stores = [join(root, "state.db")]
        profiles = join(root, "profiles")
        if is_dir_path(profiles):
            stores += [join(profiles, p, "state.db") for p in sorted(os.listdir(profiles))]
        for path in stores:
            if os.path.isfile(path):
                yield from self._document(path, ctx, named=True)
