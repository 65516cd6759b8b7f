"""The OpenTelemetry projection: a session as spans of the GenAI semantic conventions.

One trace per session, with span and trace ids derived from the session's and
each event's identity, so exporting the same session twice gives the same trace:

=====================================  ===================================================
span                                   made from
=====================================  ===================================================
``invoke_agent {harness}`` (root)      the session: ``gen_ai.conversation.id`` the session
                                       id, ``gen_ai.agent.name`` the harness; from the
                                       first timestamp to the last
``chat {model}``                       each ``assistant_message``: usage in GenAI terms
                                       (``gen_ai.usage.input_tokens`` counts the cache),
                                       ``gen_ai.response.model``, finish reason; from the
                                       last input before it to the message
``execute_tool {tool}``                each ``tool_call``: name, call id, type, ``error.type``
                                       on a failed result; from the call to its result
``invoke_agent {harness}`` (nested)    each inline subagent (events with an ``agent_id``):
                                       under the tool call whose id it carries, else the root
=====================================  ===================================================

Chat and tool spans are children of the ``invoke_agent`` span of the agent that
produced them (the conventions' shape: tool executions are the agent's, beside
its model calls). Content — prompts, responses, tool arguments and results — is
only written when asked for (``content=True``, ``--otel-content``), as the
conventions require: it is the part of a trace most likely to be sensitive.

Token counts: the output contract keeps each harness's usage as recorded, and
harnesses disagree on whether ``input_tokens`` holds the cache; the normalized
view of :mod:`agentminutes.schema.usage` (one rule per harness) gives the
``gen_ai.usage.*`` counts (:func:`gen_ai_usage`).

Copilot CLI records no usage on its messages: its requests are read as
:class:`~agentminutes.schema.usage.RequestFolder` reads them. Each
``assistant.usage`` record (one API request, written after its message) goes on
the chat span of the agent's latest message, so a Copilot chat span is held
until its usage arrives or its turn ends (``assistant.turn_end``, the next
message or turn, a user message, a shutdown, the end); a usage record with no
chat span waiting goes on the agent's next one. ``session.shutdown`` metrics
sum a whole process's requests per model and cannot be split among its chat
spans: they go on the root ``invoke_agent`` span (the conventions allow usage
there), as does a usage record no chat span came to carry. Every token is on
exactly one span: summing ``gen_ai.usage.*`` over a trace's spans gives the
session's normalized usage, and over its chat spans too wherever the
transcript recorded usage per request.

:class:`SpanProjector` is streaming: spans come out as soon as they end (a chat
span with its message, a tool span with its result); the agent spans and tool
calls still without a result come out at :meth:`SpanProjector.finish`. The
:class:`LossReport` counts what the lens cannot carry. :func:`encode_otlp_json`
writes spans in the OTLP/JSON encoding (what the collector's ``otlpjsonfile``
receiver reads: one ``ExportTraceServiceRequest`` a line).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import msgspec

from agentminutes import timestamps
from agentminutes._version import __version__
from agentminutes.formats.losses import loss_summary
from agentminutes.schema import ContentBlock, Event, EventKind, Origin, Session, TokenUsage
from agentminutes.schema.usage import OtelUsage, Request, RequestFolder, otel_usage

if TYPE_CHECKING:
    from agentminutes.formats import Options

__all__ = (
    "SNAPSHOT_VERSION",
    "SPANS_PER_LINE",
    "SPAN_KIND_CLIENT",
    "SPAN_KIND_INTERNAL",
    "STATUS_ERROR",
    "AttrValue",
    "LossReport",
    "OtlpJsonWriter",
    "Span",
    "SpanProjector",
    "encode_otlp_json",
    "gen_ai_usage",
    "project",
    "writer",
)

#: An attribute value: the OTLP ``AnyValue`` kinds the projection uses.
AttrValue = str | int | bool | float | list[str]

#: OTLP ``Span.SpanKind``: internal (agents, tools run in-process) and client (model calls).
SPAN_KIND_INTERNAL: Final = 1
SPAN_KIND_CLIENT: Final = 3
#: OTLP ``Status.StatusCode`` of a failed span.
STATUS_ERROR: Final = 2


def _provider(harness: str) -> str:
    """``gen_ai.provider.name`` of *harness*, where its provider is fixed (its description's)."""
    from agentminutes.harness.registry import described

    found = described(harness)
    return found.provider if found is not None else ""


_SCOPE_NAME: Final = "agentminutes"
#: The version of :meth:`SpanProjector.snapshot`'s layout (2: Copilot's held chat
#: spans and usage; a version-1 snapshot is still read).
SNAPSHOT_VERSION: Final = 2
#: Harnesses whose usage is read beside the messages (:class:`RequestFolder`), not on them.
_USAGE_BESIDE: Final = frozenset({"copilot"})
#: Copilot system records after which no usage record of a held chat span is to come.
_USAGE_BOUNDARIES: Final = frozenset(
    {"assistant.turn_end", "assistant.turn_start", "session.shutdown"}
)


class Span(msgspec.Struct, kw_only=True):
    """One span, in OTLP terms: ids as lowercase hex, times as Unix nanoseconds."""

    trace_id: str
    span_id: str
    parent_span_id: str = ""
    name: str
    kind: int = SPAN_KIND_INTERNAL
    start_time_unix_nano: int = 0
    end_time_unix_nano: int = 0
    attributes: dict[str, AttrValue] = msgspec.field(default_factory=dict)
    status_code: int = 0
    status_message: str = ""


class LossReport(msgspec.Struct, omit_defaults=True, kw_only=True):
    """What a session's span projection could not carry.

    ``dropped_events`` counts events that became no span and no span attribute
    (user messages and thinking without ``content``, system events, unknown
    records); ``dropped_fields`` counts fields of projected events left out
    (content without ``content``, thinking, non-text blocks, fetch metrics,
    enrichment), and ``untimed_spans``/``open_tool_calls`` what had to be guessed.
    """

    total_events: int = 0
    spans: int = 0
    chat_spans: int = 0
    tool_spans: int = 0
    agent_spans: int = 0
    dropped_events: dict[str, int] | None = None
    dropped_fields: dict[str, int] | None = None

    def summary(self) -> str:
        """One line: the counts, then each loss by reason (sorted)."""
        head = (
            f"{self.total_events} events, {self.spans} spans ({self.agent_spans} invoke_agent, "
            f"{self.chat_spans} chat, {self.tool_spans} execute_tool)"
        )
        return loss_summary(head, self.dropped_events, self.dropped_fields)


def gen_ai_usage(usage: TokenUsage, harness: str) -> dict[str, int]:
    """*usage* as *harness* records it, as ``gen_ai.usage.*`` attributes.

    The counts are :func:`agentminutes.schema.usage.otel_usage`'s (the per-harness
    rules): ``gen_ai.usage.input_tokens`` is every prompt token (fresh, cache
    reads and cache writes), the cache attributes are parts of it, and
    ``gen_ai.usage.reasoning.output_tokens`` (a part of the output) is written where
    the harness recorded it. A harness without a rule keeps its counts as recorded.
    """
    norm = otel_usage(usage, harness)
    if norm is None:
        return {
            "gen_ai.usage.input_tokens": usage.input_tokens,
            "gen_ai.usage.cache_read.input_tokens": usage.cache_read_input_tokens,
            "gen_ai.usage.cache_creation.input_tokens": usage.cache_creation_input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
        }
    return _usage_attrs(norm)


def _usage_attrs(norm: OtelUsage) -> dict[str, int]:
    attrs = {
        "gen_ai.usage.input_tokens": norm.input_tokens,
        "gen_ai.usage.cache_read.input_tokens": norm.cache_read_input_tokens,
        "gen_ai.usage.cache_creation.input_tokens": norm.cache_creation_input_tokens,
        "gen_ai.usage.output_tokens": norm.output_tokens,
    }
    if norm.reasoning_output_tokens is not None:
        attrs["gen_ai.usage.reasoning.output_tokens"] = norm.reasoning_output_tokens
    return attrs


def _hex_id(nbytes: int, *parts: str) -> str:
    """*nbytes* of a hash of *parts* as hex, never all zeros (OTLP's invalid id)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()[:nbytes]
    if not any(digest):
        digest = b"\x01" + digest[1:]
    return digest.hex()


_text_json: Final = msgspec.json.Encoder()


def _texts(blocks: list[ContentBlock] | None) -> list[str]:
    return [b.text for b in blocks or () if b.kind == "text" and b.text and not b.truncated]


class _Agent:
    """An ``invoke_agent`` span being built: its id, parent and time span."""

    __slots__ = ("agent_id", "first_ns", "last_ns", "parent", "span_id")

    def __init__(self, agent_id: str, span_id: str, parent: str) -> None:
        self.agent_id = agent_id
        self.span_id = span_id
        self.parent = parent
        self.first_ns = 0
        self.last_ns = 0


class SpanProjector:
    """Projects events one at a time onto spans, keeping the loss counts.

    *harness* names the agent (``gen_ai.agent.name``); *session_id* the
    conversation, else the ``session_meta`` event's id is taken when it passes.
    Ids are made from the session's identity (harness, session id, subagent id),
    so the projection of the first events must see that identity: the
    ``session_meta`` event comes first in every adapter's stream.
    """

    def __init__(self, harness: str, *, session_id: str = "", content: bool = False) -> None:
        self.harness = harness
        self.session_id = session_id
        self.subagent_id = ""
        self.content = content
        self._trace_id = ""
        self._root: _Agent | None = None
        self._agents: dict[str, _Agent] = {}
        self._open_tools: dict[str, Span] = {}
        self._tool_counts: dict[str, int] = {}
        self._chat_index = 0
        self._last_ns = 0
        self._input_ns = 0
        self._pending_input: list[dict[str, object]] = []
        self._pending_reasoning: list[str] = []
        self._total = 0
        self._counts = {"chat": 0, "tool": 0, "agent": 0}
        self._events: dict[str, int] = {}
        self._fields: dict[str, int] = {}
        #: Agent spans already written by an earlier :meth:`finish` (a live follow's stop).
        self._sent_agents: set[str] = set()
        #: Copilot: the requests read beside the messages; per agent span, the chat span
        #: waiting for its usage record and usage waiting for a chat span; usage of the root.
        self._folder: RequestFolder | None = None
        self._held: dict[str, Span] = {}
        self._carry: dict[str, OtelUsage] = {}
        self._root_usage: OtelUsage | None = None

    # -- loss bookkeeping -------------------------------------------------
    def _event_lost(self, reason: str) -> None:
        self._events[reason] = self._events.get(reason, 0) + 1

    def _field_lost(self, reason: str) -> None:
        self._fields[reason] = self._fields.get(reason, 0) + 1

    # -- identity ---------------------------------------------------------
    def _key(self) -> tuple[str, str, str]:
        return (self.harness, self.session_id, self.subagent_id)

    def _ensure_root(self) -> _Agent:
        if self._root is None:
            harness, session, sub = self._key()
            self._trace_id = _hex_id(16, "trace", harness, session)
            self._root = _Agent(sub, _hex_id(8, "agent", harness, session, sub), "")
        return self._root

    def _agent(self, agent_id: str) -> _Agent:
        root = self._ensure_root()
        if not agent_id or agent_id == self.subagent_id:
            return root
        agent = self._agents.get(agent_id)
        if agent is None:
            harness, session, sub = self._key()
            # Linked where the session links it: the latest tool call carrying the agent's id.
            seen = self._tool_counts.get(agent_id, 0)
            parent = (
                _hex_id(8, "tool", harness, session, sub, agent_id, str(seen - 1))
                if seen
                else root.span_id
            )
            agent = _Agent(agent_id, _hex_id(8, "agent", harness, session, sub, agent_id), parent)
            self._agents[agent_id] = agent
        return agent

    def _time(self, ev: Event, agent: _Agent) -> int:
        ns = timestamps.to_ns(ev.timestamp) if ev.timestamp else None
        if ns is None:
            ns = self._last_ns
        else:
            self._last_ns = ns
        if ns:
            if not agent.first_ns or ns < agent.first_ns:
                agent.first_ns = ns
            agent.last_ns = max(agent.last_ns, ns)
        return ns

    # -- projection -------------------------------------------------------
    def project(self, ev: Event) -> list[Span]:
        """The spans *ev* completes (a chat span, a tool span; usually none or one)."""
        self._total += 1
        if ev.kind == EventKind.SESSION_META and ev.session_meta is not None:
            meta = ev.session_meta
            if self._root is None:
                self.session_id = self.session_id or meta.session_id
                self.subagent_id = meta.subagent_id if meta.is_subagent else ""
                if meta.harness and not self.harness:
                    self.harness = meta.harness
            self._time(ev, self._ensure_root())
            if self._folder is None and self.harness in _USAGE_BESIDE:
                self._folder = RequestFolder(self.harness, self.session_id)
            if self._folder is not None:
                self._folder.add(ev)
            return []
        if self._folder is None and self.harness in _USAGE_BESIDE:
            self._folder = RequestFolder(self.harness, self.session_id)
        agent = self._agent(ev.agent_id)
        ns = self._time(ev, agent)
        if self._folder is not None:
            return self._beside(ev, agent, ns, self._folder.add(ev))
        if ev.assistant_message is not None:
            return [self._chat(ev, agent, ns)]
        return self._other(ev, agent, ns)

    def _beside(self, ev: Event, agent: _Agent, ns: int, reqs: list[Request]) -> list[Span]:
        """Copilot: the event's spans, with chat spans held for the usage records after them."""
        out: list[Span] = []
        if ev.assistant_message is not None:
            self._release(agent.span_id, out)
            span = self._chat(ev, agent, ns)
            carried = self._carry.pop(agent.span_id, None)
            if carried is not None:
                span.attributes.update(_usage_attrs(carried))
                out.append(span)
            else:
                self._held[agent.span_id] = span
            return out
        if reqs:
            for req in reqs:
                self._usage(req, out)
            return out
        if ev.user_message is not None:
            self._release(agent.span_id, out)
        elif ev.system is not None and ev.system.subtype in _USAGE_BOUNDARIES:
            for key in (
                list(self._held) if ev.system.subtype == "session.shutdown" else (agent.span_id,)
            ):
                self._release(key, out)
        out.extend(self._other(ev, agent, ns))
        return out

    def _release(self, agent_span: str, out: list[Span]) -> None:
        held = self._held.pop(agent_span, None)
        if held is not None:
            out.append(held)

    def _usage(self, req: Request, out: list[Span]) -> None:
        norm = req.otel
        if norm is None:
            return
        if req.origin != "assistant.usage":
            # A shutdown's per-model sums: the whole process's, on the root span. No usage
            # record of a held chat span is to come after it.
            for key in list(self._held):
                self._release(key, out)
            self._add_root_usage(norm)
            return
        agent = self._agent(req.agent_id).span_id
        held = self._held.pop(agent, None)
        if held is not None:
            held.attributes.update(_usage_attrs(norm))
            if req.model and "gen_ai.response.model" not in held.attributes:
                held.attributes["gen_ai.response.model"] = req.model
            out.append(held)
            return
        carry = self._carry.get(agent)
        if carry is None:
            self._carry[agent] = OtelUsage.zero()
            carry = self._carry[agent]
        carry.add(norm)

    def _add_root_usage(self, norm: OtelUsage) -> None:
        if self._root_usage is None:
            self._root_usage = OtelUsage.zero()
        self._root_usage.add(norm)

    def _other(self, ev: Event, agent: _Agent, ns: int) -> list[Span]:
        """The spans of an event that is no assistant message."""
        if ev.tool_call is not None:
            return self._tool_call(ev, agent, ns)
        if ev.tool_result is not None:
            self._input_ns = ns
            span = self._tool_result(ev, ns)
            return [span] if span is not None else []
        if ev.user_message is not None:
            self._input_ns = ns
            texts = _texts(ev.user_message.content)
            if self.content and texts:
                role = "user"
                if ev.user_message.origin == Origin.HARNESS:
                    role = "system"
                parts: list[object] = [{"type": "text", "content": t} for t in texts]
                self._pending_input.append({"role": role, "parts": parts})
            else:
                self._event_lost("user_message")
            return []
        if ev.thinking is not None:
            if self.content and ev.thinking.text:
                self._pending_reasoning.append(ev.thinking.text)
            else:
                self._event_lost("thinking")
            return []
        if ev.system is not None:
            self._input_ns = ns
            self._event_lost(f"system/{ev.system.subtype}")
            return []
        self._event_lost("unknown")
        return []

    def _chat(self, ev: Event, agent: _Agent, ns: int) -> Span:
        msg = ev.assistant_message
        assert msg is not None
        self._chat_index += 1
        harness, session, sub = self._key()
        ident = ev.message_id or ev.id or f"#{self._chat_index}"
        attrs: dict[str, AttrValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.conversation.id": session,
        }
        provider = _provider(harness)
        if provider:
            attrs["gen_ai.provider.name"] = provider
        if msg.model:
            attrs["gen_ai.request.model"] = msg.model
            attrs["gen_ai.response.model"] = msg.model
        if ev.message_id:
            attrs["gen_ai.response.id"] = ev.message_id
        if msg.stop_reason:
            attrs["gen_ai.response.finish_reasons"] = [msg.stop_reason]
        if msg.usage is not None:
            attrs.update(gen_ai_usage(msg.usage, harness))
            if msg.usage.extra:
                self._field_lost("assistant_message.usage.extra")
        if self.content:
            if self._pending_input:
                attrs["gen_ai.input.messages"] = _text_json.encode(self._pending_input).decode()
            out_parts: list[dict[str, str]] = [
                {"type": "reasoning", "content": t} for t in self._pending_reasoning
            ]
            out_parts.extend({"type": "text", "content": t} for t in _texts(msg.content))
            if out_parts:
                out = [
                    {
                        "role": "assistant",
                        "parts": out_parts,
                        "finish_reason": msg.stop_reason or "",
                    }
                ]
                attrs["gen_ai.output.messages"] = _text_json.encode(out).decode()
        elif msg.content:
            self._field_lost("assistant_message.content")
        self._pending_input = []
        self._pending_reasoning = []
        self._count_blocks(msg.content)
        start = self._input_ns if self._input_ns and self._input_ns <= ns else ns
        self._counts["chat"] += 1
        if not ns:
            self._field_lost("untimed_span")
        return Span(
            trace_id=self._trace_id,
            span_id=_hex_id(8, "chat", harness, session, sub, ident, str(self._chat_index)),
            parent_span_id=agent.span_id,
            name=f"chat {msg.model}" if msg.model else "chat",
            kind=SPAN_KIND_CLIENT,
            start_time_unix_nano=start,
            end_time_unix_nano=ns,
            attributes=attrs,
        )

    def _count_blocks(self, blocks: list[ContentBlock] | None) -> None:
        for block in blocks or ():
            if block.truncated:
                self._field_lost("content_block:truncated")
            elif block.kind != "text":
                self._field_lost(f"content_block:{block.kind}")

    def _tool_call(self, ev: Event, agent: _Agent, ns: int) -> list[Span]:
        call = ev.tool_call
        assert call is not None
        harness, session, sub = self._key()
        # A call id repeated in one session (re-sent, forked) still gets a span of its own.
        seen = self._tool_counts.get(call.tool_call_id, 0)
        self._tool_counts[call.tool_call_id] = seen + 1
        span_id = _hex_id(8, "tool", harness, session, sub, call.tool_call_id, str(seen))
        attrs: dict[str, AttrValue] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.tool_call_id,
            # Every harness tool is the agent's own function (no extension/datastore split).
            "gen_ai.tool.type": "function",
        }
        if call.kind:
            attrs["agentminutes.tool.kind"] = call.kind
        if len(call.input):
            if self.content:
                attrs["gen_ai.tool.call.arguments"] = bytes(call.input).decode("utf-8", "replace")
            else:
                self._field_lost("tool_call.input")
        span = Span(
            trace_id=self._trace_id,
            span_id=span_id,
            parent_span_id=agent.span_id,
            name=f"execute_tool {call.name}",
            start_time_unix_nano=ns,
            end_time_unix_nano=ns,
            attributes=attrs,
        )
        # A call re-issued under an id still open: the earlier one never got its result.
        earlier = self._open_tools.pop(call.tool_call_id, None)
        self._open_tools[call.tool_call_id] = span
        if earlier is None:
            return []
        self._field_lost("tool_call_without_result")
        self._counts["tool"] += 1
        return [earlier]

    def _tool_result(self, ev: Event, ns: int) -> Span | None:
        result = ev.tool_result
        assert result is not None
        span = self._open_tools.pop(result.tool_call_id, None)
        if span is None:
            # A second result of a call, or a result whose call is not in the transcript.
            self._event_lost("tool_result_without_open_call")
            return None
        if ns >= span.start_time_unix_nano:
            span.end_time_unix_nano = ns
        if result.is_error:
            span.status_code = STATUS_ERROR
            span.attributes["error.type"] = "tool_error"
            texts = _texts(result.content)
            if texts and self.content:
                span.status_message = texts[0][:256]
        if result.fetch is not None:
            self._field_lost("tool_result.fetch")
        if len(result.enrichment):
            self._field_lost("tool_result.enrichment")
        if result.content:
            if self.content:
                span.attributes["gen_ai.tool.call.result"] = "\n".join(_texts(result.content))
            else:
                self._field_lost("tool_result.content")
            self._count_blocks(result.content)
        self._counts["tool"] += 1
        return span

    def finish(self) -> list[Span]:
        """The spans still open: tool calls without a result (ending where they
        started), then the subagents' and the session's ``invoke_agent`` spans."""
        out: list[Span] = []
        for key in list(self._held):
            self._release(key, out)
        if self._folder is not None:
            for req in self._folder.finish():
                self._usage(req, out)
        for carried in self._carry.values():
            self._field_lost("usage_without_chat_span")
            self._add_root_usage(carried)
        self._carry.clear()
        for span in self._open_tools.values():
            self._field_lost("tool_call_without_result")
            self._counts["tool"] += 1
            out.append(span)
        self._open_tools.clear()
        root = self._ensure_root()
        harness, session, _ = self._key()
        for agent in (*self._agents.values(), root):
            if agent.span_id in self._sent_agents:
                continue
            self._sent_agents.add(agent.span_id)
            attrs: dict[str, AttrValue] = {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": harness,
                "gen_ai.conversation.id": session,
            }
            if agent.agent_id:
                attrs["gen_ai.agent.id"] = agent.agent_id
            provider = _provider(harness)
            if provider:
                attrs["gen_ai.provider.name"] = provider
            if agent is root and self._root_usage is not None:
                attrs.update(_usage_attrs(self._root_usage))
            out.append(
                Span(
                    trace_id=self._trace_id,
                    span_id=agent.span_id,
                    parent_span_id=agent.parent,
                    name=f"invoke_agent {harness}",
                    start_time_unix_nano=agent.first_ns,
                    end_time_unix_nano=agent.last_ns,
                    attributes=attrs,
                )
            )
            self._counts["agent"] += 1
        return out

    @property
    def open_tool_calls(self) -> int:
        """Tool calls whose span waits for their result."""
        return len(self._open_tools)

    def snapshot(self) -> dict[str, object]:
        """What the projector holds, as a JSON value :meth:`restore` takes back.

        A live follow with ``--state`` records it with each delivered batch, so a
        follower restarted there carries on: tool calls still open, the agents'
        times, the counters ids are made of. Its size grows with the session's
        distinct tool call ids (one count each), not with its spans.
        """
        agents = [
            [a.agent_id, a.span_id, a.parent, a.first_ns, a.last_ns]
            for a in (self._root, *self._agents.values())
            if a is not None
        ]
        return {
            "v": SNAPSHOT_VERSION,
            "harness": self.harness,
            "session_id": self.session_id,
            "subagent_id": self.subagent_id,
            "trace_id": self._trace_id,
            "root": self._root is not None,
            "agents": agents,
            "open": msgspec.to_builtins(list(self._open_tools.values())),
            "tool_counts": dict(self._tool_counts),
            "chat_index": self._chat_index,
            "last_ns": self._last_ns,
            "input_ns": self._input_ns,
            "pending_input": list(self._pending_input),
            "pending_reasoning": list(self._pending_reasoning),
            "total": self._total,
            "counts": dict(self._counts),
            "events": dict(self._events),
            "fields": dict(self._fields),
            "sent_agents": sorted(self._sent_agents),
            "folder": self._folder.snapshot() if self._folder is not None else None,
            "held": {k: msgspec.to_builtins(v) for k, v in self._held.items()},
            "carry": {k: msgspec.to_builtins(v) for k, v in self._carry.items()},
            "root_usage": (
                msgspec.to_builtins(self._root_usage) if self._root_usage is not None else None
            ),
        }

    @classmethod
    def restore(cls, snap: Mapping[str, Any], *, content: bool = False) -> SpanProjector:
        """A projector carrying on from *snap* (:meth:`snapshot`).

        Raises:
            ValueError: *snap* is not a snapshot this version wrote.
        """
        if not isinstance(snap, Mapping) or snap.get("v") not in (1, SNAPSHOT_VERSION):
            raise ValueError("not a span projector snapshot of this version")
        try:
            self = cls(str(snap["harness"]), session_id=str(snap["session_id"]), content=content)
            self.subagent_id = str(snap["subagent_id"])
            self._trace_id = str(snap["trace_id"])
            agents = [_Agent(a[0], a[1], a[2]) for a in snap["agents"]]
            for agent, raw in zip(agents, snap["agents"], strict=True):
                agent.first_ns, agent.last_ns = int(raw[3]), int(raw[4])
            if snap["root"]:
                self._root = agents.pop(0)
            self._agents = {a.agent_id: a for a in agents}
            for span in msgspec.convert(snap["open"], list[Span]):
                self._open_tools[str(span.attributes["gen_ai.tool.call.id"])] = span
            self._tool_counts = {str(k): int(v) for k, v in snap["tool_counts"].items()}
            self._chat_index = int(snap["chat_index"])
            self._last_ns = int(snap["last_ns"])
            self._input_ns = int(snap["input_ns"])
            self._pending_input = list(snap["pending_input"])
            self._pending_reasoning = [str(t) for t in snap["pending_reasoning"]]
            self._total = int(snap["total"])
            self._counts = {str(k): int(v) for k, v in snap["counts"].items()}
            self._events = {str(k): int(v) for k, v in snap["events"].items()}
            self._fields = {str(k): int(v) for k, v in snap["fields"].items()}
            self._sent_agents = {str(x) for x in snap["sent_agents"]}
            folder = snap.get("folder")
            if folder is not None:
                self._folder = RequestFolder(self.harness, self.session_id)
                self._folder.restore(folder)
            self._held = {str(k): msgspec.convert(v, Span) for k, v in snap.get("held", {}).items()}
            self._carry = {
                str(k): msgspec.convert(v, OtelUsage) for k, v in snap.get("carry", {}).items()
            }
            root_usage = snap.get("root_usage")
            if root_usage is not None:
                self._root_usage = msgspec.convert(root_usage, OtelUsage)
        except (KeyError, TypeError, IndexError, msgspec.ValidationError) as exc:
            raise ValueError(f"a damaged span projector snapshot ({exc})") from None
        return self

    def report(self) -> LossReport:
        """The loss report so far."""
        c = self._counts
        return LossReport(
            total_events=self._total,
            spans=c["chat"] + c["tool"] + c["agent"],
            chat_spans=c["chat"],
            tool_spans=c["tool"],
            agent_spans=c["agent"],
            dropped_events=dict(self._events) or None,
            dropped_fields=dict(self._fields) or None,
        )


