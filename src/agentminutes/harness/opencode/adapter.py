"""OpenCode (and its Kilo fork): the SQLite database, and the older JSON storage trees.

Where it lives: ``~/.local/share/opencode/opencode.db`` (1.2 and later; some
releases ``opencode-stable.db``; the Kilo CLI ``~/.local/share/kilo/kilo.db``),
usually in WAL mode. Three tables hold the conversations:

* ``session`` — ``id``, ``parent_id`` (a subagent's session names the session
  that started it), ``directory`` (the working directory), ``title``,
  ``version`` (the OpenCode release), ``time_created`` / ``time_updated`` (ms);
  newer releases add ``agent``, ``model``, ``cost`` and token totals;
* ``message`` — ``id``, ``session_id``, times, and ``data``: the message JSON
  (``role`` user or assistant; for an assistant ``modelID``, ``providerID``,
  ``cost``, ``tokens{input, output, reasoning, cache{read, write}}``, ``finish``,
  ``error``, ``time{created, completed}``);
* ``part`` — ``id``, ``message_id``, ``session_id``, times, and ``data``: one
  piece of a message, by ``type``: ``text``, ``reasoning``, ``tool`` (call and
  result in one part: ``callID``, ``tool``, ``state{status, input, output |
  error, metadata, title, time{start, end}}``), ``file``, ``agent``,
  ``subtask``, ``step-start``, ``step-finish`` (the step's tokens and cost),
  ``snapshot``, ``patch``, ``retry``, ``compaction``.

Other tables (projects, permissions, todos, the ``event`` log the session
tables are projected from) are not read; tables of accounts and credentials
never are. Rows of ``session_message`` (a newer projection of the same
conversation, written by releases that enable it) are counted as skips
``session_message/<type>``, after the messages and parts, so none goes unseen. Older releases wrote the same records as JSON files:
``storage/session/<project>/<session>.json``, ``storage/message/<session>/<msg>.json``,
``storage/part/<msg>/<part>.json`` (1.x), and before that
``project/<project>/storage/session/{info/<session>.json, message/<session>/<msg>.json,
part/<session>/<msg>/<part>.json}`` (0.x). Such a ``storage`` folder (or the data
folder holding it) is a source; a file inside it stands for its session.

One source holds many sessions: each is a conversation (``--conversation
ID``, ``--all``). **Records**, for accounting, are numbered from 1 per
session: each message (in creation order) followed by its parts (in id
order, which is creation order); the session row is the ``session_meta``.

Mapping decisions:

* The session row → ``session_meta`` (its id, directory, version; a session
  with a parent is a subagent: ``session_id`` is the parent's,
  ``subagent_id`` its own, ``is_subagent`` set).
* A user message → a ``user_message`` (``human``) of its text and file parts;
  text parts OpenCode marks ``synthetic`` (context it adds, such as a file's
  content for an ``@`` mention) form a second ``user_message`` (``harness``).
  ``agent``, ``subtask`` and ``compaction`` parts → ``system`` events.
* An assistant message (one model step) → ``thinking`` for reasoning parts,
  ``tool_call`` (and, once the tool has finished, ``tool_result``: ``output``
  or ``error``, the part's ``title``, ``metadata`` and ``time`` as enrichment)
  for tool parts, then one ``assistant_message`` of its text parts with model,
  finish reason and usage; an ``error`` adds a ``system`` event ``error``.
  ``retry`` and ``patch`` parts are ``system`` events; ``step-start``,
  ``step-finish`` (its tokens and cost are the message's) and ``snapshot``
  parts fold into their message: its event's provenance spans the message's
  record and all of its parts.
* **Tokens and cost**: ``input`` excludes the cache (``cache.read`` and
  ``cache.write`` are counted apart, as Anthropic does), so the prompt total
  adds them; ``output_tokens`` is ``output`` plus ``reasoning`` unless the
  message's ``total`` shows the reasoning already inside ``output``. ``cost``
  is kept as OpenCode reported it (``usage.cost``, summed in the totals).
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._shown import event_key
from agentminutes.harness._sqlite import SqliteAdapter, table_names
from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import (
    Confidence,
    ConversationInfo,
    DocumentSession,
    document_path,
    listed_title,
)
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    Meta,
    Origin,
    Provenance,
    SystemEvent,
    Thinking,
    TokenUsage,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)
from agentminutes.timestamps import format_ms

if TYPE_CHECKING:
    from agentminutes.harness.base import Document

__all__ = (
    "TOOL_KINDS",
    "DatabaseTail",
    "OpenCodeAdapter",
    "SessionRow",
    "build_session",
    "tree_files",
)

HARNESS: Final = "opencode"

#: Native tool names mapped onto ACP tool kinds; any other name (MCP tools) is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "read": ToolKind.READ,
    "write": ToolKind.EDIT,
    "edit": ToolKind.EDIT,
    "multiedit": ToolKind.EDIT,
    "patch": ToolKind.EDIT,
    "apply_patch": ToolKind.EDIT,
    "bash": ToolKind.EXECUTE,
    "glob": ToolKind.SEARCH,
    "grep": ToolKind.SEARCH,
    "list": ToolKind.SEARCH,
    "ls": ToolKind.SEARCH,
    "codesearch": ToolKind.SEARCH,
    "lsp": ToolKind.SEARCH,
    "webfetch": ToolKind.FETCH,
    "websearch": ToolKind.FETCH,
    "todowrite": ToolKind.THINK,
    "todoread": ToolKind.THINK,
    "plan_enter": ToolKind.SWITCH_MODE,
    "plan_exit": ToolKind.SWITCH_MODE,
}

#: Part types that become events of their own, or fold into their message.
_PART_TYPES: Final = frozenset(
    {
        "text",
        "reasoning",
        "tool",
        "file",
        "agent",
        "subtask",
        "step-start",
        "step-finish",
        "snapshot",
        "patch",
        "retry",
        "compaction",
    }
)
#: Part types that are bookkeeping whose content is elsewhere (folded into their message).
_SKIPPED_PARTS: Final = frozenset({"step-start", "step-finish", "snapshot"})
#: Tool states after which the tool has a result.
_FINISHED: Final = frozenset({"completed", "error"})

#: The id of a storage tree file: OpenCode's prefixed ids (session, message, part).
_TREE_ID: Final = re.compile(rb'^\s*\{\s*"id"\s*:\s*"(?:ses|msg|prt)_[0-9a-zA-Z]+"')

#: The tables a database needs to be read as OpenCode's.
_TABLES: Final = frozenset({"session", "message", "part"})


@dataclass(slots=True)
class SessionRow:
    """A session as either storage holds it: the row's fields (or the info file's)."""

    id: str
    parent_id: str = ""
    directory: str = ""
    title: str = ""
    version: str = ""
    created_ms: int = 0
    updated_ms: int = 0
    raw: bytes = b""
    #: For a storage tree: the session's info file (what ``sessions`` lists as its path).
    path: str = ""

    def meta(self, version: str = "") -> Meta:
        """The session's ``session_meta`` (a subagent's names its parent's session)."""
        meta = Meta(
            harness=HARNESS,
            harness_version=self.version or version,
            session_id=self.parent_id or self.id,
            cwd=self.directory,
        )
        if self.parent_id:
            meta.subagent_id = self.id
            meta.is_subagent = True
        return meta

    def started(self) -> str:
        """When the session was created (RFC 3339)."""
        return format_ms(self.created_ms)

    def updated(self) -> str:
        """When the session was last updated (RFC 3339)."""
        return format_ms(self.updated_ms)


