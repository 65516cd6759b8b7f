"""Many transcripts read by worker processes, their results handed back in order.

Commands that read many transcripts (``stats`` over a list, ``sessions``,
``archive``) spend nearly all their time decoding, one core at a time. Above
a size where it pays (:data:`PARALLEL_BYTES`: a worker process starts in about
0.1 s, one core reads about 250 MB of transcripts a second), :func:`in_order`
runs a picklable function over the items in worker processes and yields its
results in the items' order, so what a command writes and reports is what one
process would write and report, in the same order. Items go to the workers in
tasks of at most :data:`TASK_BYTES` (small tasks keep every core busy to the
end), and at most two tasks per worker are in flight or waiting to be taken,
so the parent holds a bounded number of results whatever the list's length.

Workers are forked from this process when it runs no other thread, else from
a fork server that has imported *preload* once (``spawn`` where there is no
fork server); each result travels pickled. :func:`worker_context` makes that
choice for every command with worker processes (``export`` takes its workers
from a fork server always and hands out its own chunks, finished first
committed first), :func:`default_jobs` is their ``--jobs`` default.

Leaving early (an error, ``KeyboardInterrupt``, the caller closing the
iterator) cancels the tasks not yet taken and waits only for those running,
so no worker outlives the command and nothing a worker writes is cut short.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, Final, TypeVar

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

__all__ = (
    "PARALLEL_BYTES",
    "TASK_BYTES",
    "default_jobs",
    "file_bytes",
    "in_order",
    "pays",
    "worker_context",
)

_I = TypeVar("_I")
_R = TypeVar("_R")

#: Bytes to read below which worker processes cost more than they save.
PARALLEL_BYTES: Final = 48 << 20

#: Most bytes one worker's task reads.
TASK_BYTES: Final = 8 << 20


def default_jobs() -> int:
    """Worker processes by default: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def file_bytes(path: str) -> int:
    """The size of the file at *path*, 0 when it cannot be stat'ed (its reader says why)."""
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return 0


def pays(jobs: int, sizes: Sequence[int]) -> bool:
    """Whether *jobs* workers are worth starting for items of these sizes."""
    return jobs > 1 and len(sizes) > 1 and sum(sizes) >= PARALLEL_BYTES


def _tasks(sizes: Sequence[int]) -> list[range]:
    """The items cut into runs of consecutive indexes of at most :data:`TASK_BYTES` each."""
    tasks: list[range] = []
    start = size = 0
    for i, n in enumerate(sizes):
        if i > start and size + n > TASK_BYTES:
            tasks.append(range(start, i))
            start, size = i, 0
        size += n
    if start < len(sizes):
        tasks.append(range(start, len(sizes)))
    return tasks


def worker_context(preload: Sequence[str] = (), *, fork: bool = True) -> BaseContext:
    """How worker processes start: forked from this process where that is safe, else
    from a fork server that has imported *preload* once (``spawn`` where there is none).

    A forked worker starts with every module this process has imported (about
    5 ms, against 0.1–0.3 s for a fork server's first worker); forking while
    another thread runs could copy a lock that thread holds, so then, or when
    the caller says *fork* is not safe for it, a fork server starts them. The
    standard streams are flushed first: a forked worker holds nothing unwritten
    of this process's that it could write again.
    """
    import multiprocessing as mp
    import threading

    sys.stdout.flush()
    sys.stderr.flush()
    methods = mp.get_all_start_methods()
    if fork and "fork" in methods and threading.active_count() == 1:
        return mp.get_context("fork")
    method = "forkserver" if "forkserver" in methods else "spawn"
    ctx = mp.get_context(method)
    if method == "forkserver" and preload:
        ctx.set_forkserver_preload(list(preload))
    return ctx


def _run_task(work: Callable[[_I], _R], items: list[_I]) -> list[_R]:
    return [work(item) for item in items]


def in_order(
    work: Callable[[_I], _R],
    items: Sequence[_I],
    sizes: Sequence[int],
    jobs: int,
    *,
    preload: Sequence[str] = (),
    started: Callable[[], object] | None = None,
) -> Generator[_R, None, None]:
    """``work(item)`` for each of *items*, computed by *jobs* worker processes, in order.

    *work* must be picklable (a module-level function, or a ``functools.partial``
    of one); *sizes* are the items' bytes to read, which cut the tasks. An
    exception *work* raises is raised here, at its item, after the results
    before it. *started* is called once the first tasks are handed out (a forked
    pool has then started all its workers: a thread may run from then on). The
    pool is shut down when the iterator ends or is closed: tasks not taken are
    cancelled, running ones finished, every worker gone.
    """
    from concurrent.futures import Future, ProcessPoolExecutor

    tasks = _tasks(sizes)
    ctx = worker_context(preload)
    workers = max(1, min(jobs, len(tasks)))
    pending: deque[Future[list[_R]]] = deque()
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        waiting = iter(tasks)
        try:
            for task in waiting:
                pending.append(pool.submit(_run_task, work, [items[i] for i in task]))
                if len(pending) >= 2 * workers:
                    break
            if started is not None:
                started()
            while pending:
                results = pending.popleft().result()
                more = next(waiting, None)
                if more is not None:
                    pending.append(pool.submit(_run_task, work, [items[i] for i in more]))
                yield from results
        finally:
            for future in pending:
                future.cancel()
