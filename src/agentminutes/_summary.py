"""Folding an event stream into a Session, and into a Stats summary, one event at a time.

Both builders are streaming: :class:`StatsBuilder` keeps a few integers per
tool call, never the events, so ``stats`` runs in bounded memory however long
the transcript is.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentminutes import _time
from agentminutes.schema import (
    SCHEMA_VERSION,
    ContentBlock,
    Event,
    EventKind,
    Meta,
    Origin,
    Report,
    Session,
    Stats,
    TokenUsage,
    ToolInteraction,
)

__all__ = ("UNKNOWN_TOOL", "SessionBuilder", "StatsBuilder", "tool_interactions")

#: The key under which per-tool maps count results attributable to no named tool.
UNKNOWN_TOOL = "(unknown)"


def tool_interactions(events: Iterable[Event]) -> list[ToolInteraction]:
    """Join tool calls with their results; orphaned results stand alone, in stream order.

    A result joins the most recent earlier call with its ``tool_call_id``; a
    result with no earlier call is an orphan.
    """
    joined: list[ToolInteraction] = []
    by_id: dict[str, ToolInteraction] = {}
    for ev in events:
        if ev.tool_call is not None:
            inter = ToolInteraction(call=ev)
            by_id[ev.tool_call.tool_call_id] = inter
            joined.append(inter)
        elif ev.tool_result is not None:
            found = by_id.get(ev.tool_result.tool_call_id)
            if found is None:
                joined.append(ToolInteraction(results=[ev]))
            else:
                found.results.append(ev)
    return joined


def _input_includes_cache(harness: str) -> bool:
    """Whether *harness* counts cached prompt tokens inside ``input_tokens`` already."""
    from agentminutes.harness import ADAPTERS

    return any(a.name == harness and getattr(a, "input_includes_cache", False) for a in ADAPTERS)


class TotalsBuilder:
    """Sums the usage of assistant messages; ``None`` when no message recorded any.

    ``total_prompt_tokens`` is every prompt token billed: ``input_tokens`` plus
    the cache fields, except for harnesses whose input already includes them
    (known from the first ``session_meta`` event).
    """

    __slots__ = ("_cache_included", "_meta_seen", "_seen", "_sum")

    def __init__(self) -> None:
        self._sum = TokenUsage(input_tokens=0, output_tokens=0)
        self._seen = False
        self._meta_seen = False
        self._cache_included = False

    def add(self, ev: Event) -> None:
        msg = ev.assistant_message
        if msg is not None and msg.usage is not None:
            self._seen = True
            self._sum.add(msg.usage)
        elif ev.session_meta is not None and not self._meta_seen:
            self._meta_seen = True
            self._cache_included = _input_includes_cache(ev.session_meta.harness)

    def build(self) -> TokenUsage | None:
        if not self._seen:
            return None
        total = self._sum
        prompt = total.input_tokens
        if not self._cache_included:
            prompt += total.cache_read_input_tokens + total.cache_creation_input_tokens
        return TokenUsage(
            input_tokens=total.input_tokens,
            output_tokens=total.output_tokens,
            cache_read_input_tokens=total.cache_read_input_tokens,
            cache_creation_input_tokens=total.cache_creation_input_tokens,
            total_prompt_tokens=prompt,
        )


class ReportBuilder:
    """Counts unknown events and orphaned tool results as events stream past."""

    __slots__ = ("_calls", "orphans", "unknown")

    def __init__(self) -> None:
        self._calls: set[str] = set()
        self.orphans = 0
        self.unknown = 0

    def add(self, ev: Event) -> None:
        kind = ev.kind
        if kind == EventKind.TOOL_CALL:
            assert ev.tool_call is not None
            self._calls.add(ev.tool_call.tool_call_id)
        elif kind == EventKind.TOOL_RESULT:
            assert ev.tool_result is not None
            if ev.tool_result.tool_call_id not in self._calls:
                self.orphans += 1
        elif kind == EventKind.UNKNOWN:
            self.unknown += 1

    def build(self, skipped: dict[str, int]) -> Report:
        return Report(
            skipped_records=dict(skipped) or None,
            unknown_events=self.unknown,
            orphan_tool_results=self.orphans,
        )


class SessionBuilder:
    """Accumulates an event stream into a :class:`Session` (what ``parse`` returns)."""

    def __init__(self) -> None:
        self.meta: Meta | None = None
        self.events: list[Event] = []
        self._totals = TotalsBuilder()
        self._report = ReportBuilder()

    def add(self, ev: Event) -> None:
        """Append one event, updating totals and the report."""
        if ev.session_meta is not None and self.meta is None:
            self.meta = ev.session_meta
        self._totals.add(ev)
        self._report.add(ev)
        self.events.append(ev)

    def add_all(self, events: Iterable[Event]) -> None:
        """Append every event of *events*."""
        for ev in events:
            self.add(ev)

    def build(self, skipped: dict[str, int] | None = None) -> Session:
        """Return the accumulated session; *skipped* is the adapter's skip count."""
        return Session(
            agentminutes_schema=SCHEMA_VERSION,
            meta=self.meta or Meta(harness=""),
            events=self.events,
            totals=self._totals.build(),
            report=self._report.build(skipped or {}),
        )


def _text_of(blocks: list[ContentBlock] | None) -> str:
    if not blocks:
        return ""
    return "\n".join(b.text for b in blocks if b.kind == "text" and b.text)


def _content_bytes(blocks: list[ContentBlock] | None) -> int:
    total = 0
    for b in blocks or ():
        if b.truncated:
            total += b.size
        else:
            total += len(b.text.encode()) if not b.text.isascii() else len(b.text)
            if b.raw is not None:
                total += len(b.raw)
    return total


