"""The library API: events and sessions from transcripts, async first, with sync twins.

The async functions run inside any asyncio or anyio program; the sync twins
(:func:`iter_events`, :func:`load`, :func:`iter_sessions`) suit worker pools and
data-frame maps (Dask ``map``, Ray ``map_batches``): one file in, events or
sessions out, no globals, picklable arguments.

A source is a line transcript (one session) or a whole-document source holding
many conversations: a ChatGPT or claude.ai data export (``conversations.json``
or the export ZIP) or a Pinocchio ``turns.db``. Each conversation is a session.
:func:`events`, :func:`parse`, :func:`iter_events` and :func:`load` take one
session: pass ``conversation=ID`` (an id or a unique id prefix) unless the
source holds exactly one. :func:`sessions` / :func:`iter_sessions` go through
every session of any source, and :func:`conversations` lists the
conversations of a document source without parsing them.
"""

from __future__ import annotations

import os
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Iterator,
    Sequence,
)
from contextlib import aclosing
from typing import TYPE_CHECKING

from agentminutes.errors import UsageError
from agentminutes.harness import ConversationInfo, ParseOptions
from agentminutes.pipeline.batch import Batch, Stage, apply_stages
from agentminutes.pipeline.conversion import source_name
from agentminutes.pipeline.documents import DocumentConversion, Feed, feeds, route
from agentminutes.pipeline.sync import staged, sync_feeds
from agentminutes.schema import Event, Session
from agentminutes.schema.session import SessionBuilder
from agentminutes.stages import build_stages

if TYPE_CHECKING:
    import anyio

    from agentminutes.live.follower import Envelope, Target

__all__ = (
    "build_stages",
    "conversations",
    "events",
    "follow",
    "follow_many",
    "iter_events",
    "iter_sessions",
    "load",
    "parse",
    "sessions",
)

Source = str | os.PathLike[str]


def _prepare(
    *,
    permissive: bool,
    keep_raw: bool,
    harness_version: str,
    text_form: str,
    promote: Sequence[str],
    max_payload_bytes: int,
    stages: Sequence[Stage],
) -> tuple[ParseOptions, list[Stage]]:
    """The parse options and the stage chain the keyword arguments of :func:`events` ask for."""
    options = ParseOptions(
        permissive=permissive,
        keep_raw=keep_raw,
        harness_version=harness_version,
        text_form=text_form,
    )
    chain = build_stages(promote=promote, max_payload_bytes=max_payload_bytes, stages=stages)
    return options, chain


