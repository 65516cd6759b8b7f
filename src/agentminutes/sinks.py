"""Sinks: where event batches end up.

Every sink has the same two coroutines, ``send(batch)`` and ``aclose()``.
``send`` returns once the batch's events are taken: written and flushed for a
stream or file, so a caller that checkpoints after ``send`` never records
progress that was not delivered. A sink with ``deferred = True`` (the socket
client) takes batches into a bounded buffer and reports each batch's mark
through its ``on_delivered`` callback once the collector has accepted it;
checkpoints follow those reports instead.
"""

from __future__ import annotations

import errno
import os
import socket
import time
from collections import deque
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import msgspec

from agentminutes._errors import UsageError
from agentminutes._pipeline import Batch
from agentminutes._summary import SessionAggregates, StatsBuilder
from agentminutes.schema import SCHEMA_VERSION, Event, Meta, Report

if TYPE_CHECKING:
    import anyio
    import anyio.abc

__all__ = (
    "FileSink",
    "JsonlSink",
    "SessionJsonSink",
    "Sink",
    "SocketSink",
    "StatsSink",
    "StreamSink",
    "append_jsonl",
    "encode_event",
    "jsonl_encoder",
    "one_line",
    "parse_sink_spec",
)

_encoder = msgspec.json.Encoder()


def encode_event(event: Event) -> bytes:
    """Encode one event as compact JSON (no trailing newline)."""
    return _encoder.encode(event)


def one_line(data: bytes) -> bytes:
    """*data* (encoded JSON) on one line: verbatim payloads cut from a pretty-printed
    source may hold newlines between tokens, which JSONL cannot carry."""
    return msgspec.json.format(data, indent=0) if b"\n" in data else data


def append_jsonl(
    encoder: msgspec.json.Encoder,
    events: list[Event],
    buf: bytearray,
    prefix: bytes = b"",
    suffix: bytes = b"\n",
) -> None:
    """Append *events* to *buf* as lines ``prefix EVENT suffix``, one event per line.

    The fast path encodes straight into *buf*; one count of the newlines
    afterwards proves every event took exactly one line, and only if one did not
    is the batch encoded again, event by event, with :func:`one_line`.
    """
    start = len(buf)
    encode_into = encoder.encode_into
    for ev in events:
        if prefix:
            buf += prefix
        encode_into(ev, buf, -1)
        buf += suffix
    if buf.count(b"\n", start) == len(events):
        return
    del buf[start:]
    for ev in events:
        buf += prefix
        buf += one_line(encoder.encode(ev))
        buf += suffix


@runtime_checkable
class Sink(Protocol):
    """Takes batches of events."""

    async def send(self, batch: Batch) -> None:
        """Take *batch*; return once its events are delivered."""
        ...

    async def aclose(self) -> None:
        """Flush and release what the sink holds."""
        ...


class JsonlSink:
    """Writes one compact JSON event per line to a binary stream (stdout by default)."""

    def __init__(self, stream: IO[bytes], *, flush: bool = True) -> None:
        self._stream = stream
        self._flush = flush
        self._buf = bytearray()
        self._encoder = msgspec.json.Encoder()

    def encode(self, events: list[Event]) -> bytearray:
        """Encode *events* as JSONL into the sink's reusable buffer."""
        buf = self._buf
        del buf[:]
        append_jsonl(self._encoder, events, buf)
        return buf

    async def send(self, batch: Batch) -> None:
        if not batch.events:
            return
        self._stream.write(self.encode(batch.events))
        if self._flush:
            self._stream.flush()

    async def aclose(self) -> None:
        self._stream.flush()


class SessionJsonSink:
    """Writes the whole-session JSON document as events arrive, never holding them all.

    The document opens with the schema version and the meta of the first
    ``session_meta`` event, lists the events as they come, and closes with the
    usage totals and the report once :meth:`finish` gives the skip counts.
    Output is indented like the reference's.
    """

    def __init__(self, stream: IO[bytes], *, indent: int = 2) -> None:
        self._stream = stream
        self._indent = indent
        self._encoder = msgspec.json.Encoder()
        self._started = False
        self._count = 0
        self._agg = SessionAggregates()
        self._buf = bytearray()

    def _pretty(self, obj: Any, depth: int) -> bytes:
        data = self._encoder.encode(obj)
        if not self._indent:
            return one_line(data)
        data = msgspec.json.format(data, indent=self._indent)
        pad = b"\n" + b" " * (self._indent * depth)
        return data.replace(b"\n", pad)

    def _header(self, meta: Meta) -> bytes:
        sp = b" " * self._indent
        nl = b"\n" if self._indent else b""
        colon = b": " if self._indent else b":"
        return (
            b"{" + nl + sp + b'"agentminutes_schema"' + colon + b'"' + SCHEMA_VERSION.encode() + b'",'
            + nl + sp + b'"meta"' + colon + self._pretty(meta, 1) + b","
            + nl + sp + b'"events"' + colon
        )  # fmt: skip

    async def send(self, batch: Batch) -> None:
        events = batch.events
        if not events:
            return
        buf = self._buf
        del buf[:]
        if not self._started:
            first = events[0]
            buf += self._header(first.session_meta or Meta(harness=""))
            self._started = True
        nl = b"\n" if self._indent else b""
        pad = b" " * (self._indent * 2)
        for ev in events:
            self._agg.add(ev)
            buf += b"," if self._count else b"["
            buf += nl + pad + self._pretty(ev, 2)
            self._count += 1
        self._stream.write(buf)

    def finish(self, skipped: dict[str, int]) -> None:
        """Close the document: totals from the events seen, *skipped* counts in the report."""
        if not self._started:
            self._stream.write(self._header(Meta(harness="")))
            self._started = True
        nl = b"\n" if self._indent else b""
        sp = b" " * self._indent
        colon = b": " if self._indent else b":"
        out = bytearray()
        # An empty session has no events at all: the contract writes null, not [].
        out += (nl + sp + b"]") if self._count else b"null"
        totals = self._agg.totals()
        if totals is not None:
            out += b"," + nl + sp + b'"totals"' + colon + self._pretty(totals, 1)
        report: Report = self._agg.report(skipped)
        report_json = msgspec.json.encode(report, order="deterministic")
        out += b"," + nl + sp + b'"report"' + colon + self._pretty(msgspec.Raw(report_json), 1)
        out += nl + b"}\n"
        self._stream.write(out)

    async def aclose(self) -> None:
        self._stream.flush()


