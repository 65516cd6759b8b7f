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
import threading
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
        #: The largest step of a fake agent's task (its writes; its done() is timed apart).
        self.agents = 0.0
        #: The largest time one done() call took (loop CPU, s).
        self.done = 0.0

    def add(self, wall: float, cpu: float, what: object = None) -> None:
        if not self.on:
            return
        task = getattr(getattr(what, "_callback", None), "__self__", what)
        get_name = getattr(task, "get_name", None)
        name = get_name() if get_name is not None else str(getattr(task, "name", what))
        if "_agent" in name or "agent" in name.rsplit(".", 1)[-1]:
            self.agents = max(self.agents, cpu)  # the fake agents' own writes: not the library's
            return
        self.wall.append(wall)
        self.cpu.append(cpu)
        if cpu > 0.001:
            self.worst.append((cpu, name[:160]))


#: When the step running now began (0: none), for the sampler.
_STEP: list[float] = [0.0]
#: Stacks the sampler saw in steps running longer than 0.8 ms.
_SEEN: dict[str, int] = {}


def _sampler(stop: threading.Event) -> None:
    """Where the loop thread is when a step runs long (``LOOP_BLOCK_WHERE=1``)."""
    main = threading.main_thread().ident
    while not stop.wait(0.0002):
        began = _STEP[0]
        if not began or time.perf_counter() - began < 0.0008:
            continue
        frame = sys._current_frames().get(main or 0)
        stack = []
        while frame is not None and len(stack) < 12:
            code = frame.f_code
            stack.append(f"{os.path.basename(code.co_filename)}:{code.co_name}:{frame.f_lineno}")
            frame = frame.f_back
        key = " < ".join(stack)
        _SEEN[key] = _SEEN.get(key, 0) + 1


#: Where asyncio's callbacks are timed into (the one run measured now).
_CURRENT: list[Steps] = []
_TRIO: list[Steps] = []


def _time_asyncio() -> None:
    handle_run = asyncio.events.Handle._run

    def timed(self: asyncio.events.Handle) -> None:
        if threading.current_thread() is not threading.main_thread():
            handle_run(self)  # a loop of its own in a worker thread (archive's normalizing)
            return
        w, c = time.perf_counter(), time.thread_time()
        _STEP[0] = w
        try:
            handle_run(self)
        finally:
            _STEP[0] = 0.0
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
            _STEP[0] = self.at[0]

        def after_task_step(self, task: object) -> None:
            _STEP[0] = 0.0
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
        c = time.thread_time()
        following.done(WITH_SUBAGENTS_ID if AGENTS[n] == WITH_SUBAGENTS else plan[n][0][1])
        if _CURRENT or _TRIO:
            (_CURRENT or _TRIO)[0].done = max((_CURRENT or _TRIO)[0].done, time.thread_time() - c)

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


def _largest(steps: Steps) -> str:
    wall, cpu = sorted(steps.wall), sorted(steps.cpu)
    p99 = wall[int(len(wall) * 0.99)]
    if os.environ.get("LOOP_BLOCK_WORST"):
        for cpu_s, what in sorted(steps.worst)[-8:]:
            print(f"  {cpu_s * 1000:.2f} ms  {what}")
    return (
        f"{len(wall)} library steps, largest {wall[-1] * 1000:.2f} ms wall / "
        f"{cpu[-1] * 1000:.2f} ms loop CPU, p99 {p99 * 1000:.2f} ms wall; done() at most "
        f"{steps.done * 1000:.3f} ms CPU (agents' own steps up to {steps.agents * 1000:.2f} ms)"
    )


def measure(backend: str, rounds: int) -> str:
    """Two runs of the runner (the first also imports what the calls need), then the cancels."""
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = _home(base)
        for i in range(2):
            steps = Steps()

            async def main(i: int = i, steps: Steps = steps) -> int:
                steps.on = True
                try:
                    return await _runner(base / f"run{i}", home, base / f"archive{i}")
                finally:
                    steps.on = False

            options = {"instruments": [_trio_instrument(steps)]} if backend == "trio" else {}
            _CURRENT[:] = [steps] if backend == "asyncio" else []
            _TRIO[:] = [steps] if backend == "trio" else []
            events = anyio.run(main, backend=backend, backend_options=options)
            runs.append(f"{'first' if i == 0 else 'second'} run {events} events: {_largest(steps)}")
        cancels = [
            anyio.run(_cancelled, base / f"cancel-{i}", backend=backend) for i in range(rounds)
        ]
    return (
        f"{backend}: "
        + "; ".join(runs)
        + f"; cancel returned in at most {max(cancels) * 1000:.1f} ms ({rounds} rounds)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    _time_asyncio()
    stop = threading.Event()
    if os.environ.get("LOOP_BLOCK_WHERE"):
        threading.Thread(target=_sampler, args=(stop,), daemon=True).start()
    for backend in ("asyncio", "trio"):
        print(measure(backend, args.rounds), flush=True)
    stop.set()
    for key, n in sorted(_SEEN.items(), key=lambda kv: -kv[1])[:15]:
        print(n, key)


if __name__ == "__main__":
    main()
