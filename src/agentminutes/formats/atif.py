"""The ATIF projection: a session as an Agent Trajectory Interchange Format (v1.8) trajectory.

ATIF (Harbor's trajectory format, the one terminal-bench evaluation and
training data use) is one JSON document per trajectory: numbered steps, each
from the ``user``, the ``agent`` or the ``system``. :func:`trajectory` builds it
from a session's events:

======================================  ===============================================
event                                   step
======================================  ===============================================
``user_message`` (human)                a ``user`` step, its text the ``message``
``user_message`` (harness)              a ``system`` step (injected context)
``assistant_message``, and the          one ``agent`` step per API message: the text
``thinking`` and ``tool_call`` events   as ``message``, thinking as ``reasoning_content``,
folded from it                          ``tool_calls``, usage as ``metrics``
``tool_result``                         an ``observation`` result of the step holding
                                        its call (``source_call_id``); a result with no
                                        call becomes a ``system`` step's observation
events with an ``agent_id``             an embedded subagent trajectory
                                        (``subagent_trajectories``), referenced by a
                                        ``SubagentTrajectoryRef`` on the result of the
                                        tool call carrying its id, where there is one
``session_meta``                        the trajectory's ``agent`` and ``extra``
``system``, ``unknown``                 nothing (counted)
======================================  ===============================================

Steps are told apart as API messages are: events sharing a ``message_id`` are
one step; for harnesses without message ids (Codex), a tool call issued after
a result the step already received starts a new step (the model must have been
called again to see that result).

``metrics``: ``prompt_tokens`` counts the cache (by the harness's rule, as
``gen_ai.usage.input_tokens`` in :mod:`agentminutes.formats.otlp_json`),
``completion_tokens`` is the output including reasoning (every adapter's
``output_tokens`` counts it), ``cached_tokens`` the cache reads (the normalized
view of :mod:`agentminutes.schema.usage`); cache writes, the reasoning part
where recorded and the harness's own usage fields go to ``metrics.extra``.
``cost_usd`` is set only where the harness priced the request itself (pi),
never 0 for unknown.

Replayed history is marked ``is_copied_context``: the entries a forked pi
session copies from its parent (timed before the fork's header), and the
messages a Gemini CLI history rewrite replays (read from the rewrite's record).

The trajectory is a plain JSON value (``dict``); validating it against the
``atif`` package's models is left to the tests (no dependency at run time).
:class:`LossReport` counts what the lens could not carry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import msgspec

from agentminutes.formats.losses import added, loss_summary
from agentminutes.formats.otlp_json import gen_ai_usage
from agentminutes.schema import ContentBlock, Event, EventKind, Meta, Origin, Session
from agentminutes.schema.usage import reported_cost
from agentminutes.timestamps import to_ns

if TYPE_CHECKING:
    from agentminutes.formats import Options

__all__ = (
    "SCHEMA_VERSION",
    "AtifWriter",
    "LossReport",
    "TrajectoryBuilder",
    "trajectory",
    "writer",
)

#: The ``schema_version`` written: ATIF v1.8 (the ``atif`` 1.8.0 package's models).
SCHEMA_VERSION: Final = "ATIF-v1.8"

_decode: Final = msgspec.json.Decoder()


def _json(raw: msgspec.Raw) -> Any:
    """A verbatim payload as a JSON value (``None`` when absent or not JSON)."""
    if not len(raw):
        return None
    try:
        return _decode.decode(raw)
    except msgspec.DecodeError:
        return bytes(raw).decode("utf-8", "replace")


class LossReport(msgspec.Struct, omit_defaults=True, kw_only=True):
    """What a session's ATIF projection could not carry, by reason (empty maps left out)."""

    total_events: int = 0
    steps: int = 0
    subagents: int = 0
    dropped_events: dict[str, int] | None = None
    dropped_fields: dict[str, int] | None = None

    def summary(self, most: int | None = None) -> str:
        """One line: the counts, then each loss by reason (sorted; the *most* commonest only)."""
        head = f"{self.total_events} events, {self.steps} steps, {self.subagents} subagents"
        return loss_summary(head, self.dropped_events, self.dropped_fields, most=most)

    def added(self, other: LossReport) -> LossReport:
        """This report and *other* summed (many sessions' losses, as one report)."""
        total = added(self, other)
        assert total is not None
        return total


class _Losses:
    __slots__ = ("events", "fields")

    def __init__(self) -> None:
        self.events: dict[str, int] = {}
        self.fields: dict[str, int] = {}

    def event(self, reason: str) -> None:
        self.events[reason] = self.events.get(reason, 0) + 1

    def field(self, reason: str) -> None:
        self.fields[reason] = self.fields.get(reason, 0) + 1


