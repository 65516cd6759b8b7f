"""``usage --follow``: the report kept current as agents write, through the library's ``follow_many``.

The first report is built as ``usage`` builds it (cache and all), except that
each transcript is stat'ed once and summarized up to its last complete line
at or below that size (``collect(complete_lines=True)``). The follow then
takes over each transcript at exactly that offset (``follow_many``'s
``start_at``): a line written while the report was being built, or while the
watch was being set up, is counted once, by the follow. Transcripts that
appear later are followed from their start. Each request the agents add is
counted into its row:

* a request seen before in *another* transcript is a copy and is not counted;
* a request seen before in the *same* transcript replaces its earlier count
  (a Claude Code message still streaming when the report was built is
  counted with its final usage once it completes);
* a transcript that starts over (truncated or rewritten in place, replaced by
  another file: ``on_restart``) has its requests taken out of their rows and
  counted again as its new content is read;
* only the rows that changed are re-priced; on a terminal the table is
  redrawn in place (rich ``Live``) with them highlighted; otherwise each change
  writes only the rows that changed: one JSON object (``--format json``) or
  CSV record per row, or a table of those rows and the new totals. A row whose
  requests were all taken out is written with ``requests: 0``, so a consumer
  applying the lines in order by their keys ends with the report's rows.

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

import msgspec

from agentminutes.schema.usage import RequestFolder
from agentminutes.usage.prices import Pricer
from agentminutes.usage.report import Collection, Grouper, Row, Transcript, UsageReport
from agentminutes.usage.summary import CachedRequest, TranscriptSummary, compact

__all__ = ("LiveUsage", "follow_usage")

#: Redraws per second at most.
_REDRAW_INTERVAL = 0.2


class LiveUsage:
    """The live report's state: rows, counted requests by key and transcript, request folders."""

    def __init__(self, found: Collection, grouper: Grouper) -> None:
        self.grouper = grouper
        self.transcripts: dict[str, Transcript] = {}
        self.folders: dict[str, RequestFolder] = {}
        #: key → (transcript path, request, row key) of every counted request with a key.
        self.counted: dict[str, tuple[str, CachedRequest, tuple[str, ...]]] = {}
        #: transcript path → (request, row key) of its counted requests without a key.
        self.unkeyed: dict[str, list[tuple[CachedRequest, tuple[str, ...]]]] = {}
        #: transcript path → requests not counted as copies of another transcript's.
        self.copies: dict[str, int] = {}
        self.changed: set[tuple[str, ...]] = set()
        ordered = sorted(found.transcripts, key=lambda t: (t.started_ns, t.summary.path))
        for t in ordered:
            self.transcripts[t.summary.path] = t
            for req in t.summary.requests:
                self._count(t, req)
        self.changed.clear()

    @property
    def duplicates(self) -> int:
        """Requests seen again in another transcript, counted once."""
        return sum(self.copies.values())

    def _count(self, t: Transcript, req: CachedRequest) -> tuple[str, ...] | None:
        path = t.summary.path
        if req.key:
            seen = self.counted.get(req.key)
            if seen is not None:
                if seen[0] != path:
                    self.copies[path] = self.copies.get(path, 0) + 1
                    return None
                # The same request again: its final usage replaces the earlier count.
                del self.counted[req.key]
                self.changed.add(self.grouper.add(seen[1], t, -1, seen[2]))
        if not self.grouper.in_window(req):
            return None
        row = self.grouper.add(req, t)
        if req.key:
            self.counted[req.key] = (path, req, row)
        else:
            self.unkeyed.setdefault(path, []).append((req, row))
        self.changed.add(row)
        return row

    def _transcript(self, path: str, harness: str, event: Any) -> Transcript:
        t = self.transcripts.get(path)
        if t is None:
            from agentminutes.schema import Meta

            meta = event.session_meta or Meta(harness=harness)
            summary = TranscriptSummary(path=path, size=-1, mtime_ns=-1, meta=meta)
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
            self._count(t, compact(req))

    def restart(self, path: str) -> None:
        """*path*'s content started over: take its requests out; its new content counts anew."""
        t = self.transcripts.get(path)
        if t is None:
            return
        for key, (owner, req, row) in list(self.counted.items()):
            if owner == path:
                del self.counted[key]
                self.changed.add(self.grouper.add(req, t, -1, row))
        for req, row in self.unkeyed.pop(path, []):
            self.changed.add(self.grouper.add(req, t, -1, row))
        self.copies.pop(path, None)
        self.folders.pop(path, None)
        # Nothing of the old content is carried on: the new one is folded from its start.
        t.summary = msgspec.structs.replace(t.summary, requests=[])

    def report(self, changed: set[tuple[str, ...]] | None = None) -> UsageReport:
        """The current report, the *changed* rows re-priced (``None``: every row)."""
        return self.grouper.report(reprice=changed, duplicates=self.duplicates)

    def rows(self, keys: set[tuple[str, ...]]) -> list[Row]:
        """The rows of *keys* in key order, those with no requests left too (call after
        :meth:`report`, which prices them)."""
        groups = self.grouper.groups
        return [groups[k] for k in sorted(keys) if k in groups]

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

    start_at = {t.summary.path: t.read_to for t in found.transcripts if t.read_to >= 0}

    async def run() -> None:
        from contextlib import aclosing

        from agentminutes.api import follow_many
        from agentminutes.live.config import stderr_notice

        view = _View(fmt)
        view.show(live.report(), [], initial=True)
        live.seen()
        wake = anyio.Event()
        done = False

        async def redraw() -> None:
            nonlocal wake
            while not done:
                await wake.wait()
                wake = anyio.Event()
                await anyio.sleep(_REDRAW_INTERVAL)
                show()

        def restarted(path: str) -> None:
            live.restart(path)
            if live.changed:
                wake.set()

        def show() -> None:
            changed = live.seen()
            if changed:
                report = live.report(changed)
                view.show(report, live.rows(changed), changed=changed)

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(redraw)
                async with aclosing(
                    follow_many(
                        targets,
                        cwd=cwd or None,
                        session_id=session_id or None,
                        start_at=start_at,
                        on_restart=restarted,
                        idle_exit=idle_exit,
                        poll=poll,
                        permissive=True,
                        on_notice=stderr_notice,  # the command says what the follow notices
                    )
                ) as envelopes:
                    async for envelope in envelopes:
                        live.add(envelope.transcript, envelope.harness, envelope.event)
                        if live.changed:
                            wake.set()
                done = True
                tg.cancel_scope.cancel()
        finally:
            show()
            view.close()

    with contextlib.suppress(KeyboardInterrupt):  # SIGINT: the report as it stands is shown
        anyio.run(run)
    return 1 if found.errors else 0


