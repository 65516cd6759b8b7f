"""A session's events folded into what a reader follows: turns, steps, tool calls, subagents.

A *turn* starts at each message a person wrote (``user_message`` of origin
``human``) and holds everything until the next: the assistant's text and
thinking, each tool call joined with its results, the harness's injected
messages and system events. Each turn carries its models, its tokens (the API
requests :class:`~agentminutes.schema.usage.RequestFolder` counts, each once),
their cost (priced as ``usage`` prices them, or the harness's own figure) and
its time. Subagents nest under the tool call that started them: those a harness
writes inline (events with an ``agent_id``) under the last call of the parent
before their first event, those in transcripts of their own (found as
``stats --include-subagents`` finds them) under the call whose input or result
names their id; any left over are listed after the session.

Events are only read: every figure of :class:`SessionView` comes from the same
event stream and :class:`~agentminutes.schema.stats.StatsBuilder` as ``stats``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from agentminutes import timestamps
from agentminutes.schema import Event, EventKind, Meta, Origin, Stats, TokenUsage
from agentminutes.schema.stats import StatsBuilder
from agentminutes.schema.usage import Request, RequestFolder

if TYPE_CHECKING:
    from agentminutes.pipeline.batch import Stage
    from agentminutes.usage.prices import Pricer

__all__ = (
    "AgentView",
    "SessionView",
    "Step",
    "ToolStep",
    "Turn",
    "block_text",
    "build_agent",
    "load_view",
)


def block_text(blocks: Sequence[Any] | None) -> str:
    """The text of content blocks, non-text blocks named by their kind (``[image]``)."""
    if not blocks:
        return ""
    parts: list[str] = []
    for b in blocks:
        if b.text:
            parts.append(b.text)
        elif b.truncated:
            parts.append(f"[{b.kind}: {b.size} bytes, truncated]")
        elif b.kind != "text":
            parts.append(f"[{b.kind}{': ' + b.uri if b.uri else ''}]")
    return "\n".join(parts)


@dataclass
class ToolStep:
    """One tool call with its results, and the subagents it started."""

    call: Event | None
    results: list[Event] = field(default_factory=list)
    subagents: list[AgentView] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The tool's name (from the call, or the orphan result)."""
        if self.call is not None and self.call.tool_call is not None:
            return self.call.tool_call.name
        for r in self.results:
            if r.tool_result is not None and r.tool_result.tool_name:
                return r.tool_result.tool_name
        return "(unknown)"

    @property
    def call_id(self) -> str:
        """The call's id, as the transcript records it."""
        if self.call is not None and self.call.tool_call is not None:
            return self.call.tool_call.tool_call_id
        for r in self.results:
            if r.tool_result is not None:
                return r.tool_result.tool_call_id
        return ""

    @property
    def input_text(self) -> str:
        """The call's input as recorded (JSON text), ``""`` for none."""
        if self.call is None or self.call.tool_call is None:
            return ""
        raw = self.call.tool_call.input
        return bytes(raw).decode("utf-8", "replace") if raw else ""

    @property
    def is_error(self) -> bool:
        """Whether any result is marked as an error."""
        return any(r.tool_result is not None and r.tool_result.is_error for r in self.results)

    @property
    def result_text(self) -> str:
        """Every result's text, in order."""
        return "\n".join(
            block_text(r.tool_result.content) for r in self.results if r.tool_result is not None
        )


@dataclass
class Step:
    """One thing in a turn: an event, or a tool call with its results (``tool``)."""

    event: Event
    tool: ToolStep | None = None


