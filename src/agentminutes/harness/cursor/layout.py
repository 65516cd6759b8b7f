"""Cursor: ``<root>/<cwd slug>/agent-transcripts/<id>/<id>.jsonl`` and its ``subagents/``."""

from __future__ import annotations

import os
from collections.abc import Iterator

from agentminutes.harness.layout import (
    Gathered,
    Item,
    Locator,
    Root,
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
        projects = yield from self._listing(root)
        if projects is None:
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
                subs = _subagents(folder)
                if subs:
                    item.subagent_paths = subs
            yield item

    def gather(self, roots: list[Root], parent: SessionRef, ctx: ScanContext) -> Gathered:
        """The subagents in the parent's ``subagents/`` folder, named by the layout."""
        folder = os.path.dirname(parent.path)
        sid = os.path.basename(folder)
        if not parent.meta.session_id and os.path.basename(parent.path) == f"{sid}.jsonl":
            parent.meta.session_id = sid
        subagents = []
        for path in parent.subagent_paths or _subagents(folder):
            ref = self._strict_ref(path)
            ref.meta.session_id = parent.meta.session_id
            ref.meta.subagent_id = os.path.basename(path)[: -len(".jsonl")]
            ref.meta.is_subagent = True
            subagents.append(ref)
        return Gathered(join=self.join, subagents=subagents)


def _subagents(folder: str) -> list[str]:
    """The transcripts in a session folder's ``subagents/``, by name."""
    subs = join(folder, "subagents")
    try:
        names = sorted(e.name for e in list_entries(subs) if e.name.endswith(".jsonl"))
    except OSError:
        return []
    return [join(subs, n) for n in names]
