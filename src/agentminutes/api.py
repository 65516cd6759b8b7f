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
    Mapping,
    Sequence,
)
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from agentminutes.errors import AgentminutesError, ParseError, UsageError
from agentminutes.harness import ConversationInfo, ParseOptions
from agentminutes.live.config import Mark
from agentminutes.pipeline.batch import Batch, Stage, apply_stages
from agentminutes.pipeline.conversion import source_name
from agentminutes.pipeline.document_sources import DocumentConversion, Feed, feeds, route
from agentminutes.pipeline.sync import staged, sync_feeds
from agentminutes.schema import Event, Session
from agentminutes.schema.session import SessionBuilder
from agentminutes.stages import build_stages

if TYPE_CHECKING:
    import anyio

    from agentminutes.live.follower import Envelope, Follower, Target
    from agentminutes.live.state import FollowState

__all__ = (
    "Ended",
    "Following",
    "OnError",
    "Started",
    "build_stages",
    "conversations",
    "events",
    "follow",
    "follow_many",
    "follow_to",
    "iter_events",
    "iter_sessions",
    "load",
    "parse",
    "sessions",
)

Source = str | os.PathLike[str]
_T = TypeVar("_T")


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
    if source == "-":
        feed = next(feeds(source, harness, options, conversation))
        async for batch in apply_stages(feed.batches, chain):
            for ev in batch.events:
                yield ev
        return
    async with aclosing(_read_in_thread(source, harness, options, conversation)) as read:
        async for batch in apply_stages(read, chain):
            for ev in batch.events:
                yield ev


async def _read_in_thread(
    source: Source,
    harness: str,
    options: ParseOptions,
    conversation: str | None,
    builder: SessionBuilder | None = None,
    skipped: list[Callable[[], dict[str, int]]] | None = None,
) -> AsyncGenerator[Batch, None]:
    """The batches of a path, read and parsed on a thread of their own, a chunk a step.

    The event loop only waits; a cancellation ends the read after the chunk
    under way, and the file is closed before this returns. With *builder*, each
    batch is added to it in the thread too (and none is yielded but the last,
    empty, carrying the built :class:`Session` as its mark). *skipped* gets the
    function that tells the skip counts.
    """
    from agentminutes.pipeline.worker import StepThread

    worker = StepThread("agentminutes-read")
    opened: list[tuple[Iterator[Batch], Callable[[], dict[str, int]]]] = []

    def step() -> Batch | None:
        if not opened:
            opened.append(next(sync_feeds(source, conversation, False, harness, options)))
            if skipped is not None:
                skipped.append(opened[0][1])
        batches = opened[0][0]
        while (batch := next(batches, None)) is not None:
            if builder is None:
                return batch
            builder.add_all(batch.events)
        return None

    try:
        while (batch := await worker.run(step)) is not None:
            yield batch
        if builder is not None:
            done = builder
            yield Batch([], await worker.run(lambda: done.build(opened[0][1]())))
    finally:
        if opened:
            close = getattr(opened[0][0], "close", None)
            if close is not None:
                close()  # the file, now (after the step under way: none runs at this point)
        worker.close()


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
    if source == "-":
        return await _session(next(feeds(source, harness, options, conversation)), chain)
    builder = SessionBuilder()
    if chain:
        skipped: list[Callable[[], dict[str, int]]] = []
        read = _read_in_thread(source, harness, options, conversation, skipped=skipped)
        async with aclosing(read):
            async for batch in apply_stages(read, chain):
                builder.add_all(batch.events)
        return builder.build(skipped[0]())
    session: Session | None = None
    async with aclosing(_read_in_thread(source, harness, options, conversation, builder)) as read:
        async for last in read:
            session = last.mark
    assert session is not None
    return session


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
    if source == "-" or chain:
        for feed in feeds(source, harness, options, every=True):
            yield await _session(feed, chain)
        return
    from agentminutes.pipeline.worker import StepThread

    # Read and built on a thread of their own, a session a step; a cancellation
    # returns within a chunk (the reading stops at its next one).
    found = sync_feeds(source, None, True, harness, options)

    def step() -> Session | None:
        nxt = next(found, None)
        return None if nxt is None else _sync_session(nxt[0], nxt[1], ())

    worker = StepThread("agentminutes-read")
    try:
        while (session := await worker.run(step)) is not None:
            yield session
    finally:
        close = getattr(found, "close", None)
        if close is not None:
            close()  # the source, now
        worker.close()


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


