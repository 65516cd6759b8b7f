"""The Goose adapter: sessions and messages of ``sessions.db``, one conversation per session.

**Records**, for accounting, are the session's messages in creation order,
numbered from 1; the session row is the ``session_meta`` (its provenance is
record 1, as the first message carries it).

Mapping decisions:

* The session row → ``session_meta`` (its id and working directory). A
  ``sub_agent`` session is a subagent's (``is_subagent``, ``subagent_id`` its
  own id; Goose records no parent session in the row).
* A ``user`` message → a ``user_message`` of its text and images (``human``;
  ``harness`` when its metadata hides it from the person: context Goose
  added for the model); its ``toolResponse`` contents → ``tool_result``
  events (an ``error`` status, or ``isError``, is an error).
* An ``assistant`` message → ``thinking`` (``thinking`` and
  ``redactedThinking``), a ``tool_call`` per ``toolRequest`` (and
  ``frontendToolRequest``), then one ``assistant_message`` of its text, with
  the session's model (``model_config_json``).
* ``toolConfirmationRequest``, ``actionRequired`` and ``systemNotification``
  contents → ``system`` events of those names. A message only for the
  person's eyes (``agentVisible`` false) is also a ``system`` event
  (``ui_message``): the model never saw it.
* **Usage**: Goose keeps none per message; the session row holds its running
  totals (``accumulated_input_tokens``, ``accumulated_output_tokens``, and
  ``accumulated_cost`` where recorded). They are the usage of the session's
  last assistant message, marked ``scope: "session"`` in ``usage.extra``, so
  a session's sum is Goose's own total.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._content import item_block
from agentminutes.harness._rows_tail import RowsAdapter, RowsTail, session_prints
from agentminutes.harness._sqlite import last_reply
from agentminutes.harness._stamp import Stamp
from agentminutes.harness._whole_json import ms_time
from agentminutes.harness.base import ConversationInfo, document_path, listed_title
from agentminutes.harness.goose.vocabulary import CONTENT_TYPES, HARNESS, tool_kind
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    Meta,
    Origin,
    SystemEvent,
    Thinking,
    TokenUsage,
    ToolCall,
    ToolResult,
    UserMessage,
)

if TYPE_CHECKING:
    from agentminutes.harness.base import Document

__all__ = ("GooseAdapter",)

#: The tables a database needs to be read as Goose's.
_TABLES: Final = frozenset({"sessions", "messages", "schema_version"})


@dataclass(slots=True)
class _SessionRow:
    id: str
    name: str
    kind: str
    cwd: str
    created: str
    updated: str
    model_config: str
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    messages: int


@dataclass(slots=True)
class _MessageRow:
    rowid: int
    id: str
    role: str
    content: bytes
    created: int
    metadata: bytes


class _Content(msgspec.Struct, rename="camel"):
    type: str = ""
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    data: Raw = NO_RAW
    mime_type: str | None = None
    id: str | None = None
    tool_call: Raw = NO_RAW
    tool_result: Raw = NO_RAW
    tool_name: str | None = None
    msg: str | None = None


class _Call(msgspec.Struct):
    name: str | None = None
    arguments: Raw = NO_RAW


class _Outcome(msgspec.Struct):
    status: str | None = None
    value: Raw = NO_RAW
    error: str | None = None


class _CallResult(msgspec.Struct, rename="camel"):
    content: list[Raw] | None = None
    is_error: bool | None = None


class _Item(msgspec.Struct):
    type: str = ""
    text: str | None = None


class _Visibility(msgspec.Struct, rename="camel"):
    user_visible: bool = True
    agent_visible: bool = True


class _ModelConfig(msgspec.Struct):
    model_name: str | None = None


_decode_contents = msgspec.json.Decoder(list[Raw]).decode
_decode_content = msgspec.json.Decoder(_Content).decode
_decode_outcome = msgspec.json.Decoder(_Outcome).decode
_decode_call = msgspec.json.Decoder(_Call).decode
_decode_result = msgspec.json.Decoder(_CallResult | list[Raw]).decode
_decode_item = msgspec.json.Decoder(_Item).decode
_decode_visibility = msgspec.json.Decoder(_Visibility).decode
_decode_model = msgspec.json.Decoder(_ModelConfig).decode
_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)


def _sql_time(value: str) -> str:
    """SQLite's ``CURRENT_TIMESTAMP`` text (UTC) as RFC 3339."""
    value = (value or "").strip()
    if len(value) >= 19 and value[10] in " T":
        return value[:10] + "T" + value[11:19] + "Z"
    return ""