@dataclass(slots=True)
class Row:
    """One message or part: its id, its owner, its creation time and its JSON."""

    id: str
    owner: str
    created_ms: int
    data: bytes


@dataclass(slots=True)
class MessageRows:
    """A message with its parts, in order."""

    message: Row
    parts: list[Row] = field(default_factory=list)


class _Time(msgspec.Struct):
    created: int | float | None = None
    completed: int | float | None = None
    start: int | float | None = None
    end: int | float | None = None


class _Cache(msgspec.Struct):
    read: int = 0
    write: int = 0


class _Tokens(msgspec.Struct):
    input: int = 0
    output: int = 0
    reasoning: int = 0
    total: int | None = None
    cache: _Cache | None = None


class _Message(msgspec.Struct, rename="camel"):
    role: str | None = None
    time: _Time | None = None
    model_id: str | None = msgspec.field(default=None, name="modelID")
    provider_id: str | None = msgspec.field(default=None, name="providerID")
    cost: float | None = None
    tokens: _Tokens | None = None
    finish: str | None = None
    error: Raw = NO_RAW
    path: Raw = NO_RAW
    session_id: str | None = msgspec.field(default=None, name="sessionID")
    id: str | None = None


class _State(msgspec.Struct):
    status: str | None = None
    input: Raw = NO_RAW
    output: Raw = NO_RAW
    error: Raw = NO_RAW
    title: Raw = NO_RAW
    metadata: Raw = NO_RAW
    time: Raw = NO_RAW


class _Part(msgspec.Struct, rename="camel"):
    type: str | None = None
    text: str | None = None
    synthetic: bool | None = None
    ignored: bool | None = None
    time: _Time | None = None
    call_id: str | None = msgspec.field(default=None, name="callID")
    tool: str | None = None
    state: _State | None = None
    mime: str | None = None
    url: str | None = None
    filename: str | None = None
    name: str | None = None
    description: str | None = None
    agent: str | None = None
    error: Raw = NO_RAW
    auto: bool | None = None
    files: Raw = NO_RAW


class _ErrorShape(msgspec.Struct):
    name: str | None = None
    data: Raw = NO_RAW


class _ErrorData(msgspec.Struct):
    message: str | None = None


class _Info(msgspec.Struct, rename="camel"):
    """A session info file of the JSON trees."""

    id: str | None = None
    parent_id: str | None = msgspec.field(default=None, name="parentID")
    directory: str | None = None
    title: str | None = None
    version: str | None = None
    time: _Time | None = None


class _Owned(msgspec.Struct, rename="camel"):
    id: str | None = None
    session_id: str | None = msgspec.field(default=None, name="sessionID")
    message_id: str | None = msgspec.field(default=None, name="messageID")
    time: _Time | None = None


_decode_message = msgspec.json.Decoder(_Message).decode
_decode_part = msgspec.json.Decoder(_Part).decode
_decode_error = msgspec.json.Decoder(_ErrorShape).decode
_decode_error_data = msgspec.json.Decoder(_ErrorData).decode
_decode_info = msgspec.json.Decoder(_Info).decode
_decode_owned = msgspec.json.Decoder(_Owned).decode
_decode_str = msgspec.json.Decoder(str).decode
_decode_time = msgspec.json.Decoder(_Time).decode
_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)


