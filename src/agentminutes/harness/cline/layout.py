"""Cline, Roo Code, Kilo Code: ``tasks/<task id>/`` folders of JSON documents."""

from __future__ import annotations

import os
from collections.abc import Iterator

from agentminutes import timestamps
from agentminutes.errors import AgentminutesError, ScanError
from agentminutes.harness.layout import (
    Item,
    Locator,
    ScanContext,
    SessionRef,
    is_dir_entry,
    is_dir_path,
    join,
    os_cause,
)

#: The documents of a task folder (the rest of a task folder is checkpoints, context files).
MEMBERS = ("api_conversation_history.json", "ui_messages.json", "task_metadata.json")
#: The 3.x CLI's session document, ``sessions/<id>/<id>.messages.json``.
SESSION_SUFFIX = ".messages.json"


class ClineLocator(Locator):
    """``<root>/<task id>/{api_conversation_history,ui_messages,task_metadata}.json``.

    A root is a ``tasks`` folder (of the extension's global storage, or the
    CLI's ``~/.cline/data/tasks``); each task folder holding a conversation
    or UI history is one session, listed with the folder as its ``path``
    (``convert`` reads the folder). Other files in a task folder are skipped.
    A root may also be one task folder. The 3.x CLI's ``~/.cline/data/sessions`` holds
    ``<id>/<id>.messages.json`` instead: each is one session, the file its ``path``.
    """

    harness = "cline"
    join = "inline"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        entries = yield from self._listing(root)
        if entries is None:
            return
        if any(e.name in MEMBERS[:2] for e in entries):
            yield from self._task(root, entries, ctx)
            return
        for e in entries:
            path = join(root, e.name)
            if not is_dir_entry(e):
                ctx.skip(path, "not a task folder")
                continue
            inner = yield from self._listing(path)
            if inner is None:
                continue
            yield from self._task(path, inner, ctx)

    def _task(
        self, folder: str, entries: list[os.DirEntry[str]], ctx: ScanContext
    ) -> Iterator[Item]:
        names = {e.name for e in entries}
        document = os.path.basename(folder) + SESSION_SUFFIX
        if document in names:  # a 3.x CLI session folder: its messages document is the session
            for e in entries:
                if e.name != document:
                    ctx.skip_tree(join(folder, e.name), is_dir_entry(e), "not a session document")
            file = join(folder, document)
            yield from self._session(file, "json", [file], ctx)
            return
        if not names & set(MEMBERS[:2]):
            ctx.skip_tree(folder, True, "not a task folder")
            return
        for e in entries:
            if e.name not in MEMBERS:
                ctx.skip_tree(join(folder, e.name), is_dir_entry(e), "not a task document")
        members = [join(folder, n) for n in MEMBERS if n in names]
        yield from self._session(folder, "folder", members, ctx)

    def _session(self, path: str, kind: str, files: list[str], ctx: ScanContext) -> Iterator[Item]:
        """The one session of a task folder or session document at *path*, listed with its
        *files*' latest time and their total size."""
        if ctx.on_file is not None:
            ctx.on_file(path)
        from agentminutes.harness.cline.adapter import ClineAdapter

        try:
            stats = [os.stat(f) for f in files]
            session = next(ClineAdapter().sessions(self.reader.opened(path, kind)))
        except OSError as exc:
            yield ScanError(self.harness, os_cause("stat", path, exc), path)
            return
        except (AgentminutesError, StopIteration) as exc:
            yield ScanError(self.harness, str(exc) or "no session", path)
            return
        head = session.events[0]
        assert head.session_meta is not None
        updated = session.conversation.updated
        ref = SessionRef(
            meta=head.session_meta,
            path=path,
            started_at=timestamps.normalize(head.timestamp) if head.timestamp else "",
            mod_time=timestamps.format_local_ns(max(st.st_mtime_ns for st in stats)),
            size_bytes=sum(st.st_size for st in stats),
            updated_at=timestamps.normalize(updated) if updated else "",
        )
        if not ctx.windowed() or ctx.includes(*ref.window()):
            yield ref

    def sidecars(self, ref: SessionRef) -> list[str]:
        """The task's documents (its ``path`` is the folder)."""
        if not is_dir_path(ref.path):
            return []
        return [join(ref.path, n) for n in MEMBERS if os.path.isfile(join(ref.path, n))]
