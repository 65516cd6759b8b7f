"""Token usage in OpenTelemetry GenAI terms, and the API requests a session's events record.

The output contract keeps each harness's usage as the harness reports it
(:class:`~agentminutes.schema.TokenUsage`), and harnesses disagree on what
``input_tokens`` means: Anthropic-shaped usage (Claude Code, pi) counts fresh
input only, with cache reads and writes apart; OpenAI-shaped usage (Codex)
counts every prompt token, the cached ones included. This module states the
rule of each harness once (:data:`USAGE_RULES`) and maps raw usage onto the
OpenTelemetry GenAI semantic conventions (``gen_ai.usage.*``), where

* ``input_tokens`` is every input token: fresh, cache reads and cache writes;
* ``cache_read.input_tokens`` and ``cache_creation.input_tokens`` are parts of it;
* ``output_tokens`` is every output token, and ``reasoning.output_tokens`` a part
  of it (never to be added to it);
* ``cache_creation.5m.input_tokens`` / ``cache_creation.1h.input_tokens`` (not in
  the conventions) keep Anthropic's split of cache writes by lifetime, where recorded.

:func:`otel_usage` is the pure function over one usage (what an exporter adds as
columns); :class:`RequestFolder` turns an event stream into one :class:`Request`
per API request, with the per-harness counting rules (Codex's cumulative
``token_count`` counters become per-request deltas, re-emitted counters count once).
Nothing here changes ``convert`` or ``stats`` output.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import ClassVar, Final

import msgspec

from agentminutes.schema.events import Event, EventKind, Raw, TokenUsage
from agentminutes.schema.usage_rule import RuleView, UsageRule

__all__ = (
    "USAGE_RULES",
    "OtelUsage",
    "Request",
    "RequestFolder",
    "UsageRule",
    "otel_usage",
    "reported_cost",
    "requests",
)


#: The rule of every harness whose adapter records usage (each declared in its harness
#: folder's description, ``usage=``). A harness not listed has no normalized view
#: (``otel_usage`` returns ``None``): its fields' meaning is not guessed.
USAGE_RULES: Final[Mapping[str, UsageRule]] = RuleView("usage")


class OtelUsage(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One request's (or a sum's) usage with OpenTelemetry GenAI semantics.

    JSON keys are the ``gen_ai.usage.*`` attribute names without the prefix.
    ``reasoning.output_tokens`` and the cache-write split are ``None`` (left
    out) where the harness did not record them: not recorded is not zero.
    """

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int = msgspec.field(name="cache_read.input_tokens")
    cache_creation_input_tokens: int = msgspec.field(name="cache_creation.input_tokens")
    reasoning_output_tokens: int | None = msgspec.field(
        default=None, name="reasoning.output_tokens"
    )
    cache_creation_5m_input_tokens: int | None = msgspec.field(
        default=None, name="cache_creation.5m.input_tokens"
    )
    cache_creation_1h_input_tokens: int | None = msgspec.field(
        default=None, name="cache_creation.1h.input_tokens"
    )

    @classmethod
    def zero(cls) -> OtelUsage:
        """An empty sum."""
        return cls(
            input_tokens=0,
            output_tokens=0,
            cache_read_input_tokens=0,
            cache_creation_input_tokens=0,
        )

    def add(self, other: OtelUsage) -> None:
        """Accumulate *other* into this sum; an optional part stays ``None`` only if both are."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens
        self.reasoning_output_tokens = _add_opt(
            self.reasoning_output_tokens, other.reasoning_output_tokens
        )
        self.cache_creation_5m_input_tokens = _add_opt(
            self.cache_creation_5m_input_tokens, other.cache_creation_5m_input_tokens
        )
        self.cache_creation_1h_input_tokens = _add_opt(
            self.cache_creation_1h_input_tokens, other.cache_creation_1h_input_tokens
        )


def _add_opt(a: int | None, b: int | None) -> int | None:
    if b is None:
        return a
    return b if a is None else a + b


_decode_object = msgspec.json.Decoder(dict[str, Raw] | None).decode
_decode_number = msgspec.json.Decoder(int | float | None).decode
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError)


def _extra_int(extra: dict[str, Raw] | None, key: str) -> int | None:
    if not key or not extra or key not in extra:
        return None
    try:
        value = _decode_number(extra[key])
    except _DECODE_ERRORS:
        return None
    return None if value is None else int(value)


def _cache_split(extra: dict[str, Raw] | None, key: str) -> tuple[int | None, int | None]:
    if not key or not extra or key not in extra:
        return None, None
    try:
        split = _decode_object(extra[key])
    except _DECODE_ERRORS:
        return None, None
    if not split:
        return None, None
    return (
        _extra_int(split, "ephemeral_5m_input_tokens"),
        _extra_int(split, "ephemeral_1h_input_tokens"),
    )


def otel_usage(usage: TokenUsage, harness: str) -> OtelUsage | None:
    """*usage*, as *harness* records it, in OpenTelemetry GenAI terms; ``None`` for a harness without a rule.

    A pure function of its arguments: one assistant message's usage (or a sum of
    one harness's usages: the rule is linear) in, the normalized counts out.
    Codex messages carry no reasoning count; :class:`RequestFolder` reads it
    from the ``token_count`` records.
    """
    return _otel(usage, USAGE_RULES.get(harness))


def _otel(usage: TokenUsage, rule: UsageRule | None) -> OtelUsage | None:
    """:func:`otel_usage` by the harness's rule (a folder looks it up once)."""
    if rule is None:
        return None
    cache_read = usage.cache_read_input_tokens
    cache_write = usage.cache_creation_input_tokens
    if rule.input_includes_cache:
        total_input = usage.input_tokens
    else:
        total_input = usage.input_tokens + cache_read + cache_write
    five, hour = _cache_split(usage.extra, rule.cache_split_key)
    return OtelUsage(
        input_tokens=total_input,
        output_tokens=usage.output_tokens,
        cache_read_input_tokens=cache_read,
        cache_creation_input_tokens=cache_write,
        reasoning_output_tokens=_extra_int(usage.extra, rule.reasoning_key),
        cache_creation_5m_input_tokens=five,
        cache_creation_1h_input_tokens=hour,
    )


