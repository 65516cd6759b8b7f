"""Sending batches to a collector over TCP or a Unix socket, with a bounded buffer and reconnects."""

from __future__ import annotations

import errno
import os
import socket
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from agentminutes.errors import UsageError
from agentminutes.pipeline.batch import Batch

if TYPE_CHECKING:
    import anyio
    import anyio.abc
from agentminutes.sinks.encoding import Encode
from agentminutes.sinks.protocol import OnDelivered

__all__ = ("SocketSink",)


class SocketSink:
    """A client that streams lines to a collector over TCP or a Unix socket.

    It keeps a buffer of at most *buffer_bytes* (a larger single batch is
    taken alone): :meth:`send` returns as soon as the batch is in the
    buffer, and waits while the buffer is full, so a slow or absent collector
    holds the pipeline back (backpressure) instead of losing lines. A writer
    task drains the buffer; it connects, and reconnects after a failure, with
    exponential backoff (50 ms doubling to 5 s). A batch counts as delivered,
    and its mark goes to *on_delivered*, once the kernel has accepted all its
    bytes; after a broken connection, sending resumes at the start of the
    first line not wholly accepted. (Raw non-blocking sockets with anyio's
    ``wait_writable``, not a socket stream: a stream's ``send`` may return
    while bytes still sit in a user-space transport buffer, and those would be
    lost with the connection after their progress was saved.)

    Use it as an async context manager.
    """

    deferred = True
    BACKOFF_MIN: ClassVar[float] = 0.05
    BACKOFF_MAX: ClassVar[float] = 5.0
    #: Below this buffer size the kernel's send buffer is shrunk to match.
    SMALL_BUFFER: ClassVar[int] = 256 << 10

    def __init__(
        self,
        address: str,
        encode: Encode,
        *,
        on_delivered: OnDelivered | None = None,
        notice: Callable[[str], None] | None = None,
        buffer_bytes: int = 4 << 20,
    ) -> None:
        import anyio

        self.address = address
        self._target = _socket_target(address)
        self._encode = encode
        self._on_delivered = on_delivered
        self._notice = notice or (lambda _m: None)
        self._limit = max(1, buffer_bytes)
        self._queue: deque[tuple[bytes, Any]] = deque()
        self._queued = 0
        self._head_sent = 0
        self._sock: socket.socket | None = None
        self._closing = False
        self._changed = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self.connected_once = False

    @property
    def pending_bytes(self) -> int:
        """Bytes taken but not yet accepted by the collector."""
        return self._queued - self._head_sent

    def _poke(self) -> None:
        import anyio

        self._changed.set()
        self._changed = anyio.Event()

    async def __aenter__(self) -> SocketSink:
        import anyio

        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._writer)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)
        self._disconnect()

    async def send(self, batch: Batch) -> None:
        data = self._encode(batch)
        if not data and not self._queue:
            # Nothing to write (progress over skipped records, or a tick): delivered
            # as soon as everything before it was.
            if self._on_delivered is not None and batch.mark is not None:
                self._on_delivered(batch.mark)
            return
        while self._queue and self._queued + len(data) > self._limit:
            await self._changed.wait()
        if not data and batch.mark is None:
            return
        self._queue.append((data, batch.mark))
        self._queued += len(data)
        self._poke()

    def sync(self) -> None:
        """Nothing to do: delivery is reported through *on_delivered*."""

    async def aclose(self) -> None:
        """Wait until the collector has accepted everything sent (cancel to give up)."""
        self._closing = True
        self._poke()
        while self._queue:
            await self._changed.wait()

    # -- the writer task ----------------------------------------------------------

    async def _writer(self) -> None:
        import anyio

        backoff = self.BACKOFF_MIN
        down_since: float | None = None
        while True:
            if not self._queue:
                await self._changed.wait()
                continue
            if self._sock is None:
                try:
                    self._sock = await self._connect()
                except OSError as exc:
                    if down_since is None:
                        down_since = time.monotonic()
                        self._notice(
                            f"{self.address}: cannot connect ({exc.strerror or exc}); "
                            "retrying, holding output meanwhile"
                        )
                    await anyio.sleep(backoff)
                    backoff = min(backoff * 2, self.BACKOFF_MAX)
                    continue
                if down_since is not None:
                    self._notice(f"{self.address}: connected")
                down_since = None
                backoff = self.BACKOFF_MIN
                self.connected_once = True
            data, mark = self._queue[0]
            try:
                await self._send_head(self._sock, data)
            except OSError as exc:
                self._notice(
                    f"{self.address}: connection lost ({exc.strerror or exc}); reconnecting"
                )
                self._disconnect()
                # resume at the first line the collector did not wholly receive
                self._head_sent = data.rfind(b"\n", 0, self._head_sent) + 1
                down_since = time.monotonic()
                continue
            self._queue.popleft()
            self._queued -= len(data)
            self._head_sent = 0
            self._poke()
            if self._on_delivered is not None:
                self._on_delivered(mark)

    async def _send_head(self, sock: socket.socket, data: bytes) -> None:
        import anyio

        view = memoryview(data)
        if self._head_sent < len(view):
            _check_open(sock)
        while self._head_sent < len(view):
            try:
                self._head_sent += sock.send(view[self._head_sent :])
            except BlockingIOError:
                await anyio.wait_writable(sock)

    async def _connect(self) -> socket.socket:
        import anyio

        family, address = self._target
        if family == socket.AF_UNIX:
            candidates: list[tuple[int, Any]] = [(family, address)]
        else:
            host, port = address
            infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            candidates = [(info[0], info[4]) for info in infos]
        error: OSError = OSError(f"no address for {self.address}")
        for fam, addr in candidates:
            sock = socket.socket(fam, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                try:
                    sock.connect(addr)
                except BlockingIOError:
                    await anyio.wait_writable(sock)
                    err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if err:
                        raise OSError(err, os.strerror(err)) from None
            except OSError as exc:
                sock.close()
                error = exc
                continue
            except BaseException:
                sock.close()
                raise
            if fam != socket.AF_UNIX:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._limit < self.SMALL_BUFFER:
                # A small buffer asked for is small in the kernel too, so backpressure
                # reaches the follower after about that much, not after megabytes.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self._limit)
            return sock
        raise error

    def _disconnect(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def _check_open(sock: socket.socket) -> None:
    """Raise if the collector has closed its end (so nothing is written into a dead connection)."""
    while True:
        try:
            data = sock.recv(65536, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        if not data:
            raise ConnectionResetError(errno.ECONNRESET, "closed by the collector")
        # the collector talks back; nothing here listens, so drop it


def _socket_target(address: str) -> tuple[int, Any]:
    if address.startswith("unix:"):
        path = address[len("unix:") :]
        if path.startswith("//"):
            path = path[2:]
        if not path:
            raise UsageError(f"{address}: no socket path")
        return socket.AF_UNIX, path
    if address.startswith("tcp://"):
        rest = address[len("tcp://") :].rstrip("/")
        host, sep, port = rest.rpartition(":")
        if not sep or not port.isdigit() or not host:
            raise UsageError(f"{address}: expected tcp://HOST:PORT")
        return socket.AF_INET, (host.strip("[]"), int(port))
    raise UsageError(f"{address}: not a socket address (tcp://HOST:PORT or unix:PATH)")