@dataclass
class Turn:
    """A person's message and everything that followed it until the next one."""

    number: int
    prompt: Event | None
    steps: list[Step] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    usage: TokenUsage = field(default_factory=lambda: TokenUsage(input_tokens=0, output_tokens=0))
    requests: int = 0
    #: Every token of the turn's requests, each counted once (normalized: the cache parts of
    #: the input once, whatever the harness's usage shape).
    tokens: int = 0
    #: The turn's cost; ``None`` when no request of it could be priced.
    cost: Decimal | None = None
    #: Some request of the turn could not be priced (its cost is then a lower bound).
    unpriced: bool = False
    start: str = ""
    end: str = ""
    _priced: list[Request] = field(default_factory=list, repr=False)

    @property
    def tool_calls(self) -> int:
        """Tool calls made in this turn."""
        return sum(1 for s in self.steps if s.tool is not None and s.tool.call is not None)

    @property
    def duration_ms(self) -> int:
        """Milliseconds from the turn's first timestamp to its last (0 without two)."""
        a, b = timestamps.to_ns(self.start), timestamps.to_ns(self.end)
        if a is None or b is None or b < a:
            return 0
        return (b - a) // 1_000_000


@dataclass
class AgentView:
    """One agent's transcript (the session, or a subagent) as turns."""

    label: str
    meta: Meta
    turns: list[Turn]
    stats: Stats
    path: str = ""
    cost: Decimal | None = None
    unpriced: bool = False

    def tool_steps(self) -> Iterator[ToolStep]:
        """Every tool call of this agent and of its subagents, depth first."""
        for turn in self.turns:
            for step in turn.steps:
                if step.tool is not None:
                    yield step.tool
                    for sub in step.tool.subagents:
                        yield from sub.tool_steps()


@dataclass
class SessionView:
    """A session ready to be shown: the parent agent, its subagents nested, and the leftovers."""

    path: str
    main: AgentView
    #: Subagent transcripts no tool call of the parent names.
    unattached: list[AgentView] = field(default_factory=list)
    #: What redaction did (``""`` when it was off).
    redaction: str = ""

    @property
    def meta(self) -> Meta:
        """The session's identity."""
        return self.main.meta

    @property
    def stats(self) -> Stats:
        """The parent transcript's ``stats``."""
        return self.main.stats