#: Envelopes handed out between two checkpoints of the event loop (other tasks run there).
ENVELOPES_PER_CHECKPOINT = 64

#: Told each error of one transcript of a :func:`follow_many` (it is then no longer read).
OnError = Callable[[AgentminutesError], None]


def _targets(
    paths: Sequence[Source] | None, harness: str, env: Mapping[str, str] | None
) -> list[Target]:
    from agentminutes.live.follower import resolve_targets

    return resolve_targets(paths, harness, env)


def _torn_error(mark: Mark, line: int, size: int) -> ParseError:
    """A partial last line left at a stop, reported as ``convert`` reports a cut-off record."""
    return ParseError(
        mark.harness or "auto",
        f"the last line is incomplete ({size} bytes without a newline) and was not read",
        line=line,
        path=mark.transcript,
    )


@dataclass(frozen=True, slots=True)
class Started:
    """A transcript began to be followed: a session's, or one of its subagents'.

    Told (``on_start``) before its first envelope; ``session_id`` is empty if its
    first batch held no ``session_meta``.
    """

    transcript: str
    harness: str
    session_id: str
    is_subagent: bool


@dataclass(frozen=True, slots=True)
class Ended:
    """A transcript's follow ended, after its last envelope: told once (``on_end``).

    ``reason`` is ``done`` (:meth:`Following.done`), ``removed`` (the file went
    away), ``error`` (``error`` says what: nothing more of it is read),
    ``stopped`` (:meth:`Following.stop`, the *stop* event) or ``idle``
    (*idle_exit*). At a stop, ``error`` may name a last line left incomplete.
    """

    transcript: str
    harness: str
    session_id: str
    is_subagent: bool
    reason: str
    error: AgentminutesError | None = None


def _silent(_message: str) -> None:
    """Notices nobody asked for: the library writes nothing to stderr."""


