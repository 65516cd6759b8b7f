"""``follow``: transcripts parsed while the agent is still writing them.

A :class:`Follower` watches one transcript, several, or folders of them, and
yields :class:`~agentminutes.Batch` es of events as lines are completed on
disk. Each transcript is a :class:`~agentminutes.live.transcript.Transcript`
(its file, offsets, identity, adapter); one
:class:`~agentminutes.live.watch.Watcher` says which paths changed.

The loop
    Every path a notification names is kept until it has been looked at:
    a known transcript is read, a new file becomes a transcript, a new folder
    is scanned. Reading goes round the transcripts with something to read,
    one chunk (at most 1 MiB) each, so the work of a wake-up is the bytes
    appended, whatever the number of idle transcripts. Nothing is looked at
    on a timer, except where notification cannot see changes (polled folders,
    :mod:`agentminutes.live.polling`) and, with the thread notifier (which
    cannot report a lost event), every folder every 30 s.

Identity
    A transcript is its file — device, inode and first bytes — not its path.
    A file renamed within the followed folders (Codex moving a rollout to
    ``archived_sessions/``) is the same transcript: it is not read again and
    keeps the name it was first followed under. A file whose path vanishes is
    read to its end and kept open for :data:`MOVE_GRACE_S` (its new path may be
    reported a moment later; a writer may still be finishing a deleted file);
    then what it holds is written and it is no longer followed. A named
    target is waited for when it disappears.

Stops
    :meth:`stop` (or the stop event, or ``idle_exit``): every folder is
    scanned once more and everything found is read to its end, then held
    events are flushed (see :mod:`agentminutes.live.transcript`) unless the
    stop holds them (SIGTERM with ``--state``: they stay in the state).
"""

from __future__ import annotations

import collections
import os
import stat
import time
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Final, TypeVar

from agentminutes.discovery.roots import is_transcript_name
from agentminutes.errors import SourceError, UsageError
from agentminutes.harness import ParseOptions
from agentminutes.harness.base import detects
from agentminutes.live.config import (
    Envelope,
    FollowConfig,
    Mark,
    Target,
    resolve_targets,
    target_of,
    targets_for,
    transcript_files,
    watch_roots,
)
from agentminutes.live.polling import PollSchedule
from agentminutes.live.registry import Registry
from agentminutes.live.state import FollowState
from agentminutes.live.transcript import Transcript
from agentminutes.live.watch import Changes, Watcher
from agentminutes.pipeline.batch import Batch

if TYPE_CHECKING:
    import anyio

    from agentminutes.pipeline.worker import StepThread

_T = TypeVar("_T")

__all__ = (
    "Envelope",
    "FollowConfig",
    "Follower",
    "Mark",
    "Target",
    "make_follower",
    "resolve_targets",
    "targets_for",
)

#: How long a transcript whose path vanished is kept open and looked for elsewhere (s).
MOVE_GRACE_S: Final = 2.0
#: Files kept open at most; the least recently active others are released (reopened on change).
MAX_OPEN_FILES: Final = 64
#: Batches one step of the worker thread reads at most, and the time it reads for (s).
BATCHES_PER_STEP: Final = 16
STEP_S: Final = 0.005
#: The longest wait without looking at anything (s): a tick lets a consumer save progress.
MAX_WAIT_S: Final = 5.0


def make_follower(
    targets: Sequence[Target],
    *,
    harness: str = "auto",
    state: str | os.PathLike[str] | None = None,
    from_end: bool = False,
    start_at: Mapping[str, int] | None = None,
    idle_exit: float | None = None,
    poll: bool = False,
    cwd: str | None = None,
    session_id: str | None = None,
    permissive: bool = False,
    keep_raw: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    stop_event: anyio.Event | None = None,
    notice: Callable[[str], None] | None = None,
) -> tuple[Follower, FollowState | None]:
    """A :class:`Follower` for the common options, and the state file it checkpoints to.

    *start_at* maps transcript paths to the offset each starts at
    (:attr:`FollowConfig.start_at`).
    """
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
        start_at=_offsets(start_at),
        poll=poll,
        idle_exit=idle_exit,
        cwd=cwd,
        session_id=session_id,
        state=follow_state,
        checkpoint=follow_state is not None,
        stop_event=stop_event,
    )
    if notice is not None:
        config.notice = notice
    return Follower(targets, config), follow_state


