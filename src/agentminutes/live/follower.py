"""``follow``: transcripts parsed while the agent is still writing them.

A :class:`Follower` watches one transcript, several, or folders of them, and
yields :class:`~agentminutes.Batch` es of events as lines are completed on
disk. Each transcript has its own :class:`~agentminutes.live.tail.TailFile`
(offsets, identity, truncation) and its own adapter, chosen by detection, so
every harness with an adapter is followed with no code of its own. One
waker (watchfiles, or stat polling) serves them all.

Batch marks
    Every batch's ``mark`` is a :class:`Mark`: which transcript, and (when
    checkpointing) the progress entry to save once the sink has taken the
    batch's events: byte offset after the last complete line, line number,
    file identity, and the adapter's snapshot at that point.

Held events and stops
    An adapter may hold events that later lines complete (an assistant
    message folded from several records). They are written when a later
    record closes them, or at a stop that *flushes* (``finish()``): SIGINT,
    ``--idle-exit``, SIGTERM without ``--state``, the end of the library
    iterator. A flushing stop records in the checkpoint the adapter snapshot
    from *before* ``finish()`` together with the digests of the events
    ``finish()`` wrote; the next run restores the snapshot and drops an event
    it produces again with one of those digests. A message that was complete
    at the stop is therefore written exactly once; one that the agent
    continued after the stop is written again, complete, under the same
    ``message_id`` (the later one supersedes). SIGTERM with ``--state`` is a
    *holding* stop (a supervisor restarting the follower): held events stay in
    the saved snapshot and the next run writes them where ``convert`` would,
    so the two runs print exactly ``convert``'s events, in order.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
import time
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, cast

import msgspec

from agentminutes.discovery.roots import is_transcript_name, transcript_patterns
from agentminutes.errors import AgentminutesError, DetectError, ParseError, SourceError, UsageError
from agentminutes.harness import (
    SNIFF_BYTES,
    Adapter,
    ParseOptions,
    adapter_class,
    detect,
    is_document_adapter,
)
from agentminutes.live.ids import IDENTITY_HEAD_BYTES, transcript_identity
from agentminutes.live.state import FollowState, encode_snapshot
from agentminutes.live.tail import (
    PollWaker,
    TailFile,
    Waker,
    make_waker,
    marker_after,
    sha256_hex,
)
from agentminutes.pipeline.batch import Batch
from agentminutes.pipeline.conversion import clean_line, feed_record
from agentminutes.pipeline.sources import LineBatch
from agentminutes.schema import Event, EventKind

if TYPE_CHECKING:
    import anyio
    import anyio.abc

__all__ = ("Envelope", "FollowConfig", "Follower", "Mark", "Target", "targets_for")

_BOM: Final = b"\xef\xbb\xbf"
#: How often every followed file is stat-ed even without a notification (s).
RECONCILE_S: Final = 2.0
#: How often folders are walked for transcripts notification may have missed (s).
RESCAN_NOTIFY_S: Final = 30.0
RESCAN_POLL_S: Final = 1.0
#: How long a new folder is rescanned after it appeared, and how often (s): files created
#: in it before its watch was in place raise no event.
FRESH_DIR_S: Final = 2.0
FRESH_DIR_STEP_S: Final = 0.05
#: Files kept open at most; the least recently active others are released (reopened on change).
MAX_OPEN_FILES: Final = 64

_digest_encoder = msgspec.json.Encoder()


def event_digest(event: Event) -> str:
    """A stable digest of an event's JSON (what a flushed-then-restored stop compares)."""
    return hashlib.sha256(_digest_encoder.encode(event)).hexdigest()


class Envelope(msgspec.Struct, kw_only=True):
    """One event of a multi-transcript follow, with the transcript it came from.

    As JSON (one per line): ``{"transcript": "/abs/path.jsonl", "harness":
    "claude-code", "id": "…", "session_id": "…", "is_subagent": false,
    "event": {...}}``; the event is exactly what ``convert --format jsonl``
    prints for that transcript.
    ``id`` is the event's deterministic id (:mod:`agentminutes.live.ids`): the
    same in every delivery of the event, so a collector drops repeats by it.
    ``session_id`` and ``is_subagent`` come from the transcript's
    ``session_meta`` (remembered in ``--state``, so they are there after a
    resume too); empty until the transcript has written one.
    """

    transcript: str
    harness: str
    id: str = ""
    session_id: str = ""
    is_subagent: bool = False
    event: Event


