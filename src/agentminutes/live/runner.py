"""Running a follow to the end: follower → stages → sink, progress saved, signals handled.

This is what ``agentminutes follow`` runs. Progress goes into the state file
only for batches the sink has taken (for the socket sink: that the collector
acknowledged, or the kernel accepted), and an output file is fsynced before each state save, so a state
file never claims more than was delivered.

Signals: the first SIGINT or SIGTERM stops the follower (it reads what is on
disk and, unless it is a SIGTERM with ``--state``, flushes held events), and
gives the sink :data:`STOP_GRACE_S` to deliver the rest; a second signal, or
the end of the grace period, stops at once. Progress delivered so far is saved
either way.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, aclosing, asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

import msgspec

from agentminutes.errors import SourceError
from agentminutes.live.follower import Follower, Mark
from agentminutes.live.ids import event_id
from agentminutes.live.signals import early_signals
from agentminutes.live.state import FollowState
from agentminutes.pipeline.batch import Batch, Stage, apply_stages
from agentminutes.sinks.encoding import Encode, jsonl_encoder, one_line
from agentminutes.sinks.protocol import OnDelivered
from agentminutes.sinks.sockets import SocketSink
from agentminutes.sinks.streams import FileSink, StreamSink, parse_sink_spec

if TYPE_CHECKING:
    import anyio
    import anyio.abc


__all__ = (
    "STOP_GRACE_S",
    "EnvelopeEncoder",
    "envelope_encoder",
    "follow_main",
    "open_sink",
    "run_follow",
)

#: How long a stopped follow waits for its sink to deliver what is buffered (s).
STOP_GRACE_S: Final = 10.0
#: Least time between two state saves while events flow (s); a stop always saves.
SAVE_INTERVAL_S: Final = 1.0


class _FollowSink(Protocol):
    deferred: bool

    async def send(self, batch: Batch) -> None: ...

    def sync(self) -> None: ...

    async def aclose(self) -> None: ...


class EnvelopeEncoder:
    """JSONL of :class:`~agentminutes.live.follower.Envelope` s, the multi-transcript output.

    Each line is ``{"transcript": PATH, "harness": NAME, "id": ID, "session_id": S,
    "is_subagent": B, "event": EVENT}``, EVENT byte for byte what ``convert
    --format jsonl`` writes and ID its deterministic id (:mod:`agentminutes.live.ids`).
    """

    def __init__(self) -> None:
        self._encoder = msgspec.json.Encoder()

    def __call__(self, batch: Batch) -> bytes:
        return self.encode_with_ids(batch)[0]

    def encode_with_ids(self, batch: Batch) -> tuple[bytes, list[str]]:
        """The batch's lines, and the id of each line's event (what collectors acknowledge)."""
        if not batch.events:
            return b"", []
        mark = batch.mark
        assert isinstance(mark, Mark)
        enc = self._encoder.encode
        head = (
            b'{"transcript":'
            + enc(mark.transcript)
            + b',"harness":'
            + enc(mark.harness)
            + b',"id":"'
        )
        mid = (
            b'","session_id":'
            + enc(mark.session_id)
            + (
                b',"is_subagent":true,"event":'
                if mark.is_subagent
                else b',"is_subagent":false,"event":'
            )
        )
        buf = bytearray()
        ids = []
        for ev in batch.events:
            data = one_line(enc(ev))
            eid = event_id(mark.identity, ev, data)
            ids.append(eid)
            buf += head
            buf += eid.encode()
            buf += mid
            buf += data
            buf += b"}\n"
        return bytes(buf), ids


def envelope_encoder() -> EnvelopeEncoder:
    """The encoder of envelope lines (see :class:`EnvelopeEncoder`)."""
    return EnvelopeEncoder()


@asynccontextmanager
async def open_sink(
    spec: str,
    encode: Encode,
    *,
    on_delivered: OnDelivered,
    notice: Callable[[str], None],
) -> AsyncIterator[_FollowSink]:
    """The sink a ``--to`` value names, open for the duration of the block."""
    kind, where, options = parse_sink_spec(spec)
    if kind == "stdout":
        yield StreamSink(sys.stdout.buffer, encode)
        return
    if kind == "file":
        sink = FileSink(where, encode, notice=notice)
        try:
            yield sink
        finally:
            await sink.aclose()
        return
    buffer_bytes = int(options.get("buffer") or 4 << 20)
    ack = bool(options.get("ack"))
    encode_ids = encode.encode_with_ids if isinstance(encode, EnvelopeEncoder) else None
    async with SocketSink(
        where,
        encode,
        on_delivered=on_delivered,
        notice=notice,
        buffer_bytes=buffer_bytes,
        ack=ack,
        encode_ids=encode_ids,
    ) as socket_sink:
        yield socket_sink


def wants_envelopes(spec: str) -> bool:
    """Whether the sink *spec* names needs envelopes even for one transcript.

    An acknowledging collector names event ids, which envelopes carry.
    """
    kind, _, options = parse_sink_spec(spec)
    return kind in ("tcp", "unix") and bool(options.get("ack"))


class _Progress:
    """Delivered marks into the state file, saved at most once a second and at the end."""

    def __init__(self, state: FollowState | None) -> None:
        self.state = state
        self.events = 0
        self._last_save = time.monotonic()

    def delivered(self, mark: Any) -> None:
        if self.state is not None and isinstance(mark, Mark) and mark.entry is not None:
            self.state.update(mark.transcript, mark.entry)

    async def save_periodically(self, sink: _FollowSink) -> None:
        import anyio

        """Save once a second while progress is unsaved (the pipeline may be
        waiting on a full sink buffer meanwhile, delivering in the background)."""
        while True:
            await anyio.sleep(SAVE_INTERVAL_S)
            self.maybe_save(sink)

    def maybe_save(self, sink: _FollowSink) -> None:
        if self.state is not None and self.state.dirty:
            now = time.monotonic()
            if now - self._last_save >= SAVE_INTERVAL_S:
                self.save(sink)

    def save(self, sink: _FollowSink) -> None:
        sink.sync()
        if self.state is not None:
            self.state.save()
        self._last_save = time.monotonic()


async def run_follow(
    follower: Follower,
    *,
    stages: Sequence[Stage] = (),
    to: str = "-",
    state: FollowState | None = None,
    notice: Callable[[str], None],
    summary: bool = True,
    delivered: Sequence[Batch] = (),
) -> int:
    import anyio

    """Follow until a signal or ``idle_exit``; return the exit status.

    *delivered* are batches already written (by :func:`_write_primed`): they
    count toward the summary and the saved progress.
    """
    progress = _Progress(state)
    for batch in delivered:
        progress.events += len(batch.events)
        progress.delivered(batch.mark)
    encode = envelope_encoder() if follower.multi or wants_envelopes(to) else jsonl_encoder()
    sink_cm: AbstractAsyncContextManager[_FollowSink] = open_sink(
        to, encode, on_delivered=progress.delivered, notice=notice
    )
    undelivered = 0
    async with sink_cm as sink:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                await tg.start(_watch_signals, follower, scope, state is not None)
                if state is not None:
                    tg.start_soon(progress.save_periodically, sink)
                try:
                    async with aclosing(follower.batches()) as source:
                        staged = apply_stages(source, stages, keep_marks=True)
                        async for batch in staged:
                            await sink.send(batch)
                            progress.events += len(batch.events)
                            if not sink.deferred:
                                progress.delivered(batch.mark)
                            progress.maybe_save(sink)
                    # Give the sink a bounded time to deliver what it still buffers.
                    scope.deadline = min(scope.deadline, anyio.current_time() + STOP_GRACE_S)
                    await sink.aclose()
                finally:
                    progress.save(sink)  # synchronous: a cancellation cannot cut it short
                tg.cancel_scope.cancel()
        if scope.cancelled_caught and isinstance(sink, SocketSink):
            undelivered = sink.pending_bytes
    if summary:
        skipped = follower.skipped
        text = (
            f"{progress.events} events from {len(follower.files)} transcript(s), "
            f"{sum(skipped.values())} skipped records"
        )
        if skipped:
            text += " (" + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())) + ")"
        notice(text)
    if undelivered:
        raise SourceError(
            f"{to}: stopped with {undelivered} bytes the collector had not "
            + ("acknowledged" if isinstance(sink, SocketSink) and sink.ack else "accepted")
            + ("; they are sent again from the state file next time" if state else "")
        )
    return 0


async def _watch_signals(
    follower: Follower,
    scope: anyio.CancelScope,
    has_state: bool,
    *,
    task_status: anyio.abc.TaskStatus[None],
) -> None:
    import anyio

    def on_signal(signum: int) -> None:
        if follower.stopping:
            scope.cancel()
            return
        # SIGTERM with --state is a pause (a supervisor restarting us): keep what
        # the adapters hold in the state; otherwise write it now.
        follower.stop(flush=not (signum == signal.SIGTERM and has_state))
        scope.deadline = anyio.current_time() + STOP_GRACE_S

    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        while early_signals:
            on_signal(early_signals.pop(0))
        async for signum in signals:
            on_signal(signum)


def follow_main(
    *,
    targets: Sequence[str] | None = None,
    harness: str = "auto",
    fmt: str = "jsonl",
    to: str = "-",
    state: str | None = None,
    from_end: bool = False,
    idle_exit: float | None = None,
    cwd: str | None = None,
    session_id: str | None = None,
    poll: bool = False,
    harness_version: str = "",
    permissive: bool = False,
    keep_raw: bool = False,
    max_payload_bytes: int = 0,
    promote: Sequence[str] | None = None,
    text_form: str = "bare",
    redact: bool = False,
    no_redact: bool = False,
    redact_pattern: Sequence[str] | None = None,
    redact_config: str | None = None,
) -> int:
    """``agentminutes follow`` with its options already parsed (see :mod:`agentminutes.cli.spec`).

    Secrets are redacted by default when events leave through a socket
    (``tcp://``, ``unix:``), on request otherwise (stdout and files print what
    ``convert`` prints).
    """
    from agentminutes.errors import UsageError
    from agentminutes.harness import adapter_class
    from agentminutes.live.follower import make_follower, resolve_targets
    from agentminutes.stages import build_stages
    from agentminutes.stages.redact import chosen, redaction

    if fmt != "jsonl":
        raise UsageError("follow writes jsonl: one event per line as it arrives")
    if max_payload_bytes < 0:
        raise UsageError("--max-payload-bytes must be 0 (keep whole) or positive")
    leaves = parse_sink_spec(to)[0] not in ("stdout", "file")
    choice = chosen(redact, no_redact)
    redactor = redaction(
        choice, default=leaves, patterns=redact_pattern or (), config=redact_config
    )
    if choice is False and leaves:
        print(
            f"agentminutes: warning: --no-redact: secrets in the transcripts go to {to} as they are",
            file=sys.stderr,
            flush=True,
        )
    stages = build_stages(
        promote=promote or (), max_payload_bytes=max_payload_bytes, redaction=redactor
    )
    # A database or a task folder is followed through its adapter's tail, not line by line.
    from agentminutes.harness import ParseOptions
    from agentminutes.live.documents import document_follower

    documents = document_follower(
        list(targets or ()),
        harness=harness,
        state=state,
        idle_exit=idle_exit,
        options=ParseOptions(
            permissive=permissive,
            keep_raw=keep_raw,
            harness_version=harness_version,
            text_form=text_form,
        ),
    )
    if documents is not None:
        try:
            return _run_documents(cast("Follower", documents), stages, to)
        finally:
            if redactor is not None:
                print(f"agentminutes: {redactor.summary()}", file=sys.stderr, flush=True)
    if harness not in ("", "auto"):
        adapter_class(harness)
    found = resolve_targets(targets, harness)
    follower, follow_state = make_follower(
        found,
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
    )
    primed = _write_primed(follower) if to == "-" and not stages else []

    async def main() -> int:
        return await run_follow(
            follower,
            stages=stages,
            to=to,
            state=follow_state,
            notice=follower.config.notice,
            delivered=primed,
        )

    import anyio  # after the primed write: the event loop costs tens of milliseconds to load

    try:
        return anyio.run(main)
    except BaseExceptionGroup as group:
        # Task groups wrap what the pipeline raised; the CLI reports the error itself.
        raise _first_leaf(group) from None
    finally:
        if redactor is not None:
            follower.config.notice(redactor.summary())


def _run_documents(follower: Follower, stages: Sequence[Stage], to: str) -> int:
    primed = _write_primed(follower) if to == "-" and not stages else []

    async def main() -> int:
        return await run_follow(
            follower, stages=stages, to=to, notice=follower.config.notice, delivered=primed
        )

    import anyio

    try:
        return anyio.run(main)
    except BaseExceptionGroup as group:
        raise _first_leaf(group) from None


def _write_primed(follower: Follower) -> list[Batch]:
    """Write to stdout what the transcripts already hold, before the event loop starts.

    Only for stdout and no stages (a stage may carry state from batch to
    batch). The batches returned were delivered: their marks go to the state.
    """
    batches = follower.prime()
    encode = envelope_encoder() if follower.multi else jsonl_encoder()
    out = sys.stdout.buffer
    for batch in batches:
        if batch.events:
            out.write(encode(batch))
    out.flush()
    return batches


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc
