"""Standard output for ``follow``, written without ever blocking the event loop.

A follower's stdout is usually a pipe, and the process reading it may stop
reading (a stalled consumer, a paused terminal). A blocking ``write`` into a
full pipe would freeze the whole follower: no signal handled, no stop, no
state saved. :class:`StdoutSink` writes through a descriptor of its own,
opened with ``O_NONBLOCK`` on the same pipe, FIFO or terminal
(``/proc/self/fd/1``: a new open file description, so the flag does not
leak to the shell or to other processes sharing the original one), keeps
what the pipe did not take in a buffer of its own, and waits for the pipe to
drain with the event loop (``anyio.wait_writable``) — cancellable like any
other wait. Regular files and what cannot be reopened are written as usual
(a disk does not stall forever).

It is a *deferring* sink: :meth:`put` and :meth:`send` take a batch, and its
mark goes to *on_delivered* once the batch's last byte is written. :meth:`put`
never waits (the synchronous start-up write keeps at most
:data:`BUFFER_BYTES` waiting); :meth:`send` returns once the reader has taken
everything.
"""

from __future__ import annotations

import os
import select
import stat
import sys
from collections import deque
from collections.abc import Callable
from typing import Any, Final

from agentminutes.pipeline.batch import Batch
from agentminutes.sinks.encoding import Encode
from agentminutes.sinks.protocol import OnDelivered

__all__ = ("StdoutSink",)

#: What may wait in the sink's own buffer before :meth:`StdoutSink.send` waits for the reader.
BUFFER_BYTES: Final = 1 << 20


def _own_descriptor(fd: int) -> tuple[int, bool]:
    """A descriptor for writing to *fd*'s pipe or terminal without blocking, and whether it is.

    Falls back to *fd* itself (blocking) for regular files and what cannot
    be reopened (a socket, a platform without ``/proc``).
    """
    try:
        st = os.fstat(fd)
    except OSError:
        return fd, False
    if not (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
        return fd, False
    try:
        own = os.open(
            f"/proc/self/fd/{fd}",
            os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0),
        )
    except OSError:
        return fd, False
    st2 = os.fstat(own)
    if (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
        os.close(own)
        return fd, False
    return own, True


class StdoutSink:
    """Lines to standard output; never blocks the event loop on a reader that does not read."""

    deferred = True

    def __init__(
        self,
        encode: Encode,
        *,
        on_delivered: OnDelivered | None = None,
        fd: int | None = None,
        buffer_bytes: int = BUFFER_BYTES,
    ) -> None:
        if fd is None:
            sys.stdout.flush()
            fd = sys.stdout.fileno()
        self._encode = encode
        self._on_delivered = on_delivered
        self._fd, self.nonblocking = _own_descriptor(fd)
        self._own = self._fd != fd
        self._limit = max(1, buffer_bytes)
        self._buf = bytearray()
        #: (stream position after the batch, its mark), oldest first
        self._marks: deque[tuple[int, Any]] = deque()
        self._queued = 0  # stream position after the last byte taken
        self._written = 0  # stream position after the last byte written

    @property
    def pending_bytes(self) -> int:
        """Bytes taken but not written yet (the reader is not reading)."""
        return len(self._buf)

    # -- taking ----------------------------------------------------------------------------

    def put(self, batch: Batch) -> None:
        """Take *batch* and write what the pipe takes now; never waits."""
        data = self._encode(batch)
        if data:
            self._buf += data
            self._queued += len(data)
        if batch.mark is not None:
            self._marks.append((self._queued, batch.mark))
        self.write_some()

    async def send(self, batch: Batch) -> None:
        """Take *batch* and wait (cancellably) until the reader has taken all of it."""
        self.put(batch)
        await self.drain()

    def write_some(self) -> None:
        """Write what the pipe takes now; report the batches written whole."""
        buf = self._buf
        if self._fd < 0:
            return
        while buf:
            try:
                n = os.write(self._fd, buf[: 1 << 20])
            except BlockingIOError:
                break
            if n <= 0:
                break
            del buf[:n]
            self._written += n
        marks = self._marks
        while marks and marks[0][0] <= self._written:
            _, mark = marks.popleft()
            if self._on_delivered is not None:
                self._on_delivered(mark)

    def wait_writable(self, timeout: float) -> None:
        """Block up to *timeout* seconds for the pipe to take more, then write (no event loop)."""
        if self._buf and self.nonblocking:
            poller = select.poll()
            poller.register(self._fd, select.POLLOUT)
            poller.poll(int(timeout * 1000))
        self.write_some()

    def drain_sync(self, keep_going: Callable[[], bool]) -> None:
        """Write everything taken, blocking (no event loop), while *keep_going()* says so."""
        while self._buf and keep_going():
            self.wait_writable(0.05)

    async def drain(self) -> None:
        """Wait (cancellably) until everything taken is written."""
        import anyio

        self.write_some()
        while self._buf and self._fd >= 0:
            await anyio.wait_writable(self._fd)
            self.write_some()

    def sync(self) -> None:
        """Nothing to make durable: delivery is reported through *on_delivered*."""
        self.write_some()

    async def aclose(self) -> None:
        """Write what is left (cancel to give up), then release the descriptor."""
        try:
            await self.drain()
        finally:
            self.close()

    def close(self) -> None:
        """Release the sink's own descriptor (what is unwritten stays unwritten)."""
        if self._own and self._fd >= 0:
            os.close(self._fd)
        self._fd = -1
