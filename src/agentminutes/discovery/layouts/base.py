"""Discovery's side of the layouts: reading a transcript's identity, and the reader layouts ask.

The layouts themselves (where each harness keeps its sessions, subagents and
sidecars) are path logic and live in each harness's folder, on the base in
:mod:`agentminutes.harness.layout` (the names they share, ``SessionRef``,
``ScanContext``, ``Locator`` …, once defined here, are taken from there with a
:class:`DeprecationWarning`). What a layout cannot
tell from paths it asks a :class:`~agentminutes.harness.layout.Reader`;
:data:`READER` is the one discovery gives every locator it makes: it reads
through the pipeline, which the harness layer below may not import.

A transcript's identity is read from its head through the harness's own
adapter: lines are fed one at a time until the first event, which must be
``session_meta`` (the adapter may tell it from the opening record's envelope,
without building the first turn's events). No second parser reads transcript
heads.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Final

from agentminutes import timestamps
from agentminutes._lazy import moved
from agentminutes.errors import AgentminutesError, NoConversationError, ParseError, ScanError
from agentminutes.harness import ParseOptions, adapter_class
from agentminutes.harness.base import Adapter, HeadIdentity
from agentminutes.harness.layout import (
    SKIP_NO_CONVERSATION,
    Reader,
    ScanContext,
    SessionRef,
    os_cause,
)
from agentminutes.pipeline.conversion import Rewrite, adapter_line, feed_lines
from agentminutes.schema import Event, EventKind, Meta

if TYPE_CHECKING:
    from agentminutes.harness.base import ConversationInfo, Document, DocumentAdapter

__all__ = (
    "READER",
    "PipelineReader",
    "build_ref",
    "read_identity",
    "strict_ref",
)

#: The names this module held before the layouts moved into the harness folders.
__getattr__ = moved(__name__, "agentminutes.harness.layout")


#: Read size for identity reads: a transcript's first record is usually a few KiB.
_HEAD_BYTES: Final = 64 * 1024
#: The first read of a head: most transcripts open with a record that names the session
#: in well under this, and splitting 64 KiB into lines costs more than reading it.
_FIRST_READ_BYTES: Final = 8 * 1024


# -- identity -----------------------------------------------------------------------------------

#: The adapter each class's identity reads ask first (see :func:`read_identity`).
_PROBES: dict[type[Adapter], Adapter] = {}


def read_identity(harness: str, path: str) -> tuple[Meta, str]:
    """The ``session_meta`` of a transcript's head and its timestamp, read through the adapter.

    Lines are given one at a time to the adapter until it emits its first
    event, so a large transcript costs its first records only (a format whose
    adapter holds everything until the end, such as Antigravity's step sort,
    is read whole, as a full parse would). Each line is first offered to the
    adapter's :meth:`~agentminutes.harness.base.Adapter.head_identity`, which
    tells the opening record from its envelope without building the events
    of the first turn; from the first line it cannot tell, lines are fed.

    Raises:
        NoConversationError: the file makes no event at all (empty, or summaries only).
        ParseError: the head does not parse, or does not open with ``session_meta``.
        OSError: the file cannot be read.
    """
    cls = adapter_class(harness)
    # Asked first: one adapter per class, never fed (head_identity changes no state), so
    # a transcript told by its head costs no adapter of its own (a third of its read).
    probe = _PROBES.get(cls)
    if probe is None:
        probe = _PROBES[cls] = cls(ParseOptions(check_verbatim=False))  # identity only
    adapter: Adapter | None = None
    # The file descriptor itself, not a buffered file object: listing thousands
    # of transcripts pays for the object's set-up more than for the read.
    fd = os.open(path, os.O_RDONLY)  # not inherited by children (PEP 446)
    try:
        for item in _head_lines(fd):
            if adapter is None:
                told = _head_identity(probe, *item)
                if told == "passed":
                    continue
                if told is not None:
                    return _identity(harness, told)
                adapter = cls(ParseOptions(check_verbatim=False))
            events = feed_lines(adapter, [item], checked=False)
            if events:
                return _identity(harness, events[0])
    finally:
        os.close(fd)
    if adapter is None:
        adapter = cls(ParseOptions(check_verbatim=False))  # nothing fed: what it finishes with
    finish: Callable[[], Iterator[Event] | list[Event]] = getattr(adapter, "drain", adapter.finish)
    for ev in finish():
        return _identity(harness, ev)
    raise NoConversationError(harness)


def _head_lines(fd: int) -> Iterator[tuple[int, bytes]]:
    """The numbered lines of an open file, read as they are asked for (a last one without a newline too).

    A line is cut out only when it is asked for: an identity is usually told by
    the first line or two of the first read, and splitting the whole read
    would cost more than the rest of it.
    """
    lineno = 0
    held: list[bytes] = []  # the pieces of a line longer than one read
    size = _FIRST_READ_BYTES
    while chunk := os.read(fd, size):
        size = _HEAD_BYTES
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            lineno += 1
            if held:
                held.append(chunk[start:end])
                yield lineno, b"".join(held)
                held = []
            else:
                yield lineno, chunk[start:end]
            start = end + 1
        if start < len(chunk):
            held.append(chunk[start:])
    if held:
        yield lineno + 1, b"".join(held)


def _head_identity(adapter: Adapter, lineno: int, raw: bytes) -> HeadIdentity:
    """The adapter's :meth:`head_identity` of a raw line, cleaned as :func:`feed_lines` feeds it."""
    line = adapter_line(adapter, raw, lineno)
    if not line:
        return "passed"  # blank or white space only: feed_lines passes over it too
    if not line.isascii() or b"\\u" in line:
        rewrite = Rewrite.of(line)
        if rewrite is not None:
            line = rewrite.fed
    return adapter.head_identity(line, lineno)


