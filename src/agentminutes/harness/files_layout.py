"""The plainest layout: every file under a root whose name the harness's patterns match.

For a harness that keeps each session in one transcript file somewhere below
its root (``<root>/**/<session>.jsonl``) and writes nothing else there worth
knowing: no subagent files, no sidecars. It reads the harness's name and
file-name patterns from its description (set when discovery makes the locator),
so one class serves any such harness.
"""

from __future__ import annotations

from collections.abc import Iterator

from agentminutes.harness.layout import (
    Item,
    Locator,
    ScanContext,
    is_dir_entry,
    is_transcript_name,
    join,
)

__all__ = ("FilesLocator",)


class FilesLocator(Locator):
    """``<root>/**/<name matching a pattern>``, depth first by name; other files are skipped.

    Discovery sets :attr:`harness` and :attr:`patterns` when it makes the locator.
    """

    join = "inline"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        entries = yield from self._listing(root)
        if entries is None:
            return
        for e in entries:
            path = join(root, e.name)
            if is_dir_entry(e):
                yield from self.scan(path, ctx)
            elif is_transcript_name(e.name, self.patterns):
                yield from self._ref(path, ctx)
            else:
                ctx.skip(path, "not a session transcript")
