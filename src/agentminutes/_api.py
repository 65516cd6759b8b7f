"""The library API: events and sessions from transcripts, async first, with sync twins.

The async functions run inside any asyncio or anyio program; the sync twins
(:func:`iter_events`, :func:`load`) suit worker pools and data-frame maps
(Dask ``map``, Ray ``map_batches``): one file in, events or a session out, no
globals, picklable arguments.
"""

from __future__ import annotations

import os
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Coroutine,
    Iterable,
    Iterator,
    Sequence,
)
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, cast

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

if TYPE_CHECKING:
    import anyio

    from agentminutes._follow import Envelope, Target

__all__ = ("build_stages", "events", "follow", "follow_many", "iter_events", "load", "parse")

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


def _follow_targets(targets: Sequence[Source] | None, harness: str) -> list[Target]:
    from agentminutes._follow import Target, targets_for
    from agentminutes._roots import default_roots, transcript_patterns

    if targets:
        return targets_for(list(targets), harness)
    if harness in ("", "auto"):
        raise UsageError("give targets, or a harness to follow its default transcript folders")
    patterns = transcript_patterns(harness)
    return [Target(str(p), True, patterns) for p in default_roots(harness)]


async def _followed(
    targets: list[Target],
    *,
    harness: str,
    state: Source | None,
    from_end: bool,
    idle_exit: float | None,
    poll: bool,
    stop: anyio.Event | None,
    cwd: str | None,
    session_id: str | None,
    permissive: bool,
    keep_raw: bool,
    harness_version: str,
    text_form: str,
    promote: Sequence[str],
    max_payload_bytes: int,
    stages: Sequence[Stage],
) -> AsyncGenerator[Envelope, None]:
    from agentminutes._follow import Envelope, FollowConfig, Follower, Mark
    from agentminutes._state import FollowState

    chain = build_stages(promote=promote, max_payload_bytes=max_payload_bytes, stages=stages)
    follow_state = FollowState(os.fspath(state)) if state is not None else None
    config = FollowConfig(
        harness=harness,
        options=ParseOptions(
            permissive=permissive,
            keep_raw=keep_raw,
            harness_version=harness_version,
            text_form=text_form,
        ),
        from_end=from_end,
        poll=poll,
        idle_exit=idle_exit,
        cwd=cwd,
        session_id=session_id,
        state=follow_state,
        checkpoint=follow_state is not None,
        stop_event=stop,
    )
    follower = Follower(targets, config)
    try:
        async with aclosing(follower.batches()) as source:
            async for batch in apply_stages(source, chain):
                mark = batch.mark
                if isinstance(mark, Mark):
                    for ev in batch.events:
                        yield Envelope(transcript=mark.transcript, harness=mark.harness, event=ev)
                    # The consumer has taken every event of the batch: record the progress.
                    if follow_state is not None and mark.entry is not None:
                        follow_state.update(mark.transcript, mark.entry)
                if follow_state is not None:
                    follow_state.save_if_due()
    finally:
        if follow_state is not None:
            follow_state.save()


async def follow(
    target: Source,
    *,
    harness: str = "auto",
    state: Source | None = None,
    from_end: bool = False,
    idle_exit: float | None = None,
    poll: bool = False,
    stop: anyio.Event | None = None,
    permissive: bool = False,
    keep_raw: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    stages: Sequence[Stage] = (),
) -> AsyncGenerator[Event, None]:
    """Events of a transcript as it is written: what :func:`events` yields, live.

    The transcript may not exist yet. Iteration goes on until *stop* is set,
    *idle_exit* seconds pass without a new line, or the consumer stops
    iterating (``break`` inside ``contextlib.aclosing``, or cancellation:
    watches and threads are released at once). On *stop* and *idle_exit* the
    events the adapter still holds (an assistant message no later record has
    closed yet) come last.

    Args:
        target: the transcript path.
        state: a progress file: a later ``follow`` with the same file continues
            after the last event this one yielded (and the consumer took).
        from_end: start after what the transcript holds now (without *state*).
        idle_exit: stop after this many seconds without a new line.
        poll: stat the file instead of using file-change notification.
        stop: an ``anyio.Event`` that ends the iteration when set.

    The parsing keywords are those of :func:`events`.
    """
    async with aclosing(
        _followed(
            _follow_targets([target], harness),
            harness=harness,
            state=state,
            from_end=from_end,
            idle_exit=idle_exit,
            poll=poll,
            stop=stop,
            cwd=None,
            session_id=None,
            permissive=permissive,
            keep_raw=keep_raw,
            harness_version=harness_version,
            text_form=text_form,
            promote=promote,
            max_payload_bytes=max_payload_bytes,
            stages=stages,
        )
    ) as envelopes:
        async for envelope in envelopes:
            yield envelope.event


async def follow_many(
    targets: Sequence[Source] | None = None,
    *,
    harness: str = "auto",
    cwd: str | None = None,
    session_id: str | None = None,
    state: Source | None = None,
    from_end: bool = False,
    idle_exit: float | None = None,
    poll: bool = False,
    stop: anyio.Event | None = None,
    permissive: bool = False,
    keep_raw: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    stages: Sequence[Stage] = (),
) -> AsyncGenerator[Envelope, None]:
    """Events of several transcripts, or of every transcript under folders, as they are written.

    Yields :class:`~agentminutes.Envelope` s: ``transcript`` (its absolute
    path), ``harness``, and ``event``. Folders are watched for transcripts
    that appear later (subagents start mid-session). With no *targets*, the
    default transcript folders of *harness*; *cwd* and *session_id* keep only
    the sessions whose ``session_meta`` matches. Other keywords as in
    :func:`follow`.
    """
    async with aclosing(
        _followed(
            _follow_targets(targets, harness),
            harness=harness,
            state=state,
            from_end=from_end,
            idle_exit=idle_exit,
            poll=poll,
            stop=stop,
            cwd=cwd,
            session_id=session_id,
            permissive=permissive,
            keep_raw=keep_raw,
            harness_version=harness_version,
            text_form=text_form,
            promote=promote,
            max_payload_bytes=max_payload_bytes,
            stages=stages,
        )
    ) as envelopes:
        async for envelope in envelopes:
            yield envelope