def _identity(harness: str, ev: Event) -> tuple[Meta, str]:
    if ev.kind != EventKind.SESSION_META or ev.session_meta is None:
        raise ParseError(harness, f'first event is "{ev.kind}", not session_meta')
    return ev.session_meta, ev.timestamp


def build_ref(harness: str, path: str, ctx: ScanContext | None = None) -> SessionRef | None:
    """Stat *path* and read its identity; ``None`` when *ctx*'s time window leaves it out.

    Raises:
        ScanError: the file cannot be stat'ed, read or identified.
    """
    if ctx is not None and ctx.on_file is not None:
        ctx.on_file(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ScanError(harness, os_cause("stat", path, exc), path) from None
    known = ctx.identity(path, st) if ctx is not None and ctx.identity is not None else None
    try:
        meta, started = known if known is not None else read_identity(harness, path)
    except NoConversationError as exc:
        if ctx is None or ctx.on_skip is None:
            raise ScanError(harness, str(exc), path) from None
        ctx.skip(path, SKIP_NO_CONVERSATION)
        return None
    except ParseError as exc:
        raise ScanError(harness, str(exc), path) from None
    except OSError as exc:
        raise ScanError(harness, os_cause("open", path, exc), path) from None
    except AgentminutesError as exc:
        raise ScanError(harness, str(exc), path) from None
    ref = SessionRef(
        meta=meta,
        path=path,
        started_at=timestamps.normalize(started) if started else "",
        mod_time=timestamps.format_local_ns(st.st_mtime_ns),
        size_bytes=st.st_size,
    )
    if ctx is not None and ctx.windowed() and not ctx.includes(*ref.window()):
        return None
    return ref


def strict_ref(harness: str, path: str) -> SessionRef:
    ref = build_ref(harness, path)
    assert ref is not None  # no window: always built
    return ref


# -- the reader ---------------------------------------------------------------------------------


class PipelineReader:
    """The :class:`~agentminutes.harness.layout.Reader` discovery gives its locators."""

    def ref(self, harness: str, path: str, ctx: ScanContext | None = None) -> SessionRef | None:
        return build_ref(harness, path, ctx)

    def route(self, path: str, harness: str) -> tuple[Document, type[DocumentAdapter]] | None:
        from agentminutes.pipeline.document_sources import route

        found = route(path, harness)
        if found.document is None or found.adapter is None:
            return None
        return found.document, found.adapter

    def opened(self, path: str, kind: str) -> Document:
        from agentminutes.pipeline.document_sources import OpenedDocument

        return OpenedDocument(path, kind, path=path)

    def conversations(
        self, document: Document, adapter: type[DocumentAdapter]
    ) -> list[ConversationInfo]:
        from agentminutes.pipeline.document_sources import DocumentConversion, OpenedDocument

        assert isinstance(document, OpenedDocument)  # what route() and opened() give
        return DocumentConversion(document, adapter).conversations()

    def release(self, document: Document) -> None:
        from agentminutes.pipeline.document_sources import OpenedDocument

        if isinstance(document, OpenedDocument):
            document.release()

    def events(self, harness: str, path: str) -> Iterator[Event]:
        from agentminutes.pipeline.conversion import Conversion, open_sync_chunks

        conv = Conversion(name=path, harness=harness, path=path)
        return conv.iter_events(open_sync_chunks(path))


#: The reader of every locator discovery makes.
READER: Final[Reader] = PipelineReader()