class Following:
    """The live stream of :func:`follow_many`: an async iterator of :class:`~agentminutes.Envelope` s.

    Use it as ``async with follow_many(...) as following: async for env in following``
    (or iterate it inside ``contextlib.aclosing``, or until it ends); :meth:`done` and
    :meth:`stop` may be called from any task of the same event loop meanwhile.
    """

    def __init__(self, make: Callable[[], _Made], hooks: _Hooks) -> None:
        self._make = make
        self._hooks = hooks
        self._follower: Follower | None = None
        #: done() and stop() asked before the follow started (it starts at the first step).
        self._early_done: list[str] = []
        self._early_stop = False
        self._made: _Made | None = None
        self._gen = _followed(self, hooks)

    async def _start(self) -> tuple[Follower, FollowState | None, list[Stage]]:
        """Make the follower (imports, stats, the first look at the targets) off the loop,
        once: at ``async with`` or at the first step."""
        if self._made is not None:
            return self._made
        follower, follow_state, chain = self._made = await _off_loop(self._start_follower)
        self._follower = follower
        if self._early_stop:
            follower.stop()
        for name in self._early_done:
            self.done(name)
        self._early_done.clear()
        return follower, follow_state, chain

    def _start_follower(self) -> _Made:
        follower, follow_state, chain = self._make()
        follower.start()  # the first look at the targets: where each transcript starts
        return follower, follow_state, chain

    def __aiter__(self) -> Following:
        return self

    async def __anext__(self) -> Envelope:
        return await self._gen.__anext__()

    async def __aenter__(self) -> Following:
        await self._start()  # the follow starts here: what is written from now on is read
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop iterating now: watches and threads are released (held events are not written)."""
        await self._gen.aclose()

    def done(self, transcript: Source) -> bool:
        """The agent writing *transcript* has finished: write what it holds now, stop reading it.

        *transcript* is a transcript's path, or a session id: then every
        transcript of that session seen so far, its subagents' first and its
        own last. Their events on disk, then the message each still holds,
        come next in the stream, without waiting for the other transcripts or
        a stop; then *on_end* and *on_done* are told. A path in a followed
        folder that the follow has not looked at yet is read whole first.
        Returns whether such a transcript or session is followed (before the
        iteration began: whether *transcript* names a file). Does no file work
        on the event loop (a stat at most): the reading is the follow's.
        """
        key = os.fspath(transcript)
        follower = self._follower
        if follower is None:
            self._early_done.append(key)
            return os.path.isfile(key)
        names = self._hooks.sessions.get(key)
        if names and not follower.knows(key):
            ordered = sorted(names, key=lambda n: not self._hooks.started[n].is_subagent)
            told = [follower.done(name) for name in ordered]
            return any(told)
        return follower.done(key)

    def stop(self) -> None:
        """End the follow as the *stop* event does: what is on disk and what is held come last."""
        if self._follower is None:
            self._early_stop = True
        else:
            self._follower.stop()


class _Hooks:
    """The caller's callbacks, and what was told: each transcript starts once and ends once."""

    def __init__(
        self,
        *,
        on_error: OnError | None,
        on_done: Callable[[str], None] | None,
        on_restart: Callable[[str], None] | None,
        on_start: Callable[[Started], None] | None,
        on_end: Callable[[Ended], None] | None,
    ) -> None:
        self.on_error = on_error
        self.on_done = on_done
        self.on_restart = on_restart
        self.on_start = on_start
        self.on_end = on_end
        self.started: dict[str, Started] = {}
        self.ended: set[str] = set()
        #: Session id -> the transcripts seen of it (the session's own, its subagents').
        self.sessions: dict[str, set[str]] = {}

    def seen(self, mark: Mark) -> None:
        """*mark*'s transcript is followed: told as started, the first time."""
        name = mark.transcript
        known = self.started.get(name)
        if known is not None and (known.session_id or not mark.session_id):
            return
        info = Started(name, mark.harness, mark.session_id, mark.is_subagent)
        self.started[name] = info
        if mark.session_id:
            self.sessions.setdefault(mark.session_id, set()).add(name)
        if known is None and self.on_start is not None:
            self.on_start(info)

    def end(self, mark: Mark, reason: str, error: AgentminutesError | None = None) -> None:
        """*mark*'s transcript ended: told once, after its last envelope."""
        name = mark.transcript
        if name in self.ended:
            return
        self.seen(mark)
        self.ended.add(name)
        info = self.started[name]
        if self.on_end is not None:
            self.on_end(Ended(name, info.harness, info.session_id, info.is_subagent, reason, error))
        if self.on_done is not None:
            self.on_done(name)

    def end_all(self, reason: str, errors: Mapping[str, AgentminutesError]) -> None:
        """The follow ended (*reason*): every transcript not ended yet ends, subagents first."""
        left = [info for name, info in self.started.items() if name not in self.ended]
        left.sort(key=lambda info: not info.is_subagent)
        for info in left:
            mark = Mark(info.transcript, info.harness, session_id=info.session_id)
            mark.is_subagent = info.is_subagent
            self.end(mark, reason, errors.get(info.transcript))


async def _controls(
    source: AsyncIterator[Batch], pending: list[Mark]
) -> AsyncGenerator[Batch, None]:
    """The follower's batches, noting the marks that end or fail a transcript.

    Noted here, before the stages, so a stage that drops empty batches (which
    is what such marks often ride on) cannot lose them.
    """
    from agentminutes.live.follower import Mark

    async for batch in source:
        mark = batch.mark
        if isinstance(mark, Mark) and (
            mark.error is not None or mark.torn or mark.done or mark.restarted
        ):
            pending.append(mark)
        yield batch


