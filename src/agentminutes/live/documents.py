"""``follow`` for whole-document sources: an OpenCode database, a Cline task folder.

These are not appended to line by line: a database takes commits, a task
folder's JSON documents are rewritten whole. Their adapters offer a *tail*
(:class:`~agentminutes.harness.base.Tailing`, declared by ``tail=True`` in the
harness's description) whose ``poll()`` returns, per session, the events
that became settled since the last poll, reading only what changed, and whose
``flush()`` returns what is still held at a stop. :class:`DocumentFollower`
drives one tail: it stats the files the tail names (the database and its WAL;
the task's documents) every :data:`POLL_S` seconds, polls the tail when they
changed, and yields one batch per session and poll. Its batches are marked
like a multi-transcript follow (one envelope per line), the transcript being
``<database>#<session id>`` for a database and the folder for a task.

It has the surface :func:`agentminutes.live.runner.run_follow` drives
(``batches``, ``stop``, ``prime``, ``skipped``); resuming from ``--state`` is
not offered for these sources.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

from agentminutes.errors import DetectError, UsageError
from agentminutes.harness import ParseOptions
from agentminutes.harness.base import DocumentTail, Tailing, detects
from agentminutes.live.follower import Mark
from agentminutes.pipeline.batch import Batch
from agentminutes.pipeline.verbatim import safe_events

if TYPE_CHECKING:
    from agentminutes.pipeline.worker import StepThread

__all__ = ("POLL_S", "DocumentFollower", "document_follower")

#: How often the tail's files are stat-ed (s).
POLL_S: Final = 0.05

_T = TypeVar("_T")


def _stderr_notice(message: str) -> None:
    print(f"agentminutes: {message}", file=sys.stderr, flush=True)


@dataclass
class _Config:
    notice: Callable[[str], None] = _stderr_notice


@dataclass
class DocumentFollower:
    """Follows one document source through its adapter's tail.

    The same surface as :class:`~agentminutes.live.follower.Follower` for
    ``follow``, ``follow_many`` and ``follow_to``: the stat, poll and flush of
    the tail run on the follow's own thread, so the event loop only waits.
    Its sessions end together, at the stop (or idle exit): :meth:`done`
    cannot end one session of a database.
    """

    path: str
    harness: str
    tail: DocumentTail
    idle_exit: float | None = None
    config: _Config = field(default_factory=_Config)
    multi: bool = True
    files: dict[str, None] = field(default_factory=dict)
    #: Setting this event stops the follow as :meth:`stop` does.
    stop_event: Any = None
    #: Applied to each batch in the follow's thread (the library makes envelopes there).
    prepare: Callable[[Batch], Batch] | None = None
    #: Why the follow ended: ``stopped`` or ``idle``.
    ended_by: str = ""
    completed: bool = False
    _stopping: bool = False
    _flush: bool = True
    _signature: tuple[tuple[int, int], ...] | None = None
    _worker: StepThread | None = None

    def stop(self, *, flush: bool = True) -> None:
        """End the follow: read what changed, then (*flush*) write what is held."""
        self._stopping = True
        self._flush = self._flush and flush

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stopping

    @property
    def flushes(self) -> bool:
        """Whether the follow's end writes what is held."""
        return self._flush

    @property
    def followed(self) -> int:
        """How many sessions were followed."""
        return len(self.files)

    def start(self) -> None:
        """Nothing to look at before the first poll (a database is read whole at first)."""

    def knows(self, name: str) -> bool:
        """Whether *name* is a session followed (``<database>#<id>``, or the task folder)."""
        return name in self.files

    def done(self, transcript: str) -> bool:
        """A database's sessions end at the stop, together: ``False`` (nothing ends now)."""
        return False

    @property
    def skipped(self) -> dict[str, int]:
        """Skipped native records of the last conversion, by record type."""
        return dict(getattr(self.tail.adapter, "skipped", {}))

    def _key(self, session: str) -> str:
        return f"{self.path}#{session}" if os.path.isfile(self.path) else self.path

    def _batches(self, found: list[tuple[str, list[Any]]]) -> list[Batch]:
        out = []
        for session, events in found:
            key = self._key(session)
            self.files[key] = None
            if events:
                batch = Batch(safe_events(events), Mark(key, self.harness))
                out.append(batch if self.prepare is None else self.prepare(batch))
        return out

    def _changed(self) -> bool:
        signature = []
        for p in self.tail.watched():
            try:
                st = os.stat(p)
                signature.append((st.st_size, st.st_mtime_ns))
            except OSError:
                signature.append((-1, 0))
        new = tuple(signature)
        if new == self._signature:
            return False
        self._signature = new
        return True

    def prime(self) -> list[Batch]:
        """What the source holds now (read before the event loop starts)."""
        self._changed()
        return self._batches(self.tail.poll())

    def _polled(self) -> list[Batch] | None:
        """What changed since the last look (worker thread); ``None`` when nothing did."""
        return self._batches(self.tail.poll()) if self._changed() else None

    def _final(self) -> list[Batch]:
        out = self._polled() or []
        if self._flush:
            out += self._batches(self.tail.flush())
        return out

    async def run_step(self, step: Callable[[], _T]) -> _T:
        """Run *step* (file work) on the follow's thread, off the event loop."""
        from agentminutes.pipeline.worker import off_loop

        if self._worker is not None:
            return await self._worker.run(step)
        return await off_loop(step, "agentminutes-follow")

    async def batches(self) -> AsyncGenerator[Batch, None]:
        """Batches as the source changes, until :meth:`stop`, the stop event or ``idle_exit``."""
        import anyio

        from agentminutes.pipeline.worker import StepThread

        worker = self._worker = StepThread("agentminutes-follow")
        try:
            if self._signature is None:
                for batch in await worker.run(self.prime):
                    yield batch
            last = time.monotonic()
            while not self._stopping:
                if self.stop_event is not None and self.stop_event.is_set():
                    self.stop()
                    break
                if self.idle_exit is not None and time.monotonic() - last >= self.idle_exit:
                    self.ended_by = "idle"
                    break
                await anyio.sleep(POLL_S)
                found = await worker.run(self._polled)
                if found is None:
                    yield Batch([], None)  # a tick
                    continue
                last = time.monotonic()
                for batch in found:
                    yield batch
            self.ended_by = self.ended_by or "stopped"
            for batch in await worker.run(self._final):
                yield batch
            self.completed = True
        finally:
            self._worker = None
            worker.close()


