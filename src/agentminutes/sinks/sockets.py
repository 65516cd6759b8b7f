"""Sending batches to a collector over TCP or a Unix socket: bounded, resent after a reconnect.

Delivery is at least once. The sink keeps what it wrote until it knows the
collector has it, and after a reconnect sends it again from there, starting on
a line boundary; envelope lines carry deterministic event ids
(:mod:`agentminutes.live.ids`) by which the collector drops the repeats.

How far "has it" reaches depends on the collector:

* **With acknowledgements** (``ack=True``; ``?ack=1`` on the command line) the
  collector writes lines back on the same connection, each naming the last
  event it has durably taken::

      {"ack": "<event id>"}

  Everything up to and including that line of this connection is then taken.
  Acknowledge as often as suits (every line, every batch, every commit); an id
  not among the lines awaiting acknowledgement (an old or repeated one) is
  ignored. The sink keeps every line not yet acknowledged (at most
  *buffer_bytes*: beyond that :meth:`SocketSink.send` waits, which holds the
  follower back), resends them after a reconnect, and reports a batch
  delivered (its mark to *on_delivered*, what ``--state`` records) only once
  acknowledged. Nothing is lost: not at a disconnect, not at a crash of
  either side.
* **Without** (the default), a batch counts as delivered once the kernel has
  accepted all its bytes, and a disconnect resends what the kernel may not
  have handed to the collector: for TCP the bytes the collector's kernel had
  not acknowledged (``SIOCOUTQ``, known exactly) plus *receive_allowance*
  bytes before them, for what sat unread in the collector's receive buffer;
  for a Unix socket the bytes the collector had not read (the kernel counts
  them exactly). Nothing is lost at a disconnect unless a TCP collector left
  more than *receive_allowance* bytes unread in its receive buffer; what the
  kernel had accepted is lost if the follower itself is killed while the
  collector is away.

Raw non-blocking sockets with anyio's ``wait_readable``/``wait_writable``, not a
socket stream: a stream's ``send`` may return while bytes still sit in a
user-space transport buffer, and the kernel's queue is what the counts above
are about.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import struct
import termios
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from agentminutes.errors import OptionError, UsageError
from agentminutes.pipeline.batch import Batch
from agentminutes.sinks._writer_task import WriterTask
from agentminutes.sinks.encoding import Encode
from agentminutes.sinks.protocol import OnDelivered

if TYPE_CHECKING:
    import anyio
    import anyio.abc

__all__ = ("RECEIVE_ALLOWANCE", "EncodeWithIds", "SocketSink")

#: Turns a batch into its lines and the id of each line's event (for acknowledgements).
EncodeWithIds = Callable[[Batch], tuple[bytes, list[str]]]

#: Without acknowledgements, how much a TCP collector is assumed to hold at most in its
#: receive buffer unread at a disconnect: Linux starts a socket's receive buffer at
#: 128 KiB (``tcp_rmem``) and a slow reader does not grow it.
RECEIVE_ALLOWANCE = 512 << 10


class _Ack(msgspec.Struct):
    ack: str


_decode_ack = msgspec.json.Decoder(_Ack).decode


class _Item:
    """One batch's bytes in the stream: where they start, their mark, their events' ids."""

    __slots__ = ("data", "delivered", "ids", "mark", "start")

    def __init__(self, data: bytes, mark: Any, start: int, ids: list[str] | None) -> None:
        self.data = data
        self.mark = mark
        self.start = start
        self.ids = ids
        self.delivered = False

    @property
    def end(self) -> int:
        return self.start + len(self.data)

    def line_end(self, k: int) -> int:
        """The stream position just after this item's line *k* (0-based)."""
        pos = -1
        for _ in range(k + 1):
            pos = self.data.index(b"\n", pos + 1)
        return self.start + pos + 1


