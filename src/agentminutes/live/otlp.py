"""Exporting a follow live to an OpenTelemetry collector: ``follow --to otlp+http://HOST:PORT``.

Each transcript's events go through its own
:class:`~agentminutes.formats.otlp_json.SpanProjector` as they arrive, and the spans
they complete (a chat span with its message, a tool span with its result) are
sent with the official OTLP/HTTP exporter (``opentelemetry-exporter-otlp-proto-http``,
the ``[otel]`` extra; imported here only), :data:`OtlpSink.MAX_SPANS` a request
at most, one request in flight, whatever ended meanwhile going in the next. A
tool call still without its result is held by its projector, and exported when
the result comes. The ids are the projection's (hashes of the session and
each event's identity): the spans a follow exports are those ``convert --format
otlp-json`` writes for the same transcript.

Delivery and progress. A batch counts as delivered (its mark goes to
*on_delivered*, what ``--state`` records) once the collector accepted (2xx)
every span it completed, and every batch before it. With ``--state`` each
recorded mark carries the projector's snapshot (``"otel"`` in the transcript's
entry, :meth:`~agentminutes.formats.otlp_json.SpanProjector.snapshot`): a follower
restarted from the state carries on with the open tool calls, times and
counters of the point it resumes at, so across a restart every span is
exported once. (A kill, not a stop, repeats at most the request in flight,
under the same ids.) A failed request (the collector away, a 429, a 5xx, after
the exporter's own retries) is sent again after a backoff, 50 ms doubling to
5 s; meanwhile :meth:`OtlpSink.send` waits once :data:`OtlpSink.BUFFER_SPANS`
spans are unaccepted, which holds the follower back (backpressure) instead of
dropping spans.

At the end of a follow (:meth:`OtlpSink.finish`): a stop that writes what is
held (``SIGINT``, ``--idle-exit``, a follow without ``--state``) also exports
the spans still open — tool calls without a result (ending where they
started) and the ``invoke_agent`` spans, from the first event to the last —
and records that they went out, so a later run does not send them again; a
pause (``SIGTERM`` with ``--state``) keeps them in the state for the next run.
A transcript that ends (removed, moved away) has its open spans exported with
its last batch.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from agentminutes.errors import OptionError, UsageError
from agentminutes.formats.otlp_json import STATUS_ERROR, Span, SpanProjector
from agentminutes.live.config import Mark
from agentminutes.pipeline.batch import Batch
from agentminutes.sinks._writer_task import WriterTask
from agentminutes.sinks.protocol import OnDelivered

if TYPE_CHECKING:
    import anyio.abc

__all__ = ("SNAPSHOT_KEY", "OtlpSink", "load_exporter", "otlp_endpoint")

#: The field of a transcript's ``--state`` entry holding its projector's snapshot.
SNAPSHOT_KEY = "otel"

#: Where OTLP/HTTP collectors take traces when the address names no path.
DEFAULT_PATH = "/v1/traces"


def otlp_endpoint(spec: str) -> str:
    """The HTTP URL of an ``otlp+http://HOST:PORT[/PATH]`` (or ``otlp+https://``) sink.

    Raises:
        OptionError: no host or port (a value ``--to`` does not take).
    """
    scheme, sep, rest = spec.partition("://")
    if not sep or scheme not in ("otlp+http", "otlp+https"):
        raise OptionError(f"--to {spec}: expected otlp+http://HOST:PORT[/PATH]")
    hostport, slash, path = rest.partition("/")
    host, colon, port = hostport.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise OptionError(f"--to {spec}: expected otlp+http://HOST:PORT[/PATH]")
    path = "/" + path if slash and path else DEFAULT_PATH
    return f"{scheme.removeprefix('otlp+')}://{hostport}{path}"


class _Item:
    """One batch: the spans it completed, how many are in a request or accepted, its mark."""

    __slots__ = ("accepted", "harness", "mark", "spans", "taken")

    def __init__(self, spans: list[Span], mark: Any, harness: str) -> None:
        self.spans = spans
        self.mark = mark
        self.harness = harness
        self.taken = 0
        self.accepted = 0


class _LastError(logging.Handler):
    """Keeps the exporter's last log message: why a request failed, for our notice."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.message = ""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.message = record.getMessage()
        except Exception:  # a bad format string in a log call must not stop the export
            self.message = str(record.msg)


