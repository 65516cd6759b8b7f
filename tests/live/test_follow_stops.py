"""How ``follow`` stops: nothing found or held is lost, nothing can make it unstoppable.

Real follower processes, real files, real signals; every comparison is with
``convert --format jsonl`` of the same content.
"""

from __future__ import annotations

import fcntl
import json
import signal
import struct
import subprocess
import sys
import termios
import time
from collections import Counter
from pathlib import Path

from agentminutes.live.runner import STOP_GRACE_S
from follow_helpers import MAIN, SMALL, SUBAGENT, FollowProc, append, expected, lines_of, wait_for

#: fcntl's F_GETPIPE_SZ (Linux; named by Python's fcntl from 3.10 on some builds only).
F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)


def _unread(fd: int) -> int:
    """How many bytes wait in the pipe *fd* (FIONREAD)."""
    return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0])


def _waits_in_epoll(pid: int) -> bool:
    """Whether the process's main thread is waiting in epoll (its event loop's wait)."""
    return Path(f"/proc/{pid}/wchan").read_text() == "do_epoll_wait"


def _pending(pid: int, sig: int) -> bool:
    """Whether *sig* is sent to the process and not delivered yet."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("SigPnd:", "ShdPnd:")) and int(line.split()[1], 16) >> (sig - 1) & 1:
            return True
    return False


def _by_transcript(f: FollowProc) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for env in f.events:
        out.setdefault(env["transcript"], []).append(env["event"])
    return out


def test_a_transcript_completed_just_before_the_stop_is_delivered(tmp_path: Path) -> None:
    """The stop scans the folders once more: a file no notification was handled for is read."""
    root = tmp_path / "projects"
    (root / "p").mkdir(parents=True)
    first = root / "p" / "a.jsonl"
    first.write_bytes(b"".join(lines_of(SMALL)[:5]))
    for k in range(3):
        f = FollowProc(root)
        try:
            f.wait_lines(1)
            late = root / f"new{k}" / "b.jsonl"
            late.parent.mkdir()
            late.write_bytes(MAIN.read_bytes())  # in one write, right before the signal
            assert f.stop(signal.SIGINT) == 0
        finally:
            f.kill()
        assert _by_transcript(f)[str(late)] == expected(MAIN)


def test_a_second_sigint_still_writes_the_held_message(tmp_path: Path) -> None:
    """``timeout -s INT`` and impatient users send two: the held message comes out all the same."""
    target = tmp_path / "session.jsonl"
    want = expected(MAIN)
    for _ in range(3):
        target.write_bytes(b"")
        f = FollowProc(target)
        try:
            append(target, lines_of(MAIN))
            f.wait_lines(len(want) - 1)  # all but the held assistant message
            f.proc.send_signal(signal.SIGINT)
            f.proc.send_signal(signal.SIGINT)
            assert f.wait_exit() == 0, f.stderr
        finally:
            f.kill()
        assert f.events == want


def test_a_stalled_reader_cannot_make_the_follower_unstoppable(tmp_path: Path) -> None:
    """Nobody reads stdout (the pipe is full): a second signal ends it, saying what was left."""
    for k in range(10):  # far more output than a pipe holds
        (tmp_path / f"s{k}.jsonl").write_bytes(MAIN.read_bytes())
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentminutes", "follow", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        pipe = proc.stdout.fileno()
        capacity = fcntl.fcntl(pipe, F_GETPIPE_SZ)
        # It fills the pipe and waits for the reader (a pipe holds less than it has to write)
        # in its event loop, where each signal delivered counts.
        wait_for(
            lambda: _unread(pipe) == capacity and _waits_in_epoll(proc.pid),
            120,
            "the follower to fill its stdout pipe and wait",
        )
        assert proc.poll() is None
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        # Two signals pending at once are delivered as one: the second goes once the first is in.
        wait_for(lambda: not _pending(proc.pid, signal.SIGINT), 120, "the first SIGINT delivered")
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(120)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        assert proc.stderr is not None
        proc.stdout.close()
        err = proc.stderr.read().decode()
        proc.stderr.close()
    assert rc == 1
    # Not a speed check: a stop that only the first signal ended waits out its whole grace,
    # so ending sooner is the second signal's doing (it leaves HURRY_S).
    assert took < STOP_GRACE_S
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("Error: stdout: stopped before ")
    assert "bytes the reader did not take" in err


def test_the_state_exists_from_the_start_and_a_kill_repeats_at_most_a_batch(
    tmp_path: Path,
) -> None:
    target = tmp_path / "session.jsonl"
    state = tmp_path / "state.json"
    lines = lines_of(MAIN)
    target.write_bytes(b"".join(lines[:20]))
    runs = []
    f = FollowProc(target, "--state", state)
    runs.append(f)
    try:
        f.wait_lines(1)
        assert state.exists()  # a follower killed this early still resumes
        # lines arrive one at a time, each its own batch; the kill falls between two
        for line in lines[20:40]:
            append(target, [line], split=False)
            time.sleep(0.02)
        f.kill()  # SIGKILL
        append(target, lines[40:], split=False)
        g = FollowProc(target, "--state", state)
        runs.append(g)
        g.wait_lines(1)
        g.wait_quiet(0.5)
        assert g.stop(signal.SIGINT) == 0
    finally:
        for r in runs:
            r.kill()
    got = [json.loads(x) for r in runs for x in r.lines if x.endswith(b"\n")]
    want = expected(MAIN)
    repeated = Counter(map(json.dumps, got)) - Counter(map(json.dumps, want))
    assert not Counter(map(json.dumps, want)) - Counter(map(json.dumps, got))  # nothing lost
    assert sum(repeated.values()) <= 3  # at most the batch in flight


def test_a_partial_last_line_at_the_stop_is_reported(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    lines = lines_of(SMALL)
    target.write_bytes(b"".join(lines[:6]) + lines[6][:40])
    f = FollowProc(target, "--idle-exit", "0.5")
    assert f.wait_exit() == 0
    assert "stopped with a partial last line (40 bytes, line 7)" in f.stderr
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:6]))
    assert f.events == expected(cut)


def test_idle_exit_waits_for_every_transcript_of_a_folder(tmp_path: Path) -> None:
    root = tmp_path / "projects" / "p"
    root.mkdir(parents=True)
    (root / "a.jsonl").write_bytes(SMALL.read_bytes())
    sub = root / "a" / "subagents" / "agent-1.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_bytes(SUBAGENT.read_bytes())
    f = FollowProc(tmp_path / "projects", "--idle-exit", "0.5")
    assert f.wait_exit() == 0
    assert _by_transcript(f) == {
        str(root / "a.jsonl"): expected(SMALL),
        str(sub): expected(SUBAGENT),
    }


def test_a_file_replaced_just_before_the_stop_is_read(tmp_path: Path) -> None:
    """A transcript deleted and recreated (its notifications not handled yet) when the
    stop comes: the stop's last look finds the path naming another file, ends the old
    content and reads the new file, rather than ending as if it were removed."""
    import anyio
    import msgspec

    from agentminutes.live.follower import make_follower, resolve_targets

    root = tmp_path / "projects"
    (root / "p").mkdir(parents=True)
    replaced = root / "p" / "a.jsonl"
    replaced.write_bytes(SMALL.read_bytes())
    growing = root / "p" / "b.jsonl"
    main = lines_of(MAIN)
    growing.write_bytes(b"".join(main[:10]))
    follower, _ = make_follower(resolve_targets([root], "auto"))
    enc = msgspec.json.Encoder()
    got: dict[str, list[dict]] = {}
    appended = anyio.Event()

    async def grow() -> None:
        await anyio.sleep(0.5)
        append(growing, main[10:11], split=False)
        appended.set()

    async def consume() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(grow)
            async for batch in follower.batches():
                if batch.mark is None:
                    continue
                events = [json.loads(enc.encode(e)) for e in batch.events]
                got.setdefault(batch.mark.transcript, []).extend(events)
                if appended.is_set() and not follower.stopping:
                    # Between two batches: no notification of this was taken yet.
                    replaced.unlink()
                    replaced.write_bytes(SUBAGENT.read_bytes())
                    follower.stop()

    anyio.run(consume)
    assert follower.stopping
    assert got[str(replaced)] == expected(SMALL) + expected(SUBAGENT)
    before = tmp_path / "b.jsonl"
    before.write_bytes(b"".join(main[:11]))
    assert got[str(growing)] == expected(before)
