"""Files that change under ``follow``: renames, copytruncate while paused, ``--from-end``,
folders that do not exist yet, transcripts gone while no follower ran.

Real follower processes and real files; every comparison is with ``convert
--format jsonl`` of the same content.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from agentminutes.live.state import read_progress
from follow_helpers import (
    MAIN,
    SMALL,
    FollowProc,
    append,
    expected,
    lines_of,
    paused_after,
    wait_for,
)

CODEX = (
    Path(__file__).resolve().parent.parent.parent
    / "fixtures/codex/nitta-dotfiles/rollout-2025-09-19T01-53-52-1d480e7c-6376-47af-8312-9a0cf1eef4a6.jsonl"
)


def _by_transcript(f: FollowProc) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for env in f.events:
        out.setdefault(env["transcript"], []).append(env["event"])
    return out


def test_a_rollout_archived_inside_the_followed_folder_is_not_sent_again(tmp_path: Path) -> None:
    """Codex moves a finished rollout to archived_sessions/: same file, same transcript."""
    home = tmp_path / "codex"
    live = home / "sessions" / "2025" / "09" / "19" / CODEX.name
    live.parent.mkdir(parents=True)
    (home / "archived_sessions").mkdir()
    f = FollowProc(home)
    try:
        append(live, lines_of(CODEX))
        f.wait_lines(len(expected(CODEX)) - 1)
        archived = home / "archived_sessions" / CODEX.name
        os.rename(live, archived)
        f.wait_quiet(0.5)
        later = home / "sessions" / "2025" / "09" / "20" / "rollout-later.jsonl"
        later.parent.mkdir()
        append(later, lines_of(CODEX)[:5])
        f.wait_lines(len(expected(CODEX)))
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    got = _by_transcript(f)
    assert got[str(live)] == expected(CODEX)  # under the name it was first followed by
    assert str(archived) not in got
    assert str(later) in got
    assert f"moved to {archived}" in f.stderr


def test_a_rename_while_stopped_is_recognised_by_inode_and_first_bytes(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    first = root / "p" / "a.jsonl"
    first.parent.mkdir(parents=True)
    state = tmp_path / "state.json"
    lines = lines_of(MAIN)
    first.write_bytes(b"".join(lines[:30]))
    f1 = FollowProc(root, "--state", state)
    try:
        f1.wait_lines(1)
        f1.wait_quiet(0.4)
        assert f1.stop(signal.SIGTERM) == 0
    finally:
        f1.kill()
    moved = root / "q" / "renamed.jsonl"
    moved.parent.mkdir()
    os.rename(first, moved)
    append(moved, lines[30:])
    f2 = FollowProc(root, "--state", state)
    try:
        f2.wait_lines(1)
        f2.wait_quiet(0.4)
        assert f2.stop(signal.SIGINT) == 0
    finally:
        f2.kill()
    got = [e for f in (f1, f2) for e in _by_transcript(f).get(str(first), [])]
    assert got == expected(MAIN)
    assert str(moved) not in _by_transcript(f2)


def test_a_moved_transcript_rewritten_while_stopped_keeps_its_name(tmp_path: Path) -> None:
    """Moved while followed, then copytruncated and rewritten while no follower ran: the
    saved state says where the file went, so the next follower reads the new content
    from its start under the transcript's first name (as it would an unmoved file)."""
    root = tmp_path / "projects"
    first = root / "p" / "a.jsonl"
    first.parent.mkdir(parents=True)
    state = tmp_path / "state.json"
    lines = lines_of(MAIN)
    first.write_bytes(b"".join(lines[:30]))
    moved = root / "p" / "b.jsonl"
    f1 = FollowProc(root, "--state", state)
    try:
        f1.wait_lines(1)
        f1.wait_quiet(0.4)
        os.rename(first, moved)
        # the follower saw the move when its saved progress says where the file is now
        wait_for(
            lambda: read_progress(state).get(str(first), {}).get("path") == str(moved),
            what="the move in the state",
        )
        assert f1.stop(signal.SIGTERM) == 0
    finally:
        f1.kill()
    shutil.copyfile(moved, tmp_path / "b.jsonl.1")
    os.truncate(moved, 0)
    append(moved, lines_of(SMALL))
    f2 = FollowProc(root, "--state", state)
    try:
        f2.wait_lines(1)
        f2.wait_quiet(0.4)
        assert f2.stop(signal.SIGINT) == 0
    finally:
        f2.kill()
    got = _by_transcript(f1).get(str(first), []) + _by_transcript(f2).get(str(first), [])
    before = tmp_path / "before.jsonl"
    before.write_bytes(b"".join(lines[:30]))
    assert got == expected(before) + expected(SMALL)
    assert str(moved) not in _by_transcript(f2)