#: Epoch milliseconds as RFC 3339 (the name Cline and older callers import).
ms_rfc3339 = format_ms


# -- the two storages --------------------------------------------------------------------


class _Database:
    """Sessions read from the SQLite tables, one session's rows at a time."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        columns = {r[1] for r in conn.execute("PRAGMA table_info(session)")}
        self.has_parent = "parent_id" in columns
        self.has_directory = "directory" in columns
        self.has_v2 = "session_message" in table_names(conn)

    def v2_types(self, session_id: str) -> list[str]:
        """The types of the session's rows in ``session_message`` (the newer projection)."""
        if not self.has_v2:
            return []
        return [
            str(t)
            for (t,) in self.conn.execute(
                "SELECT type FROM session_message WHERE session_id = ? ORDER BY time_created, id",
                (session_id,),
            )
        ]

    def sessions(self) -> list[SessionRow]:
        parent = "parent_id" if self.has_parent else "NULL"
        directory = "directory" if self.has_directory else "''"
        rows = self.conn.execute(
            f"SELECT id, {parent}, {directory}, title, version, time_created, time_updated"
            " FROM session ORDER BY time_created, id"
        ).fetchall()
        return [
            SessionRow(
                id=str(r[0]),
                parent_id=r[1] or "",
                directory=r[2] or "",
                title=r[3] or "",
                version=r[4] or "",
                created_ms=int(r[5] or 0),
                updated_ms=int(r[6] or 0),
            )
            for r in rows
        ]

    def message_counts(self) -> dict[str, int]:
        return {
            str(sid): int(n)
            for sid, n in self.conn.execute(
                "SELECT session_id, COUNT(*) FROM message GROUP BY session_id"
            )
        }

    def messages(self, session_id: str) -> list[MessageRows]:
        out: dict[str, MessageRows] = {}
        for mid, created, data in self.conn.execute(
            "SELECT id, time_created, data FROM message WHERE session_id = ?"
            " ORDER BY time_created, id",
            (session_id,),
        ):
            out[mid] = MessageRows(Row(mid, session_id, int(created or 0), _bytes(data)))
        for pid, mid, created, data in self.conn.execute(
            "SELECT id, message_id, time_created, data FROM part WHERE session_id = ?"
            " ORDER BY message_id, id",
            (session_id,),
        ):
            owner = out.get(mid)
            if owner is not None:
                owner.parts.append(Row(pid, mid, int(created or 0), _bytes(data)))
        return list(out.values())


def _bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value or "").encode()


class _Tree:
    """Sessions read from a JSON storage tree (or several, under a data folder)."""

    def __init__(self, doc: Document, roots: list[str]) -> None:
        self.doc = doc
        #: Each storage root, with its layout: "1" (storage/session/<project>/…) or "0".
        self.roots = [(r, "0" if self._is_legacy(r) else "1") for r in roots]
        self._where: dict[str, tuple[str, str]] = {}

    def _abs(self, rel: str) -> str:
        base = getattr(self.doc, "path", None) or ""
        return os.path.join(base, rel) if base else rel

    def _is_legacy(self, root: str) -> bool:
        return any(n == "info" and d for n, d in self.doc.entries(_join(root, "session")))

    def sessions(self) -> list[SessionRow]:
        found: list[SessionRow] = []
        for root, layout in self.roots:
            folders = (
                [_join(root, "session", "info")]
                if layout == "0"
                else [
                    _join(root, "session", name)
                    for name, is_dir in self.doc.entries(_join(root, "session"))
                    if is_dir
                ]
            )
            for folder in folders:
                for name, is_dir in self.doc.entries(folder):
                    if is_dir or not name.endswith(".json"):
                        continue
                    raw = self.doc.read(_join(folder, name)) or b""
                    try:
                        info = _decode_info(raw)
                    except _DECODE_ERRORS:
                        info = _Info()
                    sid = info.id or name[: -len(".json")]
                    t = info.time or _Time()
                    found.append(
                        SessionRow(
                            id=sid,
                            parent_id=info.parent_id or "",
                            directory=info.directory or "",
                            title=info.title or "",
                            version=info.version or "",
                            created_ms=int(t.created or 0),
                            updated_ms=int(t.completed or t.end or _updated(raw) or 0),
                            raw=raw,
                            path=self._abs(_join(folder, name)),
                        )
                    )
                    self._where[sid] = (root, layout)
        found.sort(key=lambda s: (s.created_ms, s.id))
        return found

    def message_counts(self) -> dict[str, int]:
        if not self._where:
            self.sessions()
        return {sid: len(self._message_files(sid)) for sid in self._where}

    def _message_files(self, session_id: str) -> list[str]:
        root, layout = self._where.get(session_id, (self.roots[0][0], self.roots[0][1]))
        folder = (
            _join(root, "session", "message", session_id)
            if layout == "0"
            else _join(root, "message", session_id)
        )
        return [
            _join(folder, n)
            for n, is_dir in self.doc.entries(folder)
            if not is_dir and n.endswith(".json")
        ]

    def messages(self, session_id: str) -> list[MessageRows]:
        if not self._where:
            self.sessions()
        root, layout = self._where.get(session_id, (self.roots[0][0], self.roots[0][1]))
        out: list[MessageRows] = []
        for path in self._message_files(session_id):
            raw = self.doc.read(path) or b""
            mid = os.path.basename(path)[: -len(".json")]
            created = _created(raw)
            msg = MessageRows(Row(mid, session_id, created, raw))
            folder = (
                _join(root, "session", "part", session_id, mid)
                if layout == "0"
                else _join(root, "part", mid)
            )
            for name, is_dir in self.doc.entries(folder):
                if not is_dir and name.endswith(".json"):
                    praw = self.doc.read(_join(folder, name)) or b""
                    msg.parts.append(Row(name[: -len(".json")], mid, created, praw))
            out.append(msg)
        out.sort(key=lambda m: (m.message.created_ms, m.message.id))
        return out


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


