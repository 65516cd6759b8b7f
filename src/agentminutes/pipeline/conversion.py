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
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, BinaryIO, Final, cast

from msgspec import Raw

from agentminutes.errors import ParseError, SourceError, UsageError, source_name
from agentminutes.harness import Adapter, ParseOptions, adapter_class, detect, is_document_adapter
from agentminutes.harness._gojson import (
    C_RECURSION_LIMITED,
    GO_MAX_DEPTH,
    GO_SPACE,
    SURROGATE_ESCAPE,
    Span,
    go_escape_spans,
    go_utf8,
    go_utf8_spans,
    on_fresh_stack,
)
from agentminutes.harness.base import BOM, detects
from agentminutes.pipeline.batch import Batch
from agentminutes.pipeline.sources import (
    CHUNK_BYTES,
    LineSplitter,
    aiter_chunks,
    iter_chunks,
)
from agentminutes.pipeline.verbatim import replace_raws, safe_events
from agentminutes.schema import Event

__all__ = (
    "Conversion",
    "Rewrite",
    "Rewrites",
    "adapter_line",
    "clean_line",
    "feed_lines",
    "feed_record",
    "open_chunks",
    "open_sync_chunks",
    "source_name",
)


def clean_line(raw: bytes, lineno: int) -> bytes | None:
    """The record a raw line holds: its bytes trimmed as the reference's Go reader trims them.

    Surrounding white space is trimmed (CRLF included, and Unicode white space
    such as U+00A0 or U+2028, as Go's ``bytes.TrimSpace`` does) and a UTF-8
    byte-order mark on line 1 is tolerated. Returns ``b""`` for a blank line
    and ``None`` for a line that holds only Unicode white space: both carry no
    record. The bytes are not otherwise changed (see :func:`feed_record`).
    """
    line = raw.strip()
    if lineno == 1 and line.startswith(BOM):
        line = line[3:].strip()
        if not line:
            return None  # a byte-order mark alone: not blank, so counted with white space
    if not line or (line[0] < 0x80 and line[-1] < 0x80):
        return line  # no white space to trim beyond ASCII's
    text = go_utf8(line)
    head = len(text) - len(text.lstrip(GO_SPACE))
    tail = len(text) - len(text.rstrip(GO_SPACE))
    if head + tail >= len(text):
        return None
    # White space is valid UTF-8 (never a replaced byte): its length in bytes is exact.
    start = len(text[:head].encode())
    end = len(line) - len(text[len(text) - tail :].encode()) if tail else len(line)
    return line[start:end]


def adapter_line(adapter: Adapter, raw: bytes, lineno: int) -> bytes | None:
    """The line *adapter* is fed for *raw*: :func:`clean_line`'s, or its indentation kept.

    A format whose lines are text, not records (Aider's Markdown history),
    says so with ``keeps_indent``: its lines lose only their line ending, so
    a reply's code keeps its layout (and Aider's two-space line breaks, which
    mark its own lines, stay). Blank lines are passed over all the same.
    """
    if not getattr(adapter, "keeps_indent", False):
        return clean_line(raw, lineno)
    line = raw.rstrip(b"\r\n")
    if lineno == 1 and line.startswith(BOM):
        line = line[3:]
    return line if line.strip() else b""


def _depth_error(adapter: Adapter, lineno: int) -> ParseError:
    return ParseError(
        adapter.name,
        depth_reason(),
        line=lineno,
        version=adapter.version,
        last_checked=adapter.last_checked,
    )


def depth_reason() -> str:
    """Why a value nested too deep to decode is refused (the error's wording)."""
    if C_RECURSION_LIMITED:
        # A fresh stack reads all but the last level or so of the reference's 10,000.
        reason = (
            "a value nested deeper than this Python decodes (its C recursion limit: about "
            f"{GO_MAX_DEPTH} levels, where the reference reads {GO_MAX_DEPTH})"
        )
    elif sys.getrecursionlimit() > GO_MAX_DEPTH:
        reason = (
            f"a value nested deeper than {GO_MAX_DEPTH} levels (deeper than the reference reads)"
        )
    else:
        reason = (
            "a value nested deeper than this process decodes (the command line reads "
            f"{GO_MAX_DEPTH} levels, as the reference does)"
        )
    return reason


