"""The ``follow --state`` file and the adapter snapshots it carries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentminutes._version import __version__
from agentminutes.errors import UsageError
from agentminutes.harness.claude_code import ClaudeCodeAdapter
from agentminutes.live.state import STATE_VERSION, FollowState, encode_snapshot, read_progress
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
    # no temporary file left; the journal (emptied by the save) beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json", "state.json.journal"]
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


def test_every_update_is_in_the_journal_and_a_torn_record_is_dropped(tmp_path: Path) -> None:
    """A follower killed between two saves: what it recorded is read back from the journal."""
    path = tmp_path / "state.json"
    st = FollowState(str(path))
    assert path.exists()  # from the start
    snap = encode_snapshot(b"\x01")
    st.update("/a.jsonl", {"offset": 10, "line": 1, "adapter": snap, "snapshot_offset": 10})
    st.update("/a.jsonl", {"offset": 20, "line": 2})  # keeps the snapshot of offset 10
    st.update("/b.jsonl", {"offset": 5, "line": 1})
    st.forget("/b.jsonl")
    # no save: the process dies here, in the middle of its next record
    with open(tmp_path / "state.json.journal", "ab") as f:
        f.write(b'{"t": "/a.jsonl", "e": {"offset": 3')
    seen = read_progress(path)
    assert set(seen) == {"/a.jsonl"}
    assert (seen["/a.jsonl"]["offset"], seen["/a.jsonl"]["adapter"]) == (20, snap)
    again = FollowState(str(path))
    assert again.entries == seen
    again.update("/a.jsonl", {"offset": 30, "line": 3})  # appended after the torn part, cut off
    assert read_progress(path)["/a.jsonl"]["offset"] == 30
    again.save()
    assert json.loads(path.read_text())["transcripts"]["/a.jsonl"]["offset"] == 30
    # a journal left beside another state document is not read into it
    (tmp_path / "other.json").write_text(path.read_text())
    FollowState(str(tmp_path / "other.json")).update("/c.jsonl", {"offset": 1, "line": 1})
    assert "/c.jsonl" not in read_progress(path)
