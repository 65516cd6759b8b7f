"""One thread of our own that runs blocking steps while the event loop waits, on any backend.

A follow reads, parses and scans in bounded steps; :class:`StepThread` runs
each on a thread it owns and wakes the loop through a socket pair (what
:func:`anyio.wait_readable` waits on under asyncio and trio alike). Unlike a
worker pool, whose idle threads outlive the call, the thread ends when
:meth:`StepThread.close` is called, so a follow that ended or was cancelled
leaves no thread behind. A step is never abandoned: when the waiting task is
cancelled, the wait goes on (shielded) until the step under way returns —
steps are short (one chunk read and parsed) — so no thread is left working
on files the caller believes closed.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import socket

__all__ = ("StepCancelled", "StepThread", "cancel_point", "off_loop")

_T = TypeVar("_T")

#: The step thread the current thread is (unset elsewhere).
_current = threading.local()


class StepCancelled(Exception):
    """Raised at a :func:`cancel_point` of a step whose caller was cancelled."""


def cancel_point() -> None:
    """End the step under way here if its caller was cancelled (a no-op off a step thread).

    Long steps call it between chunks (:func:`~agentminutes.pipeline.sources.iter_chunks`
    does), so a cancelled caller gets its return within one chunk.
    """
    worker = getattr(_current, "worker", None)
    if worker is not None and worker.cancelled:
        raise StepCancelled


class StepThread:
    """Runs one step at a time on a thread of its own (started at the first step)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[Callable[[], Any] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._recv: socket.socket | None = None
        self._send: socket.socket | None = None
        self._outcome: tuple[bool, Any] = (True, None)
        #: The caller of the step under way was cancelled (read by :func:`cancel_point`).
        self.cancelled = False

    def _start(self) -> None:
        import socket  # here: a follow writes what is on disk before it loads the event loop

        self._recv, self._send = socket.socketpair()
        self._recv.setblocking(False)
        self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        send = self._send
        assert send is not None
        _current.worker = self
        while (job := self._jobs.get()) is not None:
            try:
                self._outcome = (True, job())
            except BaseException as exc:  # handed to the waiting task, raised there
                self._outcome = (False, exc)
            send.send(b"\0")

    async def run(
        self, step: Callable[[], _T], *, on_cancel: Callable[[], None] | None = None
    ) -> _T:
        """Run *step* on the thread and return what it returns (or raise what it raises).

        *on_cancel* is called when the waiting task is cancelled, before waiting
        for the step to end (a step that checks a flag ends sooner).
        """
        import anyio

        if self._thread is None:
            self._start()
        recv = self._recv
        assert recv is not None
        self._jobs.put(step)
        try:
            await anyio.wait_readable(recv)
        except BaseException:
            # Cancelled: the step is not abandoned; it ends by itself, soon (at its next
            # cancel point).
            self.cancelled = True
            if on_cancel is not None:
                on_cancel()
            with anyio.CancelScope(shield=True):
                await anyio.wait_readable(recv)
            recv.recv(1)
            self._outcome = (True, None)
            self.cancelled = False
            raise
        recv.recv(1)
        ok, value = self._outcome
        self._outcome = (True, None)
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    def close(self) -> None:
        """End the thread (idle between steps: it returns at once) and release the sockets."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._jobs.put(None)
            thread.join()
        for sock in (self._recv, self._send):
            if sock is not None:
                sock.close()
        self._recv = self._send = None


async def off_loop(step: Callable[[], _T], name: str = "agentminutes-step") -> _T:
    """Run *step* on a thread of its own that ends with the call (see :class:`StepThread`).

    Cancelled, the call returns once *step* reaches a :func:`cancel_point` (or ends).
    """
    worker = StepThread(name)
    try:
        return await worker.run(step)
    finally:
        worker.close()
