"""pi: ``sessions/<project>/*.jsonl``."""

from __future__ import annotations

from collections.abc import Iterator

from agentminutes.errors import ScanError
from agentminutes.harness.layout import Item, Locator, ScanContext, is_dir_entry


class PiLocator(Locator):
    """``<root>/--<cwd with / as ->--/<time>_<session id>.jsonl``."""

    harness = "pi"
    join = "inline"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        for found in self._project_entries(root, ctx):
            if isinstance(found, ScanError):
                yield found
                continue
            path, e = found
            if not is_dir_entry(e) and e.name.endswith(".jsonl"):
                yield from self._ref(path, ctx)
            else:
                ctx.skip_tree(path, is_dir_entry(e), "not a session transcript")