class _Folder:
    """Builds one agent's turns from its events, in stream order."""

    def __init__(self, pricer: Pricer | None) -> None:
        self.pricer = pricer
        self.meta: Meta | None = None
        self.turns: list[Turn] = [Turn(0, None)]
        self.stats = StatsBuilder()
        self.requests: RequestFolder | None = None
        self.pending: dict[str, ToolStep] = {}
        self.last_call: ToolStep | None = None
        #: Inline subagents by ``agent_id``: their own folder, and the call they hang under.
        self.inline: dict[str, _Folder] = {}
        #: For an inline subagent: the parent's call it nests under.
        self.spawner: ToolStep | None = None
        #: Where each message's steps went: its turn, its first tool call's step, its last step.
        self.messages: dict[str, tuple[Turn, Step | None, Step]] = {}

    def add(self, ev: Event) -> None:
        self.stats.add(ev)
        if ev.session_meta is not None and self.meta is None:
            self.meta = ev.session_meta
            self.requests = RequestFolder(ev.session_meta.harness, ev.session_meta.session_id)
        if ev.agent_id and ev.kind != EventKind.SESSION_META:
            self._inline(ev)
            return
        turn = self._place(ev)
        if self.requests is not None:
            self._count(self.requests.add(ev), turn)

    def _inline(self, ev: Event) -> None:
        sub = self.inline.get(ev.agent_id)
        if sub is None:
            sub = self.inline[ev.agent_id] = _Folder(self.pricer)
            sub.meta = Meta(
                harness=self.meta.harness if self.meta else "",
                subagent_id=ev.agent_id,
                is_subagent=True,
            )
            sub.requests = RequestFolder(sub.meta.harness)
            sub.spawner = self.last_call
        turn = sub._place(ev)
        if sub.requests is not None:
            sub._count(sub.requests.add(ev), turn)

    def _count(self, done: list[Request], turn: Turn | None = None) -> None:
        turn = turn or self.turns[-1]
        for req in done:
            turn.usage.add(req.usage)
            turn.requests += 1
            if req.otel is not None:
                turn.tokens += req.otel.input_tokens + req.otel.output_tokens
            else:
                u = req.usage
                turn.tokens += u.input_tokens + u.output_tokens + u.cache_read_input_tokens
                turn.tokens += u.cache_creation_input_tokens
            turn._priced.append(req)
            if req.model and req.model not in turn.models:
                turn.models.append(req.model)

    def _place(self, ev: Event) -> Turn:
        """Put *ev* where a reader expects it; return its turn.

        Harnesses that stream a message write its thinking and tool calls as
        they come and the message's text once it is complete, sometimes after
        the next prompt: the text goes back to its message, before the
        message's first tool call.
        """
        turn = self.turns[-1]
        msg = ev.user_message
        step: Step | None = None
        if msg is not None and msg.origin == Origin.HUMAN:
            turn = Turn(len(self.turns), ev)
            self.turns.append(turn)
        elif ev.tool_call is not None:
            tool = ToolStep(ev)
            self.pending[ev.tool_call.tool_call_id] = tool
            self.last_call = tool
            step = Step(ev, tool)
        elif ev.tool_result is not None:
            found = self.pending.get(ev.tool_result.tool_call_id)
            if found is None:
                step = Step(ev, ToolStep(None, [ev]))
            else:
                found.results.append(ev)
        elif ev.kind != EventKind.SESSION_META:
            step = Step(ev)
        if step is not None:
            placed = self.messages.get(ev.message_id) if ev.message_id else None
            if placed is not None and ev.assistant_message is not None:
                turn, first_call, last = placed
                anchor = first_call if first_call is not None else last
                try:
                    at = turn.steps.index(anchor) + (0 if first_call is not None else 1)
                except ValueError:  # ids reused across turns: the anchor is elsewhere
                    at = len(turn.steps)
                turn.steps.insert(at, step)
            else:
                turn.steps.append(step)
                if ev.message_id:
                    known = self.messages.get(ev.message_id)
                    first = known[1] if known is not None and known[0] is turn else None
                    if first is None and step.tool is not None:
                        first = step
                    self.messages[ev.message_id] = (turn, first, step)
        if ev.assistant_message is not None:
            model = ev.assistant_message.model
            if model and model not in turn.models:
                turn.models.append(model)
        if ev.timestamp:
            if not turn.start or ev.timestamp < turn.start:
                turn.start = ev.timestamp
            if ev.timestamp > turn.end:
                turn.end = ev.timestamp
        return turn

    def finish(self, label: str, path: str) -> AgentView:
        if self.requests is not None:
            self._count(self.requests.finish())
        turns = [t for t in self.turns if t.prompt is not None or t.steps]
        harness = self.meta.harness if self.meta else ""
        total: Decimal | None = None
        unpriced = False
        for t in turns:
            _price(t, harness, self.pricer)
            if t.cost is not None:
                total = t.cost if total is None else total + t.cost
            unpriced = unpriced or t.unpriced
        for agent_id, sub in self.inline.items():
            view = sub.finish(f"subagent {agent_id}", path)
            if sub.spawner is not None:
                sub.spawner.subagents.append(view)
            elif turns:
                turns[0].steps.insert(0, Step(Event(kind="system"), ToolStep(None, [], [view])))
        return AgentView(
            label=label,
            meta=self.meta or Meta(harness=""),
            turns=turns,
            stats=self.stats.build(),
            path=path,
            cost=total,
            unpriced=unpriced,
        )