def _created(raw: bytes) -> int:
    try:
        t = _decode_owned(raw).time
    except _DECODE_ERRORS:
        return 0
    return int((t.created or t.start or 0) if t is not None else 0)


def _updated(raw: bytes) -> int:
    try:
        info = msgspec.json.decode(raw, type=dict[str, Raw])
        t = msgspec.json.decode(info.get("time", b"{}"), type=dict[str, int | float])
    except (*_DECODE_ERRORS, TypeError):
        return 0
    return int(t.get("updated", 0))


# -- the adapter ---------------------------------------------------------------------------


class OpenCodeAdapter(SqliteAdapter):
    """Parses OpenCode (and Kilo) databases and JSON storage trees, one session per conversation."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "1.18.33"
    containers: ClassVar[frozenset[str]] = frozenset({"sqlite", "folder", "json"})
    tables: ClassVar[frozenset[str]] = _TABLES
    store_name: ClassVar[str] = "an OpenCode database"

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        if head.startswith(b"SQLite format 3\x00"):
            if b"CREATE TABLE `part`" in head and b"`message_id`" in head:
                return Confidence.CERTAIN
            return Confidence.NO_MATCH
        start = head.lstrip()[:1]
        if start != b"{":
            return Confidence.NO_MATCH
        # A file of a storage tree: a session info, a message or a part, by its id.
        if _TREE_ID.search(head, 0, 4096):
            return Confidence.POSSIBLE
        return Confidence.NO_MATCH

    @classmethod
    def sniff_folder(cls, names: frozenset[str]) -> Confidence:
        # A storage root holds session/ (and, from 1.0, message/ and part/ beside it);
        # the data folder holds storage/ or, before 1.0, project/<project>/storage/.
        if "session" in names or "storage" in names or "project" in names:
            return Confidence.POSSIBLE
        return Confidence.NO_MATCH

    @classmethod
    def folder_transcript(cls, folder: str, names: frozenset[str]) -> str | None:
        # Narrower than sniff_folder: only a storage root itself is one source (the data
        # folder above it holds databases and logs too); its first session file stands for it.
        if os.path.basename(folder) != "storage" or "session" not in names:
            return None
        for rel in ("session/info", "session"):
            for sub, _dirs, files in sorted(os.walk(os.path.join(folder, rel))):
                for name in sorted(files):
                    if name.endswith(".json"):
                        return os.path.join(sub, name)
        return None

    @classmethod
    def folder_of(cls, path: str, head: bytes) -> tuple[str, str] | None:
        parts = path.replace(os.sep, "/").split("/")
        if "storage" not in parts:
            return None
        at = len(parts) - 1 - parts[::-1].index("storage")
        root = "/".join(parts[: at + 1]) or "/"
        rest = parts[at + 1 :]
        stem = rest[-1][: -len(".json")] if rest and rest[-1].endswith(".json") else ""
        session = ""
        if rest[:2] == ["session", "info"] or (rest[:1] == ["session"] and len(rest) == 3):
            session = stem
        elif (rest[:2] == ["session", "message"] and len(rest) == 4) or (
            rest[:2] == ["session", "part"] and len(rest) == 5
        ):
            session = rest[2]
        elif rest[:1] == ["message"] and len(rest) == 3:
            session = rest[1]
        else:
            try:
                session = _decode_owned(head).session_id or ""
            except _DECODE_ERRORS:
                session = ""
        return root, session

    # -- reading ------------------------------------------------------------------------

    def _store(self, doc: Document) -> tuple[_Database | _Tree, sqlite3.Connection | None]:
        if getattr(doc, "container", "") == "folder":
            names = {n for n, _ in doc.entries()}
            if "session" in names:
                roots = [""]
            else:
                roots = ["storage"] if "storage" in names else []
                for project, is_dir in doc.entries("project"):
                    if is_dir and any(n == "storage" for n, _ in doc.entries(f"project/{project}")):
                        roots.append(f"project/{project}/storage")
            if not roots:
                raise self.error("no OpenCode storage tree in this folder", 0)
            return _Tree(doc, roots), None
        if getattr(doc, "container", "") == "json":
            raise self.error(
                "a file of an OpenCode storage tree is read with its tree; give its folder", 0
            )
        conn = self.open_store(doc)
        return _Database(conn), conn

    def tail(self, doc: Document) -> DatabaseTail:
        """Follow the database *doc* as OpenCode writes it (see :class:`DatabaseTail`)."""
        if getattr(doc, "container", "") != "sqlite":
            raise self.error(
                "only the database is followed; a storage tree is not written any more", 0
            )
        return DatabaseTail(self, doc.connect, document_path(doc))

    def session_rows(self, doc: Document) -> list[SessionRow]:
        """The sessions of *doc* as stored (for ``sessions``: identity without parsing)."""
        store, conn = self._store(doc)
        with self.reading(conn):
            return store.sessions()

    def conversations(self, doc: Document) -> list[ConversationInfo]:
        store, conn = self._store(doc)
        with self.reading(conn):
            counts = store.message_counts()
            return [
                ConversationInfo(
                    id=s.id,
                    title=listed_title(s.title),
                    created=format_ms(s.created_ms),
                    updated=format_ms(s.updated_ms),
                    messages=counts.get(s.id, 0),
                )
                for s in store.sessions()
            ]

    def sessions(self, doc: Document, only: str | None = None) -> Iterator[DocumentSession]:
        store, conn = self._store(doc)
        with self.reading(conn):
            for row in store.sessions():
                if only is not None and row.id != only:
                    continue
                self.begin(row.id)
                self.version = row.version
                extra = store.v2_types(row.id) if isinstance(store, _Database) else []
                yield build_session(self, row, store.messages(row.id), extra)


def build_session(
    adapter: OpenCodeAdapter,
    row: SessionRow,
    messages: list[MessageRows],
    v2: list[str] | None = None,
) -> DocumentSession:
    """One session's events from its rows (the adapter's ``begin`` already called).

    *v2* are the types of the session's ``session_message`` rows: records after
    the messages and parts, counted as skips (``session_message/<type>``).
    """
    builder = _Builder(adapter)
    events = builder.session(row, messages)
    for kind in v2 or ():
        builder.n += 1
        adapter.skip(f"session_message/{kind}", builder.n)
    return DocumentSession(
        conversation=ConversationInfo(
            id=row.id,
            title=listed_title(row.title),
            created=format_ms(row.created_ms),
            updated=format_ms(row.updated_ms),
            messages=len(messages),
        ),
        events=events,
        skipped=adapter.skipped,
    )


class _Builder:
    """Turns one session's records into events, numbering the records as it goes."""

    def __init__(self, adapter: OpenCodeAdapter) -> None:
        self.adapter = adapter
        self.n = 0
        self.events: list[Event] = []
        self.cwd = ""

    def session(self, row: SessionRow, messages: list[MessageRows]) -> list[Event]:
        self.n = 0
        meta = row.meta(self.adapter.options.harness_version)
        raw = row.raw or msgspec.json.encode(
            {
                "id": row.id,
                "parent_id": row.parent_id or None,
                "directory": row.directory,
                "title": row.title,
                "version": row.version,
                "time_created": row.created_ms,
                "time_updated": row.updated_ms,
            }
        )
        prov = self.adapter.record_prov(Raw(raw), 1) if messages else None
        self.events.append(Stamp(format_ms(row.created_ms), prov, id=row.id).session_meta(meta))
        for msg in messages:
            self.message(msg)
        if not meta.cwd and self.cwd:
            meta.cwd = self.cwd  # 0.x trees record the directory on assistant messages only
        return self.events

    def _reject(self, record_type: str, raw: bytes, reason: str) -> None:
        self.events.append(self.adapter.unknown_or_fail(record_type, raw, self.n, reason))

    def message(self, msg: MessageRows) -> None:
        self.n += 1
        first = self.n
        raw = msg.message.data
        try:
            m = _decode_message(raw)
        except _DECODE_ERRORS as exc:
            self._reject("message", raw, f"malformed message {msg.message.id}: {exc}")
            for _ in msg.parts:
                self.n += 1
                self.adapter.skip("part/of_rejected_message", self.n)
            return
        role = m.role or ""
        if role not in ("user", "assistant"):
            self._reject(f"message/{role}", raw, f'unrecognized message role "{role}"')
            for _ in msg.parts:
                self.n += 1
                self.adapter.skip("part/of_rejected_message", self.n)
            return
        if not self.cwd and m.path:
            try:
                self.cwd = _decode_str(msgspec.json.decode(m.path, type=dict[str, Raw])["cwd"])
            except (*_DECODE_ERRORS, KeyError, TypeError):
                pass
        ts = format_ms((m.time.created if m.time else None) or msg.message.created_ms)
        parts: list[tuple[int, Row, _Part]] = []
        for prow in msg.parts:
            self.n += 1
            try:
                part = _decode_part(prow.data)
            except _DECODE_ERRORS as exc:
                self._reject("part", prow.data, f"malformed part {prow.id}: {exc}")
                continue
            ptype = part.type or ""
            if ptype not in _PART_TYPES:
                self._reject(f"part/{ptype}", prow.data, f'unrecognized part type "{ptype}"')
                continue
            parts.append((self.n, prow, part))
        if role == "user":
            self._user(msg.message.id, first, raw, ts, parts)
        else:
            self._assistant(msg.message.id, first, raw, ts, m, parts)

    def _prov(self, raw: bytes, line: int, end: int = 0) -> Provenance:
        return self.adapter.record_prov(Raw(raw), line, end)

    def _part_ts(self, part: _Part, row: Row, fallback: str) -> str:
        t = part.time
        return format_ms((t.start if t else None) or row.created_ms) or fallback

    def _user(
        self, mid: str, first: int, raw: bytes, ts: str, parts: list[tuple[int, Row, _Part]]
    ) -> None:
        human: list[ContentBlock] = []
        injected: list[ContentBlock] = []
        injected_start = injected_end = 0
        start = len(self.events)
        for n, prow, part in parts:
            ptype = part.type
            if ptype == "text":
                if part.ignored:
                    continue  # shown, never sent: folds into the message
                block = ContentBlock(kind="text", text=part.text or "")
                if part.synthetic:
                    injected.append(block)
                    injected_start = injected_start or n
                    injected_end = n
                else:
                    human.append(block)
            elif ptype == "file":
                human.append(_file_block(part, prow.data))
            elif ptype in _SKIPPED_PARTS:
                continue  # bookkeeping: folds into the message
            else:
                self._system_part(part, prow, n, ts)
        # The prompt first, then what its parts asked for (an agent, a compaction …).
        prompt = UserMessage(origin=Origin.HUMAN, content=human or None)
        self.events.insert(
            start, Stamp(ts, self._prov(raw, first, self.n), id=mid).user_message(prompt)
        )
        if injected:
            added = Stamp(ts, Provenance(line=injected_start, end_line=injected_end), id=mid)
            message = UserMessage(origin=Origin.HARNESS, content=injected)
            self.events.insert(start + 1, added.user_message(message))

    def _assistant(
        self,
        mid: str,
        first: int,
        raw: bytes,
        ts: str,
        m: _Message,
        parts: list[tuple[int, Row, _Part]],
    ) -> None:
        blocks: list[ContentBlock] = []
        for n, prow, part in parts:
            ptype = part.type
            if ptype == "text":
                if part.text and not part.ignored:
                    blocks.append(ContentBlock(kind="text", text=part.text))
            elif ptype == "reasoning":
                at = self._part_ts(part, prow, ts)
                stamp = Stamp(at, self._prov(prow.data, n), id=prow.id, message_id=mid)
                self.events.append(stamp.thinking(Thinking(text=part.text or "")))
            elif ptype == "tool":
                self._tool(mid, part, prow, n, ts)
            elif ptype == "file":
                blocks.append(_file_block(part, prow.data))
            elif ptype not in _SKIPPED_PARTS:  # bookkeeping parts fold into the message
                self._system_part(part, prow, n, ts)
        completed = format_ms(m.time.completed if m.time else None) or ts
        reply = AssistantMessage(
            model=m.model_id or "",
            content=blocks or None,
            stop_reason=m.finish or "",
            usage=_usage(m),
        )
        whole = Stamp(completed, self._prov(raw, first, self.n), id=mid, message_id=mid)
        self.events.append(whole.assistant_message(reply))
        if m.error:
            text = ""
            try:
                err = _decode_error(m.error)
                data = _decode_error_data(err.data) if err.data else _ErrorData()
                text = data.message or err.name or ""
            except _DECODE_ERRORS:
                pass
            failure = SystemEvent(subtype="error", level="error", text=text, details=m.error)
            stamp = replace(whole, provenance=Provenance(line=first, end_line=first))
            self.events.append(stamp.system(failure))

    def _tool(self, mid: str, part: _Part, prow: Row, n: int, ts: str) -> None:
        state = part.state or _State()
        call_id = part.call_id or prow.id
        name = part.tool or ""
        try:
            times = _decode_time(state.time) if state.time else _Time()
        except _DECODE_ERRORS:
            times = _Time()
        started = format_ms(times.start) or ts
        kind = TOOL_KINDS.get(name, ToolKind.OTHER)
        call = ToolCall(tool_call_id=call_id, name=name, kind=kind, input=state.input or NO_RAW)
        self.events.append(
            Stamp(started, self._prov(prow.data, n), id=prow.id, message_id=mid).tool_call(call)
        )
        if state.status not in _FINISHED:
            return
        failed = state.status == "error"
        value = state.error if failed else state.output
        content: list[ContentBlock] = []
        if value:
            try:
                text = _decode_str(value)
                if text:
                    content.append(ContentBlock(kind="text", text=text))
            except _DECODE_ERRORS:
                content.append(ContentBlock(kind="other", raw=value))
        pairs = (("title", state.title), ("metadata", state.metadata), ("time", state.time))
        sidecar = {key: raw for key, raw in pairs if raw}
        ended = format_ms(times.end) or started
        result = ToolResult(
            tool_call_id=call_id,
            tool_name=name,
            is_error=failed,
            content=content or None,
            enrichment=Raw(msgspec.json.encode(sidecar)) if sidecar else NO_RAW,
        )
        self.events.append(
            Stamp(ended, self._prov(prow.data, n), id=prow.id, message_id=mid).tool_result(result)
        )

    def _system_part(self, part: _Part, prow: Row, n: int, ts: str) -> None:
        ptype = part.type or ""
        text = {
            "agent": part.name,
            "subtask": part.description,
            "retry": _error_text(part.error),
            "compaction": "auto" if part.auto else "",
        }.get(ptype, "")
        level = "warning" if ptype == "retry" else ""
        said = SystemEvent(subtype=ptype, level=level, text=text or "", details=Raw(prow.data))
        stamp = Stamp(self._part_ts(part, prow, ts), self._prov(prow.data, n), id=prow.id)
        self.events.append(stamp.system(said))


