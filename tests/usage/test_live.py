"""``usage --follow`` for real: a Claude Code home grown on disk while the CLI follows it.

The live report, applied line by line (each line is a row, written again as
it changes), must end equal to what a one-shot ``usage`` reports on the
finished files: nothing counted twice where the first summary and the
follow meet, nothing lost while the follow starts, and a transcript that is
rewritten counted for what it holds in the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from follow_helpers import MAIN, SMALL, SUBAGENT, FollowProc, append, lines_of, wait_for

SESSION = "c45af7b1-cb7c-4e51-93db-8cbb250a877a"  # MAIN's
SUBAGENT_SESSION = b"ef958aa1-0e93-49f0-bb71-150f63befcd1"  # the parent SUBAGENT was copied from
ARGS = ("--harness", "claude-code", "--by", "session", "--format", "json", "--no-cost")


def _environ(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_HOME", "_DIR"))}
    env.update(HOME=str(home), TZ="UTC", XDG_CACHE_HOME=str(home / ".cache"))
    return env


def _usage(home: Path) -> dict[str, dict[str, Any]]:
    """The one-shot report's rows, by session."""
    proc = subprocess.run(
        [sys.executable, "-m", "agentminutes", "usage", *ARGS],
        capture_output=True,
        text=True,
        env=_environ(home),
        timeout=120,
        check=True,
    )
    return {row["session_id"]: row for row in json.loads(proc.stdout)}


def _applied(follow: FollowProc) -> dict[str, dict[str, Any]]:
    """The live report's rows: its lines applied in order, rows left with no requests dropped."""
    rows: dict[str, dict[str, Any]] = {}
    for line in follow.lines:
        row = json.loads(line)
        rows[row["session_id"]] = row
    return {k: r for k, r in rows.items() if r["requests"]}


def _follow(home: Path) -> FollowProc:
    return FollowProc(
        *ARGS, "--follow", "--idle-exit", "4", command=("usage",), environ=_environ(home)
    )


def _totals(rows: dict[str, dict[str, Any]]) -> dict[str, int]:
    keys = ("requests", "input_tokens", "output_tokens", "cache_read_input_tokens")
    return {k: sum(r[k] for r in rows.values()) for k in keys}


def test_follow_ends_equal_to_the_report_on_the_finished_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-u-live"
    project.mkdir(parents=True)
    main = project / f"{SESSION}.jsonl"
    lines = lines_of(MAIN)
    third = len(lines) // 3
    # On disk before the start: a third of the session and half of its next line.
    cut = len(lines[third]) // 2
    main.write_bytes(b"".join(lines[:third]) + lines[third][:cut])

    follow = _follow(home)
    # The first report is out (made from the complete lines), the follow is starting:
    # the torn line completed and more lines written at once, then in bursts.
    follow.wait_lines(1, timeout=60)
    append(main, [lines[third][cut:], *lines[third + 1 : third + 4]], split=False)
    time.sleep(0.5)
    append(main, lines[third + 4 : 2 * third], seed=3)
    # A subagent transcript appears mid-session: followed from its start.
    sub = project / SESSION / "subagents" / SUBAGENT.name
    sub.parent.mkdir(parents=True)
    sub_lines = [x.replace(SUBAGENT_SESSION, SESSION.encode()) for x in lines_of(SUBAGENT)]
    append(sub, sub_lines, seed=4)
    append(main, lines[2 * third :], seed=5)
    assert follow.wait_exit(timeout=90) == 0, follow.stderr

    want = _usage(home)
    got = _applied(follow)
    assert set(want) == {SESSION}
    assert got == want, follow.stderr
    # It did follow: the row was written again as the session grew.
    assert len(follow.lines) >= 3
    first = json.loads(follow.lines[0])
    assert 0 < first["requests"] < want[SESSION]["requests"]


def test_follow_counts_a_rewritten_transcript_for_what_it_holds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-u-live"
    project.mkdir(parents=True)
    main = project / f"{SESSION}.jsonl"
    lines = lines_of(MAIN)
    n = len(lines)
    main.write_bytes(b"".join(lines[: 2 * n // 3]))
    small = lines_of(SMALL)
    replaced = project / "18cb2580-replaced.jsonl"
    replaced.write_bytes(b"".join(small))
    sub = lines_of(SUBAGENT)
    rewritten = project / f"{SUBAGENT_SESSION.decode()}.jsonl"
    rewritten.write_bytes(b"".join(sub))
    before = _usage(home)
    assert len(before) == 3

    follow = _follow(home)
    follow.wait_lines(len(before), timeout=60)
    time.sleep(1.0)  # the follow is watching
    # Followed for a while, then truncated and a shorter version of the same session
    # written in its place: the requests it no longer holds leave the row.
    append(main, lines[2 * n // 3 : 5 * n // 6], seed=6)
    time.sleep(1.0)
    with open(main, "wb") as f:
        f.write(b"".join(lines[: n // 3]))
    time.sleep(0.5)
    append(main, lines[n // 3 : n // 2], seed=7)
    # Rewritten in place before the follow read a byte of it.
    with open(rewritten, "r+b") as f:
        f.truncate(0)
        f.write(b"".join(sub[: len(sub) // 2]))
    # Replaced by another file under the same name.
    tmp = project / "replacement.tmp"
    tmp.write_bytes(b"".join(small[: len(small) // 2]))
    os.replace(tmp, replaced)
    assert follow.wait_exit(timeout=90) == 0, follow.stderr

    want = _usage(home)
    got = _applied(follow)
    assert got == want, follow.stderr
    assert len(want) == 3
    for session, row in want.items():
        assert row["requests"] < before[session]["requests"], session
    assert "was truncated" in follow.stderr
    assert "was rewritten since the follow started" in follow.stderr
    assert "was replaced by another file" in follow.stderr


def test_follow_takes_a_line_written_after_the_first_report_once(tmp_path: Path) -> None:
    """The seam itself: lines land between the first report and the watch, none is lost."""
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-u-live"
    project.mkdir(parents=True)
    main = project / f"{SESSION}.jsonl"
    lines = lines_of(MAIN)
    half = len(lines) // 2
    main.write_bytes(b"".join(lines[:half]))

    follow = _follow(home)
    follow.wait_lines(1, timeout=60)
    # At once: the follower is between its first report and its first look at the file.
    with open(main, "ab") as f:
        f.write(b"".join(lines[half:]))
    wait_for(lambda: follow.proc.poll() is not None, timeout=90, what="idle exit")
    assert follow.wait_exit() == 0, follow.stderr
    assert _applied(follow) == _usage(home), follow.stderr
