"""One transcript in, the rows of every table out: the pure per-file function of the export.

Parsing is stateful per transcript (split messages are folded, calls paired with
results), so the unit of work is the file. :class:`TranscriptRows` parses one
transcript — a line transcript is one session, a data export or ``turns.db`` one
per conversation — and yields ``(table, RecordBatch)`` pairs as it goes:

* ``events`` in batches of at most :data:`BATCH_ROWS` rows (or :data:`BATCH_BYTES`
  of payload), written while the transcript is still being read, so a 100 MB
  transcript never sits in memory whole;
* ``sessions``, ``tool_calls`` and ``requests`` at the end of each session, from
  small per-call and per-message records kept while the events stream past.

:func:`to_arrow` collects one table of one transcript into a ``pyarrow.Table``:
picklable arguments, no globals, so Dask, Ray and Spark each map it over paths.
A transcript that cannot be exported yields no rows but one ``failures`` row (the
error line): the same rows the dataset writer keeps.
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec

from agentminutes import timestamps
from agentminutes.errors import AgentminutesError, ParseError
from agentminutes.export import schemas
from agentminutes.export.transcripts import (
    NS_PER_DAY,
    SessionEnd,
    TranscriptEvents,
    partition_day,
)
from agentminutes.harness import ParseOptions
from agentminutes.pipeline.batch import Stage
from agentminutes.schema import ContentBlock, Event, EventKind, Meta, TokenUsage
from agentminutes.schema.stats import StatsBuilder, content_bytes
from agentminutes.schema.usage import OtelUsage, Request, RequestFolder

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = (
    "AGENT_TOOLS",
    "BATCH_BYTES",
    "BATCH_ROWS",
    "TranscriptRows",
    "failure_batch",
    "iter_batches",
    "to_arrow",
)

pa = schemas.require_pyarrow()
# pyarrow imports pandas (when installed) on its first conversion of a Python list; do it
# at import, so worker processes forked from a preloaded server inherit it done.
pa.array([], pa.string())

#: Most rows of one ``events`` batch, and most payload bytes (a batch is a Parquet row group).
BATCH_ROWS: Final = 16_384
BATCH_BYTES: Final = 4 << 20

#: Harnesses whose message ids are issued by the model provider, unique across sessions.
GLOBAL_MESSAGE_IDS: Final = frozenset({"claude-code"})

#: Tools that start a subagent, by name: their result names the spawned agent's id.
AGENT_TOOLS: Final = frozenset({"Task", "Agent", "spawn_agent", "invoke_subagent", "task"})

_EXIT_TEXT: Final = re.compile(
    r"^(?:Exit code:? |Process exited with code |exit status )(-?\d+)\b", re.MULTILINE
)
_ANTIGRAVITY_CHILD: Final = re.compile(r'"conversationId":\s*"([^"]+)"')


class _ExitMeta(msgspec.Struct):
    exit_code: int | None = None


class _Sidecar(msgspec.Struct):
    """The few keys of a result's sidecar (or JSON result text) the export reads."""

    exit_code: int | None = None
    exit_code_camel: int | None = msgspec.field(default=None, name="exitCode")
    metadata: _ExitMeta | None = None
    agent_id: str | None = None
    agent_id_camel: str | None = msgspec.field(default=None, name="agentId")


_decode_sidecar = msgspec.json.Decoder(_Sidecar).decode
_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)


def _sidecar(data: bytes | str) -> _Sidecar | None:
    try:
        return _decode_sidecar(data)
    except _DECODE_ERRORS:
        return None


def _first_text(blocks: list[ContentBlock] | None) -> str:
    for b in blocks or ():
        if b.kind == "text" and b.text:
            return b.text
    return ""


