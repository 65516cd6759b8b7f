"""An experiment runner embedding the library, under asyncio and trio.

Twenty agents write real transcripts (fixtures of Claude Code, with
subagents, Codex and Copilot CLI) into one followed folder, line by line, each
line split in two writes, with random pauses. The runner follows them through
the public API (``follow_many`` with ``on_start``/``on_end``/``on_error``), says
``done()`` as each agent exits — by path, or by session id for the session
with subagents — and stops the follow once all have exited, so the last few
agents end by the stop. One transcript holds a line no rule accepts.
A second run is cancelled mid-stream: no thread, task or descriptor stays.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
import threading
import time
from pathlib import Path

import anyio
import msgspec
import pytest

import agentminutes
from agentminutes.live.follower import MAX_WAIT_S
from conftest import FIXTURES

BACKENDS = ["asyncio", "trio"]
_enc = msgspec.json.Encoder()

CC = FIXTURES / "claude-code"
CODEX = FIXTURES / "codex"
COPILOT = FIXTURES / "copilot" / "agent-sessions"
WITH_SUBAGENTS = CC / "claudeless" / "8aa54c1d-5030-4491-be42-e0c416424b8a.jsonl"
WITH_SUBAGENTS_ID = "8aa54c1d-5030-4491-be42-e0c416424b8a"
CORRUPT = CC / "ccl" / "256ba646-2c15-437a-98e9-4171aafd030e.jsonl"
#: One session each (distinct session ids): Claude Code, Codex, Copilot CLI.
AGENTS: list[Path] = [
    CC / "agentsessions" / "small.jsonl",
    CC / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl",
    CORRUPT,
    CC / "ccl" / "cron_tools.jsonl",
    CC / "ccl" / "hook_attachments.jsonl",
    WITH_SUBAGENTS,
    CC / "fasthooks-main.jsonl",
    CC / "ohcconfig" / "b21f5989-26ca-432d-9d08-9c11aebeb752.jsonl",
    CC / "profilesite" / "d45db2bf-d60b-4801-a95b-f5f61f4bda64.jsonl",
    CC / "profilesite-18cb2580.jsonl",
    CC / "riskbot" / "29485c9f-7c12-4f30-908c-61f27e81c6c3.head22.jsonl",
    CODEX / "agent-sessions" / "codex_small_0.146.0.jsonl",
    CODEX
    / "cabinet-gov"
    / "rollout-2026-04-30T11-12-25-019ddc5f-977f-7fd3-a392-a6477e6b25b2.jsonl",
    CODEX / "feipi" / "rollout-2026-06-19T12-32-38-019ede26-ff03-7a82-bb34-cfab716a498a.jsonl",
    CODEX
    / "nitta-dotfiles"
    / "rollout-2025-08-26T03-00-07-81037e80-2462-435b-bb4c-b4437eae0f88.jsonl",
    CODEX
    / "nitta-dotfiles"
    / "rollout-2025-09-19T01-23-04-4accfe1e-cc02-49e1-a13c-2318fb86a0b1.jsonl",
    CODEX
    / "nitta-dotfiles"
    / "rollout-2025-09-19T01-53-52-1d480e7c-6376-47af-8312-9a0cf1eef4a6.jsonl",
    COPILOT / "copilot_large.jsonl",
    COPILOT / "copilot_small_1.0.77.jsonl",
    COPILOT / "copilot_subdir_v1_events.jsonl",
]
#: The agents whose end the runner does not say: they end by the stop.
ENDED_BY_STOP = range(15, 20)
BAD_LINE = b'{"type": "user", "message": 17}\n'


def _files_of(source: Path) -> list[Path]:
    """An agent's transcripts: its own, and its subagents' (in ``<session>/subagents/``)."""
    subagents = source.with_suffix("") / "subagents"
    return [source, *sorted(subagents.glob("*.jsonl"))] if subagents.is_dir() else [source]


def _lines(source: Path) -> list[bytes]:
    lines = source.read_bytes().splitlines(keepends=True)
    if source == CORRUPT:
        lines.insert(len(lines) // 2, BAD_LINE)
    return lines


async def _agent(files: list[tuple[Path, Path]], seed: int) -> None:
    """Write each transcript's lines to its target, each line in two writes, pausing at random."""
    rng = random.Random(seed)
    queues = [(target, _lines(source)) for source, target in files]
    fds = {}
    try:
        for target, _ in queues:
            target.parent.mkdir(parents=True, exist_ok=True)
            fds[target] = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        while any(lines for _, lines in queues):
            target, lines = rng.choice([q for q in queues if q[1]])
            line = lines.pop(0)
            cut = rng.randrange(1, len(line)) if len(line) > 1 else 1
            os.write(fds[target], line[:cut])
            await anyio.sleep(rng.uniform(0, 0.004))
            os.write(fds[target], line[cut:])
            await anyio.sleep(rng.uniform(0, 0.004))
    finally:
        for fd in fds.values():
            os.close(fd)