def _offsets(start_at: Mapping[str, int] | None) -> dict[str, int]:
    """*start_at* by absolute path; an offset that is not a non-negative integer is an error."""
    out: dict[str, int] = {}
    for path, offset in (start_at or {}).items():
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise UsageError(f"start_at: {path}: {offset!r} is not a byte offset")
        out[os.path.abspath(os.path.expanduser(path))] = offset
    return out


class Follower:
    """Follows transcripts and yields batches of their events as lines arrive.

    Iterate :meth:`batches` (after :meth:`prime`, optionally); call
    :meth:`stop` (from the event loop's thread: another task, a signal
    handler it runs) to end it: it reads what is on disk, flushes held events
    when asked to, and returns.
    """

    def __init__(self, targets: Sequence[Target], config: FollowConfig | None = None) -> None:
        if not targets:
            raise SourceError("nothing to follow")
        self.targets = list(targets)
        self.config = config or FollowConfig()
        self.multi = len(self.targets) > 1 or any(t.folder for t in self.targets)
        self.known = Registry(self.config)
        #: The follow ended after reading everything and writing what was held.
        self.completed = False
        #: Why the follow ended: ``stopped`` (:meth:`stop`, the stop event) or ``idle``.
        self.ended_by = ""
        self._due: dict[Transcript, None] = {}
        self._pending = Changes()
        self._finished: list[Batch] = []
        self._watcher: Watcher | None = None
        self._polls = PollSchedule()
        self._stopping = False
        self._flush = True
        self._started = False
        self._warmed = False
        self._requests: collections.deque[str] = collections.deque()
        self._worker: StepThread | None = None
        #: Applied to each batch in the follow's thread (the library makes envelopes there).
        self.prepare: Callable[[Batch], Batch] | None = None
        self._last_activity = time.monotonic()
        self._last_rescan = time.monotonic()
        self._open: set[Transcript] = set()
        self._named = {t.path for t in self.targets if not t.folder}
        for path in self._named:
            self._add(self._new_transcript(path, initial=True))

    # -- control ----------------------------------------------------------------

    def stop(self, *, flush: bool = True) -> None:
        """End the follow: read what is on disk, then (*flush*) write held events too."""
        self._stopping = True
        self._flush = self._flush and flush
        if self._watcher is not None:
            self._watcher.interrupt()

    @property
    def flushes(self) -> bool:
        """Whether the follow's end writes what is held (no stop yet, or a stop that flushes)."""
        return self._flush

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stopping

    def done(self, transcript: str) -> bool:
        """Write what *transcript* (its name or path) holds now and stop reading it.

        For a runner that knows the agent writing it has finished: its last
        message comes out without waiting for a stop. With a state file it is
        recorded as flushed (a later run does not write it again). Returns
        whether such a transcript is followed, or is a file in the followed
        folders not looked at yet (it is read whole first).

        Only notes the request (call it from the event loop's thread): the
        reading happens in the follow's own step, off the event loop.
        """
        name = os.fspath(transcript)
        if self.known.find(name) is None:
            path = os.path.abspath(name)
            target = self._folder_of(path)
            if target is None or not os.path.isfile(path):
                return False
        self._requests.append(name)
        if self._watcher is not None:
            self._watcher.wake()
        return True

    def knows(self, name: str) -> bool:
        """Whether *name* (a name or path) is a transcript followed now."""
        return self.known.find(name) is not None

    def _take_requests(self) -> None:
        """End the transcripts :meth:`done` named (worker thread)."""
        while self._requests:
            name = self._requests.popleft()
            tr = self.known.find(name)
            if tr is None:
                self._absorb()  # a file the watch reported and nobody looked at yet
                tr = self.known.find(name)
            if tr is None:
                self._consider(os.path.abspath(name))
                tr = self.known.find(name)
            if tr is None or tr.status not in ("new", "active"):
                continue
            self._read_out(tr)
            if tr.error is not None:  # a bad line came before its end: that is how it ends
                self._finished.append(self._failed(tr, None))
                continue
            batch = tr.flush() or Batch([], tr.mark())
            assert isinstance(batch.mark, Mark)
            batch.mark.done = True
            batch.mark.end = "done"
            self._finished.append(batch)
            self._retire(tr, "ended")

    @property
    def files(self) -> dict[str, Transcript]:
        """The transcripts followed now, by name."""
        return self.known.files

    @property
    def followed(self) -> int:
        """How many transcripts were followed in all (ended ones too), by name."""
        return self.known.followed

    @property
    def skipped(self) -> dict[str, int]:
        """Skipped native records so far, over every transcript, by record type."""
        return self.known.skipped

    # -- the loop ---------------------------------------------------------------

    def prime(self) -> Iterator[Batch]:
        """Read, synchronously, what the transcripts hold now: the batches, as they come.

        A follower that starts late (a restart from ``--state``, or a follow of a
        running session) has lines waiting on disk. Reading them before the
        event loop and the file watcher exist gets their events out a few tens
        of milliseconds sooner; :meth:`batches` then carries on from there.
        Each batch is handed out as soon as it is read, so memory does not grow
        with what is on disk.
        """
        self._start()
        while not self._stopping:
            batch = self._next_batch()
            if batch is None:
                return
            yield batch

    async def batches(self) -> AsyncGenerator[Batch, None]:
        """Batches of events, as the transcripts grow, until :meth:`stop` or ``idle_exit``.

        The file system work (stat, read, parse, scan) runs in a worker thread,
        one bounded step at a time, so the event loop only waits: a
        cancellation takes effect once the step under way returns (one chunk
        read and parsed), and leaves no thread working.
        """
        from agentminutes.pipeline.worker import StepThread

        worker = self._worker = StepThread("agentminutes-follow")
        run = worker.run
        cfg = self.config
        try:
            await run(self._open_watch)
            while True:
                if cfg.stop_event is not None and cfg.stop_event.is_set():
                    self.stop()
                ready = await run(lambda: self._prepared(self._produce()))
                for batch in ready:
                    yield batch
                if ready:
                    continue
                if self._stopping:
                    break
                now = time.monotonic()
                if cfg.idle_exit is not None and now - self._last_activity >= cfg.idle_exit:
                    self.ended_by = "idle"
                    break
                if self.known.vanished:
                    await run(lambda: self._expire_vanished(time.monotonic()))
                if self._due or self._finished or self._has_pending() or self._requests:
                    continue
                if not self._warmed:
                    await run(self._warm_up)
                assert self._watcher is not None
                await self._watcher.wait(self._timeout(now), stop=cfg.stop_event, take=False)
                await run(self._after_wait)
                if not (self._due or self._has_pending() or self._requests or self._finished):
                    yield Batch([], None)  # a tick: lets the consumer save progress while idle
            self.ended_by = self.ended_by or "stopped"
            # Stopping: everything on disk now (folders scanned once more), then what is held.
            await run(self._prepare_stop)
            while ready := await run(lambda: self._prepared(self._produce_stopping())):
                for batch in ready:
                    yield batch
            for batch in await run(lambda: self._prepared(self._final_batches())):
                yield batch
            self.completed = True
        finally:
            import anyio

            # Closing the watch drops every inotify watch in the kernel: milliseconds, on
            # the follow's thread too. Shielded: a cancellation still releases everything.
            with anyio.CancelScope(shield=True):
                await run(self._release)
            self._worker = None
            worker.close()

    def _release(self) -> None:
        """Close the watch and every file (worker thread)."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        for tr in self.known.files.values():
            tr.tail.close()

    def _prepared(self, batches: list[Batch]) -> list[Batch]:
        prepare = self.prepare
        return batches if prepare is None else [prepare(b) for b in batches]

    async def run_step(self, step: Callable[[], _T]) -> _T:
        """Run *step* (file work: saving the state) on the follow's thread, off the event loop."""
        from agentminutes.pipeline.worker import off_loop

        if self._worker is not None:
            return await self._worker.run(step)
        return await off_loop(step, "agentminutes-follow")

    def start(self) -> None:
        """The first look at the targets now (a thread may call it before :meth:`batches`):
        which transcripts are there and where each starts."""
        self._start()

    def _open_watch(self) -> None:
        """The first look at the targets, and the watch on their folders (worker thread)."""
        self._start()
        self._watcher = Watcher(
            self._watch_roots(), poll=self.config.poll, notice=self.config.notice
        )
        if self._stopping:
            self._watcher.interrupt()
        # What changed before the watch was in place raised no event: look again.
        self._pending.everything = True
        for folder in self._watcher.polled:
            self._note_polled(folder)

    def _produce(self) -> list[Batch]:
        """The batches ready now: at most :data:`BATCHES_PER_STEP`, or what
        :data:`STEP_S` of reading gives (worker thread)."""
        out: list[Batch] = []
        until = time.monotonic() + STEP_S
        while True:
            self._take_requests()
            self._absorb()
            batch = self._next_batch()
            if batch is None:
                break
            out.append(batch)
            if len(out) >= BATCHES_PER_STEP or time.monotonic() >= until:
                break
        return out

    def _produce_stopping(self) -> list[Batch]:
        """At a stop, the batches of what is on disk, until nothing is left (worker thread)."""
        out: list[Batch] = []
        until = time.monotonic() + STEP_S
        while True:
            self._take_requests()
            self._absorb()
            batch = self._next_batch()
            if batch is None:
                if self._has_pending():
                    continue  # reading found a path to look at (a file replaced)
                break
            out.append(batch)
            if len(out) >= BATCHES_PER_STEP or time.monotonic() >= until:
                break
        return out

    def _after_wait(self) -> None:
        """What the watch reported, and the polls that came due (worker thread)."""
        assert self._watcher is not None
        self._merge(self._watcher.take())
        self._poll_due(time.monotonic())

    def _warm_up(self) -> None:
        """Once idle, load the adapters a transcript's first bytes will need (worker thread).

        A transcript not written yet (or one a followed folder will get) is
        detected when its first record comes; importing the adapters then would
        delay its first events by tens of milliseconds.
        """
        if self._warmed:
            return
        self._warmed = True
        if not detects(self.config.harness):
            return
        waiting = any(t.folder for t in self.targets) or any(
            tr.adapter is None for tr in self.known.files.values()
        )
        if waiting:
            from agentminutes.harness import load_line_adapters

            load_line_adapters()

    def _prepare_stop(self) -> None:
        if self._watcher is not None:
            self._merge(self._watcher.take())
        self._pending.everything = True
        for tr in list(self.known.vanished):
            self._due[tr] = None

    def _final_batches(self) -> list[Batch]:
        """At the stop, once everything was read: vanished files ended, held events flushed."""
        out: list[Batch] = []
        for tr in list(self.known.vanished):
            end = self._end_vanished(tr)
            out.extend(self._finished)  # what it still held on disk comes first
            self._finished.clear()
            out.append(end)
        for tr in list(self.known.files.values()):
            batch = tr.final(flush=self._flush)
            if batch is not None:
                out.append(batch)
        out.extend(self._finished)
        self._finished.clear()
        return out

    def _timeout(self, now: float) -> float:
        """How long to wait: until the next thing due on a timer."""
        cfg = self.config
        timeout = MAX_WAIT_S
        if cfg.idle_exit is not None:
            timeout = min(timeout, self._last_activity + cfg.idle_exit - now)
        if self.known.vanished:
            first = min(tr.vanished_at or now for tr in self.known.vanished)
            timeout = min(timeout, first + MOVE_GRACE_S - now)
        poll_at = self._polls.next_at()
        if poll_at is not None:
            timeout = min(timeout, poll_at - now)
        assert self._watcher is not None
        rescan = self._watcher.rescan_interval
        if rescan is not None:
            timeout = min(timeout, self._last_rescan + rescan - now)
        return max(0.0, timeout)

    # -- reading ------------------------------------------------------------------

    def _next_batch(self) -> Batch | None:
        """Read the next transcript due, one chunk: the next batch, or ``None`` when none is due."""
        while not self._finished and self._due:
            tr = next(iter(self._due))
            del self._due[tr]
            if tr.status not in ("new", "active"):
                continue
            batch, reset = tr.pump()
            self.known.index(tr)
            if tr.error is not None:
                return self._failed(tr, batch)
            if batch is not None and batch.events:
                self._last_activity = time.monotonic()
            if reset == "moved":
                self._moved(tr)
            if tr.again:
                tr.again = False
                self._due[tr] = None  # round robin: after the others due
            else:
                self._limit_open(tr)
                if tr.status == "active" and tr.polled:
                    self._polls.schedule(tr, time.monotonic())
            if batch is not None:
                self._finished.append(batch)
        return self._finished.pop(0) if self._finished else None

    def _failed(self, tr: Transcript, batch: Batch | None) -> Batch:
        """A transcript's line failed to parse (or its file to read): it is not read further."""
        error = tr.error
        assert error is not None
        if tr.single:
            if batch is not None and batch.events:
                self._due = {tr: None, **self._due}  # the error is raised after this batch
                return batch
            tr.error = None
            raise error
        tr.error = None
        self.config.notice(f"{error}; no longer following {tr.name}")
        batch = batch or Batch([], tr.mark())
        assert isinstance(batch.mark, Mark)
        batch.mark.error = error
        self._retire(tr, "failed")
        return batch

    def _read_out(self, tr: Transcript) -> None:
        """Read *tr* to its end now, queueing its batches to come next."""
        while tr.status in ("new", "active"):
            batch, _ = tr.pump()
            self.known.index(tr)  # known by its file: a rescan does not take it for a new one
            if batch is not None:
                self._finished.append(batch)
            if tr.error is not None or not tr.again:
                break
        tr.again = False

    def _limit_open(self, tr: Transcript) -> None:
        """Keep at most :data:`MAX_OPEN_FILES` transcripts open (many-file folders)."""
        if not self.multi:
            return
        if tr.tail.is_open and tr.status == "active" and tr not in self.known.vanished:
            self._open.add(tr)
        else:
            self._open.discard(tr)
        while len(self._open) > MAX_OPEN_FILES:
            oldest = min(self._open, key=lambda t: t.last_active)
            self._open.discard(oldest)
            oldest.tail.release()

    # -- transcripts coming and going -------------------------------------------

    def _new_transcript(self, path: str, *, initial: bool) -> Transcript:
        named = path in self._named
        return Transcript(
            self.config, path, single=named and not self.multi, named=named, initial=initial
        )

    def _add(self, tr: Transcript) -> None:
        self.known.add(tr)
        self._due[tr] = None
        tr.polled = self._polled(tr.tail.path)

    def _retire(self, tr: Transcript, status: str) -> None:
        self.known.retire(tr, status)
        self._due.pop(tr, None)
        self._open.discard(tr)

    def _moved(self, tr: Transcript) -> None:
        """*tr*'s path no longer names its file: keep it open a moment, look for it."""
        self.known.unlink_path(tr)
        if tr.vanished_at is None:
            tr.vanished_at = time.monotonic()
            self.known.vanished.add(tr)
            self._open.discard(tr)
        # The path may name another file now: that is another transcript (or, for a named
        # target, the same name followed again) — looked at once this one is settled.
        self._pending.paths.add(tr.tail.path)

    def _expire_vanished(self, now: float) -> None:
        for tr in list(self.known.vanished):
            if tr.vanished_at is not None and now - tr.vanished_at >= MOVE_GRACE_S:
                self._finished.append(self._end_vanished(tr))

    def _end_vanished(self, tr: Transcript) -> Batch:
        """A vanished transcript was not found elsewhere: read it out, write what it held."""
        self._read_out(tr)
        what = {
            "deleted": "was removed",
            "renamed": "was moved out of the followed folders",
        }.get(tr.tail.vanished(), "was removed or moved away")
        then = "following it again when it reappears" if tr.named else "no longer following it"
        batch = tr.end(f"{what}; {then}")
        self._retire(tr, "ended")
        if tr.named:
            self._add(self._new_transcript(tr.name, initial=False))
        return batch

    def _relocate(self, tr: Transcript, path: str) -> None:
        """*tr*'s file was renamed to *path* within the followed folders: follow it there."""
        self.config.notice(f"{tr.name}: moved to {path}; the same transcript, not read again")
        self.known.move(tr, path)
        if self.config.state is not None:
            self.config.state.move(tr.name, path)
        tr.polled = self._polled(path)
        self._due[tr] = None

    def _claim(self, path: str) -> None:
        """*path* names a new file now: end, or rename, the transcript known by that name."""
        old = self.known.files.get(path)
        if old is None:
            return
        if old in self.known.vanished:
            self._read_out(old)
            then = "following it again from the start" if old.named else "following the new file"
            batch = old.end(f"was replaced by another file; {then}")
            assert isinstance(batch.mark, Mark)
            batch.mark.restarted = True  # the name's events start over with the new file's
            self._retire(old, "ended")
            self._finished.append(batch)
        elif old.tail.path != path:
            # Renamed away and still followed under its first name: it takes its new one.
            self.config.notice(
                f"{path}: a new file took this path; {old.tail.path} is reported under "
                "its own path from now on"
            )
            if old.adapter is not None:
                self._finished.append(Batch([], old.mark(forget=True)))
            self.known.rename(old, old.tail.path)

    # -- discovery --------------------------------------------------------------

    def _start(self) -> None:
        """The first look at the targets: the transcripts there, and where each starts."""
        if self._started:
            return
        self._started = True
        for t in self.targets:
            if t.folder:
                self._scan(t.path, initial=True)
        if self.config.state is None:
            return
        for tr in list(self.known.files.values()):
            self.known.attach_entry(tr)
        self._flush_orphans()

    def _flush_orphans(self) -> None:
        """Saved entries whose file is gone: write what their adapter held, forget them."""
        self._finished.extend(self.known.orphan_batches(self._folder_of))

    def _watch_roots(self) -> list[tuple[str, bool]]:
        return watch_roots(self.targets)

    def _folder_of(self, path: str) -> Target | None:
        return target_of(self.targets, path)

    def _has_pending(self) -> bool:
        p = self._pending
        return bool(p.paths or p.dirs or p.everything)

    def _merge(self, changes: Changes) -> None:
        p = self._pending
        p.paths |= changes.paths
        p.dirs |= changes.dirs
        p.everything = p.everything or changes.everything
        for folder in changes.failed:
            self._note_polled(folder)

    def _absorb(self) -> None:
        """Look at every path notified so far: nothing notified is ever left out."""
        if not self._has_pending():
            return
        pending, self._pending = self._pending, Changes()
        if pending.everything:
            self._last_rescan = time.monotonic()
            for t in self.targets:
                if t.folder:
                    self._scan(t.path, initial=False)
            for tr in self.known.files.values():
                self._due[tr] = None
        for folder in sorted(pending.dirs):
            if os.path.isdir(folder):
                self._scan(folder, initial=False, shallow=folder in self._polls.dirs)
            prefix = folder.rstrip(os.sep) + os.sep
            for path, under in list(self.known.by_path.items()):
                if path.startswith(prefix):
                    self._due[under] = None  # moved or removed with its folder, perhaps
        for path in sorted(pending.paths - pending.dirs):
            known = self.known.by_path.get(path)
            if known is not None:
                self._due[known] = None
            else:
                self._consider(path)

    def _consider(self, path: str) -> None:
        """A path not followed yet: a new transcript, a renamed one, or a folder."""
        target = self._folder_of(path)
        if target is None:
            return
        try:
            st = os.stat(path)
        except OSError:
            return
        if stat.S_ISDIR(st.st_mode):
            if target.folder:
                self._scan(path, initial=False)
            return
        if not stat.S_ISREG(st.st_mode):
            return
        if target.folder and not is_transcript_name(os.path.basename(path), target.patterns):
            return
        self._found(path, st, initial=False)

    def _found(self, path: str, st: os.stat_result, *, initial: bool) -> None:
        """A transcript file at *path*: one followed already (renamed, perhaps), or a new one."""
        if self.known.is_alias(path, st):
            return  # another name (a hard link) of a file followed already
        if self.known.retired(st):
            return  # ended (done, failed) as this very file: not read again from its start
        moved = self.known.same_file(path, st)
        if moved is not None:
            self._relocate(moved, path)
            return
        named = self.known.files.get(path)
        if named is not None and named.named and named.status == "new":
            self._due[named] = None  # a named target that appeared
            return
        self._claim(path)
        if path in self.known.by_path:
            self._due[self.known.by_path[path]] = None
            return
        tr = self._new_transcript(path, initial=initial)
        if not initial:
            self.known.attach_entry(tr)
        self._add(tr)

    def _scan(self, folder: str, *, initial: bool, shallow: bool = False) -> None:
        """Add every transcript under *folder* not followed yet.

        *shallow* (a polled folder whose entries changed): the folders under it
        that are polled already are not walked again.
        """
        target = self._folder_of(folder)
        if target is None or not target.folder:
            return
        found = transcript_files(
            folder,
            target.patterns,
            known=self.known.by_path,
            skip_dirs=self._polls.dirs if shallow else {},
            on_dir=self._polls.remember_dir if self._polled(folder) else None,
        )
        for path, st in found:
            self._found(path, st, initial=initial)

    # -- polling ---------------------------------------------------------------------

    def _polled(self, path: str) -> bool:
        return self._watcher is not None and self._watcher.is_polled(path)

    def _note_polled(self, folder: str) -> None:
        """*folder* is polled from now on: its transcripts and folders go on the schedule."""
        self._polls.add_folder(folder, self.known.by_path, time.monotonic())

    def _poll_due(self, now: float) -> None:
        """Polled transcripts whose time came, and polled folders whose entries changed."""
        transcripts, folders = self._polls.due(now)
        for tr in transcripts:
            self._due[tr] = None
        for folder in folders:
            self._pending.dirs.add(folder)
            self._pending.paths.add(folder)
        for path in self._named:
            named = self.known.files.get(path)
            if named is not None and named.status == "new" and named.polled:
                self._due[named] = None  # a named target still waited for