async def events(
    source: Source,
    *,
    harness: str = "auto",
    conversation: str | None = None,
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
        conversation: for a multi-conversation source (a data export, a
            ``turns.db``), the conversation to parse: its id or a unique id
            prefix. Needed unless the source holds exactly one conversation.
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
        ParseError: a line (record) no rule accepts (harness, version and line are named).
        DetectError, SourceError: the input is not a readable transcript.
        UsageError: no conversation chosen where several exist, or an unknown one.
    """
    options, chain = _prepare(
        permissive=permissive,
        keep_raw=keep_raw,
        harness_version=harness_version,
        text_form=text_form,
        promote=promote,
        max_payload_bytes=max_payload_bytes,
        stages=stages,
    )
    feed = next(feeds(source, harness, options, conversation))
    async for batch in apply_stages(feed.batches, chain):
        for ev in batch.events:
            yield ev


async def parse(
    source: Source,
    *,
    harness: str = "auto",
    conversation: str | None = None,
    permissive: bool = False,
    keep_raw: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    stages: Sequence[Stage] = (),
) -> Session:
    """Parse a finished transcript into a whole :class:`~agentminutes.Session`.

    Takes the same keyword arguments as :func:`events`.
    """
    options, chain = _prepare(
        permissive=permissive,
        keep_raw=keep_raw,
        harness_version=harness_version,
        text_form=text_form,
        promote=promote,
        max_payload_bytes=max_payload_bytes,
        stages=stages,
    )
    return await _session(next(feeds(source, harness, options, conversation)), chain)


async def _session(feed: Feed, chain: Sequence[Stage]) -> Session:
    builder = SessionBuilder()
    async for batch in apply_stages(feed.batches, chain):
        builder.add_all(batch.events)
    return builder.build(feed.skipped())


async def sessions(
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
) -> AsyncIterator[Session]:
    """Every session of a source, one whole :class:`~agentminutes.Session` at a time.

    A document source (data export, ``turns.db``) yields one session per
    conversation, in source order, each built only when reached; a line
    transcript yields its one session. Takes the keyword arguments of
    :func:`events` except ``conversation``.
    """
    options, chain = _prepare(
        permissive=permissive,
        keep_raw=keep_raw,
        harness_version=harness_version,
        text_form=text_form,
        promote=promote,
        max_payload_bytes=max_payload_bytes,
        stages=stages,
    )
    for feed in feeds(source, harness, options, every=True):
        yield await _session(feed, chain)


def conversations(path: Source, *, harness: str = "auto") -> list[ConversationInfo]:
    """List the conversations inside a multi-conversation source, without parsing them.

    Each :class:`~agentminutes.harness.ConversationInfo` has the id (what
    ``conversation=`` and ``--conversation`` take), the title, the creation
    and last-update times (RFC 3339) and the number of messages.

    Raises:
        UsageError: *path* is a line transcript (one session), not a document source.
    """
    found = route(path, harness)
    if found.document is None or found.adapter is None:
        raise UsageError(f"{source_name(path)}: a single-session transcript, not a document source")
    return DocumentConversion(found.document, found.adapter).conversations()


def iter_events(
    path: Source,
    *,
    harness: str = "auto",
    conversation: str | None = None,
    permissive: bool = False,
    keep_raw: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    stages: Sequence[Stage] = (),
) -> Iterator[Event]:
    """Synchronous twin of :func:`events` for a transcript path (same keyword arguments)."""
    options, chain = _prepare(
        permissive=permissive,
        keep_raw=keep_raw,
        harness_version=harness_version,
        text_form=text_form,
        promote=promote,
        max_payload_bytes=max_payload_bytes,
        stages=stages,
    )
    for batches, _ in sync_feeds(path, conversation, False, harness, options):
        for batch in staged(batches, chain):
            yield from batch.events


def load(
    path: Source,
    *,
    harness: str = "auto",
    conversation: str | None = None,
    permissive: bool = False,
    keep_raw: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    stages: Sequence[Stage] = (),
) -> Session:
    """Synchronous twin of :func:`parse` for a transcript path (the keyword arguments of
    :func:`events`)."""
    options, chain = _prepare(
        permissive=permissive,
        keep_raw=keep_raw,
        harness_version=harness_version,
        text_form=text_form,
        promote=promote,
        max_payload_bytes=max_payload_bytes,
        stages=stages,
    )
    batches, skipped = next(sync_feeds(path, conversation, False, harness, options))
    return _sync_session(batches, skipped, chain)


def _sync_session(
    batches: Iterator[Batch], skipped: Callable[[], dict[str, int]], chain: Sequence[Stage]
) -> Session:
    builder = SessionBuilder()
    for batch in staged(batches, chain):
        builder.add_all(batch.events)
    return builder.build(skipped())


def iter_sessions(
    path: Source,
    *,
    harness: str = "auto",
    permissive: bool = False,
    keep_raw: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    stages: Sequence[Stage] = (),
) -> Iterator[Session]:
    """Synchronous twin of :func:`sessions` for a path: every session, one at a time."""
    options, chain = _prepare(
        permissive=permissive,
        keep_raw=keep_raw,
        harness_version=harness_version,
        text_form=text_form,
        promote=promote,
        max_payload_bytes=max_payload_bytes,
        stages=stages,
    )
    for batches, skipped in sync_feeds(path, None, True, harness, options):
        yield _sync_session(batches, skipped, chain)


def _targets(paths: Sequence[Source] | None, harness: str) -> list[Target]:
    from agentminutes.live.follower import resolve_targets

    return resolve_targets(paths, harness)


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
    import msgspec

    from agentminutes.live.follower import Envelope, Mark, make_follower
    from agentminutes.live.ids import event_id
    from agentminutes.sinks.encoding import one_line

    encode = msgspec.json.Encoder().encode
    chain = build_stages(promote=promote, max_payload_bytes=max_payload_bytes, stages=stages)
    follower, follow_state = make_follower(
        targets,
        harness=harness,
        state=state,
        from_end=from_end,
        idle_exit=idle_exit,
        poll=poll,
        cwd=cwd,
        session_id=session_id,
        permissive=permissive,
        keep_raw=keep_raw,
        harness_version=harness_version,
        text_form=text_form,
        stop_event=stop,
    )
    try:
        async with aclosing(follower.batches()) as source:
            async for batch in apply_stages(source, chain, keep_marks=True):
                mark = batch.mark
                if not isinstance(mark, Mark):
                    if batch.events:
                        raise UsageError(
                            f"a stage yielded {len(batch.events)} events with a mark that is "
                            f"not the follower's ({type(mark).__name__}): pass each batch's "
                            "mark on unchanged (see agentminutes.stages)"
                        )
                    continue
                for ev in batch.events:
                    yield Envelope(
                        transcript=mark.transcript,
                        harness=mark.harness,
                        id=event_id(mark.identity, ev, one_line(encode(ev))),
                        session_id=mark.session_id,
                        is_subagent=mark.is_subagent,
                        event=ev,
                    )
                # The consumer has taken every event of the batch: record the progress.
                if follow_state is not None:
                    mark.record(follow_state)
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
        follow_many(
            [target],
            harness=harness,
            state=state,
            from_end=from_end,
            idle_exit=idle_exit,
            poll=poll,
            stop=stop,
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
            _targets(targets, harness),
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
