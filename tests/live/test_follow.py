"""``agentminutes follow`` as a user runs it: a real process, a file growing on disk, signals.

Every scenario compares the follower's output with what ``convert --format
jsonl`` prints for the finished file, as JSON values, in order.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from conftest import FIXTURES
from follow_helpers import (
    MAIN,
    SMALL,
    SUBAGENT,
    FollowProc,
    append,
    expected,
    lines_of,
)


def _kinds(events: list[dict]) -> list[str]:
    return [e["kind"] for e in events]


def test_plain_growing_file_matches_convert(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    target.touch()
    want = expected(MAIN)
    f = FollowProc(target)
    try:
        append(target, lines_of(MAIN))
        # Everything but the last assistant message arrives while the file grows;
        # that one is held until a stop flushes it.
        f.wait_lines(len(want) - 1)
        f.wait_quiet(0.2)
        assert len(f.lines) == len(want) - 1
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    assert f.events == want
    assert "60 events" in f.stderr


def test_file_created_after_the_follower_started(tmp_path: Path) -> None:
    target = tmp_path / "later" / "session.jsonl"
    want = expected(SMALL)
    f = FollowProc(target)
    try:
        f.wait_quiet(0.3)
        target.parent.mkdir()
        append(target, lines_of(SMALL))
        f.wait_lines(len(want) - 1)
        assert f.stop(signal.SIGTERM) == 0  # no --state: SIGTERM flushes too
    finally:
        f.kill()
    assert f.events == want


_WAITING_FOLLOWER = """
import sys, anyio, agentminutes

async def main():
    async for _ in agentminutes.follow(sys.argv[1], idle_exit=0.6):
        pass
    print(sorted(m for m in sys.modules if m.startswith("agentminutes.harness.")))

