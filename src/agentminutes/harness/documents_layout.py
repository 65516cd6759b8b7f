"""Whole-document harnesses (data exports, ``turns.db``): every file under an explicit root."""

from __future__ import annotations

import os
from collections.abc import Iterator

from agentminutes import timestamps
from agentminutes.errors import AgentminutesError, ParseError, ScanError
from agentminutes.harness.layout import (
    Item,
    Locator,
    Reader,
    ScanContext,
    SessionRef,
    is_dir_path,
    os_cause,
    walk_files,
)
from agentminutes.schema import Meta


class DocumentLocator(Locator):
    """The conversations of whole-document sources (data exports, ``turns.db``) under a root.

    Such a harness has no default folder: the root is an export file, or a
    folder searched recursively for files of the harness's format (detected
    from their heads; other files are skipped). Each conversation is a session
    whose ``path`` is its file; ``--conversation`` (``conversation=``) takes its
    ``meta.session_id``.
    """

    join = "inline"

    def __init__(self, harness: str = "", reader: Reader | None = None) -> None:
        super().__init__(reader)
        if harness:
            self.harness = harness

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        if not is_dir_path(root):
            yield from self._document(root, ctx, named=True)
            return
        for path in walk_files(root):
            yield from self._document(path, ctx, named=False)

    def _document(self, path: str, ctx: ScanContext, *, named: bool) -> Iterator[Item]:
        try:
            found = self.reader.route(path, self.harness if named else "auto")
        except AgentminutesError as exc:
            if named:
                yield ScanError(self.harness, str(exc), path)
            else:
                ctx.skip(path, f"not a {self.harness} document")
            return
        if found is None or found[1].name != self.harness:
            if named:
                yield ScanError(self.harness, f"not a {self.harness} document", path)
            else:
                ctx.skip(path, f"not a {self.harness} document")
            return
        document, adapter = found
        if ctx.on_file is not None:
            ctx.on_file(path)
        try:
            st = os.stat(path)
            listed = self.reader.conversations(document, adapter)
        except OSError as exc:
            yield ScanError(self.harness, os_cause("open", path, exc), path)
            return
        except ParseError as exc:
            yield ScanError(self.harness, str(exc.with_path("")), path)
            return
        except AgentminutesError as exc:
            yield ScanError(self.harness, str(exc), path)
            return
        finally:
            self.reader.release(document)
        mod_time = timestamps.format_local_ns(st.st_mtime_ns)
        for conv in listed:
            ref = SessionRef(
                meta=Meta(harness=self.harness, session_id=conv.id),
                path=path,
                started_at=timestamps.normalize(conv.created) if conv.created else "",
                mod_time=mod_time,
                size_bytes=st.st_size,
                updated_at=timestamps.normalize(conv.updated) if conv.updated else "",
            )
            if not ctx.windowed() or ctx.includes(*ref.window()):
                yield ref
