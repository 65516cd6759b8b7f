"""Hermes Agent's session store: the SQLite database ``~/.hermes/state.db``.

Hermes (Nous Research's ``hermes-agent``) keeps every session of the CLI and of
its messaging gateway in one database (WAL mode):

* ``sessions``: one row per session: ``id``, ``source`` (``cli``, ``telegram`` …),
  ``model``, ``system_prompt``, ``parent_session_id`` (a session split at a
  compression), ``started_at``/``ended_at`` (epoch seconds), ``cwd``,
  ``git_branch``, ``title`` and the session's usage sums;
* ``messages``: one row per message, in ``id`` order: ``role`` (``user``,
  ``assistant``, ``tool``, ``system``), ``content`` (text; a tool's result is
  the JSON object the tool returned), ``tool_calls`` (an assistant's, OpenAI
  shaped, JSON), ``tool_call_id`` and ``tool_name`` (a result's),
  ``reasoning_content`` (the thinking), ``finish_reason``, ``timestamp``;
* ``session_model_usage``: per session and model, the usage Hermes summed over
  its API calls (``api_call_count``, ``input_tokens`` fresh, ``cache_read_tokens``,
  ``cache_write_tokens``, ``output_tokens``, ``reasoning_tokens``, costs).

Records, for accounting, are the rows read for a session, numbered from 1: the
session row, then its messages by ``id``, then its usage rows.

Mapping decisions:

* The session row becomes ``session_meta`` (id, cwd, git branch), a ``system``
  event ``session`` (the row without its system prompt as details, the title as
  text) and, where recorded, a ``system`` event ``system_prompt`` whose text is
  the system prompt the model was sent.
* A user row is a ``user_message`` a person typed (``human``); an assistant row
  is its thinking, its tool calls, then the ``assistant_message`` (the session's
  model, the content, ``finish_reason``); all share ``message_id``
  ``<session>:<row id>``. A tool row is the ``tool_result``: Hermes records no
  error flag, so a result is an error when the tool's JSON reports one (a
  non-empty ``error``, or a non-zero ``exit_code``). A system row is a ``system``
  event.
* Hermes records no usage per message. Each ``session_model_usage`` row becomes
  a ``system`` event ``model_usage`` (the row as details): the usage of that
  model's requests in the session, summed by Hermes, which ``usage`` counts.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._export import epoch_rfc3339
from agentminutes.harness._sqlite import SqliteAdapter
from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import (
    ConversationInfo,
    DocumentSession,
    document_path,
    json_or_string,
    listed_title,
)
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    Origin,
    SystemEvent,
    Thinking,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)

if TYPE_CHECKING:
    from agentminutes.harness.base import Document

__all__ = ("HARNESS", "TOOL_KINDS", "HermesAdapter", "HermesTail")

HARNESS: Final = "hermes"

#: The tables that make a Hermes session store.
TABLES: Final = frozenset({"sessions", "messages", "session_model_usage"})

#: Hermes's tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "terminal": ToolKind.EXECUTE,
    "process": ToolKind.EXECUTE,
    "execute_code": ToolKind.EXECUTE,
    "read_file": ToolKind.READ,
    "write_file": ToolKind.EDIT,
    "patch": ToolKind.EDIT,
    "search_files": ToolKind.SEARCH,
    "web_search": ToolKind.FETCH,
    "web_extract": ToolKind.FETCH,
    "todo": ToolKind.THINK,
}

_ROLES: Final = frozenset({"user", "assistant", "tool", "system"})


class _Call(msgspec.Struct):
    id: str | None = None
    call_id: str | None = None
    function: dict[str, Any] | None = None


class _Outcome(msgspec.Struct):
    error: Any = None
    exit_code: int | float | None = None
    success: bool | None = None


_decode_calls = msgspec.json.Decoder(list[_Call] | None).decode
_decode_outcome = msgspec.json.Decoder(_Outcome).decode
_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)

_MESSAGE_COLUMNS: Final = (
    "id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "finish_reason",
    "reasoning_content",
    "reasoning",
)


def _ts(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    return epoch_rfc3339(Raw(msgspec.json.encode(value)))


def _row_json(row: dict[str, Any], leave_out: tuple[str, ...] = ()) -> Raw:
    return Raw(msgspec.json.encode({k: v for k, v in row.items() if k not in leave_out}))


class HermesAdapter(SqliteAdapter):
    """Parses Hermes Agent's ``state.db`` session store."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "0.19.0"
    tables: ClassVar[frozenset[str]] = TABLES
    store_name: ClassVar[str] = "a Hermes session store"
    store_noun: ClassVar[str] = "the session store"
    head_marks: ClassVar[tuple[bytes, ...]] = (b"session_model_usage",)

    def prepare(self, conn: sqlite3.Connection) -> None:
        conn.row_factory = sqlite3.Row

    def conversations(self, doc: Document) -> list[ConversationInfo]:
        conn = self.open_store(doc)
        with self.reading(conn):
            counts = dict(
                conn.execute(
                    "SELECT session_id, COUNT(*) FROM messages"
                    " WHERE role IN ('user', 'assistant') GROUP BY session_id"
                ).fetchall()
            )
            rows = conn.execute(
                "SELECT id, title, started_at, ended_at FROM sessions ORDER BY started_at, id"
            ).fetchall()
        return [
            ConversationInfo(
                id=str(r["id"]),
                title=listed_title(str(r["title"] or "")),
                created=_ts(r["started_at"]),
                updated=_ts(r["ended_at"]),
                messages=int(counts.get(r["id"], 0)),
            )
            for r in rows
        ]

    def sessions(self, doc: Document, only: str | None = None) -> Iterator[DocumentSession]:
        conn = self.open_store(doc)
        with self.reading(conn):
            ids = [
                str(r[0]) for r in conn.execute("SELECT id FROM sessions ORDER BY started_at, id")
            ]
            if only is not None:
                ids = [i for i in ids if i == only] or [only]
            for sid in ids:
                yield self.read_session(conn, sid)

    def tail(self, doc: Document) -> HermesTail:
        """Follow the database *doc* as Hermes writes it (see :class:`HermesTail`)."""
        return HermesTail(self, doc.connect, document_path(doc))

    # -- one session ---------------------------------------------------------------------

    def read_session(self, conn: sqlite3.Connection, sid: str) -> DocumentSession:
        """The events of session *sid* (its row, its messages, its usage rows)."""
        skipped = self.begin(sid)
        row = conn.execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchone()
        if row is None:
            raise self.error(f'no session "{sid}" in the session store', 0)
        session = dict(row)
        cols = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
        select = ", ".join(c if c in cols else f"NULL AS {c}" for c in _MESSAGE_COLUMNS)
        messages = [
            dict(m)
            for m in conn.execute(
                f"SELECT {select} FROM messages WHERE session_id = ? ORDER BY id", (sid,)
            )
        ]
        usage = [
            dict(u)
            for u in conn.execute(
                "SELECT * FROM session_model_usage WHERE session_id = ? ORDER BY first_seen, model",
                (sid,),
            )
        ]
        events = self.build(session, messages, usage)
        info = ConversationInfo(
            id=sid,
            title=listed_title(str(session.get("title") or "")),
            created=_ts(session.get("started_at")),
            updated=_ts(session.get("ended_at")),
            messages=sum(1 for m in messages if m.get("role") in ("user", "assistant")),
        )
        return DocumentSession(conversation=info, events=events, skipped=skipped)

    def build(
        self, session: dict[str, Any], messages: list[dict[str, Any]], usage: list[dict[str, Any]]
    ) -> list[Event]:
        """A session's events from its rows (record 1: the session; then messages, usage)."""
        sid = str(session.get("id") or "")
        row = Stamp(_ts(session.get("started_at")), self.record_prov(NO_RAW, 1))
        title = str(session.get("title") or "")
        details = _row_json(session, ("system_prompt",))
        out = [
            self.session_meta(
                row.provenance,
                timestamp=row.timestamp,
                session_id=sid,
                cwd=str(session.get("cwd") or ""),
                git_branch=str(session.get("git_branch") or ""),
            ),
            row.system(SystemEvent(subtype="session", text=title, details=details)),
        ]
        if session.get("system_prompt"):
            prompt = str(session["system_prompt"])
            out.append(row.system(SystemEvent(subtype="system_prompt", text=prompt)))
        model = str(session.get("model") or "")
        n = 1
        for m in messages:
            n += 1
            out.extend(self._message(sid, model, m, n))
        for u in usage:
            n += 1
            raw = _row_json(u)
            used = SystemEvent(subtype="model_usage", text=str(u.get("model") or ""), details=raw)
            out.append(Stamp(_ts(u.get("last_seen")), self.record_prov(raw, n)).system(used))
        return out

    def _message(self, sid: str, model: str, m: dict[str, Any], n: int) -> list[Event]:
        raw = _row_json(m)
        said = Stamp(_ts(m.get("timestamp")), self.record_prov(raw, n))
        role = str(m.get("role") or "")
        content = m.get("content")
        text = content if isinstance(content, str) else ""
        if role not in _ROLES:
            return [
                self.unknown_or_fail(role, bytes(raw), n, f'unrecognized message role "{role}"')
            ]
        blocks = [ContentBlock(kind="text", text=text)] if text else None
        if role == "user":
            return [said.user_message(UserMessage(origin=Origin.HUMAN, content=blocks))]
        if role == "system":
            return [said.system(SystemEvent(subtype="system_message", text=text))]
        if role == "tool":
            call_id = str(m.get("tool_call_id") or "")
            result = ToolResult(
                tool_call_id=call_id,
                tool_name=str(m.get("tool_name") or self.tool_names.get(call_id, "")),
                is_error=_failed(text),
                content=blocks,
            )
            return [said.tool_result(result)]
        part = replace(said, message_id=f"{sid}:{m.get('id')}")
        out: list[Event] = []
        thinking = m.get("reasoning_content") or m.get("reasoning")
        if isinstance(thinking, str) and thinking:
            out.append(part.thinking(Thinking(text=thinking)))
        calls_raw = m.get("tool_calls")
        try:
            calls = _decode_calls(calls_raw) if isinstance(calls_raw, str) and calls_raw else None
        except _DECODE_ERRORS as exc:
            return [self.unknown_or_fail(role, bytes(raw), n, f"malformed tool_calls: {exc}")]
        for call in calls or ():
            fn = call.function or {}
            name = str(fn.get("name") or "")
            call_id = call.id or call.call_id or ""
            self.name_call(call_id, name)
            kind = TOOL_KINDS.get(name, ToolKind.OTHER)
            args = _arguments(fn.get("arguments"))
            out.append(
                part.tool_call(ToolCall(tool_call_id=call_id, name=name, kind=kind, input=args))
            )
        stop = str(m.get("finish_reason") or "")
        reply = AssistantMessage(model=model, content=blocks, stop_reason=stop)
        out.append(part.assistant_message(reply))
        return out


