"""How long the library blocks the event loop, and how fast a cancelled follow returns.

Runs an experiment runner under asyncio and trio: AGENTS agents write real
transcripts (the fixtures tests/test_embedding.py uses) line by line, split,
with random pauses, into one folder followed through ``follow_many``; the
runner says ``done()`` as each exits (by session id for one), then ``stop()``.
Meanwhile it calls ``parse``, ``events``, ``locate``, ``scan`` and
``archive`` (a real Claude Code home under a temporary HOME).

Every step the event loop runs is timed — asyncio: each callback
(``Handle._run``); trio: each task step (an ``Instrument``) — in wall time
and in the loop thread's CPU time (wall time also counts waiting for the GIL
while a worker thread parses). Then a follow is cancelled mid-stream ROUNDS
times and the time from ``cancel()`` to the runner's return is taken.

    .venv/bin/python scripts/loop_block.py [--rounds 5]

Prints one line per backend: the largest step (wall, CPU), the 99th
percentile, and the slowest cancellation.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import agentminutes  # noqa: E402
from test_embedding import (  # noqa: E402
    AGENTS,
    ENDED_BY_STOP,
    WITH_SUBAGENTS,
    WITH_SUBAGENTS_ID,
    _agent,
    _plan,
)


class Steps:
    """The duration of every step the loop ran: wall and loop-thread CPU (s)."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.on = False
        self.worst: list[tuple[float, str]] = []

    def add(self, wall: float, cpu: float, what: object = None) -> None:
        if self.on:
            self.wall.append(wall)
            self.cpu.append(cpu)
            if cpu > 0.001:
                self.worst.append((cpu, str(what)[:160]))


#: Where asyncio's callbacks are timed into (the one run measured now).
_CURRENT: list[Steps] = []


def _time_asyncio() -> None:
    handle_run = asyncio.events.Handle._run

    def timed(self: asyncio.events.Handle) -> None:
        w, c = time.perf_counter(), time.thread_time()
        try:
            handle_run(self)
        finally:
            if _CURRENT:
                _CURRENT[0].add(time.perf_counter() - w, time.thread_time() - c, self)

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]


def _trio_instrument(steps: Steps) -> object:
    import trio

    class Timer(trio.abc.Instrument):
        def __init__(self) -> None:
            self.at = (0.0, 0.0)

        def before_task_step(self, task: object) -> None:
            self.at = (time.perf_counter(), time.thread_time())

        def after_task_step(self, task: object) -> None:
            w, c = self.at
            steps.add(time.perf_counter() - w, time.thread_time() - c, task)

    return Timer()


async def _runner(run: Path, home: Path, archive_to: Path) -> int:
    run.mkdir()  # noqa: ASYNC240 (set-up, before anything is measured)
    plan = _plan(run)
    following = agentminutes.follow_many([run], on_error=lambda _e: None)
    env = {"HOME": str(home)}
    received = 0

    async def agent(n: int) -> None:
        await _agent(plan[n], seed=n)
        if n in ENDED_BY_STOP:
            return
        following.done(WITH_SUBAGENTS_ID if AGENTS[n] == WITH_SUBAGENTS else plan[n][0][1])

    async def others() -> None:
        await agentminutes.parse(AGENTS[6])
        async for _ in agentminutes.events(AGENTS[11]):
            pass
        sid = "8aa54c1d-5030-4491-be42-e0c416424b8a"
        await agentminutes.locate("claude-code", sid, env=env)
        async for _ in agentminutes.scan("claude-code", env=env):
            pass
        await agentminutes.archive(archive_to, harness="claude-code", session_id=sid, env=env)

    async with following, anyio.create_task_group() as outer:

        async def agents() -> None:
            async with anyio.create_task_group() as tg:
                for n in range(len(AGENTS)):
                    tg.start_soon(agent, n)
                tg.start_soon(others)
            following.stop()

        outer.start_soon(agents)
        async for _ in following:
            received += 1
    return received


async def _cancelled(run: Path) -> float:
    run.mkdir()  # noqa: ASYNC240 (set-up, before anything is measured)
    plan = _plan(run)
    received = 0
    t0 = 0.0
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
    return time.perf_counter() - t0


def _home(base: Path) -> Path:
    """A HOME whose Claude Code folder holds the session with subagents."""
    home = base / "home"
    project = home / ".claude" / "projects" / "-tmp-project"
    project.mkdir(parents=True)
    shutil.copy(WITH_SUBAGENTS, project / WITH_SUBAGENTS.name)
    shutil.copytree(WITH_SUBAGENTS.with_suffix(""), project / WITH_SUBAGENTS.stem)
    return home


def measure(backend: str, rounds: int) -> str:
    steps = Steps()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = _home(base)

        async def main() -> int:
            steps.on = True
            try:
                return await _runner(base / "run", home, base / "archive")
            finally:
                steps.on = False

        options = {"instruments": [_trio_instrument(steps)]} if backend == "trio" else {}
        _CURRENT[:] = [steps] if backend == "asyncio" else []
        events = anyio.run(main, backend=backend, backend_options=options)
        cancels = [
            anyio.run(_cancelled, base / f"cancel-{i}", backend=backend) for i in range(rounds)
        ]
    if os.environ.get("LOOP_BLOCK_WORST"):
        for cpu_s, what in sorted(steps.worst)[-8:]:
            print(f"  {cpu_s * 1000:.2f} ms  {what}")
    wall = sorted(steps.wall)
    cpu = sorted(steps.cpu)
    p99 = wall[int(len(wall) * 0.99)]
    return (
        f"{backend}: {events} events, {len(wall)} loop steps; largest step "
        f"{wall[-1] * 1000:.2f} ms wall, {cpu[-1] * 1000:.2f} ms loop CPU; p99 "
        f"{p99 * 1000:.2f} ms; cancel returned in at most {max(cancels) * 1000:.1f} ms "
        f"({rounds} rounds)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    _time_asyncio()
    for backend in ("asyncio", "trio"):
        print(measure(backend, args.rounds), flush=True)


if __name__ == "__main__":
    main()
