"""Growing files: read what was appended, notice truncation and replacement, wake cheaply.

:class:`TailFile` reads one file as it grows. It keeps its own offsets and
reads only the bytes past them, so the work per wake-up is proportional to
what was appended, never to the file. It hands out complete lines only: a
partial last line stays in its :class:`~agentminutes.pipeline.sources.LineSplitter`
until the newline arrives. It also notices when the file stops being the
file it was reading:

* **identity**: device + inode of the open file against what the path names
  now, plus a fingerprint (sha256) of the file's first bytes for checkpoints;
* **truncation**: the size fell below the read offset, or the 32 bytes just
  before the offset changed (an offset marker, as Fluent Bit keeps one: it
  catches a copytruncate that grew back past the offset between two looks).

Wakers say *when* to look, never *what* changed: correctness comes from the
stat + read loop. :class:`NotifyWaker` drives watchfiles' Rust notifier
directly with no grouping delay (debounce 0, a 5 ms step while the files are
busy, 20 ms once idle so an idle follower costs next to no CPU);
:class:`PollWaker` stats on a timer, for ``--poll`` and wherever notification
is unavailable (network filesystems, WSL, an exhausted inotify budget).
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Final

from agentminutes.pipeline.sources import LineBatch, LineSplitter

if TYPE_CHECKING:
    import anyio
    import anyio.abc

__all__ = (
    "HEAD_BYTES",
    "MARKER_BYTES",
    "NotifyWaker",
    "PollWaker",
    "TailFile",
    "Waker",
    "make_waker",
    "marker_after",
    "notify_unavailable_reason",
    "sha256_hex",
    "tail_lines",
)

#: How many leading bytes fingerprint a file (transcripts open with a session id).
HEAD_BYTES: Final = 1024
#: How many bytes before the offset the offset marker covers.
MARKER_BYTES: Final = 32
#: Largest single read; a larger backlog is read in several passes.
READ_BYTES: Final = 1 << 20


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class TailFile:
    """One file read as it grows, from a byte offset that always sits after a newline.

    ``lineno``/``offset`` (the splitter's) are the resume point; ``read_pos``
    also counts the bytes of a held partial line.
    """

    def __init__(self, path: str, *, offset: int = 0, lineno: int = 0) -> None:
        self.path = os.path.abspath(path)
        self.splitter = LineSplitter(lineno=lineno, offset=offset)
        self.read_pos = offset
        self.dev = 0
        self.ino = 0
        self.behind = False  # more bytes were on disk than the last read took
        self._fd: int | None = None
        self._head = b""  # the file's first <= HEAD_BYTES bytes, as far as read
        self._tail = b""  # the <= MARKER_BYTES bytes just before read_pos
        self._commit_tail = b""  # the <= MARKER_BYTES bytes just before splitter.offset
        self._mtime_ns = -1

    # -- opening and resuming ---------------------------------------------------

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def open(self) -> bool:
        """Open the file if it exists now; return whether it is open."""
        if self._fd is not None:
            return True
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except (FileNotFoundError, NotADirectoryError):
            return False
        st = os.fstat(fd)
        self._fd, self.dev, self.ino = fd, st.st_dev, st.st_ino
        return True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def release(self) -> None:
        """Close the file but keep the position: :meth:`read` reopens it once it changes.

        For folders of many transcripts, most of them finished: one open file
        each would exhaust the process's file descriptors.
        """
        self.close()

    def resume(
        self, *, offset: int, lineno: int, dev: int, ino: int, head: tuple[int, str], marker: str
    ) -> str | None:
        """Continue a saved position: ``None`` when the file is the one that was read.

        Otherwise returns why not (the caller starts over from the beginning).
        A new device/inode with the same leading bytes and offset marker is the
        same transcript (a filesystem such as 9P that does not keep inode
        numbers stable, or a copy made while stopped): it continues.
        """
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size < offset:
            return f"it is shorter ({size} bytes) than the saved offset ({offset})"
        head_len, head_sha = head
        first = os.pread(self._fd, head_len, 0)
        if len(first) != head_len or sha256_hex(first) != head_sha:
            return "its first bytes differ from the file that was read"
        k = min(MARKER_BYTES, offset)
        before = os.pread(self._fd, k, offset - k)
        if sha256_hex(before) != marker:
            return "the bytes before the saved offset changed"
        del dev, ino  # content decides; see the docstring
        self._head = os.pread(self._fd, min(HEAD_BYTES, offset), 0)
        self._tail = self._commit_tail = before
        self.read_pos = offset
        self.splitter = LineSplitter(lineno=lineno, offset=offset)
        return None

    def end_of_lines(self) -> tuple[int, int, int]:
        """``(size, mtime_ns, end)`` of the open file now; *end* is just past its last newline."""
        assert self._fd is not None
        st = os.fstat(self._fd)
        pos, end = st.st_size, 0
        while pos > 0:
            start = max(0, pos - READ_BYTES)
            cut = os.pread(self._fd, pos - start, start).rfind(b"\n")
            if cut >= 0:
                end = start + cut + 1
                break
            pos = start
        return st.st_size, st.st_mtime_ns, end

    def seek_end(self) -> None:
        """Start after the last complete line on disk now (``--from-end``)."""
        self._skip_to(self.end_of_lines()[2])

    def _skip_to(self, end: int) -> None:
        """Advance to *end* (just past a newline), counting lines but handing none out."""
        assert self._fd is not None
        lines = 0
        pos = self.read_pos
        while pos < end:
            data = os.pread(self._fd, min(READ_BYTES, end - pos), pos)
            if not data:
                break
            if pos < HEAD_BYTES:
                self._head = (self._head + data)[:HEAD_BYTES]
            lines += data.count(b"\n")
            pos += len(data)
        k = min(MARKER_BYTES, pos)
        self._tail = self._commit_tail = os.pread(self._fd, k, pos - k)
        self.read_pos = pos
        self.splitter = LineSplitter(lineno=self.splitter.lineno + lines, offset=pos)

    def restart(self) -> None:
        """Forget everything and read the path from its beginning (after truncation/replacement)."""
        self.close()
        self.splitter = LineSplitter()
        self.read_pos = 0
        self.dev = self.ino = 0
        self.behind = False
        self._head = self._tail = self._commit_tail = b""
        self._mtime_ns = -1

    # -- reading ------------------------------------------------------------------

    def read(self, limit: int = READ_BYTES) -> tuple[LineBatch, str | None]:
        """Read what was appended since the last call (at most *limit* bytes).

        Returns the complete lines it finished and, when the file stopped being
        this file, why: ``"removed"``, ``"replaced"`` (the path names another
        file; the old one was drained first), or ``"truncated"``. After a
        reason, call :meth:`restart` to follow the path from its beginning.
        ``behind`` tells whether more bytes are waiting.
        """
        self.behind = False
        if self._fd is None:
            if self.ino:  # released: reopen only if the path changed since
                try:
                    st0 = os.stat(self.path)
                except (FileNotFoundError, NotADirectoryError):
                    return [], "removed"
                if st0.st_ino != self.ino or st0.st_dev != self.dev:
                    return [], "replaced"
                if st0.st_size == self.read_pos and st0.st_mtime_ns == self._mtime_ns:
                    return [], None
            if not self.open():
                return [], None
        fd = self._fd
        assert fd is not None
        try:
            st = os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            st = None
        if st is None or st.st_ino != self.ino or st.st_dev != self.dev:
            lines = self._read_rest(fd, limit)
            if self.behind:
                return lines, None
            return lines, "removed" if st is None else "replaced"
        size = st.st_size
        if size < self.read_pos:
            return [], "truncated"
        if size == self.read_pos and st.st_mtime_ns == self._mtime_ns:
            return [], None
        n = min(size - self.read_pos, limit)
        k = min(MARKER_BYTES, self.read_pos)
        data = os.pread(fd, n + k, self.read_pos - k)
        if data[:k] != self._tail[len(self._tail) - k :]:
            return [], "truncated"
        data = data[k:]
        self.behind = self.read_pos + len(data) < size
        if not self.behind:
            self._mtime_ns = st.st_mtime_ns
        return self._take(data), None

    def _read_rest(self, fd: int, limit: int) -> LineBatch:
        data = os.pread(fd, limit, self.read_pos)
        self.behind = len(data) == limit
        return self._take(data)

    def _take(self, data: bytes) -> LineBatch:
        if not data:
            return []
        if len(self._head) < HEAD_BYTES:
            self._head = (self._head + data[: HEAD_BYTES - len(self._head)])[:HEAD_BYTES]
        self.read_pos += len(data)
        self._tail = (self._tail + data[-MARKER_BYTES:])[-MARKER_BYTES:]
        lines = self.splitter.push(data)
        if lines:
            self._commit_tail = marker_after(self._commit_tail, lines)
        return lines

    # -- checkpoints ----------------------------------------------------------------

    def position(self) -> dict[str, object]:
        """The resume point after the last complete line, with what identifies the file."""
        offset = self.splitter.offset
        head = self._head[:offset]
        return {
            "offset": offset,
            "line": self.splitter.lineno,
            "dev": self.dev,
            "ino": self.ino,
            "head_len": len(head),
            "head_sha256": sha256_hex(head),
            "marker_sha256": sha256_hex(self._commit_tail),
        }

    @property
    def commit_marker(self) -> bytes:
        """The (at most :data:`MARKER_BYTES`) bytes just before the resume offset."""
        return self._commit_tail

    @property
    def pending(self) -> int:
        """Bytes of a partial last line held back."""
        return self.splitter.pending


def marker_after(previous: bytes, lines: LineBatch) -> bytes:
    """The last MARKER_BYTES bytes of *previous* followed by *lines* (newlines restored)."""
    out = b""
    for _, raw in reversed(lines):
        out = raw + b"\n" + out
        if len(out) >= MARKER_BYTES:
            return out[-MARKER_BYTES:]
    return (previous + out)[-MARKER_BYTES:]


# -- wakers ---------------------------------------------------------------------------


class Waker:
    """Says when to look at the files again; the follower decides what changed."""

    mode = "none"

    async def wait(self, max_wait: float) -> set[str] | None:
        """Wait for a change, or *max_wait* seconds.

        Returns the paths reported changed (empty on timeout), or ``None`` when
        the waker cannot tell which: look at every file.
        """
        raise NotImplementedError

    def note_activity(self) -> None:
        """The follower found new bytes: stay quick for a while."""

    def interrupt(self) -> None:
        """End the current and every later :meth:`wait` at once (the follower is stopping)."""

    def close(self) -> None:
        """Release what the waker holds (threads, watches)."""


#: Notify: the Rust side's sleep between checks while busy, and once idle (ms).
FAST_STEP_MS: Final = 5
IDLE_STEP_MS: Final = 20
#: Poll: the stat interval while busy, and once idle (s).
FAST_POLL_S: Final = 0.01
IDLE_POLL_S: Final = 0.1
#: How long after the last activity a waker stays quick (s).
BUSY_HOLD_S: Final = 0.5


class _Flag:
    """A thread-safe stop flag with the ``is_set`` the Rust notifier polls."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = False

    def is_set(self) -> bool:
        return self.value


class NotifyWaker(Waker):
    """File-change notification through watchfiles, with no grouping delay.

    watchfiles' ``awatch`` is the same Rust notifier in a loop; driving it
    directly lets the follower pick the step per wait (5 ms while files are
    busy, 20 ms once idle: the notifier polls its change set once per step,
    so the step bounds both the wake-up delay, at most two steps, and the idle
    cost) and stop it within one step when the consumer is cancelled.
    Debounce is 0: a change is reported as soon as one step passes with no
    further paths added.
    """

    mode = "notify"

    def __init__(self, paths: Iterable[str], *, recursive: bool) -> None:
        from watchfiles._rust_notify import RustNotify

        self._stop = _Flag()
        # ignore_permission_denied=False: watchfiles would otherwise ignore *every*
        # error adding a watch (a missing folder, an exhausted inotify budget) and
        # watch nothing; raising lets the follower fall back to polling instead.
        self._rust = RustNotify(list(paths), False, False, 300, recursive, False)
        self._busy_until = 0.0
        self._running = threading.Event()
        self._running.set()

    def note_activity(self) -> None:
        self._busy_until = time.monotonic() + BUSY_HOLD_S

    def interrupt(self) -> None:
        self._stop.value = True

    async def wait(self, max_wait: float) -> set[str] | None:
        if self._stop.value:
            return set()
        deadline = time.monotonic() + max_wait
        while True:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                return set()
            busy = now < self._busy_until
            step = FAST_STEP_MS if busy else IDLE_STEP_MS
            span = min(left, self._busy_until - now) if busy else left
            result = await self._watch(step, max(1, int(span * 1000)))
            if isinstance(result, set):
                self.note_activity()
                return {path for _, path in result}
            if result == "stop":
                return set()
            # "timeout": the busy window or the caller's timeout ended; loop decides

    async def _watch(self, step: int, timeout_ms: int) -> set[tuple[int, str]] | str:
        import anyio

        running = self._running
        running.clear()

        def watch() -> set[tuple[int, str]] | str:
            try:
                return self._rust.watch(0, step, timeout_ms, self._stop)
            finally:
                running.set()

        try:
            return await anyio.to_thread.run_sync(watch, abandon_on_cancel=True)
        except BaseException:
            # Cancelled (or failed): make the thread return within one step and
            # wait for it, so no watch outlives its follower.
            self._stop.value = True
            running.wait(1.0)
            raise

    def close(self) -> None:
        self._stop.value = True
        self._running.wait(1.0)
        self._rust.close()


class PollWaker(Waker):
    """Stat polling: every 10 ms while busy, every 100 ms once idle."""

    mode = "poll"

    def __init__(self) -> None:
        self._busy_until = 0.0
        self._interrupted = False
        self._wake: anyio.Event | None = None

    def note_activity(self) -> None:
        self._busy_until = time.monotonic() + BUSY_HOLD_S

    def interrupt(self) -> None:
        self._interrupted = True
        if self._wake is not None:
            self._wake.set()

    async def wait(self, max_wait: float) -> set[str] | None:
        import anyio

        if self._interrupted:
            return None
        busy = time.monotonic() < self._busy_until
        self._wake = anyio.Event()
        with anyio.move_on_after(min(max_wait, FAST_POLL_S if busy else IDLE_POLL_S)):
            await self._wake.wait()
        self._wake = None
        return None


_NETWORK_FS: Final = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre", "davfs"}
)


