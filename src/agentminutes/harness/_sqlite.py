"""What the adapters of SQLite session stores share (Crush, Goose, Hermes, OpenCode, turns.db).

Each opens the store read-only through its :class:`~agentminutes.harness.base.Document`,
checks the tables it needs are there (an error naming the ones missing), turns an
SQLite error met while reading into the adapter's loud-failure error, and, when
followed, holds back a session's last reply until the harness has written the usage
it carries. :class:`SqliteAdapter` is that plumbing; a harness keeps its queries.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, ClassVar

from agentminutes.harness.base import BaseDocumentAdapter, Confidence
from agentminutes.schema import AssistantMessage, Event, EventKind

if TYPE_CHECKING:
    from agentminutes.harness.base import Document

__all__ = ("SQLITE_HEAD", "SqliteAdapter", "hold_last_reply", "last_reply", "table_names")

#: How every SQLite database file begins.
SQLITE_HEAD = b"SQLite format 3\x00"


def table_names(conn: sqlite3.Connection) -> set[str]:
    """The names of the tables in the database behind *conn*."""
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def hold_last_reply(events: list[Event]) -> list[Event]:
    """*events* up to the last assistant reply (kept back with what follows it).

    The session's last reply carries the session's usage, which the harness writes
    after it: it (and what follows it) is shown once a later reply takes its place,
    or at the stop.
    """
    replies = [i for i, e in enumerate(events) if e.kind == EventKind.ASSISTANT_MESSAGE]
    return events[: replies[-1]] if replies else events


def last_reply(events: list[Event]) -> AssistantMessage | None:
    """The session's last assistant reply in *events*: the one its usage goes on."""
    for ev in reversed(events):
        if ev.kind == EventKind.ASSISTANT_MESSAGE:
            return ev.assistant_message
    return None


class SqliteAdapter(BaseDocumentAdapter):
    """A :class:`BaseDocumentAdapter` reading one SQLite database of sessions."""

    containers: ClassVar[frozenset[str]] = frozenset({"sqlite"})
    #: The tables a database needs to be read as this harness's (none: not graded by them).
    tables: ClassVar[frozenset[str]] = frozenset()
    #: The database as errors name it: "not {store_name}: no table …".
    store_name: ClassVar[str] = "a database"
    #: The database as reading errors name it: "cannot read {store_noun}: …".
    store_noun: ClassVar[str] = "the database"
    #: What the head of this harness's database holds (its schema's words), all of them.
    head_marks: ClassVar[tuple[bytes, ...]] = ()

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        """Certain for an SQLite database whose head holds every one of :attr:`head_marks`."""
        marks = cls.head_marks
        if marks and head.startswith(SQLITE_HEAD) and all(mark in head for mark in marks):
            return Confidence.CERTAIN
        return Confidence.NO_MATCH

    @classmethod
    def sniff_tables(cls, tables: frozenset[str]) -> Confidence:
        if cls.tables and tables >= cls.tables:
            return Confidence.CERTAIN
        return Confidence.NO_MATCH

    def prepare(self, conn: sqlite3.Connection) -> None:
        """Set up a fresh connection before it is read (row or text factories)."""

    def missing_reason(self, missing: list[str], names: set[str]) -> str:
        """The error for a database lacking the tables *missing* (it has *names*)."""
        return f"not {self.store_name}: no table {', '.join(missing)}"

    def open_store(self, doc: Document, needs: Iterable[str] | None = None) -> sqlite3.Connection:
        """*doc*'s database, checked to hold the tables *needs* (by default :attr:`tables`).

        Missing tables are named in the order of *needs* (:attr:`tables` sorted).
        """
        conn = doc.connect()
        try:
            self.prepare(conn)
            names = table_names(conn)
        except BaseException:
            conn.close()  # a file that is no database: its connection is not left to the collector
            raise
        missing = [t for t in (sorted(self.tables) if needs is None else needs) if t not in names]
        if missing:
            conn.close()
            raise self.error(self.missing_reason(missing, names), 0)
        return conn

    @contextmanager
    def reading(self, conn: sqlite3.Connection | None) -> Iterator[None]:
        """Read through *conn*, then close it; an SQLite error is this adapter's error."""
        try:
            yield
        except sqlite3.Error as exc:
            raise self.error(f"cannot read {self.store_noun}: {exc}", 0) from None
        finally:
            if conn is not None:
                conn.close()