class GooseAdapter(RowsAdapter[_SessionRow, _MessageRow]):
    """Parses Goose's ``sessions.db``, one session per conversation."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "1.20.0"
    tables: ClassVar[frozenset[str]] = _TABLES
    store_name: ClassVar[str] = "a Goose database"
    head_marks: ClassVar[tuple[bytes, ...]] = (b"content_json", b"created_timestamp")

    # -- reading ------------------------------------------------------------------------

    def session_rows(self, conn: sqlite3.Connection) -> list[_SessionRow]:
        cols = _columns(conn, "sessions")

        def col(name: str, default: str = "NULL") -> str:
            return name if name in cols else default

        counts = {
            str(sid): int(n)
            for sid, n in conn.execute(
                "SELECT session_id, COUNT(*) FROM messages GROUP BY session_id"
            )
        }
        name = (
            "COALESCE(NULLIF(name, ''), description)"
            if "name" in cols
            else col("description", "''")
        )
        rows = conn.execute(
            f"SELECT id, {name}, {col('session_type', repr('user'))}, working_dir, created_at,"
            f" updated_at, {col('model_config_json')}, {col('accumulated_input_tokens')},"
            f" {col('accumulated_output_tokens')}, {col('accumulated_cost')}"
            " FROM sessions ORDER BY created_at, rowid"
        )
        return [
            _SessionRow(
                id=str(r[0]),
                name=r[1] or "",
                kind=r[2] or "user",
                cwd=r[3] or "",
                created=str(r[4] or ""),
                updated=str(r[5] or ""),
                model_config=r[6] or "",
                input_tokens=None if r[7] is None else int(r[7]),
                output_tokens=None if r[8] is None else int(r[8]),
                cost=None if r[9] is None else float(r[9]),
                messages=counts.get(str(r[0]), 0),
            )
            for r in rows
        ]

    def message_rows(self, conn: sqlite3.Connection, session_id: str) -> list[_MessageRow]:
        cols = _columns(conn, "messages")
        mid = "message_id" if "message_id" in cols else "NULL"
        meta = "metadata_json" if "metadata_json" in cols else "NULL"
        return [
            _MessageRow(
                rowid=int(r[0]),
                id=str(r[1] or f"msg_{session_id}_{r[0]}"),
                role=str(r[2] or ""),
                content=r[3].encode() if isinstance(r[3], str) else bytes(r[3] or b""),
                created=int(r[4] or 0),
                metadata=(r[5].encode() if isinstance(r[5], str) else bytes(r[5] or b"")),
            )
            for r in conn.execute(
                f"SELECT id, {mid}, role, content_json, created_timestamp, {meta}"
                " FROM messages WHERE session_id = ? ORDER BY id",
                (session_id,),
            )
        ]

    def row_info(self, row: _SessionRow) -> ConversationInfo:
        return ConversationInfo(
            id=row.id,
            title=listed_title(row.name),
            created=_sql_time(row.created),
            updated=_sql_time(row.updated),
            messages=row.messages,
        )

    def events_for(
        self, rows: list[_SessionRow], cwd: str
    ) -> Callable[[_SessionRow, list[_MessageRow]], list[Event]]:
        """Each session's events come from its own rows (Goose writes each message whole)."""
        return self._build

    def tail(self, doc: Document) -> RowsTail:
        """Follow the database *doc* as Goose writes it (see :class:`RowsTail`)."""
        return RowsTail(self, doc.connect, document_path(doc))

    # -- following ----------------------------------------------------------------------

    def fingerprints(self, conn: sqlite3.Connection) -> dict[str, tuple[Any, ...]]:
        """Per session: its row's change time and totals, its messages' count and size."""
        return session_prints(
            conn,
            "SELECT id, updated_at, accumulated_input_tokens, accumulated_output_tokens"
            " FROM sessions",
            "SELECT session_id, COUNT(*), MAX(id), SUM(LENGTH(CAST(content_json AS BLOB)))"
            " FROM messages GROUP BY session_id",
        )

    # -- events -------------------------------------------------------------------------

    def _build(self, row: _SessionRow, messages: list[_MessageRow]) -> list[Event]:
        meta = Meta(
            harness=HARNESS,
            harness_version=self.effective_version,
            session_id=row.id,
            cwd=row.cwd,
        )
        if row.kind == "sub_agent":
            meta.subagent_id = row.id
            meta.is_subagent = True
        model = ""
        if row.model_config:
            try:
                model = _decode_model(row.model_config.encode()).model_name or ""
            except _DECODE_ERRORS:
                model = ""
        raw = msgspec.json.encode(
            {
                "id": row.id,
                "name": row.name,
                "session_type": row.kind,
                "working_dir": row.cwd,
                "created_at": row.created,
                "accumulated_input_tokens": row.input_tokens,
                "accumulated_output_tokens": row.output_tokens,
                "accumulated_cost": row.cost,
            }
        )
        prov = self.record_prov(Raw(raw), 1) if messages else None
        events = [Stamp(_sql_time(row.created), prov, id=row.id).session_meta(meta)]
        for n, msg in enumerate(messages, 1):
            self._message(msg, n, model, events)
        reply = last_reply(events)
        if reply is not None and (row.input_tokens or row.output_tokens or row.cost):
            extra = {"scope": Raw(b'"session"')}
            reply.usage = TokenUsage(
                input_tokens=row.input_tokens or 0,
                output_tokens=row.output_tokens or 0,
                cost=row.cost,
                extra=extra,
            )
        return events

    def _message(self, msg: _MessageRow, n: int, model: str, out: list[Event]) -> None:
        record = _record(msg)
        prov = self.record_prov(Raw(record), n)
        ts = ms_time(msg.created * 1000) if msg.created else ""
        said = Stamp(ts, prov, id=msg.id)
        part = Stamp(ts, prov, message_id=msg.id)
        try:
            raws = _decode_contents(msg.content)
            contents = [_decode_content(r) for r in raws]
        except _DECODE_ERRORS as exc:
            out.append(self.unknown_or_fail("message", record, n, f"malformed content: {exc}"))
            return
        for c in contents:
            if c.type not in CONTENT_TYPES:
                out.append(
                    self.unknown_or_fail(
                        f"content/{c.type}", record, n, f'unrecognized content type "{c.type}"'
                    )
                )
                return
        if msg.role not in ("user", "assistant"):
            out.append(
                self.unknown_or_fail(
                    f"message/{msg.role}", record, n, f'unrecognized message role "{msg.role}"'
                )
            )
            return
        seen = _Visibility()
        if msg.metadata:
            try:
                seen = _decode_visibility(msg.metadata)
            except _DECODE_ERRORS:
                seen = _Visibility()
        if not seen.agent_visible:
            text = "\n".join(c.text or "" for c in contents if c.type == "text")
            shown = SystemEvent(subtype="ui_message", text=text, details=Raw(msg.content))
            out.append(said.system(shown))
            return
        texts: list[ContentBlock] = []
        for raw, c in zip(raws, contents, strict=True):
            if c.type == "text":
                texts.append(ContentBlock(kind="text", text=c.text or ""))
            elif c.type == "image":
                texts.append(ContentBlock(kind="image", mime_type=c.mime_type or "", raw=raw))
            elif c.type in ("thinking", "redactedThinking"):
                thought = Thinking(text=c.thinking or "", signature=c.signature or "")
                out.append(part.thinking(thought))
            elif c.type in ("toolRequest", "frontendToolRequest"):
                out.append(part.tool_call(self._call(c)))
            elif c.type == "toolResponse":
                out.append(said.tool_result(self._result(c)))
            else:
                text = c.msg or c.tool_name or ""
                out.append(part.system(SystemEvent(subtype=c.type, text=text, details=raw)))
        if msg.role == "user":
            if texts or not contents:
                origin = Origin.HUMAN if seen.user_visible else Origin.HARNESS
                out.append(said.user_message(UserMessage(origin=origin, content=texts or None)))
            return
        whole = Stamp(ts, prov, id=msg.id, message_id=msg.id)
        out.append(whole.assistant_message(AssistantMessage(model=model, content=texts or None)))

    def _call(self, c: _Content) -> ToolCall:
        name, args = "", NO_RAW
        if c.tool_call:
            try:
                outcome = _decode_outcome(c.tool_call)
                call = _decode_call(outcome.value) if outcome.value else _Call()
                name, args = call.name or "", call.arguments
            except _DECODE_ERRORS:
                pass
        call_id = c.id or ""
        self.name_call(call_id, name)
        return ToolCall(tool_call_id=call_id, name=name, kind=tool_kind(name), input=args or NO_RAW)

    def _result(self, c: _Content) -> ToolResult:
        call_id = c.id or ""
        failed = False
        content: list[ContentBlock] = []
        try:
            outcome = _decode_outcome(c.tool_result) if c.tool_result else _Outcome()
        except _DECODE_ERRORS:
            outcome = _Outcome()
        if outcome.status == "error":
            failed = True
            content.append(ContentBlock(kind="text", text=outcome.error or ""))
        elif outcome.value:
            try:
                value = _decode_result(outcome.value)
            except _DECODE_ERRORS:
                value = []
            items = value if isinstance(value, list) else (value.content or [])
            if not isinstance(value, list) and value.is_error:
                failed = True
            content.extend(item_block(item, _decode_item, image="image") for item in items)
        return ToolResult(
            tool_call_id=call_id,
            tool_name=self.tool_names.get(call_id, ""),
            is_error=failed,
            content=content or None,
        )


def _record(msg: _MessageRow) -> bytes:
    return msgspec.json.encode(
        {
            "id": msg.rowid,
            "message_id": msg.id,
            "role": msg.role,
            "created_timestamp": msg.created,
            "content_json": Raw(msg.content) if msg.content else [],
        }
    )


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}