def _error_text(raw: Raw) -> str:
    if not raw:
        return ""
    try:
        err = _decode_error(raw)
        data = _decode_error_data(err.data) if err.data else _ErrorData()
    except _DECODE_ERRORS:
        return ""
    return data.message or err.name or ""


def _file_block(part: _Part, raw: bytes) -> ContentBlock:
    mime = part.mime or ""
    if mime.startswith("image/"):
        return ContentBlock(kind="image", mime_type=mime, uri=part.url or "", raw=Raw(raw))
    return ContentBlock(kind="resource", mime_type=mime, uri=part.url or "", raw=Raw(raw))


def _usage(m: _Message) -> TokenUsage | None:
    t = m.tokens
    if t is None:
        return None
    cache = t.cache or _Cache()
    output = t.output
    inside = (
        t.reasoning
        and t.total is not None
        and (t.total == t.input + t.output + cache.read + cache.write)
    )
    if not inside:
        output += t.reasoning
    extra: dict[str, Raw] = {"reasoning": Raw(msgspec.json.encode(t.reasoning))}
    if t.total is not None:
        extra["total"] = Raw(msgspec.json.encode(t.total))
    if m.provider_id:
        extra["providerID"] = Raw(msgspec.json.encode(m.provider_id))
    return TokenUsage(
        input_tokens=t.input,
        output_tokens=output,
        cache_read_input_tokens=cache.read,
        cache_creation_input_tokens=cache.write,
        cost=m.cost,
        extra=extra,
    )


