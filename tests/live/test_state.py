"""The ``follow --state`` file and the adapter snapshots it carries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentminutes._version import __version__
from agentminutes.errors import UsageError
from agentminutes.harness.claude_code import ClaudeCodeAdapter
from agentminutes.live.state import STATE_VERSION, FollowState, encode_snapshot
from agentminutes.pipeline.conversion import feed_lines
from agentminutes.schema import NO_RAW
from follow_helpers import MAIN, expected, lines_of


def test_round_trip_is_atomic_and_versioned(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    st = FollowState(str(path))
    assert st.entries == {}
    st.update("/t.jsonl", {"offset": 10, "line": 1, "adapter": encode_snapshot(b"\x00\x01")})
    st.save()
    doc = json.loads(path.read_text())
    assert doc["agentminutes_follow_state"] == STATE_VERSION
    entry = doc["transcripts"]["/t.jsonl"]
    assert entry["agentminutes_version"] == __version__
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]  # no temp file left
    again = FollowState(str(path))
    assert again.adapter_snapshot(again.entries["/t.jsonl"]) == b"\x00\x01"
    # a snapshot another version wrote is not unpickled (the transcript is replayed instead)
    entry["agentminutes_version"] = "0.0.0-other"
    assert again.adapter_snapshot(entry) is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"agentminutes_follow_state": 99, "transcripts": {}}', "newer than this agentminutes"),
        ("not json", "not an agentminutes follow state file"),
        ('{"transcripts": []}', "not an agentminutes follow state file"),
    ],
)
def test_unusable_state_files_are_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "state.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=message):
        FollowState(str(path))


def test_adapter_snapshot_resumes_mid_fold_and_keeps_no_raw() -> None:
    lines = [(i, line.rstrip(b"\n")) for i, line in enumerate(lines_of(MAIN), 1)]
    whole = ClaudeCodeAdapter()
    first = ClaudeCodeAdapter()
    head = feed_lines(first, lines[:37])  # inside the message of lines 36-38
    second = ClaudeCodeAdapter()
    second.restore(first.snapshot())
    assert second.fold is not None
    tail = feed_lines(second, lines[37:]) + second.finish()
    every = feed_lines(whole, lines) + whole.finish()
    assert head + tail == every
    blocks = [b for ev in tail if ev.assistant_message for b in ev.assistant_message.content or []]
    assert blocks
    assert all(b.raw is NO_RAW for b in blocks if b.kind == "text")
    assert len(expected(MAIN)) == len(every)