class _Agent:
    """The steps of one agent (the session's, or an inline subagent's)."""

    __slots__ = (
        "calls",
        "harness",
        "losses",
        "models",
        "open",
        "open_has_result",
        "open_message_id",
        "steps",
        "trajectory_id",
    )

    def __init__(self, harness: str, trajectory_id: str, losses: _Losses) -> None:
        self.harness = harness
        self.trajectory_id = trajectory_id
        self.losses = losses
        self.steps: list[dict[str, Any]] = []
        self.calls: dict[str, dict[str, Any]] = {}
        self.models: list[str] = []
        self.open: dict[str, Any] | None = None
        self.open_message_id = ""
        self.open_has_result = False

    def _texts(self, blocks: list[ContentBlock] | None) -> str:
        texts: list[str] = []
        for block in blocks or ():
            if block.truncated:
                self.losses.field("content_block:truncated")
            elif block.kind == "text":
                if block.text:
                    texts.append(block.text)
            else:
                self.losses.field(f"content_block:{block.kind}")
        return "\n\n".join(texts)

    def _step(self, source: str, ev: Event, message: str, copied: bool) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": 0, "source": source, "message": message}
        if ev.timestamp:
            step["timestamp"] = ev.timestamp
        if copied:
            step["is_copied_context"] = True
        self.steps.append(step)
        return step

    def close(self) -> None:
        self.open = None
        self.open_message_id = ""
        self.open_has_result = False

    def _agent_step(self, ev: Event, copied: bool) -> dict[str, Any]:
        """The open agent step *ev* belongs to, or a new one."""
        step = self.open
        mid = ev.message_id
        if step is not None and (
            (mid and self.open_message_id and mid != self.open_message_id)
            or (ev.tool_call is not None and self.open_has_result and not mid)
            or (ev.assistant_message is not None and "_message_set" in step)
        ):
            step = None
        if step is None:
            self.close()
            step = self._step("agent", ev, "", copied)
            self.open = step
        if mid:
            self.open_message_id = mid
        return step

    def user(self, ev: Event, copied: bool) -> None:
        msg = ev.user_message
        assert msg is not None
        self.close()
        source = "system" if msg.origin == Origin.HARNESS else "user"
        step = self._step(source, ev, self._texts(msg.content), copied)
        if source == "system":
            step["extra"] = {"origin": msg.origin}

    def thinking(self, ev: Event, copied: bool) -> None:
        think = ev.thinking
        assert think is not None
        step = self._agent_step(ev, copied)
        if think.text:
            prior = step.get("reasoning_content")
            step["reasoning_content"] = f"{prior}\n\n{think.text}" if prior else think.text
        else:
            self.losses.field("thinking.encrypted")
        if think.signature:
            self.losses.field("thinking.signature")

    def tool_call(self, ev: Event, copied: bool) -> None:
        call = ev.tool_call
        assert call is not None
        step = self._agent_step(ev, copied)
        value = _json(call.input)
        entry: dict[str, Any] = {
            "tool_call_id": call.tool_call_id,
            "function_name": call.name,
            "arguments": value if isinstance(value, dict) else {},
        }
        extra: dict[str, Any] = {}
        if call.kind:
            extra["kind"] = call.kind
        if call.promoted_from:
            extra["promoted_from"] = call.promoted_from
        if value is not None and not isinstance(value, dict):
            # ATIF arguments are an object; an input recorded as text or a list is kept here.
            extra["input"] = value
        if extra:
            entry["extra"] = extra
        step.setdefault("tool_calls", []).append(entry)
        self.calls[call.tool_call_id] = step

    def tool_result(self, ev: Event, copied: bool) -> dict[str, Any]:
        result = ev.tool_result
        assert result is not None
        entry: dict[str, Any] = {}
        step = self.calls.get(result.tool_call_id)
        content = self._texts(result.content)
        extra: dict[str, Any] = {}
        if result.is_error:
            extra["is_error"] = True
        if result.tool_name:
            extra["tool_name"] = result.tool_name
        if result.fetch is not None:
            extra["fetch"] = msgspec.to_builtins(result.fetch)
        enrichment = _json(result.enrichment)
        if enrichment is not None:
            extra["enrichment"] = enrichment
        if ev.timestamp:
            extra["timestamp"] = ev.timestamp
        if step is None:
            # No call in this trajectory to answer: the result stands as a system observation.
            extra["tool_call_id"] = result.tool_call_id
            self.close()
            step = self._step("system", ev, "", copied)
        else:
            entry["source_call_id"] = result.tool_call_id
            if step is self.open:
                self.open_has_result = True
        entry["content"] = content
        if extra:
            entry["extra"] = extra
        step.setdefault("observation", {"results": []})["results"].append(entry)
        return entry

    def assistant(self, ev: Event, copied: bool) -> None:
        msg = ev.assistant_message
        assert msg is not None
        step = self._agent_step(ev, copied)
        step["_message_set"] = True
        step["message"] = self._texts(msg.content)
        if ev.timestamp:
            step["timestamp"] = ev.timestamp
        if msg.model:
            step["model_name"] = msg.model
            if msg.model not in self.models:
                self.models.append(msg.model)
        step["llm_call_count"] = 1
        extra: dict[str, Any] = {}
        if msg.stop_reason:
            extra["stop_reason"] = msg.stop_reason
        if ev.message_id:
            extra["message_id"] = ev.message_id
        if extra:
            step["extra"] = extra
        if msg.usage is not None:
            usage = gen_ai_usage(msg.usage, self.harness)
            metrics: dict[str, Any] = {
                "prompt_tokens": usage["gen_ai.usage.input_tokens"],
                "completion_tokens": usage["gen_ai.usage.output_tokens"],
                "cached_tokens": usage["gen_ai.usage.cache_read.input_tokens"],
            }
            m_extra: dict[str, Any] = {
                "cache_creation_input_tokens": usage["gen_ai.usage.cache_creation.input_tokens"]
            }
            native = {k: _json(v) for k, v in (msg.usage.extra or {}).items()}
            if native:
                m_extra["usage_extra"] = native
            reasoning = usage.get("gen_ai.usage.reasoning.output_tokens")
            if reasoning is not None:
                m_extra["reasoning_tokens"] = reasoning
            cost = reported_cost(msg.usage, self.harness)
            if cost is not None:
                metrics["cost_usd"] = cost
            metrics["extra"] = m_extra
            step["metrics"] = metrics

    def document(self, meta: Meta, version: str, extra: dict[str, Any]) -> dict[str, Any]:
        self.close()
        agent: dict[str, Any] = {"name": meta.harness, "version": version or "unknown"}
        if self.models:
            agent["model_name"] = self.models[0]
        prompt = completion = cached = 0
        cost = 0.0
        costed = metered = False
        for index, step in enumerate(self.steps, start=1):
            step["step_id"] = index
            step.pop("_message_set", None)
            metrics = step.get("metrics")
            if metrics is not None:
                metered = True
                prompt += metrics["prompt_tokens"]
                completion += metrics["completion_tokens"]
                cached += metrics["cached_tokens"]
                if "cost_usd" in metrics:
                    costed = True
                    cost += metrics["cost_usd"]
        doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
        if meta.session_id:
            doc["session_id"] = meta.session_id
        doc["trajectory_id"] = self.trajectory_id
        doc["agent"] = agent
        doc["steps"] = self.steps
        final: dict[str, Any] = {"total_steps": len(self.steps)}
        if metered:
            final["total_prompt_tokens"] = prompt
            final["total_completion_tokens"] = completion
            final["total_cached_tokens"] = cached
        if costed:
            final["total_cost_usd"] = cost
        doc["final_metrics"] = final
        if extra:
            doc["extra"] = extra
        return doc


