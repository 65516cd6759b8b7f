"""Line formats of *entries* under a numbered header: pi's and Factory Droid's session files.

Both write one JSON record a line: first a header record (pi's ``session``,
Droid's ``session_start``) holding the session id, its folder and the number
of the file format, then entries that each carry an ``id``, a ``parentId`` and
a ``timestamp``. :class:`EntryAdapter` is what reading such a file shares: the
stream opened once (from the header, or from the first entry of a file that
lost it), each entry's event stamped with its time and ids, and a reason for
an unknown record that says when the file's format is newer than the adapter's.
"""

from __future__ import annotations

from typing import ClassVar, Final, Generic, TypeVar

import msgspec

from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import BaseAdapter, ParseOptions, SkipHook, newer_format
from agentminutes.schema import Event
from agentminutes.timestamps import valid_timestamp

__all__ = ("Entry", "EntryAdapter")

_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)


class Entry(msgspec.Struct, rename="camel"):
    """The fields a record of such a file shares with the others (each format's Struct adds its own).

    The header's ``id`` is the session's, an entry's its own; ``version``
    numbers the file format (the header's).
    """

    type: str | None = None
    id: str | None = None
    parent_id: str | None = None
    timestamp: str | None = None
    version: int | float | str | None = None
    cwd: str | None = None


_E = TypeVar("_E", bound=Entry)


class EntryAdapter(BaseAdapter, Generic[_E]):
    """Shared reading of a header-then-entries session file (see the module docstring).

    :meth:`feed` decodes a record, tells an unknown type (its reason saying
    when the format is newer), opens the stream and hands the record to
    :meth:`header` or :meth:`entry`, which the format writes.
    """

    #: The newest file format (the header's number) this adapter knows.
    newest_format: ClassVar[int] = 0
    #: The header record's type.
    header_type: ClassVar[str] = ""
    #: Every record type of the format, the header's included.
    record_types: ClassVar[frozenset[str]] = frozenset()

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        try:
            rec = self.decode_record(line)
        except _DECODE_ERRORS as exc:
            return [self.undecodable(exc, line, lineno)]
        kind = rec.type or ""
        if kind not in self.record_types:
            reason = f'unrecognized record type "{kind}"' if kind else "record has no type"
            return [self.unknown_or_fail(kind, line, lineno, self.drift(reason))]
        out: list[Event] = []
        if kind == self.header_type:
            self.header(rec, line, lineno, out)
        else:
            self.open_once(rec, line, lineno, out, header=False)
            self.entry(rec, kind, line, lineno, out)
        return out

    def decode_record(self, line: bytes) -> _E:
        """*line* decoded as the format's record (a msgspec decode or validation error if not)."""
        raise NotImplementedError

    def header(self, rec: _E, line: bytes, lineno: int, out: list[Event]) -> None:
        """The header record *rec* (line *lineno*): its events appended to *out*."""
        raise NotImplementedError

    def entry(self, rec: _E, kind: str, line: bytes, lineno: int, out: list[Event]) -> None:
        """The entry *rec* of type *kind*, the stream open: its events appended to *out*."""
        raise NotImplementedError

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        self.meta_sent = False
        #: The file format the header numbers (0 until a header says).
        self.format_version = 0

    def read_format(self, version: object) -> None:
        """Keep the header's format *version* when it is a number."""
        if isinstance(version, int | float) and not isinstance(version, bool):
            self.format_version = int(version)

    def drift(self, reason: str) -> str:
        """*reason*, saying so when the file's format is newer than the newest known."""
        if self.format_version > self.newest_format:
            recorded = f"a session of format v{self.format_version}"
            return newer_format(reason, recorded, f"v{self.newest_format}")
        return reason

    def open_once(
        self, rec: Entry, line: bytes, lineno: int, out: list[Event], *, header: bool
    ) -> None:
        """Open the stream with *rec*'s ``session_meta``, unless it is open already.

        Only a *header* names the session and its folder; a file whose header
        is lost opens on its first entry with neither.
        """
        if self.meta_sent:
            return
        self.meta_sent = True
        out.append(
            self.session_meta(
                self.prov(line, lineno),
                timestamp=valid_timestamp(rec.timestamp),
                session_id=(rec.id or "") if header else "",
                cwd=(rec.cwd or "") if header else "",
            )
        )

    def stamp(self, rec: Entry, line: bytes, lineno: int, *, message_id: str = "") -> Stamp:
        """What an event of the entry *rec* (line *lineno*) carries: its time, its ids, the line."""
        return Stamp(
            valid_timestamp(rec.timestamp),
            self.prov(line, lineno),
            id=rec.id or "",
            parent_id=rec.parent_id or "",
            message_id=message_id,
        )
