"""``usage --follow``: the report kept current as agents write, through the library's ``follow_many``.

The first report is built as ``usage`` builds it (cache and all); then every
transcript under the harnesses' folders is followed from its end (new ones
from their start), and each request the agents add is counted into its row:

* a request seen before in *another* transcript is a copy and is not counted;
* a request seen before in the *same* transcript replaces its earlier count
  (a Claude Code message still streaming when the report was built is
  counted with its final usage once it completes);
* only the rows that changed are re-priced and, on a terminal, highlighted;
  with ``--format json`` (or ``csv``) each changed row is written again as one
  line, so a consumer applies the lines in order.

Nothing polls: the follower waits on file notifications (``--poll``: stats),
and the screen is redrawn only after a change, at most five times a second.
SIGINT or ``--idle-exit`` ends it with status 0.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from agentminutes.schema.usage import RequestFolder
from agentminutes.usage.prices import Pricer
from agentminutes.usage.report import Collection, Grouper, Transcript, UsageReport
from agentminutes.usage.summary import CachedRequest, TranscriptSummary, compact

__all__ = ("LiveUsage", "follow_usage")

#: Redraws per second at most.
_REDRAW_INTERVAL = 0.2


class LiveUsage:
    """The live report's state: rows, counted request keys, one request folder per transcript."""

    def __init__(self, found: Collection, grouper: Grouper) -> None:
        self.grouper = grouper
        self.transcripts: dict[str, Transcript] = {}
        self.folders: dict[str, RequestFolder] = {}
        #: key → (transcript path, request, row key) of every counted request with a key.
        self.counted: dict[str, tuple[str, CachedRequest, tuple[str, ...]]] = {}
        self.duplicates = 0
        ordered = sorted(found.transcripts, key=lambda t: (t.started_ns, t.summary.path))
        for t in ordered:
            self.transcripts[t.summary.path] = t
            for req in t.summary.requests:
                self._count(t, req)
        self.changed: set[tuple[str, ...]] = set()

    def _count(self, t: Transcript, req: CachedRequest) -> tuple[str, ...] | None:
        path = t.summary.path
        if req.key:
            seen = self.counted.get(req.key)
            if seen is not None:
                if seen[0] != path:
                    self.duplicates += 1
                    return None
                self.grouper.add(seen[1], t, -1)  # the same request again: its final usage
        if not self.grouper.in_window(req):
            return None
        row = self.grouper.add(req, t)
        if req.key:
            self.counted[req.key] = (path, req, row)
        return row

    def _transcript(self, path: str, harness: str, event: Any) -> Transcript:
        t = self.transcripts.get(path)
        if t is None:
            meta = event.session_meta
            summary = (
                TranscriptSummary(path=path, size=-1, mtime_ns=-1, meta=meta) if meta else None
            )
            if summary is None:
                from agentminutes.schema import Meta

                summary = TranscriptSummary(
                    path=path, size=-1, mtime_ns=-1, meta=Meta(harness=harness)
                )
            t = Transcript(
                summary=summary,
                harness=harness,
                session_id=summary.meta.session_id,
                project=summary.meta.cwd,
                started_ns=0,
            )
            self.transcripts[path] = t
        return t

    def _folder(self, t: Transcript) -> RequestFolder:
        path = t.summary.path
        folder = self.folders.get(path)
        if folder is None:
            folder = RequestFolder(t.harness, t.session_id)
            last = t.summary.requests[-1] if t.summary.requests else None
            if last is not None:
                folder.resume(last.model, last.key)
            self.folders[path] = folder
        return folder

    def add(self, path: str, harness: str, event: Any) -> None:
        """Count one followed event of *path*."""
        t = self._transcript(path, harness, event)
        if event.session_meta is not None and not t.session_id:
            t.session_id = event.session_meta.session_id
            t.project = event.session_meta.cwd
        for req in self._folder(t).add(event):
            row = self._count(t, compact(req))
            if row is not None:
                self.changed.add(row)

    def report(self, changed: set[tuple[str, ...]] | None = None) -> UsageReport:
        """The current report, the *changed* rows re-priced (``None``: every row)."""
        return self.grouper.report(reprice=changed, duplicates=self.duplicates)

    def seen(self) -> set[tuple[str, ...]]:
        """The rows changed since the last call (and forget them)."""
        out, self.changed = self.changed, set()
        return out