async def _followed(following: Following, hooks: _Hooks) -> AsyncGenerator[Envelope, None]:
    import msgspec
    from anyio.lowlevel import checkpoint

    from agentminutes.live.follower import Envelope
    from agentminutes.live.ids import event_id
    from agentminutes.sinks.encoding import one_line

    encode = msgspec.json.Encoder().encode
    given = 0
    pending: list[Mark] = []
    torn: list[ParseError] = []
    cut_at_stop: dict[str, AgentminutesError] = {}
    told: set[tuple[str, str]] = set()

    def controls() -> None:
        for mark in pending:
            error = mark.error
            if error is not None and (mark.transcript, str(error)) not in told:
                told.add((mark.transcript, str(error)))
                hooks.end(mark, "error", error)
                if hooks.on_error is None:
                    raise error
                hooks.on_error(error)
            if mark.torn:
                cut = _torn_error(mark, *mark.torn)
                cut_at_stop[mark.transcript] = cut
                if hooks.on_error is not None:
                    hooks.on_error(cut)
                elif follow_state is None:  # with a state, the next run reads it whole
                    torn.append(cut)
            if mark.restarted:
                if hooks.on_restart is not None:
                    hooks.on_restart(mark.transcript)
            elif mark.done:
                hooks.end(mark, mark.end or "done")
        pending.clear()

    def envelopes(batch: Batch, mark: Mark) -> list[Envelope]:
        return [
            Envelope(
                transcript=mark.transcript,
                harness=mark.harness,
                id=event_id(mark.identity, ev, one_line(encode(ev))),
                session_id=mark.session_id,
                is_subagent=mark.is_subagent,
                event=ev,
            )
            for ev in batch.events
        ]

    def prepare(batch: Batch) -> Batch:
        mark = batch.mark
        if not isinstance(mark, Mark) or not batch.events:
            return batch
        return _Ready(batch.events, mark, envelopes(batch, mark))

    follower, follow_state, chain = await following._start()
    if not chain:
        # No stage: the envelopes (their ids digest each event) are made in the
        # follow's thread, with the reading, not on the event loop.
        follower.prepare = prepare
    try:
        async with aclosing(follower.batches()) as source:
            batches = apply_stages(_controls(source, pending), chain, keep_marks=True)
            async with aclosing(batches) as staged:  # type: ignore[type-var]
                async for batch in staged:
                    mark = batch.mark
                    if not isinstance(mark, Mark):
                        if batch.events:
                            raise UsageError(
                                f"a stage yielded {len(batch.events)} events with a mark that "
                                f"is not the follower's ({type(mark).__name__}): pass each "
                                "batch's mark on unchanged (see agentminutes.stages)"
                            )
                        controls()
                        continue
                    if batch.events:
                        hooks.seen(mark)
                    ready = batch.envelopes if isinstance(batch, _Ready) else None
                    for envelope in ready if ready is not None else envelopes(batch, mark):
                        yield envelope
                        given += 1
                        if given % ENVELOPES_PER_CHECKPOINT == 0:
                            # A yield lets no other task run: the consumer's loop over a
                            # large batch would hold the event loop for as long as it takes.
                            await checkpoint()
                    # The consumer has taken every event of the batch: record the progress.
                    if follow_state is not None:
                        mark.record(follow_state)
                        if follow_state.dirty:
                            await follower.run_step(follow_state.save_if_due)
                    controls()
        controls()
        hooks.end_all(follower.ended_by or "stopped", cut_at_stop)
    finally:
        if follow_state is not None:
            import anyio

            with anyio.CancelScope(shield=True):  # written whole, or not at all (atomic)
                await follower.run_step(follow_state.save)
    if torn:
        raise torn[0]


@dataclass(slots=True)
class _Ready(Batch):
    """A batch and its envelopes, made in the follow's thread."""

    envelopes: list[Envelope] = field(default_factory=list)


