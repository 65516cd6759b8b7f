"""Which transcript a file is: by name, by saved entry, by device, inode and first bytes."""

from __future__ import annotations

import os
from pathlib import Path

from agentminutes.live.config import FollowConfig
from agentminutes.live.registry import Registry
from agentminutes.live.state import FollowState
from agentminutes.live.transcript import Transcript
from follow_helpers import MAIN, lines_of, paused_after


def _saved(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A transcript a follower read and paused on (SIGTERM): its root, path and state file."""
    root = tmp_path / "projects"
    first = root / "p" / "a.jsonl"
    first.parent.mkdir(parents=True)
    state = tmp_path / "state.json"
    paused_after(root, state, first, lines_of(MAIN)[:30])
    return root, first, state


def _registry(state: Path) -> tuple[FollowConfig, Registry]:
    config = FollowConfig(state=FollowState(str(state)))
    return config, Registry(config)


def test_a_file_moved_again_before_it_was_opened_is_the_transcript_its_entry_named(
    tmp_path: Path,
) -> None:
    root, first, state = _saved(tmp_path)
    moved = root / "q" / "b.jsonl"
    moved.parent.mkdir()
    os.rename(first, moved)
    config, known = _registry(state)
    tr = Transcript(config, str(moved))
    known.attach_entry(tr)  # found where it went: it takes its first name back
    known.add(tr)
    assert tr.name == str(first)
    assert tr.entry is not None
    again = root / "r" / "c.jsonl"
    again.parent.mkdir()
    os.rename(moved, again)  # before the follower opened it
    assert known.same_file(str(again), os.stat(again)) is tr


def test_an_unmoved_file_renamed_before_it_was_opened_is_its_transcript(tmp_path: Path) -> None:
    root, first, state = _saved(tmp_path)
    config, known = _registry(state)
    tr = Transcript(config, str(first))
    known.attach_entry(tr)
    known.add(tr)
    assert tr.entry is not None
    moved = root / "q" / "b.jsonl"
    moved.parent.mkdir()
    os.rename(first, moved)
    assert known.same_file(str(moved), os.stat(moved)) is tr


def test_another_file_given_the_inode_is_not_the_transcript(tmp_path: Path) -> None:
    """Known by its entry's identity before it is opened, a transcript is still told from
    another file by the entry's fingerprint of its first bytes."""
    root, first, state = _saved(tmp_path)
    config, known = _registry(state)
    tr = Transcript(config, str(first))
    known.attach_entry(tr)
    known.add(tr)
    moved = root / "q" / "b.jsonl"
    moved.parent.mkdir()
    os.rename(first, moved)
    with open(moved, "r+b") as f:
        f.write(b"[")  # another first byte: not the file the entry fingerprinted
    assert known.same_file(str(moved), os.stat(moved)) is None
