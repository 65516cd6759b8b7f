"""A whole session: the Struct ``parse`` returns, and the builder that folds events into it."""

from __future__ import annotations

from collections.abc import Iterable

from agentminutes.schema.events import (
    SCHEMA_VERSION,
    Event,
    Meta,
    Report,
    Stats,
    TokenUsage,
    ToolInteraction,
    _Struct,
)
from agentminutes.schema.stats import (
    ReportBuilder,
    StatsBuilder,
    TotalsBuilder,
    tool_interactions,
)

__all__ = ("Session", "SessionAggregates", "SessionBuilder")


class Session(_Struct, kw_only=True):
    """A whole normalized session: identity, ordered events, usage totals and the report."""

    agentminutes_schema: str
    meta: Meta
    events: list[Event]
    totals: TokenUsage | None = None
    report: Report

    def tool_interactions(self) -> list[ToolInteraction]:
        """Join tool calls with their results; orphaned results stand alone, in stream order."""
        return tool_interactions(self.events)

    def stats(self) -> Stats:
        """Compute the behavioural summary of this session."""
        builder = StatsBuilder()
        builder.add_all(self.events)
        return builder.build()


class SessionAggregates:
    """Meta, totals and report of a stream: everything a session has besides its events."""

    __slots__ = ("_report", "_totals", "meta")

    def __init__(self) -> None:
        self.meta: Meta | None = None
        self._totals = TotalsBuilder()
        self._report = ReportBuilder()

    def add(self, ev: Event) -> None:
        if ev.session_meta is not None and self.meta is None:
            self.meta = ev.session_meta
        elif ev.assistant_message is not None:
            self._totals.add_usage(ev.assistant_message.usage)
        self._report.add(ev)

    def totals(self) -> TokenUsage | None:
        return self._totals.build(self.meta.harness if self.meta else "")

    def report(self, skipped: dict[str, int]) -> Report:
        return self._report.build(skipped)


class SessionBuilder:
    """Accumulates an event stream into a :class:`Session` (what ``parse`` returns)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._agg = SessionAggregates()

    def add(self, ev: Event) -> None:
        """Append one event, updating totals and the report."""
        self._agg.add(ev)
        self.events.append(ev)

    def add_all(self, events: Iterable[Event]) -> None:
        """Append every event of *events*."""
        for ev in events:
            self.add(ev)

    def build(self, skipped: dict[str, int] | None = None) -> Session:
        """Return the accumulated session; *skipped* is the adapter's skip count."""
        return Session(
            agentminutes_schema=SCHEMA_VERSION,
            meta=self._agg.meta or Meta(harness=""),
            events=self.events,
            totals=self._agg.totals(),
            report=self._agg.report(skipped or {}),
        )