def reported_cost(usage: TokenUsage, harness: str) -> float | None:
    """The cost (USD) the harness itself recorded for this usage, or ``None`` when it recorded none."""
    return _reported(usage, USAGE_RULES.get(harness))


def _reported(usage: TokenUsage, rule: UsageRule | None) -> float | None:
    """:func:`reported_cost` by the harness's rule (a folder looks it up once)."""
    cost = getattr(usage, "cost", None)  # the schema's own field, where an adapter fills it
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        return float(cost)
    if rule is None or not rule.cost_key or not usage.extra or rule.cost_key not in usage.extra:
        return None
    raw = usage.extra[rule.cost_key]
    try:
        value = _decode_number(raw)
    except _DECODE_ERRORS:
        try:
            parts = _decode_object(raw)
        except _DECODE_ERRORS:
            return None
        total = _extra_int_float(parts, "total")
        return total
    return None if value is None else float(value)


def _extra_int_float(obj: dict[str, Raw] | None, key: str) -> float | None:
    if not obj or key not in obj:
        return None
    try:
        value = _decode_number(obj[key])
    except _DECODE_ERRORS:
        return None
    return None if value is None else float(value)


class Request(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One API request's usage: when, which model, the raw counts and their normalized view.

    ``usage`` holds the counts as the harness recorded them (its own field
    semantics, :data:`USAGE_RULES`); ``otel`` the same request normalized.
    ``key`` tells copies of one request apart from new ones across transcripts
    (``""``: the request cannot be recognized, and counts wherever it appears).
    ``reported_cost`` is the harness's own cost figure, ``None`` when it recorded none.
    ``origin`` is the record the request was read from: ``assistant_message`` (the
    message event itself), or the system subtype that recorded it (Codex
    ``token_count``, Copilot ``assistant.usage`` and ``session.shutdown``).
    """

    timestamp: str = ""
    model: str = ""
    usage: TokenUsage
    otel: OtelUsage | None = None
    key: str = ""
    agent_id: str = ""
    reported_cost: float | None = None
    origin: str = "assistant_message"


class _HermesUsage(msgspec.Struct):
    session_id: str = ""
    model: str = ""
    billing_provider: str = ""
    task: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None


_decode_hermes_usage = msgspec.json.Decoder(_HermesUsage).decode


class _Counters(msgspec.Struct):
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int = 0


class _TokenInfo(msgspec.Struct):
    total_token_usage: _Counters | None = None
    last_token_usage: _Counters | None = None


class _TokenCount(msgspec.Struct):
    info: _TokenInfo | None = None


class _TurnContext(msgspec.Struct):
    model: str | None = None


class _SessionPayload(msgspec.Struct):
    forked_from_id: str | None = None


class _CopilotCounts(msgspec.Struct, rename="camel"):
    """Copilot CLI's usage counters (``assistant.usage`` data, ``modelMetrics.*.usage``)."""

    input_tokens: int | float = 0
    output_tokens: int | float = 0
    cache_read_tokens: int | float = 0
    cache_write_tokens: int | float = 0
    reasoning_tokens: int | float | None = None
    model: str = ""


class _CopilotMetric(msgspec.Struct):
    usage: _CopilotCounts | None = None


class _CopilotTokenCount(msgspec.Struct, rename="camel"):
    token_count: int | float = 0


class _CopilotTokenDetails(msgspec.Struct):
    input: _CopilotTokenCount | None = None
    output: _CopilotTokenCount | None = None
    cache_read: _CopilotTokenCount | None = None
    cache_write: _CopilotTokenCount | None = None


class _CopilotShutdown(msgspec.Struct, rename="camel"):
    model_metrics: dict[str, _CopilotMetric] | None = None
    token_details: _CopilotTokenDetails | None = None
    current_model: str | None = None


class _CopilotModelChange(msgspec.Struct, rename="camel"):
    new_model: str | None = None


#: One Copilot model's counters: gross input, output, cache read, cache write, reasoning.
_CopilotSnapshot = tuple[int, int, int, int, int | None]


_decode_token_count = msgspec.json.Decoder(_TokenCount).decode
_decode_turn_context = msgspec.json.Decoder(_TurnContext).decode
_decode_session_payload = msgspec.json.Decoder(_SessionPayload).decode
_decode_copilot_usage = msgspec.json.Decoder(_CopilotCounts).decode


class _CopilotUsageRecord(msgspec.Struct):
    """``session.usage_record`` data (1.0.10x): the same counters, under ``usage``."""

    usage: _CopilotCounts | None = None


_decode_copilot_usage_record = msgspec.json.Decoder(_CopilotUsageRecord).decode
_decode_copilot_shutdown = msgspec.json.Decoder(_CopilotShutdown).decode
_decode_copilot_model_change = msgspec.json.Decoder(_CopilotModelChange).decode


def _copilot_gross(c: _CopilotCounts) -> _CopilotSnapshot:
    inp, read, write = int(c.input_tokens), int(c.cache_read_tokens), int(c.cache_write_tokens)
    # inputTokens counts the cache parts; a figure below them can only be fresh input.
    if inp < read + write:
        inp += read + write
    reasoning = None if c.reasoning_tokens is None else int(c.reasoning_tokens)
    return inp, int(c.output_tokens), read, write, reasoning


def _count(c: _CopilotTokenCount | None) -> int:
    return int(c.token_count) if c is not None else 0


def _fields(c: _Counters) -> tuple[int, int, int, int, int, int]:
    return (
        c.input_tokens,
        c.cached_input_tokens,
        c.cache_write_input_tokens,
        c.output_tokens,
        c.reasoning_output_tokens,
        c.total_tokens,
    )


class RequestFolder:
    """Folds one transcript's events, in stream order, into its API requests.

    Feed events with :meth:`add` (each call returns the requests it completed)
    and call :meth:`finish` at the end. The counting rules:

    * One request per ``assistant_message`` that carries usage (the adapters
      fold a streamed message into one event holding its final usage).
    * Codex rollouts record usage in ``token_count`` records, a cumulative
      ``total_token_usage`` and the request's ``last_token_usage``; the
      reference (and ``convert``) adds up every record's ``last_token_usage``,
      so a record re-emitted with an unchanged total counts twice there. Here
      each record whose total advanced is one request, counted as the increase
      of the total (the first record of a file by its ``last_token_usage``: a
      forked rollout's totals start from its parent's); a record whose total
      did not advance is a replay and counts nothing; a total that went back
      counts its ``last_token_usage``. The model is the latest ``turn_context``'s.
      The request's key is ``codex:<session>:<total>``, where a forked rollout
      (``forked_from_id`` in its ``session_meta``) uses its parent's id: the
      copies of the parent's records it begins with are recognized as the
      parent's requests, and its own requests have totals the parent never had.
    * Codex streams without ``token_count`` records (``codex exec --json``,
      legacy rollouts) count their messages' usage.
    * Copilot CLI writes usage only beside its messages: an ``assistant.usage``
      record per request (some releases; 1.0.10x a ``session.usage_record`` with the
      same counters under ``usage``), and at every exit a ``session.shutdown``
      whose ``modelMetrics`` sum each model's usage (``inputTokens`` counts the
      cache reads and writes; ``reasoningTokens`` is part of ``outputTokens``)
      or, in releases that record only a session-wide ``tokenDetails``, the
      session's (its ``input`` is fresh input, the cache apart). An
      ``assistant.usage`` record is one request; a shutdown is one request per
      model, at the shutdown's time, unless the process it closes wrote
      ``assistant.usage`` records (counted already). A resumed session writes
      one shutdown per process, and releases differ on whether the next one
      starts from zero or carries the totals on: a model whose counters all
      grew since the previous shutdown counts the increase, any other counts
      whole. Keys are ``copilot:<session>:<record id>`` and
      ``copilot:<session>:shutdown:<model>:<counters>``, so a copy of the file
      counts once.
    """

    def __init__(self, harness: str, session_id: str = "", fork_of: str = "") -> None:
        self.harness = harness
        self.rule = USAGE_RULES.get(harness)
        self.session_id = session_id
        #: Codex: the session a forked rollout was forked from (keys of copied records).
        self.fork_of = fork_of
        self._model = ""
        self._total: tuple[int, int, int, int, int, int] | None = None
        self._rows_mode = False
        self._waiting: list[Request] = []  # Codex rows seen before any model
        #: Copilot: each model's counters at the last shutdown, and whether the process
        #: since then wrote per-request ``assistant.usage`` records.
        self._snapshot: dict[str, _CopilotSnapshot] = {}
        self._per_request = False

    #: The event kinds :meth:`add` reads (what a usage read asks adapters for), and
    #: ``unknown``, which a summary counts.
    KINDS: ClassVar[frozenset[str]] = frozenset(
        {EventKind.SESSION_META, EventKind.ASSISTANT_MESSAGE, EventKind.SYSTEM, EventKind.UNKNOWN}
    )
    #: The harnesses whose requests come from ``system`` events (their records of usage).
    SYSTEM_USAGE: ClassVar[frozenset[str]] = frozenset({"codex", "copilot", "hermes"})

    @classmethod
    def kinds_for(cls, harness: str) -> frozenset[str]:
        """The event kinds :meth:`add` reads of *harness*'s events (``system`` only where
        its requests come from them)."""
        if harness in cls.SYSTEM_USAGE:
            return cls.KINDS
        return cls.KINDS - {EventKind.SYSTEM}

    def add(self, ev: Event) -> list[Request]:
        """Account for one event; return the requests it completes."""
        kind = ev.kind
        if kind == EventKind.ASSISTANT_MESSAGE:
            msg = ev.assistant_message
            assert msg is not None
            if msg.model:
                self._model = msg.model
            out = self._release() if self._waiting and msg.model else []
            if msg.usage is None or self._rows_mode:
                return out
            out.append(self._message_request(ev, msg.model, msg.usage))
            return out
        if kind == EventKind.SESSION_META:
            meta = ev.session_meta
            assert meta is not None
            if not self.session_id:
                self.session_id = meta.session_id
            return []
        if kind == EventKind.SYSTEM and self.harness == "copilot":
            system = ev.system
            assert system is not None
            if not system.details:
                return []
            if system.subtype == "assistant.usage":
                return self._copilot_request(ev, system.details)
            if system.subtype == "session.usage_record":
                return self._copilot_request(ev, system.details, nested=True)
            if system.subtype == "session.shutdown":
                return self._copilot_shutdown(ev, system.details)
            if system.subtype == "session.model_change":
                with contextlib.suppress(*_DECODE_ERRORS):
                    self._model = (
                        _decode_copilot_model_change(system.details).new_model or self._model
                    )
            return []
        if kind == EventKind.SYSTEM and self.harness == "hermes":
            system = ev.system
            assert system is not None
            if system.subtype == "model_usage" and system.details:
                return self._hermes_usage(ev, system.details)
            return []
        if kind == EventKind.SYSTEM and self.harness == "codex":
            system = ev.system
            assert system is not None
            if system.subtype == "token_count":
                return self._token_count(ev, system.details)
            if system.subtype == "turn_context" and system.details:
                try:
                    model = _decode_turn_context(system.details).model
                except _DECODE_ERRORS:
                    model = None
                if model:
                    self._model = model
                    return self._release()
            elif system.subtype.startswith("session_meta") and system.details and not self.fork_of:
                with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                    self.fork_of = _decode_session_payload(system.details).forked_from_id or ""
        return []

    def resume(self, model: str, last_key: str) -> None:
        """Continue a transcript whose earlier part was folded before (``usage --follow``).

        *model* is the model of its last request; *last_key* that request's key,
        which for Codex carries the cumulative total the next record is counted from.
        """
        if model:
            self._model = model
        if last_key.startswith("copilot:") and ":shutdown:" not in last_key:
            # The process still running wrote assistant.usage records: its shutdown is no
            # new usage.
            self._per_request = True
            return
        if last_key.startswith("copilot:") and ":shutdown:" in last_key:
            head, counts = last_key.rsplit(":", 1)
            parts = counts.split(",")
            try:
                snap = tuple(int(x) if x else None for x in parts)
            except ValueError:
                return
            if len(snap) == 5 and None not in snap[:4]:
                self._snapshot[head.split(":shutdown:", 1)[1]] = snap  # type: ignore[assignment]
            return
        if last_key.startswith("codex:"):
            try:
                total = tuple(int(x) for x in last_key.rsplit(":", 1)[1].split(","))
            except ValueError:
                return
            if len(total) == 6:
                self._total = total
                self._rows_mode = True

    def snapshot(self) -> dict[str, object]:
        """The folder's counting state as a JSON value :meth:`restore` takes back.

        What a live projection saved with ``--state`` needs to carry on: the model,
        Copilot's shutdown counters and per-request flag, Codex's cumulative total.
        Codex rows still waiting for a model are not kept (they are released at
        the next ``turn_context`` of the transcript read again).
        """
        return {
            "session_id": self.session_id,
            "fork_of": self.fork_of,
            "model": self._model,
            "total": list(self._total) if self._total is not None else None,
            "rows_mode": self._rows_mode,
            "copilot": {k: list(v) for k, v in self._snapshot.items()},
            "per_request": self._per_request,
        }

    def restore(self, snap: Mapping[str, object]) -> None:
        """Carry on from *snap* (:meth:`snapshot`).

        Raises:
            ValueError: *snap* is not a folder snapshot.
        """
        try:
            self.session_id = str(snap["session_id"])
            self.fork_of = str(snap["fork_of"])
            self._model = str(snap["model"])
            total = snap["total"]
            self._total = (
                tuple(int(x) for x in total)  # type: ignore[assignment,attr-defined]
                if total is not None
                else None
            )
            self._rows_mode = bool(snap["rows_mode"])
            copilot = snap["copilot"]
            assert isinstance(copilot, Mapping)
            self._snapshot = {
                str(k): (
                    int(v[0]),
                    int(v[1]),
                    int(v[2]),
                    int(v[3]),
                    None if v[4] is None else int(v[4]),
                )
                for k, v in copilot.items()
            }
            self._per_request = bool(snap["per_request"])
        except (KeyError, TypeError, ValueError, IndexError, AssertionError) as exc:
            raise ValueError(f"a damaged request folder snapshot ({exc})") from None

    def finish(self) -> list[Request]:
        """The requests still held (Codex rows that never learned their model)."""
        return self._release()

    def _release(self) -> list[Request]:
        out, self._waiting = self._waiting, []
        for req in out:
            req.model = self._model
        return out

    def _message_request(self, ev: Event, model: str, usage: TokenUsage) -> Request:
        rule = self.rule
        key = ""
        if rule is not None and ev.message_id:
            if rule.key_rule == "message":
                key = f"{self.harness}:{ev.message_id}"
            elif rule.key_rule == "message+time":
                key = f"{self.harness}:{ev.message_id}@{ev.timestamp}"
        return Request(
            timestamp=ev.timestamp,
            model=model,
            usage=TokenUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_input_tokens=usage.cache_read_input_tokens,
                cache_creation_input_tokens=usage.cache_creation_input_tokens,
            ),
            otel=_otel(usage, rule),
            key=key,
            agent_id=ev.agent_id,
            reported_cost=_reported(usage, rule),
        )

    def _copilot_request(self, ev: Event, details: Raw, *, nested: bool = False) -> list[Request]:
        try:
            if nested:
                found = _decode_copilot_usage_record(details).usage
                if found is None:
                    return []
                counts = found
            else:
                counts = _decode_copilot_usage(details)
        except _DECODE_ERRORS:
            return []
        self._per_request = True
        if counts.model:
            self._model = counts.model
        snap = _copilot_gross(counts)
        if not any(snap[:4]):
            return []
        key = f"copilot:{self.session_id}:{ev.id}" if ev.id else ""
        return [self._copilot_row(ev, counts.model or self._model, snap, key)]

    def _copilot_shutdown(self, ev: Event, details: Raw) -> list[Request]:
        try:
            shutdown = _decode_copilot_shutdown(details)
        except _DECODE_ERRORS:
            return []
        metrics = shutdown.model_metrics or {}
        snapshot: dict[str, _CopilotSnapshot] = {
            model: _copilot_gross(m.usage) for model, m in metrics.items() if m.usage is not None
        }
        details_ = shutdown.token_details
        if not snapshot and details_ is not None:
            # Session-wide counts only: the one model the metrics name, else the current one.
            model = next(iter(metrics)) if len(metrics) == 1 else ""
            model = model or shutdown.current_model or self._model
            read, write = _count(details_.cache_read), _count(details_.cache_write)
            snapshot[model] = (
                _count(details_.input) + read + write,
                _count(details_.output),
                read,
                write,
                None,
            )
        prev, self._snapshot = self._snapshot, {**self._snapshot, **snapshot}
        if self._per_request:
            self._per_request = False  # this process's requests were counted one by one
            return []
        out: list[Request] = []
        for model, snap in snapshot.items():
            before = prev.get(model)
            counted = snap
            if before is not None and all(
                a >= b for a, b in zip(snap[:4], before[:4], strict=False)
            ):
                counted = (
                    snap[0] - before[0],
                    snap[1] - before[1],
                    snap[2] - before[2],
                    snap[3] - before[3],
                    None if snap[4] is None else snap[4] - (before[4] or 0),
                )
            if not any(counted[:4]):
                continue
            lineage = self.session_id
            text = ",".join("" if x is None else str(x) for x in snap)
            key = f"copilot:{lineage}:shutdown:{model}:{text}"
            out.append(self._copilot_row(ev, model, counted, key))
        return out

    def _hermes_usage(self, ev: Event, details: Raw) -> list[Request]:
        """A Hermes ``session_model_usage`` row: one model's requests in a session, summed.

        Hermes records no usage per message; the row is the sum of its
        ``api_call_count`` requests (input fresh, the cache apart, reasoning a part
        of output). Its key names the session and the row's model, provider and
        task, so a copy of the database counts once.
        """
        try:
            row = _decode_hermes_usage(details)
        except _DECODE_ERRORS:
            return []
        inp, output = row.input_tokens or 0, row.output_tokens or 0
        read, write = row.cache_read_tokens or 0, row.cache_write_tokens or 0
        key = f"hermes:{row.session_id}:{row.model}:{row.billing_provider}:{row.task}"
        counts = (inp, output, read, write, row.reasoning_tokens)
        return [
            _counted(
                ev, "model_usage", row.model or "", key, counts, total_input=inp + read + write
            )
        ]

    def _copilot_row(self, ev: Event, model: str, snap: _CopilotSnapshot, key: str) -> Request:
        assert ev.system is not None
        # Copilot's input counts the cache reads and writes already.
        return _counted(ev, ev.system.subtype, model, key, snap, total_input=snap[0])

    def _token_count(self, ev: Event, details: Raw) -> list[Request]:
        if not details:
            return []
        try:
            info = _decode_token_count(details).info
        except _DECODE_ERRORS:
            return []
        if info is None or info.total_token_usage is None:
            return []
        self._rows_mode = True
        total = _fields(info.total_token_usage)
        last = _fields(info.last_token_usage) if info.last_token_usage is not None else None
        prev, self._total = self._total, total
        if prev is None or any(t < p for t, p in zip(total, prev, strict=True)):
            counted = last if last is not None else (total if prev is None else None)
        elif total == prev:
            return []  # re-emitted: the request was counted with its first record
        else:
            counted = tuple(t - p for t, p in zip(total, prev, strict=True))  # type: ignore[assignment]
        if counted is None or not any(counted):
            return []
        fresh, cached, written, output, reasoning, _ = counted
        lineage = self.fork_of or self.session_id
        key = f"codex:{lineage}:{','.join(map(str, total))}"
        # Codex's input counts the cached tokens already.
        counts = (fresh, output, cached, written, reasoning)
        req = _counted(ev, "token_count", self._model, key, counts, total_input=fresh)
        if not self._model:
            self._waiting.append(req)
            return []
        return [req]


