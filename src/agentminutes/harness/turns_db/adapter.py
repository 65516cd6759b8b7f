"""Pinocchio / Geppetto ``turns.db``: SQLite snapshots of conversations, turn by turn.

Geppetto keeps a conversation as a *turn*: an ordered list of blocks (``system``,
``user``, ``llm_text``, ``reasoning``, ``tool_call``, ``tool_use``, ``other``)
with a JSON payload each (``text``; ``id``/``name``/``args`` for a call;
``id``/``result``/``error`` for a tool's result). Pinocchio's turn store saves
a snapshot of a turn at several phases of an inference loop (``input``,
``pre_inference``, ``post_inference``, ``post_tools``, ``final``), each
snapshot listing the whole block history again:

* ``turns(conv_id, session_id, turn_id, turn_created_at_ms, turn_metadata_json,
  runtime_key, inference_id, …)``;
* ``blocks(block_id, content_hash, kind, role, payload_json,
  block_metadata_json, first_seen_at_ms)``, each version of a block once;
* ``turn_block_membership(conv_id, session_id, turn_id, phase,
  snapshot_created_at_ms, ordinal, block_id, content_hash)``.

One conversation (``conv_id``) is one session. Its turns are taken in time
order; each turn's most complete snapshot (``final``, else ``post_tools``,
``post_inference``, ``pre_inference``, ``input``, else any; the latest of
that phase) stands for it, and only the blocks no earlier turn showed are new
(a block is known by kind, role and id; a tool block by its call id; a system
block by its content hash, since the system prompt is re-created each turn).

Records, for accounting, are the membership rows, numbered from 1 per
conversation in (turn, snapshot, ordinal) order. Each is an event or a
counted skip: ``superseded/<phase>`` for the rows of a snapshot another one
of its turn stands for, ``repeated_block`` for a block an earlier turn showed.

Blocks map to events: ``system`` → ``system`` (subtype ``system_prompt``);
``user`` → ``user_message`` (origin ``harness`` where middleware wrote it);
a run of ``reasoning``, ``llm_text`` and ``tool_call`` blocks is one model
response: ``thinking`` and ``tool_call`` events sharing the ``message_id`` of
the ``assistant_message`` that closes the run (model from the turn's metadata,
else its runtime key); ``tool_use`` → ``tool_result``; ``other`` → ``system``
(subtype ``block/other``). Times are each block's ``first_seen_at_ms``.
Token usage is not read (the store keeps it, where at all, as free-form turn
metadata): totals are omitted.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._export import as_str, decode_object, first_byte
from agentminutes.harness._gojson import go_utf8
from agentminutes.harness._sqlite import SqliteAdapter
from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import (
    ConversationInfo,
    DocumentSession,
    listed_title,
    raw_record,
)
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    Origin,
    Provenance,
    SystemEvent,
    Thinking,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)
from agentminutes.timestamps import format_ms

if TYPE_CHECKING:
    from agentminutes.harness.base import Document

__all__ = ("TurnsDBAdapter",)

HARNESS: Final = "turns-db"

#: Snapshot phases, most complete first: which snapshot stands for its turn.
PHASES: Final = ("final", "post_tools", "post_inference", "pre_inference", "input")

#: Block kinds a model response is made of.
_RESPONSE_KINDS: Final = frozenset({"reasoning", "llm_text", "tool_call"})
_KINDS: Final = _RESPONSE_KINDS | {"system", "user", "tool_use", "other"}

#: Markers of user-role blocks that Pinocchio's agent-mode middleware writes.
_HARNESS_MARKERS: Final = (
    "<currentMode>",
    "<modeSwitchGuidelines>",
    "<pinocchio:agent_mode_switch",
)

_TABLES: Final = ("turns", "blocks", "turn_block_membership")


# SQLite columns hold whatever was written, whatever their declared type: a
# damaged or hand-made store has text where numbers belong, blobs where text
# does, invalid UTF-8. Every value read passes through one of these.


def _text(value: object) -> str:
    """A text column's value as text (a blob decoded as Go would, a number written out)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return go_utf8(value)
    return str(value)


