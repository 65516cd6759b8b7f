"""Socket sinks: a collector that goes away and comes back loses nothing (real sockets, real follower).

The collector here is a real server on 127.0.0.1 or a Unix socket. It records
each connection's lines apart, and with acknowledgements it takes lines
"durably" only when it acknowledges them: lines read after its last
acknowledgement are dropped when it goes away, as a collector that crashed
before committing would lose them, and so are the bytes left unread in its
kernel buffer.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentminutes.live.state import read_progress
from follow_helpers import MAIN, SMALL, SUBAGENT, FollowProc, append, expected, lines_of, wait_for


class Collector:
    """A collector server; ``ack_every=N`` acknowledges (and durably takes) every N lines."""

    def __init__(self, family: int, address: Any, *, ack_every: int | None = None) -> None:
        self.family, self.address, self.ack_every = family, address, ack_every
        #: Lines read, per connection (durable or not).
        self.connections: list[list[bytes]] = []
        #: Durably taken envelopes by id, and their ids in the order first taken.
        self.taken: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []
        self.repeats = 0
        self.acks_sent = 0
        #: Per connection: how many of its lines were acknowledged.
        self.acked: list[int] = []
        #: Stop reading after this many lines of the current connection (a stalled collector).
        self.stall_after: int | None = None
        #: Stall only once some line read is not acknowledged yet (read on until one is).
        self.stall_unacknowledged = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.listen()

    def listen(self) -> None:
        server = socket.socket(self.family, socket.SOCK_STREAM)
        if self.family == socket.AF_INET:
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        elif os.path.exists(self.address):
            os.unlink(self.address)
        server.bind(self.address)
        if self.family == socket.AF_INET:
            self.address = server.getsockname()
        server.listen(4)
        server.settimeout(0.05)
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, args=(server,), daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        if self.family == socket.AF_UNIX:
            return f"unix:{self.address}"
        host, port = self.address
        return f"tcp://{host}:{port}"

    def _serve(self, server: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            lines: list[bytes] = []
            self.connections.append(lines)
            self.acked.append(0)
            self._read(conn, lines)
            conn.close()
        server.close()

    def _read(self, conn: socket.socket, lines: list[bytes]) -> None:
        conn.settimeout(0.05)
        buf = b""
        uncommitted: list[dict[str, Any]] = []
        while not self._stop.is_set():
            if self._stalled(lines):
                time.sleep(0.01)
                continue
            try:
                data = conn.recv(4096)
            except TimeoutError:
                if uncommitted:  # quiet for a moment: commit what was read so far
                    self._commit_and_ack(conn, lines, uncommitted)
                    uncommitted = []
                continue
            except OSError:
                return
            if not data:
                return
            buf += data
            *done, buf = buf.split(b"\n")
            for raw in done:
                lines.append(raw + b"\n")
                record = json.loads(raw)
                if self.ack_every is None:
                    continue
                uncommitted.append(record)
                if len(uncommitted) >= self.ack_every:
                    self._commit_and_ack(conn, lines, uncommitted)
                    uncommitted = []
                if self._stalled(lines):
                    break
        # going away: what was read but not acknowledged was never durably taken

    def _stalled(self, lines: list[bytes]) -> bool:
        if self.stall_after is None or len(lines) < self.stall_after:
            return False
        # Whether the collector's last acknowledgement fell on the stall line is a matter
        # of timing (a quiet moment commits early); the test of the window needs one.
        return not self.stall_unacknowledged or self.acked[-1] < len(lines)

    def _commit_and_ack(
        self, conn: socket.socket, lines: list[bytes], records: list[dict[str, Any]]
    ) -> None:
        self._commit(records)
        conn.sendall(json.dumps({"ack": records[-1]["id"]}).encode() + b"\n")
        self.acks_sent += 1
        self.acked[-1] = len(lines)  # every line read so far on this connection

    def _commit(self, records: list[dict[str, Any]]) -> None:
        for record in records:
            if record["id"] in self.taken:
                self.repeats += 1
                assert self.taken[record["id"]] == record, "one id, two events"
            else:
                self.taken[record["id"]] = record
                self.order.append(record["id"])

    def drop(self) -> None:
        """Go away: close the connection (unread bytes are discarded) and stop listening."""
        self._stop.set()
        assert self._thread is not None
        self._thread.join(5)

    def by_transcript(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for eid in self.order:
            env = self.taken[eid]
            out.setdefault(env["transcript"], []).append(env["event"])
        return out


def _stderr_so_far(f: FollowProc) -> str:
    assert f.proc.stderr is not None
    fd = f.proc.stderr.fileno()
    os.set_blocking(fd, False)
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        chunk = b""
    finally:
        os.set_blocking(fd, True)
    f.stderr_seen = getattr(f, "stderr_seen", "") + chunk.decode()
    return f.stderr_seen


def _grow(n: int = 8) -> bytes:
    """The MAIN transcript's lines *n* times over with fresh uuids: a long session."""
    lines = lines_of(MAIN)
    out = []
    for i in range(n):
        for line in lines:
            for old in (b'"uuid":"', b'"parentUuid":"', b"msg_", b"toolu_"):
                line = line.replace(old, old + f"{i}-".encode())
            out.append(line)
    return b"".join(out)