class OtlpSink(WriterTask):
    """Spans of the followed transcripts to an OTLP/HTTP collector, live (see the module).

    *saved* is the ``--state`` entries a resumed follow starts from (``None``:
    no state, no snapshots); *content* writes prompts, responses and tool
    input and output into the spans (``--otel-content``). *exporter* is
    anything with the ``SpanExporter`` ``export``/``shutdown`` methods (tests
    pass the real one, pointed at their receiver). Use it as an async context
    manager.
    """

    deferred = True
    #: Spans per request at most (what collectors' default limits take with room to spare).
    MAX_SPANS: ClassVar[int] = 512
    #: Unaccepted spans beyond which :meth:`send` waits.
    BUFFER_SPANS: ClassVar[int] = 8192
    BACKOFF_MIN: ClassVar[float] = 0.05
    BACKOFF_MAX: ClassVar[float] = 5.0
    #: The exporter's own limit per request, its retries of transient failures included (s).
    TIMEOUT_S: ClassVar[float] = 5.0

    def __init__(
        self,
        endpoint: str,
        *,
        on_delivered: OnDelivered | None = None,
        notice: Callable[[str], None] | None = None,
        saved: Mapping[str, Mapping[str, Any]] | None = None,
        content: bool = False,
        exporter: Any = None,
    ) -> None:
        import anyio

        self.endpoint = endpoint
        self._on_delivered = on_delivered
        self._notice = notice or (lambda _m: None)
        self._saved = saved
        self._content = content
        self._exporter = exporter
        self._projectors: dict[str, SpanProjector] = {}
        #: The last entry recorded for each transcript (a final export records it again).
        self._entries: dict[str, dict[str, Any]] = {}
        self._items: deque[_Item] = deque()
        self._pending = 0  # spans taken, not yet accepted
        self._changed = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self._errors = _LastError()
        self._resources: dict[str, Any] = {}
        self._propagate = True
        #: Spans the collector accepted, requests it accepted, requests sent again.
        self.exported_spans = 0
        self.requests = 0
        self.retries = 0

    @property
    def pending_spans(self) -> int:
        """Spans taken but not yet accepted by the collector."""
        return self._pending

    async def __aenter__(self) -> OtlpSink:
        if self._exporter is None:
            load_exporter()  # at once if the follow did not already (see load_exporter)
            self._ensure_exporter()
        log = logging.getLogger("opentelemetry.exporter")
        # The exporter logs each failure (and each of its retries); we say it once per outage.
        log.addHandler(self._errors)
        self._propagate, log.propagate = log.propagate, False
        await self._start_writer()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stop_writer()
        if self._exporter is not None:
            self._exporter.shutdown()
        log = logging.getLogger("opentelemetry.exporter")
        log.removeHandler(self._errors)
        log.propagate = self._propagate

    # -- taking batches --------------------------------------------------------------

    def _projector(self, mark: Mark) -> SpanProjector:
        key = mark.transcript
        projector = self._projectors.get(key)
        if projector is not None:
            return projector
        snap = (self._saved or {}).get(key, {}).get(SNAPSHOT_KEY)
        if snap is not None:
            try:
                projector = SpanProjector.restore(snap, content=self._content)
            except ValueError as exc:
                self._notice(
                    f"{key}: the state's spans cannot be carried on ({exc}); projecting afresh "
                    "from here (the tool calls it held open are not exported)"
                )
        if projector is None:
            projector = SpanProjector(
                mark.harness, session_id=mark.session_id, content=self._content
            )
        self._projectors[key] = projector
        return projector

    async def send(self, batch: Batch) -> None:
        """Project *batch* and take the spans it completes; wait while too many are unaccepted."""
        mark = batch.mark
        if not isinstance(mark, Mark):
            if batch.events:
                raise TypeError("OtlpSink takes the batches of a line follower (marked)")
            return  # nothing to export, no progress to record
        spans: list[Span] = []
        projector = self._projector(mark)
        for ev in batch.events:
            spans.extend(projector.project(ev))
        if mark.done or mark.forget:
            # The transcript ended: nothing more can close what it holds open.
            spans.extend(projector.finish())
        if mark.forget:
            del self._projectors[mark.transcript]
            self._entries.pop(mark.transcript, None)
        elif self._saved is not None and mark.entry is not None:
            mark.entry[SNAPSHOT_KEY] = projector.snapshot()
            self._entries[mark.transcript] = mark.entry
        while self._pending and self._pending + len(spans) > self.BUFFER_SPANS:
            await self._changed.wait()
        self._items.append(_Item(spans, mark, projector.harness))
        self._pending += len(spans)
        self._release()
        self._poke()

    def finish(self, *, flush: bool) -> None:
        """The follow ends: with *flush*, take the spans every transcript still holds open
        (recording, with ``--state``, that they went out)."""
        if not flush:
            return
        for key, projector in self._projectors.items():
            spans = projector.finish()
            entry = self._entries.get(key)
            mark: Mark | None = None
            if entry is not None:
                entry = {**entry, SNAPSHOT_KEY: projector.snapshot()}
                self._entries[key] = entry
                mark = Mark(key, projector.harness, entry=entry)
            if spans or mark is not None:
                self._items.append(_Item(spans, mark, projector.harness))
                self._pending += len(spans)
        self._release()
        self._poke()

    def sync(self) -> None:
        """Nothing to do: delivery is reported through *on_delivered*."""

    async def aclose(self) -> None:
        """Wait until the collector accepted every span taken (cancel to give up)."""
        self._poke()
        while self._items:
            await self._changed.wait()

    # -- delivery -----------------------------------------------------------------

    def _release(self) -> None:
        """Report, in order, the batches whose spans were all accepted."""
        items = self._items
        while items and items[0].accepted == len(items[0].spans):
            item = items.popleft()
            if self._on_delivered is not None and item.mark is not None:
                self._on_delivered(item.mark)

    def _take(self) -> list[tuple[_Item, int]]:
        """The next request: spans not yet sent, in order, :data:`MAX_SPANS` at most."""
        out: list[tuple[_Item, int]] = []
        room = self.MAX_SPANS
        for item in self._items:
            left = len(item.spans) - item.taken
            if not left:
                continue
            n = min(left, room)
            out.append((item, n))
            room -= n
            if not room:
                break
        return out

    async def _writer(self) -> None:
        import anyio
        import anyio.to_thread

        backoff = self.BACKOFF_MIN
        down_since: float | None = None
        while True:
            chunk = self._take()
            if not chunk:
                await self._changed.wait()
                continue
            request: list[tuple[Span, str]] = []
            for item, n in chunk:
                request.extend((s, item.harness) for s in item.spans[item.taken : item.taken + n])
                item.taken += n
            self._errors.message = ""
            # The SDK's imports, the conversion and the request all happen in the worker
            # thread: the event loop (the follower reading) never waits for them.
            ok = await anyio.to_thread.run_sync(self._export, request, abandon_on_cancel=True)
            if not ok:
                for item, n in chunk:
                    item.taken -= n
                self.retries += 1
                if down_since is None:
                    down_since = time.monotonic()
                    why = self._errors.message or "the export failed"
                    self._notice(
                        f"{self.endpoint}: the collector did not accept {len(request)} spans "
                        f"({why}); retrying, holding spans meanwhile"
                    )
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, self.BACKOFF_MAX)
                continue
            if down_since is not None:
                self._notice(
                    f"{self.endpoint}: the collector accepts spans again "
                    f"(after {time.monotonic() - down_since:.1f} s)"
                )
                down_since = None
            backoff = self.BACKOFF_MIN
            for item, n in chunk:
                item.accepted += n
            self._pending -= len(request)
            self.exported_spans += len(request)
            self.requests += 1
            self._release()
            self._poke()

    def _ensure_exporter(self) -> None:
        if self._exporter is None:
            self._exporter = _exporter(self.endpoint, self.TIMEOUT_S)

    def _export(self, request: Sequence[tuple[Span, str]]) -> bool:
        """Export *request* (spans and their harness); runs in a worker thread."""
        from opentelemetry.sdk.trace.export import SpanExportResult

        self._ensure_exporter()
        try:
            result = self._exporter.export(
                [self._readable(span, self._resource(harness)) for span, harness in request]
            )
        except Exception as exc:  # a transport error the exporter let through: retried
            self._errors.message = f"{type(exc).__name__}: {exc}"
            return False
        return bool(result == SpanExportResult.SUCCESS)

    def _readable(self, span: Span, resource: Any) -> Any:
        """*span* as the SDK's ``ReadableSpan``, what the exporter encodes."""
        from opentelemetry.sdk.trace import ReadableSpan
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope
        from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

        from agentminutes._version import __version__

        trace_id = int(span.trace_id, 16)
        context = SpanContext(
            trace_id,
            int(span.span_id, 16),
            is_remote=False,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )
        parent = (
            SpanContext(trace_id, int(span.parent_span_id, 16), is_remote=False)
            if span.parent_span_id
            else None
        )
        status = (
            Status(StatusCode.ERROR, span.status_message or None)
            if span.status_code == STATUS_ERROR
            else Status(StatusCode.UNSET)
        )
        return ReadableSpan(
            span.name,
            context=context,
            parent=parent,
            resource=resource,
            attributes={
                k: tuple(v) if isinstance(v, list) else v for k, v in span.attributes.items()
            },
            # OTLP's kinds count from 1 (0 is unspecified), the API's from 0.
            kind=SpanKind(span.kind - 1),
            status=status,
            start_time=span.start_time_unix_nano,
            end_time=span.end_time_unix_nano,
            instrumentation_scope=InstrumentationScope("agentminutes", __version__),
        )

    def _resource(self, harness: str) -> Any:
        """The resource spans of *harness* are under (``service.name``, as in otlp-json)."""
        resource = self._resources.get(harness)
        if resource is None:
            from opentelemetry.sdk.resources import Resource

            resource = Resource({"service.name": harness or "unknown"})
            self._resources[harness] = resource
        return resource


def load_exporter() -> None:
    """Import the exporter and the SDK parts the sink uses.

    ``follow`` calls it before it starts following: the imports take a good
    fraction of a second (more on a loaded machine), which must delay neither
    the first spans nor the follower's reading (its ``--idle-exit`` clock).

    Raises:
        UsageError: the ``[otel]`` extra is not installed.
    """
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.resources
        import opentelemetry.sdk.trace
        import opentelemetry.sdk.trace.export  # noqa: F401
    except ImportError:
        raise UsageError(
            "--to otlp+http needs the OpenTelemetry exporter: pip install 'agentminutes-py[otel]'"
        ) from None


def _exporter(endpoint: str, timeout: float) -> Any:
    """The official OTLP/HTTP span exporter for *endpoint* (headers, certificates and
    compression from the usual ``OTEL_EXPORTER_OTLP_TRACES_*`` variables)."""
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        raise UsageError(
            "--to otlp+http needs the OpenTelemetry exporter: pip install 'agentminutes-py[otel]'"
        ) from None
    return OTLPSpanExporter(endpoint=endpoint, timeout=timeout)
