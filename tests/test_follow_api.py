"""The library API: ``agentminutes.follow`` / ``follow_many`` inside asyncio and anyio programs."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections import Counter
from contextlib import aclosing
from pathlib import Path

import anyio
import msgspec

import agentminutes
from conftest import ROOT
from follow_helpers import MAIN, SMALL, SUBAGENT, expected, lines_of, wait_for

_enc = msgspec.json.Encoder()


def _plain(event: agentminutes.Event) -> dict:
    return json.loads(_enc.encode(event))


def _inotify_fds() -> int:
    """inotify instances this process has open (a leaked watcher would keep one)."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify":
                n += 1
        except OSError:
            pass
    return n


async def _write_slowly(path: Path, lines: list[bytes], done: anyio.Event | None = None) -> None:
    async with await anyio.open_file(path, "ab", buffering=0) as f:
        for line in lines:
            half = len(line) // 2
            await f.write(line[:half])
            await anyio.sleep(0.001)
            await f.write(line[half:])
    if done is not None:
        done.set()


def test_follow_in_asyncio_matches_convert(tmp_path: Path) -> None:
    target = tmp_path / "later.jsonl"  # does not exist yet

    async def main() -> list[dict]:
        done = anyio.Event()
        writer = asyncio.create_task(_write_slowly(target, lines_of(SMALL), done))
        got = [_plain(ev) async for ev in agentminutes.follow(target, stop=done)]
        await writer
        return got

    assert asyncio.run(main()) == expected(SMALL)
    wait_for(lambda: _inotify_fds() == 0, 5, "the watch to be released")


def test_cancelling_releases_the_watch(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    target.write_bytes(b"".join(lines_of(SMALL)[:5]))

    async def main() -> tuple[list[str], int]:
        kinds: list[str] = []
        with anyio.move_on_after(1.0):
            async for ev in agentminutes.follow(target):
                kinds.append(ev.kind)  # noqa: PERF401 (kept as they come: cancelled mid-way)
        return kinds, _inotify_fds()

    kinds, _ = anyio.run(main)
    assert kinds[:2] == ["session_meta", "user_message"]
    # the notifier's own thread closes its inotify descriptor as it winds down
    wait_for(lambda: _inotify_fds() == 0, 5, "the watch to be released")


def test_follow_many_folder_with_state_resumes_exactly_once(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    main_file = folder / "main.jsonl"
    sub_file = folder / "main" / "subagents" / "agent-x.jsonl"
    state = tmp_path / "state.json"
    main_lines = lines_of(MAIN)

    async def first_run() -> list[agentminutes.Envelope]:
        await _write_slowly(main_file, main_lines[:25])
        async with aclosing(agentminutes.follow_many([folder], state=state, idle_exit=0.5)) as it:
            return [env async for env in it]

    async def second_run() -> list[agentminutes.Envelope]:
        done = anyio.Event()

        async def writer() -> None:
            await _write_slowly(main_file, main_lines[25:])
            sub_file.parent.mkdir(parents=True)
            await _write_slowly(sub_file, lines_of(SUBAGENT))
            done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(writer)
            return [env async for env in agentminutes.follow_many([folder], state=state, stop=done)]

    one = anyio.run(first_run)
    two = anyio.run(second_run)
    by_file: dict[str, list[dict]] = {}
    for env in one + two:
        assert env.harness == "claude-code"
        by_file.setdefault(env.transcript, []).append(_plain(env.event))
    assert by_file[str(sub_file)] == expected(SUBAGENT)
    # idle_exit flushed the message of lines 23-24 (closed only at line 28): the second
    # run did not repeat it, so every event came once, that one a little early.
    got, want = by_file[str(main_file)], expected(MAIN)
    assert len(got) == len(want)
    assert sorted(map(_key, got)) == sorted(map(_key, want))
    flushed = one[-1].event
    assert flushed.kind == "assistant_message"
    assert flushed.provenance is not None
    assert (flushed.provenance.line, flushed.provenance.end_line) == (23, 24)


def _key(event: dict) -> str:
    return json.dumps(event, sort_keys=True)


def test_readme_experiment_runner_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"<!-- follow-example -->\n```python\n(.*?)```", readme, re.S)
    assert match, "README lost its follow example"
    script = match.group(1)
    proc = subprocess.run(
        [sys.executable, "-c", script, str(MAIN)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    want = expected(MAIN)
    calls = [e["tool_call"]["name"] for e in want if e["kind"] == "tool_call"]
    assert out[:-1] == [f"tool call: {name}" for name in calls]
    assert out[-1] == str(dict(Counter(e["kind"] for e in want)))


def test_public_exports() -> None:
    assert agentminutes.follow is agentminutes.api.follow
    assert agentminutes.Envelope.__name__ == "Envelope"
    assert {"follow", "follow_many", "Envelope"} <= set(dir(agentminutes))
