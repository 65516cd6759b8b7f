"""Running a follow to the end: follower → stages → sink, progress recorded, signals handled.

This is what ``agentminutes follow`` runs. Progress goes into the state file
only for batches the sink has delivered (stdout: written to the pipe; a
file: written, and fsynced before the state is; a socket: acknowledged by the
collector, or accepted by the kernel), one journal line per batch, so a follower killed at any moment
repeats at most the batch in flight.

What the transcripts hold when the follow starts is read and written before
the event loop is even loaded (:func:`_write_primed`): a resumed follower's
first events come out within a few tens of milliseconds of its start.

Signals: the first SIGINT or SIGTERM stops the follower — it scans its
folders once more, reads what is on disk and, unless it is a SIGTERM with
``--state``, flushes held events — and gives the whole stop
:data:`STOP_GRACE_S` (a sink that cannot deliver, a huge backlog). A second
signal hurries it: :data:`HURRY_S` more, then it gives up; a third gives up
at once. Giving up is never silent: the exit status is 1 and stderr says what
was not written (with ``--state``, the next run writes it). Standard output
is written without blocking (:class:`~agentminutes.sinks.stdout.StdoutSink`),
so a reader that stops reading cannot make the follower unstoppable.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, aclosing, asynccontextmanager, nullcontext
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

import msgspec

from agentminutes.errors import SourceError
from agentminutes.formats import offered
from agentminutes.harness.base import detects
from agentminutes.live.follower import Follower, Mark
from agentminutes.live.ids import event_id
from agentminutes.live.signals import early_signals
from agentminutes.live.state import FollowState
from agentminutes.pipeline.batch import Batch, Stage, apply_stages
from agentminutes.sinks.encoding import Encode, jsonl_encoder, one_line
from agentminutes.sinks.protocol import OnDelivered
from agentminutes.sinks.stdout import BUFFER_BYTES, StdoutSink
from agentminutes.sinks.streams import FileSink, parse_sink_spec

if TYPE_CHECKING:
    import anyio
    import anyio.abc


__all__ = (
    "HURRY_S",
    "STOP_GRACE_S",
    "EnvelopeEncoder",
    "envelope_encoder",
    "follow_main",
    "open_sink",
    "run_follow",
    "wants_envelopes",
)

#: How long a stop may take, reading what is left and delivering it (s).
STOP_GRACE_S: Final = 10.0
#: How long a stop may take once a second signal came (s).
HURRY_S: Final = 1.0
#: Least time between two syncs of the state while events flow (s); a stop always saves.
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
    state: FollowState | None = None,
    otel_content: bool = False,
) -> AsyncIterator[_FollowSink]:
    """The sink a ``--to`` value names, open for the duration of the block.

    *state* and *otel_content* are for ``otlp+http://``: the entries a resumed
    follow starts from, and whether spans carry content.
    """
    kind, where, options = parse_sink_spec(spec)
    if kind == "otlp":
        from agentminutes.live.otlp import OtlpSink, otlp_endpoint

        async with OtlpSink(
            otlp_endpoint(where),
            on_delivered=on_delivered,
            notice=notice,
            saved=state.entries if state is not None else None,
            content=otel_content,
        ) as otlp_sink:
            yield otlp_sink
        return
    if kind in ("stdout", "file"):
        sink = _sync_sink(kind, where, encode, on_delivered=on_delivered, notice=notice)
        try:
            yield sink
        finally:
            await sink.aclose()
        return
    from agentminutes.sinks.sockets import SocketSink

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


def _sync_sink(
    kind: str,
    where: str,
    encode: Encode,
    *,
    on_delivered: OnDelivered,
    notice: Callable[[str], None],
) -> StdoutSink | FileSink:
    """A sink that takes batches without an event loop (stdout, a file)."""
    if kind == "stdout":
        return StdoutSink(encode, on_delivered=on_delivered)
    return FileSink(where, encode, notice=notice)


class Progress:
    """Delivered marks into the state file; the journal synced at most once a second."""

    def __init__(self, state: FollowState | None) -> None:
        self.state = state
        self.events = 0

    def delivered(self, mark: Any) -> None:
        if self.state is not None and isinstance(mark, Mark):
            mark.record(self.state)

    async def save_periodically(self, sink: _FollowSink) -> None:
        """Sync once a second while progress is unsaved (the pipeline may be waiting on a
        full sink buffer meanwhile, delivering in the background)."""
        import anyio

        while True:
            await anyio.sleep(SAVE_INTERVAL_S)
            self.maybe_save(sink)

    def maybe_save(self, sink: _FollowSink) -> None:
        if self.state is not None and self.state.dirty:
            sink.sync()  # the output is durable before the progress claiming it is
            self.state.save_if_due(SAVE_INTERVAL_S)

    def save(self, sink: _FollowSink) -> None:
        if self.state is not None:
            sink.sync()
            self.state.close()


class _Stop:
    """What the signals asked for, and the deadline of the whole stop."""

    def __init__(self, follower: Follower, has_state: bool) -> None:
        self.follower = follower
        self.has_state = has_state
        self.signals = 0
        self.scope: anyio.CancelScope | None = None

    def on_signal(self, signum: int) -> None:
        import anyio

        self.signals += 1
        scope = self.scope
        assert scope is not None
        now = anyio.current_time()
        if self.signals == 1:
            # SIGTERM with --state is a pause (a supervisor restarting us): keep what
            # the adapters hold in the state; otherwise write it now.
            self.follower.stop(flush=not (signum == signal.SIGTERM and self.has_state))
            scope.deadline = min(scope.deadline, now + STOP_GRACE_S)
        elif self.signals == 2:
            scope.deadline = min(scope.deadline, now + HURRY_S)
        else:
            scope.cancel()

    async def watch(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        import anyio

        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            task_status.started()
            while early_signals:
                self.on_signal(early_signals.pop(0))
            async for signum in signals:
                self.on_signal(signum)


async def run_follow(
    follower: Follower,
    *,
    stages: Sequence[Stage] = (),
    to: str = "-",
    state: FollowState | None = None,
    notice: Callable[[str], None],
    summary: bool = True,
    sink: StdoutSink | FileSink | None = None,
    progress: Progress | None = None,
    otel_content: bool = False,
    signals: bool = True,
) -> int:
    """Follow until a signal or ``idle_exit``; return the exit status.

    *sink* and *progress*: the ones :func:`_write_primed` already wrote to;
    *otel_content*: spans to ``otlp+http://`` carry content; *signals*: SIGINT and
    SIGTERM stop it (the command line; a library call installs no handler).
    """
    import anyio

    progress = progress or Progress(state)
    encode = envelope_encoder() if follower.multi or wants_envelopes(to) else jsonl_encoder()
    sink_cm: AbstractAsyncContextManager[Any]
    if sink is None:
        sink_cm = open_sink(
            to,
            encode,
            on_delivered=progress.delivered,
            notice=notice,
            state=state,
            otel_content=otel_content,
        )
    else:
        sink_cm = nullcontext(sink)
    stop = _Stop(follower, state is not None)
    outcome = ""
    async with sink_cm as out:
        try:
            with anyio.CancelScope() as scope:
                stop.scope = scope
                async with anyio.create_task_group() as tg:
                    if signals:
                        await tg.start(stop.watch)
                    if state is not None:
                        tg.start_soon(progress.save_periodically, out)
                    if isinstance(out, StdoutSink):
                        await out.drain()  # what the start-up write left for the reader
                    async with aclosing(follower.batches()) as source:
                        async for batch in apply_stages(source, stages, keep_marks=True):
                            progress.events += len(batch.events)
                            await out.send(batch)
                            if not out.deferred:
                                progress.delivered(batch.mark)
                    if stop.signals == 0:  # idle_exit: the sink gets the grace a stop gets
                        scope.deadline = min(scope.deadline, anyio.current_time() + STOP_GRACE_S)
                    finish = getattr(out, "finish", None)
                    if finish is not None:  # spans still open: out now, or kept for the next run
                        finish(flush=follower.flushes)
                    await out.aclose()
                    tg.cancel_scope.cancel()
            if scope.cancelled_caught:
                outcome = _undelivered(follower, out)
        finally:
            progress.save(out)  # synchronous: a cancellation cannot cut it short
            if sink is not None:
                sink.close()
    if summary:
        skipped = follower.skipped
        text = (
            f"{progress.events} events from "
            f"{getattr(follower, 'followed', None) or len(follower.files)} transcript(s), "
            f"{sum(skipped.values())} skipped records"
        )
        if skipped:
            text += " (" + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())) + ")"
        notice(text)
    if outcome:
        raise SourceError(
            f"{to if to not in ('', '-') else 'stdout'}: stopped before {outcome}"
            + (
                "; the state file records what was delivered: the next run writes the rest"
                if state is not None
                else ""
            )
        )
    return 0


def _undelivered(follower: Follower, sink: Any) -> str:
    """What a stop that was cut short did not write, in words."""
    parts = []
    if not getattr(follower, "completed", True):
        parts.append("reading every transcript to its end and writing what they held")
    spans = int(getattr(sink, "pending_spans", 0) or 0)
    if spans:
        parts.append(f"exporting {spans} spans the collector had not accepted")
    pending = int(getattr(sink, "pending_bytes", 0) or 0)
    if pending:
        if isinstance(sink, StdoutSink):
            parts.append(f"writing {pending} bytes the reader did not take")
        else:
            taken = "acknowledged" if getattr(sink, "ack", False) else "accepted"
            parts.append(f"delivering {pending} bytes the collector had not {taken}")
    return " and ".join(parts) or "its end"


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
    otel_content: bool = False,
) -> int:
    """``agentminutes follow`` with its options already parsed (see :mod:`agentminutes.cli.spec`).

    Secrets are redacted by default when events leave the machine (``tcp://``,
    ``unix:``, ``otlp+http://``), on request otherwise (stdout and files print
    what ``convert`` prints).
    """
    from agentminutes.errors import UsageError
    from agentminutes.harness import adapter_class
    from agentminutes.live.follower import make_follower, resolve_targets
    from agentminutes.stages import build_stages
    from agentminutes.stages.redact import redaction, redaction_choice

    if fmt not in offered("follow"):
        raise UsageError("follow writes jsonl: one event per line as it arrives")
    if max_payload_bytes < 0:
        raise UsageError("--max-payload-bytes must be 0 (keep whole) or positive")
    kind, where, _ = parse_sink_spec(to)
    if kind == "otlp":
        from agentminutes.live.otlp import load_exporter, otlp_endpoint

        otlp_endpoint(where)
        load_exporter()  # before the follow starts: see load_exporter
    elif otel_content:
        raise UsageError("--otel-content is for --to otlp+http://HOST:PORT")
    leaves = kind not in ("stdout", "file")
    choice = redaction_choice(
        redact,
        no_redact,
        patterns=redact_pattern or (),
        config=redact_config,
        default=leaves,
        where=f"to {to}",
    )
    redactor = redaction(
        choice, default=leaves, patterns=redact_pattern or (), config=redact_config
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
        if kind == "otlp":
            raise UsageError(
                "follow --to otlp+http takes line transcripts; write the spans of a database "
                "or an export with convert --format otlp-json"
            )
        try:
            return _run_documents(cast("Follower", documents), stages, to)
        finally:
            if redactor is not None:
                print(f"agentminutes: {redactor.summary()}", file=sys.stderr, flush=True)
    if not detects(harness):
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
    progress = Progress(follow_state)
    sink: StdoutSink | FileSink | None = None
    if kind in ("stdout", "file"):
        encode = envelope_encoder() if follower.multi else jsonl_encoder()
        sink = _sync_sink(
            kind, where, encode, on_delivered=progress.delivered, notice=follower.config.notice
        )
        if not stages:
            _write_primed(follower, sink, progress)

    async def main() -> int:
        return await run_follow(
            follower,
            stages=stages,
            to=to,
            state=follow_state,
            notice=follower.config.notice,
            sink=sink,
            progress=progress,
            otel_content=otel_content,
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
    """Follow a document source (see :mod:`agentminutes.live.documents`): no state."""
    kind, where, _ = parse_sink_spec(to)
    progress = Progress(None)
    sink: StdoutSink | FileSink | None = None
    if kind in ("stdout", "file"):
        sink = _sync_sink(
            kind,
            where,
            envelope_encoder(),
            on_delivered=progress.delivered,
            notice=follower.config.notice,
        )
        if not stages:
            _write_primed(follower, sink, progress)

    async def main() -> int:
        return await run_follow(
            follower,
            stages=stages,
            to=to,
            notice=follower.config.notice,
            sink=sink,
            progress=progress,
        )

    import anyio

    try:
        return anyio.run(main)
    except BaseExceptionGroup as group:
        raise _first_leaf(group) from None


def _write_primed(follower: Follower, sink: StdoutSink | FileSink, progress: Progress) -> None:
    """Write what the transcripts already hold, before the event loop starts.

    Only without stages (a stage is asynchronous). Each batch is written as
    it is read and recorded once delivered, so memory does not grow with what
    is on disk and a follower killed meanwhile resumes after the last batch
    written. A signal ends this early: the event loop takes over and stops.
    """
    for batch in follower.prime():
        progress.events += len(batch.events)
        sink.put(batch)
        if not sink.deferred:
            progress.delivered(batch.mark)
        elif isinstance(sink, StdoutSink):
            while sink.pending_bytes > BUFFER_BYTES and not early_signals:
                sink.wait_writable(0.05)
        if early_signals:
            return
    if isinstance(sink, StdoutSink):
        sink.wait_writable(0)


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc
