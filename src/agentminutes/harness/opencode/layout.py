"""OpenCode (and Kilo): ``<data>/opencode.db`` (any ``*.db`` there), older ``storage/`` trees."""

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
    list_entries,
    os_cause,
    walk_files,
)


class OpenCodeLocator(Locator):
    """The sessions of an OpenCode data folder: its databases and its JSON storage trees.

    ``<root>/*.db`` (``opencode.db``, ``opencode-stable.db``; Kilo's ``kilo.db``)
    hold many sessions each, listed with the database as their ``path`` (and
    ``--conversation`` taking the id). A storage tree (``<root>/storage/`` from
    1.0, ``<root>/project/<project>/storage/`` before) lists each session with
    its info file as ``path``; its message and part files are the session's
    sidecars. Everything else in the folder (logs, snapshots, binaries, the
    credential store ``auth.json``) is skipped by name, never opened. A root
    may also be a database or a storage folder itself.
    """

    harness = "opencode"
    join = "inline"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        if not is_dir_path(root):
            yield from self._database(root, ctx, named=True)
            return
        entries = yield from self._listing(root)
        if entries is None:
            return
        names = {e.name for e in entries}
        if "session" in names:  # the root is a storage folder
            yield from self._tree(root, ctx)
            return
        for e in entries:
            path = join(root, e.name)
            if e.name == "storage" and is_dir_entry(e):
                yield from self._tree(path, ctx)
            elif e.name == "project" and is_dir_entry(e):
                for project in list_entries(path):
                    storage = join(path, project.name, "storage")
                    if is_dir_entry(project) and is_dir_path(storage):
                        yield from self._tree(storage, ctx)
                    else:
                        ctx.skip_tree(
                            join(path, project.name), is_dir_entry(project), "not a storage tree"
                        )
            elif not is_dir_entry(e) and e.name.endswith(".db"):
                yield from self._database(path, ctx, named=False)
            elif not is_dir_entry(e) and e.name.endswith((".db-wal", ".db-shm")):
                ctx.skip(path, "a database's WAL")
            else:
                ctx.skip_tree(path, is_dir_entry(e), "not an OpenCode session store")

    def _refs(
        self, path: str, ctx: ScanContext, *, named: bool
    ) -> list[SessionRef] | ScanError | None:
        from agentminutes.harness.opencode.adapter import OpenCodeAdapter

        try:
            found = self.reader.route(path, "opencode" if named else "auto")
        except AgentminutesError as exc:
            return ScanError(self.harness, str(exc), path) if named else None
        if found is None or found[1] is not OpenCodeAdapter:
            return ScanError(self.harness, "not an OpenCode store", path) if named else None
        if ctx.on_file is not None:
            ctx.on_file(path)
        try:
            rows = OpenCodeAdapter().session_rows(found[0])
        except AgentminutesError as exc:
            return ScanError(self.harness, str(exc), path)
        out = []
        for row in rows:
            ref_path = row.path or path
            try:
                st = os.stat(ref_path)
            except OSError as exc:
                return ScanError(self.harness, os_cause("stat", ref_path, exc), ref_path)
            meta = row.meta()
            ref = SessionRef(
                meta=meta,
                path=ref_path,
                started_at=timestamps.normalize(row.started()) if row.created_ms else "",
                mod_time=timestamps.format_local_ns(st.st_mtime_ns),
                size_bytes=st.st_size,
                updated_at=timestamps.normalize(row.updated()) if row.updated_ms else "",
            )
            if not ctx.windowed() or ctx.includes(*ref.window()):
                out.append(ref)
        return out

    def _database(self, path: str, ctx: ScanContext, *, named: bool) -> Iterator[Item]:
        found = self._refs(path, ctx, named=named)
        if found is None:
            ctx.skip(path, "not an OpenCode database")
        elif isinstance(found, ScanError):
            yield found
        else:
            yield from found

    def _tree(self, storage: str, ctx: ScanContext) -> Iterator[Item]:
        found = self._refs(storage, ctx, named=True)
        if isinstance(found, ScanError):
            yield found
            return
        refs = found or []
        owned = {os.path.abspath(r.path) for r in refs}
        for r in refs:
            owned.update(os.path.abspath(p) for p in self.sidecars(r))
        for path in walk_files(storage):
            if os.path.abspath(path) not in owned:
                ctx.skip(path, "not a file of a listed session")
        yield from refs

    def sidecars(self, ref: SessionRef) -> list[str]:
        """A storage-tree session's message and part files (none for a database session)."""
        from agentminutes.harness.opencode.adapter import tree_files

        if ref.path.endswith(".db"):
            return []
        return tree_files(ref.path, ref.meta.subagent_id or ref.meta.session_id)