class SocketSink(WriterTask):
    """A client that streams lines to a collector over TCP or a Unix socket.

    :meth:`send` returns as soon as the batch is in the buffer, and waits while
    the buffer holds *buffer_bytes* not yet delivered (a larger single batch
    is taken alone), so a slow or absent collector holds the pipeline back
    (backpressure) instead of losing lines. A writer task connects, and
    reconnects after a failure, with exponential backoff (50 ms doubling to
    5 s); what is resent after a reconnect, and when a batch counts as
    delivered (its mark to *on_delivered*), is in the module docstring. With
    *ack*, *encode_ids* gives the lines with their events' ids.

    Use it as an async context manager.
    """

    deferred = True
    BACKOFF_MIN: ClassVar[float] = 0.05
    BACKOFF_MAX: ClassVar[float] = 5.0
    #: How often the count of bytes the collector has not taken is refreshed while the
    #: kernel's buffer is full (s).
    SAMPLE_S: ClassVar[float] = 0.05
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
        ack: bool = False,
        encode_ids: EncodeWithIds | None = None,
        receive_allowance: int = RECEIVE_ALLOWANCE,
    ) -> None:
        import anyio

        if ack and encode_ids is None:
            raise UsageError(f"{address}: acknowledgements name event ids: give encode_ids")
        self.address = address
        self._target = _socket_target(address)
        self._encode = encode
        self._encode_ids = encode_ids
        self.ack = ack
        self._on_delivered = on_delivered
        self._notice = notice or (lambda _m: None)
        self._limit = max(1, buffer_bytes)
        self._allowance = receive_allowance if self._target[0] != socket.AF_UNIX else 0
        #: Batches from the oldest kept to the newest taken, in stream order.
        self._items: deque[_Item] = deque()
        #: The same batches' tail not yet reported delivered.
        self._undelivered: deque[_Item] = deque()
        self._end = 0  # stream position after everything taken
        self._written = 0  # position written on the current connection
        self._acked = 0  # position the collector acknowledged (ack mode)
        self._resume = 0  # where the next connection starts
        self._unread = 0  # the kernel's count of bytes not yet taken by the peer, last sample
        self._sampled_at = 0  # the position written when that sample was taken
        self._keep = 0  # without acks: how far back written bytes are kept for a resend
        #: Event id -> (batch, line) for the lines awaiting acknowledgement (ack mode).
        self._ids: dict[str, tuple[_Item, int]] = {}
        self._sndbuf = 0
        self._inbox = b""
        self._bad_lines = 0
        self._sock: socket.socket | None = None
        self._lost: OSError | None = None
        self._changed = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self.connected_once = False
        #: Bytes sent again after reconnects (repeats the collector drops by id).
        self.resent_bytes = 0

    @property
    def pending_bytes(self) -> int:
        """Bytes taken but not yet delivered (acknowledged, with acks; accepted by the kernel, without)."""
        return self._end - self._floor

    @property
    def _floor(self) -> int:
        return self._acked if self.ack else self._written

    async def __aenter__(self) -> SocketSink:
        await self._start_writer()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stop_writer()
        self._disconnect()

    async def send(self, batch: Batch) -> None:
        """Take *batch* into the buffer; wait while the buffer is full."""
        if self._encode_ids is not None and self.ack:
            data, ids = self._encode_ids(batch)
        else:
            data, ids = self._encode(batch), None
        if not data and batch.mark is None:
            return
        while self._end > self._floor and self._end - self._floor + len(data) > self._limit:
            await self._changed.wait()
        item = _Item(data, batch.mark, self._end, ids)
        self._items.append(item)
        self._undelivered.append(item)
        self._end = item.end
        if ids:
            index = self._ids
            for k, eid in enumerate(ids):
                index.setdefault(eid, (item, k))
        self._release()
        self._poke()

    def sync(self) -> None:
        """Nothing to do: delivery is reported through *on_delivered*."""

    async def aclose(self) -> None:
        """Wait until everything sent is delivered (cancel to give up)."""
        self._poke()
        while self._end > self._floor or self._undelivered:
            await self._changed.wait()

    # -- delivery -----------------------------------------------------------------

    def _release(self) -> None:
        """Report delivered batches in order, and forget what no resend can need."""
        floor = self._floor
        waiting = self._undelivered
        while waiting and waiting[0].end <= floor:
            item = waiting.popleft()
            item.delivered = True
            if self._on_delivered is not None and item.mark is not None:
                self._on_delivered(item.mark)
        keep_from = self._acked if self.ack else self._written - self._keep
        items = self._items
        while items and items[0].delivered and items[0].end <= keep_from:
            gone = items.popleft()
            if gone.ids:
                index = self._ids
                for eid in gone.ids:
                    if index.get(eid, (None, 0))[0] is gone:
                        del index[eid]

    def _take_acks(self, data: bytes) -> None:
        self._inbox += data
        if b"\n" not in self._inbox:
            if len(self._inbox) > 1 << 16:
                self._inbox = b""
                self._bad_line(b"(64 KiB without a newline)")
            return
        *lines, self._inbox = self._inbox.split(b"\n")
        best = self._acked
        for line in lines:
            line = line.strip()
            if not line:
                continue
            try:
                eid = _decode_ack(line).ack
            except msgspec.DecodeError:
                self._bad_line(line)
                continue
            found = self._ids.get(eid)
            if found is not None:
                item, k = found
                best = max(best, item.line_end(k))
        if best > self._acked:
            self._acked = min(best, self._written)
            self._release()
            self._poke()

    def _bad_line(self, line: bytes) -> None:
        self._bad_lines += 1
        if self._bad_lines == 1:
            self._notice(
                f"{self.address}: the collector sent a line that is not an acknowledgement "
                f'({line[:80]!r}; expected {{"ack": "<event id>"}}); ignored'
            )

    # -- the writer task ----------------------------------------------------------

    async def _writer(self) -> None:
        import anyio

        backoff = self.BACKOFF_MIN
        down_since: float | None = None
        while True:
            if self._sock is None and self._end <= self._resume:
                await self._changed.wait()
                continue
            if self._sock is None:
                try:
                    sock = await self._connect()
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
                again = self._end and self._written > self._resume
                if again:
                    self.resent_bytes += self._written - self._resume
                if down_since is not None:
                    self._notice(
                        f"{self.address}: connected"
                        + (
                            f"; sending again the last {self._written - self._resume} bytes "
                            + (
                                "not acknowledged"
                                if self.ack
                                else "the collector may not have read"
                            )
                            if again
                            else ""
                        )
                    )
                self._sock, self._lost, self._inbox = sock, None, b""
                self._written = self._sampled_at = self._resume
                self._unread = 0
                down_since = None
                backoff = self.BACKOFF_MIN
                self.connected_once = True
                assert self._tg is not None
                self._tg.start_soon(self._reader, sock)
            try:
                if self._lost is not None:
                    raise self._lost
                if self._written < self._end:
                    await self._send_some(self._sock)
                else:
                    await self._changed.wait()
            except OSError as exc:
                self._notice(
                    f"{self.address}: connection lost ({exc.strerror or exc}); reconnecting"
                )
                self._resume = self._resume_point()
                self._disconnect()
                down_since = time.monotonic()
                continue

    async def _send_some(self, sock: socket.socket) -> None:
        """Write from the current position to the end of its batch (or until the kernel is full)."""
        import anyio

        item = self._item_at(self._written)
        view = memoryview(item.data)[self._written - item.start :]
        self._read_acks(sock)
        while view:
            try:
                n = sock.send(view)
            except BlockingIOError:
                # The kernel is full. While it drains, keep the count of what the
                # collector has not taken fresh: a disconnect resends from there.
                with anyio.move_on_after(self.SAMPLE_S):
                    await anyio.wait_writable(sock)
                if self._lost is not None:
                    raise self._lost from None
                self._read_acks(sock)
                self._sample(sock)
                continue
            view = view[n:]
            self._written += n
            self._sample(sock)
            self._release()
            self._poke()

    def _item_at(self, pos: int) -> _Item:
        for item in self._items:
            if item.end > pos:
                return item
        raise AssertionError(f"no batch at stream position {pos}")

    def _sample(self, sock: socket.socket) -> None:
        """Note how much of what was written the peer has not taken yet (without acks)."""
        if self.ack:
            return
        try:
            raw = fcntl.ioctl(sock, termios.TIOCOUTQ, b"\0\0\0\0")
        except OSError:  # no count from this kernel: assume a buffer's worth unread
            unread = min(self._written - self._resume, self._limit)
        else:
            unread = struct.unpack("i", raw)[0]
        if not _alive(sock):
            # The collector has gone (or is going) since the last send: its kernel
            # dropped what it held unread, and the count dropped with it, so this
            # count may say "all taken" of bytes never read. Keep the last count
            # taken while it was there, plus everything written since.
            unread = self._unread + (self._written - self._sampled_at)
        self._unread = unread
        self._sampled_at = self._written
        if self._target[0] == socket.AF_UNIX:
            # The count is in the kernel's buffer units, at least the bytes unread, and
            # grows and shrinks as the collector reads: keep a whole send buffer back.
            self._keep = max(self._keep, 2 * self._sndbuf)
        else:
            # What the collector's kernel acknowledged only grows: everything before
            # (written - unread - allowance) can never need resending.
            self._keep = unread + self._allowance

    def _resume_point(self) -> int:
        """Where the next connection starts: the first line the collector may not have taken."""
        if self.ack:
            return self._acked
        pos = max(self._written - self._unread - self._allowance, self._floor_kept)
        item = self._item_at(pos) if pos < self._end else None
        if item is None:
            return pos
        return item.start + item.data.rfind(b"\n", 0, pos - item.start) + 1

    @property
    def _floor_kept(self) -> int:
        return self._items[0].start if self._items else self._end

    async def _reader(self, sock: socket.socket) -> None:
        """Take what the collector writes back (acknowledgements); notice when it closes."""
        import anyio

        while self._sock is sock and self._lost is None:
            try:
                await anyio.wait_readable(sock)
            except (OSError, anyio.ClosedResourceError):
                return
            if self._sock is not sock:
                return
            try:
                self._read_acks(sock)
            except OSError as exc:
                self._lost = exc
                self._poke()
                return

    def _read_acks(self, sock: socket.socket) -> None:
        """Read what is waiting from the collector; raise if it has closed its end."""
        while True:
            try:
                data = sock.recv(65536, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            if not data:
                raise ConnectionResetError(errno.ECONNRESET, "closed by the collector")
            if self.ack:
                self._take_acks(data)

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
            self._sndbuf = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
            return sock
        raise error

    def _disconnect(self) -> None:
        import anyio

        sock, self._sock = self._sock, None
        if sock is not None:
            anyio.notify_closing(sock)  # the reader task's wait ends before the fd is reused
            sock.close()


def _socket_target(address: str) -> tuple[int, Any]:
    if address.startswith("unix:"):
        path = address[len("unix:") :]
        if path.startswith("//"):
            path = path[2:]
        if not path:
            raise OptionError(f"{address}: no socket path")
        return socket.AF_UNIX, path
    if address.startswith("tcp://"):
        rest = address[len("tcp://") :].rstrip("/")
        host, sep, port = rest.rpartition(":")
        if not sep or not port.isdigit() or not host:
            raise OptionError(f"{address}: expected tcp://HOST:PORT")
        return socket.AF_INET, (host.strip("[]"), int(port))
    raise OptionError(f"{address}: not a socket address (tcp://HOST:PORT or unix:PATH)")


def _alive(sock: socket.socket) -> bool:
    """Whether the peer of *sock* is still there: no end of stream, no error, waiting."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except (BlockingIOError, InterruptedError):
        return True
    except OSError:
        return False
