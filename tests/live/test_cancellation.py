"""Cancelling a follow from inside its loop, on asyncio and on trio: milliseconds, nothing left.

No thread, no file descriptor (inotify, the transcript) and no async
generator may outlive the follow, and the event loop must not be held up.
"""

from __future__ import annotations

import gc
import os
import threading
import time
import warnings
from contextlib import aclosing, suppress
from pathlib import Path

import anyio
import pytest

import agentminutes
from agentminutes.live.follower import MAX_WAIT_S
from follow_helpers import HANG_S, SMALL, lines_of


def _fds() -> set[str]:
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        with suppress(OSError):
            out.add(os.readlink(f"/proc/self/fd/{fd}"))
    return out


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_cancelling_from_the_loop_body_is_prompt_and_clean(tmp_path: Path, backend: str) -> None:
    pytest.importorskip(backend)
    target = tmp_path / "session.jsonl"
    target.write_bytes(b"".join(lines_of(SMALL)[:5]))
    threads = threading.active_count()

    async def main() -> float:
        cancelled_at = 0.0
        with anyio.CancelScope() as scope:
            async with aclosing(agentminutes.follow(target)) as events:
                async for _ in events:
                    scope.cancel()  # from the loop body: what comes next is cancelled
                    cancelled_at = time.perf_counter()
        return time.perf_counter() - cancelled_at

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        took = anyio.run(main, backend=backend)
        gc.collect()
    # Not a speed check (scripts/loop_block.py measures that): the cancellation cut the
    # follow's wait short, which left alone ends only at its MAX_WAIT_S tick.
    assert took < MAX_WAIT_S
    assert threading.active_count() == threads
    assert not [fd for fd in _fds() if "inotify" in fd or fd == str(target)]
    assert not [w for w in caught if "generator" in str(w.message)], [
        str(w.message) for w in caught
    ]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_cancelling_a_waiting_follow_from_another_task(tmp_path: Path, backend: str) -> None:
    pytest.importorskip(backend)
    target = tmp_path / "later.jsonl"  # never written: the follow waits on the watch

    async def main() -> float:
        async with anyio.create_task_group() as tg:

            async def follow() -> None:
                async with aclosing(agentminutes.follow(target)) as events:
                    async for _ in events:
                        pass

            tg.start_soon(follow)
            with anyio.fail_after(HANG_S):  # it waits once its inotify watch is set
                while not [fd for fd in _fds() if "inotify" in fd]:  # noqa: ASYNC110 (polled: no event says so)
                    await anyio.sleep(0.01)
            t0 = time.perf_counter()
            tg.cancel_scope.cancel()
        return time.perf_counter() - t0

    assert anyio.run(main, backend=backend) < MAX_WAIT_S  # the wait was cut short
    assert not [fd for fd in _fds() if "inotify" in fd]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_folder_follow_cancelled_while_idle_leaves_no_thread(
    tmp_path: Path, backend: str
) -> None:
    """Cancelled just after it began waiting (its adapters loading in a thread meanwhile),
    a folder follow leaves no thread behind."""
    pytest.importorskip(backend)
    threads = threading.active_count()

    async def main() -> None:
        with anyio.move_on_after(0.05):
            async with aclosing(agentminutes.follow_many([tmp_path])) as batches:
                async for _ in batches:
                    pass

    anyio.run(main, backend=backend)
    assert threading.active_count() == threads
