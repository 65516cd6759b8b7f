"""The one path every transcript takes: source → adapter → stages → sink.

Events travel in :class:`Batch` objects, one per chunk of source lines, so
the async machinery costs an ``await`` per batch, never per line or event.
A batch carries a ``mark``: the source position its events complete. Sinks
report the marks of batches they have durably taken, which is what a
follower checkpoints.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Final, cast

from agentminutes.errors import ParseError, SourceError, UsageError
from agentminutes.harness import Adapter, ParseOptions, adapter_class, detect, is_document_adapter
from agentminutes.pipeline.batch import Batch
from agentminutes.pipeline.sources import LineBatch, LineSplitter, aiter_chunks, iter_chunks
from agentminutes.schema import Event

__all__ = (
    "Conversion",
    "feed_lines",
    "open_chunks",
    "open_sync_chunks",
    "source_name",
)

_BOM: Final = b"\xef\xbb\xbf"


def feed_lines(adapter: Adapter, lines: LineBatch) -> list[Event]:
    """Feed a batch of raw lines to *adapter*; return the events they complete.

    Surrounding whitespace (CRLF included) is trimmed, a UTF-8 byte-order mark
    on line 1 is tolerated, and blank lines are passed over: they carry no
    record, so they count toward line numbers only.
    """
    out: list[Event] = []
    extend = out.extend
    feed = adapter.feed
    try:
        for lineno, raw in lines:
            line = raw.strip()
            if lineno == 1 and line.startswith(_BOM):
                line = line[3:].strip()
            if line:
                extend(feed(line, lineno))
    except ParseError as exc:
        exc.partial = out
        raise
    return out


#: Most events one batch of end-of-input events holds (an adapter that must see the
#: whole file, such as Antigravity's step sort, emits everything at the end).
FINAL_BATCH_EVENTS: Final = 4096


def _final_batches(events: list[Event], adapter: Adapter) -> Iterator[list[Event]]:
    """The events of the last lines and of ``adapter.finish()``, in bounded batches.

    An adapter that releases a whole transcript at the end offers ``drain()``,
    ``finish()`` as a lazy iterator; taking it a batch at a time keeps memory
    bounded.
    """
    drain: Callable[[], Iterable[Event]] = getattr(adapter, "drain", adapter.finish)
    for ev in drain():
        events.append(ev)
        if len(events) >= FINAL_BATCH_EVENTS:
            yield events
            events = []
    yield events


@dataclass
class Conversion:
    """One transcript on its way through an adapter.

    Build it with :meth:`from_path`; iterate :meth:`batches` (async) or
    :meth:`iter_events` (sync). After the first batch, ``adapter`` is the
    adapter in use and ``confidence`` how sure detection was.
    """

    name: str
    harness: str = "auto"
    options: ParseOptions = field(default_factory=ParseOptions)
    on_skip: Callable[[int, str], None] | None = None
    adapter: Adapter | None = None
    #: The regular file being read, if it is one: an adapter that sorts the whole
    #: file first (``is_presorted``) may then be proven unneeded to, by a first read.
    path: str | None = None

    def _start(self, head: bytes) -> Adapter:
        if not head:
            raise SourceError(f"{self.name}: empty input, not a transcript")
        if self.harness in ("", "auto"):
            try:
                found, _ = detect(head)
            except Exception as exc:
                raise type(exc)(f"{self.name}: {exc}") from None
            if is_document_adapter(found):
                raise UsageError(
                    f"{self.name}: a {found.name} document, which the line pipeline cannot read"
                    " (the library's and CLI's entry points route documents themselves)"
                )
            cls = cast("type[Adapter]", found)
        else:
            cls = adapter_class(self.harness)
        presorted = getattr(cls, "is_presorted", None)
        if (
            presorted is not None
            and self.path is not None
            and not self.options.live
            and _is_presorted(presorted, self.path, self.options)
        ):
            self.options = dataclasses.replace(self.options, presorted=True)
        self.adapter = cls(self.options, on_skip=self.on_skip)
        return self.adapter

    def _error(self, exc: ParseError) -> ParseError:
        return exc.with_path(self.name)

    async def batches(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[Batch]:
        """Parse *chunks* (the transcript's bytes) into batches of events."""
        splitter = LineSplitter()
        adapter: Adapter | None = None
        try:
            async for chunk in chunks:
                if adapter is None:
                    adapter = self._start(chunk)
                lines = splitter.push(chunk)
                if lines:
                    yield Batch(feed_lines(adapter, lines), splitter.lineno)
            if adapter is None:
                adapter = self._start(b"")
            tail = splitter.flush()
            for events in _final_batches(feed_lines(adapter, tail) if tail else [], adapter):
                yield Batch(events, splitter.lineno)
        except ParseError as exc:
            error = self._error(exc)
            if exc.partial:
                # What the lines before the failing one completed is delivered
                # first, as a streaming reader of the transcript would see it.
                yield Batch(exc.partial, None)
            raise error from None

    def iter_batches(self, chunks: Iterable[bytes]) -> Iterator[Batch]:
        """Synchronous twin of :meth:`batches`."""
        splitter = LineSplitter()
        adapter: Adapter | None = None
        try:
            for chunk in chunks:
                if adapter is None:
                    adapter = self._start(chunk)
                lines = splitter.push(chunk)
                if lines:
                    yield Batch(feed_lines(adapter, lines), splitter.lineno)
            if adapter is None:
                adapter = self._start(b"")
            tail = splitter.flush()
            for events in _final_batches(feed_lines(adapter, tail) if tail else [], adapter):
                yield Batch(events, splitter.lineno)
        except ParseError as exc:
            error = self._error(exc)
            if exc.partial:
                # What the lines before the failing one completed is delivered
                # first, as a streaming reader of the transcript would see it.
                yield Batch(exc.partial, None)
            raise error from None

    def iter_events(self, chunks: Iterable[bytes]) -> Iterator[Event]:
        """Synchronous twin of :meth:`batches`, flattened to events."""
        for batch in self.iter_batches(chunks):
            yield from batch.events

    @property
    def skipped(self) -> dict[str, int]:
        """Skipped native records so far, by native record type."""
        return self.adapter.skipped if self.adapter is not None else {}


def _is_presorted(
    check: Callable[[Iterable[bytes], ParseOptions], bool], path: str, options: ParseOptions
) -> bool:
    """Run an adapter's ``is_presorted`` over a regular file's lines; ``False`` otherwise.

    Only a regular file is read twice: stdin, a FIFO or a device cannot be read
    again (and opening a FIFO would wait for a writer), and a read error leaves
    the adapter to sort, as it would without the check.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            return check(_lines(f), options)
    except OSError:
        return False


def _lines(f: IO[bytes]) -> Iterator[bytes]:
    splitter = LineSplitter()
    for chunk in iter_chunks(f):
        for _, line in splitter.push(chunk):
            yield line
    for _, line in splitter.flush():
        yield line


def source_name(source: str | os.PathLike[str]) -> str:
    """How errors name a source: its path, or ``<stdin>``."""
    return "<stdin>" if source == "-" else os.fspath(source)


def open_chunks(source: str | os.PathLike[str], head: bytes = b"") -> AsyncIterator[bytes]:
    """The async chunk source for a path or ``"-"``.

    *head* is stdin's first bytes where routing already read them (see
    :func:`agentminutes.pipeline.documents.route`); they are yielded first.
    """
    if not head:
        return aiter_chunks(source)
    return _prefixed(head, aiter_chunks(source))


async def _prefixed(head: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield head
    async for chunk in rest:
        yield chunk


def open_sync_chunks(path: str | os.PathLike[str]) -> Iterator[bytes]:
    """The sync chunk source for a path."""
    from agentminutes.pipeline.sources import open_error

    target = os.fspath(path)
    err = open_error(target)
    if err is not None:
        raise err
    with open(target, "rb") as f:
        yield from iter_chunks(f)