def _line_transcript(path: str, harness: str) -> bool:
    """Whether *path* is a regular file that is surely no document source.

    Told from its first bytes as :func:`~agentminutes.pipeline.document_sources.route`
    tells it (no container, no document format detected), without loading
    the document pipeline: a follower of one transcript writes its first
    events sooner. ``False`` sends *path* on to ``route``, which decides.
    """
    from agentminutes.harness import (
        SNIFF_BYTES,
        detect,
        document_adapter_class,
        is_document_adapter,
    )
    from agentminutes.pipeline.sources import container_of

    if not os.path.isfile(path):
        return False
    if not detects(harness):
        return document_adapter_class(harness) is None
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError:
        return False
    if container_of(head) is not None:
        return False
    if not head:
        return True
    try:
        cls, _ = detect(head)
    except DetectError:
        return True  # no format at all: the line follower reports it
    return not is_document_adapter(cls)


def _database_or_empty(path: str) -> bool:
    """Whether *path* is a regular file that is empty or begins as an SQLite database does."""
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return False
    return _SQLITE_MAGIC.startswith(head) or head.startswith(_SQLITE_MAGIC)


#: The first bytes of every SQLite database file.
_SQLITE_MAGIC: Final = b"SQLite format 3\x00"


def document_follower(
    paths: list[str],
    *,
    harness: str,
    state: str | None,
    idle_exit: float | None,
    options: ParseOptions,
) -> DocumentFollower | None:
    """A follower for *paths* when they are one document source that can be followed.

    ``None`` for anything else (line transcripts, folders of transcripts),
    which the line follower takes.

    Raises:
        UsageError: a document source that cannot be followed, or ``--state``.
    """
    if len(paths) != 1:
        return None
    path = os.path.abspath(os.path.expanduser(paths[0]))
    if not os.path.exists(path) and _tails(harness):
        # A database the harness has not created yet (follow started before the agent):
        # followed from the moment it exists, as a transcript not written yet is.
        _check_follow_options(path, harness, state, idle_exit)
        return DocumentFollower(
            path, harness, _PendingTail(path, harness, options), idle_exit=idle_exit
        )
    if _tails(harness) and _database_or_empty(path):
        # A database the harness is still setting up (empty, or its tables not all made)
        # when the follow starts: followed from the moment it is one.
        pending = _PendingTail(path, harness, options)
        if pending._opened() is None:
            _check_follow_options(path, harness, state, idle_exit)
            return DocumentFollower(path, harness, pending, idle_exit=idle_exit)
    if not os.path.exists(path) or _line_transcript(path, harness):
        return None
    from agentminutes.errors import AgentminutesError
    from agentminutes.pipeline.document_sources import route

    try:
        found = route(path, harness)
    except AgentminutesError:
        # A folder of transcripts, or a transcript not written yet (empty): the line
        # follower takes it, and says what is wrong with it if anything is.
        return None
    if found.document is None or found.adapter is None:
        return None
    adapter = found.adapter(options)
    from agentminutes.harness.registry import described

    declared = described(adapter.name)
    if declared is None or not declared.tail:
        raise UsageError(
            f"{path}: a {found.adapter.name} source is a whole document (an export), "
            "not one that grows; use convert"
        )
    _check_follow_options(path, adapter.name, state, idle_exit)
    doc_path = found.document.path or path
    tail = cast(Tailing, adapter).tail(found.document)
    return DocumentFollower(doc_path, adapter.name, tail, idle_exit=idle_exit)


