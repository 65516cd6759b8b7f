"""One followed transcript: its file, its adapter, and what is held back.

A :class:`Transcript` reads its file through a
:class:`~agentminutes.live.tail.TailFile`, detects the harness from the first
lines, feeds complete lines to the adapter and hands out
:class:`~agentminutes.pipeline.batch.Batch` es whose :class:`Mark` says what
to record once they are delivered. The
:class:`~agentminutes.live.follower.Follower` decides when to read it and what
to do when its file moves.

Where a transcript starts
    From a saved state entry (:meth:`resume`): the adapter snapshot is
    restored and the lines between the snapshot and the saved offset are
    read again with their events dropped (``replay_until``: they were
    delivered). With ``--from-end``, from the start too, but the events of the
    lines that were on disk at the start are dropped, wherever they come out
    (``old_lines``: a message folded from old lines and closed by a new one is
    old), except ``session_meta``. With a ``start_at`` offset (what a reader
    took before the follow), the same with that offset for the end of the old
    lines. Otherwise from the beginning.

Held events
    An adapter may hold events that later lines complete (an assistant
    message folded from several records). They are written when a later
    record closes them; when the file ends (:meth:`end`: removed, moved out of
    the followed folders, truncated, replaced); or at a stop that *flushes*
    (:meth:`flush`). A flushing stop records the adapter snapshot from *before*
    ``finish()`` together with the digests of the events ``finish()`` wrote;
    the next run restores the snapshot and drops an event it produces again
    with one of those digests (``suppress``). A message complete at the stop
    is therefore written exactly once; one the agent continued after the stop
    is written again, complete, under the same ``message_id``.
"""

from __future__ import annotations

import os
import time
from typing import Any, cast

from agentminutes.errors import AgentminutesError, DetectError, ParseError, SourceError
from agentminutes.harness import (
    SNIFF_BYTES,
    Adapter,
    adapter_class,
    detect,
    is_document_adapter,
)
from agentminutes.harness.base import BOM, detects
from agentminutes.live.config import FollowConfig, Mark, event_digest
from agentminutes.live.ids import IDENTITY_HEAD_BYTES, transcript_identity
from agentminutes.live.rewrites import document_news, unseen
from agentminutes.live.state import (
    SNAPSHOT_GROWTH,
    SNAPSHOT_MIN_BYTES,
    SNAPSHOT_SMALL_BYTES,
    encode_snapshot,
)
from agentminutes.live.tail import TailFile, marker_after, sha256_hex
from agentminutes.pipeline.batch import Batch
from agentminutes.pipeline.conversion import adapter_line, feed_record
from agentminutes.pipeline.sources import LineBatch
from agentminutes.pipeline.verbatim import safe_events
from agentminutes.schema import Event, EventKind

__all__ = ("Transcript",)