class _Call:
    """What the ``tool_calls`` row of one call needs, kept while the session streams."""

    __slots__ = (
        "agent_id",
        "call_ns",
        "exit_code",
        "exit_source",
        "id",
        "input_bytes",
        "is_error",
        "kind",
        "last_ns",
        "line",
        "message_id",
        "name",
        "promoted_from",
        "result_bytes",
        "results",
        "seq",
        "subagent_id",
    )

    def __init__(self, seq: int, ev: Event, ns: int | None) -> None:
        call = ev.tool_call
        assert call is not None
        self.seq = seq
        self.id = call.tool_call_id
        self.name = call.name
        self.kind = call.kind
        self.promoted_from = call.promoted_from or None
        self.input_bytes = len(call.input)
        self.agent_id = ev.agent_id or None
        self.message_id = ev.message_id or None
        self.line = ev.provenance.line if ev.provenance is not None else None
        self.call_ns = ns
        self.last_ns: int | None = None
        self.results = 0
        self.result_bytes = 0
        self.is_error: bool | None = None
        self.exit_code: int | None = None
        self.exit_source: str | None = None
        self.subagent_id: str | None = None


def _exit_code(text: str, enrichment: bytes) -> tuple[int | None, str | None]:
    """A command's exit code: recorded by the harness (native), or read from its output text."""
    found: _Sidecar | None = None
    if enrichment[:1] == b"{":
        found = _sidecar(enrichment)
    if found is None and text.startswith("{"):
        found = _sidecar(text)
    if found is not None:
        code = found.exit_code if found.exit_code is not None else found.exit_code_camel
        if code is None and found.metadata is not None:
            code = found.metadata.exit_code
        if code is not None:
            return code, "native"
    m = _EXIT_TEXT.search(text, 0, 512)
    if m is not None:
        return int(m[1]), "scraped"
    return None, None


def _spawned_id(name: str, text: str, enrichment: bytes) -> str | None:
    """The id of the subagent an agent tool's result names."""
    for data in (enrichment, text):
        if data[:1] in (b"{", "{"):
            found = _sidecar(data)
            if found is not None and (found.agent_id_camel or found.agent_id):
                return found.agent_id_camel or found.agent_id
    if name == "invoke_subagent":
        m = _ANTIGRAVITY_CHILD.search(text)
        if m is not None:
            return m[1]
    return None


def _us(ns: int | None) -> int | None:
    return None if ns is None else ns // 1000


def _json_array(storage: pa.Array) -> pa.Array:
    return pa.ExtensionArray.from_storage(pa.json_(pa.string()), storage)


#: The ``events`` columns a row tuple of :meth:`_Session.add` holds, in order (one tuple
#: per event, turned into columns once per batch: one append per event, not one per column).
_ROW_COLUMNS: Final = (
    "seq",
    "kind",
    "timestamp",
    "event_id",
    "parent_id",
    "message_id",
    "agent_id",
    "model",
    "tool_name",
    "tool_kind",
    "tool_call_id",
    "is_error",
    "subtype",
    "line",
    "end_line",
)
_first_row_column = schemas.EVENTS.names.index(_ROW_COLUMNS[0])
# The tuple's order is the schema's: a column added to the schema must be added here.
assert tuple(schemas.EVENTS.names[_first_row_column:-1]) == _ROW_COLUMNS
_ROW_TYPES: Final = tuple(schemas.EVENTS.field(name).type for name in _ROW_COLUMNS)