def _check_follow_options(
    path: str, harness: str, state: str | None, idle_exit: float | None
) -> None:
    if state is not None:
        raise UsageError(f"{path}: --state is not supported when following a {harness} source")
    if idle_exit is not None and idle_exit <= 0:
        raise UsageError("idle exit must be a positive number of seconds")


def _tails(harness: str) -> bool:
    """Whether *harness* (named, not ``auto``) is a document source ``follow`` reads as it grows."""
    if not detects(harness):
        from agentminutes.harness.registry import described

        declared = described(harness)
        return declared is not None and declared.reads == "documents" and declared.tail
    return False


class _PendingTail:
    """The tail of a database not created yet: nothing until it exists, then its adapter's tail.

    A file that appears empty, or is no source of the harness yet (a database whose
    tables are not made), is looked at again when it changes; one that is still no
    source at the stop is the follow's error, as it would be had it been there from
    the start.
    """

    def __init__(self, path: str, harness: str, options: ParseOptions) -> None:
        self.path = path
        self.harness = harness
        self.options = options
        self.adapter: Any = None
        self._tail: DocumentTail | None = None
        self._error: Exception | None = None

    def watched(self) -> list[str]:
        if self._tail is not None:
            return self._tail.watched()
        return [self.path, self.path + "-wal"]  # a database's first commits may be in its WAL

    def _opened(self) -> DocumentTail | None:
        if self._tail is None:
            try:
                if os.path.getsize(self.path) == 0:
                    self._error = DetectError(f"{self.path}: empty, no {self.harness} database")
                    return None
            except OSError:
                return None
            from agentminutes.errors import AgentminutesError
            from agentminutes.pipeline.document_sources import route

            try:
                found = route(self.path, self.harness)
            except AgentminutesError as exc:
                # A database still being set up (its tables not made yet) is looked at
                # again when it changes; the error stands if it is one at the stop.
                self._error = exc
                return None
            if found.document is None or found.adapter is None:
                self._error = DetectError(f"{self.path}: no {self.harness} source")
                return None
            adapter = found.adapter(self.options)
            check = getattr(adapter, "open_store", None)
            if check is not None and getattr(found.document, "container", "") == "sqlite":
                # A harness named on the command line is taken at its word: the tables
                # it reads are checked here, or the tail would meet a database half made.
                import sqlite3

                try:
                    check(found.document).close()
                except (AgentminutesError, sqlite3.Error) as exc:
                    self._error = exc
                    return None
            self._error = None
            self.adapter = adapter
            self._tail = cast(Tailing, self.adapter).tail(found.document)
        return self._tail

    def poll(self) -> list[tuple[str, list[Any]]]:
        tail = self._opened()
        return tail.poll() if tail is not None else []

    def flush(self) -> list[tuple[str, list[Any]]]:
        tail = self._opened()
        if tail is None and self._error is not None:
            raise self._error
        return tail.flush() if tail is not None else []
