"""When to look at the files again: file-change notification where it works, polling where not.

A :class:`Watcher` is given the folders a follower reads (each recursive or
not; they need not exist yet) and says, per wait, which paths changed. It
never says what the change was: the follower stats and reads, so correctness
comes from its stat + read loop, and a wake-up for a path that did not
change costs one ``stat``.

Per folder, it chooses:

* **notification** — on Linux an inotify descriptor the event loop waits on
  (:mod:`agentminutes.live.inotify`): no thread, no timer, nothing to do
  while nothing changes, and a change is seen as soon as the kernel reports
  it; elsewhere watchfiles' notifier on a thread of its own, which wakes the
  loop through a socket pair. A folder that does not exist yet is waited for
  (inotify watches its nearest existing ancestor; the thread notifier checks
  once a second).
* **polling** — where notification cannot see changes: ``--poll``,
  ``WATCHFILES_FORCE_POLLING``, WSL, network and FUSE filesystems (a remote
  writer raises no local event), or when a watch cannot be set (the inotify
  watch limit). Each time a folder is polled the reason goes to stderr once.
  The follower then stats the files under it on a timer
  (:data:`FAST_POLL_S` while they grow, backing off to :data:`SLOW_POLL_S`
  as they stay idle) and its folders once a second.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Final

from agentminutes.live.inotify import Changes, InotifyTree, inotify_available

if TYPE_CHECKING:
    import anyio

__all__ = (
    "FAST_POLL_S",
    "SLOW_POLL_S",
    "Changes",
    "Watcher",
    "notify_unavailable_reason",
)

#: Poll: the stat interval of a file that grew lately, and the longest, for one long idle (s).
FAST_POLL_S: Final = 0.01
SLOW_POLL_S: Final = 2.0
#: The watchfiles notifier's step (ms): how often its thread looks at its change set.
RUST_STEP_MS: Final = 10
#: How often a missing folder is looked for when no notification can tell (s).
MISSING_CHECK_S: Final = 1.0

_NETWORK_FS: Final = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre", "davfs"}
)


def notify_unavailable_reason(paths: Iterable[str]) -> str | None:
    """Why file notification would not see changes under *paths*, or ``None``.

    Forced polling (``WATCHFILES_FORCE_POLLING``, as watchfiles honours it),
    WSL, and network or FUSE filesystems, whose remote writers raise no events.
    """
    forced = os.environ.get("WATCHFILES_FORCE_POLLING", "")
    if forced and forced.lower() not in ("false", "disable", "disabled"):
        return "WATCHFILES_FORCE_POLLING is set"
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open("/proc/sys/kernel/osrelease") as f:
            if "microsoft" in f.read().lower():
                return "running under WSL"
        with open("/proc/self/mounts") as f:
            mounts = [line.split()[1:3] for line in f if len(line.split()) >= 3]
    except OSError:
        return None
    for path in paths:
        real = os.path.realpath(path)
        best, fstype = "", ""
        for point, kind in mounts:
            point = point.replace("\\040", " ")
            inside = real == point or real.startswith(point.rstrip("/") + "/")
            if inside and len(point) > len(best):
                best, fstype = point, kind
        if fstype in _NETWORK_FS or fstype.startswith("fuse."):
            return f"{path} is on a {fstype} filesystem"
    return None


class _Flag:
    """A thread-safe stop flag with the ``is_set`` the watchfiles notifier polls."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = False

    def is_set(self) -> bool:
        return self.value