@dataclass(slots=True)
class Mark:
    """What a follow batch completes: a transcript, and the progress to save for it.

    ``identity`` is the transcript's identity (:func:`~agentminutes.live.ids.transcript_identity`,
    what event ids start with); ``session_id``/``is_subagent`` are its ``session_meta``'s.
    """

    transcript: str
    harness: str
    entry: dict[str, Any] | None = None
    identity: str = ""
    session_id: str = ""
    is_subagent: bool = False


@dataclass(frozen=True, slots=True)
class Target:
    """A path to follow: one transcript (``folder=False``) or every transcript under a folder."""

    path: str
    folder: bool
    patterns: tuple[str, ...] = ("*.jsonl",)


def targets_for(paths: Sequence[str | os.PathLike[str]], harness: str = "auto") -> list[Target]:
    """Classify *paths*: an existing directory (or one written with a trailing slash) is a folder."""
    patterns = transcript_patterns(harness)
    out = []
    for p in paths:
        raw = os.fspath(p)
        path = os.path.abspath(os.path.expanduser(raw))
        folder = os.path.isdir(path) or raw.endswith(("/", os.sep))
        out.append(Target(path, folder, patterns))
    return out


def resolve_targets(paths: Sequence[str | os.PathLike[str]] | None, harness: str) -> list[Target]:
    """The targets to follow: *paths*, or with none the harness's own transcript folders."""
    from agentminutes.discovery.roots import default_roots

    if paths:
        return targets_for(list(paths), harness)
    if harness in ("", "auto"):
        raise UsageError("give a target, or a harness to follow its default transcript folders")
    patterns = transcript_patterns(harness)
    return [Target(str(p), True, patterns) for p in default_roots(harness)]


def make_follower(
    targets: Sequence[Target],
    *,
    harness: str = "auto",
    state: str | os.PathLike[str] | None = None,
    from_end: bool = False,
    idle_exit: float | None = None,
    poll: bool = False,
    cwd: str | None = None,
    session_id: str | None = None,
    permissive: bool = False,
    keep_raw: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    stop_event: anyio.Event | None = None,
) -> tuple[Follower, FollowState | None]:
    """A :class:`Follower` for the common options, and the state file it checkpoints to."""
    if idle_exit is not None and idle_exit <= 0:
        raise UsageError("idle exit must be a positive number of seconds")
    follow_state = FollowState(os.fspath(state)) if state is not None else None
    config = FollowConfig(
        harness=harness,
        options=ParseOptions(
            permissive=permissive,
            keep_raw=keep_raw,
            harness_version=harness_version,
            text_form=text_form,
        ),
        from_end=from_end,
        poll=poll,
        idle_exit=idle_exit,
        cwd=cwd,
        session_id=session_id,
        state=follow_state,
        checkpoint=follow_state is not None,
        stop_event=stop_event,
    )
    return Follower(targets, config), follow_state


def _stderr_notice(message: str) -> None:
    print(f"agentminutes: {message}", file=sys.stderr, flush=True)


@dataclass
class FollowConfig:
    """How a :class:`Follower` parses, where it starts, and what it keeps."""

    harness: str = "auto"
    options: ParseOptions = field(default_factory=ParseOptions)
    from_end: bool = False
    poll: bool = False
    idle_exit: float | None = None
    cwd: str | None = None
    session_id: str | None = None
    #: Saved progress to resume from.
    state: FollowState | None = None
    #: Put checkpoint entries (with adapter snapshots) into batch marks.
    checkpoint: bool = False
    #: Setting this event stops the follow as :meth:`Follower.stop` does (flushing).
    stop_event: anyio.Event | None = None
    notice: Callable[[str], None] = _stderr_notice

    def __post_init__(self) -> None:
        # Adapters that would otherwise hold a whole file (to reorder it) emit
        # as lines arrive when told the input is live.
        if not self.options.live:
            self.options = dataclasses.replace(self.options, live=True)