def _arguments(args: object) -> Raw:
    """A call's arguments: the JSON text as sent, or the value re-encoded."""
    if isinstance(args, str):
        return json_or_string(args)
    if args is None:
        return NO_RAW
    return Raw(msgspec.json.encode(args))


def _failed(content: str) -> bool:
    """Whether a tool's JSON result reports a failure (Hermes stores no error flag)."""
    if not content.startswith("{"):
        return False
    try:
        outcome = _decode_outcome(content.encode())
    except _DECODE_ERRORS:
        return False
    if outcome.error not in (None, "", False):
        return True
    if outcome.success is False:
        return True
    return isinstance(outcome.exit_code, int | float) and outcome.exit_code != 0


class HermesTail:
    """Follows a Hermes database as Hermes writes it: each poll re-reads the sessions that changed.

    Hermes inserts each message whole (an assistant's message once its reply
    is complete, a tool's result once it returns), so every row read is
    settled. A session is re-read when its message count, last message id or
    usage rows changed; the events not written before are returned. The usage
    rows, rewritten after every request, are written only at the stop (their
    sums are final then), as their events come last.
    """

    def __init__(self, adapter: HermesAdapter, connect: Any, path: str) -> None:
        self.adapter = adapter
        self.connect = connect
        self.path = path
        self.seen: dict[str, tuple[object, ...]] = {}
        self.shown: dict[str, int] = {}

    def watched(self) -> list[str]:
        """The database and its WAL."""
        return [self.path, self.path + "-wal"]

    def poll(self) -> list[tuple[str, list[Event]]]:
        """The events of the messages written since the last poll, per session."""
        return self._read(final=False)

    def flush(self) -> list[tuple[str, list[Event]]]:
        """At a stop: every event not written yet (the usage rows' included)."""
        return self._read(final=True)

    def _read(self, *, final: bool) -> list[tuple[str, list[Event]]]:
        conn = self.connect()
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("BEGIN")
            marks = {
                str(r[0]): (r[1], r[2])
                for r in conn.execute(
                    "SELECT s.id, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id),"
                    " (SELECT MAX(id) FROM messages m WHERE m.session_id = s.id) FROM sessions s"
                )
            }
            out = []
            for sid in sorted(marks):
                if not final and self.seen.get(sid) == marks[sid]:
                    continue
                self.seen[sid] = marks[sid]
                events = self.adapter.read_session(conn, sid).events
                if not final:
                    events = [
                        e
                        for e in events
                        if not (e.system is not None and e.system.subtype == "model_usage")
                    ]
                fresh = events[self.shown.get(sid, 0) :]
                self.shown[sid] = self.shown.get(sid, 0) + len(fresh)
                if fresh:
                    out.append((sid, fresh))
            return out
        finally:
            conn.close()