def _make(
    targets: Sequence[Source] | None,
    *,
    harness: str,
    env: Mapping[str, str] | None,
    promote: Sequence[str],
    max_payload_bytes: int,
    stages: Sequence[Stage],
    **options: Any,
) -> tuple[Follower, FollowState | None, list[Stage]]:
    """The follower *targets* need (the CLI's): an OpenCode database or a Cline task
    folder through its harness's tail, anything else line by line."""
    from typing import cast

    from agentminutes.live.documents import document_follower
    from agentminutes.live.follower import make_follower

    chain = build_stages(promote=promote, max_payload_bytes=max_payload_bytes, stages=stages)
    if targets is not None and len(targets) == 1:
        documents = document_follower(
            [os.fspath(targets[0])],
            harness=harness,
            state=options.get("state"),
            idle_exit=options.get("idle_exit"),
            options=ParseOptions(
                permissive=options.get("permissive", False),
                keep_raw=options.get("keep_raw", False),
                harness_version=options.get("harness_version", ""),
                text_form=options.get("text_form", "bare"),
            ),
        )
        if documents is not None:
            documents.stop_event = options.get("stop_event")
            if options.get("notice") is not None:
                documents.config.notice = options["notice"]
            return cast("Follower", documents), None, chain
    follower, follow_state = make_follower(
        _targets(targets, harness, env), harness=harness, **options
    )
    return follower, follow_state, chain


_Made = tuple["Follower", "FollowState | None", list[Stage]]


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

    Raises:
        ParseError: a line no rule accepts; or, at the end, a last line left
            incomplete at the stop (without *state*: with one, the next run
            reads it whole), as ``convert`` reports a cut-off record.
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