class TrajectoryBuilder:
    """Folds events, in order, into one ATIF trajectory (with embedded subagents)."""

    def __init__(self, harness: str = "") -> None:
        self.meta = Meta(harness=harness)
        self._losses = _Losses()
        self._total = 0
        self._root: _Agent | None = None
        self._subagents: dict[str, _Agent] = {}
        self._refs: dict[str, dict[str, Any]] = {}
        self._fork_ns = 0
        self._rewrite_lines: set[int] = set()
        self._lineage = ""

    def _agent(self, agent_id: str) -> _Agent:
        if self._root is None:
            meta = self.meta
            ident = meta.session_id or "session"
            if meta.is_subagent and meta.subagent_id:
                ident = f"{ident}/{meta.subagent_id}"
            self._root = _Agent(meta.harness, ident, self._losses)
        if not agent_id or agent_id == self.meta.subagent_id:
            return self._root
        agent = self._subagents.get(agent_id)
        if agent is None:
            agent = _Agent(self.meta.harness, agent_id, self._losses)
            self._subagents[agent_id] = agent
        return agent

    def _copied(self, ev: Event) -> bool:
        """Whether *ev* replays history: copied into a fork, or replayed by a rewrite."""
        if self._fork_ns and ev.timestamp:
            ns = to_ns(ev.timestamp)
            if ns is not None and ns < self._fork_ns:
                return True
        prov = ev.provenance
        return prov is not None and prov.line in self._rewrite_lines

    def add(self, ev: Event) -> None:
        """Fold one event into the trajectory."""
        self._total += 1
        kind = ev.kind
        if kind == EventKind.SESSION_META and ev.session_meta is not None:
            if self._root is None:
                self.meta = ev.session_meta
            return
        if kind == EventKind.SYSTEM and ev.system is not None:
            system = ev.system
            if system.subtype == "session" and system.text and self.meta.harness == "pi":
                # A forked pi session begins with its parent's entries, timed before its header.
                self._lineage = system.text
                self._fork_ns = (to_ns(ev.timestamp) or 0) if ev.timestamp else 0
            elif system.subtype == "history_rewrite" and ev.provenance is not None:
                self._rewrite_lines.add(ev.provenance.line)
            self._losses.event(f"system/{system.subtype}")
            return
        copied = self._copied(ev)
        agent = self._agent(ev.agent_id)
        if kind == EventKind.USER_MESSAGE and ev.user_message is not None:
            agent.user(ev, copied)
        elif kind == EventKind.ASSISTANT_MESSAGE and ev.assistant_message is not None:
            agent.assistant(ev, copied)
        elif kind == EventKind.THINKING and ev.thinking is not None:
            agent.thinking(ev, copied)
        elif kind == EventKind.TOOL_CALL and ev.tool_call is not None:
            agent.tool_call(ev, copied)
        elif kind == EventKind.TOOL_RESULT and ev.tool_result is not None:
            entry = agent.tool_result(ev, copied)
            # The first result of a call is where a subagent it started is referenced.
            self._refs.setdefault(ev.tool_result.tool_call_id, entry)
        else:
            self._losses.event("unknown")

    def finish(self) -> tuple[dict[str, Any], LossReport]:
        """The trajectory (a JSON value) and the loss report."""
        root = self._agent("")
        meta = self.meta
        extra: dict[str, Any] = {}
        for key in ("cwd", "git_branch", "subagent_id"):
            value = getattr(meta, key)
            if value:
                extra[key] = value
        if meta.is_subagent:
            extra["is_subagent"] = True
        if self._lineage:
            extra["parent_session"] = self._lineage
        doc = root.document(meta, meta.harness_version, extra)
        subs: list[dict[str, Any]] = []
        for agent_id, agent in self._subagents.items():
            sub = agent.document(meta, meta.harness_version, {"agent_id": agent_id})
            subs.append(sub)
            ref = {"trajectory_id": agent_id}
            entry = self._refs.get(agent_id)
            if entry is not None and "source_call_id" in entry:
                entry["subagent_trajectory_ref"] = [ref]
            else:
                self._losses.field("subagent_ref_unlinked")
        if subs:
            doc["subagent_trajectories"] = subs
        steps = len(root.steps) + sum(len(a.steps) for a in self._subagents.values())
        report = LossReport(
            total_events=self._total,
            steps=steps,
            subagents=len(subs),
            dropped_events=dict(self._losses.events) or None,
            dropped_fields=dict(self._losses.fields) or None,
        )
        return doc, report


