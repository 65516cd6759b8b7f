"""Codex: ``sessions/YYYY/MM/DD/rollout-*.jsonl`` day folders and ``archived_sessions/``."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator

from agentminutes import timestamps
from agentminutes.errors import ScanError
from agentminutes.harness.layout import (
    Gathered,
    Item,
    Locator,
    Root,
    ScanContext,
    SessionRef,
    check_session_id,
    is_dir_entry,
    is_dir_path,
    join,
    list_entries,
    path_exists,
)
from agentminutes.schema import TaskSkip


class CodexLocator(Locator):
    """``<root>/YYYY/MM/DD/rollout-<time>-<id>.jsonl``; archived: ``archived_sessions/rollout-…``.

    A rollout anywhere under the root is a session. With a time window, a
    ``YYYY/MM/DD`` folder whose day lies more than a day outside the window is
    not walked at all. Subagent rollouts (multi-agent sessions) are sessions
    of their own whose in-band ``session_id`` is the parent's; ``gather`` finds
    them by that id.
    """

    harness = "codex"
    join = "session_id"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        yield from self._dir(root, (), ctx)

    def _dir(self, folder: str, parts: tuple[str, ...], ctx: ScanContext) -> Iterator[Item]:
        entries = yield from self._listing(folder)
        if entries is None:
            return
        for e in entries:
            path = join(folder, e.name)
            if is_dir_entry(e):
                sub = (*parts, e.name)
                if len(sub) == 3 and _prunable(sub, ctx):
                    continue
                yield from self._dir(path, sub, ctx)
            elif e.name.startswith("rollout-") and e.name.endswith(".jsonl"):
                yield from self._ref(path, ctx)
            else:
                ctx.skip(path, "not a session transcript")

    def locate(
        self, root: str, session_id: str, *, archive: bool = False, nested: bool = False
    ) -> SessionRef | None:
        check_session_id(session_id)
        pattern = f"rollout-*-{session_id}.jsonl"
        matches = _glob_levels(root, 3, pattern)
        if archive:
            matches += _glob_levels(root, 0, pattern)
        path = self._resolve(root, session_id, matches)
        if path is None:
            return None
        ref = self._strict_ref(path)
        if ref.meta.is_subagent and ref.meta.subagent_id == session_id:
            return ref
        return self._confirm(ref, session_id)

    def gather(self, roots: list[Root], parent: SessionRef, ctx: ScanContext) -> Gathered:
        """Rollouts that record the parent's session id and are subagents, in scan order.

        Live roots are scanned as given (a missing one is reported in
        ``skipped``, as an unreadable candidate), archive roots only where they
        exist; day folders more than a day before the parent's start are pruned.
        """
        out = Gathered(join=self.join)
        sid = parent.meta.session_id
        if parent.meta.is_subagent or not sid:
            return out
        since = timestamps.to_ns(parent.started_at) if parent.started_at else None
        window = ScanContext(since=since, nested=ctx.nested, on_file=ctx.on_file)
        for root in roots:
            if root.archive and not path_exists(root.path):
                continue
            scan = self.scan_archive if root.archive else self.scan
            for item in scan(root.path, window):
                if isinstance(item, ScanError):
                    if item.path:
                        out.skipped.append(
                            TaskSkip(path=item.path, reason=f"unreadable candidate: {item.cause}")
                        )
                        continue
                    raise item
                if (
                    item.meta.is_subagent
                    and item.meta.session_id == sid
                    and item.path != parent.path
                ):
                    out.subagents.append(item)
        return out


def _glob_levels(root: str, depth: int, pattern: str) -> list[str]:
    """``<root>/*/…/*/<pattern>`` with *depth* ``*`` levels (hidden names match, as in Go)."""
    folders = [root]
    for _ in range(depth):
        nxt: list[str] = []
        for folder in folders:
            try:
                nxt.extend(join(folder, e.name) for e in list_entries(folder))
            except OSError:
                continue
        folders = [f for f in nxt if is_dir_path(f)]
    found: list[str] = []
    for folder in folders:
        try:
            entries = list_entries(folder)
        except OSError:
            continue
        found.extend(join(folder, e.name) for e in entries if fnmatch.fnmatchcase(e.name, pattern))
    return sorted(found)


def _prunable(parts: tuple[str, ...], ctx: ScanContext) -> bool:
    """Whether a ``YYYY/MM/DD`` folder lies wholly outside the window, with a day of slack."""
    if not ctx.windowed():
        return False
    try:
        y, m, d = (int(p) for p in parts)
    except ValueError:
        return False
    day = timestamps.local_midnight_ns(y, m, d)
    if day is None:
        return False
    hour = 3600 * 1_000_000_000
    if ctx.since is not None and day + 48 * hour < ctx.since:
        return True
    return ctx.until is not None and day - 24 * hour > ctx.until
