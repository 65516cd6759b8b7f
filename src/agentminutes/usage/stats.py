"""``stats --usage``: the usage block a stats document gets on request, never by default.

The block is what ``usage --by model --format json`` says of the same
transcripts, so the two never disagree: the requests (one per API request,
:class:`~agentminutes.schema.usage.RequestFolder`'s rules), their counts as the
harness recorded them, the normalized OpenTelemetry GenAI view under ``otel``
(``input_tokens`` counting the cache reads and writes), the cost where a price
catalog (or ``--prices FILE``) prices the model and ``null`` with
``cost_status: unpriced`` where none does, the harness's own reported cost, and
the same figures per model under ``by_model``. For a task
(``--include-subagents``) a request copied into several of its transcripts
counts once, in the one that started first.

:class:`UsageFold` folds the events a stats sink already reads, so one pass
serves both; :func:`task_block` summarizes the task's transcripts again (a task
is given by path, never on stdin).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agentminutes.schema import Event, Meta
from agentminutes.schema.usage import USAGE_RULES, RequestFolder
from agentminutes.usage.prices import PriceFile, Pricer, catalog_available
from agentminutes.usage.report import Grouper, Transcript, UsageReport, counted_requests
from agentminutes.usage.summary import CachedRequest, TranscriptSummary, compact, summarize

__all__ = ("UsageFold", "block_json", "make_pricer", "task_report", "usage_report")


def make_pricer(prices: str | None, cost: bool, warn: Any) -> Pricer | None:
    """The pricer ``stats --usage`` uses (``None`` with *cost* off); *warn* gets one line when
    no catalog is installed and no price file given (every cost is then unpriced)."""
    if not cost:
        return None
    price_file = PriceFile(prices) if prices else None
    if price_file is None and not catalog_available():
        warn(
            "agentminutes: no price catalog installed (pip install 'agentminutes-py[cost]'):"
            " every cost is reported as unpriced"
        )
    return Pricer(price_file)


class UsageFold:
    """One transcript's requests, folded from its events as they stream past."""

    def __init__(self, harness: str = "") -> None:
        self.harness = harness
        self.session_id = ""
        self.requests: list[CachedRequest] = []
        self._folder: RequestFolder | None = RequestFolder(harness) if harness else None

    def add(self, events: Iterable[Event]) -> None:
        """Account for a batch of events, in stream order."""
        for ev in events:
            folder = self._folder
            if folder is None:
                meta = ev.session_meta
                if meta is None:
                    continue  # no harness known yet: nothing can be folded
                self.harness = meta.harness
                folder = self._folder = RequestFolder(meta.harness)
            if ev.session_meta is not None and not self.session_id:
                self.session_id = ev.session_meta.session_id
            self.requests.extend(compact(r) for r in folder.add(ev))

    def report(self, pricer: Pricer | None) -> UsageReport:
        """The by-model report of the transcript folded so far (and what the folder still held)."""
        if self._folder is not None:
            self.requests.extend(compact(r) for r in self._folder.finish())
        summary = TranscriptSummary(
            path="", size=-1, mtime_ns=-1, meta=Meta(harness=self.harness), requests=self.requests
        )
        t = Transcript(
            summary=summary,
            harness=self.harness,
            session_id=self.session_id,
            project="",
            started_ns=0,
        )
        return usage_report([t], pricer)


def usage_report(transcripts: Sequence[Transcript], pricer: Pricer | None) -> UsageReport:
    """The requests of *transcripts* (one, or a task's), each counted once, by model."""
    grouper = Grouper(["model"], pricer=pricer)
    for req, t in counted_requests(transcripts):
        grouper.add(req, t)
    return grouper.report()


def block_json(report: UsageReport, harness: str) -> dict[str, Any]:
    """The ``usage`` block of a stats document: the totals, then the same per model."""
    out: dict[str, Any] = {"harness": harness, "normalized": harness in USAGE_RULES}
    if harness not in USAGE_RULES:
        out["note"] = f"{harness or 'this harness'} records no token usage agentminutes reads"
    out.update(report.totals.to_json(report.costs))
    out["by_model"] = [row.to_json(report.costs) for row in report.rows]
    return out


def task_report(paths: Sequence[str], harness: str, pricer: Pricer | None) -> UsageReport:
    """The report of a task's transcripts (the parent first), each request counted once."""
    transcripts: list[Transcript] = []
    for i, path in enumerate(paths):
        summary = summarize(path, harness)
        if summary.error:
            from agentminutes.errors import SourceError

            raise SourceError(summary.error)
        transcripts.append(
            Transcript(
                summary=summary,
                harness=harness,
                session_id=summary.meta.session_id,
                project=summary.meta.cwd,
                # The parent first: its copies of a request are the ones counted.
                started_ns=i,
            )
        )
    return usage_report(transcripts, pricer)
