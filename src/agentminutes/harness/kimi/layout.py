"""Kimi CLI: ``sessions/<md5 of the work dir>/<session id>/wire.jsonl``."""

from __future__ import annotations

from collections.abc import Iterator

from agentminutes.harness.layout import (
    Item,
    Locator,
    ScanContext,
    SessionRef,
    is_dir_entry,
    join,
)


class KimiLocator(Locator):
    """One session folder per session under a work-dir folder; its ``wire.jsonl`` is the transcript.

    The wire log records no session id: the session folder's name is it. A
    subagent's own log (``subagents/<id>/wire.jsonl``) repeats what the parent's
    log holds inline, so it is skipped, as are the context and state files.
    """

    harness = "kimi"
    join = "inline"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        for project in self._projects(root, ctx):
            if not isinstance(project, tuple):
                yield project
                continue
            folder, entries = project
            for e in entries:
                session = join(folder, e.name)
                if not is_dir_entry(e):
                    ctx.skip(session, "not a session folder")
                    continue
                files = yield from self._listing(session)
                if files is None:
                    continue
                for f in files:
                    path = join(session, f.name)
                    if f.name == "wire.jsonl" and not is_dir_entry(f):
                        for item in self._ref(path, ctx):
                            if isinstance(item, SessionRef) and not item.meta.session_id:
                                item.meta.session_id = e.name
                            yield item
                    else:
                        ctx.skip_tree(path, is_dir_entry(f), "not a session transcript")
