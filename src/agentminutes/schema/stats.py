"""Folding an event stream into totals, a report and a Stats summary, one event at a time.

Both builders are streaming: :class:`StatsBuilder` keeps a few integers per
tool call, never the events, so ``stats`` runs in bounded memory however long
the transcript is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from agentminutes import timestamps
from agentminutes.schema.events import (
    AgentStats,
    ContentBlock,
    Event,
    EventKind,
    Origin,
    Report,
    Stats,
    TokenUsage,
    ToolInteraction,
)
from agentminutes.schema.usage_rule import RuleView

__all__ = (
    "PROMPT_RULES",
    "UNKNOWN_TOOL",
    "ReportBuilder",
    "StatsBuilder",
    "TotalsBuilder",
    "content_bytes",
    "tool_interactions",
)

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


#: How each harness's ``total_prompt_tokens`` is computed from its usage: ``"all"`` adds
#: the cache reads and writes to ``input_tokens`` (Anthropic-shaped usage, where input
#: excludes the cache), ``"input"`` takes ``input_tokens`` alone (it already counts the
#: cached tokens). A harness not listed reports no prompt total (0), as the reference does.
#: Each is declared in its harness folder's description (``prompt=``).
PROMPT_RULES: Final[Mapping[str, str]] = RuleView("prompt")


def _prompt_rule(harness: str) -> str:
    return PROMPT_RULES.get(harness, "")


def with_prompt_total(usage: TokenUsage, harness: str) -> TokenUsage:
    """A copy of a usage sum with ``total_prompt_tokens`` set by *harness*'s rule."""
    rule = _prompt_rule(harness)
    if rule == "all":
        prompt = usage.input_tokens + usage.cache_read_input_tokens
        prompt += usage.cache_creation_input_tokens
    elif rule == "input":
        prompt = usage.input_tokens
    else:
        prompt = 0
    return TokenUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        total_prompt_tokens=prompt,
        cost=usage.cost,
    )


class TotalsBuilder:
    """Sums the usage of assistant messages; ``None`` when no message recorded any."""

    __slots__ = ("_seen", "_sum")

    def __init__(self) -> None:
        self._sum = TokenUsage(input_tokens=0, output_tokens=0)
        self._seen = False

    def add_usage(self, usage: TokenUsage | None) -> None:
        if usage is not None:
            self._seen = True
            self._sum.add(usage)

    def build(self, harness: str) -> TokenUsage | None:
        return with_prompt_total(self._sum, harness) if self._seen else None


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


def _text_of(blocks: list[ContentBlock] | None) -> str:
    if not blocks:
        return ""
    return "\n".join(b.text for b in blocks if b.kind == "text" and b.text)


def content_bytes(blocks: list[ContentBlock] | None) -> int:
    """A result's size as ``stats`` counts it: text in UTF-8 bytes, other blocks by their JSON."""
    total = 0
    for b in blocks or ():
        if b.truncated:
            total += b.size
        else:
            text = b.text
            total += len(text) if text.isascii() else len(text.encode())
            total += len(b.raw)
    return total


def _bump(counts: dict[str, int], key: str, by: int = 1) -> None:
    counts[key] = counts.get(key, 0) + by


#: Stands for "no timestamp" in a call table's arrays of nanoseconds; only times
#: strictly between it and :data:`_LIMIT` are kept in them.
_NO_NS: Final = -(2**63)
_LIMIT: Final = 2**63


class _CallTable:
    """Every tool call so far, a column per field: a few bytes a call, not objects.

    A long transcript has hundreds of thousands of calls, and any of them may
    still be answered, so each is kept to the end. As an object per call (its
    two times as ints, its name as the string the decoder made) a call cost
    about 250 bytes; here it costs 8 bytes in each list of names, kinds and
    agents (the strings are shared: one of each name is kept), 16 in the
    arrays of times and one for "answered". A time that does not fit in 64
    bits (a far-off year) turns the arrays into lists (:attr:`wide`), so no
    time is ever clipped.
    """

    __slots__ = ("_strings", "agents", "answered", "call_ns", "kinds", "last_ns", "names", "wide")

    def __init__(self) -> None:
        from array import array

        self.names: list[str] = []
        self.kinds: list[str] = []
        self.agents: list[str] = []
        # With ``wide`` False, arrays of int64 holding _NO_NS for "none"; else lists
        # holding None for it.
        self.call_ns: Any = array("q")
        self.last_ns: Any = array("q")
        self.wide = False
        self.answered = bytearray()
        self._strings: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self.answered)

    def add(self, name: str, kind: str, agent: str, ns: int | None) -> int:
        """Add a call made at *ns* (``None``: no time); return its index."""
        self.names.append(self._strings.setdefault(name, name))
        self.kinds.append(kind)
        self.agents.append(agent)
        if not self.wide and ns is not None and not _NO_NS < ns < _LIMIT:
            self._widen()
        if self.wide:
            self.call_ns.append(ns)
            self.last_ns.append(None)
        else:
            self.call_ns.append(_NO_NS if ns is None else ns)
            self.last_ns.append(_NO_NS)
        self.answered.append(0)
        return len(self.answered) - 1

    def answer(self, index: int, ns: int | None) -> None:
        """A result for call *index* arrived at *ns* (``None``: no time); keep the latest."""
        self.answered[index] = 1
        if ns is None:
            return
        if not self.wide and not _NO_NS < ns < _LIMIT:
            self._widen()
        last = self.last_ns[index]
        if last is None or ns > last:  # compact: _NO_NS is below every time kept
            self.last_ns[index] = ns

    def durations(self) -> Iterator[tuple[str, int]]:
        """Each answered call's name and last result time minus call time, where both exist."""
        none = None if self.wide else _NO_NS
        for name, call_ns, last_ns in zip(self.names, self.call_ns, self.last_ns, strict=True):
            if call_ns != none and last_ns != none:
                yield name, last_ns - call_ns

    def _widen(self) -> None:
        self.call_ns = [None if v == _NO_NS else v for v in self.call_ns]
        self.last_ns = [None if v == _NO_NS else v for v in self.last_ns]
        self.wide = True