class Rewrite:
    """A line as it is fed to an adapter, where that differs from its bytes.

    Go's decoder reads what msgspec rejects: invalid UTF-8 (U+FFFD for each
    byte) and a lone UTF-16 surrogate escape such as ``\\ud800`` (U+FFFD).
    The adapter is fed ``fed``, the line as Go reads it, so its decoded
    strings are the reference's. Verbatim JSON cut from ``fed`` (a tool's
    input, a sidecar) gets back what the reference copies: the escape as
    written (see :func:`~agentminutes.harness._gojson.go_utf8_spans` for the
    encoded surrogates); ``spans`` say where.
    """

    __slots__ = ("fed", "spans")

    def __init__(self, fed: bytes, spans: list[Span]) -> None:
        self.fed = fed
        self.spans = spans

    @classmethod
    def of(cls, line: bytes) -> Rewrite | None:
        """The rewrite *line* needs to be read as Go reads it, or ``None``."""
        fed, spans = line, list[Span]()
        if not line.isascii():
            try:
                line.decode()
            except UnicodeDecodeError:
                fed, spans = go_utf8_spans(line)
        if SURROGATE_ESCAPE.search(fed):
            fed, escapes = go_escape_spans(fed)  # same length: earlier spans still hold
            spans = sorted(spans + escapes)
        return None if fed is line else cls(fed, spans)

    def verbatim(self, start: int, end: int) -> bytes:
        """``fed[start:end]`` with each span inside it as the reference copies it."""
        parts: list[bytes] = []
        pos = start
        for a, b, text in self.spans:
            if a >= start and b <= end:
                parts += (self.fed[pos:a], text)
                pos = b
        parts.append(self.fed[pos:end])
        return b"".join(parts)


#: What marks verbatim JSON that may hold a rewritten span: U+FFFD or its escape.
_REWRITTEN: Final = ("\ufffd".encode(), b"\\ufffd")


class Rewrites:
    """The lines a conversion fed rewritten, to give events their verbatim bytes back.

    Events may be released lines after the line they come from (an adapter
    that holds a whole transcript): every event the conversion hands on is
    restored while any rewritten line has spans.
    """

    __slots__ = ("_lines",)

    def __init__(self) -> None:
        self._lines: list[Rewrite] = []

    def __bool__(self) -> bool:
        return bool(self._lines)

    def add(self, rewrite: Rewrite) -> None:
        """Remember *rewrite* (only one with spans needs restoring)."""
        if rewrite.spans:
            self._lines.append(rewrite)

    def restore(self, events: list[Event]) -> list[Event]:
        """Put the verbatim bytes back into the verbatim JSON of *events* (in place)."""
        return replace_raws(events, self._restored) if self._lines else events

    def _restored(self, value: Raw) -> Raw:
        data = bytes(value)
        if _REWRITTEN[0] in data or _REWRITTEN[1] in data:
            for rewrite in self._lines:
                at = rewrite.fed.find(data)
                if at >= 0:
                    return Raw(rewrite.verbatim(at, at + len(data)))
        return value


def feed_record(
    adapter: Adapter, line: bytes, lineno: int, rewrites: Rewrites | None = None
) -> list[Event]:
    """Feed one cleaned line (see :func:`clean_line`) to *adapter*; the events it completes.

    A line Go would read differently from its bytes is fed as Go reads it (see
    :class:`Rewrite`): with *rewrites* given it is remembered there, for the
    caller to restore what the adapter releases; without, the events of this
    line are restored at once. A value nested too deep to decode is a
    :class:`ParseError` for the line.
    """
    try:
        if line.isascii() and SURROGATE_ESCAPE.search(line) is None:
            # (the regular expression finds no surrogate escape faster than ``in`` finds
            # no ``\u``: JSON's escapes make backslashes common)
            events = adapter.feed(line, lineno)
            return events if rewrites is not None else safe_events(events)
        rewrite = Rewrite.of(line)
        if rewrite is None:
            events = adapter.feed(line, lineno)
            return events if rewrites is not None else safe_events(events)
        held = rewrites if rewrites is not None else Rewrites()
        held.add(rewrite)
        events = adapter.feed(rewrite.fed, lineno)
        return events if rewrites is not None else safe_events(held.restore(events))
    except RecursionError:
        if C_RECURSION_LIMITED:
            # The line's first decode is where its nesting is met, before the
            # adapter takes anything from it: feeding it again is feeding it once.
            try:
                return on_fresh_stack(feed_record, adapter, line, lineno, rewrites)
            except RecursionError:
                pass
        raise _depth_error(adapter, lineno) from None


