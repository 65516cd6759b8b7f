"""Line sources: transcript bytes in, complete numbered lines out, in batches.

A line is handed on only once its newline has arrived (or, for a finished
file, at end of input). Lines are not length-capped: transcripts carry
multi-megabyte single records, and every log shipper's default cap would lose
them. The same :class:`LineSplitter` serves whole files, stdin and growing
files. A source that is no line transcript but a container (a ZIP archive, a
SQLite database) is told by its first bytes here (:func:`container_of`),
without loading the document pipeline that reads one.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import IO, Any, BinaryIO, Final

from agentminutes.errors import SourceError

__all__ = (
    "CHUNK_BYTES",
    "FILE_CHUNK_BYTES",
    "SQLITE_MAGIC",
    "ZIP_MAGIC",
    "LineBatch",
    "LineSplitter",
    "aiter_chunks",
    "container_of",
    "is_stream",
    "iter_chunks",
    "open_error",
)

#: Read size for transcript files: large enough that a 100 MB file is a few dozen reads.
CHUNK_BYTES: Final = 1024 * 1024

#: Read size of a pass that keeps no events, only what it folds them into (``usage``'s
#: summaries): its batches may be larger. Reads of 1 MiB each got fresh pages from glibc
#: (about a page fault per 4 KiB read: 0.13 s of system time over a 631 MB home),
#: reads of 4 MiB reuse the heap's.
FILE_CHUNK_BYTES: Final = 4 << 20

#: The first bytes of a ZIP archive (a data export) and of a SQLite database (``turns.db``).
ZIP_MAGIC: Final = b"PK\x03\x04"
SQLITE_MAGIC: Final = b"SQLite format 3\x00"

#: A batch of ``(lineno, line)`` pairs: 1-based numbers, lines without their newline.
LineBatch = list[tuple[int, bytes]]


class LineSplitter:
    """Split a byte stream into complete lines, holding a partial last line back.

    ``offset`` is the byte offset just past the last newline handed out and
    ``lineno`` the number of the last line handed out; both are the resume
    point a follower saves.
    """

    __slots__ = ("_pending", "_pending_len", "lineno", "offset", "pending_nul")

    def __init__(self, *, lineno: int = 0, offset: int = 0) -> None:
        self.lineno = lineno
        self.offset = offset
        self._pending: list[bytes] = []
        self._pending_len = 0
        #: Whether the incomplete last line holds a NUL byte (no record does).
        self.pending_nul = False

    @property
    def pending(self) -> int:
        """Bytes held in an incomplete last line."""
        return self._pending_len

    def push(self, chunk: bytes) -> LineBatch:
        """Take the next bytes of the stream; return the lines they complete."""
        if not chunk:
            return []
        parts = chunk.split(b"\n")
        last = parts.pop()
        if not parts:
            self._pending.append(last)
            self._pending_len += len(last)
            self.pending_nul = self.pending_nul or b"\x00" in last
            return []
        completed = self._pending_len + len(chunk) - len(last)
        if self._pending:
            self._pending.append(parts[0])
            parts[0] = b"".join(self._pending)
        self._pending = [last] if last else []
        self._pending_len = len(last)
        self.pending_nul = b"\x00" in last
        first = self.lineno + 1
        self.lineno += len(parts)
        self.offset += completed
        return list(zip(range(first, first + len(parts)), parts, strict=True))

    def push_spans(self, chunk: bytes) -> tuple[bytes, list[tuple[int, int, int]]]:
        """:meth:`push` without copying each line out: ``(data, spans)``, the bytes holding
        the lines *chunk* completes and each line's ``(lineno, start, end)`` in them
        (*data* is *chunk* itself unless a line was held from the chunk before)."""
        if not chunk:
            return b"", []
        end = chunk.rfind(b"\n")
        if end < 0:
            self._pending.append(chunk)
            self._pending_len += len(chunk)
            self.pending_nul = self.pending_nul or b"\x00" in chunk
            return b"", []
        data = chunk
        if self._pending:
            head = b"".join(self._pending)
            data = head + chunk
            end += len(head)
        last = data[end + 1 :]
        self._pending = [last] if last else []
        self._pending_len = len(last)
        self.pending_nul = b"\x00" in last
        spans: list[tuple[int, int, int]] = []
        find = data.find
        lineno = self.lineno
        pos = 0
        while pos <= end:
            stop = find(b"\n", pos, end + 1)
            lineno += 1
            spans.append((lineno, pos, stop))
            pos = stop + 1
        self.lineno = lineno
        self.offset += end + 1
        return data, spans

    def held(self) -> tuple[int, bytes] | None:
        """The incomplete last line, still held (``None`` when there is none): ``(lineno, bytes)``."""
        if not self._pending:
            return None
        return self.lineno + 1, b"".join(self._pending)

    def flush(self) -> LineBatch:
        """End of a finished input: hand out a held last line that has no newline."""
        if not self._pending:
            return []
        line = b"".join(self._pending)
        self._pending = []
        self._pending_len = 0
        self.pending_nul = False
        self.lineno += 1
        self.offset += len(line)
        return [(self.lineno, line)]


def container_of(head: bytes) -> str | None:
    """``"zip"`` or ``"sqlite"`` for a container's head, else ``None``."""
    if head.startswith(ZIP_MAGIC):
        return "zip"
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    return None