class _View:
    """Where the live report goes: a rich ``Live`` table on a terminal, else the changed rows."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.live: Any = None
        self.tty = fmt == "table" and sys.stdout.isatty()

    def show(
        self,
        report: UsageReport,
        rows: list[Row],
        *,
        changed: set[tuple[str, ...]] | None = None,
        initial: bool = False,
    ) -> None:
        """Show *report* (``initial``: all of it) or, off a terminal, its changed *rows*."""
        from agentminutes.usage import render

        if self.tty:
            from rich.console import Group
            from rich.live import Live
            from rich.text import Text

            body = Group(
                render.table(report, changed=changed or set()),
                Text(render.unpriced_line(report)),
            )
            if self.live is None:
                self.live = Live(body, auto_refresh=False, redirect_stderr=False)
                self.live.start()
            self.live.update(body, refresh=True)
            return
        part = report if initial else _only(report, rows)
        if self.fmt == "table":
            render.render_table(part, sys.stdout)
            sys.stdout.write("\n")
        elif self.fmt == "json":
            for row in part.rows:
                sys.stdout.buffer.write(msgspec.json.encode(row.to_json(report.costs)) + b"\n")
            sys.stdout.buffer.flush()
        else:
            render.render_csv(part, sys.stdout)
        sys.stdout.flush()

    def close(self) -> None:
        """Leave the terminal as the last redraw left it."""
        if self.live is not None:
            self.live.stop()


def _only(report: UsageReport, rows: list[Row]) -> UsageReport:
    return UsageReport(
        by=report.by,
        rows=rows,
        totals=report.totals,
        duplicates=report.duplicates,
        costs=report.costs,
    )