def _price(turn: Turn, harness: str, pricer: Pricer | None) -> None:
    """The turn's cost: each model's requests priced together, or the harness's own figures."""
    from agentminutes.usage.prices import Tokens

    by_model: dict[str, list[Tokens]] = {}
    reported: Decimal | None = None
    for req in turn._priced:
        if req.reported_cost is not None:
            reported = (reported or Decimal(0)) + Decimal(str(req.reported_cost))
        o = req.otel
        if o is None:
            turn.unpriced = True
            continue
        ns = timestamps.to_ns(req.timestamp) or 0
        by_model.setdefault(req.model, []).append(
            Tokens(
                ns,
                o.input_tokens,
                o.output_tokens,
                o.cache_read_input_tokens,
                o.cache_creation_input_tokens,
                o.cache_creation_1h_input_tokens,
            )
        )
    cost: Decimal | None = None
    if pricer is not None:
        for model, tokens in by_model.items():
            priced = pricer.price(model, harness, tokens)
            if priced.cost is None:
                turn.unpriced = True
            else:
                cost = priced.cost if cost is None else cost + priced.cost
    elif by_model:
        turn.unpriced = True
    if cost is None and reported is not None:
        cost, turn.unpriced = reported, False
    turn.cost = cost
    turn._priced = []


def build_agent(
    events: Iterable[Event], *, label: str = "session", path: str = "", pricer: Pricer | None
) -> AgentView:
    """Fold *events* (one transcript's, in stream order) into an :class:`AgentView`."""
    folder = _Folder(pricer)
    for ev in events:
        folder.add(ev)
    return folder.finish(label, path)


def default_pricer() -> Pricer | None:
    """The genai-prices catalog's pricer, or ``None`` when the ``cost`` extra is missing."""
    from agentminutes.usage.prices import Pricer, catalog_available

    return Pricer(None) if catalog_available() else None


def subagent_transcripts(path: str, harness: str) -> list[tuple[str, str]]:
    """``(subagent id, path)`` of the transcripts of *path*'s subagents, found as
    ``stats --include-subagents`` finds them; none when the harness keeps them inline."""
    from agentminutes.discovery.layouts import ScanContext, build_ref, locator
    from agentminutes.errors import AgentminutesError

    loc = locator(harness)
    if loc is None or path == "-":
        return []
    try:
        roots = []
        if loc.join in ("session_id", "content"):
            from agentminutes.discovery.sessions import harness_roots

            roots = harness_roots(harness, None, os.environ)
        parent = build_ref(harness, path)
        if parent is None:
            return []
        if harness == "antigravity":
            from agentminutes.harness.antigravity.layout import conversation_id_of

            parent.meta.session_id = conversation_id_of(path)
        gathered = loc.gather(roots, parent, ScanContext())
    except (AgentminutesError, OSError):
        return []
    return [
        (sub.meta.subagent_id or sub.meta.session_id, sub.path)
        for sub in gathered.subagents
        if sub.path != path
    ]


def _names(step: ToolStep, ident: str) -> bool:
    if not ident:
        return False
    if ident in step.input_text:
        return True
    for r in step.results:
        tr = r.tool_result
        if tr is None:
            continue
        if ident in block_text(tr.content) or (
            bool(tr.enrichment) and ident.encode() in bytes(tr.enrichment)
        ):
            return True
    return False


def load_view(
    path: str,
    *,
    harness: str = "auto",
    conversation: str | None = None,
    stages: Sequence[Stage] = (),
    subagents: bool = True,
    pricer: Pricer | None = None,
    events: Iterable[Event] | None = None,
) -> SessionView:
    """Read *path* (or take *events*) and its subagent transcripts into a :class:`SessionView`."""
    from agentminutes.api import iter_events

    stream = (
        events
        if events is not None
        else iter_events(path, harness=harness, conversation=conversation, stages=stages)
    )
    main = build_agent(stream, path=path, pricer=pricer)
    view = SessionView(path=path, main=main)
    if not subagents or not main.meta.harness:
        return view
    steps = list(main.tool_steps())
    for ident, sub_path in subagent_transcripts(path, main.meta.harness):
        sub = build_agent(
            iter_events(sub_path, harness=main.meta.harness, stages=stages),
            label=f"subagent {ident}",
            path=sub_path,
            pricer=pricer,
        )
        owner = next((s for s in steps if _names(s, ident)), None)
        if owner is not None:
            owner.subagents.append(sub)
        else:
            view.unattached.append(sub)
    return view
