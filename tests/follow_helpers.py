"""Helpers for the follow tests: a real writer, a real follower process, real collectors."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec

from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from conftest import FIXTURES

MAIN = FIXTURES / "claude-code" / "fasthooks-main.jsonl"
SMALL = FIXTURES / "claude-code" / "profilesite-18cb2580.jsonl"
SUBAGENT = FIXTURES / "claude-code" / "subagents" / "agent-aef063ba534d73153.jsonl"

#: How long a wait for a condition may last before the test calls it a hang (s). Waits end
#: on their condition; this bound only stops a stuck test, so it is far beyond what any
#: wait takes on a loaded machine (a 15 s bound failed live tests under load 9 on 2 cores).
HANG_S = 120.0


def lines_of(path: Path) -> list[bytes]:
    """The transcript's lines, each with its newline."""
    return path.read_bytes().splitlines(keepends=True)


def expected(path: Path, **options: Any) -> list[dict[str, Any]]:
    """What ``convert --format jsonl`` prints for *path*, parsed."""
    conv = Conversion(name=str(path))
    enc = msgspec.json.Encoder()
    return [json.loads(enc.encode(ev)) for ev in conv.iter_events(open_sync_chunks(path))]


def append(
    path: Path,
    lines: Iterable[bytes],
    *,
    seed: int = 1,
    pause: float = 0.002,
    split: bool = True,
) -> None:
    """Append *lines* the way an agent writes: bursts, some lines split in two writes."""
    rng = random.Random(seed)
    with open(path, "ab", buffering=0) as f:
        for line in lines:
            if split and len(line) > 2 and rng.random() < 0.4:
                cut = rng.randrange(1, len(line) - 1)
                f.write(line[:cut])
                time.sleep(rng.uniform(0, pause))
                f.write(line[cut:])
            else:
                f.write(line)
            if rng.random() < 0.3:
                time.sleep(rng.uniform(0, pause))


