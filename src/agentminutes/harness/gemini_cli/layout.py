"""Gemini CLI: ``tmp/<project>/chats/session-*.json[l]``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from agentminutes.harness._chats_layout import ChatsLocator
from agentminutes.harness.layout import (
    Gathered,
    Item,
    Root,
    ScanContext,
    SessionRef,
    is_dir_entry,
    is_dir_path,
    join,
    walk_files,
)


class GeminiCliLocator(ChatsLocator):
    """``<root>/<project>/chats/session-<time>-<id>.json[l]``; subagents in ``chats/<parent id>/``.

    ``<project>`` is a hash (older releases) or a name of the project folder.
    Everything else in a project folder (``logs.json``, ``/chat save``
    checkpoints, tool checkpoints, shell history) is skipped: those are not
    session recordings.
    """

    harness = "gemini-cli"
    join = "layout"

    def chats(
        self, folder: str, entries: list[os.DirEntry[str]], ctx: ScanContext
    ) -> Iterator[Item]:
        dirs = {e.name: join(folder, e.name) for e in entries if is_dir_entry(e)}
        used: set[str] = set()
        for e in entries:
            path = join(folder, e.name)
            if is_dir_entry(e):
                continue
            if not _GEMINI_SESSION.fullmatch(e.name):
                ctx.skip(path, "not a chat recording")
                continue
            for item in self._ref(path, ctx):
                if isinstance(item, SessionRef):
                    sid = item.meta.session_id
                    if sid and sid in dirs:
                        used.add(sid)
                        item.subagent_paths = self._subagents(dirs[sid], ctx) or None
                yield item
        for name in sorted(dirs):
            if name not in used:
                for path in self._subagents(dirs[name], ctx):
                    yield from self._ref(path, ctx)

    def _subagents(self, folder: str, ctx: ScanContext) -> list[str]:
        found = []
        for path in walk_files(folder):
            if path.endswith(".jsonl") and os.path.dirname(path) == folder:
                found.append(path)
            else:
                ctx.skip(path, "not a subagent recording")
        return found

    def gather(self, roots: list[Root], parent: SessionRef, ctx: ScanContext) -> Gathered:
        paths = parent.subagent_paths
        if paths is None:
            folder = join(os.path.dirname(parent.path), parent.meta.session_id)
            ok = bool(parent.meta.session_id) and is_dir_path(folder)
            paths = self._subagents(folder, ScanContext()) if ok else []
        return Gathered(join=self.join, subagents=[self._strict_ref(p) for p in paths])


_GEMINI_SESSION = re.compile(r"session-.+\.jsonl?")