@pytest.mark.parametrize("family", ["tcp", "unix"])
def test_acknowledging_collector_that_goes_away_loses_nothing(tmp_path: Path, family: str) -> None:
    folder = tmp_path / "run"
    sub = folder / "main" / "subagents" / "agent-x.jsonl"
    sub.parent.mkdir(parents=True)
    main = folder / "main.jsonl"
    state = tmp_path / "state.json"
    fam, address = (
        (socket.AF_INET, ("127.0.0.1", 0))
        if family == "tcp"
        else (socket.AF_UNIX, str(tmp_path / "c.sock"))
    )
    collector = Collector(fam, address, ack_every=7)
    lines = lines_of(MAIN)
    f = FollowProc(folder, "--to", f"{collector.url}?ack=1&buffer=65536", "--state", state)
    try:
        append(main, lines[:30])
        append(sub, lines_of(SUBAGENT))
        wait_for(lambda: collector.acks_sent >= 3, what="acknowledged lines")
        # The collector stalls (reads nothing more), then goes away: lines read since its
        # last acknowledgement and lines left in its kernel buffer are both gone.
        collector.stall_unacknowledged = True
        collector.stall_after = len(collector.connections[0]) + 3
        append(main, lines[30:])
        time.sleep(0.3)
        saved = read_progress(state)
        collector.drop()
        wait_for(lambda: "connection lost" in _stderr_so_far(f), 10, "the lost connection")
        collector.stall_after = None
        collector.listen()
        n_main, n_sub = len(expected(MAIN)), len(expected(SUBAGENT))
        # each transcript holds its last message until the stop
        wait_for(lambda: len(collector.taken) >= n_main + n_sub - 2, what="the rest")
        assert f.stop(signal.SIGINT) == 0
        wait_for(lambda: len(collector.taken) == n_main + n_sub, what="the flushed message")
    finally:
        f.kill()
        collector.drop()
    assert len(collector.connections) == 2
    assert collector.by_transcript() == {str(main): expected(MAIN), str(sub): expected(SUBAGENT)}
    # Repeats only within the window not acknowledged: the second connection starts
    # right after the last line the collector acknowledged on the first.
    first, second = collector.connections
    acked_lines = collector.acked[0]
    assert 0 < acked_lines < len(first)  # some lines were read but never acknowledged
    assert json.loads(second[0])["id"] == json.loads(first[acked_lines])["id"]
    # The state recorded no more than what was acknowledged by then.
    acked_offsets = {
        path: max(
            (e["event"]["provenance"]["end_line"] or e["event"]["provenance"]["line"])
            for e in map(json.loads, first[:acked_lines])
            if e["transcript"] == path
        )
        for path in {json.loads(x)["transcript"] for x in first[:acked_lines]}
    }
    for path, entry in saved.items():
        assert entry["line"] <= acked_offsets.get(path, 0) + 1  # + the record closing a message
    assert "sending again" in f.stderr_seen + f.stderr


