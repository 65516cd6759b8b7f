"""The plainest layout: every file under a root whose name the harness's patterns match.

For a harness that keeps each session in one transcript file somewhere below
its root (``<root>/**/<session>.jsonl``) and writes nothing else there worth
knowing: no subagent files, no sidecars. It reads the harness's name and
file-name patterns from the registry, so one class serves any such harness.
"""

from __future__ import annotations

from collections.abc import Iterator

from agentminutes.discovery.layouts.base import (
    Item,
    Locator,
    ScanContext,
    is_dir_entry,
    join,
)
from agentminutes.discovery.roots import is_transcript_name, transcript_patterns

__all__ = ("FilesLocator",)


class FilesLocator(Locator):
    """``<root>/**/<name matching a pattern>``, depth first by name; other files are skipped.

    The registry sets :attr:`harness` when it makes the locator.
    """

    join = "inline"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        patterns = transcript_patterns(self.harness)
        entries = yield from self._listing(root)
        if entries is None:
            return
        for e in entries:
            path = join(root, e.name)
            if is_dir_entry(e):
                yield from self.scan(path, ctx)
            elif is_transcript_name(e.name, patterns):
                yield from self._ref(path, ctx)
            else:
                ctx.skip(path, "not a session transcript")