def open_error(path: str) -> SourceError | None:
    """Return the error that reading *path* as a transcript would meet, or ``None``."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return SourceError(f"{path}: no such file")
    except PermissionError:
        return SourceError(f"{path}: permission denied")
    except OSError as exc:
        return SourceError(f"{path}: {exc.strerror or exc}")
    if os.path.isdir(path):
        return SourceError(f"{path}: is a directory, not a transcript")
    if st.st_size == 0 and os.path.isfile(path):
        return SourceError(f"{path}: empty file, not a transcript")
    return None


def is_stream(path: str) -> bool:
    """Whether *path* is read as a stream: a FIFO, a device, a socket (not a file or folder).

    A stream can be read once: whatever is read of it to detect the format
    must be handed on, not read again.
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def iter_chunks(
    stream: IO[bytes], *, chunk_bytes: int = CHUNK_BYTES, limit: int | None = None
) -> Iterator[bytes]:
    """Yield the bytes of a finished binary stream in large chunks (its first *limit* at most)."""
    from agentminutes.pipeline.worker import cancel_point

    if limit is None:
        while chunk := stream.read(chunk_bytes):
            cancel_point()  # on a step thread whose caller was cancelled: stop here
            yield chunk
        return
    left = limit
    while left > 0 and (chunk := stream.read(min(chunk_bytes, left))):
        cancel_point()
        left -= len(chunk)
        yield chunk


async def aiter_chunks(
    source: str | os.PathLike[str],
    *,
    chunk_bytes: int = CHUNK_BYTES,
    stream: BinaryIO | None = None,
) -> AsyncIterator[bytes]:
    """Yield the bytes of a finished file, or of stdin when *source* is ``"-"``, in large chunks.

    *stream*, when given, is *source* already open (a FIFO or device that was
    read from to route it); it is read to its end and closed. Reads run in a
    worker thread: aiofiles' under asyncio, anyio's own under any other
    backend (trio), where aiofiles, bound to asyncio's loop, cannot run.
    """
    if source == "-" or stream is not None:
        fd = sys.stdin.buffer.fileno() if stream is None else stream.fileno()
        try:
            async with _open_async(fd, closefd=False) as f:
                while chunk := await f.read(chunk_bytes):
                    yield chunk
        finally:
            if stream is not None:
                stream.close()
        return
    target = os.fspath(source)
    err = open_error(target)
    if err is not None:
        raise err
    try:
        async with _open_async(target) as f:
            while chunk := await f.read(chunk_bytes):
                yield chunk
    except OSError as exc:
        raise SourceError(f"{target}: {exc.strerror or exc}") from None


@asynccontextmanager
async def _open_async(file: str | int, *, closefd: bool = True) -> AsyncIterator[Any]:
    """An async binary reader of *file*: aiofiles under asyncio, anyio's file API otherwise.

    Both run each read in a worker thread; aiofiles gets its thread from the
    running asyncio loop, so it has none to use under trio.
    """
    if _under_asyncio():
        import aiofiles  # here, not at the top: follow starts faster without it

        async with aiofiles.open(file, "rb", closefd=closefd) as f:
            yield f
        return
    import anyio

    async with await anyio.open_file(file, "rb", closefd=closefd) as g:
        yield g


def _under_asyncio() -> bool:
    """Whether an asyncio event loop runs in this thread (not trio, not a worker thread)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
