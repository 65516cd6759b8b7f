"""Copilot CLI: ``session-state/<id>/events.jsonl``, flat ``<id>.jsonl`` and legacy ``history-session-state/session_*.json``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from agentminutes.harness.layout import (
    Item,
    Locator,
    ScanContext,
    SessionRef,
    check_session_id,
    is_dir_entry,
    join,
    path_exists,
    walk_files,
)


class CopilotLocator(Locator):
    """``<root>/<session id>/events.jsonl`` plus sidecars (``workspace.yaml``, ``checkpoints/`` …).

    Hidden folders (``.session-operation-locks``) are not sessions. Beyond the
    reference: a flat ``<root>/<id>.jsonl`` (the layout of late-2025 releases)
    is a session too. Archive root: ``history-session-state/session_<id>_<ms>.json``,
    the legacy whole-document sessions.
    """

    harness = "copilot"
    join = "inline"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        entries = yield from self._listing(root)
        if entries is None:
            return
        for e in entries:
            folder = join(root, e.name)
            if not is_dir_entry(e):
                if _FLAT_SESSION.fullmatch(e.name):
                    yield from self._session(folder, e.name[: -len(".jsonl")], ctx)
                else:
                    ctx.skip(folder, "not a session directory")
                continue
            if e.name.startswith("."):
                ctx.skip_tree(folder, True, "not a session directory")
                continue
            transcript = self._folder_transcript(folder, "events.jsonl", "session", ctx)
            if transcript is not None:
                yield from self._session(transcript, e.name, ctx)

    def _session(self, path: str, name: str, ctx: ScanContext) -> Iterator[Item]:
        for item in self._ref(path, ctx):
            if isinstance(item, SessionRef) and not item.meta.session_id:
                item.meta.session_id = name
            yield item

    def scan_archive(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        entries = yield from self._listing(root)
        if entries is None:
            return
        for e in entries:
            path = join(root, e.name)
            if is_dir_entry(e) or not _LEGACY_SESSION.fullmatch(e.name):
                ctx.skip_tree(path, is_dir_entry(e), "not a session document")
                continue
            yield from self._ref(path, ctx)

    def locate(
        self, root: str, session_id: str, *, archive: bool = False, nested: bool = False
    ) -> SessionRef | None:
        if archive:
            return super().locate(root, session_id, archive=True, nested=nested)
        check_session_id(session_id)
        transcript = join(root, session_id, "events.jsonl")
        if not path_exists(transcript):
            flat = join(root, session_id + ".jsonl")
            if not os.path.isfile(flat):
                return None
            transcript = flat
        ref = self._strict_ref(transcript)
        if not ref.meta.session_id:
            ref.meta.session_id = session_id
        return self._confirm(ref, session_id)

    def sidecars(self, ref: SessionRef) -> list[str]:
        folder = os.path.dirname(ref.path)
        if os.path.basename(ref.path) != "events.jsonl":
            return []
        return [f for f in walk_files(folder) if f != ref.path]


_FLAT_SESSION = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}\.jsonl")
_LEGACY_SESSION = re.compile(r"session_.+\.json")
