"""``follow --to tcp://… / unix:…``: a collector server in the test receives the events."""

from __future__ import annotations

import signal
import socket
from pathlib import Path

from agentminutes.live.state import read_progress
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
        saved = read_progress(state).get(str(target))
        assert saved is None or saved["offset"] < size
        collector.paused.clear()
        wait_for(lambda: len(collector.lines) >= len(want) - 1, what="collector lines")
        assert f.stop(signal.SIGINT) == 0
        wait_for(lambda: len(collector.lines) == len(want), what="the flushed message")
    finally:
        f.kill()
        collector.drop()
    assert collector.events == want
    saved = read_progress(state)[str(target)]
    assert saved["offset"] == target.stat().st_size