def feed_lines(
    adapter: Adapter,
    lines: Iterable[tuple[int, bytes]],
    on_white_space: Callable[[int], None] | None = None,
    rewrites: Rewrites | None = None,
    *,
    checked: bool = True,
    offered: bool = False,
) -> list[Event]:
    """Feed a batch of raw lines to *adapter*; return the events they complete.

    Each line is read by :func:`clean_line` and fed by :func:`feed_record`;
    blank lines are passed over (they count toward line numbers only) and lines
    of only Unicode white space are reported to *on_white_space*. The events
    get the verbatim bytes of rewritten lines back (from *rewrites*, when the
    caller keeps them across batches) and, *checked*, are made safe to write
    (:func:`~agentminutes.pipeline.verbatim.safe_events`).

    An adapter in a read that writes no verbatim JSON may offer ``lean_feed``
    (Claude Code's projected reads): each line is offered to it as it is, and
    only a line it cannot decode so (nothing changed then) is checked for what
    Go reads differently and fed by :func:`feed_record`. Invalid UTF-8 and lone
    surrogate escapes fail a strict decode anywhere in a line but for invalid
    UTF-8 in a part of the record the read skips, which then stays as it is
    there instead of U+FFFD: only verbatim JSON could show it. *offered*: the lines
    come from :func:`_unpassed`, which offered each line that is to go to ``lean_feed``
    as it is to ``lean_pass`` first; those go to ``lean_read``, which does not look again.
    """
    held = rewrites if rewrites is not None else Rewrites()
    out: list[Event] = []
    extend = out.extend
    feed = adapter.feed
    plain = not getattr(adapter, "keeps_indent", False)
    lean = getattr(adapter, "lean_feed", None)
    read = getattr(adapter, "lean_read", None) if offered else None
    escape = SURROGATE_ESCAPE.search
    try:
        for lineno, raw in lines:
            if plain and lineno > 1:
                # clean_line's and feed_record's common case inline (a line a second):
                # ASCII at both ends, nothing Go would read differently.
                line = raw.strip()
                if line and line[0] < 0x80 and line[-1] < 0x80:
                    if lean is not None:
                        # A lean read takes the line as it is first (see above).
                        try:
                            # Unstripped, the line is one _unpassed offered to lean_pass.
                            events = (
                                read(line, lineno)
                                if read is not None and len(line) == len(raw)
                                else lean(line, lineno)
                            )
                        except RecursionError:
                            events = None
                        extend(
                            events
                            if events is not None
                            else feed_record(adapter, line, lineno, held)
                        )
                    elif line.isascii() and escape(line) is None:
                        try:
                            extend(feed(line, lineno))
                        except RecursionError:
                            extend(feed_record(adapter, line, lineno, held))
                    else:
                        extend(feed_record(adapter, line, lineno, held))
                    continue
                if not line:
                    continue
            cleaned = adapter_line(adapter, raw, lineno)
            if cleaned:
                extend(feed_record(adapter, cleaned, lineno, held))
            elif cleaned is None and on_white_space is not None:
                on_white_space(lineno)
    except ParseError as exc:
        exc.partial = held.restore(out)
        if checked:
            safe_events(exc.partial)
        raise
    held.restore(out)
    return safe_events(out) if checked else out


