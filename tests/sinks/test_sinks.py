"""``follow --to tcp://… / unix:…``: a collector server in the test receives the events."""

from __future__ import annotations

import json
import signal
import socket
from pathlib import Path

from follow_helpers import MAIN, Collector, FollowProc, append, expected, lines_of, wait_for


def test_tcp_collector_receives_the_stream(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    target.touch()
    collector = Collector(socket.AF_INET, ("127.0.0.1", 0))
    want = expected(MAIN)
    f = FollowProc(target, "--to", collector.url)
    try:
        append(target, lines_of(MAIN))
        wait_for(lambda: len(collector.lines) >= len(want) - 1, what="collector lines")
        assert f.stop(signal.SIGINT) == 0
        wait_for(lambda: len(collector.lines) == len(want), what="the flushed message")
    finally:
        f.kill()
        collector.drop()
    assert f.lines == []
    assert collector.events == want


def test_slow_consumer_gets_backpressure_and_nothing_is_dropped(tmp_path: Path) -> None:
    """A collector that stops reading holds the follower back; progress saved stays behind."""
    target = tmp_path / "session.jsonl"
    state = tmp_path / "state.json"
    target.touch()
    collector = Collector(socket.AF_UNIX, str(tmp_path / "collector.sock"))
    collector.paused.set()
    want = expected(MAIN)
    f = FollowProc(target, "--to", f"{collector.url}?buffer=4096", "--state", state)
    try:
        f.wait_open(target)
        append(target, lines_of(MAIN))
        wait_for(lambda: collector.connections == 1, what="a connection")
        # The collector reads nothing: the follower holds what it cannot send (never
        # more than its buffer while waiting) and records no progress past what the
        # socket took, though all of the transcript is on disk.
        f.wait_quiet(1.5)
        size = target.stat().st_size
        if state.exists():
            saved = json.loads(state.read_text())["transcripts"].get(str(target))
            assert saved is None or saved["offset"] < size
        collector.paused.clear()
        wait_for(lambda: len(collector.lines) >= len(want) - 1, what="collector lines")
        assert f.stop(signal.SIGINT) == 0
        wait_for(lambda: len(collector.lines) == len(want), what="the flushed message")
    finally:
        f.kill()
        collector.drop()
    assert collector.events == want
    saved = json.loads(state.read_text())["transcripts"][str(target)]
    assert saved["offset"] == target.stat().st_size


def test_collector_that_goes_away_and_comes_back(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    target.touch()
    lines = lines_of(MAIN)
    collector = Collector(socket.AF_INET, ("127.0.0.1", 0))
    want = expected(MAIN)
    f = FollowProc(target, "--to", collector.url)
    try:
        append(target, lines[:30])
        first = [e for e in want if e["provenance"]["line"] <= 28]
        wait_for(lambda: len(collector.lines) >= len(first), what="the first part")
        f.wait_quiet(0.3)
        got_first = len(collector.lines)
        collector.drop()  # the collector goes away; the follower keeps reading and buffers
        append(target, lines[30:])
        wait_for(lambda: "connection lost" in _stderr_so_far(f), 10, "the lost connection")
        collector.listen()  # same address
        wait_for(lambda: len(collector.lines) >= len(want) - 1, what="the rest")
        assert collector.connections == 2
        assert got_first < len(collector.lines)
        assert f.stop(signal.SIGINT) == 0
        wait_for(lambda: len(collector.lines) == len(want), what="the flushed message")
    finally:
        f.kill()
        collector.drop()
    assert collector.events == want
    assert "connected" in getattr(f, "stderr_seen", "") + f.stderr


def _stderr_so_far(f: FollowProc) -> str:
    """What the follower has written to stderr so far (non-blocking)."""
    import os

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