def test_acknowledgements_hold_progress_and_ids_survive_a_kill(tmp_path: Path) -> None:
    """Progress is recorded only for what was acknowledged; after a kill, repeats keep their ids."""
    target = tmp_path / "session.jsonl"
    target.touch()
    grown = _grow(4).splitlines(keepends=True)
    state = tmp_path / "state.json"
    collector = Collector(socket.AF_INET, ("127.0.0.1", 0), ack_every=5)
    collector.stall_after = 40  # takes and acknowledges 40 lines, then stops reading
    f = FollowProc(target, "--to", f"{collector.url}?ack=1&buffer=32768", "--state", state)
    try:
        f.wait_open(target)
        # the first lines slowly (batches of a few lines), then the rest at once
        writer = threading.Thread(
            target=lambda: (append(target, grown[:60], pause=0.05), append(target, grown[60:]))
        )
        writer.start()
        wait_for(lambda: collector.acks_sent == 8, what="the acknowledgements")
        writer.join()
        time.sleep(1.5)  # more than a state save interval
        f.kill()  # SIGKILL: only the state file survives
        # Everything was on disk and most of it in the kernel's buffers, but the state
        # records no more than the acknowledged lines could complete.
        saved = read_progress(state)[str(target)]
        assert 0 < saved["line"] <= 40 + 3
        first_ids = set(collector.order)
        collector.drop()
        collector.stall_after = None
        collector.listen()
        g = FollowProc(target, "--to", f"{collector.url}?ack=1", "--state", state)
        want = expected(target)
        wait_for(lambda: len(collector.taken) >= len(want) - 1, 30, "the whole transcript")
        assert g.stop(signal.SIGINT) == 0
        wait_for(lambda: len(collector.taken) == len(want), what="the flushed message")
    finally:
        f.kill()
        collector.drop()
    # nothing lost, nothing the collector took twice under two ids
    assert [collector.taken[i]["event"] for i in collector.order] == want
    # The restarted follower began at its checkpoint, at or before the last acknowledged
    # line: what it sent again of the first run's events came under the same ids.
    again = [json.loads(x)["id"] for x in collector.connections[1]]
    assert collector.repeats == len(set(again) & first_ids) == len(again[: collector.repeats])
    assert set(again[: collector.repeats]) <= first_ids
    assert len(collector.connections) == 2


@pytest.mark.parametrize("family", ["tcp", "unix"])
def test_collector_without_acks_loses_nothing_at_a_disconnect(tmp_path: Path, family: str) -> None:
    """A stalled collector closes with bytes unread in its kernel buffer; the sink sends them again."""
    target = tmp_path / "session.jsonl"
    target.write_bytes(_grow(8))
    fam, address = (
        (socket.AF_INET, ("127.0.0.1", 0))
        if family == "tcp"
        else (socket.AF_UNIX, str(tmp_path / "c.sock"))
    )
    collector = Collector(fam, address)
    collector.stall_after = 100
    want = expected(target)
    f = FollowProc(target, "--to", collector.url)
    try:
        wait_for(lambda: collector.connections and len(collector.connections[0]) >= 100)
        time.sleep(0.5)  # the kernel buffers fill up behind the stalled reader
        collector.drop()
        wait_for(lambda: "connection lost" in _stderr_so_far(f), 10, "the lost connection")
        collector.stall_after = None
        collector.listen()
        wait_for(lambda: len(collector.connections) == 2, what="the reconnect")
        wait_for(lambda: len(collector.connections[1]) >= 1, what="lines again")
        f.wait_quiet(0.5)
        assert f.stop(signal.SIGINT) == 0
        f.wait_quiet(0.3)
    finally:
        f.kill()
        collector.drop()
    first = [json.loads(x) for x in collector.connections[0]]
    second = [json.loads(x) for x in collector.connections[1]]
    assert first == want[: len(first)]
    start = want.index(second[0])
    # the second connection starts on a line at or before the first one the collector
    # did not read (nothing lost), and goes on to the end without a gap or a repeat
    assert start <= len(first)
    assert second == want[start:]
    assert len(first) - start > 0  # some lines were sent twice: the kernel had them unread