class StatsSink:
    """Folds events into the behavioural summary; writes it as JSON on :meth:`finish`."""

    def __init__(self, stream: IO[bytes], *, indent: int = 2) -> None:
        self._stream = stream
        self._indent = indent
        self.builder = StatsBuilder()

    async def send(self, batch: Batch) -> None:
        self.builder.add_all(batch.events)

    def finish(self) -> None:
        """Write the summary."""
        # Maps in key order, as the reference writes them.
        data = msgspec.json.encode(self.builder.build(), order="deterministic")
        if self._indent:
            data = msgspec.json.format(data, indent=self._indent)
        self._stream.write(data + b"\n")

    async def aclose(self) -> None:
        self._stream.flush()


# -- follow's sinks: lines out, as they come ------------------------------------------------

#: Turns a batch into the bytes of its output lines (each ending with a newline).
Encode = Callable[[Batch], bytes]
#: Told the mark of each batch a deferring sink has delivered, in order.
OnDelivered = Callable[[Any], None]


def jsonl_encoder() -> Encode:
    """Bare JSONL: one event per line, exactly as ``convert --format jsonl`` writes it."""
    encoder = msgspec.json.Encoder()
    buf = bytearray()

    def encode(batch: Batch) -> bytes:
        del buf[:]
        append_jsonl(encoder, batch.events, buf)
        return bytes(buf)

    return encode


class StreamSink:
    """Writes lines to a binary stream (stdout) and flushes after every batch."""

    deferred = False

    def __init__(self, stream: IO[bytes], encode: Encode) -> None:
        self._stream = stream
        self._encode = encode

    async def send(self, batch: Batch) -> None:
        data = self._encode(batch)
        if data:
            self._stream.write(data)
            self._stream.flush()

    def sync(self) -> None:
        """Make what was sent durable (for a stream: flushed)."""
        self._stream.flush()

    async def aclose(self) -> None:
        self._stream.flush()


class FileSink:
    """Appends whole lines to a file; fsyncs on :meth:`sync` (before state is saved) and on close.

    A last line that a crash left without its newline is cut off when the
    file is opened again: no state was saved for it, so it is written again
    whole.
    """

    deferred = False

    def __init__(
        self, path: str, encode: Encode, *, notice: Callable[[str], None] | None = None
    ) -> None:
        self.path = path
        self._encode = encode
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise UsageError(f"{path}: cannot open for appending: {exc.strerror}") from None
        size = os.fstat(self._fd).st_size
        if size:
            with open(path, "rb") as f:
                f.seek(max(0, size - (1 << 20)))
                tail = f.read()
            cut = tail.rfind(b"\n")
            if cut != len(tail) - 1:
                keep = size - len(tail) + cut + 1
                os.truncate(path, keep)
                if notice is not None:
                    notice(f"{path}: removed a torn last line ({size - keep} bytes)")
        self._dirty = False

    async def send(self, batch: Batch) -> None:
        data = memoryview(self._encode(batch))
        while data:
            n = os.write(self._fd, data)
            data = data[n:]
            self._dirty = True

    def sync(self) -> None:
        if self._dirty:
            os.fsync(self._fd)
            self._dirty = False

    async def aclose(self) -> None:
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1


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


def parse_sink_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """Split a ``--to`` value into ``(kind, where, options)``.

    Kinds: ``stdout`` (``-``), ``file`` (``file:PATH``), ``tcp``
    (``tcp://HOST:PORT``) and ``unix`` (``unix:PATH``); socket addresses take
    ``?buffer=BYTES``.
    """
    if spec in ("", "-", "stdout"):
        return "stdout", "", {}
    if spec.startswith("file:"):
        path = spec[len("file:") :]
        if path.startswith("//"):
            path = path[2:]
        if not path:
            raise UsageError(f"--to {spec}: no file path")
        return "file", path, {}
    where, _, query = spec.partition("?")
    options: dict[str, str] = {}
    for part in filter(None, query.split("&")):
        key, _, value = part.partition("=")
        options[key] = value
    if where.startswith("tcp://"):
        _socket_target(where)
        return "tcp", where, options
    if where.startswith("unix:"):
        _socket_target(where)
        return "unix", where, options
    raise UsageError(f"--to {spec}: expected -, file:PATH, tcp://HOST:PORT or unix:PATH")