@dataclass
class _EventColumns:
    """The ``events`` rows not yet handed out: a tuple per row, the payloads as one buffer."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)
    payload: bytearray = field(default_factory=bytearray)
    offsets: array[int] = field(default_factory=lambda: array("i", [0]))


class _Session:
    """The rows of one session as its events stream past."""

    def __init__(self, owner: TranscriptRows, meta: Meta | None) -> None:
        self.owner = owner
        self.meta = meta or Meta(harness=owner.harness or "")
        self.stats = StatsBuilder()
        self.seq = 0
        self.first_ns: int | None = None
        self.date: int | None = None
        self.cols = _EventColumns()
        self.calls: list[_Call] = []
        self.call_by_id: dict[str, _Call] = {}
        self.models_by_message: dict[str, str] = {}
        self.requests: list[tuple[Any, ...]] = []
        #: The usage fold (``agentminutes usage``'s rules), made once the harness is known.
        self.folder: RequestFolder | None = None
        self.agents: list[str] = []
        self.encoder = msgspec.json.Encoder()

    # -- per event ---------------------------------------------------------------------------

    def add(self, events: Iterable[Event]) -> Iterator[tuple[str, pa.RecordBatch]]:
        c = self.cols
        encode_into = self.encoder.encode_into
        payload = c.payload
        offsets = c.offsets
        row = c.rows.append
        to_ns = timestamps.to_ns
        stats_add = self.stats.add
        for ev in events:
            stats_add(ev)
            seq = self.seq
            self.seq += 1
            kind = ev.kind
            ns = to_ns(ev.timestamp) if ev.timestamp else None
            if ns is not None and self.first_ns is None:
                self.first_ns = ns
            if kind == EventKind.SESSION_META and ev.session_meta is not None and seq == 0:
                self.meta = self.owner.identity(ev.session_meta)
            folded = self._fold(ev)
            agent = ev.agent_id
            if agent and agent not in self.agents:
                self.agents.append(agent)
            model = tool_name = tool_kind = call_id = subtype = None
            is_error = None
            if kind == EventKind.TOOL_CALL:
                tc = ev.tool_call
                assert tc is not None
                call = _Call(seq, ev, ns)
                self.calls.append(call)
                self.call_by_id[call.id] = call
                tool_name, tool_kind, call_id = tc.name, tc.kind, tc.tool_call_id
            elif kind == EventKind.TOOL_RESULT:
                tr = ev.tool_result
                assert tr is not None
                call_id = tr.tool_call_id
                is_error = tr.is_error
                joined = self.call_by_id.get(call_id)
                if joined is not None:
                    tool_name, tool_kind = joined.name, joined.kind
                    self._result(joined, ev, ns)
                else:
                    tool_name = tr.tool_name or None
            elif kind == EventKind.ASSISTANT_MESSAGE:
                am = ev.assistant_message
                assert am is not None
                model = am.model or None
                if model and ev.message_id:
                    self.models_by_message[ev.message_id] = model
                own = next((r for r in folded if r.origin == EventKind.ASSISTANT_MESSAGE), None)
                self._request(seq, ev, ns, own)
            elif kind == EventKind.SYSTEM:
                assert ev.system is not None
                subtype = ev.system.subtype
            elif kind == EventKind.UNKNOWN:
                assert ev.unknown is not None
                subtype = ev.unknown.record_type or None
            for req in folded:
                if req.origin != EventKind.ASSISTANT_MESSAGE:
                    self._folded_request(seq, ev, req)
            prov = ev.provenance
            line = end_line = None
            if prov is not None:
                line = prov.line
                end_line = prov.end_line or line
            row(
                (
                    seq,
                    kind,
                    None if ns is None else ns // 1000,
                    ev.id or None,
                    ev.parent_id or None,
                    ev.message_id or None,
                    agent or None,
                    model,
                    tool_name,
                    tool_kind,
                    call_id,
                    is_error,
                    subtype,
                    line,
                    end_line,
                )
            )
            encode_into(getattr(ev, kind, None), payload, -1)
            offsets.append(len(payload))
            if len(offsets) > BATCH_ROWS or len(payload) >= BATCH_BYTES:
                yield "events", self._events_batch()
                c = self.cols  # a fresh set of columns: the batch keeps the old buffers
                payload = c.payload
                offsets = c.offsets
                row = c.rows.append

    def _result(self, call: _Call, ev: Event, ns: int | None) -> None:
        tr = ev.tool_result
        assert tr is not None
        call.results += 1
        call.result_bytes += content_bytes(tr.content)
        call.is_error = bool(call.is_error) or tr.is_error
        if ns is not None and (call.last_ns is None or ns > call.last_ns):
            call.last_ns = ns
        wants_exit = call.kind == "execute" and call.exit_code is None
        wants_agent = call.name in AGENT_TOOLS and call.subagent_id is None
        if wants_exit or wants_agent:
            text = _first_text(tr.content)
            enrichment = bytes(tr.enrichment)
            if wants_exit:
                call.exit_code, call.exit_source = _exit_code(text, enrichment)
            if wants_agent:
                call.subagent_id = _spawned_id(call.name, text, enrichment)

    def _fold(self, ev: Event) -> list[Request]:
        folder = self.folder
        if folder is None:
            harness = self.meta.harness or self.owner.harness
            if not harness:
                return []
            folder = self.folder = RequestFolder(harness, self.meta.session_id)
        return folder.add(ev)

    def _request(self, seq: int, ev: Event, ns: int | None, own: Request | None) -> None:
        am = ev.assistant_message
        assert am is not None
        usage: TokenUsage | None = am.usage
        extra = counts = None
        if usage is not None:
            # The counts, not the struct: its ``extra`` values are raw slices that keep
            # the whole source line alive while the session streams.
            counts = (
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_input_tokens,
                usage.cache_creation_input_tokens,
            )
            if usage.extra:
                extra = self.encoder.encode(usage.extra).decode()
        self.requests.append(
            (
                ev.agent_id or None,
                seq,
                ev.message_id or None,
                ns,
                am.model or None,
                am.stop_reason or None,
                counts,
                extra,
                ev.provenance.line if ev.provenance is not None else None,
                EventKind.ASSISTANT_MESSAGE,
                own.otel if own is not None else None,
                "",
            )
        )

    def _folded_request(self, seq: int, ev: Event | None, req: Request) -> None:
        """A request read from a record that is not a message (Codex ``token_count``,
        Copilot ``assistant.usage``, ``session.shutdown``): a row of its own, without raw
        columns (``convert`` counts that usage on a message, or not at all)."""
        ns = timestamps.to_ns(req.timestamp) if req.timestamp else None
        prov = ev.provenance if ev is not None else None
        self.requests.append(
            (
                req.agent_id or None,
                seq,
                None,
                ns,
                req.model or None,
                None,
                None,
                None,
                prov.line if prov is not None else None,
                req.origin,
                req.otel,
                req.key,
            )
        )

    # -- batches -----------------------------------------------------------------------------

    def partition_date(self) -> int:
        """The session's partition day (days since the epoch): its first timestamp's UTC day,
        or the file's modification day when no event before the first batch has one."""
        if self.date is None:
            self.date = partition_day(self.first_ns, self.owner.mtime_ns)
        return self.date

    def _ident(self, n: int) -> list[pa.Array]:
        return [
            pa.array([self.owner.transcript] * n, pa.string()),
            pa.array([self.meta.session_id] * n, pa.string()),
            pa.array([self.meta.harness or self.owner.harness] * n, pa.string()),
            pa.array([self.partition_date()] * n, pa.date32()),
        ]

    def _events_batch(self) -> pa.RecordBatch:
        c = self.cols
        n = len(c.rows)
        string = pa.string()
        storage = pa.Array.from_buffers(
            string, n, [None, pa.py_buffer(c.offsets), pa.py_buffer(c.payload)]
        )
        columns = zip(*c.rows, strict=True)
        arrays = [
            *self._ident(n),
            pa.array([self.meta.harness_version or None] * n, string),
            *(pa.array(col, t) for col, t in zip(columns, _ROW_TYPES, strict=True)),
            _json_array(storage),
        ]
        self.cols = _EventColumns()
        return pa.RecordBatch.from_arrays(arrays, schema=schemas.EVENTS)

    def finish(self, skipped: dict[str, int], title: str) -> Iterator[tuple[str, pa.RecordBatch]]:
        """The last ``events`` rows, then the session's ``sessions``, ``tool_calls`` and ``requests`` rows."""
        if self.folder is not None:
            for req in self.folder.finish():  # Codex rows that never learned their model
                self._folded_request(max(self.seq - 1, 0), None, req)
        if self.cols.rows:
            yield "events", self._events_batch()
        yield "sessions", self._sessions_batch(skipped, title)
        if self.calls:
            yield "tool_calls", self._tool_calls_batch()
        if self.requests:
            yield "requests", self._requests_batch()

    def subagent_ids(self) -> list[str]:
        """The ids of the subagents this session started: named in its agent tools' results,
        attributed inline (``agent_id``), or found beside it by the harness's layout."""
        ids: list[str] = []
        for call in self.calls:
            if call.subagent_id and call.subagent_id not in ids:
                ids.append(call.subagent_id)
        for agent in self.agents:
            if agent not in ids:
                ids.append(agent)
        for sub in self.owner.layout_subagents():
            if sub not in ids:
                ids.append(sub)
        return ids

    def _sessions_batch(self, skipped: dict[str, int], title: str) -> pa.RecordBatch:
        st = self.stats.build()
        counts = st.event_counts or {}
        meta = self.meta
        totals = st.totals
        parent = meta.session_id if meta.is_subagent and meta.subagent_id else None
        subagents = [] if meta.is_subagent else self.subagent_ids()
        start = timestamps.to_ns(st.start_time) if st.start_time else None
        end = timestamps.to_ns(st.end_time) if st.end_time else None
        row: dict[str, Any] = {
            "subagent_id": meta.subagent_id or None,
            "is_subagent": meta.is_subagent,
            "parent_session_id": parent,
            "subagent_ids": subagents,
            "harness_version": meta.harness_version or None,
            "cwd": meta.cwd or None,
            "git_branch": meta.git_branch or None,
            "title": title or None,
            "started_at": _us(start),
            "ended_at": _us(end),
            "wall_time_ms": st.wall_time_ms if start is not None else None,
            "models": st.models or [],
            "events": st.events,
            "user_messages": st.user_messages,
            "harness_messages": st.harness_messages,
            "assistant_messages": counts.get(EventKind.ASSISTANT_MESSAGE, 0),
            "thinking_blocks": counts.get(EventKind.THINKING, 0),
            "tool_calls": st.tool_calls,
            "tool_results": counts.get(EventKind.TOOL_RESULT, 0),
            "tool_errors": st.tool_errors,
            "unanswered_calls": st.unanswered_calls,
            "orphan_results": st.orphan_results,
            "system_events": counts.get(EventKind.SYSTEM, 0),
            "unknown_events": counts.get(EventKind.UNKNOWN, 0),
            "skipped_records": sum(skipped.values()),
            "result_bytes": st.result_bytes,
            "input_tokens": totals.input_tokens if totals else None,
            "output_tokens": totals.output_tokens if totals else None,
            "cache_read_input_tokens": totals.cache_read_input_tokens if totals else None,
            "cache_creation_input_tokens": totals.cache_creation_input_tokens if totals else None,
            "total_prompt_tokens": totals.total_prompt_tokens if totals else None,
            "source_bytes": self.owner.size,
            "source_mtime": self.owner.mtime_ns // 1000,
        }
        arrays = self._ident(1)
        for f in schemas.SESSIONS:
            if f.name in row:
                arrays.append(pa.array([row[f.name]], f.type))
        return pa.RecordBatch.from_arrays(arrays, schema=schemas.SESSIONS)

    def _tool_calls_batch(self) -> pa.RecordBatch:
        calls = self.calls
        n = len(calls)
        string, i64, ts = pa.string(), pa.int64(), pa.timestamp("us", tz="UTC")
        models = self.models_by_message

        def duration(c: _Call) -> int | None:
            if c.call_ns is None or c.last_ns is None or c.last_ns < c.call_ns:
                return None
            return (c.last_ns - c.call_ns) // 1_000_000

        arrays = [
            *self._ident(n),
            pa.array([c.agent_id for c in calls], string),
            pa.array([c.seq for c in calls], i64),
            pa.array([c.id for c in calls], string),
            pa.array([c.message_id for c in calls], string),
            pa.array([models.get(c.message_id) if c.message_id else None for c in calls], string),
            pa.array([c.name for c in calls], string),
            pa.array([c.kind for c in calls], string),
            pa.array([c.promoted_from for c in calls], string),
            pa.array([_us(c.call_ns) for c in calls], ts),
            pa.array([_us(c.last_ns) for c in calls], ts),
            pa.array([duration(c) for c in calls], i64),
            pa.array([c.input_bytes for c in calls], i64),
            pa.array([c.results for c in calls], i64),
            pa.array([c.result_bytes for c in calls], i64),
            pa.array([c.is_error for c in calls], pa.bool_()),
            pa.array([c.exit_code for c in calls], i64),
            pa.array([c.exit_source for c in calls], string),
            pa.array([c.subagent_id for c in calls], string),
            pa.array([c.line for c in calls], i64),
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=schemas.TOOL_CALLS)

    def _requests_batch(self) -> pa.RecordBatch:
        rows = self.requests
        n = len(rows)
        string, i64 = pa.string(), pa.int64()
        harness = self.meta.harness or self.owner.harness
        sid = self.meta.session_id

        seen: dict[str, int] = {}
        scope = (
            harness
            if harness in GLOBAL_MESSAGE_IDS
            else f"{harness}:{sid or self.owner.transcript}"
        )

        def key(r: tuple[Any, ...]) -> str:
            # The same API message copied into another transcript (a resumed or forked
            # Claude Code session) keeps its provider-issued id: one key across the dataset.
            # Other harnesses number messages per session, so their keys are per session.
            # Messages that share an id within a transcript are told apart by their order.
            if r[11]:
                # A request ``usage`` keys across transcripts (a Codex fork's copied
                # token_count records keep their parent's key).
                base = r[11]
            elif r[2]:
                base = f"{scope}:{r[0] or ''}:{r[2]}" if scope != harness else f"{scope}:{r[2]}"
            else:
                base = f"{harness}:{sid}:{self.owner.transcript}:{r[1]}"
            n = seen[base] = seen.get(base, 0) + 1
            return base if n == 1 else f"{base}#{n}"

        def usage(i: int) -> list[int | None]:
            return [r[6][i] if r[6] is not None else None for r in rows]

        def otel(name: str) -> list[int | None]:
            return [getattr(r[10], name) if r[10] is not None else None for r in rows]

        arrays = [
            *self._ident(n),
            pa.array([r[0] for r in rows], string),
            pa.array([r[1] for r in rows], i64),
            pa.array([r[2] for r in rows], string),
            pa.array([key(r) for r in rows], string),
            pa.array([_us(r[3]) for r in rows], pa.timestamp("us", tz="UTC")),
            pa.array([r[4] for r in rows], string),
            pa.array([r[5] for r in rows], string),
            pa.array([r[6] is not None for r in rows], pa.bool_()),
            *(pa.array(usage(i), i64) for i in range(len(_USAGE))),
            _json_array(pa.array([r[7] for r in rows], string)),
            pa.array([r[8] for r in rows], i64),
            pa.array([r[9] for r in rows], string),
            *(pa.array(otel(name), i64) for name in _OTEL),
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=schemas.REQUESTS)