def test_a_move_no_follower_saw_then_a_rewrite_makes_a_new_transcript(tmp_path: Path) -> None:
    """Moved while no follower ran, then truncated and rewritten before any follower saw it
    at its new path: nothing recorded says the file there is the one that moved (its first
    bytes changed, and an inode number is reused once a file is gone), so it is a new
    transcript, named by its new path; the old name gets what its saved state held."""
    root = tmp_path / "projects"
    first = root / "p" / "a.jsonl"
    first.parent.mkdir(parents=True)
    state = tmp_path / "state.json"
    lines = lines_of(MAIN)[:30]
    f1 = paused_after(root, state, first, lines)
    moved = root / "q" / "b.jsonl"
    moved.parent.mkdir()
    os.rename(first, moved)
    os.truncate(moved, 0)
    append(moved, lines_of(SMALL))
    f2 = FollowProc(root, "--state", state)
    try:
        f2.wait_lines(len(expected(SMALL)))
        assert f2.stop(signal.SIGINT) == 0
    finally:
        f2.kill()
    before = tmp_path / "before.jsonl"
    before.write_bytes(b"".join(lines))
    old = _by_transcript(f1).get(str(first), []) + _by_transcript(f2).get(str(first), [])
    assert old == expected(before)
    assert _by_transcript(f2)[str(moved)] == expected(SMALL)
    assert "no longer there; wrote what it held" in f2.stderr


def test_a_move_a_restarted_follower_saw_is_saved_before_a_rewrite(tmp_path: Path) -> None:
    """Moved while no follower ran, then seen at its new path by a restarted follower (by
    device, inode and first bytes) that had nothing new to read: the state records where
    the file is at once, so a rewrite after that follower stopped (killed, here) is a
    truncation of the same transcript, under its first name."""
    root = tmp_path / "projects"
    first = root / "p" / "a.jsonl"
    first.parent.mkdir(parents=True)
    state = tmp_path / "state.json"
    lines = lines_of(MAIN)[:30]
    f1 = paused_after(root, state, first, lines)
    moved = root / "q" / "b.jsonl"
    moved.parent.mkdir()
    os.rename(first, moved)
    f2 = FollowProc(root, "--state", state)
    try:
        f2.wait_open(moved)
        wait_for(
            lambda: read_progress(state).get(str(first), {}).get("path") == str(moved),
            what="the move in the state",
        )
    finally:
        f2.kill()
    shutil.copyfile(moved, tmp_path / "b.jsonl.1")
    os.truncate(moved, 0)
    append(moved, lines_of(SMALL))
    f3 = FollowProc(root, "--state", state)
    try:
        f3.wait_lines(1)
        f3.wait_quiet(0.4)
        assert f3.stop(signal.SIGINT) == 0
    finally:
        f3.kill()
    got = [e for f in (f1, f2, f3) for e in _by_transcript(f).get(str(first), [])]
    before = tmp_path / "before.jsonl"
    before.write_bytes(b"".join(lines))
    assert got == expected(before) + expected(SMALL)
    assert str(moved) not in _by_transcript(f3)


