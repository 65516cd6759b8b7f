"""Cursor: ``<root>/<cwd slug>/agent-transcripts/<id>/<id>.jsonl`` and its ``subagents/``."""

from __future__ import annotations

from collections.abc import Iterator

from agentminutes.discovery.layouts.base import (
    Item,
    Locator,
    ScanContext,
    SessionRef,
    is_dir_entry,
    join,
    list_entries,
)


class CursorLocator(Locator):
    """Each ``agent-transcripts/<id>/<id>.jsonl`` is a session (its id is the folder's name);
    ``<id>/subagents/<agent id>.jsonl`` are its subagents' transcripts.

    The lines record no ids, so the layout supplies them. Everything else in a
    project folder (terminals, MCP descriptors, the IDE's own files) is not
    a transcript and is left unread.
    """

    harness = "cursor"
    join = "layout"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        try:
            projects = list_entries(root)
        except OSError as exc:
            yield self._error(root, exc)
            return
        for project in projects:
            if not is_dir_entry(project):
                continue
            folder = join(root, project.name, "agent-transcripts")
            try:
                sessions = list_entries(folder)
            except OSError:
                continue  # a project where no agent ran
            for s in sessions:
                if not is_dir_entry(s):
                    continue
                yield from self._session(join(folder, s.name), s.name, ctx)

    def _session(self, folder: str, sid: str, ctx: ScanContext) -> Iterator[Item]:
        main = join(folder, f"{sid}.jsonl")
        for item in self._ref(main, ctx):
            if isinstance(item, SessionRef):
                item.meta.session_id = sid
                subs = join(folder, "subagents")
                try:
                    names = sorted(e.name for e in list_entries(subs) if e.name.endswith(".jsonl"))
                except OSError:
                    names = []
                if names:
                    item.subagent_paths = [join(subs, n) for n in names]
            yield item