_USAGE: Final = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)

#: The normalized view's fields, in the order of the ``otel_*`` columns.
_OTEL: Final = tuple(f for f in OtelUsage.__struct_fields__)


class TranscriptRows(TranscriptEvents):
    """The rows one transcript contributes to each table, streamed as ``(table, batch)`` pairs.

    Iterating :meth:`batches` parses the transcript; a :class:`~agentminutes.AgentminutesError`
    (a line no rule accepts, an undetectable or unreadable file) propagates after the
    batches of what came before it: the caller decides what to keep (the dataset
    writer and :func:`to_arrow` keep none, and a ``failures`` row instead).
    """

    def batches(self) -> Iterator[tuple[str, pa.RecordBatch]]:
        """Parse the transcript; yield its rows, table by table, as they are complete."""
        session: _Session | None = None
        for part in self.parts():
            if session is None:
                session = _Session(self, None)
            if isinstance(part, SessionEnd):
                yield from session.finish(part.skipped, part.title)
                session = None
            else:
                yield from session.add(part)


def failure_batch(
    path: str | os.PathLike[str], exc: BaseException, harness: str = ""
) -> pa.RecordBatch:
    """The ``failures`` row of a transcript that could not be exported."""
    transcript = os.path.abspath(os.fspath(path))
    try:
        st = os.stat(transcript)
        size: int | None = st.st_size
        mtime: int | None = st.st_mtime_ns
    except OSError:
        size = mtime = None
    line = exc.line if isinstance(exc, ParseError) and exc.line else None
    if isinstance(exc, ParseError) and exc.harness:
        harness = exc.harness
    when = mtime if mtime is not None else 0
    values: list[Any] = [
        transcript,
        harness or "unknown",
        when // NS_PER_DAY,
        type(exc).__name__,
        str(exc) or type(exc).__name__,
        line,
        size,
        _us(mtime),
    ]
    arrays = [pa.array([v], f.type) for v, f in zip(values, schemas.FAILURES, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=schemas.FAILURES)


def iter_batches(
    path: str | os.PathLike[str],
    *,
    harness: str = "auto",
    permissive: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    stages: Sequence[Stage] = (),
) -> Iterator[tuple[str, pa.RecordBatch]]:
    """Every table's rows of one transcript, as ``(table, batch)`` pairs; all or nothing.

    The rows are collected and handed out once the whole transcript parsed; a
    transcript that does not yields its ``failures`` row only.
    """
    rows = TranscriptRows(
        path,
        harness=harness,
        options=ParseOptions(
            permissive=permissive, harness_version=harness_version, text_form=text_form
        ),
        stages=stages,
    )
    try:
        out = list(rows.batches())
    except AgentminutesError as exc:
        yield "failures", failure_batch(path, exc, rows.harness)
        return
    yield from out


def to_arrow(
    path: str | os.PathLike[str],
    table: str = "events",
    *,
    harness: str = "auto",
    permissive: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    stages: Sequence[Stage] = (),
) -> pa.Table:
    """One table's rows of one transcript, as a ``pyarrow.Table`` with that table's schema.

    Pure and picklable (a path and plain options in, a table out), so an engine maps
    it over paths: ``dask.dataframe.from_map(to_arrow, paths, table="tool_calls")``.
    The rows are exactly those ``agentminutes export`` writes for the transcript,
    partition columns (``harness``, ``date``) included. A transcript that cannot be
    exported has no rows in any table but ``failures``.

    Args:
        path: a transcript, data export or ``turns.db``.
        table: ``events``, ``sessions``, ``tool_calls``, ``requests`` or ``failures``.
        harness, permissive, harness_version, text_form, stages: as for
            :func:`agentminutes.events`.

    Raises:
        UsageError: an unknown table.
    """
    if table not in schemas.SCHEMAS:
        from agentminutes.errors import UsageError

        raise UsageError(f'unknown table "{table}" (want {", ".join(schemas.TABLES)})')
    batches = [
        b
        for name, b in iter_batches(
            path,
            harness=harness,
            permissive=permissive,
            harness_version=harness_version,
            text_form=text_form,
            stages=stages,
        )
        if name == table
    ]
    return pa.Table.from_batches(batches, schema=schemas.SCHEMAS[table])