def _ms(value: object) -> int | None:
    """A milliseconds column's value as an integer, or ``None`` when it is not one."""
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else None
    if isinstance(value, (str, bytes)):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def _ms_rfc3339(value: object) -> str:
    return format_ms(_ms(value))


def _meta_value(meta: dict[str, Raw], key: str) -> str:
    """A Geppetto turn-metadata string, under its namespaced key or the plain one."""
    return as_str(meta.get(f"geppetto.{key}@v1")) or as_str(meta.get(key))


class _Row:
    """One membership row with what deciding about it needs (no payload)."""

    __slots__ = ("block_id", "content_hash", "kind", "role", "stored", "tool_id")

    def __init__(
        self,
        block_id: object,
        content_hash: object,
        kind: str | None,
        role: str | None,
        tool_id: str | None,
    ) -> None:
        #: The block's key as stored (to query it by), and as text.
        self.stored = (block_id, content_hash)
        self.block_id = _text(block_id)
        self.content_hash = _text(content_hash)
        self.kind = kind
        self.role = role or ""
        self.tool_id = tool_id or ""

    def identity(self) -> str:
        if self.kind in ("tool_call", "tool_use") and self.tool_id:
            return f"{self.kind}|{self.tool_id}"
        if self.kind == "system":
            return f"system|{self.role}|{self.content_hash}"
        return f"{self.kind}|{self.role}|{self.block_id}"


class _Turn:
    __slots__ = ("created_ms", "metadata", "runtime_key", "snapshots", "turn_id")

    def __init__(self, turn_id: str, created_ms: int, metadata: str, runtime_key: str) -> None:
        self.turn_id = turn_id
        self.created_ms = created_ms
        self.metadata = metadata
        self.runtime_key = runtime_key
        #: (snapshot_created_at_ms, phase) → rows in ordinal order.
        self.snapshots: dict[tuple[int, str], list[_Row]] = {}

    def canonical(self) -> tuple[int, str]:
        keys = list(self.snapshots)
        for phase in PHASES:
            of_phase = [k for k in keys if k[1] == phase]
            if of_phase:
                return max(of_phase)
        return max(keys)