def _plan(run: Path) -> list[list[tuple[Path, Path]]]:
    return [
        [
            (source, run / f"agent-{n:02d}" / source.relative_to(AGENTS[n].parent))
            for source in _files_of(AGENTS[n])
        ]
        for n in range(len(AGENTS))
    ]


def _plain(event: agentminutes.Event) -> dict:
    return json.loads(_enc.encode(event))


def _one_shot(source: Path) -> list[dict]:
    return [_plain(e) for e in agentminutes.iter_events(source)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_twenty_agents_followed_through_the_public_api(tmp_path: Path, backend: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    plan = _plan(run)
    log: list[tuple[str, str, object]] = []  # ("start" | "event" | "end", transcript, what)
    errors: list[agentminutes.AgentminutesError] = []

    async def runner() -> None:
        following = agentminutes.follow_many(
            [run],
            on_error=errors.append,
            on_start=lambda s: log.append(("start", s.transcript, s)),
            on_end=lambda e: log.append(("end", e.transcript, e)),
        )

        async def agent(n: int) -> None:
            await _agent(plan[n], seed=n)
            if n in ENDED_BY_STOP:
                return
            if AGENTS[n] == WITH_SUBAGENTS:
                assert following.done(WITH_SUBAGENTS_ID)  # the session, its subagents too
            else:
                assert following.done(plan[n][0][1])

        async with following, anyio.create_task_group() as outer:

            async def agents() -> None:
                async with anyio.create_task_group() as tg:
                    for n in range(len(AGENTS)):
                        tg.start_soon(agent, n)
                following.stop()  # every agent exited: the rest end by the stop

            outer.start_soon(agents)
            async for env in following:
                log.append(("event", env.transcript, env))  # noqa: PERF401 (in order with the hooks)

    anyio.run(runner, backend=backend)

    by_transcript: dict[str, list[dict]] = {}
    for kind, name, what in log:
        if kind == "event":
            assert isinstance(what, agentminutes.Envelope)
            by_transcript.setdefault(name, []).append(_plain(what.event))
    # Per transcript, the followed events are the one-shot parse's.
    for files in plan:
        for source, target in files:
            if source == CORRUPT:
                continue
            got, want = by_transcript.get(str(target), []), _one_shot(source)
            first = next(
                (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), None
            )
            assert got == want, (
                target,
                len(got),
                len(want),
                first,
                got[first or 0],
                want[first or 0],
            )
    # The corrupt transcript: exactly one error, naming its bad line; its events before it.
    corrupt = next(t for files in plan for s, t in files if s == CORRUPT)
    assert len(errors) == 1
    assert isinstance(errors[0], agentminutes.ParseError)
    assert errors[0].path == str(corrupt)
    bad_at = _lines(CORRUPT).index(BAD_LINE) + 1
    assert errors[0].line == bad_at
    got = by_transcript.get(str(corrupt), [])
    assert got
    assert all(e["provenance"]["line"] < bad_at for e in got if e.get("provenance"))
    # Each transcript started once before its first event, ended once after its last.
    every = [t for files in plan for _, t in files]
    for target in every:
        name = str(target)
        starts = [i for i, (k, t, _) in enumerate(log) if k == "start" and t == name]
        ends = [i for i, (k, t, _) in enumerate(log) if k == "end" and t == name]
        events = [i for i, (k, t, _) in enumerate(log) if k == "event" and t == name]
        assert len(starts) == 1, name
        assert len(ends) == 1, name
        assert starts[0] < events[0], name
        assert events[-1] < ends[0], name
    ends = {t: e for k, t, e in log if k == "end"}
    reasons = {}
    for n, files in enumerate(plan):
        for source, target in files:
            end = ends[str(target)]
            assert isinstance(end, agentminutes.Ended)
            reasons[source] = end.reason
            if source == CORRUPT:
                assert end.reason == "error"
                assert end.error is errors[0]
            elif n in ENDED_BY_STOP:
                assert end.reason == "stopped"
            else:
                assert end.reason == "done"
    # The session with subagents: the subagents ended before the session itself.
    session_ends = [t for k, t, e in log if k == "end" and e.session_id == WITH_SUBAGENTS_ID]  # type: ignore[union-attr]
    assert len(session_ends) == 3
    assert session_ends[-1].endswith(WITH_SUBAGENTS.name)


def _fds() -> dict[str, str]:
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            out[fd] = os.readlink(f"/proc/self/fd/{fd}")
    return out


def _library_threads() -> list[str]:
    """Threads that are the library's or run its code now."""
    ours = os.path.dirname(agentminutes.__file__)
    frames = sys._current_frames()
    found = []
    for thread in threading.enumerate():
        if thread is threading.main_thread():
            continue
        frame = frames.get(thread.ident or -1)
        stack = []
        while frame is not None:
            stack.append(frame.f_code.co_filename)
            frame = frame.f_back
        if thread.name.startswith("agentminutes") or any(f.startswith(ours) for f in stack):
            found.append(thread.name)
    return found


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancelling_the_runner_leaves_nothing(tmp_path: Path, backend: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    plan = _plan(run)
    threads_before = {t.ident for t in threading.enumerate()}

    async def main() -> tuple[float, int, dict[str, str], dict[str, str], list[str], int, int]:
        fds_before = _fds()
        tasks_before = len(anyio.get_running_tasks())
        received = 0
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                for n in range(len(AGENTS)):
                    tg.start_soon(_agent, plan[n], n)
                async with agentminutes.follow_many([run], on_error=lambda _e: None) as following:
                    async for _ in following:
                        received += 1
                        if received == 300:
                            t0 = time.perf_counter()
                            scope.cancel()
        took = time.perf_counter() - t0
        return (
            took,
            received,
            fds_before,
            _fds(),
            _library_threads(),
            tasks_before,
            len(anyio.get_running_tasks()),
        )

    took, received, fds_before, fds_after, threads, tasks_before, tasks_after = anyio.run(
        main, backend=backend
    )
    assert received >= 300
    # Not a speed check (scripts/loop_block.py measures the ≤ 100 ms): cut short, not
    # ended at the follow's own MAX_WAIT_S tick.
    assert took < MAX_WAIT_S
    assert fds_after == fds_before  # no transcript, watch or wake-up socket left open
    assert threads == []
    assert tasks_after == tasks_before
    assert {t.ident for t in threading.enumerate()} <= threads_before


@pytest.mark.parametrize("backend", BACKENDS)
def test_readme_runner_example_runs(backend: str) -> None:
    import re
    import subprocess

    from conftest import ROOT

    readme = "".join(  # the README and the reference it points to (docs/)
        p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md"))]
    )
    match = re.search(r"<!-- runner-example -->\n```python\n(.*?)```", readme, re.S)
    assert match, "README lost its runner example"
    sessions = [AGENTS[1], AGENTS[7], AGENTS[8]]  # named by their session ids
    proc = subprocess.run(
        [sys.executable, "-c", match.group(1), backend, *map(str, sessions)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # the library says nothing unasked
    lines = sorted(proc.stdout.splitlines())
    assert lines == sorted(f"done {p.stem} 1 copied" for p in sessions)