def _counted(
    ev: Event,
    origin: str,
    model: str,
    key: str,
    counts: tuple[int, int, int, int, int | None],
    *,
    total_input: int,
) -> Request:
    """A request read from a usage record rather than a message: *counts* are its input,
    output, cache reads, cache writes and reasoning as recorded; *total_input* its input
    with the cache (OpenTelemetry's ``input_tokens``), by the harness's rule."""
    inp, output, read, write, reasoning = counts
    return Request(
        origin=origin,
        timestamp=ev.timestamp,
        model=model,
        usage=TokenUsage(
            input_tokens=inp,
            output_tokens=output,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=write,
        ),
        otel=OtelUsage(
            input_tokens=total_input,
            output_tokens=output,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=write,
            reasoning_output_tokens=reasoning,
        ),
        key=key,
        agent_id=ev.agent_id,
    )


def requests(events: Iterable[Event], harness: str = "") -> list[Request]:
    """Every API request of one transcript's events (see :class:`RequestFolder`).

    *harness* defaults to the one the stream's ``session_meta`` names.
    """
    folder: RequestFolder | None = RequestFolder(harness) if harness else None
    out: list[Request] = []
    for ev in events:
        if folder is None:
            if ev.session_meta is None:
                continue
            folder = RequestFolder(ev.session_meta.harness)
        out.extend(folder.add(ev))
    if folder is not None:
        out.extend(folder.finish())
    return out