def test_bad_acknowledgement_lines_are_reported_once(tmp_path: Path) -> None:
    target = tmp_path / "small.jsonl"
    shutil.copyfile(SMALL, target)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    host, port = server.getsockname()
    f = FollowProc(target, "--to", f"tcp://{host}:{port}?ack=1")
    try:
        conn, _ = server.accept()
        conn.settimeout(5)
        got = b""
        while got.count(b"\n") < len(expected(SMALL)) - 1:
            got += conn.recv(65536)
        conn.sendall(b"not json\nnope\n")
        last = json.loads(got.splitlines()[-1])
        conn.sendall(json.dumps({"ack": last["id"]}).encode() + b"\n")
        time.sleep(0.3)
        f.proc.send_signal(signal.SIGINT)
        while True:  # the held message; acknowledge it so the follower can stop
            chunk = conn.recv(65536)
            if not chunk:
                break
            got += chunk
            conn.sendall(
                json.dumps({"ack": json.loads(got.splitlines()[-1])["id"]}).encode() + b"\n"
            )
            if got.count(b"\n") == len(expected(SMALL)):
                break
        assert f.wait_exit() == 0
        conn.close()
    finally:
        f.kill()
        server.close()
    assert [json.loads(x)["event"] for x in got.splitlines()] == expected(SMALL)
    assert f.stderr.count("not an acknowledgement") == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tcp://127.0.0.1:9?acks=1", "unknown option 'acks'"),
        ("tcp://127.0.0.1:9?ack=maybe", "ack must be 1 or 0"),
        ("unix:/tmp/x.sock?buffer=big", "buffer must be a number"),
    ],
)
def test_socket_options_are_checked(tmp_path: Path, spec: str, message: str) -> None:
    f = FollowProc(tmp_path / "s.jsonl", "--to", spec)
    assert f.wait_exit() == 2  # a value --to does not take: the error and the usage hint
    error, hint = f.stderr.splitlines()
    assert error.startswith(f"Error: --to {spec}: {message}")
    assert hint.startswith("Usage: agentminutes follow")


@pytest.mark.parametrize("family", [socket.AF_UNIX, socket.AF_INET], ids=["unix", "tcp"])
async def test_a_count_taken_after_the_collector_left_is_not_believed(family: int) -> None:
    """The race CI met under load: the collector closes between a send and the count after it.

    Its kernel drops what it held unread and the count of unread bytes falls to
    nothing, which would resume the next connection after lines never read.
    Real sockets, the sink's own sampling: the count must not fall at the close.
    """
    import anyio

    from agentminutes.sinks.sockets import SocketSink

    if family == socket.AF_UNIX:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    else:
        server = socket.create_server(("127.0.0.1", 0))
        ours = socket.create_connection(server.getsockname())
        theirs, _ = server.accept()
        server.close()
    ours.setblocking(False)
    sink = SocketSink("unix:/nonexistent", lambda batch: b"")
    try:
        written = 0
        try:
            while True:  # the collector reads nothing: fill both kernels' buffers
                written += ours.send(b"x" * 65536)
        except BlockingIOError:
            pass
        await anyio.sleep(0.2)  # let the loopback settle what it has moved to the collector's side
        sink._written = written
        sink._sample(ours)
        before = sink._unread
        assert before > 0
        # Closed with its receive buffer unread (a reset, for TCP).
        theirs.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
        theirs.close()
        await anyio.sleep(0.2)
        sink._sample(ours)
        assert sink._unread >= before
        sink._written += 100  # a last send the kernel took before it saw the close
        sink._sample(ours)
        assert sink._unread >= before + 100
    finally:
        theirs.close()
        ours.close()