#: How long a line holding a NUL byte may grow before it is given up as binary data.
PENDING_NUL_LIMIT: Final = 1 << 20

#: Most events one batch of end-of-input events holds (an adapter that must see the
#: whole file, such as Antigravity's step sort, emits everything at the end).
FINAL_BATCH_EVENTS: Final = 4096


def _final_batches(
    events: list[Event], adapter: Adapter, rewrites: Rewrites, checked: bool
) -> Iterator[list[Event]]:
    """The events of the last lines and of ``adapter.finish()``, in bounded batches.

    An adapter that releases a whole transcript at the end offers ``drain()``,
    ``finish()`` as a lazy iterator; taking it a batch at a time keeps memory
    bounded.
    """
    drain: Callable[[], Iterable[Event]] = getattr(adapter, "drain", adapter.finish)
    try:
        for ev in drain():
            events.append(ev)
            if len(events) >= FINAL_BATCH_EVENTS:
                yield _checked(rewrites.restore(events), checked)
                events = []
    except RecursionError:
        error = _depth_error(adapter, 0)
        error.partial = _checked(rewrites.restore(events), checked)
        raise error from None
    yield _checked(rewrites.restore(events), checked)


def _checked(events: list[Event], checked: bool) -> list[Event]:
    return safe_events(events) if checked else events


@dataclass
class Conversion:
    """One transcript on its way through an adapter.

    Iterate :meth:`batches` (async) or :meth:`iter_events` (sync) over the
    transcript's chunks; after the first batch, ``adapter`` is the adapter in
    use. Give *path* whenever the chunks come from a file: an adapter that would
    sort the whole file first (Antigravity) then streams it once a first read
    proves it in order, instead of holding every event to the end.
    """

    name: str
    harness: str = "auto"
    options: ParseOptions = field(default_factory=ParseOptions)
    on_skip: Callable[[int, str], None] | None = None
    adapter: Adapter | None = None
    #: The regular file being read, if it is one: an adapter that sorts the whole
    #: file first (``is_presorted``) may then be proven unneeded to, by a first read.
    path: str | None = None
    #: Lines that held only Unicode white space (U+00A0, U+2028 …): passed over as
    #: blank, as the reference does, and counted here (not in the report).
    white_space_lines: int = 0
    _rewrites: Rewrites = field(default_factory=Rewrites, repr=False)

    def _white_space(self, lineno: int) -> None:
        self.white_space_lines += 1

    def _lines(
        self, adapter: Adapter, lines: Iterable[tuple[int, bytes]], offered: bool = False
    ) -> list[Event]:
        return feed_lines(
            adapter,
            lines,
            self._white_space,
            self._rewrites,
            checked=self.options.check_verbatim,
            offered=offered,
        )

    def _check_pending(self, adapter: Adapter, splitter: LineSplitter) -> None:
        # A record never holds a raw NUL byte: a long line with one is binary
        # data, and waiting for its end could mean reading gigabytes into memory.
        if splitter.pending_nul and splitter.pending > PENDING_NUL_LIMIT:
            raise ParseError(
                adapter.name,
                f"a line of more than {PENDING_NUL_LIMIT >> 20} MiB holding NUL bytes: "
                "binary data, not a record",
                line=splitter.lineno + 1,
                version=adapter.version,
                last_checked=adapter.last_checked,
            )

    def _start(self, head: bytes) -> Adapter:
        if not head:
            raise SourceError(f"{self.name}: empty input, not a transcript")
        if detects(self.harness):
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
        run = _Run(self)
        try:
            async for chunk in chunks:
                batch = run.push(chunk)
                if batch is not None:
                    yield batch
            for batch in run.end():
                yield batch
        except ParseError as exc:
            error = self._error(exc)
            if exc.partial:
                # What the lines before the failing one completed is delivered
                # first, as a streaming reader of the transcript would see it.
                yield Batch(exc.partial, None)
            raise error from None
        finally:
            # The file closes now, on an error too, not when the collector finds the reader.
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()

    def iter_batches(self, chunks: Iterable[bytes]) -> Iterator[Batch]:
        """Synchronous twin of :meth:`batches`."""
        run = _Run(self)
        try:
            for chunk in chunks:
                batch = run.push(chunk)
                if batch is not None:
                    yield batch
            yield from run.end()
        except ParseError as exc:
            error = self._error(exc)
            if exc.partial:
                # What the lines before the failing one completed is delivered
                # first, as a streaming reader of the transcript would see it.
                yield Batch(exc.partial, None)
            raise error from None
        finally:
            # The file closes now, on an error too, not when the collector finds the reader.
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    def iter_events(self, chunks: Iterable[bytes]) -> Iterator[Event]:
        """Synchronous twin of :meth:`batches`, flattened to events."""
        for batch in self.iter_batches(chunks):
            yield from batch.events

    @property
    def skipped(self) -> dict[str, int]:
        """Skipped native records so far, by native record type."""
        return self.adapter.skipped if self.adapter is not None else {}