def test_a_transcript_moved_out_writes_what_it_held_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    target = root / "p" / "a.jsonl"
    target.parent.mkdir(parents=True)
    f = FollowProc(root)
    try:
        append(target, lines_of(MAIN))
        want = expected(MAIN)
        f.wait_lines(len(want) - 1)
        os.rename(target, tmp_path / "elsewhere.jsonl")
        f.wait_lines(len(want))  # the held message, once it is not found again
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    assert [e["event"] for e in f.events] == want
    assert "was moved out of the followed folders; no longer following it" in f.stderr


def test_copytruncate_while_paused_keeps_the_held_message(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    state = tmp_path / "state.json"
    f1 = FollowProc(target, "--state", state)
    try:
        append(target, lines_of(MAIN))
        f1.wait_lines(len(expected(MAIN)) - 1)
        f1.wait_quiet(0.3)
        assert f1.stop(signal.SIGTERM) == 0  # a pause: the held message stays in the state
    finally:
        f1.kill()
    shutil.copyfile(target, tmp_path / "session.jsonl.1")
    os.truncate(target, 0)
    target.write_bytes(SMALL.read_bytes())  # same inode, other content, longer than nothing
    f2 = FollowProc(target, "--state", state)
    try:
        f2.wait_lines(len(expected(SMALL)))
        assert f2.stop(signal.SIGINT) == 0
    finally:
        f2.kill()
    assert f1.events + f2.events == expected(MAIN) + expected(SMALL)
    assert "following it from the start" in f2.stderr


def test_a_transcript_deleted_while_stopped_writes_what_it_held(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    target = root / "p" / "a.jsonl"
    target.parent.mkdir(parents=True)
    state = tmp_path / "state.json"
    target.write_bytes(MAIN.read_bytes())
    f1 = FollowProc(root, "--state", state)
    try:
        f1.wait_lines(len(expected(MAIN)) - 1)
        f1.wait_quiet(0.3)
        assert f1.stop(signal.SIGTERM) == 0
    finally:
        f1.kill()
    os.unlink(target)
    f2 = FollowProc(root, "--state", state, "--idle-exit", "0.5")
    assert f2.wait_exit() == 0
    assert [e["event"] for f in (f1, f2) for e in f.events] == expected(MAIN)
    assert "no longer there; wrote what it held" in f2.stderr


def test_from_end_writes_nothing_of_the_old_content(tmp_path: Path) -> None:
    """An old message that a new line closes is old: only session_meta and what is new."""
    target = tmp_path / "session.jsonl"
    lines = lines_of(MAIN)
    want = expected(MAIN)
    # after line 37 the message of lines 36-38 is open: line 38 is the first new line
    target.write_bytes(b"".join(lines[:37]))
    f = FollowProc(target, "--from-end")
    try:
        f.wait_open(target)
        f.wait_quiet(0.3)
        assert f.lines == []
        append(target, lines[37:])
        new = [
            e
            for e in want
            if e["kind"] != "session_meta"
            and e["provenance"].get("end_line", e["provenance"]["line"]) > 37
        ]
        f.wait_lines(len(new))
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    assert f.events == [want[0], *new]


def test_a_missing_default_folder_is_waited_for_without_polling(tmp_path: Path) -> None:
    """``~/.config/claude/projects`` usually does not exist: it is watched for, not polled."""
    present, missing = tmp_path / "a", tmp_path / "b"
    (present / "projects" / "p").mkdir(parents=True)
    env = {"CLAUDE_CONFIG_DIR": f"{present},{missing}"}
    f = FollowProc("--harness", "claude-code", env=env)
    try:
        f.wait_watching()
        one = present / "projects" / "p" / "s.jsonl"
        append(one, lines_of(SMALL)[:4])
        f.wait_lines(2)
        two = missing / "projects" / "q" / "t.jsonl"
        two.parent.mkdir(parents=True)
        append(two, lines_of(SMALL)[:4])
        f.wait_lines(4)
        # Watched for: notified through inotify (its descriptor open all along), never polled.
        assert f.inotify_fds() > 0
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    assert "poll" not in f.stderr
    assert set(_by_transcript(f)) == {str(one), str(two)}
