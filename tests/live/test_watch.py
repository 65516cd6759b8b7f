"""The watcher: inotify on real folders, the thread notifier, polling and its reasons."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import anyio
import pytest

from agentminutes.live.inotify import InotifyTree, inotify_available
from agentminutes.live.watch import Changes, Watcher, _ThreadedNotify, notify_unavailable_reason
from follow_helpers import HANG_S

pytestmark = pytest.mark.skipif(not inotify_available(), reason="inotify is Linux-only")


def _inotify_fds() -> int:
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify":
                n += 1
        except OSError:
            pass
    return n


def _wait_for(watcher: Watcher, want: str, timeout: float = 5.0) -> Changes:
    """Wait until *want* is among the changed paths; every change seen on the way."""

    async def main() -> Changes:
        seen = Changes()
        with anyio.fail_after(timeout):
            while want not in seen.paths:
                got = await watcher.wait(timeout)
                seen.paths |= got.paths
                seen.dirs |= got.dirs
                seen.everything |= got.everything
        return seen

    return anyio.run(main)


def test_a_change_is_reported_at_once_and_idle_costs_nothing(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"")
    threads = threading.active_count()
    watcher = Watcher([(str(tmp_path), True)])
    try:
        assert watcher.mode == "notify"

        async def idle_then_write() -> tuple[Changes, float]:
            t0 = time.process_time()
            quiet = await watcher.wait(0.3)  # nothing happens: a timeout, no busy loop
            cpu = time.process_time() - t0
            assert quiet.paths == set()

            async def write() -> None:
                await anyio.sleep(0.05)
                fd = os.open(p, os.O_WRONLY | os.O_APPEND)
                os.write(fd, b"x\n")
                os.close(fd)

            async with anyio.create_task_group() as tg:
                tg.start_soon(write)
                # A wait that ends on a timeout reports no path: the change ended this one.
                changed = await watcher.wait(HANG_S)
            return changed, cpu

        changed, cpu = anyio.run(idle_then_write)
        assert changed.paths == {str(p)}
        assert cpu < 0.05
        assert threading.active_count() == threads  # inotify needs no thread
    finally:
        watcher.close()
    assert _inotify_fds() == 0


def test_a_new_folder_is_watched_and_reported_for_a_scan(tmp_path: Path) -> None:
    watcher = Watcher([(str(tmp_path), True)])
    try:
        sub = tmp_path / "session" / "subagents"
        sub.mkdir(parents=True)
        (sub / "agent-1.jsonl").write_bytes(b"{}\n")  # possibly before the folder's watch
        seen = _wait_for(watcher, str(tmp_path / "session"))
        assert str(tmp_path / "session") in seen.dirs  # the follower scans it
        later = sub / "agent-2.jsonl"
        later.write_bytes(b"{}\n")  # after: the new folder's own watch reports it
        assert str(later) in _wait_for(watcher, str(later)).paths
    finally:
        watcher.close()


def test_a_missing_root_is_waited_for_without_polling(tmp_path: Path) -> None:
    root = tmp_path / "config" / "claude" / "projects"
    notices: list[str] = []
    watcher = Watcher([(str(root), True)], notice=notices.append)
    try:
        assert watcher.mode == "notify"  # no polling for a folder that is not there yet
        root.mkdir(parents=True)
        seen = _wait_for(watcher, str(root))
        assert str(root) in seen.dirs
        f = root / "p" / "s.jsonl"
        f.parent.mkdir()
        _wait_for(watcher, str(f.parent))
        f.write_bytes(b"{}\n")
        assert str(f) in _wait_for(watcher, str(f)).paths
    finally:
        watcher.close()
    assert notices == []


def test_a_folder_moved_within_the_tree_is_still_watched(tmp_path: Path) -> None:
    tree = InotifyTree()
    try:
        (tmp_path / "a" / "deep").mkdir(parents=True)
        tree.add_root(str(tmp_path), recursive=True)
        os.rename(tmp_path / "a", tmp_path / "b")
        time.sleep(0.05)
        changes = tree.read()
        assert {str(tmp_path / "a"), str(tmp_path / "b")} <= changes.dirs
        assert str(tmp_path / "b" / "deep") in tree.watched()
        assert str(tmp_path / "a" / "deep") not in tree.watched()
        (tmp_path / "b" / "deep" / "x.jsonl").write_bytes(b"1\n")
        time.sleep(0.05)
        assert str(tmp_path / "b" / "deep" / "x.jsonl") in tree.read().paths
    finally:
        tree.close()


def test_polling_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notices: list[str] = []
    watcher = Watcher([(str(tmp_path), True)], poll=True, notice=notices.append)
    assert watcher.mode == "poll"
    assert watcher.is_polled(str(tmp_path / "x" / "y.jsonl"))
    assert notices == []  # --poll was asked for: nothing to explain
    watcher.close()
    monkeypatch.setenv("WATCHFILES_FORCE_POLLING", "1")
    assert notify_unavailable_reason([str(tmp_path)]) == "WATCHFILES_FORCE_POLLING is set"
    other = tmp_path / "other"
    other.mkdir()
    watcher = Watcher([(str(tmp_path), True)], notice=notices.append)
    assert watcher.mode == "poll"
    assert notices == [f"{tmp_path}: WATCHFILES_FORCE_POLLING is set; polling it for changes"]
    watcher.close()


def test_interrupt_ends_the_wait_at_once(tmp_path: Path) -> None:
    watcher = Watcher([(str(tmp_path), True)])

    # Nothing changes in the folder: a wait that returns before the test's bound (far
    # below its own timeout) was ended by the interrupt.
    async def main() -> None:
        with anyio.fail_after(HANG_S):
            async with anyio.create_task_group() as tg:

                async def interrupt() -> None:
                    await anyio.sleep(0.05)
                    watcher.interrupt()

                tg.start_soon(interrupt)
                await watcher.wait(3600)
            await watcher.wait(3600)  # every later wait returns at once too

    try:
        anyio.run(main)
    finally:
        watcher.close()


def test_the_thread_notifier_reports_and_leaves_no_thread(tmp_path: Path) -> None:
    """Where inotify is missing (macOS, Windows), watchfiles' notifier runs on a thread."""
    notifier = _ThreadedNotify([(str(tmp_path), True)])
    try:

        async def main() -> set[str]:
            seen: set[str] = set()
            with anyio.fail_after(5):
                while str(tmp_path / "n.jsonl") not in seen:
                    await anyio.wait_readable(notifier.fd)
                    seen |= notifier.read().paths
            return seen

        async def write_later() -> set[str]:
            async with anyio.create_task_group() as tg:

                async def write() -> None:
                    await anyio.sleep(0.1)
                    (tmp_path / "n.jsonl").write_bytes(b"{}\n")

                tg.start_soon(write)
                return await main()

        assert str(tmp_path / "n.jsonl") in anyio.run(write_later)
    finally:
        t0 = time.monotonic()
        notifier.close()
        assert time.monotonic() - t0 < 0.5
    assert [t for t in threading.enumerate() if t.name == "agentminutes-notify"] == []