class _Interaction:
    __slots__ = ("answered", "call_ns", "kind", "last_ns", "name")

    def __init__(self, name: str, kind: str, call_ns: int | None) -> None:
        self.name = name
        self.kind = kind
        self.call_ns = call_ns
        self.last_ns: int | None = None
        self.answered = False


class StatsBuilder:
    """Streams events into a :class:`Stats` summary without keeping the events."""

    def __init__(self) -> None:
        self.events = 0
        self.event_counts: dict[str, int] = {}
        self.user_messages = 0
        self.harness_messages = 0
        self.tool_errors = 0
        self.orphan_results = 0
        self.result_bytes = 0
        self.result_bytes_by_name: dict[str, int] = {}
        self.fetch_raw_bytes = 0
        self.system_by_subtype: dict[str, int] = {}
        self.models: list[str] = []
        self.start_ns: int | None = None
        self.end_ns: int | None = None
        self.start_time = ""
        self.end_time = ""
        self.final_answer = ""
        self._calls: list[_Interaction] = []
        self._by_id: dict[str, _Interaction] = {}
        self._totals = TotalsBuilder()

    def add_all(self, events: Iterable[Event]) -> None:
        """Account for every event of *events*."""
        for ev in events:
            self.add(ev)

    def add(self, ev: Event) -> None:
        """Account for one event."""
        self.events += 1
        kind = ev.kind
        self.event_counts[kind] = self.event_counts.get(kind, 0) + 1
        ts = ev.timestamp
        ns = _time.to_ns(ts) if ts else None
        if ns is not None:
            if self.start_ns is None or ns < self.start_ns:
                self.start_ns, self.start_time = ns, ts
            if self.end_ns is None or ns > self.end_ns:
                self.end_ns, self.end_time = ns, ts
        if kind == EventKind.TOOL_RESULT:
            self._result(ev, ns)
        elif kind == EventKind.TOOL_CALL:
            call = ev.tool_call
            assert call is not None
            inter = _Interaction(call.name, call.kind, ns)
            self._calls.append(inter)
            self._by_id[call.tool_call_id] = inter
        elif kind == EventKind.ASSISTANT_MESSAGE:
            msg = ev.assistant_message
            assert msg is not None
            self._totals.add(ev)
            text = _text_of(msg.content)
            if text:
                self.final_answer = text
            if msg.model and msg.model not in self.models:
                self.models.append(msg.model)
        elif kind == EventKind.USER_MESSAGE:
            assert ev.user_message is not None
            if ev.user_message.origin == Origin.HARNESS:
                self.harness_messages += 1
            else:
                self.user_messages += 1
        elif kind == EventKind.SYSTEM:
            assert ev.system is not None
            sub = ev.system.subtype
            self.system_by_subtype[sub] = self.system_by_subtype.get(sub, 0) + 1
        elif kind == EventKind.SESSION_META:
            self._totals.add(ev)

    def _result(self, ev: Event, ns: int | None) -> None:
        res = ev.tool_result
        assert res is not None
        inter = self._by_id.get(res.tool_call_id)
        if inter is None:
            self.orphan_results += 1
            name = res.tool_name or UNKNOWN_TOOL
        else:
            inter.answered = True
            name = inter.name
            if ns is not None and (inter.last_ns is None or ns > inter.last_ns):
                inter.last_ns = ns
        if res.is_error:
            self.tool_errors += 1
        size = _content_bytes(res.content)
        self.result_bytes += size
        self.result_bytes_by_name[name] = self.result_bytes_by_name.get(name, 0) + size
        if res.fetch is not None:
            self.fetch_raw_bytes += res.fetch.raw_bytes

    def build(self, totals: TokenUsage | None = None) -> Stats:
        """Return the summary; *totals* overrides the usage summed from the events."""
        by_name: dict[str, int] = {}
        by_kind: dict[str, int] = {}
        time_by_name: dict[str, int] = {}
        unanswered = 0
        for inter in self._calls:
            by_name[inter.name] = by_name.get(inter.name, 0) + 1
            by_kind[inter.kind] = by_kind.get(inter.kind, 0) + 1
            if not inter.answered:
                unanswered += 1
            if inter.call_ns is not None and inter.last_ns is not None:
                delta = inter.last_ns - inter.call_ns
                if delta >= 0:
                    time_by_name[inter.name] = time_by_name.get(inter.name, 0) + delta // 1_000_000
        wall = 0
        if self.start_ns is not None and self.end_ns is not None:
            wall = (self.end_ns - self.start_ns) // 1_000_000
        return Stats(
            events=self.events,
            event_counts=self.event_counts or None,
            user_messages=self.user_messages,
            harness_messages=self.harness_messages,
            tool_calls=len(self._calls),
            tool_calls_by_name=by_name or None,
            tool_calls_by_kind=by_kind or None,
            tool_errors=self.tool_errors,
            unanswered_calls=unanswered,
            orphan_results=self.orphan_results,
            result_bytes=self.result_bytes,
            result_bytes_by_name=self.result_bytes_by_name or None,
            fetch_raw_bytes=self.fetch_raw_bytes,
            tool_time_ms_by_name=time_by_name or None,
            system_by_subtype=self.system_by_subtype or None,
            models=self.models or None,
            totals=totals if totals is not None else self._totals.build(),
            start_time=self.start_time,
            end_time=self.end_time,
            wall_time_ms=wall,
            final_answer=self.final_answer,
        )
