"""The library API: events and sessions from transcripts, async first, with sync twins.

The async functions run inside any asyncio or anyio program; the sync twins
(:func:`iter_events`, :func:`load`) suit worker pools and data-frame maps
(Dask ``map``, Ray ``map_batches``): one file in, events or a session out, no
globals, picklable arguments.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Coroutine, Iterable, Iterator, Sequence
from typing import Any, cast

from agentminutes._errors import UsageError
from agentminutes._pipeline import (
    Batch,
    Conversion,
    Stage,
    apply_stages,
    open_chunks,
    open_sync_chunks,
    source_name,
)
from agentminutes._summary import SessionBuilder
from agentminutes.harness import ParseOptions
from agentminutes.schema import Event, Session

__all__ = ("build_stages", "events", "iter_events", "load", "parse")

Source = str | os.PathLike[str]


def build_stages(
    *,
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    stages: Sequence[Stage] = (),
) -> list[Stage]:
    """The stage list for the common options: promotions, then *stages*, then truncation."""
    from agentminutes.stages import promotions, truncate_payloads

    if max_payload_bytes < 0:
        raise UsageError("max_payload_bytes must be 0 (keep whole) or positive")
    chain = promotions(promote)
    chain.extend(stages)
    if max_payload_bytes:
        chain.append(truncate_payloads(max_payload_bytes))
    return chain


def _conversion(source: Source, harness: str, options: dict[str, Any]) -> Conversion:
    return Conversion(name=source_name(source), harness=harness, options=ParseOptions(**options))


async def _batches(
    source: Source,
    conversion: Conversion,
    stages: Sequence[Stage],
) -> AsyncIterator[Batch]:
    async for batch in apply_stages(conversion.batches(open_chunks(source)), stages):
        yield batch


async def events(
    source: Source,
    *,
    harness: str = "auto",
    permissive: bool = False,
    keep_raw: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    stages: Sequence[Stage] = (),
) -> AsyncIterator[Event]:
    """Parse a finished transcript into its normalized events, streamed as parsing goes.

    Args:
        source: a transcript path, or ``"-"`` for stdin.
        harness: the harness name, or ``"auto"`` to detect it from the first bytes.
        permissive: keep unclassifiable records as ``unknown`` events instead of raising.
        keep_raw: keep the verbatim source records in each event's provenance.
        harness_version: version for formats that record none (metadata only).
        text_form: ``"bare"`` or ``"delivered"`` system-event text.
        promote: opt-in telemetry promotions by name (e.g. ``"codex:web-search"``).
        max_payload_bytes: replace larger tool-result payloads by size and sha256.
        stages: extra transform stages, applied after the promotions.

    Yields:
        Events in stream order; the first is ``session_meta``.

    Raises:
        ParseError: a line no rule accepts (harness, version and line are named).
        DetectError, SourceError: the input is not a readable transcript.
    """
    options = {
        "permissive": permissive,
        "keep_raw": keep_raw,
        "harness_version": harness_version,
        "text_form": text_form,
    }
    conversion = _conversion(source, harness, options)
    chain = build_stages(promote=promote, max_payload_bytes=max_payload_bytes, stages=stages)
    async for batch in _batches(source, conversion, chain):
        for ev in batch.events:
            yield ev


async def parse(source: Source, **kwargs: Any) -> Session:
    """Parse a finished transcript into a whole :class:`~agentminutes.Session`.

    Takes the same keyword arguments as :func:`events`.
    """
    harness = kwargs.pop("harness", "auto")
    stage_opts = {
        k: kwargs.pop(k) for k in ("promote", "max_payload_bytes", "stages") if k in kwargs
    }
    conversion = _conversion(source, harness, kwargs)
    chain = build_stages(**stage_opts)
    builder = SessionBuilder()
    async for batch in _batches(source, conversion, chain):
        builder.add_all(batch.events)
    return builder.build(conversion.skipped)


def _drive(batches: AsyncIterator[Batch]) -> Iterator[Batch]:
    """Run an async batch iterator to completion without an event loop.

    Valid for chains that never wait on I/O: the sync source below and the
    built-in stages. A stage that does wait gets a clear error.
    """
    while True:
        step = cast("Coroutine[Any, Any, Batch]", batches.__anext__())
        try:
            step.send(None)
        except StopIteration as done:
            yield done.value
            continue
        except StopAsyncIteration:
            return
        step.close()
        raise UsageError("a stage waited on I/O; use the async API (events/parse) for such stages")


async def _from_sync(batches: Iterable[Batch]) -> AsyncIterator[Batch]:
    for batch in batches:
        yield batch


def iter_events(path: Source, **kwargs: Any) -> Iterator[Event]:
    """Synchronous twin of :func:`events` for a transcript path."""
    harness = kwargs.pop("harness", "auto")
    stage_opts = {
        k: kwargs.pop(k) for k in ("promote", "max_payload_bytes", "stages") if k in kwargs
    }
    conversion = _conversion(path, harness, kwargs)
    chain = build_stages(**stage_opts)
    batches = conversion.iter_batches(open_sync_chunks(path))
    if chain:
        batches = _drive(apply_stages(_from_sync(batches), chain))
    for batch in batches:
        yield from batch.events


def load(path: Source, **kwargs: Any) -> Session:
    """Synchronous twin of :func:`parse` for a transcript path."""
    harness = kwargs.pop("harness", "auto")
    stage_opts = {
        k: kwargs.pop(k) for k in ("promote", "max_payload_bytes", "stages") if k in kwargs
    }
    conversion = _conversion(path, harness, kwargs)
    chain = build_stages(**stage_opts)
    batches = conversion.iter_batches(open_sync_chunks(path))
    if chain:
        batches = _drive(apply_stages(_from_sync(batches), chain))
    builder = SessionBuilder()
    for batch in batches:
        builder.add_all(batch.events)
    return builder.build(conversion.skipped)
