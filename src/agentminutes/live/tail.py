"""One growing file: read what was appended, notice truncation, replacement and moves.

:class:`TailFile` reads one file as it grows. It keeps its own offsets and
reads only the bytes past them, so the work per look is proportional to
what was appended, never to the file. It hands out complete lines only: a
partial last line stays in its :class:`~agentminutes.pipeline.sources.LineSplitter`
until the newline arrives. It also notices when the file stops being the
file it was reading:

* **identity**: device + inode of the open file, and a fingerprint of its
  first bytes (:data:`HEAD_BYTES`), so that a file renamed, or found again
  after a restart at another path, is known as the same file, and an inode
  number the filesystem reused for another file is not;
* **moves**: the path no longer names the open file (removed, renamed,
  replaced); what the open file still holds is read first;
* **truncation**: the size fell below the read offset, or the 32 bytes just
  before the offset changed (an offset marker, as Fluent Bit keeps one: it
  catches a copytruncate that grew back past the offset between two looks).

Wakers (:mod:`agentminutes.live.watch`) say *when* to look, never *what*
changed: correctness comes from the stat + read loop here.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

from agentminutes.pipeline.sources import LineBatch, LineSplitter

if TYPE_CHECKING:
    import anyio
    import anyio.abc

__all__ = (
    "HEAD_BYTES",
    "MARKER_BYTES",
    "TailFile",
    "marker_after",
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
        self,
        *,
        offset: int,
        lineno: int,
        head: tuple[int, str],
        marker: str,
        start: tuple[int, int] | None = None,
    ) -> str | None:
        """Continue a saved position: ``None`` when the file is the one that was read.

        Otherwise returns why not (the caller starts over from the beginning).
        Content decides, not the inode: the first bytes and the offset marker
        must match (a filesystem such as 9P does not keep inode numbers stable,
        and a copy made while stopped is the same transcript). Reading goes on
        at *start* (``(offset, lineno)``, at or before *offset*: where the
        saved adapter snapshot was taken), else at *offset*.
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
        at, line = start if start is not None and start[0] <= offset else (offset, lineno)
        self._head = os.pread(self._fd, min(HEAD_BYTES, at), 0)
        k = min(MARKER_BYTES, at)
        self._tail = self._commit_tail = os.pread(self._fd, k, at - k)
        self.read_pos = at
        self.splitter = LineSplitter(lineno=line, offset=at)
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

    def newline_before(self, offset: int) -> bool:
        """Whether *offset* of the open file is a line's start: 0, or just past a newline."""
        return offset == 0 or self.before(offset, 1) == b"\n"

    def before(self, offset: int, n: int = MARKER_BYTES) -> bytes:
        """The (at most *n*) bytes of the open file just before *offset*: a marker of its content."""
        assert self._fd is not None
        k = min(n, offset)
        return os.pread(self._fd, k, offset - k) if k > 0 else b""

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
        what was read, why: ``"moved"`` (the path no longer names the file read:
        removed, renamed or replaced; what the open file held was read first —
        :meth:`vanished` tells which) or ``"truncated"``. ``behind`` tells
        whether more bytes are waiting.
        """
        self.behind = False
        if self._fd is None:
            if self.ino:  # released: reopen only if the path still names the file, changed
                try:
                    st0 = os.stat(self.path)
                except (FileNotFoundError, NotADirectoryError):
                    return [], "moved"
                if st0.st_ino != self.ino or st0.st_dev != self.dev:
                    return [], "moved"
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
            st = os.fstat(fd)  # the file read, wherever it is now
            moved = True
        else:
            moved = False
        size = st.st_size
        if size < self.read_pos:
            return [], "truncated"
        if size == self.read_pos and st.st_mtime_ns == self._mtime_ns:
            return [], "moved" if moved else None
        n = min(size - self.read_pos, limit)
        k = min(MARKER_BYTES, self.read_pos)
        data = os.pread(fd, n + k, self.read_pos - k)
        if data[:k] != self._tail[len(self._tail) - k :]:
            return [], "truncated"
        data = data[k:]
        self.behind = self.read_pos + len(data) < size
        if not self.behind:
            self._mtime_ns = st.st_mtime_ns
        lines = self._take(data)
        return lines, "moved" if moved and not self.behind else None

    def unchanged(self, st: os.stat_result) -> bool:
        """Whether *st* (of the path) shows the file read, as it was when last read to its end."""
        return (
            st.st_ino == self.ino
            and st.st_dev == self.dev
            and st.st_size == self.read_pos
            and st.st_mtime_ns == self._mtime_ns
        )

    def vanished(self) -> str:
        """After ``"moved"``: ``"deleted"`` (no name left), ``"renamed"``, or ``"unknown"``.

        ``"unknown"`` when the file is not open (released): only finding it
        again under another name tells.
        """
        if self._fd is None:
            return "unknown"
        return "deleted" if os.fstat(self._fd).st_nlink == 0 else "renamed"

    def names_it(self, path: str, st: os.stat_result | None = None) -> bool:
        """Whether *path* names the file read (device, inode and first bytes agree)."""
        try:
            st = st or os.stat(path)
        except OSError:
            return False
        if (st.st_dev, st.st_ino) != (self.dev, self.ino) or not self.ino:
            return False
        return self.same_head(path)

    def same_head(self, path: str) -> bool:
        """Whether the file at *path* begins with the bytes this file began with."""
        want = self._head
        try:
            with open(path, "rb") as f:
                return f.read(len(want)) == want
        except OSError:
            return False

    def repoint(self, path: str) -> None:
        """The file read was renamed to *path*: follow it there."""
        self.path = os.path.abspath(path)

    @property
    def head(self) -> bytes:
        """The file's first (at most :data:`HEAD_BYTES`) bytes, as far as read."""
        return self._head

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

    def position(self) -> dict[str, Any]:
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
    from agentminutes.live.watch import FAST_POLL_S, Watcher

    tail = TailFile(os.fspath(path))
    watcher = Watcher([(os.path.dirname(tail.path), False)], poll=poll)
    opened = False
    try:
        while stop is None or not stop.is_set():
            if not opened and tail.open():
                opened = True
                if from_end:
                    tail.seek_end()
            while True:
                lines, reset = tail.read()
                if lines:
                    yield lines
                if reset is not None and (reset == "truncated" or not tail.names_it(tail.path)):
                    tail.restart()
                    opened = False
                    continue
                if not tail.behind:
                    break
            await watcher.wait(FAST_POLL_S if watcher.polled else 5.0, stop=stop)
    finally:
        tail.close()
        watcher.close()