def trajectory(session: Session | Iterable[Event]) -> tuple[dict[str, Any], LossReport]:
    """A session (or its events) as an ATIF v1.8 trajectory (a JSON value) and its loss report."""
    if isinstance(session, Session):
        builder = TrajectoryBuilder(session.meta.harness)
        builder.meta = session.meta
        events: Iterable[Event] = session.events
    else:
        builder = TrajectoryBuilder()
        events = session
    for ev in events:
        builder.add(ev)
    return builder.finish()


class AtifWriter:
    """``--format atif``: the session as one trajectory document, one line, at its end."""

    def __init__(self) -> None:
        self._builder = TrajectoryBuilder()
        self._loss: LossReport | None = None

    def add(self, events: Sequence[Event]) -> bytes:
        """Nothing yet: *events* are folded into the trajectory."""
        add = self._builder.add
        for ev in events:
            add(ev)
        return b""

    def finish(self, skipped: Mapping[str, int]) -> bytes:
        """The trajectory document."""
        doc, self._loss = self._builder.finish()
        return _encode(doc) + b"\n"

    def loss(self) -> LossReport | None:
        """What the trajectory could not carry."""
        return self._loss


_encode: Final = msgspec.json.Encoder().encode


def writer(options: Options) -> AtifWriter:
    """A writer of one session's trajectory (no options apply)."""
    return AtifWriter()