def project(
    session: Session | Iterable[Event], *, harness: str = "", content: bool = False
) -> tuple[list[Span], LossReport]:
    """Project a session (or its events) onto GenAI spans; returns the spans and the loss report.

    *harness* is read from the session's meta when a :class:`Session` is given.
    """
    if isinstance(session, Session):
        harness = harness or session.meta.harness
        projector = SpanProjector(harness, session_id=session.meta.session_id, content=content)
        events: Iterable[Event] = session.events
    else:
        projector = SpanProjector(harness, content=content)
        events = session
    spans: list[Span] = []
    for ev in events:
        spans.extend(projector.project(ev))
    spans.extend(projector.finish())
    return spans, projector.report()


# -- OTLP/JSON -------------------------------------------------------------------


def _any_value(value: AttrValue) -> dict[str, object]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        # OTLP/JSON writes 64-bit integers as decimal strings.
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [{"stringValue": v} for v in value]}}
    return {"stringValue": value}


def _otlp_span(span: Span) -> dict[str, object]:
    out: dict[str, object] = {
        "traceId": span.trace_id,
        "spanId": span.span_id,
    }
    if span.parent_span_id:
        out["parentSpanId"] = span.parent_span_id
    out["name"] = span.name
    out["kind"] = span.kind
    out["startTimeUnixNano"] = str(span.start_time_unix_nano)
    out["endTimeUnixNano"] = str(span.end_time_unix_nano)
    out["attributes"] = [{"key": k, "value": _any_value(v)} for k, v in span.attributes.items()]
    if span.status_code:
        status: dict[str, object] = {"code": span.status_code}
        if span.status_message:
            status["message"] = span.status_message
        out["status"] = status
    return out


