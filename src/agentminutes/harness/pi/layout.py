"""pi: ``sessions/<project>/*.jsonl``."""

from __future__ import annotations

import os
from collections.abc import Iterator

from agentminutes.harness.layout import Item, Locator, ScanContext, is_dir_entry


class PiLocator(Locator):
    """``<root>/--<cwd with / as ->--/<time>_<session id>.jsonl``."""

    harness = "pi"
    join = "inline"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        return self._project_entries(root, ctx, self._project_entry)

    def _project_entry(self, path: str, e: os.DirEntry[str], ctx: ScanContext) -> Iterator[Item]:
        if not is_dir_entry(e) and e.name.endswith(".jsonl"):
            yield from self._ref(path, ctx)
        else:
            ctx.skip_tree(path, is_dir_entry(e), "not a session transcript")
