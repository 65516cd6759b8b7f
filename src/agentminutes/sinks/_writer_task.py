"""A deferring sink's writer task: started as the sink is entered, cancelled as it is left.

The socket client and the OTLP exporter each take batches into a buffer that one task
delivers; both wake that task, and any ``send`` waiting for room, through one event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import anyio
    import anyio.abc


class WriterTask:
    """A sink whose :meth:`_writer` runs in a task group while the sink is entered."""

    _changed: anyio.Event
    _tg: anyio.abc.TaskGroup | None

    async def _writer(self) -> None:
        raise NotImplementedError

    def _poke(self) -> None:
        """Wake whoever waits on ``_changed``; the next wait is on a fresh event."""
        import anyio

        self._changed.set()
        self._changed = anyio.Event()

    async def _start_writer(self) -> None:
        """Start :meth:`_writer` in a task group of its own."""
        import anyio

        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._writer)

    async def _stop_writer(self) -> None:
        """Cancel the writer and wait until it has ended."""
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)