def wait_for(cond: Callable[[], bool], timeout: float = HANG_S, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


class FollowProc:
    """``agentminutes follow`` (or another *command*) in a subprocess, its stdout line by line."""

    def __init__(
        self,
        *args: str | os.PathLike[str],
        env: dict[str, str] | None = None,
        command: tuple[str, ...] = ("follow",),
        environ: dict[str, str] | None = None,
    ) -> None:
        # *environ*: the whole environment (default: ours with *env* on top).
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentminutes", *command, *map(str, args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environ if environ is not None else {**os.environ, **(env or {})},
        )
        self.lines: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.stderr = ""

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    @property
    def events(self) -> list[Any]:
        return [json.loads(x) for x in list(self.lines)]

    def wait_lines(self, n: int, timeout: float = HANG_S) -> None:
        try:
            wait_for(lambda: len(self.lines) >= n, timeout, f"{n} output lines")
        except AssertionError:
            alive = self.proc.poll() is None
            if alive:
                self.proc.send_signal(signal.SIGINT)  # its summary line says what it saw
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(5)
            self.kill()
            self._finish_quietly()
            raise AssertionError(
                f"timed out waiting for {n} output lines (have {len(self.lines)}; "
                f"follower {'was running' if alive else 'had exited'}); stderr: {self.stderr}"
            ) from None

    def wait_open(self, path: Path, timeout: float = HANG_S) -> None:
        """Wait until the follower has *path* open (it is then following it)."""
        fds = Path(f"/proc/{self.proc.pid}/fd")

        def has_open() -> bool:
            try:
                return any(os.readlink(fd) == str(path) for fd in fds.iterdir())
            except OSError:
                return False

        wait_for(has_open, timeout, f"the follower to open {path}")

    def inotify_fds(self) -> int:
        """How many inotify descriptors the follower holds (its watches, on Linux)."""
        n = 0
        for fd in Path(f"/proc/{self.proc.pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                n += os.readlink(fd) == "anon_inode:inotify"
        return n

    def wait_watching(self, timeout: float = HANG_S) -> None:
        """Wait until the follower has set its inotify watch (it then sees what is written)."""
        wait_for(lambda: self.inotify_fds() > 0, timeout, "the follower's inotify watch")

    def wait_quiet(self, quiet: float = 0.3, timeout: float = HANG_S) -> None:
        last = [len(self.lines), time.monotonic()]

        def settled() -> bool:
            if len(self.lines) != last[0]:
                last[:] = [len(self.lines), time.monotonic()]
            return time.monotonic() - last[1] >= quiet

        wait_for(settled, timeout, "quiet output")

    def stop(self, sig: int = signal.SIGINT, timeout: float = HANG_S) -> int:
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("follower did not exit after the signal") from None
        return self._finish()

    def _finish(self) -> int:
        self._reader.join(5)
        assert self.proc.stderr is not None
        assert self.proc.stdout is not None
        self.stderr = self.proc.stderr.read().decode()
        self.proc.stderr.close()
        self.proc.stdout.close()
        assert "Traceback" not in self.stderr, self.stderr
        return self.proc.returncode

    def wait_exit(self, timeout: float = HANG_S) -> int:
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("follower did not exit by itself") from None
        return self._finish()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            self._finish_quietly()

    def _finish_quietly(self) -> None:
        self._reader.join(5)
        if self.proc.stderr is not None and not self.proc.stderr.closed:
            self.stderr = self.proc.stderr.read().decode(errors="replace")
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def paused_after(root: Path, state: Path, first: Path, lines: list[bytes]) -> FollowProc:
    """A follower of *root* that read *lines* at *first* and paused (SIGTERM: held events
    stay saved in *state*)."""
    first.write_bytes(b"".join(lines))
    f = FollowProc(root, "--state", state)
    try:
        f.wait_lines(1)
        f.wait_quiet(0.4)
        assert f.stop(signal.SIGTERM) == 0
    finally:
        f.kill()
    return f


class Collector:
    """A collector server: accepts connections and records the lines it receives.

    ``rcvbuf`` shrinks its receive buffer; ``paused`` stops it reading (a slow
    consumer); :meth:`drop` closes the connection and stops listening, and
    :meth:`listen` starts again on the same address.
    """

    def __init__(self, family: int, address: Any, *, rcvbuf: int | None = None) -> None:
        self.family, self.address, self.rcvbuf = family, address, rcvbuf
        self.lines: list[bytes] = []
        self.connections = 0
        self.paused = threading.Event()
        self._stop = threading.Event()
        self._server: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self.listen()

    def listen(self) -> None:
        server = socket.socket(self.family, socket.SOCK_STREAM)
        if self.family == socket.AF_INET:
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        elif os.path.exists(self.address):
            os.unlink(self.address)
        if self.rcvbuf:
            server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.rcvbuf)
        server.bind(self.address)
        if self.family == socket.AF_INET:
            self.address = server.getsockname()
        server.listen(4)
        server.settimeout(0.05)
        self._server = server
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, args=(server,), daemon=True)
        self._thread.start()

    def _serve(self, server: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            conn.settimeout(0.05)
            pending = b""
            while not self._stop.is_set():
                if self.paused.is_set():
                    time.sleep(0.01)
                    continue
                try:
                    data = conn.recv(4096)
                except TimeoutError:
                    continue
                except OSError:
                    break
                if not data:
                    break
                pending += data
                *done, pending = pending.split(b"\n")
                self.lines.extend(d + b"\n" for d in done)
            conn.close()
        server.close()

    def drop(self) -> None:
        """Close the connection and stop listening (the collector goes away)."""
        self._stop.set()
        assert self._thread is not None
        self._thread.join(5)

    @property
    def url(self) -> str:
        if self.family == socket.AF_UNIX:
            return f"unix:{self.address}"
        host, port = self.address
        return f"tcp://{host}:{port}"

    @property
    def events(self) -> list[Any]:
        return [json.loads(x) for x in list(self.lines)]
