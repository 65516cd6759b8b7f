"""Following an SQLite session store whose rows the harness inserts and rewrites in place.

Crush and Goose keep each session's messages as rows a writer inserts and then
updates (a reply streams into its row). :class:`RowsTail` follows such a
database for ``follow``: each poll opens it read-only in one read transaction,
asks the adapter for a cheap fingerprint of every session (row counts, last
change, sizes), rebuilds only the sessions whose fingerprint moved, and hands
on the events not written before, in order, up to the first message that is
not settled yet (a reply still streaming). A stop (:meth:`flush`) writes the
rest. The database is never written, and never read whole on each poll.
:class:`RowsAdapter` is what the two adapters share besides: listing, reading
and following sessions over each format's own queries and rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from agentminutes.harness._shown import unseen
from agentminutes.harness._sqlite import SqliteAdapter, hold_last_reply
from agentminutes.harness.base import ConversationInfo, DocumentSession
from agentminutes.schema import Event

if TYPE_CHECKING:
    from agentminutes.harness.base import Document

__all__ = ("RowsAdapter", "RowsTail", "TailedAdapter", "session_prints")


def session_prints(
    conn: sqlite3.Connection, sessions: str, messages: str
) -> dict[str, tuple[Any, ...]]:
    """Per session id: its row, then its messages' figures (a fingerprint for :class:`RowsTail`).

    *sessions* selects a row per session, its id first; *messages* selects the
    figures of each session's messages, grouped by session id, which comes first.
    """
    prints: dict[str, tuple[Any, ...]] = {str(r[0]): tuple(r) for r in conn.execute(sessions)}
    for sid, *figures in conn.execute(messages):
        if str(sid) in prints:
            prints[str(sid)] += tuple(figures)
    return prints


class TailedAdapter(Protocol):
    """What :class:`RowsTail` asks of an adapter."""

    skipped: dict[str, int]

    def fingerprints(self, conn: sqlite3.Connection) -> dict[str, tuple[Any, ...]]:
        """Per session id, a value that changes whenever the session's rows change."""
        ...

    def settled_events(
        self, conn: sqlite3.Connection, session_id: str, *, final: bool
    ) -> list[Event]:
        """The session's events, up to its first unsettled message (all of them, *final*)."""
        ...


class RowsTail:
    """Follows one database: new and changed sessions, each rebuilt from its rows."""

    def __init__(self, adapter: Any, connect: Callable[[], sqlite3.Connection], path: str):
        self.adapter = adapter
        self.connect = connect
        self.path = path
        self.seen: dict[str, tuple[Any, ...]] = {}
        self.shown: dict[str, set[str]] = {}

    def watched(self) -> list[str]:
        """The files whose changes mean new commits: the database and its WAL."""
        return [self.path, self.path + "-wal"]

    def poll(self) -> list[tuple[str, list[Event]]]:
        """The events that became settled since the last poll, per session id."""
        return self._read(final=False)

    def flush(self) -> list[tuple[str, list[Event]]]:
        """At a stop: every event not written yet, settled or not."""
        self.seen = {}
        return self._read(final=True)

    def _read(self, *, final: bool) -> list[tuple[str, list[Event]]]:
        conn = self.connect()
        out: list[tuple[str, list[Event]]] = []
        try:
            conn.execute("BEGIN")  # one snapshot: the writer's commits land between polls
            prints = self.adapter.fingerprints(conn)
            for sid in sorted(prints):
                if not final and self.seen.get(sid) == prints[sid]:
                    continue
                try:
                    events = self.adapter.settled_events(conn, sid, final=final)
                except Exception:
                    if final:
                        raise
                    continue  # a row caught mid-write: the next commit completes it
                self.seen[sid] = prints[sid]
                out.append((sid, self._unseen(sid, events)))
        finally:
            conn.close()
        return out

    def _unseen(self, sid: str, events: list[Event]) -> list[Event]:
        return unseen(self.shown.setdefault(sid, set()), events)


class _SessionRow(Protocol):
    @property
    def id(self) -> str: ...


SessionRowT = TypeVar("SessionRowT", bound=_SessionRow)
MessageRowT = TypeVar("MessageRowT")


class RowsAdapter(SqliteAdapter, Generic[SessionRowT, MessageRowT]):
    """An adapter of a store of session rows, each with its message rows (Crush, Goose).

    Listing, reading and following a session are the same over each format's own
    queries and rows: a harness gives :meth:`session_rows`, :meth:`message_rows`,
    :meth:`row_info` and :meth:`events_for`.
    """

    #: The working directory of the store :meth:`tail` follows (:meth:`store_cwd`).
    _tail_cwd: str = ""

    def session_rows(self, conn: sqlite3.Connection) -> list[SessionRowT]:
        """Every session's row, in the order sessions are listed."""
        raise NotImplementedError

    def message_rows(self, conn: sqlite3.Connection, session_id: str) -> list[MessageRowT]:
        """The session's message rows, in order."""
        raise NotImplementedError

    def row_info(self, row: SessionRowT) -> ConversationInfo:
        """The listing of the session of *row*."""
        raise NotImplementedError

    def events_for(
        self, rows: list[SessionRowT], cwd: str
    ) -> Callable[[SessionRowT, list[MessageRowT]], list[Event]]:
        """What builds a session's events from its row and messages, for one read of *rows*."""
        raise NotImplementedError

    def store_cwd(self, doc: Document) -> str:
        """The working directory the store's place says, or ``""`` (by default)."""
        return ""

    def settled(self, messages: list[MessageRowT]) -> list[MessageRowT]:
        """The messages up to the first one still being written (all, by default)."""
        return messages

    def conversations(self, doc: Document) -> list[ConversationInfo]:
        conn = self.open_store(doc)
        with self.reading(conn):
            return [self.row_info(s) for s in self.session_rows(conn)]

    def sessions(self, doc: Document, only: str | None = None) -> Iterator[DocumentSession]:
        conn = self.open_store(doc)
        cwd = self.store_cwd(doc)
        with self.reading(conn):
            rows = self.session_rows(conn)
            build = self.events_for(rows, cwd)
            for row in rows:
                if only is not None and row.id != only:
                    continue
                self.begin(row.id)
                events = build(row, self.message_rows(conn, row.id))
                yield DocumentSession(self.row_info(row), events, self.skipped)

    def settled_events(
        self, conn: sqlite3.Connection, session_id: str, *, final: bool
    ) -> list[Event]:
        """The session's events up to its first message still being written, its last
        reply held (the usage it carries may come later) unless *final*."""
        rows = self.session_rows(conn)
        row = next((r for r in rows if r.id == session_id), None)
        if row is None:
            return []
        messages = self.message_rows(conn, session_id)
        if not final:
            messages = self.settled(messages)
            if not messages:
                return []
        self.begin(session_id)
        events = self.events_for(rows, self._tail_cwd)(row, messages)
        return events if final else hold_last_reply(events)