class TurnsDBAdapter(SqliteAdapter):
    """Parses Pinocchio/Geppetto ``turns.db`` SQLite turn-snapshot stores."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = ""
    store_name: ClassVar[str] = "a Pinocchio turn store"
    store_noun: ClassVar[str] = "the turn store"
    head_marks: ClassVar[tuple[bytes, ...]] = (b"turn_block_membership",)

    def prepare(self, conn: sqlite3.Connection) -> None:
        conn.text_factory = _text_of_bytes  # invalid UTF-8 in a text column: U+FFFD, no crash

    def missing_reason(self, missing: list[str], names: set[str]) -> str:
        legacy = " (only the legacy turn_snapshots table)" if "turn_snapshots" in names else ""
        return super().missing_reason(missing, names) + legacy

    def conversations(self, doc: Document) -> list[ConversationInfo]:
        conn = self.open_store(doc, _TABLES)
        with self.reading(conn):
            counts = dict(
                conn.execute(
                    "SELECT m.conv_id, COUNT(DISTINCT b.block_id) FROM turn_block_membership m"
                    " JOIN blocks b ON b.block_id = m.block_id AND b.content_hash = m.content_hash"
                    " WHERE b.kind IN ('user', 'llm_text') GROUP BY m.conv_id"
                )
            )
            titles = dict(
                conn.execute(
                    "SELECT conv_id, payload_json FROM (SELECT m.conv_id, b.payload_json,"
                    " ROW_NUMBER() OVER (PARTITION BY m.conv_id"
                    "  ORDER BY b.first_seen_at_ms, m.snapshot_created_at_ms, m.ordinal) AS rn"
                    " FROM turn_block_membership m JOIN blocks b"
                    "  ON b.block_id = m.block_id AND b.content_hash = m.content_hash"
                    " WHERE b.kind = 'user' AND b.role != 'system') WHERE rn = 1"
                )
            )
            rows = conn.execute(
                "SELECT conv_id, MIN(turn_created_at_ms), MAX(MAX(updated_at_ms, turn_created_at_ms))"
                " FROM turns GROUP BY conv_id ORDER BY MIN(turn_created_at_ms), conv_id"
            ).fetchall()
        listed = []
        for conv_id, first, last in rows:
            title = as_str(decode_object(_raw(titles.get(conv_id))).get("text"))
            messages = counts.get(conv_id, 0)
            listed.append(
                ConversationInfo(
                    id=_text(conv_id),
                    title=listed_title(title),
                    created=_ms_rfc3339(first),
                    updated=_ms_rfc3339(last),
                    messages=messages if isinstance(messages, int) else 0,
                )
            )
        return listed

    def sessions(self, doc: Document, only: str | None = None) -> Iterator[DocumentSession]:
        conn = self.open_store(doc, _TABLES)
        with self.reading(conn):
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT conv_id FROM turns GROUP BY conv_id"
                    " ORDER BY MIN(turn_created_at_ms), conv_id"
                )
            ]
            if only is not None:
                # Queried by the value stored (a number stays a number), chosen by its text.
                ids = [i for i in ids if _text(i) == only] or [only]
            for conv_id in ids:
                yield self._session(conn, conv_id)

    # -- one conversation ------------------------------------------------------

    def _session(self, conn: sqlite3.Connection, stored_id: object) -> DocumentSession:
        conv_id = _text(stored_id)
        skipped = self.begin(conv_id)
        turns = self._turns(conn, stored_id)
        state = _State(self, conn)
        n = 0
        for turn in turns:
            if not turn.snapshots:
                continue  # a turn listed without a single block: nothing to read
            canonical = turn.canonical()
            state.model = (
                _meta_value(decode_object(_raw(turn.metadata)), "model") or turn.runtime_key
            )
            for key in sorted(turn.snapshots):
                rows = turn.snapshots[key]
                if key != canonical:
                    for _ in rows:
                        n += 1
                        self.skip(f"superseded/{key[1]}", n)
                    continue
                for row in rows:
                    n += 1
                    state.row(row, n)
            state.close_run()
        events = state.events
        created = _ms_rfc3339(turns[0].created_ms if turns else None)
        prov = events[0].provenance if events else None
        meta = self.session_meta(prov, timestamp=created, session_id=conv_id)
        info = ConversationInfo(
            id=conv_id,
            title=state.title,
            created=created,
            updated=_ms_rfc3339(turns[-1].created_ms) if turns else "",
            messages=state.messages,
        )
        return DocumentSession(conversation=info, events=[meta, *events], skipped=skipped)

    def _turns(self, conn: sqlite3.Connection, conv_id: object) -> list[_Turn]:
        turns: dict[tuple[str, str], _Turn] = {}
        for session_id, turn_id, created, metadata, runtime in conn.execute(
            "SELECT session_id, turn_id, turn_created_at_ms, turn_metadata_json, runtime_key"
            " FROM turns WHERE conv_id = ? ORDER BY turn_created_at_ms, session_id, turn_id",
            (conv_id,),
        ):
            key = (_text(session_id), _text(turn_id))
            turns[key] = _Turn(key[1], _ms(created) or 0, _text(metadata), _text(runtime))
        try:
            rows = conn.execute(
                _MEMBERSHIP.format(tool_id="json_extract(b.payload_json, '$.id')"), (conv_id,)
            )
        except sqlite3.OperationalError:  # an SQLite built without JSON functions
            rows = conn.execute(_MEMBERSHIP.format(tool_id="NULL"), (conv_id,))
        for (
            session_id,
            turn_id,
            phase,
            snap_ms,
            _ordinal,  # the query orders by it
            block_id,
            chash,
            kind,
            role,
            tool_id,
        ) in rows:
            key = (_text(session_id), _text(turn_id))
            snap = _ms(snap_ms) or 0
            turn = turns.get(key)
            if turn is None:  # membership of a turn the turns table does not list
                turn = turns[key] = _Turn(key[1], snap, "", "")
            if kind in ("tool_call", "tool_use") and tool_id is None:
                tool_id = _tool_id(conn, block_id, chash)
            turn.snapshots.setdefault((snap, _text(phase)), []).append(
                _Row(
                    block_id,
                    chash,
                    None if kind is None else _text(kind),
                    _text(role),
                    _text(tool_id),
                )
            )
        return sorted(turns.values(), key=lambda t: t.created_ms)


_MEMBERSHIP: Final = (
    "SELECT m.session_id, m.turn_id, m.phase, m.snapshot_created_at_ms, m.ordinal,"
    " m.block_id, m.content_hash, b.kind, b.role,"
    " CASE WHEN b.kind IN ('tool_call', 'tool_use') THEN {tool_id} END"
    " FROM turn_block_membership m LEFT JOIN blocks b"
    "  ON b.block_id = m.block_id AND b.content_hash = m.content_hash"
    " WHERE m.conv_id = ?"
    " ORDER BY m.snapshot_created_at_ms, m.phase, m.ordinal"
)


def _tool_id(conn: sqlite3.Connection, block_id: object, content_hash: object) -> str:
    row = conn.execute(
        "SELECT payload_json FROM blocks WHERE block_id = ? AND content_hash = ?",
        (block_id, content_hash),
    ).fetchone()
    return as_str(decode_object(_raw(row[0] if row else None)).get("id"))


def _raw(value: object) -> Raw | None:
    """A JSON column's value as raw JSON to decode leniently (``None`` when empty)."""
    if not value:
        return None
    return Raw(value if isinstance(value, bytes) else _text(value).encode())