class _Transcript:
    """One followed transcript: its file, its adapter and what is held back."""

    def __init__(self, key: str, *, single: bool = False, named: bool = False) -> None:
        self.key = key
        #: The only transcript followed: its errors end the follow.
        self.single = single
        #: Named as a target (not found in a folder): waited for when it disappears.
        self.named = named
        #: Found when the follow started (``--from-end`` skips what those hold).
        self.initial = False
        self.tail = TailFile(key)
        self.adapter: Adapter | None = None
        self.harness = ""
        #: new (not opened yet) | active | ignored | failed | gone
        self.status = "new"
        #: Lines read before the format could be detected (blank lines only).
        self.early: LineBatch = []
        self.early_offset = 0
        #: Events of lines ending at or before this offset are not written (-1: none).
        self.discard_until = -1
        self.keep_meta = False
        #: (size, mtime) a --from-end transcript had at start; read once it changes.
        self.dormant: tuple[int, int] | None = None
        #: Events held until session_meta shows whether --cwd/--session-id want them.
        self.gate: list[Event] | None = None
        #: Digests of events an earlier run's flushing stop already wrote.
        self.suppress: set[str] = set()
        #: For a whole-document transcript (rewritten, not appended to): digests
        #: of the events written so far, kept across its rewrites.
        self.shown: set[str] = set()
        #: session id, cwd and subagent flag ("1" or "") from the transcript's
        #: session_meta, once seen.
        self.session: dict[str, str] | None = None
        #: The transcript's identity (event ids), from its first line; None until known.
        self.identity: str | None = None
        self.error: AgentminutesError | None = None
        self.again = False
        self.last_active = 0.0

    def drop_suppressed(self, events: list[Event]) -> list[Event]:
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