class Transcript:
    """One followed transcript.

    *name* is what it is reported and recorded under (the path it was first
    followed at); the file may move (``tail.path``).
    """

    def __init__(
        self,
        config: FollowConfig,
        name: str,
        *,
        path: str | None = None,
        single: bool = False,
        named: bool = False,
        initial: bool = False,
    ) -> None:
        self.config = config
        self.name = name
        #: The only transcript followed: its errors end the follow.
        self.single = single
        #: Named as a target (not found in a folder): waited for when it disappears.
        self.named = named
        #: Found when the follow started (``--from-end`` skips what those hold).
        self.initial = initial
        self.tail = TailFile(path or name)
        self.adapter: Adapter | None = None
        self.harness = ""
        #: new (not opened yet) | active | ignored | failed | ended
        self.status = "new"
        #: The saved state entry to continue from, chosen by the follower.
        self.entry: dict[str, Any] | None = None
        #: Lines read before the format could be detected (blank lines only).
        self.early: LineBatch = []
        self.early_offset = 0
        #: Events of lines ending at or before this offset were delivered already (-1: none).
        self.replay_until = -1
        #: ``--from-end``: the byte offset the old content ended at, and its last line number.
        self.old_until = -1
        self.old_lines = 0
        #: (size, mtime) a --from-end transcript had at start; read once it changes.
        self.dormant: tuple[int, int] | None = None
        #: Where the old lines end (``start_at``, ``--from-end``) and the bytes before it, to
        #: tell, when a dormant transcript wakes, that the file still holds them.
        self.old_marker: tuple[int, bytes] | None = None
        #: Events held until session_meta shows whether --cwd/--session-id want them.
        self.gate: list[Event] | None = [] if config.filtered else None
        #: Digests of events an earlier run's flushing stop already wrote.
        self.suppress: set[str] = set()
        #: For a whole-document transcript (rewritten, not appended to): keys of the events
        #: written so far, kept across its rewrites.
        self.shown: set[str] = set()
        #: session id, cwd and subagent flag ("1" or "") from the transcript's
        #: session_meta, once seen.
        self.session: dict[str, str] | None = None
        #: The transcript's identity (event ids), from its first line; None until known.
        self.identity: str | None = None
        self.error: AgentminutesError | None = None
        #: Read again at once (more bytes waiting, or the file started over).
        self.again = False
        #: The file moved away (renamed, removed): the monotonic time it was seen gone.
        self.vanished_at: float | None = None
        self.last_active = 0.0
        #: Its folder is polled (not notified), and when it is looked at next (monotonic).
        self.polled = False
        self.poll_at = 0.0
        #: A batch to hand out before anything read: the held events of a saved entry
        #: whose file changed while no follower ran.
        self.preface: Batch | None = None
        self._snap_offset = -1
        self._snap_size = 0

    # -- starting --------------------------------------------------------------------

    def begin(self) -> bool:
        """Open the file and choose where to start; ``False`` while it does not exist."""
        if not self.tail.open():
            return False
        self.status = "active"
        entry, self.entry = self.entry, None
        if entry is not None:
            self.resume(entry)
        elif self.initial and self.name in self.config.start_at:
            self._start_at(self.config.start_at[self.name])
        elif self.config.from_end and self.initial:
            size, mtime_ns, end = self.tail.end_of_lines()
            self.dormant = (size, mtime_ns)
            self.replay_until = self.old_until = end
            self.old_marker = (end, self.tail.before(end))
        return True

    def _start_at(self, offset: int) -> None:
        """Deliver from *offset* on (``start_at``): the lines before it are read, their events not.

        They are read so that a message they begin, completed after *offset*,
        comes out whole. A file shorter than *offset*, or without a newline just
        before it, is not what was read of it: it is followed from its start,
        and the batch that says so comes first (``Mark.restarted``).
        """
        size, mtime_ns, end = self.tail.end_of_lines()
        if offset < 0 or offset > size or not self.tail.newline_before(offset):
            self.config.notice(
                f"{self.name}: changed since it was read ({size} bytes, {offset} read); "
                "following it from the start"
            )
            self.preface = Batch([], self.mark(restart=True))
            return
        self.replay_until = self.old_until = offset
        if end == offset:
            self.dormant = (size, mtime_ns)
            self.old_marker = (offset, self.tail.before(offset))

    def resume(self, entry: dict[str, Any]) -> None:
        """Continue from a saved state entry (or, when it does not fit the file, from the start)."""
        state = self.config.state
        assert state is not None
        self.shown = set(entry.get("document_events") or ())
        if not entry.get("harness") and not int(entry.get("offset", 0) or 0):
            return  # recorded as started over (truncated, replaced): read from the start
        try:
            offset, line = int(entry["offset"]), int(entry["line"])
            snapshot = state.adapter_snapshot(entry)
            start = None
            if snapshot is not None:
                start = (
                    int(entry.get("snapshot_offset", offset)),
                    int(entry.get("snapshot_line", line)),
                )
            reason = self.tail.resume(
                offset=offset,
                lineno=line,
                head=(int(entry["head_len"]), str(entry["head_sha256"])),
                marker=str(entry["marker_sha256"]),
                start=start if snapshot is not None else (0, 0),
            )
            cls = adapter_class(str(entry["harness"]))
        except (KeyError, ValueError, TypeError, AgentminutesError) as exc:
            reason = f"its saved progress is unusable ({exc})"
        if reason is not None:
            self.config.notice(f"{self.name}: {reason}; following it from the start")
            # What the old content held was never written: it comes first.
            self.preface = Batch(self.held_in_entry(entry), self.mark(restart=True))
            self._from_start()
            return
        self.suppress = set(entry.get("flushed") or ())
        self.old_lines = int(entry.get("old_lines", 0))
        self.replay_until = max(offset, int(entry.get("discard_until", -1)))
        if snapshot is None:
            # Another version saved it (or it is unreadable): rebuild the adapter's state
            # by reading the lines delivered already again, writing none of them.
            return
        adapter = cls(self.config.options, on_skip=None)
        try:
            adapter.restore(snapshot)
        except Exception:
            self.tail.restart()
            self.tail.open()
            return
        self.adapter, self.harness = adapter, cls.name
        self._snap_offset, self._snap_size = self.tail.splitter.offset, len(snapshot)
        session = entry.get("session")
        if isinstance(session, dict):
            self.session = {str(k): str(v) for k, v in session.items()}
            if self.gate is not None and not self.config.wanted(self.session):
                self._ignore()
            self.gate = None

    def _from_start(self) -> None:
        self.tail.restart()
        self.tail.open()
        self.replay_until = -1

    def _ignore(self) -> None:
        self.status = "ignored"
        self.tail.close()

    # -- reading ---------------------------------------------------------------------

    def pump(self) -> tuple[Batch | None, str | None]:
        """Read one chunk of what the file appended: the batch it completes, and a reset.

        The reset is ``"moved"`` when the path no longer names the file read
        (the follower finds out where it went), else ``None``; a truncation is
        dealt with here (the old content's held events come in the batch, and
        the file is read again from its start).
        """
        if self.status == "new" and not self.begin():
            return None, None
        if self.preface is not None:
            preface, self.preface = self.preface, None
            self.again = True
            return preface, None
        if self.status != "active":
            return None, None
        if self.dormant is not None:
            try:
                st = os.stat(self.tail.path)
            except OSError:
                st = None
            if st is not None and (st.st_size, st.st_mtime_ns) == self.dormant:
                return None, None
            self.dormant = None
            if not self._holds_old_lines():
                # Rewritten before a byte of it was read: none of what it holds now is old.
                self.config.notice(
                    f"{self.name}: was rewritten since the follow started; "
                    "following it again from the start"
                )
                self.replay_until = self.old_until = -1
                self.again = True
                return Batch([], self.mark(restart=True)), None
        tail = self.tail
        base_offset = tail.splitter.offset
        base_marker = tail.commit_marker
        try:
            lines, reset = tail.read()
        except OSError as exc:
            self.error = SourceError(f"{self.name}: {exc.strerror or exc}")
            return None, None
        events: list[Event] = []
        position: dict[str, Any] | None = None
        if lines:
            self.last_active = time.monotonic()
            events, failed_at = self._feed(lines, base_offset)
            if failed_at is not None:
                i, offset = failed_at
                position = tail.position()
                position.update(
                    offset=offset,
                    line=lines[i][0] - 1,
                    marker_sha256=sha256_hex(marker_after(base_marker, lines[:i])),
                )
        adapter = self.adapter
        if (
            lines
            and adapter is not None
            and adapter.whole_document
            and not tail.behind
            and self.error is None
        ):
            last = tail.splitter.held()
            news = document_news(adapter, self.config.options, last)
            events.extend(unseen(self.shown, news))
        if reset == "truncated":
            held = self._held_at_end(rewritten=True)
            if not (self.adapter is not None and self.adapter.whole_document):
                self.config.notice(f"{self.name}: was truncated; following it again from the start")
            batch = Batch(events + held, self.mark(restart=True))
            self.start_over()
            return batch, None
        self.again = tail.behind
        if self.status == "ignored" or not (lines or events):
            return None, reset
        return Batch(events, self.mark(position=position, fresh=position is not None)), reset

    def _holds_old_lines(self) -> bool:
        """Whether the file still holds the old lines it held at the start (marker unchanged)."""
        if self.old_marker is None:
            return True
        offset, marker = self.old_marker
        self.old_marker = None
        try:
            if not self.tail.is_open:  # released (many files): the same file, or moved
                st = os.stat(self.tail.path)
                if (st.st_dev, st.st_ino) != (self.tail.dev, self.tail.ino):
                    return True  # another file at the path: the move is seen when read
                if not self.tail.open():
                    return True
            return self.tail.before(offset) == marker and self.tail.newline_before(offset)
        except OSError:
            return False

    def _detect(self, lines: LineBatch, base_offset: int) -> LineBatch | None:
        """Choose the adapter from the first lines; the lines to feed it, or ``None`` to wait."""
        if not self.early:
            self.early_offset = base_offset
        self.early.extend(lines)
        head = b"\n".join(raw for _, raw in self.early)[:SNIFF_BYTES]
        if not head.strip(b" \t\r\n" + BOM):
            return None
        try:
            if detects(self.config.harness):
                cls, _ = detect(head)
            else:
                cls = adapter_class(self.config.harness)
        except DetectError as exc:
            if self.single:
                self.error = DetectError(f"{self.name}: {exc}")
            else:
                self.config.notice(f"{self.name}: not a transcript of a known harness; ignored")
                self._ignore()
            return None
        if is_document_adapter(cls):
            self.error = DetectError(
                f"{self.name}: a {cls.name} source is a whole document (an export or a "
                "database), not a transcript that grows; use convert"
            )
            return None
        self.adapter = cast("Adapter", cls(self.config.options, on_skip=None))
        self.harness = cls.name
        early, self.early = self.early, []
        return early

    def _feed(
        self, lines: LineBatch, base_offset: int
    ) -> tuple[list[Event], tuple[int, int] | None]:
        """Feed complete lines to the adapter; the events, and where a parse error stopped it."""
        if self.adapter is None:
            detected = self._detect(lines, base_offset)
            if detected is None:
                return [], None
            lines, base_offset = detected, self.early_offset
        adapter = self.adapter
        assert adapter is not None
        out: list[Event] = []
        replay = self.replay_until
        old_until = self.old_until
        pos = base_offset
        failed_at = None
        for i, (lineno, raw) in enumerate(lines):
            start = pos
            pos += len(raw) + 1
            if pos <= old_until:
                self.old_lines = lineno
            if lineno == 1:
                self.identity = transcript_identity(self.tail.dev, self.tail.ino, raw)
            line = adapter_line(adapter, raw, lineno)
            if not line:
                continue
            try:
                events = feed_record(adapter, line, lineno)
            except ParseError as exc:
                self.error = exc.with_path(self.name)
                failed_at = (i, start)
                break
            if not events:
                continue
            if self.session is None and events[0].session_meta is not None:
                meta = events[0].session_meta
                self.session = {
                    "id": meta.session_id,
                    "cwd": meta.cwd,
                    "subagent": "1" if meta.is_subagent else "",
                }
                if self.gate is not None:
                    held, self.gate = self.gate, None
                    if not self.config.wanted(self.session):
                        self._ignore()
                        return [], None
                    out[:0] = held
            if pos <= replay:
                if old_until >= 0:  # --from-end: session_meta is written even so
                    out.extend(e for e in events if e.kind == EventKind.SESSION_META)
                continue
            out.extend(events)
        if replay >= 0 and pos >= replay:
            self.replay_until = -1
        if old_until >= 0 and pos >= old_until:
            self.old_until = -1
        return self._deliverable(out), failed_at

    def _deliverable(self, events: list[Event]) -> list[Event]:
        """*events* minus those of old lines (``--from-end``), gated, and flushed before."""
        if self.old_lines:
            old = self.old_lines
            events = [
                e
                for e in events
                if e.kind == EventKind.SESSION_META
                or e.provenance is None
                or (e.provenance.end_line or e.provenance.line) > old
            ]
        if self.gate is not None:
            self.gate.extend(events)
            return []
        if not self.suppress:
            return events
        out = []
        for ev in events:
            d = event_digest(ev)
            if d in self.suppress:
                self.suppress.discard(d)
            else:
                out.append(ev)
        return out

    # -- ending ------------------------------------------------------------------------

    def _held_at_end(self, *, rewritten: bool = False) -> list[Event]:
        """The events the adapter holds, as the file's content ends (``finish()``).

        A whole document that is *rewritten* is how its harness records a turn: it
        is read again from the start and only new events are written.
        """
        adapter = self.adapter
        if adapter is None or self.status != "active":
            return []
        if rewritten and adapter.whole_document:
            return []
        try:
            if adapter.whole_document:
                self._feed_held_line(adapter)
            held = safe_events(adapter.finish())
        except ParseError as exc:
            self.config.notice(f"{exc.with_path(self.name)}; its held events are lost")
            return []
        if adapter.whole_document:
            held = unseen(self.shown, held)
        return self._deliverable(held)

    def _feed_held_line(self, adapter: Adapter) -> None:
        """Give a whole document its last line when the file ends without a newline.

        Such a document (Continue writes its session with none) is complete as
        saved; its last line would otherwise wait for a newline that never comes.
        """
        held = self.tail.splitter.held()
        if held is not None:
            line = adapter_line(adapter, held[1], held[0])
            if line:
                adapter.feed(line, held[0])

    def start_over(self) -> None:
        """Follow the path again from its start (after truncation or replacement)."""
        self.tail.restart()
        self.adapter, self.harness = None, ""
        self.status, self.early, self.suppress, self.session = "new", [], set(), None
        self.replay_until = self.old_until = -1
        self.old_lines = 0
        self.dormant, self.initial, self.entry = None, False, None
        self.old_marker = None
        self.identity = None
        self.gate = [] if self.config.filtered else None
        self.vanished_at = None
        self._snap_offset, self._snap_size = -1, 0
        self.again = True

    def end(self, notice: str | None) -> Batch:
        """The file is gone for good: its held events, its entry forgotten, *notice* said."""
        events = self._held_at_end()
        if notice:
            self.config.notice(f"{self.name}: {notice}")
        batch = Batch(events, self.mark(forget=True, done=True))
        batch.mark.end = "removed"
        self.status = "ended"
        self.tail.close()
        return batch

    def held_in_entry(self, entry: dict[str, Any]) -> list[Event]:
        """The events a saved entry's adapter snapshot holds (its file is gone or changed)."""
        state = self.config.state
        snapshot = state.adapter_snapshot(entry) if state is not None else None
        if snapshot is None:
            return []
        try:
            adapter = adapter_class(str(entry["harness"]))(self.config.options, on_skip=None)
            adapter.restore(snapshot)
            held = safe_events(adapter.finish())
        except Exception:
            return []
        suppress = set(entry.get("flushed") or ())
        old = int(entry.get("old_lines", 0))
        return [
            e
            for e in held
            if event_digest(e) not in suppress
            and (
                not old
                or e.kind == EventKind.SESSION_META
                or e.provenance is None
                or (e.provenance.end_line or e.provenance.line) > old
            )
        ]

    def flush(self) -> Batch | None:
        """A flushing stop: the events the adapter still holds, marked as written."""
        adapter = self.adapter
        if adapter is None or self.status != "active":
            return None
        snapshot = adapter.snapshot() if self.config.checkpoint else None
        whole = adapter.whole_document
        if whole:
            self._feed_held_line(adapter)
        held = safe_events(adapter.finish())
        if whole:
            held = unseen(self.shown, held)
        if not held:
            return None
        digests = {event_digest(e) for e in held}
        events = self._deliverable(held)
        self.suppress |= digests
        return Batch(events, self.mark(snapshot=snapshot))

    def checkpoint(self) -> Batch | None:
        """An empty batch recording a fresh snapshot, when the last one is older (at a stop)."""
        if (
            not self.config.checkpoint
            or self.adapter is None
            or self.status != "active"
            or self._snap_offset == self.tail.splitter.offset
        ):
            return None
        return Batch([], self.mark(fresh=True))

    def final(self, *, flush: bool) -> Batch | None:
        """The last batch at a stop, once everything was read.

        What the adapter holds (*flush*) or a fresh snapshot of it (a stop that
        holds it, for the next run), and a partial last line said and marked.
        """
        torn = self.torn
        if torn is not None:
            line, size = torn
            self.config.notice(
                f"{self.name}: stopped with a partial last line ({size} bytes, line {line}) "
                "not read: it may still be completed"
                + (
                    "; the next run with this state reads it whole"
                    if self.config.checkpoint
                    else ""
                )
            )
        batch = (self.flush() if flush else None) or self.checkpoint()
        if batch is None and torn is None:
            return None
        batch = batch or Batch([], self.mark())
        assert isinstance(batch.mark, Mark)
        batch.mark.torn = torn
        return batch

    @property
    def torn(self) -> tuple[int, int] | None:
        """``(line, bytes)`` of a partial last line held back, if any."""
        pending = self.tail.pending
        if not pending or self.status != "active":
            return None
        return self.tail.splitter.lineno + 1, pending

    # -- marks -------------------------------------------------------------------------

    def _identity(self) -> str:
        """The transcript's identity; read from its first line when this run did not read it."""
        if self.identity is None:
            try:
                with open(self.tail.path, "rb") as f:
                    st = os.fstat(f.fileno())
                    first = f.readline(IDENTITY_HEAD_BYTES)
            except OSError:
                return ""
            if first.endswith(b"\n"):
                first = first[:-1]
            dev, ino = (self.tail.dev, self.tail.ino) if self.tail.ino else (st.st_dev, st.st_ino)
            self.identity = transcript_identity(dev, ino, first)
        return self.identity

    def mark(
        self,
        *,
        position: dict[str, Any] | None = None,
        snapshot: bytes | None = None,
        fresh: bool = False,
        forget: bool = False,
        done: bool = False,
        restart: bool = False,
    ) -> Mark:
        """The mark of a batch that ends here: what to record once it is delivered.

        *restart*: the file's content ended and it is read again from its start;
        what is recorded says so (rather than forgetting the transcript), so a
        follower killed before more is recorded still knows the file, by its
        inode, under this name.
        """
        session = self.session or {}
        mark = Mark(
            self.name,
            self.harness,
            path=self.tail.path,
            identity=self._identity(),
            session_id=session.get("id", ""),
            is_subagent=bool(session.get("subagent")),
            forget=forget,
            done=done,
            # A whole document rewritten is how its harness records a turn, not a restart:
            # only its new events are written.
            restarted=restart and not (self.adapter is not None and self.adapter.whole_document),
        )
        if restart and self.config.checkpoint and self.tail.ino:
            mark.entry = {
                "harness": "",
                "offset": 0,
                "line": 0,
                "dev": self.tail.dev,
                "ino": self.tail.ino,
                "head_len": 0,
                "head_sha256": sha256_hex(b""),
                "marker_sha256": sha256_hex(b""),
                "path": self.tail.path,
                # no snapshot: the one of the old content must not be carried over
                "adapter": None,
                "snapshot_offset": 0,
                "snapshot_line": 0,
            }
            return mark
        if forget or restart or not self.config.checkpoint or self.adapter is None:
            return mark
        entry: dict[str, Any] = position if position is not None else self.tail.position()
        offset = int(entry["offset"])
        if snapshot is None and (
            fresh
            or self._snap_offset < 0
            or (offset != self._snap_offset and self._snap_size <= SNAPSHOT_SMALL_BYTES)
            or offset - self._snap_offset
            >= max(SNAPSHOT_MIN_BYTES, SNAPSHOT_GROWTH * self._snap_size)
        ):
            snapshot = self.adapter.snapshot()
        if snapshot is not None:
            entry["adapter"] = encode_snapshot(snapshot)
            entry["snapshot_offset"] = offset
            entry["snapshot_line"] = entry["line"]
            self._snap_offset, self._snap_size = offset, len(snapshot)
        entry["harness"] = self.harness
        entry["flushed"] = sorted(self.suppress)
        if self.tail.path != self.name:
            entry["path"] = self.tail.path
        if self.shown:
            entry["document_events"] = sorted(self.shown)
        if self.replay_until > offset:
            entry["discard_until"] = self.replay_until
        if self.old_lines:
            entry["old_lines"] = self.old_lines
        if self.session is not None:
            entry["session"] = self.session
        mark.entry = entry
        return mark