def _targets(harness: str, root: str) -> list[str]:
    from agentminutes.discovery.sessions import harness_roots
    from agentminutes.schema.usage import USAGE_RULES

    names = [harness] if harness else list(USAGE_RULES)
    out: list[str] = []
    for name in names:
        try:
            roots = harness_roots(name, root or None)
        except Exception:  # a harness without default folders: nothing to follow
            continue
        out.extend(r.path for r in roots if os.path.isdir(r.path))
    return out


def follow_usage(
    found: Collection,
    first: UsageReport,
    by: Sequence[str],
    *,
    pricer: Pricer | None,
    fmt: str,
    harness: str,
    root: str,
    cwd: str,
    session_id: str,
    since: str,
    until: str,
    tz: str,
    idle_exit: float | None,
    poll: bool,
) -> int:
    """Follow the harnesses' folders and keep the report current; return the exit status."""
    import anyio

    grouper = Grouper(by, pricer=pricer, since=since or None, until=until or None, tz=tz or None)
    live = LiveUsage(found, grouper)
    targets = _targets(harness, root)
    if not targets:
        from agentminutes.errors import UsageError

        raise UsageError("--follow: none of the harnesses' folders exists")

    async def run() -> None:
        from contextlib import aclosing

        from agentminutes.api import follow_many

        view = _View(fmt)
        view.show(live.report(), set(), initial=True)
        live.seen()
        wake = anyio.Event()
        done = False

        async def redraw() -> None:
            nonlocal wake
            while not done:
                await wake.wait()
                wake = anyio.Event()
                await anyio.sleep(_REDRAW_INTERVAL)
                changed = live.seen()
                if changed:
                    view.show(live.report(changed), changed)

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(redraw)
                async with aclosing(
                    follow_many(
                        targets,
                        cwd=cwd or None,
                        session_id=session_id or None,
                        from_end=True,
                        idle_exit=idle_exit,
                        poll=poll,
                        permissive=True,
                    )
                ) as envelopes:
                    async for envelope in envelopes:
                        live.add(envelope.transcript, envelope.harness, envelope.event)
                        if live.changed:
                            wake.set()
                done = True
                tg.cancel_scope.cancel()
        finally:
            changed = live.seen()
            if changed:
                view.show(live.report(changed), changed)
            view.close()

    with contextlib.suppress(KeyboardInterrupt):  # SIGINT: the report as it stands is shown
        anyio.run(run)
    return 1 if found.errors else 0


class _View:
    """Where the live report goes: a rich ``Live`` table on a terminal, else changed rows as lines."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.live: Any = None
        self.tty = fmt == "table" and sys.stdout.isatty()

    def show(
        self, report: UsageReport, changed: set[tuple[str, ...]], *, initial: bool = False
    ) -> None:
        from agentminutes.usage import render

        if self.tty:
            from rich.console import Group
            from rich.live import Live
            from rich.text import Text

            body = Group(render.table(report, changed=changed), Text(render.unpriced_line(report)))
            if self.live is None:
                self.live = Live(body, auto_refresh=False, redirect_stderr=False)
                self.live.start()
            self.live.update(body, refresh=True)
            return
        if self.fmt == "table":
            render.render_table(report, sys.stdout)
            sys.stdout.write("\n")
        elif self.fmt == "json":
            import msgspec

            rows = [r for r in report.rows if initial or tuple(r.keys.values()) in changed]
            for row in rows:
                sys.stdout.buffer.write(msgspec.json.encode(row.to_json(report.costs)) + b"\n")
            sys.stdout.buffer.flush()
        else:
            render.render_csv(_only(report, changed, initial), sys.stdout)
        sys.stdout.flush()

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()


def _only(report: UsageReport, changed: set[tuple[str, ...]], initial: bool) -> UsageReport:
    if initial:
        return report
    rows = [r for r in report.rows if tuple(r.keys.values()) in changed]
    return UsageReport(by=report.by, rows=rows, totals=report.totals, costs=report.costs)
