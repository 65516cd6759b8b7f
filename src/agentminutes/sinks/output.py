"""Where a command's output goes: standard output, or a path written the way a shell would.

``-o PATH`` writes *to* the path, as a shell redirection does, with one
refinement where it is safe to make: a regular file (or a path that does not
exist yet) is written to a temporary file beside it and renamed over it once
the output is complete, so a reader never sees half a document and a failed
run leaves the old file as it was. Everything else is written in place:

* a symlink is followed and its target written (renamed over, if it is a
  regular file); the link itself stays;
* a FIFO, a character device (``/dev/null``, ``/dev/full``, ``/dev/stdout``)
  or a socket is opened and written as it is;
* a regular file with more than one hard link is written in place (renaming
  would split it from its other names), as is a file in a folder we may not
  create files in.

Where output is written in place but must appear only on success (the whole
session document, stats), it is held first (in memory up to 8 MiB, then in a
temporary file) and written once the command succeeded.

A new file's mode is 0666 less the umask, as a shell's ``>`` gives it; a
replaced file keeps its mode (and its group, where we may set it). A path that
is one of the command's inputs (the same device and inode, through symlinks
and hard links) is refused before anything is opened for writing. Every write
error becomes one :class:`~agentminutes.errors.OutputError` naming where.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Final

from agentminutes.errors import OutputError, source_name

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = (
    "STDOUT",
    "CheckedFile",
    "guard_stdout",
    "new_file",
    "open_output",
    "refuse_inputs",
    "replace_file",
    "write_file",
)

#: How errors name standard output.
STDOUT: Final = "standard output"
#: Bytes of held output kept in memory before it spills into a temporary file.
_SPOOL_BYTES: Final = 8 << 20
_CHUNK: Final = 1 << 20


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


class CheckedFile(io.FileIO):
    """A file descriptor whose every write completes or raises :class:`OutputError`.

    Unbuffered: each ``write`` is written whole before it returns (partial
    writes to pipes and terminals are continued), so there is nothing left to
    flush, and fail, at interpreter exit. A reader that went away
    (``BrokenPipeError``) is passed on as it is: the command line ends quietly
    on it, as ``| head`` expects. With *quiet_after_error* the first error is
    raised and later writes are dropped: standard output, which the
    interpreter flushes once more at exit, after the error was reported.
    """

    def __init__(
        self, fd: int, label: str, *, closefd: bool = True, quiet_after_error: bool = False
    ) -> None:
        super().__init__(fd, "wb", closefd=closefd)
        self.label = label
        self._quiet = quiet_after_error
        self._failed = False

    def write(self, data: ReadableBuffer, /) -> int:
        """Write all of *data*."""
        view = memoryview(data).cast("B")
        if self._failed:
            return len(view)
        done = 0
        self._failed = self._quiet  # until the loop below completes
        try:
            while done < len(view):
                n = super().write(view[done:])
                if n is None:  # a non-blocking descriptor that is full: wait for room
                    select.select([], [self.fileno()], [])
                    continue
                done += n
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"{self.label}: cannot write: {_reason(exc)}") from None
        self._failed = False
        return done

    def flush(self) -> None:
        """Nothing is buffered; kept for the stream interface."""


class _ClosedStream(io.RawIOBase):
    """Standard output of a process started without one: the first write is an error."""

    def __init__(self) -> None:
        super().__init__()
        self._told = False

    def writable(self) -> bool:
        return True

    def write(self, data: ReadableBuffer, /) -> int:
        if not self._told:
            self._told = True
            raise OutputError(f"{STDOUT} is closed (the command was started without one)")
        return len(memoryview(data))


def guard_stdout() -> None:
    """Route ``sys.stdout`` through a :class:`CheckedFile`, for the command line.

    Whatever prints then meets a full disk, a device that refuses bytes or a
    missing standard output as one :class:`OutputError` (its ``Error:`` line),
    never as an interpreter message at exit. A stream without a descriptor
    (one a test put there) is left alone.
    """
    stream = sys.stdout
    if stream is None:
        raw: io.RawIOBase = _ClosedStream()
        encoding, errors, lines = "utf-8", "strict", False
    else:
        try:
            fd = stream.fileno()
        except (AttributeError, ValueError, OSError):
            return
        raw = CheckedFile(fd, STDOUT, closefd=False, quiet_after_error=True)
        encoding, errors = stream.encoding, stream.errors or "strict"
        lines = bool(stream.line_buffering)
        stream.flush()
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(raw), encoding=encoding, errors=errors, line_buffering=lines
    )


def refuse_inputs(destination: str | None, inputs: Iterable[str | os.PathLike[str]]) -> None:
    """Raise :class:`OutputError` when *destination* (``None``: standard output) is one of *inputs*.

    Files are compared by device and inode, so a symlink or a hard link to an
    input is caught. Only regular files are compared: a terminal that is both
    ``/dev/stdin`` and ``/dev/stdout`` is not a transcript being overwritten.
    """
    try:
        out = os.fstat(sys.stdout.fileno()) if destination is None else os.stat(destination)
    except (OSError, ValueError, AttributeError):
        return  # nothing there yet (or no stdout): it cannot be an input
    if not stat.S_ISREG(out.st_mode):
        return
    for source in inputs:
        try:
            src = os.fstat(0) if source == "-" else os.stat(source)
        except OSError:
            continue
        if (src.st_dev, src.st_ino) == (out.st_dev, out.st_ino):
            shown = source_name(source)
            where = "standard output" if destination is None else destination
            raise OutputError(
                f"{where}: is the input transcript {shown}; refusing to overwrite it "
                "(choose another output file)"
            )


def new_file(folder: str, prefix: str = ".agentminutes-") -> tuple[int, str]:
    """Create a new, empty file in *folder* with a unique name; return its descriptor and path.

    Unlike :func:`tempfile.mkstemp` (always 0600) the file is created with mode
    0666 and the umask (and a default ACL) applied by the system, as any
    program's new file is: it becomes the output itself once renamed.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        path = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}.tmp")
        try:
            return os.open(path, flags, 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(f"{folder}: no unused temporary file name")


def _take_over(fd: int, existing: os.stat_result | None) -> None:
    """Give a replacement file the mode (and group) of the file it replaces."""
    if existing is None:
        return
    with contextlib.suppress(OSError):
        os.fchmod(fd, stat.S_IMODE(existing.st_mode))
    if hasattr(os, "fchown"):
        with contextlib.suppress(OSError):
            os.fchown(fd, -1, existing.st_gid)


@contextmanager
def replace_file(
    path: str, *, fsync: bool = False, existing: os.stat_result | None = None
) -> Iterator[IO[bytes]]:
    """Write a regular file by temporary file and rename: it appears whole, or not at all.

    The temporary file lives beside *path* and takes the mode of the file it
    replaces (*existing*, looked up when not given), else 0666 less the umask.
    With *fsync* the data and then the folder are synced (a copy that must
    survive a crash).
    """
    if existing is None:
        with contextlib.suppress(OSError):
            existing = os.stat(path)
    fd, tmp = new_file(os.path.dirname(os.path.abspath(path)))
    with _replacing(fd, tmp, path, existing, fsync=fsync) as out:
        yield out


@contextmanager
def _replacing(
    fd: int, tmp: str, path: str, existing: os.stat_result | None, *, fsync: bool = False
) -> Iterator[IO[bytes]]:
    """Write the new temporary file *tmp* (open as *fd*), then rename it over *path*."""
    try:
        _take_over(fd, existing)
        with CheckedFile(fd, path) as out:
            yield out
            if fsync:
                os.fsync(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        _fsync_folder(os.path.dirname(os.path.abspath(path)))


def _fsync_folder(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_file(path: str, data: bytes, *, fsync: bool = False) -> None:
    """Replace the regular file *path* with *data* (see :func:`replace_file`)."""
    with replace_file(path, fsync=fsync) as out:
        out.write(data)


def _stdout_fd() -> int:
    """Standard output's descriptor, once what was printed to it is flushed."""
    stream = sys.stdout
    try:
        if stream is None:
            raise ValueError("no stdout")
        stream.flush()
        fd = stream.fileno()
        os.fstat(fd)
    except (AttributeError, ValueError, OSError):
        raise OutputError(f"{STDOUT} is closed (the command was started without one)") from None
    return fd


def _spool() -> IO[bytes]:
    """Where held output waits: memory up to a size, then a temporary file.

    Its write errors (a full temporary folder) are output errors. Built on
    first use: :mod:`tempfile` is not worth importing for every start.
    """
    import tempfile

    class Spool(tempfile.SpooledTemporaryFile[bytes]):
        def write(self, s: ReadableBuffer, /) -> int:
            try:
                return super().write(s)
            except OSError as exc:
                raise OutputError(
                    f"cannot hold the output until it is complete: {_reason(exc)}"
                ) from None

    return Spool(max_size=_SPOOL_BYTES)


@contextmanager
def _held(out: IO[bytes]) -> Iterator[IO[bytes]]:
    """Collect the output and copy it to *out* only when the block succeeds."""
    with _spool() as spool:
        yield spool
        spool.seek(0)
        while chunk := spool.read(_CHUNK):
            out.write(chunk)


def _open_in_place(path: str) -> int:
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise OutputError(f"{path}: cannot open for writing: {_reason(exc)}") from None


@contextmanager
def open_output(
    path: str | None,
    *,
    atomic: bool,
    inputs: Iterable[str | os.PathLike[str]] = (),
) -> Iterator[IO[bytes]]:
    """The stream a command writes its output to: *path*, or standard output for ``None``.

    With *atomic* the output appears only if the block succeeds (see the
    module's notes for which paths are replaced and which written in place);
    without it, it is written as it comes (a regular file still by rename on
    success). *inputs* are the command's transcripts, which *path* may not be.

    Raises:
        OutputError: *path* is an input, is a folder, lies in a folder that
            does not exist, or cannot be written.
    """
    inputs = list(inputs)
    refuse_inputs(path, inputs)
    if path is None:
        with CheckedFile(_stdout_fd(), STDOUT, closefd=False) as out:
            if atomic:
                with _held(out) as held:
                    yield held
            else:
                yield out
        return
    try:
        existing: os.stat_result | None = os.stat(path)  # through a symlink: its target
    except FileNotFoundError:
        existing = None
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {_reason(exc)}") from None
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        raise OutputError(f"{path}: is a directory")
    regular = existing is not None and stat.S_ISREG(existing.st_mode)
    if existing is None or (regular and existing.st_nlink == 1):
        # Renamed into place: the path itself, or the file a symlink leads to.
        target = os.path.realpath(path) if os.path.islink(path) else path
        folder = os.path.dirname(os.path.abspath(target))
        if existing is None and not os.path.isdir(folder):
            raise OutputError(f"{path}: cannot write: no such directory {folder}")
        try:
            fd, tmp = new_file(folder)
        except PermissionError:
            if existing is None:
                raise OutputError(f"{path}: cannot write: permission denied") from None
            fd = -1  # a writable file in a folder we may not add files to: in place
        except OSError as exc:
            raise OutputError(f"{path}: cannot write: {_reason(exc)}") from None
        if fd >= 0:
            with _replacing(fd, tmp, target, existing) as out:
                yield out
            return
    # In place: devices, FIFOs, files with other names. A regular file is still
    # written only once the output is complete.
    with CheckedFile(_open_in_place(path), path) as out:
        if atomic or regular:
            with _held(out) as held:
                yield held
        else:
            yield out