anyio.run(main)
"""


def test_a_follower_waiting_for_first_bytes_loads_the_adapters_while_idle(tmp_path: Path) -> None:
    """The adapters the first record is detected with are imported while the follower
    waits, not when the record comes (a first event tens of milliseconds later)."""
    import subprocess
    import sys

    target = tmp_path / "session.jsonl"
    target.touch()
    out = subprocess.run(
        [sys.executable, "-c", _WAITING_FOLLOWER, str(target)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    for module in ("claude_code", "codex", "copilot", "gemini_cli", "pi", "qwen_code"):
        assert f"'agentminutes.harness.{module}'" in out


def _cut_after(lines: list[bytes], n: int, partial: int) -> tuple[bytes, bytes]:
    """The first *n* lines plus *partial* bytes of the next, and the rest."""
    data = b"".join(lines)
    at = len(b"".join(lines[:n])) + partial
    return data[:at], data[at:]


@pytest.mark.parametrize(
    ("stop_after", "partial"),
    [
        (36, 500),  # inside an assistant message folded over lines 36-38, mid-line 37
        (3, 0),  # on a line boundary, inside the first folded message
        (59, 4000),  # mid-way through a long user line
    ],
)
def test_restart_with_state_is_exactly_once_and_in_order(
    tmp_path: Path, stop_after: int, partial: int
) -> None:
    target = tmp_path / "session.jsonl"
    state = tmp_path / "state.json"
    target.touch()
    lines = lines_of(MAIN)
    first, rest = _cut_after(lines, stop_after, partial)
    want = expected(MAIN)

    f1 = FollowProc(target, "--state", state)
    try:
        append(target, [first], split=False)
        f1.wait_lines(1)
        f1.wait_quiet(0.4)
        # SIGTERM with --state: a pause; what the adapter holds stays in the state.
        assert f1.stop(signal.SIGTERM) == 0
    finally:
        f1.kill()
    saved = json.loads(state.read_text())
    entry = saved["transcripts"][str(target)]
    assert saved["agentminutes_follow_state"] == 1
    assert entry["line"] == stop_after
    assert entry["offset"] == len(b"".join(lines[:stop_after]))
    # Lines written while no follower runs are picked up by the next one.
    middle = len(rest) // 2
    append(target, [rest[:middle]], split=False)
    f2 = FollowProc(target, "--state", state)
    try:
        append(target, [rest[middle:]])
        f2.wait_lines(len(want) - len(f1.lines) - 1)
        f2.wait_quiet(0.2)
        assert f2.stop(signal.SIGINT) == 0
    finally:
        f2.kill()
    assert f1.events + f2.events == want


def test_sigint_flush_is_not_repeated_by_the_next_run(tmp_path: Path) -> None:
    """A flushing stop after a complete (but not yet closed) message: written once in all."""
    target = tmp_path / "session.jsonl"
    state = tmp_path / "state.json"
    target.touch()
    lines = lines_of(MAIN)
    first, rest = _cut_after(lines, 42, 300)  # message of lines 36-38 is closed by line 43
    want = expected(MAIN)
    f1 = FollowProc(target, "--state", state)
    try:
        append(target, [first], split=False)
        f1.wait_lines(1)
        f1.wait_quiet(0.4)
        assert f1.stop(signal.SIGINT) == 0
    finally:
        f1.kill()
    assert f1.events[-1]["kind"] == "assistant_message"  # flushed at the stop
    assert f1.events[-1]["provenance"] == {"line": 36, "end_line": 38}
    # A third run that sees nothing new writes nothing: the flushed message is remembered.
    f0 = FollowProc(target, "--state", state)
    try:
        f0.wait_quiet(0.6)
        assert f0.stop(signal.SIGINT) == 0
    finally:
        f0.kill()
    assert f0.events == []
    f2 = FollowProc(target, "--state", state)
    try:
        append(target, [rest])
        f2.wait_lines(len(want) - len(f1.events) - 1)
        assert f2.stop(signal.SIGINT) == 0
    finally:
        f2.kill()
    assert f1.events + f2.events == want


def test_sigint_mid_message_then_continued_supersedes(tmp_path: Path) -> None:
    """The agent continues a message a flushing stop wrote: it is written again, complete."""
    target = tmp_path / "session.jsonl"
    state = tmp_path / "state.json"
    target.touch()
    first, rest = _cut_after(lines_of(MAIN), 37, 0)  # message 36-38: 38 comes after the stop
    want = expected(MAIN)
    f1 = FollowProc(target, "--state", state)
    try:
        append(target, [first], split=False)
        f1.wait_lines(1)
        f1.wait_quiet(0.4)
        assert f1.stop(signal.SIGINT) == 0
    finally:
        f1.kill()
    partial_message = f1.events[-1]
    assert partial_message["provenance"] == {"line": 36, "end_line": 37}
    f2 = FollowProc(target, "--state", state)
    try:
        append(target, [rest])
        f2.wait_lines(len(want) - len(f1.events))
        f2.wait_quiet(0.3)
        assert f2.stop(signal.SIGINT) == 0
    finally:
        f2.kill()
    combined = f1.events + f2.events
    combined.remove(partial_message)
    assert combined == want
    complete = [e for e in f2.events if e.get("message_id") == partial_message["message_id"]]
    assert complete[-1]["provenance"] == {"line": 36, "end_line": 38}


def test_truncation_and_replacement_start_over(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    target.touch()
    small, main = expected(SMALL), expected(MAIN)
    f = FollowProc(target)
    try:
        append(target, lines_of(SMALL))
        f.wait_lines(len(small) - 1)
        # copytruncate-style: cut to nothing, then a new session is written in place
        with open(target, "r+b") as fh:
            fh.truncate(0)
        append(target, lines_of(MAIN))
        f.wait_lines(len(small) + len(main) - 1)
        # replace-by-rename: another file takes the path
        fresh = tmp_path / "fresh.jsonl"
        fresh.write_bytes(b"".join(lines_of(SMALL)))
        os.replace(fresh, target)
        f.wait_lines(len(small) + len(main) + len(small) - 1)
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    # Each time the old content's held message is written when it ends.
    assert f.events == small + main + small
    assert "was truncated; following it again from the start" in f.stderr
    assert "was replaced by another file; following it again from the start" in f.stderr


def test_rewrite_past_the_offset_is_caught_by_the_marker(tmp_path: Path) -> None:
    """A file rewritten with different bytes that is already longer than the offset."""
    target = tmp_path / "session.jsonl"
    state = tmp_path / "state.json"
    lines = lines_of(MAIN)
    target.write_bytes(b"".join(lines[:10]))
    f1 = FollowProc(target, "--state", state, "--idle-exit", "0.5")
    assert f1.wait_exit() == 0
    # While stopped, the transcript is replaced in place (same inode) by another, longer one.
    with open(target, "r+b") as fh:
        fh.truncate(0)
        fh.write(b"".join(lines_of(SMALL)) * 3)
    f2 = FollowProc(target, "--state", state, "--idle-exit", "0.5", "--permissive")
    assert f2.wait_exit() == 0
    assert "following it from the start" in f2.stderr
    assert f2.events[0]["kind"] == "session_meta"
    assert f2.events[0]["provenance"]["line"] == 2


def test_folder_picks_up_a_subagent_appearing_mid_session(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    project = projects / "-home-me-app"
    project.mkdir(parents=True)
    main = project / "18cb2580.jsonl"
    sub = project / "18cb2580" / "subagents" / "agent-aef063ba534d73153.jsonl"
    main_lines = lines_of(SMALL)
    f = FollowProc(projects)
    try:
        append(main, main_lines[:8])
        f.wait_lines(6)
        # The subagent's folder and file appear while the session runs.
        sub.parent.mkdir(parents=True)
        append(sub, lines_of(SUBAGENT))
        append(main, main_lines[8:])
        f.wait_lines(len(expected(SMALL)) + len(expected(SUBAGENT)) - 2)
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    by_file: dict[str, list] = {}
    for envelope in f.events:
        assert list(envelope) == [
            "transcript",
            "harness",
            "id",
            "session_id",
            "is_subagent",
            "event",
        ]
        assert envelope["harness"] == "claude-code"
        events = by_file.setdefault(envelope["transcript"], [])
        events.append(envelope["event"])
        meta = events[0]["session_meta"]
        # every envelope names its transcript's session, known from its first event on
        assert envelope["session_id"] == meta["session_id"] != ""
        assert envelope["is_subagent"] is meta.get("is_subagent", False)
    assert by_file == {str(main): expected(SMALL), str(sub): expected(SUBAGENT)}
    assert by_file[str(sub)][0]["session_meta"]["is_subagent"] is True


def test_default_root_narrowed_by_session_id_and_cwd(tmp_path: Path) -> None:
    config = tmp_path / "claude"
    project = config / "projects" / "-somewhere"
    project.mkdir(parents=True)
    (project / "a.jsonl").write_bytes(MAIN.read_bytes())
    (project / "b.jsonl").write_bytes(SMALL.read_bytes())
    (project / "c.txt").write_text("not a transcript")
    meta = expected(SMALL)[0]["session_meta"]
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    f = FollowProc(
        "--harness",
        "claude-code",
        "--session-id",
        meta["session_id"],
        "--idle-exit",
        "0.6",
        env=env,
    )
    assert f.wait_exit() == 0
    assert {e["transcript"] for e in f.events} == {str(project / "b.jsonl")}
    assert [e["event"] for e in f.events] == expected(SMALL)
    g = FollowProc("--harness", "claude-code", "--cwd", "/nowhere", "--idle-exit", "0.6", env=env)
    assert g.wait_exit() == 0
    assert g.events == []


def test_from_end_skips_history_but_keeps_session_meta(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    lines = lines_of(MAIN)
    target.write_bytes(b"".join(lines[:20]))
    f = FollowProc(target, "--from-end")
    try:
        f.wait_open(target)
        f.wait_quiet(0.3)
        assert f.lines == []
        append(target, lines[20:])
        f.wait_lines(2)
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    want = expected(MAIN)
    tail = [e for e in want if e["provenance"].get("end_line", e["provenance"]["line"]) > 20]
    assert f.events == [want[0], *tail]


def test_poll_mode_and_idle_exit(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    target.write_bytes(b"".join(lines_of(SMALL)))
    f = FollowProc(target, "--poll", "--idle-exit", "0.5")
    assert f.wait_exit() == 0
    assert f.events == expected(SMALL)


def test_to_file_appends_whole_lines_and_resumes(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    out = tmp_path / "events.jsonl"
    state = tmp_path / "state.json"
    lines = lines_of(MAIN)
    target.write_bytes(b"".join(lines[:30]))
    # A torn line left by an earlier crash is cut off before appending.
    out.write_bytes(b'{"kind":"sess')
    f1 = FollowProc(target, "--to", f"file:{out}", "--state", state, "--idle-exit", "0.4")
    assert f1.wait_exit() == 0
    assert "removed a torn last line" in f1.stderr
    append(target, lines[30:])
    f2 = FollowProc(target, "--to", f"file:{out}", "--state", state, "--idle-exit", "0.4")
    assert f2.wait_exit() == 0
    assert [json.loads(x) for x in out.read_bytes().splitlines()] == expected(MAIN)
    assert f1.lines == f2.lines == []


def test_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(lines_of(SMALL)[:3]) + b"{not json\n")
    f = FollowProc(bad)
    assert f.wait_exit() == 1
    assert f.stderr.strip().splitlines()[-1].startswith(f"Error: {bad}: claude-code: invalid JSON")
    before = [e for e in expected(SMALL) if e["provenance"]["line"] < 4]
    # what came before the bad line, but the message it may still have continued
    assert f.events == [e for e in before if e["kind"] != "assistant_message"]
    g = FollowProc(tmp_path / "x.jsonl", "--format", "json")
    assert g.wait_exit() == 2
    assert g.stderr.startswith('Error: --format "json": follow writes one event per line')
    h = FollowProc("--to", "ftp://x")
    assert h.wait_exit() == 2  # a value --to does not take: one error line and the usage hint
    error, hint = h.stderr.strip().splitlines()
    assert error.startswith("Error: --to ftp://x: expected -, file:PATH")
    assert hint.startswith("Usage: agentminutes follow")


def test_many_transcripts_do_not_hold_a_file_each(tmp_path: Path) -> None:
    """A folder of many finished transcripts: files are released, and reopened when they grow."""
    lines = lines_of(SMALL)
    files = [tmp_path / f"p{i // 20}" / f"s{i:03}.jsonl" for i in range(150)]
    for p in files:
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(b"".join(lines[:8]))
    per_file = len([e for e in expected(SMALL) if e["provenance"].get("end_line", 0) <= 8]) - 1
    f = FollowProc(tmp_path)
    try:
        f.wait_lines(150 * per_file)
        open_files = len(os.listdir(f"/proc/{f.proc.pid}/fd"))
        assert open_files < 100
        append(files[0], lines[8:])  # released long ago: reopened when it grows
        f.wait_lines(150 * per_file + len(expected(SMALL)) - per_file - 1)
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    first = [e["event"] for e in f.events if e["transcript"] == str(files[0])]
    assert first == expected(SMALL)
    assert len(f.events) == 150 * per_file + (len(expected(SMALL)) - per_file) + 149


def test_a_whole_document_rewritten_on_every_turn_is_written_once(tmp_path: Path) -> None:
    # Legacy Gemini CLI sessions are one JSON document, rewritten in place each turn.
    source = Path(__file__).parent.parent.parent / "fixtures" / "gemini-cli" / "constructed"
    doc = json.loads((source / "session-2025-11-03T14-10-5e55a7e0.json").read_text())
    target = tmp_path / "session-2025-11-03T14-10-5e55a7e0.json"
    final = tmp_path / "final.json"
    messages = doc["messages"]

    def save(path: Path, n: int) -> None:
        data = json.dumps(dict(doc, messages=messages[:n]), indent=2).encode() + b"\n"
        with open(path, "r+b" if path.exists() else "wb") as f:
            f.truncate(0)
            f.write(data)

    save(final, len(messages))
    want = [{k: v for k, v in e.items() if k != "provenance"} for e in expected(final)]
    save(target, 2)
    f = FollowProc(target)
    try:
        f.wait_lines(3)  # session_meta, its companion event, the first message
        for n in (4, len(messages)):
            save(target, n)
            f.wait_quiet(0.3)
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    got = [{k: v for k, v in e.items() if k != "provenance"} for e in f.events]
    assert got == want
    assert "following it again" not in f.stderr


def test_reappended_rows_after_a_restart_are_still_copies(tmp_path: Path) -> None:
    """The rows a Claude Code follower has seen are part of its saved state: a second
    compaction re-appending them after a restart (another process, another string hash
    seed) adds nothing."""
    parent = FIXTURES / "claude-code" / "ccl" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    target = tmp_path / "session.jsonl"
    state = tmp_path / "state.json"
    lines = lines_of(parent)
    target.write_bytes(b"".join(lines))
    f1 = FollowProc(target, "--state", state, "--idle-exit", "0.5", env={"PYTHONHASHSEED": "1"})
    assert f1.wait_exit() == 0
    assert f1.events == expected(parent)
    append(target, lines[5:60])
    f2 = FollowProc(target, "--state", state, "--idle-exit", "0.5", env={"PYTHONHASHSEED": "2"})
    assert f2.wait_exit() == 0
    assert f2.events == []
