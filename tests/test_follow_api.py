"""The library API: ``agentminutes.follow`` / ``follow_many`` inside asyncio and anyio programs."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from contextlib import aclosing
from pathlib import Path

import anyio
import msgspec
import pytest

import agentminutes
from conftest import ROOT
from follow_helpers import HANG_S, MAIN, SMALL, SUBAGENT, expected, lines_of, wait_for

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
    # A plain file (a few bytes a write): closed by its with even when the writer is
    # cancelled, which anyio's AsyncFile at the anyio floor (4.10) leaves open.
    with path.open("ab", buffering=0) as f:
        for line in lines:
            half = len(line) // 2
            f.write(line[:half])
            await anyio.sleep(0.001)
            f.write(line[half:])
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
    readme = "".join(  # the README and the reference it points to (docs/)
        p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md"))]
    )
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


# -- what an experiment runner needs: errors, per-transcript done, env, torn lines, sinks ----

BACKENDS = ["asyncio", "trio"]
ROLLOUT = (
    ROOT
    / "fixtures/codex/nitta-dotfiles/rollout-2025-08-26T03-00-07-81037e80-2462-435b-bb4c-b4437eae0f88.jsonl"
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bad_line_in_one_transcript_is_told_and_the_others_go_on(
    tmp_path: Path, backend: str
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    good, bad = folder / "good.jsonl", folder / "bad.jsonl"
    bad_lines = lines_of(SMALL)
    bad.write_bytes(b"".join(bad_lines[:6]) + b'{"type": "user", "message": 17}\n')

    async def main(on_error: object) -> list[agentminutes.Envelope]:
        done = anyio.Event()

        async def writer() -> None:
            await _write_slowly(good, lines_of(MAIN), done)

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(writer)
                it = agentminutes.follow_many([folder], stop=done, on_error=on_error)  # type: ignore[arg-type]
                async with aclosing(it):
                    return [env async for env in it]
        except BaseExceptionGroup as group:  # the task group wraps what the loop raised
            raise group.exceptions[0] from None

    errors: list[agentminutes.AgentminutesError] = []
    got = anyio.run(main, errors.append, backend=backend)
    assert [_plain(e.event) for e in got if e.transcript == str(good)] == expected(MAIN)
    assert len(errors) == 1
    assert isinstance(errors[0], agentminutes.ParseError)
    assert errors[0].path == str(bad)
    assert errors[0].line == 7
    assert "claude-code" in str(errors[0])
    # the bad transcript's events before the bad line came, then nothing of it
    before = [e for e in got if e.transcript == str(bad)]
    assert before
    assert all(e.event.provenance.line < 7 for e in before)  # type: ignore[union-attr]
    assert len({e.id for e in before}) == len(before)  # not read again at the stop's rescan
    # without a hook the error ends the iteration, loudly
    with pytest.raises(agentminutes.ParseError, match="at line 7"):
        anyio.run(main, None, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_done_writes_one_agents_last_message_without_waiting_for_the_others(
    tmp_path: Path, backend: str
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    first, second = folder / "first.jsonl", folder / "second.jsonl"

    last = expected(SMALL)[-1]

    async def main() -> tuple[list[agentminutes.Envelope], dict[str, int], int]:
        all_done = anyio.Event()
        first_all_out = anyio.Event()
        ended: dict[str, int] = {}
        got: list[agentminutes.Envelope] = []
        # Positions in the stream, not times: what had come out when each thing happened.
        stream = agentminutes.follow_many(
            [folder], stop=all_done, on_done=lambda t: ended.setdefault(t, len(got))
        )
        finished_at = 0

        async def agent_one() -> None:
            nonlocal finished_at
            await _write_slowly(first, lines_of(SMALL))
            finished_at = len(got)
            assert stream.done(first)  # the runner saw this agent's process exit

        async def agent_two() -> None:
            await _write_slowly(second, lines_of(MAIN)[:20])
            # Still working until the first agent's last message is out: held until a stop,
            # it would never come, and the bound below ends the test.
            with anyio.fail_after(HANG_S):
                await first_all_out.wait()
            await _write_slowly(second, lines_of(MAIN)[20:])
            all_done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(agent_one)
            tg.start_soon(agent_two)
            async with aclosing(stream):
                async for env in stream:
                    got.append(env)
                    if env.transcript == str(first) and _plain(env.event) == last:
                        first_all_out.set()
        return got, ended, finished_at

    got, ended, finished_at = anyio.run(main, backend=backend)
    mine = [i for i, e in enumerate(got) if e.transcript == str(first)]
    assert [_plain(got[i].event) for i in mine] == expected(SMALL)
    # The held last message came after done(), while the other agent was still writing.
    assert mine[-1] >= finished_at
    assert [_plain(e.event) for e in got if e.transcript == str(second)] == expected(MAIN)
    others_end = max(i for i, e in enumerate(got) if e.transcript == str(second))
    assert others_end > mine[-1]
    assert finished_at <= ended[str(first)] <= others_end  # told before the other finished


@pytest.mark.parametrize("backend", BACKENDS)
def test_follow_many_takes_the_harness_folders_from_env(tmp_path: Path, backend: str) -> None:
    home = tmp_path / "codex-home"
    day = home / "sessions" / "2025" / "08" / "26"
    day.mkdir(parents=True)
    shutil.copyfile(ROLLOUT, day / ROLLOUT.name)

    async def main() -> list[agentminutes.Envelope]:
        it = agentminutes.follow_many(
            harness="codex", env={"CODEX_HOME": str(home), "HOME": str(tmp_path)}, idle_exit=0.5
        )
        async with aclosing(it):
            return [env async for env in it]

    got = anyio.run(main, backend=backend)
    assert {e.transcript for e in got} == {str(day / ROLLOUT.name)}
    assert [_plain(e.event) for e in got] == expected(ROLLOUT)
    assert got[0].session_id == got[0].event.session_meta.session_id != ""  # type: ignore[union-attr]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_torn_last_line_at_the_stop_is_reported(tmp_path: Path, backend: str) -> None:
    target = tmp_path / "session.jsonl"
    lines = lines_of(SMALL)
    target.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])  # the agent was cut off

    async def main(on_error: object) -> list[dict]:
        it = agentminutes.follow_many([target], idle_exit=0.4, on_error=on_error)  # type: ignore[arg-type]
        async with aclosing(it):
            return [_plain(e.event) async for e in it]

    complete = tmp_path / "complete.jsonl"
    complete.write_bytes(b"".join(lines[:-1]))
    errors: list[agentminutes.AgentminutesError] = []
    assert anyio.run(main, errors.append, backend=backend) == expected(complete)
    assert len(errors) == 1
    assert f"at line {len(lines)}" in str(errors[0])
    assert "40 bytes without a newline" in str(errors[0])
    assert str(target) in str(errors[0])
    with pytest.raises(agentminutes.ParseError, match="incomplete"):
        anyio.run(main, None, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_follow_to_a_file_records_what_it_delivered(tmp_path: Path, backend: str) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copyfile(SMALL, folder / "a.jsonl")
    out, state = tmp_path / "out.jsonl", tmp_path / "state.json"

    async def main() -> int:
        return await agentminutes.follow_to(f"file:{out}", [folder], state=state, idle_exit=0.4)

    n = anyio.run(main, backend=backend)
    envelopes = [json.loads(x) for x in out.read_bytes().splitlines()]
    assert n == len(envelopes) == len(expected(SMALL))
    assert [e["event"] for e in envelopes] == expected(SMALL)
    # a second run with the state delivers nothing again
    assert anyio.run(main, backend=backend) == 0


def test_follow_many_start_at_takes_over_where_a_reader_stopped(tmp_path: Path) -> None:
    """``start_at``: a transcript read up to an offset is followed from exactly there."""
    folder = tmp_path / "projects"
    folder.mkdir()
    lines = lines_of(MAIN)
    k = len(lines) // 2
    taken = folder / "taken.jsonl"  # a reader took its first k lines
    taken.write_bytes(b"".join(lines[:k]))
    offset = taken.stat().st_size
    fresh = folder / "fresh.jsonl"  # there at the start, not in start_at: from its start
    fresh.write_bytes(b"".join(lines_of(SMALL)))
    changed = folder / "changed.jsonl"  # shorter than what start_at says was read of it
    changed.write_bytes(b"".join(lines_of(SMALL)[:3]))
    restarts: list[str] = []

    async def main() -> dict[str, list[dict]]:
        got: dict[str, list[dict]] = {}

        async def grow() -> None:
            await anyio.sleep(0.5)
            await _write_slowly(taken, lines[k:])

        async with anyio.create_task_group() as tg:
            tg.start_soon(grow)
            following = agentminutes.follow_many(
                [folder],
                start_at={str(taken): offset, str(changed): 10**6},
                on_restart=restarts.append,
                idle_exit=1.5,
            )
            async with aclosing(following) as envelopes:
                async for env in envelopes:
                    got.setdefault(Path(env.transcript).name, []).append(_plain(env.event))
        return got

    got = anyio.run(main)

    def last_line(ev: dict) -> int:
        p = ev.get("provenance") or {}
        return p.get("end_line") or p.get("line") or 0

    want = [
        e for e in expected(MAIN) if e["kind"] == "session_meta" or last_line(e) > k
    ]  # a message begun before the offset and completed after it comes out whole
    assert got["taken.jsonl"] == want
    assert len(want) > 10
    assert got["fresh.jsonl"] == expected(SMALL)
    assert restarts == [str(changed)]
    assert got["changed.jsonl"] == expected(changed)


def test_follow_many_says_when_a_transcript_starts_over(tmp_path: Path) -> None:
    """``on_restart``: told after the old content's events, before the new content's."""
    target = tmp_path / "t.jsonl"
    lines = lines_of(SMALL)
    target.write_bytes(b"".join(lines))
    order: list[str] = []

    async def main() -> None:
        async def rewrite() -> None:
            await anyio.sleep(0.8)
            await anyio.Path(target).write_bytes(b"".join(lines[:4]))  # truncates, then writes

        async with anyio.create_task_group() as tg:
            tg.start_soon(rewrite)
            following = agentminutes.follow_many(
                [tmp_path], on_restart=lambda name: order.append("restart"), idle_exit=1.5
            )
            async with aclosing(following) as envelopes:
                async for env in envelopes:
                    order.append(_plain(env.event)["kind"])  # noqa: PERF401 (restarts go between)

    anyio.run(main)
    cut = order.index("restart")
    assert order.count("restart") == 1
    assert len(order[:cut]) == len(expected(SMALL))
    assert order[cut + 1 :] == [e["kind"] for e in expected(target)]