def notify_unavailable_reason(paths: Iterable[str]) -> str | None:
    """Why file notification would not see changes under *paths*, or ``None``.

    Forced polling (``WATCHFILES_FORCE_POLLING``, as watchfiles honours it),
    WSL, and network or FUSE filesystems, whose remote writers raise no events.
    """
    forced = os.environ.get("WATCHFILES_FORCE_POLLING", "")
    if forced and forced.lower() not in ("false", "disable", "disabled"):
        return "WATCHFILES_FORCE_POLLING is set"
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open("/proc/sys/kernel/osrelease") as f:
            if "microsoft" in f.read().lower():
                return "running under WSL"
        with open("/proc/self/mounts") as f:
            mounts = [line.split()[1:3] for line in f if len(line.split()) >= 3]
    except OSError:
        return None
    for path in paths:
        real = os.path.realpath(path)
        best, fstype = "", ""
        for point, kind in mounts:
            point = point.replace("\\040", " ")
            inside = real == point or real.startswith(point.rstrip("/") + "/")
            if inside and len(point) > len(best):
                best, fstype = point, kind
        if fstype in _NETWORK_FS or fstype.startswith("fuse."):
            return f"{path} is on a {fstype} filesystem"
    return None


def make_waker(paths: list[str], *, recursive: bool, poll: bool) -> tuple[Waker, str | None]:
    """The waker for *paths* (which must exist), and why it polls when it does."""
    if poll:
        return PollWaker(), None
    reason = notify_unavailable_reason(paths)
    if reason is None:
        try:
            return NotifyWaker(paths, recursive=recursive), None
        except Exception as exc:  # inotify limits, unsupported platform, vanished path
            reason = f"file notification unavailable ({exc})"
    return PollWaker(), reason