def _is_presorted(
    check: Callable[[Iterable[memoryview], ParseOptions], bool], path: str, options: ParseOptions
) -> bool:
    """Run an adapter's ``is_presorted`` over a regular file's lines; ``False`` otherwise.

    Only a regular file is read twice: stdin, a FIFO or a device cannot be read
    again (and opening a FIFO would wait for a writer), and a read error leaves
    the adapter to sort, as it would without the check.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb", buffering=0) as f:
            return check(_lines(f), options)
    except (OSError, RecursionError):
        return False


#: The buffer a first read (:func:`_lines`) reads into; it grows for a longer line.
_FIRST_READ_BUFFER: Final = 1 << 20


def _lines(f: IO[bytes]) -> Iterator[memoryview]:
    """Each line of *f* (its newline left out), as a view valid until the next is asked for.

    Read into one buffer and handed out as views of it: a first read of 100 MB
    costs 0.04 s of CPU less than splitting each chunk into new bytes objects.
    """
    from agentminutes.pipeline.worker import cancel_point

    buf = bytearray(_FIRST_READ_BUFFER)
    view = memoryview(buf)
    have = 0  # bytes in buf: the start of a line, then what the last read added
    while True:
        if have == len(buf):  # a line longer than the buffer: a new one twice as long
            buf = bytearray(2 * len(buf))  # (the last view handed out may still be held)
            buf[:have] = view
            view = memoryview(buf)
        n = f.readinto(view[have:])  # type: ignore[attr-defined]
        if not n:
            break
        cancel_point()  # on a step thread whose caller was cancelled: stop here
        have += n
        start = 0
        while (end := buf.find(b"\n", start, have)) >= 0:
            yield view[start:end]
            start = end + 1
        view[: have - start] = view[start:have]
        have -= start
    if have:
        yield view[:have]


def open_chunks(
    source: str | os.PathLike[str], head: bytes = b"", stream: BinaryIO | None = None
) -> AsyncIterator[bytes]:
    """The async chunk source for a path or ``"-"``.

    *head* is the first bytes of stdin (or of the FIFO or device open as
    *stream*) where routing already read them (see
    :func:`agentminutes.pipeline.document_sources.route`); they are yielded first.
    """
    chunks = aiter_chunks(source, stream=stream)
    if not head:
        return chunks
    return _prefixed(head, chunks)


async def _prefixed(head: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield head
    async for chunk in rest:
        yield chunk


def open_sync_chunks(
    path: str | os.PathLike[str],
    head: bytes = b"",
    stream: BinaryIO | None = None,
    *,
    limit: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[bytes]:
    """The sync chunk source for a path (*head* and *stream* as for :func:`open_chunks`).

    *limit*: only the file's first *limit* bytes (not for a stream, read whole);
    *chunk_bytes*: the size of each read of a path.
    """
    from agentminutes.pipeline.sources import open_error

    if stream is not None:
        with stream:
            if head:
                yield head
            yield from iter_chunks(stream)
        return
    target = os.fspath(path)
    err = open_error(target)
    if err is not None:
        raise err
    with open(target, "rb") as f:
        yield from iter_chunks(f, chunk_bytes=chunk_bytes, limit=limit)


class _Run:
    """One pass of a transcript's chunks through its adapter: what :meth:`Conversion.batches`
    and its synchronous twin share (each only drives the chunks).

    A chunk's pending line is checked when the next chunk (or the end) comes, so that
    the batch the chunk completed is delivered first, as a streaming reader sees it.
    """

    __slots__ = ("adapter", "conversion", "splitter")

    def __init__(self, conversion: Conversion) -> None:
        self.conversion = conversion
        self.splitter = LineSplitter()
        self.adapter: Adapter | None = None

    def _adapter(self, head: bytes) -> Adapter:
        if self.adapter is None:
            self.adapter = self.conversion._start(head)
        else:
            self.conversion._check_pending(self.adapter, self.splitter)
        return self.adapter

    def push(self, chunk: bytes) -> Batch | None:
        """The batch of the lines *chunk* completes, if any."""
        adapter = self._adapter(chunk)
        passes = getattr(adapter, "lean_pass", None)
        if passes is not None and not getattr(adapter, "keeps_indent", False):
            data, spans = self.splitter.push_spans(chunk)
            if not spans:
                return None
            events = self.conversion._lines(adapter, _unpassed(passes, data, spans), True)
            return Batch(events, self.splitter.lineno)
        lines = self.splitter.push(chunk)
        if not lines:
            return None
        return Batch(self.conversion._lines(adapter, lines), self.splitter.lineno)

    def end(self) -> Iterator[Batch]:
        """The batches of the last line and of what the adapter still holds."""
        adapter = self._adapter(b"")
        tail = self.splitter.flush()
        conv = self.conversion
        last = _unfinished(conv._lines, adapter, tail) if tail else []
        for events in _final_batches(last, adapter, conv._rewrites, conv.options.check_verbatim):
            yield Batch(events, self.splitter.lineno)


#: Bytes a line may start and end with for :func:`feed_lines` to take it as it is:
#: ASCII, but for the white space ``bytes.strip`` removes.
_PLAIN_ENDS: Final = frozenset(range(0x80)) - frozenset(b" \t\n\r\x0b\x0c")


def _unpassed(
    passes: Callable[[bytes, memoryview, int, int, int], bool],
    data: bytes,
    spans: list[tuple[int, int, int]],
) -> Iterator[tuple[int, bytes]]:
    """The lines of *data* at *spans* that the adapter's lean read does not pass over.

    A line that :func:`feed_lines` would offer to ``lean_feed`` as it is (past the
    first, nothing to strip, ASCII at both ends) is first offered to ``lean_pass``
    where it lies in *data*: one passed over (a record the read does not need, only
    counted) is never copied out. The others are yielded as ``feed_lines`` takes them,
    one at a time, so each is looked at with the adapter's state of the lines before.
    """
    view = memoryview(data)
    plain = _PLAIN_ENDS
    for lineno, start, end in spans:
        if lineno > 1 and end > start and data[start] in plain and data[end - 1] in plain:
            try:
                if passes(data, view, start, end, lineno):
                    continue
            except RecursionError:
                pass  # fed as it is below, where its depth is met and reported
        yield lineno, data[start:end]


def _unfinished(
    parse: Callable[[Adapter, list[tuple[int, bytes]]], list[Event]],
    adapter: Adapter,
    tail: list[tuple[int, bytes]],
) -> list[Event]:
    """Parse the last line, which has no newline: a transcript still being written ends so.

    A last line that does not parse says so: the agent may still be writing it
    (``follow`` reads it once its newline is there).
    """
    try:
        return parse(adapter, tail)
    except ParseError as exc:
        if exc.line != tail[-1][0] or "may still be writing" in exc.reason:
            raise
        error = ParseError(
            exc.harness,
            f"{exc.reason}; the last line has no newline yet: the agent may still be writing "
            "it (follow reads it once it is complete)",
            line=exc.line,
            version=exc.version,
            last_checked=exc.last_checked,
            path=exc.path,
            unit=exc.unit,
        )
        error.partial = exc.partial
        raise error from None