_json: Final = msgspec.json.Encoder()


def encode_otlp_json(spans: Sequence[Span], *, harness: str) -> bytes:
    """*spans* as one OTLP/JSON ``ExportTraceServiceRequest`` (one line, no newline).

    The resource names the harness as ``service.name``; the scope is agentminutes.
    """
    request = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [
                        {"key": "service.name", "value": {"stringValue": harness or "unknown"}},
                    ]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": _SCOPE_NAME, "version": __version__},
                        "spans": [_otlp_span(s) for s in spans],
                    }
                ],
            }
        ]
    }
    return _json.encode(request)


#: Spans per OTLP/JSON line: a line is one export request, kept to a size collectors take.
SPANS_PER_LINE: Final = 512


class OtlpJsonWriter:
    """``--format otlp-json``: one ``ExportTraceServiceRequest`` a line, as the collector's
    ``otlpjsonfile`` receiver reads them; a line once it holds :data:`SPANS_PER_LINE`
    finished spans, the rest at the end."""

    def __init__(self, content: bool) -> None:
        self._projector = SpanProjector("", content=content)
        self._pending: list[Span] = []

    def _line(self) -> bytes:
        line = encode_otlp_json(self._pending, harness=self._projector.harness) + b"\n"
        self._pending.clear()
        return line

    def add(self, events: Sequence[Event]) -> bytes:
        """The request lines *events* filled (often none)."""
        out = b""
        pending, project = self._pending, self._projector.project
        for ev in events:
            pending.extend(project(ev))
            if len(pending) >= SPANS_PER_LINE:
                out += self._line()
        return out

    def finish(self, skipped: Mapping[str, int]) -> bytes:
        """The last line: the spans still pending and those the session's end closes."""
        self._pending.extend(self._projector.finish())
        return self._line()

    def loss(self) -> LossReport:
        """What the spans could not carry."""
        return self._projector.report()


def writer(options: Options) -> OtlpJsonWriter:
    """A writer of one session's spans; ``options.content`` puts the texts into them."""
    return OtlpJsonWriter(options.content)
