"""The worker pool every many-transcript command uses (``pipeline.processes``)."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from agentminutes.pipeline import processes


def _marked(folder: str, n: int) -> int:
    """Leave a file named *n* in *folder* (the item was read), and give *n* squared."""
    Path(folder, str(n)).touch()
    return n * n


def _fails_at_three(n: int) -> int:
    if n == 3:
        raise ValueError("three")
    return n


@pytest.fixture
def one_item_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "TASK_BYTES", 1)


@pytest.mark.usefixtures("one_item_tasks")
def test_results_come_back_in_the_items_order(tmp_path: Path) -> None:
    items = list(range(40))
    # Sizes that cut tasks of several lengths: the order must not depend on them.
    sizes = [1 + (i % 3) for i in items]
    got = list(processes.in_order(processes_work(tmp_path), items, sizes, 2))
    assert got == [i * i for i in items]
    assert sorted(int(p.name) for p in tmp_path.iterdir()) == items
    assert multiprocessing.active_children() == []


@pytest.mark.usefixtures("one_item_tasks")
def test_closing_early_cancels_what_no_worker_took_and_leaves_no_worker(tmp_path: Path) -> None:
    items = list(range(200))
    read = processes.in_order(processes_work(tmp_path), items, [1] * len(items), 2)
    assert next(read) == 0
    read.close()
    assert multiprocessing.active_children() == []
    done = sorted(int(p.name) for p in tmp_path.iterdir())
    # One result taken, at most two tasks per worker in flight: nothing past the fifth item.
    assert done == list(range(len(done)))
    assert 1 <= len(done) <= 5


@pytest.mark.usefixtures("one_item_tasks")
def test_an_error_comes_at_its_item_after_the_results_before_it() -> None:
    read = processes.in_order(_fails_at_three, list(range(50)), [1] * 50, 2)
    got = [next(read), next(read), next(read)]
    with pytest.raises(ValueError, match="three"):
        next(read)
    assert got == [0, 1, 2]
    assert multiprocessing.active_children() == []


def test_workers_are_forked_only_from_a_process_with_one_thread() -> None:
    code = (
        "from agentminutes.pipeline.processes import worker_context as w\n"
        "import threading\n"
        "print(w().get_start_method(), w(fork=False).get_start_method())\n"
        "stop = threading.Event()\n"
        "threading.Thread(target=stop.wait).start()\n"
        "print(w().get_start_method())\n"
        "stop.set()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    server = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    assert out == ["fork", server, server]


def test_it_pays_only_for_several_items_jobs_and_enough_bytes() -> None:
    enough = processes.PARALLEL_BYTES
    assert processes.pays(2, [enough // 2, enough // 2])
    assert not processes.pays(1, [enough, enough])
    assert not processes.pays(2, [enough * 2])
    assert not processes.pays(2, [enough // 2, enough // 2 - 1])


def test_tasks_are_consecutive_runs_of_at_most_task_bytes() -> None:
    mb = 1 << 20
    sizes = [3 * mb, 3 * mb, 3 * mb, 20 * mb, mb, mb]
    tasks = processes._tasks(sizes)
    assert [list(t) for t in tasks] == [[0, 1], [2], [3], [4, 5]]


def processes_work(folder: Path) -> partial[int]:
    """The picklable work of these tests: mark the item read, square it."""
    return partial(_marked, str(folder))