class _ThreadedNotify:
    """watchfiles' notifier, for platforms without inotify: one thread per notifier.

    Each thread calls the notifier's ``watch`` in a loop and, when it reports
    changes, adds them to a shared set and writes a byte to a socket pair the
    event loop waits on. Closing sets the stop flag; the threads return within
    one step and are joined.
    """

    def __init__(self, roots: Sequence[tuple[str, bool]]) -> None:
        import socket
        import threading

        from watchfiles._rust_notify import RustNotify

        self._stop = _Flag()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._changes: set[str] = set()
        self._rsock, self._wsock = socket.socketpair()
        self._rsock.setblocking(False)
        self._wsock.setblocking(False)
        self.fd = self._rsock.fileno()
        for recursive in (True, False):
            paths = [p for p, r in roots if r is recursive]
            if not paths:
                continue
            # ignore_permission_denied=False: watchfiles would otherwise ignore *every*
            # error adding a watch (a vanished folder, a watch limit) and watch nothing.
            notify = RustNotify(paths, False, False, 300, recursive, False)
            thread = threading.Thread(
                target=self._run, args=(notify,), name="agentminutes-notify", daemon=True
            )
            self._threads.append(thread)
        for thread in self._threads:
            thread.start()

    def _run(self, notify: object) -> None:
        try:
            while not self._stop.value:
                result = notify.watch(0, RUST_STEP_MS, 0, self._stop)  # type: ignore[attr-defined]
                if isinstance(result, set):
                    with self._lock:
                        self._changes.update(path for _, path in result)
                    # a byte may be waiting already (or the pair is being closed)
                    with contextlib.suppress(OSError):
                        self._wsock.send(b"\0")
        except Exception:
            with self._lock:
                self._changes.add("")  # "" : the notifier failed; look at everything
            with contextlib.suppress(OSError):
                self._wsock.send(b"\0")
        finally:
            notify.close()  # type: ignore[attr-defined]

    def read(self) -> Changes:
        try:
            while self._rsock.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass
        with self._lock:
            paths, self._changes = self._changes, set()
        changes = Changes()
        if "" in paths:
            paths.discard("")
            changes.everything = True
        changes.paths = paths
        # The notifier does not say which paths are folders: those that are not files
        # now (folders, and paths gone) are handed over as folders to look at.
        changes.dirs = {p for p in paths if not os.path.isfile(p)}
        return changes

    def close(self) -> None:
        self._stop.value = True
        for thread in self._threads:
            thread.join(RUST_STEP_MS * 5 / 1000)
        self._rsock.close()
        self._wsock.close()