def tree_files(info_path: str, session_id: str) -> list[str]:
    """The message and part files of the storage-tree session whose info file is *info_path*."""
    parts = info_path.replace(os.sep, "/").split("/")
    if "storage" not in parts:
        return []
    at = len(parts) - 1 - parts[::-1].index("storage")
    root = "/".join(parts[: at + 1])
    legacy = parts[at + 1 : at + 3] == ["session", "info"]
    messages = (
        os.path.join(root, "session", "message", session_id)
        if legacy
        else os.path.join(root, "message", session_id)
    )
    found: list[str] = []
    try:
        names = sorted(os.listdir(messages))
    except OSError:
        return []
    for name in names:
        if not name.endswith(".json"):
            continue
        found.append(os.path.join(messages, name))
        mid = name[: -len(".json")]
        folder = (
            os.path.join(root, "session", "part", session_id, mid)
            if legacy
            else os.path.join(root, "part", mid)
        )
        try:
            found.extend(os.path.join(folder, p) for p in sorted(os.listdir(folder)))
        except OSError:
            continue
    return found


# -- following a live database ---------------------------------------------------------------


class DatabaseTail:
    """Follows an OpenCode database as OpenCode writes it: new and changed rows, per session.

    Each :meth:`poll` opens the database read-only (as :func:`connect_readonly`
    in the pipeline does: nothing is written beside it, OpenCode is never
    blocked), reads the rows inserted since the last poll (by ``rowid``, which
    SQLite assigns in increasing order) and re-reads only the rows that may
    still change: the parts of messages not finished yet, and those messages.
    The database is never read whole again. Each changed session is rebuilt
    from the rows kept in memory with the same rules as ``convert``, and the
    events not written before are returned, in order, up to the first one that
    is not settled yet (a message still streaming, a tool still running).
    """

    def __init__(self, adapter: OpenCodeAdapter, connect: Any, path: str) -> None:
        self.adapter = adapter
        self.path = path
        #: Opens a fresh read-only connection (a callable, so each poll sees new commits).
        self.connect = connect
        self.sessions: dict[str, SessionRow] = {}
        self.messages: dict[str, dict[str, Row]] = {}
        self.parts: dict[str, dict[str, Row]] = {}
        self.last_rowid = {"session": 0, "message": 0, "part": 0}
        #: Ids of messages that may still change (not completed).
        self.open: set[str] = set()
        self.shown: dict[str, set[str]] = {}

    def watched(self) -> list[str]:
        """The files whose changes mean new commits: the database and its WAL."""
        return [self.path, self.path + "-wal"]

    def poll(self) -> list[tuple[str, list[Event]]]:
        """The events that became settled since the last poll, per session id."""
        conn = self.connect()
        try:
            # One read transaction: the tables are read in one snapshot. Read statement
            # by statement, the writer commits in between, and a part read cut short
            # before its message is seen would never be read again.
            conn.execute("BEGIN")
            changed = self._read(conn)
        finally:
            conn.close()
        return [(sid, self._news(sid, final=False)) for sid in sorted(changed)]

    def flush(self) -> list[tuple[str, list[Event]]]:
        """At a stop: every event not written yet, settled or not."""
        return [(sid, self._news(sid, final=True)) for sid in sorted(self.sessions)]

    # -- reading ----------------------------------------------------------------------

    def _read(self, conn: sqlite3.Connection) -> set[str]:
        changed: set[str] = set()
        cols = {r[1] for r in conn.execute("PRAGMA table_info(session)")}
        parent = "parent_id" if "parent_id" in cols else "NULL"
        for rowid, sid, pid, directory, title, version, created, updated in conn.execute(
            f"SELECT rowid, id, {parent}, directory, title, version, time_created, time_updated"
            " FROM session WHERE rowid > ? ORDER BY rowid",
            (self.last_rowid["session"],),
        ):
            self.last_rowid["session"] = max(self.last_rowid["session"], rowid)
            self.sessions[sid] = SessionRow(
                id=sid,
                parent_id=pid or "",
                directory=directory or "",
                title=title or "",
                version=version or "",
                created_ms=int(created or 0),
                updated_ms=int(updated or 0),
            )
            self.messages.setdefault(sid, {})
            changed.add(sid)
        reopen = sorted(self.open)
        rows = list(
            conn.execute(
                "SELECT rowid, id, session_id, time_created, data FROM message WHERE rowid > ?"
                " ORDER BY rowid",
                (self.last_rowid["message"],),
            )
        )
        for chunk in _chunks(reopen):
            marks = ",".join("?" * len(chunk))
            rows += conn.execute(
                f"SELECT rowid, id, session_id, time_created, data FROM message WHERE id IN ({marks})",
                chunk,
            ).fetchall()
        for rowid, mid, sid, created, data in rows:
            self.last_rowid["message"] = max(self.last_rowid["message"], rowid)
            row = Row(mid, sid, int(created or 0), _bytes(data))
            before = self.messages.setdefault(sid, {}).get(mid)
            if before is None or before.data != row.data:
                changed.add(sid)
            if before is None and mid in self.parts and mid not in self.open:
                # Parts committed before their message: they may have changed since.
                reopen.append(mid)
            self.messages[sid][mid] = row
            if _finished(row.data):
                self.open.discard(mid)
            else:
                self.open.add(mid)
        prows = list(
            conn.execute(
                "SELECT rowid, id, message_id, session_id, time_created, data FROM part"
                " WHERE rowid > ? ORDER BY rowid",
                (self.last_rowid["part"],),
            )
        )
        for chunk in _chunks(reopen):
            marks = ",".join("?" * len(chunk))
            prows += conn.execute(
                "SELECT rowid, id, message_id, session_id, time_created, data FROM part"
                f" WHERE message_id IN ({marks})",
                chunk,
            ).fetchall()
        for rowid, pid, mid, sid, created, data in prows:
            self.last_rowid["part"] = max(self.last_rowid["part"], rowid)
            row = Row(pid, mid, int(created or 0), _bytes(data))
            before = self.parts.setdefault(mid, {}).get(pid)
            if before is None or before.data != row.data:
                changed.add(sid)
            self.parts[mid][pid] = row
        for sid in changed:
            # A session's newest message may still get parts or have them rewritten
            # (a user message is finished when inserted, its text part is not): its
            # parts are read again next time. Decided once the parts are read, so a
            # session changed only by a new part still counts.
            newest = max(
                self.messages.get(sid, {}).values(),
                key=lambda m: (m.created_ms, m.id),
                default=None,
            )
            if newest is not None:
                self.open.add(newest.id)
        return changed & set(self.sessions)

    # -- what is new ------------------------------------------------------------------

    def _news(self, sid: str, *, final: bool) -> list[Event]:
        row = self.sessions[sid]
        msgs = sorted(self.messages.get(sid, {}).values(), key=lambda m: (m.created_ms, m.id))
        rows = [
            MessageRows(m, sorted(self.parts.get(m.id, {}).values(), key=lambda p: p.id))
            for m in msgs
        ]
        if not rows and not final:
            # A session is created before its first message, which its record's line
            # (the session's provenance) comes from: it is shown with that message.
            return []
        self.adapter.begin(sid)
        try:
            events = build_session(self.adapter, row, rows).events
        except Exception:  # a row caught mid-write: the next commit completes it
            if not final:
                return []
            raise
        unsettled = set() if final else self._unsettled(rows)
        shown = self.shown.setdefault(sid, set())
        out: list[Event] = []
        rank: dict[str, int] = {}
        for ev in events:
            key = event_key(ev, rank)
            if key in shown:
                continue
            if ev.kind != EventKind.SESSION_META and _event_owner(ev) in unsettled:
                break
            shown.add(key)
            out.append(ev)
        return out

    def _unsettled(self, rows: list[MessageRows]) -> set[str]:
        """Owners (message ids, part ids) of events that may still change."""
        out: set[str] = set()
        for i, m in enumerate(rows):
            try:
                msg = _decode_message(m.message.data)
            except _DECODE_ERRORS:
                out.add(m.message.id)
                continue
            done = _finished(m.message.data)
            if msg.role == "user":
                # Its parts are written just after it: settled once the reply has begun.
                if i == len(rows) - 1:
                    out.add(m.message.id)
                continue
            last_part = _decode_part(m.parts[-1].data).type if m.parts else None
            # Completed, its parts may still be landing: settled by the step's finish
            # part, an error, or a later message.
            done = done and (i < len(rows) - 1 or last_part == "step-finish" or bool(msg.error))
            if not done:
                out.add(m.message.id)
                for p in m.parts:
                    try:
                        part = _decode_part(p.data)
                    except _DECODE_ERRORS:
                        out.add(p.id)
                        continue
                    state = part.state.status if part.state else None
                    streaming = part.type in ("text", "reasoning") and not (
                        part.time and part.time.end
                    )
                    if streaming or (part.type == "tool" and state in (None, "pending")):
                        out.add(p.id)
        return out


def _finished(data: bytes) -> bool:
    """A message that will not change: a user message, or an assistant message completed.

    An error alone does not finish one: OpenCode records ``time.completed`` with it
    (every errored message in the fixtures and the corpus has both), and the
    message's events take their time from it.
    """
    try:
        msg = _decode_message(data)
    except _DECODE_ERRORS:
        return False
    if msg.role != "assistant":
        return True
    return bool(msg.time and msg.time.completed)


def _event_owner(ev: Event) -> str:
    """The message or part an event comes from (what settles it)."""
    if ev.kind in (EventKind.ASSISTANT_MESSAGE, EventKind.USER_MESSAGE):
        return ev.id
    if ev.kind == EventKind.TOOL_RESULT:
        return ""  # written only once the tool finished
    return ev.id if ev.kind != EventKind.SYSTEM or not ev.message_id else ev.message_id


def _chunks(ids: list[str], size: int = 500) -> Iterator[list[str]]:
    for i in range(0, len(ids), size):
        yield ids[i : i + size]