class Follower:
    """Follows transcripts and yields batches of their events as lines arrive.

    Iterate :meth:`batches`; call :meth:`stop` (from another task or a signal
    handler) to end it: it reads what is on disk, flushes held events when
    asked to, and returns.
    """

    def __init__(self, targets: Sequence[Target], config: FollowConfig | None = None) -> None:
        if not targets:
            raise SourceError("nothing to follow")
        self.targets = list(targets)
        self.config = config or FollowConfig()
        self.multi = len(self.targets) > 1 or any(t.folder for t in self.targets)
        self.files: dict[str, _Transcript] = {}
        self._stopping = False
        self._flush = True
        self._waker: Waker | None = None
        self._waker_forced_poll = False
        self._last_activity = time.monotonic()
        self._open: set[str] = set()
        #: Folders that appeared while following, rescanned until the given time.
        self._fresh: dict[str, float] = {}
        #: :meth:`prime` already made the first pass over what is on disk.
        self._primed = False
        for t in self.targets:
            if not t.folder:
                tr = _Transcript(t.path, single=not self.multi, named=True)
                tr.initial = True
                self.files[t.path] = tr

    # -- control ----------------------------------------------------------------

    def stop(self, *, flush: bool = True) -> None:
        """End the follow: read what is on disk, then (*flush*) write held events too."""
        self._stopping = True
        self._flush = self._flush and flush
        if self._waker is not None:
            self._waker.interrupt()

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stopping

    @property
    def skipped(self) -> dict[str, int]:
        """Skipped native records so far, over every transcript, by record type."""
        out: dict[str, int] = {}
        for tr in self.files.values():
            if tr.adapter is not None:
                for k, v in tr.adapter.skipped.items():
                    out[k] = out.get(k, 0) + v
        return out

    # -- the loop ---------------------------------------------------------------

    def prime(self) -> list[Batch]:
        """Read, synchronously, what the transcripts hold now; the batches it completes.

        A follower that starts late (a restart from ``--state``, or a follow of a
        running session) has lines waiting on disk. Reading them before the
        event loop and the file watcher exist gets their events out a few tens
        of milliseconds sooner; :meth:`batches` then carries on from there. A
        transcript whose reading fails is left for :meth:`batches` to report.
        """
        for t in self.targets:
            if t.folder:
                self._scan(t.path, initial=True)
        self._primed = True
        out: list[Batch] = []
        for tr in list(self.files.values()):
            while tr.status in ("new", "active") and tr.error is None:
                batch = self._pump(tr)
                if batch is not None:
                    out.append(batch)
                if not (tr.tail.behind or tr.again):
                    if tr.error is None:
                        self._limit_open(tr)
                    break
                tr.again = False
        return out

    async def batches(self) -> AsyncGenerator[Batch, None]:
        """Batches of events, as the transcripts grow, until :meth:`stop` or ``idle_exit``."""
        cfg = self.config
        try:
            for t in self.targets:
                if t.folder and not self._primed:
                    self._scan(t.path, initial=True)
            due: Iterable[_Transcript] = list(self.files.values())
            now = time.monotonic()
            last_reconcile = last_rescan = now
            while True:
                produced = False
                for tr in due:
                    async with aclosing(self._drain(tr)) as drained:
                        async for batch in drained:
                            produced = True
                            yield batch
                if self._stopping:
                    break
                now = time.monotonic()
                if cfg.idle_exit is not None and now - self._last_activity >= cfg.idle_exit:
                    break
                waker, created = self._ensure_waker()
                if created:
                    # Whatever changed before the watch was in place raised no event:
                    # look at everything once more (new files too), then wait.
                    for t in self.targets:
                        if t.folder:
                            self._scan(t.path, initial=False)
                    due = list(self.files.values())
                    continue
                timeout = FRESH_DIR_STEP_S if self._fresh else RECONCILE_S
                if cfg.idle_exit is not None:
                    timeout = min(timeout, max(0.0, self._last_activity + cfg.idle_exit - now))
                try:
                    changed = await self._wait(waker, timeout)
                except Exception as exc:  # the notifier failed at run time
                    self._fall_back_to_polling(f"file notification failed ({exc})")
                    changed = None
                if self.stopping:
                    break
                now = time.monotonic()
                rescan_every = RESCAN_POLL_S if waker.mode == "poll" else RESCAN_NOTIFY_S
                if now - last_rescan >= rescan_every:
                    last_rescan = now
                    for t in self.targets:
                        if t.folder:
                            self._scan(t.path, initial=False)
                    changed = None
                if changed is None or now - last_reconcile >= RECONCILE_S:
                    last_reconcile = now
                    self._rescan_fresh(now)
                    due = list(self.files.values())
                else:
                    due = self._due(changed) + self._rescan_fresh(now)
                if not produced and not changed:
                    yield Batch([], None)  # a tick: lets the consumer save progress while idle
            # Stopping: take what is on disk now, then (if flushing) what adapters hold.
            for tr in list(self.files.values()):
                async with aclosing(self._drain(tr)) as drained:
                    async for batch in drained:
                        yield batch
            if self._flush:
                for tr in list(self.files.values()):
                    flushed = self._finish(tr)
                    if flushed is not None:
                        yield flushed
        finally:
            if self._waker is not None:
                self._waker.close()
                self._waker = None
            for tr in self.files.values():
                tr.tail.close()

    async def _wait(self, waker: Waker, max_wait: float) -> set[str] | None:
        import anyio

        """The waker's wait, cut short when the configured stop event is set."""
        event = self.config.stop_event
        if event is None:
            return await waker.wait(max_wait)
        if event.is_set():
            self.stop()
            return set()
        result: set[str] | None = set()
        async with anyio.create_task_group() as tg:

            async def stop_on_event() -> None:
                await event.wait()
                self.stop()

            tg.start_soon(stop_on_event)
            result = await waker.wait(max_wait)
            tg.cancel_scope.cancel()
        return result

    async def _drain(self, tr: _Transcript) -> AsyncGenerator[Batch, None]:
        import anyio

        while tr.status in ("new", "active"):
            if tr.error is None:
                batch = self._pump(tr)
                if batch is not None:
                    yield batch
            if tr.error is not None:
                error, tr.error = tr.error, None
                if tr.single:
                    raise error
                self.config.notice(f"{error}; no longer following {tr.key}")
                tr.status = "failed"
                tr.tail.close()
                return
            if not (tr.tail.behind or tr.again):
                self._limit_open(tr)
                return
            tr.again = False
            await anyio.lowlevel.checkpoint()

    def _limit_open(self, tr: _Transcript) -> None:
        """Keep at most :data:`MAX_OPEN_FILES` transcripts open (many-file folders)."""
        if not self.multi:
            return
        if tr.tail.is_open and tr.status == "active":
            self._open.add(tr.key)
        else:
            self._open.discard(tr.key)
        while len(self._open) > MAX_OPEN_FILES:
            oldest = min(
                self._open, key=lambda k: self.files[k].last_active if k in self.files else 0
            )
            self._open.discard(oldest)
            if oldest in self.files:
                self.files[oldest].tail.release()

    # -- waking -----------------------------------------------------------------

    def _watch_paths(self) -> tuple[list[str], bool]:
        paths: list[str] = []
        recursive = False
        for t in self.targets:
            p = t.path if t.folder else os.path.dirname(t.path)
            recursive = recursive or t.folder
            if p not in paths:
                paths.append(p)
        return paths, recursive

    def _ensure_waker(self) -> tuple[Waker, bool]:
        """The waker to wait on, and whether it was set up just now."""
        waker = self._waker
        if waker is not None and not (self._waker_forced_poll and self._watch_dirs_exist()):
            return waker, False
        if waker is not None:
            waker.close()
        paths, recursive = self._watch_paths()
        if not all(os.path.isdir(p) for p in paths):
            # Wait for the folders to appear, polling; notification takes over then.
            self._waker, self._waker_forced_poll = PollWaker(), not self.config.poll
            return self._waker, waker is None
        new, reason = make_waker(paths, recursive=recursive, poll=self.config.poll)
        if reason is not None:
            self.config.notice(f"{reason}; polling for changes instead")
        self._waker, self._waker_forced_poll = new, False
        return new, True

    def _watch_dirs_exist(self) -> bool:
        return all(os.path.isdir(p) for p in self._watch_paths()[0])

    def _fall_back_to_polling(self, reason: str) -> None:
        self.config.notice(f"{reason}; polling for changes instead")
        if self._waker is not None:
            self._waker.close()
        self._waker, self._waker_forced_poll = PollWaker(), False
        self._fresh.clear()

    def _due(self, changed: set[str]) -> list[_Transcript]:
        due: list[_Transcript] = []
        for path in changed:
            tr = self.files.get(path)
            if tr is None:
                tr = self._consider(path)
            if tr is not None and tr not in due:
                due.append(tr)
        return due

    # -- discovery --------------------------------------------------------------

    def _folder_of(self, path: str) -> Target | None:
        for t in self.targets:
            if t.folder and (path == t.path or path.startswith(t.path.rstrip(os.sep) + os.sep)):
                return t
        return None

    def _consider(self, path: str) -> _Transcript | None:
        """A path a notification named that is not followed yet: a new transcript, or a folder."""
        target = self._folder_of(path)
        if target is None:
            return None
        if os.path.isdir(path):
            self._fresh[path] = time.monotonic() + FRESH_DIR_S
            return None
        if not is_transcript_name(os.path.basename(path), target.patterns):
            return None
        if not os.path.isfile(path):
            return None
        return self._add(path, initial=False)

    def _rescan_fresh(self, now: float) -> list[_Transcript]:
        """Scan the folders that appeared lately; the transcripts found in them."""
        found: list[_Transcript] = []
        for folder, until in list(self._fresh.items()):
            found.extend(self._scan(folder, initial=False))
            if now >= until:
                del self._fresh[folder]
        return found

    def _scan(self, folder: str, *, initial: bool) -> list[_Transcript]:
        """Add every transcript under *folder* not followed yet; the ones added."""
        target = self._folder_of(folder)
        if target is None or not os.path.isdir(folder):
            return []
        added = []
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames.sort()
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                if path not in self.files and is_transcript_name(name, target.patterns):
                    added.append(self._add(path, initial=initial))
        return added

    def _add(self, path: str, *, initial: bool) -> _Transcript:
        tr = _Transcript(path)
        tr.initial = initial
        self.files[path] = tr
        return tr

    # -- reading one transcript ------------------------------------------------

    def _begin(self, tr: _Transcript) -> bool:
        """Open a transcript and choose where to start; ``False`` while it does not exist."""
        if not tr.tail.open():
            return False
        tr.status = "active"
        cfg = self.config
        if cfg.cwd is not None or cfg.session_id is not None:
            tr.gate = []
        entry = cfg.state.get(tr.key) if cfg.state is not None else None
        if entry is not None:
            self._resume(tr, entry)
        elif cfg.from_end and tr.initial:
            size, mtime_ns, end = tr.tail.end_of_lines()
            tr.dormant = (size, mtime_ns)
            tr.discard_until, tr.keep_meta = end, True
        return True

    def _resume(self, tr: _Transcript, entry: dict[str, Any]) -> None:
        assert self.config.state is not None
        tr.shown = set(entry.get("document_events") or ())
        try:
            offset, line = int(entry["offset"]), int(entry["line"])
            reason = tr.tail.resume(
                offset=offset,
                lineno=line,
                dev=int(entry.get("dev", 0)),
                ino=int(entry.get("ino", 0)),
                head=(int(entry["head_len"]), str(entry["head_sha256"])),
                marker=str(entry["marker_sha256"]),
            )
            cls = adapter_class(str(entry["harness"]))
        except (KeyError, ValueError, TypeError, AgentminutesError) as exc:
            reason = f"its saved progress is unusable ({exc})"
        if reason is not None:
            self.config.notice(f"{tr.key}: {reason}; following it from the start")
            tr.tail.restart()
            tr.tail.open()
            return
        tr.suppress = set(entry.get("flushed") or ())
        snapshot = self.config.state.adapter_snapshot(entry)
        adapter = cls(self.config.options, on_skip=None)
        if snapshot is not None:
            try:
                adapter.restore(snapshot)
            except Exception:
                snapshot = None
        if snapshot is None:
            # Another version saved it (or it is unreadable): rebuild the adapter's
            # state by replaying the lines already delivered, writing none of them.
            tr.tail.restart()
            tr.tail.open()
            tr.discard_until, tr.keep_meta = offset, False
            return
        tr.adapter, tr.harness = adapter, cls.name
        discard = int(entry.get("discard_until", -1))
        if discard > offset:
            tr.discard_until, tr.keep_meta = discard, bool(entry.get("keep_meta", False))
        session = entry.get("session")
        if isinstance(session, dict):
            tr.session = {str(k): str(v) for k, v in session.items()}
            if tr.gate is not None and not self._wanted(tr.session):
                tr.status = "ignored"
                tr.tail.close()
            tr.gate = None

    def _pump(self, tr: _Transcript) -> Batch | None:
        """Read one chunk of what *tr* has appended; the batch of events it completes."""
        if tr.status == "new" and not self._begin(tr):
            return None
        if tr.status != "active":
            return None
        if tr.dormant is not None:
            try:
                st = os.stat(tr.key)
            except OSError:
                st = None
            if st is not None and (st.st_size, st.st_mtime_ns) == tr.dormant:
                return None
            tr.dormant = None
        base_offset = tr.tail.splitter.offset
        base_marker = tr.tail.commit_marker
        try:
            lines, reset = tr.tail.read()
        except OSError as exc:
            tr.error = SourceError(f"{tr.key}: {exc.strerror or exc}")
            return None
        events: list[Event] = []
        position: dict[str, Any] | None = None
        if lines:
            self._last_activity = tr.last_active = time.monotonic()
            if self._waker is not None:
                self._waker.note_activity()
            events, failed_at = self._feed(tr, lines, base_offset)
            if failed_at is not None:
                i, offset = failed_at
                position = tr.tail.position()
                position.update(
                    offset=offset,
                    line=lines[i][0] - 1,
                    marker_sha256=sha256_hex(marker_after(base_marker, lines[:i])),
                )
        adapter = tr.adapter
        if (
            lines
            and adapter is not None
            and adapter.whole_document
            and not tr.tail.behind
            and tr.error is None
        ):
            events.extend(self._document_news(tr, adapter))
        if reset is not None:
            events.extend(self._reset(tr, reset))
        elif not lines:
            return None
        if tr.status == "ignored":
            return None
        return Batch(events, self._mark(tr, position=position))

    def _detect(self, tr: _Transcript, lines: LineBatch, base_offset: int) -> LineBatch | None:
        """Choose *tr*'s adapter from its first lines; the lines to feed it, or ``None`` to wait."""
        if not tr.early:
            tr.early_offset = base_offset
        tr.early.extend(lines)
        head = b"\n".join(raw for _, raw in tr.early)[:SNIFF_BYTES]
        if not head.strip(b" \t\r\n" + _BOM):
            return None
        try:
            if self.config.harness in ("", "auto"):
                cls, _ = detect(head)
            else:
                cls = adapter_class(self.config.harness)
        except DetectError as exc:
            if tr.single:
                tr.error = DetectError(f"{tr.key}: {exc}")
            else:
                self.config.notice(f"{tr.key}: not a transcript of a known harness; ignored")
                tr.status = "ignored"
                tr.tail.close()
            return None
        if is_document_adapter(cls):
            tr.error = DetectError(
                f"{tr.key}: a {cls.name} source is a whole document (an export or a database), "
                "not a transcript that grows; use convert"
            )
            return None
        tr.adapter = cast("Adapter", cls(self.config.options, on_skip=None))
        tr.harness = cls.name
        early, tr.early = tr.early, []
        return early

    def _feed(
        self, tr: _Transcript, lines: LineBatch, base_offset: int
    ) -> tuple[list[Event], tuple[int, int] | None]:
        """Feed complete lines to *tr*'s adapter; the events, and where a parse error stopped it."""
        if tr.adapter is None:
            detected = self._detect(tr, lines, base_offset)
            if detected is None:
                return [], None
            lines, base_offset = detected, tr.early_offset
        adapter = tr.adapter
        assert adapter is not None
        out: list[Event] = []
        discard = tr.discard_until
        pos = base_offset
        failed_at = None
        for i, (lineno, raw) in enumerate(lines):
            start = pos
            pos += len(raw) + 1
            if lineno == 1:
                tr.identity = transcript_identity(tr.tail.dev, tr.tail.ino, raw)
            line = clean_line(raw, lineno)
            if not line:
                continue
            try:
                events = feed_record(adapter, line, lineno)
            except ParseError as exc:
                tr.error = exc.with_path(tr.key)
                failed_at = (i, start)
                break
            if not events:
                continue
            if tr.session is None and events[0].session_meta is not None:
                meta = events[0].session_meta
                tr.session = {
                    "id": meta.session_id,
                    "cwd": meta.cwd,
                    "subagent": "1" if meta.is_subagent else "",
                }
                if tr.gate is not None:
                    held, tr.gate = tr.gate, None
                    if not self._wanted(tr.session):
                        tr.status = "ignored"
                        tr.tail.close()
                        return [], None
                    out[:0] = held
            if pos <= discard:
                if tr.keep_meta:
                    out.extend(e for e in events if e.kind == EventKind.SESSION_META)
                continue
            out.extend(events)
        if discard >= 0 and pos >= discard:
            tr.discard_until = -1
        if tr.gate is not None:
            tr.gate.extend(out)
            return [], failed_at
        return tr.drop_suppressed(out), failed_at

    def _wanted(self, session: dict[str, str]) -> bool:
        """Whether ``--session-id`` / ``--cwd`` select a transcript with this session_meta."""
        cfg = self.config
        if cfg.session_id is not None and session.get("id", "") != cfg.session_id:
            return False
        if cfg.cwd is not None:
            want = os.path.normpath(os.path.abspath(os.path.expanduser(cfg.cwd)))
            cwd = session.get("cwd", "")
            have = os.path.normpath(cwd) if cwd else ""
            if not (have == want or have.startswith(want.rstrip(os.sep) + os.sep)):
                return False
        return True

    def _document_news(self, tr: _Transcript, adapter: Adapter) -> list[Event]:
        """The events of a whole document read to its end that were not written yet.

        The document is converted on a copy of the adapter, so the follow goes on
        reading; a document the harness is still writing does not parse yet, and
        waits for the next change. The events of its last record are held: the
        harness may rewrite that record (a reply gets its token counts later), so
        they are written once a later save shows a record after it, or at the stop.
        """
        scratch = type(adapter)(self.config.options, on_skip=None)
        scratch.restore(adapter.snapshot())
        try:
            events = scratch.finish()
        except ParseError:
            return []
        starts = [e.provenance.line for e in events if e.provenance is not None]
        last = max(starts, default=0)
        if starts.count(last) < len(starts):
            events = [e for e in events if e.provenance is None or e.provenance.line != last]
        else:
            events = []
        return self._unseen(tr, events)

    @staticmethod
    def _unseen(tr: _Transcript, events: list[Event]) -> list[Event]:
        """*events* of a whole document minus those already written, by identity.

        A rewrite may move records to other lines, so an event is known by what it
        is (kind, ids, subtype) and its rank among events alike, not by position.
        """
        out = []
        rank: dict[str, int] = {}
        for ev in events:
            base = "|".join(
                (
                    ev.kind,
                    ev.id,
                    ev.message_id,
                    ev.tool_call.tool_call_id if ev.tool_call is not None else "",
                    ev.tool_result.tool_call_id if ev.tool_result is not None else "",
                    ev.system.subtype if ev.system is not None else "",
                )
            )
            rank[base] = rank.get(base, 0) + 1
            key = hashlib.sha256(f"{base}|{rank[base]}".encode()).hexdigest()[:32]
            if key not in tr.shown:
                tr.shown.add(key)
                out.append(ev)
        return out

    def _reset(self, tr: _Transcript, reason: str) -> list[Event]:
        """*tr*'s file was truncated, replaced or removed: end it, and start over if it comes back."""
        events: list[Event] = []
        rewritten = tr.adapter is not None and tr.adapter.whole_document and reason != "removed"
        if tr.adapter is not None and tr.status == "active" and not rewritten:
            events = tr.drop_suppressed(tr.adapter.finish())
            if tr.gate is not None:
                events = []
        what = {
            "truncated": "was truncated",
            "replaced": "was replaced by another file",
            "removed": "was removed",
        }[reason]
        if reason == "removed" and not tr.named:
            self.config.notice(f"{tr.key}: {what}; no longer following it")
            tr.status = "gone"
            tr.tail.close()
            del self.files[tr.key]
            return events
        if not rewritten:  # rewriting a whole document is how its harness records a turn
            self.config.notice(f"{tr.key}: {what}; following it again from the start")
        tr.tail.restart()
        tr.adapter, tr.harness = None, ""
        tr.status, tr.early, tr.suppress, tr.session = "new", [], set(), None
        tr.discard_until, tr.dormant, tr.initial = -1, None, False
        if self.config.cwd is not None or self.config.session_id is not None:
            tr.gate = []
        tr.again = True
        return events

    def _finish(self, tr: _Transcript) -> Batch | None:
        """A flushing stop: the events *tr*'s adapter still holds, marked as written."""
        if tr.adapter is None or tr.status != "active":
            return None
        snapshot = tr.adapter.snapshot() if self.config.checkpoint else None
        whole = tr.adapter.whole_document
        held = tr.adapter.finish()
        if whole:
            held = self._unseen(tr, held)
        if not held:
            return None
        digests = {event_digest(e) for e in held}
        events = tr.drop_suppressed(held)
        if tr.gate is not None:
            events = []
        tr.suppress |= digests
        return Batch(events, self._mark(tr, snapshot=snapshot))

    @staticmethod
    def _identity(tr: _Transcript) -> str:
        """*tr*'s identity; read from its first line when this run did not read that line."""
        if tr.identity is None:
            try:
                with open(tr.key, "rb") as f:
                    st = os.fstat(f.fileno())
                    first = f.readline(IDENTITY_HEAD_BYTES)
            except OSError:
                return ""
            if first.endswith(b"\n"):
                first = first[:-1]
            dev, ino = (tr.tail.dev, tr.tail.ino) if tr.tail.ino else (st.st_dev, st.st_ino)
            tr.identity = transcript_identity(dev, ino, first)
        return tr.identity

    def _mark(
        self,
        tr: _Transcript,
        *,
        position: dict[str, Any] | None = None,
        snapshot: bytes | None = None,
    ) -> Mark:
        mark = Mark(tr.key, tr.harness, identity=self._identity(tr))
        if tr.session is not None:
            mark.session_id = tr.session.get("id", "")
            mark.is_subagent = bool(tr.session.get("subagent"))
        if not self.config.checkpoint or tr.adapter is None:
            return mark
        entry = position if position is not None else tr.tail.position()
        entry["harness"] = tr.harness
        entry["adapter"] = encode_snapshot(
            snapshot if snapshot is not None else tr.adapter.snapshot()
        )
        entry["flushed"] = sorted(tr.suppress)
        if tr.shown:
            entry["document_events"] = sorted(tr.shown)
        if tr.discard_until >= 0:
            entry["discard_until"] = tr.discard_until
            entry["keep_meta"] = tr.keep_meta
        if tr.session is not None:
            entry["session"] = tr.session
        mark.entry = entry
        return mark
