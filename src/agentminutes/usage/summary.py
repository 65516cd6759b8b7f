"""One transcript's usage summary: its identity and its API requests, compact enough to cache.

:func:`summarize` parses a transcript (permissively: a record no rule knows is
counted, not fatal) and folds its events into requests with
:class:`~agentminutes.schema.usage.RequestFolder`. The summary is what the
cache keeps per transcript and what a report is built from; it does not depend
on prices, filters or grouping.
"""

from __future__ import annotations

import os

import msgspec

from agentminutes import timestamps
from agentminutes.errors import AgentminutesError
from agentminutes.schema import Meta, TokenUsage
from agentminutes.schema.usage import OtelUsage, Request, RequestFolder

__all__ = ("CachedRequest", "TranscriptSummary", "lines_end", "summarize")


class CachedRequest(msgspec.Struct, array_like=True, omit_defaults=False):
    """One request, as a flat array (a home holds hundreds of thousands of them)."""

    ns: int
    model: str
    key: str
    agent_id: str
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    #: The normalized view; ``otel_input`` is ``None`` for a harness without a rule.
    otel_input: int | None
    otel_output: int | None
    otel_cache_read: int | None
    otel_cache_creation: int | None
    reasoning: int | None
    cache_creation_5m: int | None
    cache_creation_1h: int | None
    reported_cost: float | None

    def raw(self) -> TokenUsage:
        """The counts as the harness recorded them."""
        return TokenUsage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens,
        )

    def otel(self) -> OtelUsage | None:
        """The normalized view, ``None`` where the harness has no rule."""
        if self.otel_input is None:
            return None
        return OtelUsage(
            input_tokens=self.otel_input,
            output_tokens=self.otel_output or 0,
            cache_read_input_tokens=self.otel_cache_read or 0,
            cache_creation_input_tokens=self.otel_cache_creation or 0,
            reasoning_output_tokens=self.reasoning,
            cache_creation_5m_input_tokens=self.cache_creation_5m,
            cache_creation_1h_input_tokens=self.cache_creation_1h,
        )


def compact(req: Request) -> CachedRequest:
    """The cacheable form of a :class:`~agentminutes.schema.usage.Request`."""
    o = req.otel
    u = req.usage
    return CachedRequest(
        ns=(timestamps.to_ns(req.timestamp) or 0) if req.timestamp else 0,
        model=req.model,
        key=req.key,
        agent_id=req.agent_id,
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_read_input_tokens=u.cache_read_input_tokens,
        cache_creation_input_tokens=u.cache_creation_input_tokens,
        otel_input=o.input_tokens if o is not None else None,
        otel_output=o.output_tokens if o is not None else None,
        otel_cache_read=o.cache_read_input_tokens if o is not None else None,
        otel_cache_creation=o.cache_creation_input_tokens if o is not None else None,
        reasoning=o.reasoning_output_tokens if o is not None else None,
        cache_creation_5m=o.cache_creation_5m_input_tokens if o is not None else None,
        cache_creation_1h=o.cache_creation_1h_input_tokens if o is not None else None,
        reported_cost=req.reported_cost,
    )


class TranscriptSummary(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What ``usage`` needs of one transcript, keyed in the cache by path, size and mtime."""

    path: str
    size: int
    mtime_ns: int
    meta: Meta
    #: The first event's timestamp (what a scan reads from the head).
    started_at: str = ""
    requests: list[CachedRequest] = msgspec.field(default_factory=list)
    #: Records no rule classified (parsed permissively: counted, their usage not guessed).
    unknown_records: int = 0
    #: Why the transcript could not be read; its requests are then the ones before the failure.
    error: str = ""


def lines_end(path: str, size: int) -> int:
    """The offset just past the last newline in the first *size* bytes of *path* (0: none).

    Where a summary of the complete lines stops, and a follow takes over
    (``usage --follow``): a line still being written is read by the follow,
    whole, once its newline is there. A file that cannot be read gives 0.
    """
    step = 1 << 16
    try:
        with open(path, "rb", buffering=0) as f:
            if size <= 0 or os.pread(f.fileno(), 1, size - 1) == b"\n":
                return max(size, 0)  # the usual case: one byte read
            pos = size
            while pos > 0:
                start = max(0, pos - step)
                cut = os.pread(f.fileno(), pos - start, start).rfind(b"\n")
                if cut >= 0:
                    return start + cut + 1
                pos = start
    except OSError:
        pass
    return 0


def summarize(
    path: str,
    harness: str,
    size: int = -1,
    mtime_ns: int = -1,
    *,
    end: int | None = None,
    conversation: str | None = None,
    full: bool = False,
) -> TranscriptSummary:
    """Parse the transcript at *path* (of *harness*) into its summary; errors are kept, not raised.

    *size* and *mtime_ns* are the file's stat as the caller saw it before
    reading (what the cache is keyed by: a transcript that grows while it is
    read is summarized again next time). *end*: read a line transcript up to
    that offset only (:func:`lines_end`; a whole document is read whole).
    *conversation*: the one session to read of a source that holds several (an
    OpenCode database); the summary's ``path`` is then ``<path>#<conversation>``.
    *full* (``usage --full``): every record read as ``convert`` reads it, instead
    of only the event kinds the fold reads (a lean read passes over records it
    does not need: see docs/performance.md); the requests are the same, the
    unknown records those ``convert`` reports.
    """
    from agentminutes.harness import ParseOptions
    from agentminutes.pipeline.sources import FILE_CHUNK_BYTES
    from agentminutes.pipeline.sync import sync_feeds

    meta = Meta(harness=harness)
    started = ""
    folder = RequestFolder(harness)
    out: list[CachedRequest] = []
    unknown = 0
    error = ""
    first = True
    # Usage only: no verbatim JSON is written, and only the kinds the fold reads are wanted.
    options = ParseOptions(
        permissive=True,
        check_verbatim=False,
        kinds=None if full else RequestFolder.kinds_for(harness),
    )
    add = folder.add
    try:
        for batches, _ in sync_feeds(
            path, conversation, False, harness, options, limit=end, chunk_bytes=FILE_CHUNK_BYTES
        ):
            for batch in batches:
                events = batch.events
                if first and events:
                    first = False
                    started = events[0].timestamp
                    if events[0].session_meta is not None:
                        meta = events[0].session_meta
                for ev in events:
                    if ev.kind == "unknown":
                        unknown += 1
                    requests = add(ev)
                    if requests:
                        out.extend(map(compact, requests))
        out.extend(map(compact, folder.finish()))
    except AgentminutesError as exc:
        error = str(exc)
    except OSError as exc:
        error = f"{path}: {exc.strerror or exc}"
    return TranscriptSummary(
        path=f"{path}#{conversation}" if conversation else path,
        size=size,
        mtime_ns=mtime_ns,
        meta=meta,
        started_at=timestamps.normalize(started) if started else "",
        requests=out,
        unknown_records=unknown,
        error=error,
    )