class _AgentTally:
    __slots__ = (
        "assistant_messages",
        "by_kind",
        "by_name",
        "events",
        "models",
        "tool_errors",
        "totals",
    )

    def __init__(self) -> None:
        self.events = 0
        self.assistant_messages = 0
        self.by_name: dict[str, int] = {}
        self.by_kind: dict[str, int] = {}
        self.tool_errors = 0
        self.models: list[str] = []
        self.totals = TotalsBuilder()

    def build(self, harness: str) -> AgentStats:
        return AgentStats(
            events=self.events,
            assistant_messages=self.assistant_messages,
            tool_calls=sum(self.by_name.values()),
            tool_calls_by_name=self.by_name or None,
            tool_calls_by_kind=self.by_kind or None,
            tool_errors=self.tool_errors,
            models=self.models or None,
            totals=self.totals.build(harness),
        )


class StatsBuilder:
    """Streams events into a :class:`Stats` summary without keeping the events."""

    def __init__(self) -> None:
        self.harness = ""
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
        self._calls = _CallTable()
        self._by_id: dict[str, int] = {}
        self._totals = TotalsBuilder()
        self._agents: dict[str, _AgentTally] = {}
        # The agent of the last event: nearly every event repeats it.
        self._agent_id = ""
        self._agent_tally = self._agent("")

    def _agent(self, agent_id: str) -> _AgentTally:
        tally = self._agents.get(agent_id)
        if tally is None:
            tally = self._agents[agent_id] = _AgentTally()
        return tally

    def add_all(self, events: Iterable[Event]) -> None:
        """Account for every event of *events*."""
        add = self.add
        for ev in events:
            add(ev)

    def add(self, ev: Event) -> None:
        """Account for one event."""
        self.events += 1
        kind = ev.kind
        counts = self.event_counts
        counts[kind] = counts.get(kind, 0) + 1
        agent_id = ev.agent_id
        if agent_id == self._agent_id:
            agent = self._agent_tally
        else:
            agent = self._agent(agent_id)
            self._agent_id, self._agent_tally = agent_id, agent
        agent.events += 1
        ts = ev.timestamp
        ns = None
        if ts:
            ns = timestamps.to_ns(ts)
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
            self._by_id[call.tool_call_id] = self._calls.add(call.name, call.kind, agent_id, ns)
            by_name, by_kind = agent.by_name, agent.by_kind
            by_name[call.name] = by_name.get(call.name, 0) + 1
            by_kind[call.kind] = by_kind.get(call.kind, 0) + 1
        elif kind == EventKind.ASSISTANT_MESSAGE:
            msg = ev.assistant_message
            assert msg is not None
            self._totals.add_usage(msg.usage)
            agent.assistant_messages += 1
            agent.totals.add_usage(msg.usage)
            if msg.content:
                text = _text_of(msg.content)
                if text:
                    self.final_answer = text
            model = msg.model
            if model:
                if model not in self.models:
                    self.models.append(model)
                if model not in agent.models:
                    agent.models.append(model)
        elif kind == EventKind.USER_MESSAGE:
            assert ev.user_message is not None
            if ev.user_message.origin == Origin.HARNESS:
                self.harness_messages += 1
            else:
                self.user_messages += 1
        elif kind == EventKind.SYSTEM:
            assert ev.system is not None
            sub = ev.system.subtype
            subs = self.system_by_subtype
            subs[sub] = subs.get(sub, 0) + 1
        elif kind == EventKind.SESSION_META:
            assert ev.session_meta is not None
            if not self.harness:
                self.harness = ev.session_meta.harness

    def _result(self, ev: Event, ns: int | None) -> None:
        res = ev.tool_result
        assert res is not None
        index = self._by_id.get(res.tool_call_id)
        if index is None:
            self.orphan_results += 1
            name = res.tool_name or UNKNOWN_TOOL
            blame = ev.agent_id
        else:
            calls = self._calls
            calls.answer(index, ns)
            name = calls.names[index]
            blame = calls.agents[index]
        if res.is_error:
            self.tool_errors += 1
            self._agent(blame).tool_errors += 1
        size = content_bytes(res.content)
        self.result_bytes += size
        _bump(self.result_bytes_by_name, name, size)
        if res.fetch is not None:
            self.fetch_raw_bytes += res.fetch.raw_bytes

    def build(self) -> Stats:
        """Return the summary of the events seen so far."""
        by_name: dict[str, int] = {}
        by_kind: dict[str, int] = {}
        time_by_name: dict[str, int] = {}
        calls = self._calls
        unanswered = len(calls) - sum(calls.answered)
        for name in calls.names:
            _bump(by_name, name)
        for kind in calls.kinds:
            _bump(by_kind, kind)
        for name, delta in calls.durations():
            if delta >= 0:
                _bump(time_by_name, name, delta // 1_000_000)
        wall = 0
        if self.start_ns is not None and self.end_ns is not None:
            wall = (self.end_ns - self.start_ns) // 1_000_000
        agents = {k: v for k, v in self._agents.items() if v.events}
        by_agent = None
        if len(agents) > 1:
            by_agent = {k: agents[k].build(self.harness) for k in sorted(agents)}
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
            totals=self._totals.build(self.harness),
            start_time=self.start_time,
            end_time=self.end_time,
            wall_time_ms=wall,
            final_answer=self.final_answer,
            by_agent=by_agent,
        )