def _folder_waker(folder: str, waker: Waker | None, poll: bool) -> Waker:
    """The waker for a file in *folder*: notification once the folder exists, polling before."""
    if waker is not None and (waker.mode != "poll" or poll or not os.path.isdir(folder)):
        return waker
    if waker is not None:
        waker.close()
    if not os.path.isdir(folder):
        return PollWaker()
    return make_waker([folder], recursive=False, poll=poll)[0]


async def tail_lines(
    path: str | os.PathLike[str],
    *,
    from_end: bool = False,
    poll: bool = False,
    stop: anyio.Event | None = None,
) -> AsyncIterator[LineBatch]:
    """Yield batches of complete ``(lineno, line)`` from a file as it grows, until *stop* is set.

    The file may not exist yet. A truncated or replaced file is read again
    from its beginning (line numbers restart at 1). Lines never end with
    their newline; a partial last line is held until it is complete.
    """
    tail = TailFile(os.fspath(path))
    folder = os.path.dirname(tail.path)
    waker: Waker | None = None
    opened = False
    try:
        while stop is None or not stop.is_set():
            waker = _folder_waker(folder, waker, poll)
            if not opened and tail.open():
                opened = True
                if from_end:
                    tail.seek_end()
            while True:
                lines, reset = tail.read()
                if lines:
                    waker.note_activity()
                    yield lines
                if reset is not None:
                    tail.restart()
                    continue
                if not tail.behind:
                    break
            await waker.wait(0.5 if stop is not None else 5.0)
    finally:
        tail.close()
        if waker is not None:
            waker.close()