def follow_many(
    targets: Sequence[Source] | None = None,
    *,
    harness: str = "auto",
    cwd: str | None = None,
    session_id: str | None = None,
    env: Mapping[str, str] | None = None,
    state: Source | None = None,
    from_end: bool = False,
    start_at: Mapping[str, int] | None = None,
    idle_exit: float | None = None,
    poll: bool = False,
    stop: anyio.Event | None = None,
    on_error: OnError | None = None,
    on_done: Callable[[str], None] | None = None,
    on_restart: Callable[[str], None] | None = None,
    on_start: Callable[[Started], None] | None = None,
    on_end: Callable[[Ended], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    permissive: bool = False,
    keep_raw: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    stages: Sequence[Stage] = (),
) -> Following:
    """Events of several transcripts, or of every transcript under folders, as they are written.

    Returns a :class:`Following`: iterate it for :class:`~agentminutes.Envelope` s
    (``transcript``, ``harness``, ``id``, ``session_id``, ``is_subagent``,
    ``event``), and call its :meth:`~Following.done` when an agent has
    finished, so its last message comes out at once. Folders are watched for
    transcripts that appear later (subagents start mid-session). With no
    *targets*, the default transcript folders of *harness*, found in *env*
    (default ``os.environ``: ``HOME``, ``CODEX_HOME``, ``CLAUDE_CONFIG_DIR`` …)
    as :func:`scan` finds them; *cwd* and *session_id* keep only the sessions
    whose ``session_meta`` matches.

    Args:
        on_error: told each error of one transcript — a line no rule accepts
            (a :class:`ParseError` naming file, harness, version and line), a
            file that cannot be read, and at a stop a last line left incomplete
            — after that transcript's events before it; the transcript is no
            longer read and the others go on. Without it the error is raised
            from the iteration (a torn last line at the end, and only without
            *state*: with one, the next run reads it whole).
        on_done: told the name of each transcript that ended (:meth:`Following.done`,
            removed, failed, or at a stop or idle exit), once, after its last event.
        start_at: per transcript path, the byte offset to start at (0, or just past
            a newline): what the caller has read of the file already, so the follow
            takes over exactly there (``usage`` summarizes the complete lines, then
            follows from where it stopped). The lines before the offset are read
            but their events not delivered, except ``session_meta`` (a message they
            begin and later lines complete comes out whole, as with *from_end*). It
            applies to the transcripts found when the follow starts, in place of
            *from_end*; one found later is new and starts at 0; a saved *state*
            entry comes first. A file shorter than its offset, or without a newline
            just before it, changed since it was read: it is followed from its
            start, after *on_restart* is told.
        on_start: told each transcript as it begins (a :class:`Started`: a session's
            own, or a subagent's, ``is_subagent``), before its first envelope.
        on_end: told each transcript's end once, after its last envelope (an
            :class:`Ended`): ``done``, ``removed``, ``error`` (with the error),
            ``stopped`` or ``idle``; at a stop a session's subagents end before it.
            *on_done* is told the same ends, by name.
        on_notice: told what the follow has to say that is no error (a folder
            polled, a file moved); nothing goes to stderr.
        on_restart: told the name of each transcript whose content started over —
            truncated or rewritten in place, replaced by another file, or not what
            *start_at* said — after the events of its old content and before those
            read from its new start (a consumer keeping totals drops the old ones).
            A whole document rewritten (how Gemini CLI records a turn) is not a
            restart: only its new events come.

    Other keywords as in :func:`follow`.
    """
    if idle_exit is not None and idle_exit <= 0:
        raise UsageError("idle exit must be a positive number of seconds")

    def make() -> _Made:
        return _make(
            targets,
            harness=harness,
            env=env,
            promote=promote,
            max_payload_bytes=max_payload_bytes,
            stages=stages,
            state=state,
            from_end=from_end,
            start_at=start_at,
            idle_exit=idle_exit,
            poll=poll,
            cwd=cwd,
            session_id=session_id,
            permissive=permissive,
            keep_raw=keep_raw,
            harness_version=harness_version,
            text_form=text_form,
            stop_event=stop,
            notice=on_notice or _silent,
        )

    hooks = _Hooks(
        on_error=on_error,
        on_done=on_done,
        on_restart=on_restart,
        on_start=on_start,
        on_end=on_end,
    )
    return Following(make, hooks)


async def follow_to(
    to: str,
    targets: Sequence[Source] | None = None,
    *,
    harness: str = "auto",
    cwd: str | None = None,
    session_id: str | None = None,
    env: Mapping[str, str] | None = None,
    state: Source | None = None,
    from_end: bool = False,
    idle_exit: float | None = None,
    poll: bool = False,
    stop: anyio.Event | None = None,
    on_notice: Callable[[str], None] | None = None,
    permissive: bool = False,
    keep_raw: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    stages: Sequence[Stage] = (),
) -> int:
    """Follow into a sink, as ``agentminutes follow --to TO`` does; return the events delivered.

    *to* is what ``--to`` takes: ``file:PATH``, ``tcp://HOST:PORT`` or
    ``unix:PATH`` (``?ack=1``, ``?buffer=BYTES``), or ``otlp+http://HOST:PORT``
    (spans; the ``[otel]`` extra). *state* records only what
    the sink delivered: for a socket, what the collector acknowledged (or,
    without acknowledgements, what the kernel accepted). Runs until *stop*
    or *idle_exit*, then gives the sink 10 s to deliver the rest; raises
    :class:`SourceError` if it could not. Installs no signal handlers.
    Errors of one transcript are reported on stderr as the CLI reports them.
    """
    from agentminutes.live.runner import Progress, run_follow

    if idle_exit is not None and idle_exit <= 0:
        raise UsageError("idle exit must be a positive number of seconds")

    def make() -> _Made:
        return _make(
            targets,
            harness=harness,
            env=env,
            promote=promote,
            max_payload_bytes=max_payload_bytes,
            stages=stages,
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
            notice=on_notice or _silent,
        )

    follower, follow_state, chain = await _off_loop(make)
    progress = Progress(follow_state)
    # The command line's engine: the same sources, stages, sinks and checkpoints.
    await run_follow(
        follower,
        stages=chain,
        to=to,
        state=follow_state,
        notice=follower.config.notice,
        summary=False,
        progress=progress,
        signals=False,
    )
    return progress.events


async def _off_loop(fn: Callable[[], _T]) -> _T:
    """*fn* (imports, stats, scans) on a thread of its own, which ends with the call."""
    from agentminutes.pipeline.worker import off_loop

    return await off_loop(fn, "agentminutes-start")