def _raw_json(value: object) -> Raw | None:
    """A JSON column's value to carry verbatim: itself when it is JSON, else a JSON string."""
    raw = _raw(value)
    return None if raw is None else raw_record(bytes(raw))


def _text_of_bytes(data: bytes) -> str:
    return go_utf8(data)


class _Run:
    """An open model response: consecutive reasoning, llm_text and tool_call blocks."""

    __slots__ = ("first", "last", "message_id", "text", "text_first", "text_last", "ts")

    def __init__(self, message_id: str) -> None:
        self.message_id = message_id
        self.text: list[ContentBlock] = []
        self.first = 0
        self.last = 0
        self.text_first = 0
        self.text_last = 0
        self.ts = ""


class _State:
    """Per-conversation state: events so far, the open response, tool names by call id."""

    def __init__(self, adapter: TurnsDBAdapter, conn: sqlite3.Connection) -> None:
        self.adapter = adapter
        self.conn = conn
        self.seen: set[str] = set()
        self.events: list[Event] = []
        self.run: _Run | None = None
        self.tools: dict[str, str] = {}
        self.model = ""
        self.title = ""
        self.messages = 0

    def row(self, row: _Row, n: int) -> None:
        adapter = self.adapter
        if row.kind is None:
            self.close_run()
            self.events.append(
                adapter.unknown_or_fail(
                    "", row.block_id.encode(), n, f"block {row.block_id} is missing from blocks"
                )
            )
            return
        identity = row.identity()
        if identity in self.seen:
            adapter.skip("repeated_block", n)
            return
        self.seen.add(identity)
        found = self.conn.execute(
            "SELECT payload_json, block_metadata_json, first_seen_at_ms FROM blocks"
            " WHERE block_id = ? AND content_hash = ?",
            row.stored,
        ).fetchone() or (None, None, None)
        payload_raw = _raw_json(found[0]) or Raw(b"{}")
        payload = decode_object(payload_raw)
        block_meta = decode_object(_raw(found[1]))
        ts = _ms_rfc3339(found[2])
        kind = row.kind
        if kind not in _KINDS:
            self.close_run()
            record = msgspec.json.encode({"block_id": row.block_id, "kind": kind, "role": row.role})
            self.events.append(
                adapter.unknown_or_fail(kind, record, n, f'unrecognized block kind "{kind}"')
            )
            return
        said = Stamp(ts, adapter.record_prov(payload_raw, n), id=row.block_id)
        if kind in _RESPONSE_KINDS:
            self._response(row, n, kind, payload, said)
            return
        self.close_run()
        text = as_str(payload.get("text"))
        if kind == "user":
            harness = any(k.endswith("middleware@v1") or k == "middleware" for k in block_meta)
            harness = harness or any(m in text for m in _HARNESS_MARKERS)
            if not harness and not self.title and text:
                self.title = listed_title(text)
            self.messages += 1
            content = [ContentBlock(kind="text", text=text)] if text else []
            images = payload.get("images")
            if images:
                content.append(ContentBlock(kind="image", raw=images))
            origin = Origin.HARNESS if harness else Origin.HUMAN
            self.events.append(
                said.user_message(UserMessage(origin=origin, content=content or None))
            )
        elif kind == "system":
            self.events.append(said.system(SystemEvent(subtype="system_prompt", text=text)))
        elif kind == "tool_use":
            call_id = as_str(payload.get("id")) or row.tool_id
            error = payload.get("error")
            failed = error is not None and bytes(error) not in _NULLISH
            content = _result_blocks(payload.get("result"))
            if failed and error is not None:
                content.extend(_result_blocks(error))
            result = ToolResult(
                tool_call_id=call_id,
                tool_name=self.tools.get(call_id, ""),
                is_error=failed,
                content=content or None,
            )
            self.events.append(said.tool_result(result))
        else:  # other
            other = SystemEvent(subtype="block/other", text=text, details=payload_raw)
            self.events.append(said.system(other))

    def _response(
        self,
        row: _Row,
        n: int,
        kind: str,
        payload: dict[str, Raw],
        said: Stamp,
    ) -> None:
        ts = said.timestamp
        run = self.run
        if run is None:
            run = self.run = _Run(row.block_id)
            run.first = n
            run.ts = ts
        run.last = n
        if kind == "llm_text":
            run.text.append(ContentBlock(kind="text", text=as_str(payload.get("text"))))
            run.text_first = run.text_first or n
            run.text_last = n
            run.ts = ts
        elif kind == "reasoning":
            thought = Thinking(text=as_str(payload.get("text")))
            self.events.append(replace(said, message_id=run.message_id).thinking(thought))
        else:
            call_id = as_str(payload.get("id")) or row.tool_id or row.block_id
            name = as_str(payload.get("name"))
            self.tools[call_id] = name
            call = ToolCall(
                tool_call_id=call_id,
                name=name,
                kind=ToolKind.OTHER,
                input=payload.get("args") or NO_RAW,
            )
            self.events.append(replace(said, message_id=run.message_id).tool_call(call))

    def close_run(self) -> None:
        run = self.run
        if run is None:
            return
        self.run = None
        self.messages += 1
        line = run.text_first or run.last
        prov = Provenance(line=line, end_line=run.text_last or line)
        whole = Stamp(run.ts, prov, id=run.message_id, message_id=run.message_id)
        reply = AssistantMessage(model=self.model, content=run.text or None)
        self.events.append(whole.assistant_message(reply))


_NULLISH: Final = frozenset({b"null", b'""', b"false", b"{}", b"[]"})


def _result_blocks(raw: Raw | None) -> list[ContentBlock]:
    """A tool result (or error) value: text if a string, else the JSON kept verbatim."""
    if raw is None or bytes(raw) in _NULLISH:
        return []
    if first_byte(raw) == b'"':
        text = as_str(raw)
        return [ContentBlock(kind="text", text=text)] if text else []
    return [ContentBlock(kind="other", raw=raw)]
