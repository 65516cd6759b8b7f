"""Stream and file sinks for ``follow``, and the parser of ``--to`` specs.

``send`` returns once the batch is written and flushed, so a caller that checkpoints
after it never records progress that was not delivered.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import IO

from agentminutes.errors import OptionError, UsageError
from agentminutes.pipeline.batch import Batch
from agentminutes.sinks.encoding import Encode

__all__ = (
    "FileSink",
    "StreamSink",
    "parse_sink_spec",
)


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
        self.put(batch)

    def put(self, batch: Batch) -> None:
        """Append *batch*'s lines now (no event loop needed)."""
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
        self.close()

    def close(self) -> None:
        """Fsync and close the file (no event loop needed)."""
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1


#: The options a socket address takes after ``?``.
SOCKET_OPTIONS = ("buffer", "ack")


def parse_sink_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """Split a ``--to`` value into ``(kind, where, options)``.

    Kinds: ``stdout`` (``-``), ``file`` (``file:PATH``), ``tcp``
    (``tcp://HOST:PORT``), ``unix`` (``unix:PATH``) and ``otlp``
    (``otlp+http://HOST:PORT[/PATH]``, ``otlp+https://…``); socket addresses take
    ``?buffer=BYTES`` and ``?ack=1`` (the collector acknowledges, see
    :mod:`agentminutes.sinks.sockets`), joined with ``&``.
    """
    if spec in ("", "-", "stdout"):
        return "stdout", "", {}
    if spec.startswith(("otlp+http://", "otlp+https://")):
        # The live OTLP exporter (agentminutes.live.otlp): its URL is checked there.
        if "?" in spec:
            raise OptionError(f"--to {spec}: an OTLP address takes no options")
        return "otlp", spec, {}
    if spec.startswith("file:"):
        path = spec[len("file:") :]
        if path.startswith("//"):
            path = path[2:]
        if not path:
            raise OptionError(f"--to {spec}: no file path")
        return "file", path, {}
    where, _, query = spec.partition("?")
    options: dict[str, str] = {}
    for part in filter(None, query.split("&")):
        key, _, value = part.partition("=")
        if key not in SOCKET_OPTIONS:
            raise OptionError(
                f"--to {spec}: unknown option {key!r} (a socket takes "
                + ", ".join(f"{k}=" for k in SOCKET_OPTIONS)
                + ")"
            )
        options[key] = value
    if "buffer" in options and not options["buffer"].isdigit():
        raise OptionError(f"--to {spec}: buffer must be a number of bytes")
    if "ack" in options:
        flag = options["ack"].lower()
        if flag not in ("", "1", "0", "true", "false", "yes", "no", "on", "off"):
            raise OptionError(f"--to {spec}: ack must be 1 or 0")
        options["ack"] = "1" if flag in ("", "1", "true", "yes", "on") else ""
    if where.startswith("tcp://"):
        from agentminutes.sinks.sockets import _socket_target  # not for stdout or a file

        _socket_target(where)
        return "tcp", where, options
    if where.startswith("unix:"):
        from agentminutes.sinks.sockets import _socket_target

        _socket_target(where)
        return "unix", where, options
    raise OptionError(
        f"--to {spec}: expected -, file:PATH, tcp://HOST:PORT, unix:PATH or "
        "otlp+http://HOST:PORT[/PATH]"
    )
