"""The Crush adapter: sessions and messages of a ``crush.db``, one conversation per session.

**Records**, for accounting, are the session's messages in creation order,
numbered from 1; the session row is the ``session_meta`` (its provenance is
record 1, as the first message carries it).

Mapping decisions:

* The session row → ``session_meta``. A session with a parent is a
  subagent's: ``session_id`` is the parent's, ``subagent_id`` its own (Crush
  names it after the ``agent`` tool call that started it, so it is that call's
  id too), ``is_subagent`` set. The working directory is the folder holding
  ``.crush/`` (the database records none); Crush records no release.
* A ``user`` message → a ``user_message`` (``human``) of its text, image and
  file parts; a ``shell_command`` part (a ``!`` command) → a ``system`` event
  ``shell_command``.
* An ``assistant`` message → ``thinking`` for its reasoning, a ``tool_call``
  per ``tool_call`` part, then one ``assistant_message`` of its text with the
  message's model and its ``finish`` reason; a finish of ``error`` also gives
  a ``system`` event ``error`` with its message. A summary message
  (``is_summary_message``) → a ``system`` event ``summary``.
* A ``tool`` message → a ``tool_result`` per ``tool_result`` part.
* A ``system`` message → a ``system`` event ``system_message``.
* **Usage**: Crush keeps none per message. The session row's
  ``prompt_tokens`` and ``completion_tokens`` are its *last* request's (each
  request overwrites them; the prompt includes the cache reads), so they are
  the usage of the session's last assistant message; its ``cost`` is the
  running total of all requests (Crush's own figure, USD), to which each
  finished subagent's cost is added. That message's ``usage.cost`` is the
  session's own share: its cost less its subagents' in the same database
  (``usage.extra``: ``cost_scope: "session"`` and the row's ``session_cost``).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._rows_tail import RowsAdapter, RowsTail, session_prints
from agentminutes.harness._sqlite import last_reply
from agentminutes.harness._stamp import Stamp
from agentminutes.harness._whole_json import ms_time
from agentminutes.harness.base import (
    ConversationInfo,
    document_path,
    json_or_string,
    listed_title,
)
from agentminutes.harness.crush.vocabulary import HARNESS, PART_TYPES, TOOL_KINDS
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
    ToolKind,
    ToolResult,
    UserMessage,
)

if TYPE_CHECKING:
    from agentminutes.harness.base import Document

__all__ = ("CrushAdapter",)

#: The tables a database needs to be read as Crush's.
_TABLES: Final = frozenset({"sessions", "messages", "files"})


@dataclass(slots=True)
class _SessionRow:
    id: str
    parent: str
    title: str
    messages: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    created: int
    updated: int


@dataclass(slots=True)
class _MessageRow:
    id: str
    role: str
    parts: bytes
    model: str
    provider: str
    created: int
    finished: int | None
    summary: bool


class _Part(msgspec.Struct):
    type: str = ""
    data: Raw = NO_RAW


class _Data(msgspec.Struct):
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    id: str | None = None
    name: str | None = None
    input: str | None = None
    finished: bool | None = None
    tool_call_id: str | None = None
    content: str | None = None
    is_error: bool = False
    metadata: str | None = None
    reason: str | None = None
    message: str | None = None
    url: str | None = None
    command: str | None = None
    output: str | None = None
    exit_code: int | None = None
    MIMEType: str | None = None
    Path: str | None = None


_decode_parts = msgspec.json.Decoder(list[_Part]).decode
_decode_data = msgspec.json.Decoder(_Data).decode
_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)


def _when(value: int | None) -> str:
    """A Crush time (seconds; milliseconds in the earliest releases) as RFC 3339."""
    if not value:
        return ""
    return ms_time(value if value > 100_000_000_000 else value * 1000)


class CrushAdapter(RowsAdapter[_SessionRow, _MessageRow]):
    """Parses Crush databases, one session per conversation."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "0.43.0"
    tables: ClassVar[frozenset[str]] = _TABLES
    store_name: ClassVar[str] = "a Crush database"
    head_marks: ClassVar[tuple[bytes, ...]] = (b"parent_session_id", b"completion_tokens")

    # -- reading ------------------------------------------------------------------------

    def session_rows(self, conn: sqlite3.Connection) -> list[_SessionRow]:
        return [
            _SessionRow(
                id=str(r[0]),
                parent=r[1] or "",
                title=r[2] or "",
                messages=int(r[3] or 0),
                prompt_tokens=int(r[4] or 0),
                completion_tokens=int(r[5] or 0),
                cost=float(r[6] or 0.0),
                created=int(r[7] or 0),
                updated=int(r[8] or 0),
            )
            for r in conn.execute(
                "SELECT id, parent_session_id, title, message_count, prompt_tokens,"
                " completion_tokens, cost, created_at, updated_at FROM sessions"
                " ORDER BY created_at, rowid"
            )
        ]

    def message_rows(self, conn: sqlite3.Connection, session_id: str) -> list[_MessageRow]:
        columns = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
        provider = "provider" if "provider" in columns else "NULL"
        summary = "is_summary_message" if "is_summary_message" in columns else "0"
        return [
            _MessageRow(
                id=str(r[0]),
                role=str(r[1] or ""),
                parts=r[2].encode() if isinstance(r[2], str) else bytes(r[2] or b""),
                model=r[3] or "",
                provider=r[4] or "",
                created=int(r[5] or 0),
                finished=None if r[6] is None else int(r[6]),
                summary=bool(r[7]),
            )
            for r in conn.execute(
                f"SELECT id, role, parts, model, {provider}, created_at, finished_at, {summary}"
                " FROM messages WHERE session_id = ? ORDER BY created_at, rowid",
                (session_id,),
            )
        ]

    def row_info(self, row: _SessionRow) -> ConversationInfo:
        return ConversationInfo(
            id=row.id,
            title=listed_title(row.title),
            created=_when(row.created),
            updated=_when(row.updated),
            messages=row.messages,
        )

    def store_cwd(self, doc: Document) -> str:
        """The project folder a ``.crush`` folder holding the database stands in."""
        path = document_path(doc)
        folder = os.path.dirname(os.path.abspath(path))
        return os.path.dirname(folder) if os.path.basename(folder) == ".crush" else ""

    def events_for(
        self, rows: list[_SessionRow], cwd: str
    ) -> Callable[[_SessionRow, list[_MessageRow]], list[Event]]:
        """A session's events, its last reply taking the session's cost less its subagents'."""
        child_cost = _child_costs(rows)
        return lambda row, messages: self._build(row, messages, cwd, child_cost)

    def settled(self, messages: list[_MessageRow]) -> list[_MessageRow]:
        """The messages before the first reply still streaming."""
        for i, m in enumerate(messages):
            if not _settled(m):
                return messages[:i]
        return messages

    def tail(self, doc: Document) -> RowsTail:
        """Follow the database *doc* as Crush writes it (see :class:`RowsTail`).

        A reply is shown once finished and followed by another message (the
        session's last reply takes the session's usage, written after it);
        the stop shows the rest.
        """
        self._tail_cwd = self.store_cwd(doc)
        return RowsTail(self, doc.connect, document_path(doc))

    # -- following ----------------------------------------------------------------------

    def fingerprints(self, conn: sqlite3.Connection) -> dict[str, tuple[Any, ...]]:
        """Per session: its row, and its messages' count, last change and size."""
        return session_prints(
            conn,
            "SELECT id, title, prompt_tokens, completion_tokens, cost, updated_at FROM sessions",
            "SELECT session_id, COUNT(*), MAX(updated_at), SUM(LENGTH(CAST(parts AS BLOB))),"
            " COUNT(finished_at) FROM messages GROUP BY session_id",
        )

    # -- events -------------------------------------------------------------------------

    def _build(
        self,
        row: _SessionRow,
        messages: list[_MessageRow],
        cwd: str,
        child_cost: dict[str, float],
    ) -> list[Event]:
        meta = Meta(
            harness=HARNESS,
            harness_version=self.effective_version,
            session_id=row.parent or row.id,
            cwd=cwd,
        )
        if row.parent:
            meta.subagent_id = row.id
            meta.is_subagent = True
        raw = msgspec.json.encode(
            {
                "id": row.id,
                "parent_session_id": row.parent or None,
                "title": row.title,
                "message_count": row.messages,
                "prompt_tokens": row.prompt_tokens,
                "completion_tokens": row.completion_tokens,
                "cost": row.cost,
                "created_at": row.created,
                "updated_at": row.updated,
            }
        )
        prov = self.record_prov(Raw(raw), 1) if messages else None
        events = [Stamp(_when(row.created), prov, id=row.id).session_meta(meta)]
        for n, msg in enumerate(messages, 1):
            self._message(msg, n, events)
        reply = last_reply(events)
        if reply is not None and (row.prompt_tokens or row.completion_tokens or row.cost):
            own = round(max(0.0, row.cost - child_cost.get(row.id, 0.0)), 10)
            reply.usage = TokenUsage(
                input_tokens=row.prompt_tokens,
                output_tokens=row.completion_tokens,
                cost=own,
                extra={
                    "cost_scope": Raw(b'"session"'),
                    "session_cost": Raw(msgspec.json.encode(row.cost)),
                },
            )
        return events

    def _message(self, msg: _MessageRow, n: int, out: list[Event]) -> None:
        prov = self.record_prov(Raw(_record(msg)), n)
        said = Stamp(_when(msg.created), prov, id=msg.id)
        try:
            parts = _decode_parts(msg.parts) if msg.parts else []
            data = [_decode_data(p.data) if p.data else _Data() for p in parts]
        except _DECODE_ERRORS as exc:
            out.append(self.unknown_or_fail("message", _record(msg), n, f"malformed parts: {exc}"))
            return
        for p in parts:
            if p.type not in PART_TYPES:
                out.append(
                    self.unknown_or_fail(
                        f"part/{p.type}", _record(msg), n, f'unrecognized part type "{p.type}"'
                    )
                )
                return
        if msg.summary:
            out.append(said.system(SystemEvent(subtype="summary", text=_text(parts, data))))
            return
        if msg.role == "user":
            content: list[ContentBlock] = []
            for p, d in zip(parts, data, strict=True):
                if p.type == "text":
                    content.append(ContentBlock(kind="text", text=d.text or ""))
                elif p.type == "image_url":
                    content.append(ContentBlock(kind="image", uri=d.url or "", raw=p.data))
                elif p.type == "binary":
                    kind = "image" if (d.MIMEType or "").startswith("image/") else "resource"
                    content.append(
                        ContentBlock(kind=kind, mime_type=d.MIMEType or "", uri=d.Path or "")
                    )
                elif p.type == "shell_command":
                    shell = SystemEvent(
                        subtype="shell_command", text=d.command or "", details=p.data
                    )
                    out.append(said.system(shell))
            if content or not parts:
                out.append(
                    said.user_message(UserMessage(origin=Origin.HUMAN, content=content or None))
                )
            return
        if msg.role == "assistant":
            self._assistant(msg, parts, data, said, out)
            return
        if msg.role == "tool":
            for p, d in zip(parts, data, strict=True):
                if p.type != "tool_result":
                    continue
                call_id = d.tool_call_id or ""
                result = ToolResult(
                    tool_call_id=call_id,
                    tool_name=d.name or self.tool_names.get(call_id, ""),
                    is_error=d.is_error,
                    content=[ContentBlock(kind="text", text=d.content)] if d.content else None,
                    enrichment=Raw(msgspec.json.encode({"metadata": d.metadata}))
                    if d.metadata
                    else NO_RAW,
                )
                out.append(said.tool_result(result))
            return
        if msg.role == "system":
            text = _text(parts, data)
            out.append(said.system(SystemEvent(subtype="system_message", text=text)))
            return
        out.append(
            self.unknown_or_fail(
                f"message/{msg.role}", _record(msg), n, f'unrecognized message role "{msg.role}"'
            )
        )
        return

    def _assistant(
        self,
        msg: _MessageRow,
        parts: list[_Part],
        data: list[_Data],
        said: Stamp,
        out: list[Event],
    ) -> None:
        part = Stamp(said.timestamp, said.provenance, message_id=msg.id)
        texts: list[ContentBlock] = []
        stop = ""
        failure: _Data | None = None
        for p, d in zip(parts, data, strict=True):
            if p.type == "reasoning" and d.thinking:
                out.append(part.thinking(Thinking(text=d.thinking, signature=d.signature or "")))
            elif p.type == "tool_call":
                name = d.name or ""
                call_id = d.id or ""
                self.name_call(call_id, name)
                call = ToolCall(
                    tool_call_id=call_id,
                    name=name,
                    kind=TOOL_KINDS.get(name, ToolKind.OTHER),
                    input=_input(d.input),
                )
                out.append(part.tool_call(call))
            elif p.type == "text":
                texts.append(ContentBlock(kind="text", text=d.text or ""))
            elif p.type == "finish":
                stop = d.reason or ""
                if stop == "error":
                    failure = d
        whole = Stamp(said.timestamp, said.provenance, id=msg.id, message_id=msg.id)
        reply = AssistantMessage(model=msg.model, content=texts or None, stop_reason=stop)
        out.append(whole.assistant_message(reply))
        if failure is not None:
            text = failure.message or "error"
            out.append(part.system(SystemEvent(subtype="error", level="error", text=text)))


def _settled(msg: _MessageRow) -> bool:
    """A message that will not change: any but a reply still streaming (no finish yet)."""
    if msg.role != "assistant":
        return True
    return msg.finished is not None or b'"type":"finish"' in msg.parts


def _text(parts: list[_Part], data: list[_Data]) -> str:
    """A message's text parts, joined."""
    return "".join(d.text or "" for p, d in zip(parts, data, strict=True) if p.type == "text")


def _input(text: str | None) -> Raw:
    return json_or_string(text) if text else NO_RAW


def _record(msg: _MessageRow) -> bytes:
    return msgspec.json.encode(
        {
            "id": msg.id,
            "role": msg.role,
            "model": msg.model or None,
            "provider": msg.provider or None,
            "created_at": msg.created,
            "finished_at": msg.finished,
            "parts": Raw(msg.parts) if msg.parts else [],
        }
    )


def _child_costs(rows: list[_SessionRow]) -> dict[str, float]:
    """Per parent session: the cost of its subagents, which Crush adds to the parent's."""
    out: dict[str, float] = {}
    for r in rows:
        if r.parent and not r.id.startswith("title-"):
            out[r.parent] = out.get(r.parent, 0.0) + r.cost
    return out