class Watcher:
    """Notification for the folders where it works, polling for the others.

    *roots* are ``(folder, recursive)``; *poll* polls them all. *notice*
    receives one line each time a folder is polled, saying why.
    """

    def __init__(
        self,
        roots: Sequence[tuple[str, bool]],
        *,
        poll: bool = False,
        notice: Callable[[str], None] | None = None,
    ) -> None:
        self._notice = notice or (lambda _m: None)
        self._roots = [(os.path.abspath(p), r) for p, r in dict.fromkeys(roots)]
        #: Folders polled (the follower stats what is under them on a timer), and why.
        self.polled: dict[str, str] = {}
        self._tree: InotifyTree | None = None
        self._threaded: _ThreadedNotify | None = None
        #: Folders the thread notifier waits to exist (it cannot watch what is missing).
        self._missing: list[tuple[str, bool]] = []
        self._missing_checked = 0.0
        self._interrupted = False
        self._woken = False
        self._scope: anyio.CancelScope | None = None
        self._pending = Changes()
        notified: list[tuple[str, bool]] = []
        for path, recursive in self._roots:
            reason = "--poll" if poll else notify_unavailable_reason([path])
            if reason is not None:
                self._poll(path, reason, quiet=poll)
            else:
                notified.append((path, recursive))
        if notified and inotify_available():
            try:
                self._tree = InotifyTree()
            except OSError as exc:
                for path, _ in notified:
                    self._poll(path, f"file notification is unavailable ({exc.strerror})")
                notified = []
            for path, recursive in notified:
                assert self._tree is not None
                try:
                    self._tree.add_root(path, recursive=recursive)
                except OSError as exc:
                    self._poll(path, _watch_failure(path, exc))
        elif notified:
            self._missing = notified
            self._start_threaded()

    # -- choosing ------------------------------------------------------------------

    def _poll(self, path: str, reason: str, *, quiet: bool = False) -> None:
        if path in self.polled:
            return
        self.polled[path] = reason
        if not quiet:
            self._notice(f"{path}: {reason}; polling it for changes")

    def _start_threaded(self) -> None:
        """(Re)start the thread notifier on the folders that exist now."""
        present = [(p, r) for p, r in self._missing if os.path.isdir(p)]
        if not present and self._threaded is not None:
            return
        if self._threaded is not None:
            self._threaded.close()
            self._threaded = None
        watched = [(p, r) for p, r in self._roots if (p, r) not in self._missing]
        watched += present
        self._missing = [m for m in self._missing if m not in present]
        if not watched:
            return
        try:
            self._threaded = _ThreadedNotify(watched)
        except Exception as exc:
            for path, _ in watched:
                self._poll(path, f"file notification is unavailable ({exc})")
            return
        # Whatever changed before the watch was in place raised no event.
        self._pending.everything = True

    @property
    def mode(self) -> str:
        """``notify`` (every folder notified), ``poll`` (every one polled) or ``mixed``."""
        if not self.polled:
            return "notify"
        return "poll" if len(self.polled) == len(self._roots) else "mixed"

    def is_polled(self, path: str) -> bool:
        """Whether *path* lies in a polled folder."""
        for folder in self.polled:
            if path == folder or path.startswith(folder.rstrip(os.sep) + os.sep):
                return True
        return False

    @property
    def rescan_interval(self) -> float | None:
        """How often to look at every folder anyway: the thread notifier drops overflows."""
        return 30.0 if self._threaded is not None else None

    # -- waiting ---------------------------------------------------------------------

    async def wait(
        self, max_wait: float, *, stop: anyio.Event | None = None, take: bool = True
    ) -> Changes:
        """Wait for a change, *max_wait* seconds, :meth:`interrupt`, :meth:`wake` or *stop*;
        what changed (nothing without *take*: the caller calls :meth:`take`, in a thread
        perhaps, as reading the notifications can add watches)."""
        import anyio

        if stop is not None and not self._interrupted and not stop.is_set():
            async with anyio.create_task_group() as tg:

                async def interrupt_on_stop() -> None:
                    await stop.wait()
                    self.interrupt()

                tg.start_soon(interrupt_on_stop)
                try:
                    return await self.wait(max_wait, take=take)
                finally:
                    tg.cancel_scope.cancel()
        woken, self._woken = self._woken, False
        if not self._interrupted and not woken and not self._has_pending():
            if self._missing:
                max_wait = min(max_wait, MISSING_CHECK_S)
            fd = self._fd()
            with anyio.move_on_after(max(0.0, max_wait)) as scope:
                self._scope = scope
                try:
                    if fd is None:
                        await anyio.sleep_forever()
                    else:
                        await anyio.wait_readable(fd)
                finally:
                    self._scope = None
        self._woken = False
        return self._take() if take else Changes()

    def take(self) -> Changes:
        """What changed since the last look, without waiting."""
        return self._take()

    def _fd(self) -> int | None:
        if self._tree is not None:
            return self._tree.fd
        if self._threaded is not None:
            return int(self._threaded.fd)
        return None

    def _has_pending(self) -> bool:
        p = self._pending
        return bool(p.paths or p.dirs or p.everything or p.failed)

    def _take(self) -> Changes:
        changes, self._pending = self._pending, Changes()
        if self._tree is not None:
            got = self._tree.read()
            changes.paths |= got.paths
            changes.dirs |= got.dirs
            changes.everything |= got.everything
            changes.failed.update(got.failed)
        elif self._threaded is not None:
            got = self._threaded.read()
            changes.paths |= got.paths
            changes.dirs |= got.dirs
            changes.everything |= got.everything
        if self._missing and time.monotonic() - self._missing_checked >= MISSING_CHECK_S:
            self._missing_checked = time.monotonic()
            if any(os.path.isdir(p) for p, _ in self._missing):
                self._start_threaded()
                changes.everything = True
        for path, reason in changes.failed.items():
            self._poll(path, reason)
        if changes.failed:
            changes.everything = True
        return changes

    def interrupt(self) -> None:
        """End the current and every later :meth:`wait` at once (the follower is stopping).

        Call it from the event loop's thread (a signal handler the loop runs, another task).
        """
        self._interrupted = True
        if self._scope is not None:
            self._scope.cancel()

    def wake(self) -> None:
        """End the current :meth:`wait`, or the next one at once (there is something to do)."""
        self._woken = True
        if self._scope is not None:
            self._scope.cancel()

    def close(self) -> None:
        """Release the descriptor, threads and watches."""
        if self._tree is not None:
            self._tree.close()
            self._tree = None
        if self._threaded is not None:
            self._threaded.close()
            self._threaded = None


def _watch_failure(path: str, exc: OSError) -> str:
    import errno

    if exc.errno == errno.ENOSPC:
        return (
            "cannot watch it: the inotify watch limit is reached "
            "(raise fs.inotify.max_user_watches)"
        )
    if exc.errno == errno.EMFILE:
        return (
            "cannot watch it: the inotify instance limit is reached "
            "(raise fs.inotify.max_user_instances)"
        )
    return f"cannot watch it ({exc.strerror or exc})"
