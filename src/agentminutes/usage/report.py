"""Usage reports: transcripts found, summarized (or taken from the cache), counted once, grouped, priced.

:func:`collect` finds the transcripts (every harness's folders, one harness's,
or a root; the ``sessions`` filters), including every subagent transcript,
and returns their summaries, from the cache when a file is unchanged.
:func:`build_report` counts each request once across all of them and groups
the requests by any of :data:`GROUP_KEYS`:

* a request recognized in several transcripts (a resumed or forked session
  copies earlier messages; Claude Code's sidechains replay the parent's) is
  counted in the one that started first;
* ``--since``/``--until`` keep the requests in the window (the scan keeps the
  sessions active in it);
* ``day``, ``week`` (ISO, ``2026-W05``) and ``month`` are the request's local
  date (or in ``tz``); ``session`` is the recorded session id (subagents share
  their parent's); ``project`` the recorded working directory.
"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from decimal import Decimal
from typing import Any, Final

from agentminutes import timestamps
from agentminutes.errors import OptionError, ScanError, UsageError
from agentminutes.schema.usage import USAGE_RULES, OtelUsage
from agentminutes.usage.blocks import Block, find_blocks
from agentminutes.usage.cache import SummaryCache
from agentminutes.usage.prices import Pricer, Tokens
from agentminutes.usage.summary import CachedRequest, TranscriptSummary, lines_end, summarize

__all__ = (
    "GROUP_KEYS",
    "Collection",
    "Grouper",
    "Row",
    "SessionFacts",
    "Transcript",
    "UsageReport",
    "build_report",
    "collect",
    "collect_paths",
    "parse_by",
)

#: What ``--by`` takes, and the key each one writes in a row.
GROUP_KEYS: Final[Mapping[str, str]] = {
    "day": "day",
    "week": "week",
    "month": "month",
    "session": "session_id",
    "project": "project",
    "model": "model",
    "harness": "harness",
    "transcript": "transcript",
    "block": "block",
}


def parse_by(text: str) -> list[str]:
    """``day,model`` → ``["day", "model"]``; unknown or repeated names are a usage error."""
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise OptionError("--by needs at least one of " + ", ".join(GROUP_KEYS))
    for name in names:
        if name not in GROUP_KEYS:
            raise OptionError(f'--by: unknown grouping "{name}" (want {"|".join(GROUP_KEYS)})')
    if len(set(names)) != len(names):
        raise OptionError(f"--by: {text} names a grouping twice")
    return names


@dataclass
class Transcript:
    """A summarized transcript and the session it counts towards."""

    summary: TranscriptSummary
    harness: str
    session_id: str
    project: str
    started_ns: int
    #: Where reading stopped: with ``collect(complete_lines=True)``, just past the last
    #: complete line (where ``usage --follow`` takes over), else the size it was stat'ed at.
    read_to: int = -1


@dataclass
class Collection:
    """What :func:`collect` found: the transcripts, and what it could not read or left out."""

    transcripts: list[Transcript] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    from_cache: int = 0
    parsed: int = 0
    #: Transcripts of harnesses that record no usage, by harness (not parsed).
    no_usage: dict[str, int] = field(default_factory=dict)
    details: list[str] = field(default_factory=list)

    def keep(
        self,
        summary: TranscriptSummary,
        harness: str,
        *,
        session_id: str,
        project: str,
        read_to: int,
    ) -> None:
        """Keep *summary* as a transcript of *harness*, or count it in :attr:`no_usage`
        where *harness* records no usage."""
        if harness not in USAGE_RULES:
            self.no_usage[harness] = self.no_usage.get(harness, 0) + 1
            return
        self.transcripts.append(
            Transcript(
                summary=summary,
                harness=harness,
                session_id=session_id,
                project=project,
                started_ns=_started(summary),
                read_to=read_to,
            )
        )


def _error_text(summary: TranscriptSummary, harness: str) -> str:
    """*summary*'s error, named by *harness* unless it already names it."""
    return summary.error if harness in summary.error else f"{harness}: {summary.error}"


def _started(summary: TranscriptSummary) -> int:
    ns = timestamps.to_ns(summary.started_at) if summary.started_at else None
    return ns if ns is not None else summary.mtime_ns


def collect(
    harness: str | None = None,
    root: str | os.PathLike[str] | None = None,
    *,
    cwd: str | None = None,
    session_id: str | None = None,
    since: str | None = None,
    until: str | None = None,
    cache: SummaryCache | None = None,
    env: Mapping[str, str] | None = None,
    on_error: Callable[[str], None] | None = None,
    on_file: Callable[[str], None] | None = None,
    complete_lines: bool = False,
    jobs: int | None = None,
    while_reading: Callable[[], object] | None = None,
    full: bool = False,
) -> Collection:
    """Find and summarize every transcript (with its subagents) the filters keep.

    A transcript whose path, size and mtime the cache knows is not opened: the
    scan takes its identity from the cache too. Errors (unreadable files,
    transcripts that do not parse) are collected and passed to *on_error*; the
    rest goes on.

    *complete_lines* (``usage --follow``): each transcript is stat'ed once and
    summarized up to its last newline at or below that size, never into a
    line still being written; ``Transcript.read_to`` says where, for the
    follow to start at exactly that offset. A summary cut short of the file's
    size is not cached.

    *jobs*: the transcripts not in the cache are read by that many worker
    processes (default: one per CPU this process may use), in the order they
    were found, when there are enough bytes to read for workers to pay
    (:data:`agentminutes.pipeline.processes.PARALLEL_BYTES`); ``1`` reads them all in this process.

    *while_reading*: the caller's own preparation (importing the price catalog),
    run on a thread of this process while worker processes read, once they all
    started; an error it raises is passed over (the caller meets it again).

    *full*: each transcript read is read whole (:func:`summarize`'s *full*).
    """
    from agentminutes.discovery.sessions import Scan

    cache = cache if cache is not None else SummaryCache(enabled=False)
    out = Collection()

    def error(text: str) -> None:
        out.errors.append(text)
        if on_error is not None:
            on_error(text)

    def scan_error(exc: ScanError) -> None:
        error(str(exc))

    # The scan stats each session file to ask the cache for its identity: kept, so that
    # the file is not stat'ed again below (a warm report is mostly stat calls).
    scanned: dict[str, os.stat_result] = {}

    def identity(path: str, st: os.stat_result) -> Any:
        scanned[path] = st
        return cache.identity(path, st)

    found = Scan(
        harness or None,
        root,
        cwd=cwd,
        session_id=session_id,
        since=since,
        until=until,
        all_subagents=True,
        env=env,
        on_error=scan_error,
        on_file=on_file,
        identity=identity if cache.enabled else None,
    )
    seen: set[str] = set()
    pending: list[_Pending] = []
    for ref in found:
        paths = [ref.path, *(ref.subagent_paths or [])]
        for i, path in enumerate(paths):
            # A session of a source that holds several (an OpenCode database) is read,
            # and cached, as that one conversation.
            conversation = _conversation(ref) if i == 0 else None
            key = f"{path}#{conversation}" if conversation else path
            if key in seen:
                continue
            seen.add(key)
            st = scanned.pop(path, None)
            if st is None:
                try:
                    st = os.stat(path)
                except OSError as exc:
                    error(f"{ref.meta.harness}: {path}: {exc.strerror or exc}")
                    continue
            name = ref.meta.harness
            summary = cache.get(key, st)
            end = lines_end(path, st.st_size) if complete_lines else None
            if end is not None and end != st.st_size:
                summary = None  # a cached summary read the partial last line too
            if summary is not None:
                out.from_cache += 1
            elif name not in USAGE_RULES:
                meta = ref.meta if i == 0 else msgspec_replace_subagent(ref.meta)
                summary = TranscriptSummary(
                    path=key,
                    size=st.st_size,
                    mtime_ns=st.st_mtime_ns,
                    meta=meta,
                    started_at=ref.started_at if i == 0 else "",
                )
                cache.put(summary)
                out.parsed += 1
            elif on_file is not None and i:
                on_file(path)
            pending.append(_Pending(ref.meta, path, name, st, end, summary, conversation))
    _summarize_all([p for p in pending if p.summary is None], jobs, while_reading, full)
    for p in pending:
        summary = p.summary
        assert summary is not None
        name = p.harness
        if p.parsed:
            if p.end is None or p.end == p.st.st_size:
                cache.put(summary)
            out.parsed += 1
        if summary.error:
            error(_error_text(summary, name))
        out.keep(
            summary,
            name,
            session_id=p.meta.session_id or summary.meta.session_id,
            project=p.meta.cwd or summary.meta.cwd,
            read_to=p.st.st_size if p.end is None else p.end,
        )
    out.details = found.details()
    if not (harness or root or cwd or session_id or since or until) and cache.enabled:
        cache.forget_except(seen)
    return out


@dataclass
class _Pending:
    """A transcript found, in the order found: its summary once read (or from the cache)."""

    meta: Any
    path: str
    harness: str
    st: os.stat_result
    end: int | None
    summary: TranscriptSummary | None
    #: The one session to read of a source that holds several (``None``: the whole file).
    conversation: str | None = None
    parsed: bool = False


def _summarize_all(
    todo: list[_Pending],
    jobs: int | None,
    while_reading: Callable[[], object] | None = None,
    full: bool = False,
) -> None:
    """Read every transcript of *todo* (in place), in worker processes where that pays."""
    from agentminutes.pipeline import processes

    if jobs is None:
        jobs = processes.default_jobs()
    if jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if processes.pays(jobs, [_size(p) for p in todo]):
        _summarize_in_workers(todo, jobs, while_reading, full)
        return
    for p in todo:
        p.summary = summarize(
            p.path,
            p.harness,
            p.st.st_size,
            p.st.st_mtime_ns,
            end=p.end,
            conversation=p.conversation,
            full=full,
        )
        p.parsed = True


def _size(p: _Pending) -> int:
    """The bytes of *p* to read."""
    return p.st.st_size if p.end is None else p.end


def _summary_bytes(full: bool, item: tuple[str, str, int, int, int | None, str | None]) -> bytes:
    """A worker's work: one transcript's summary, encoded (msgpack is cheap to send)."""
    import msgspec

    return msgspec.msgpack.encode(
        summarize(*item[:4], end=item[4], conversation=item[5], full=full)
    )


def _conversation(ref: Any) -> str | None:
    """The conversation id of a session kept in a document store, ``None`` for a transcript."""
    from agentminutes.harness.registry import described

    found = described(ref.meta.harness)
    if found is None or found.reads != "documents":
        return None
    return str(ref.meta.subagent_id or ref.meta.session_id) or None


def _quietly(work: Callable[[], object]) -> None:
    import contextlib

    with contextlib.suppress(Exception):  # the caller meets it again, where it reports errors
        work()


def _summarize_in_workers(
    todo: list[_Pending],
    jobs: int,
    while_reading: Callable[[], object] | None = None,
    full: bool = False,
) -> None:
    import contextlib
    import threading
    from functools import partial

    import msgspec

    from agentminutes.pipeline.processes import in_order

    helper: threading.Thread | None = None

    def start_helper() -> None:
        # Every worker has started (a forked pool starts them all at the first task): a
        # thread of this process may now run, on the time it would spend waiting.
        nonlocal helper
        if while_reading is not None:
            helper = threading.Thread(target=_quietly, args=(while_reading,), daemon=True)
            helper.start()

    decoder = msgspec.msgpack.Decoder(TranscriptSummary)
    work = [
        (p.path, p.harness, p.st.st_size, p.st.st_mtime_ns, p.end, p.conversation) for p in todo
    ]
    read = in_order(
        partial(_summary_bytes, full),
        work,
        [_size(p) for p in todo],
        jobs,
        preload=(__name__,),
        started=start_helper,
    )
    with contextlib.closing(read):  # interrupted here, the pool is shut down at once
        for p, summary in zip(todo, read, strict=True):
            p.summary = decoder.decode(summary)
            p.parsed = True
    if helper is not None:
        helper.join()


def collect_paths(
    paths: Sequence[str | os.PathLike[str]],
    harness: str | None = None,
    *,
    cache: SummaryCache | None = None,
    on_error: Callable[[str], None] | None = None,
    on_file: Callable[[str], None] | None = None,
    full: bool = False,
) -> Collection:
    """Summarize the transcripts at *paths* (files, and folders walked as ``export`` walks
    them: :func:`~agentminutes.discovery.walk.transcripts_under`).

    The harness of each is *harness*, or detected from its first records. A
    file named on the command line that cannot be read or detected is an
    error; a file a folder walk met that no harness reads is skipped, as is a
    transcript with no conversation in it (counted in ``details``). *full*: as
    :func:`collect`'s.
    """
    from agentminutes.discovery.walk import transcripts_under
    from agentminutes.errors import AgentminutesError
    from agentminutes.pipeline.detect import detect

    cache = cache if cache is not None else SummaryCache(enabled=False)
    out = Collection()
    skipped: dict[str, int] = {}

    def error(text: str) -> None:
        out.errors.append(text)
        if on_error is not None:
            on_error(text)

    files: list[tuple[str, bool]] = []
    for given in paths:
        path = os.path.abspath(os.fspath(given))
        if os.path.isdir(path):
            files += [(found, True) for found in transcripts_under(path)]
        else:
            files.append((path, False))

    def take(summary: TranscriptSummary, name: str, st: os.stat_result, *, cached: bool) -> None:
        if summary.error:
            error(_error_text(summary, name))
        elif not summary.requests and not summary.started_at:
            skipped["no conversation"] = skipped.get("no conversation", 0) + 1
            return
        if cached:
            out.from_cache += 1
        else:
            out.parsed += 1
        meta = summary.meta
        out.keep(summary, name, session_id=meta.session_id, project=meta.cwd, read_to=st.st_size)

    seen: set[str] = set()
    for path, walked in files:
        if path in seen:
            continue
        seen.add(path)
        if on_file is not None:
            on_file(path)
        try:
            st = os.stat(path)
        except OSError as exc:
            error(f"{path}: {exc.strerror or exc}")
            continue
        if st.st_size == 0:
            skipped["no conversation"] = skipped.get("no conversation", 0) + 1
            continue
        summary = cache.get(path, st)
        if summary is not None:
            name = summary.meta.harness or (harness or "")
            take(summary, name, st, cached=True)
            continue
        try:
            name = harness or detect(path)[0]
            ids = _conversation_ids(path, name)
        except AgentminutesError as exc:
            if walked:
                skipped["no harness detected"] = skipped.get("no harness detected", 0) + 1
            else:
                error(str(exc))
            continue
        # A store of several sessions (a database, a data export) is read, and cached,
        # one conversation at a time, as the scan of a harness's folders reads it.
        for conversation in ids or (None,):
            key = f"{path}#{conversation}" if conversation else path
            summary = cache.get(key, st) if conversation else None
            if summary is not None:
                take(summary, name, st, cached=True)
                continue
            summary = summarize(
                path, name, st.st_size, st.st_mtime_ns, conversation=conversation, full=full
            )
            cache.put(summary)
            take(summary, name, st, cached=False)
    if skipped:
        reasons = sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0]))
        out.details.append("skipped files: " + ", ".join(f"{n} {why}" for why, n in reasons))
    return out


def _conversation_ids(path: str, harness: str) -> list[str] | None:
    """The ids of the conversations in *path* when it is a store of several sessions of
    *harness* (a database, a data export), ``None`` for a transcript or a store of one."""
    from agentminutes.harness.registry import described

    found = described(harness)
    if found is None or found.reads != "documents":
        return None
    from agentminutes.pipeline.document_sources import DocumentConversion, route

    source = route(path, harness)
    if source.document is None or source.adapter is None:
        return None
    ids = [c.id for c in DocumentConversion(source.document, source.adapter).conversations()]
    return ids if len(ids) > 1 else None


def msgspec_replace_subagent(meta: Any) -> Any:
    """A parent's meta marked as a subagent's (for transcripts of harnesses not parsed)."""
    import msgspec

    return msgspec.structs.replace(meta, is_subagent=True)


_new_tuple: Final = tuple.__new__
_get: Final = operator.attrgetter

# -- grouping ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Row:
    """One group of requests: its keys, the raw and normalized sums, and the cost."""

    keys: dict[str, str]
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    otel: OtelUsage = field(default_factory=OtelUsage.zero)
    #: Requests of a harness without a normalization rule (not in ``otel``, not priced).
    unnormalized: int = 0
    cost: Decimal | None = None
    cost_sources: list[str] = field(default_factory=list)
    #: Normalized input + output tokens of the requests no source prices, by model.
    unpriced: dict[str, int] = field(default_factory=dict)
    unpriced_reasons: dict[str, str] = field(default_factory=dict)
    reported_cost: float | None = None
    #: (model, harness) → the requests to price.
    tokens: dict[tuple[str, str], list[Tokens]] = field(default_factory=dict, repr=False)
    #: Unpriced for want of a normalization rule, by model (set by ``add``, kept by ``price``).
    unruled: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def cost_status(self) -> str:
        """``priced`` (every request), ``partial`` or ``unpriced`` (none)."""
        if not self.unpriced:
            return "priced"
        return "partial" if self.cost is not None else "unpriced"

    @property
    def unpriced_tokens(self) -> int:
        return sum(self.unpriced.values())

    def add(self, req: CachedRequest, harness: str, sign: int = 1) -> None:
        """Count *req* in this row (``sign=-1`` takes it out again: a live request replaced)."""
        self.requests += sign
        self.input_tokens += sign * req.input_tokens
        self.output_tokens += sign * req.output_tokens
        self.cache_read_input_tokens += sign * req.cache_read_input_tokens
        self.cache_creation_input_tokens += sign * req.cache_creation_input_tokens
        if req.reported_cost is not None:
            self.reported_cost = (self.reported_cost or 0.0) + sign * req.reported_cost
        if sign > 0 and req.otel_input is not None:
            # The common case, without building the request's OtelUsage: its sums, as
            # OtelUsage.add takes them (a part absent from both stays None).
            o = self.otel
            out = req.otel_output or 0
            read = req.otel_cache_read or 0
            write = req.otel_cache_creation or 0
            o.input_tokens += req.otel_input
            o.output_tokens += out
            o.cache_read_input_tokens += read
            o.cache_creation_input_tokens += write
            if req.reasoning is not None:
                r = o.reasoning_output_tokens
                o.reasoning_output_tokens = req.reasoning if r is None else r + req.reasoning
            five = req.cache_creation_5m
            if five is not None:
                f = o.cache_creation_5m_input_tokens
                o.cache_creation_5m_input_tokens = five if f is None else f + five
            hour = req.cache_creation_1h
            if hour is not None:
                h = o.cache_creation_1h_input_tokens
                o.cache_creation_1h_input_tokens = hour if h is None else h + hour
            # (tuple.__new__: a NamedTuple's own __new__ is Python, a tenth of this method)
            tokens = _new_tuple(
                Tokens,
                (
                    req.ns,
                    abs(req.otel_input),
                    abs(out),
                    abs(read),
                    abs(write),
                    None if hour is None else abs(hour),
                ),
            )
            group = self.tokens.get((req.model, harness))
            if group is None:
                self.tokens[(req.model, harness)] = [tokens]
            else:
                group.append(tokens)
            return
        otel = req.otel()
        if otel is None:
            self.unnormalized += sign
            n = self.unruled.get(req.model, 0) + sign * (req.input_tokens + req.output_tokens)
            self.unruled[req.model] = n
            self.unpriced_reasons[req.model] = f"no usage rule for {harness}"
            return
        if sign < 0:
            otel = _negated(otel)
        self.otel.add(otel)
        tokens = Tokens(
            req.ns,
            abs(otel.input_tokens),
            abs(otel.output_tokens),
            abs(otel.cache_read_input_tokens),
            abs(otel.cache_creation_input_tokens),
            None
            if otel.cache_creation_1h_input_tokens is None
            else abs(otel.cache_creation_1h_input_tokens),
        )
        group = self.tokens.setdefault((req.model, harness), [])
        if sign > 0:
            group.append(tokens)
        elif tokens in group:
            group.remove(tokens)

    def add_all(self, pairs: Sequence[tuple[CachedRequest, Transcript]]) -> None:
        """:meth:`add` each request of *pairs* (with its transcript's harness), in order: the
        sums taken per field, each request's :class:`Tokens` built once."""
        reqs = [req for req, _ in pairs]
        if any(req.otel_input is None or req.reported_cost is not None for req in reqs):
            for req, t in pairs:
                self.add(req, t.harness)
            return
        self.requests += len(reqs)
        self.input_tokens += sum(map(_get("input_tokens"), reqs))
        self.output_tokens += sum(map(_get("output_tokens"), reqs))
        self.cache_read_input_tokens += sum(map(_get("cache_read_input_tokens"), reqs))
        self.cache_creation_input_tokens += sum(map(_get("cache_creation_input_tokens"), reqs))
        o = self.otel
        o.input_tokens += sum(map(_get("otel_input"), reqs))
        outs = [req.otel_output or 0 for req in reqs]
        reads = [req.otel_cache_read or 0 for req in reqs]
        writes = [req.otel_cache_creation or 0 for req in reqs]
        hours = [req.cache_creation_1h for req in reqs]
        o.output_tokens += sum(outs)
        o.cache_read_input_tokens += sum(reads)
        o.cache_creation_input_tokens += sum(writes)
        # An optional part stays None only when no request has it (OtelUsage.add's rule).
        reasoning = [req.reasoning for req in reqs if req.reasoning is not None]
        if reasoning:
            r = o.reasoning_output_tokens
            o.reasoning_output_tokens = sum(reasoning) + (r or 0)
        five = [req.cache_creation_5m for req in reqs if req.cache_creation_5m is not None]
        if five:
            f = o.cache_creation_5m_input_tokens
            o.cache_creation_5m_input_tokens = sum(five) + (f or 0)
        hour_sum = [h for h in hours if h is not None]
        if hour_sum:
            h = o.cache_creation_1h_input_tokens
            o.cache_creation_1h_input_tokens = sum(hour_sum) + (h or 0)
        groups = self.tokens
        for (req, t), out, read, write, hour in zip(pairs, outs, reads, writes, hours, strict=True):
            tokens = _new_tuple(
                Tokens,
                (
                    req.ns,
                    abs(req.otel_input or 0),
                    abs(out),
                    abs(read),
                    abs(write),
                    None if hour is None else abs(hour),
                ),
            )
            group = groups.get((req.model, t.harness))
            if group is None:
                groups[(req.model, t.harness)] = [tokens]
            else:
                group.append(tokens)

    def merge(self, other: Row) -> None:
        """Add *other*'s sums and costs (for the totals)."""
        self.requests += other.requests
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens
        self.otel.add(other.otel)
        self.unnormalized += other.unnormalized
        if other.cost is not None:
            self.cost = (self.cost or Decimal(0)) + other.cost
        for s in other.cost_sources:
            if s not in self.cost_sources:
                self.cost_sources.append(s)
        for m, n in other.unpriced.items():
            self.unpriced[m] = self.unpriced.get(m, 0) + n
        self.unpriced_reasons.update(other.unpriced_reasons)
        if other.reported_cost is not None:
            self.reported_cost = (self.reported_cost or 0.0) + other.reported_cost

    def price(self, pricer: Pricer | None) -> None:
        """(Re)compute the cost of the row's requests (``pricer`` ``None``: costs not asked for).

        A request of no tokens costs nothing whatever its model; any other
        request of a model no source prices is counted in ``unpriced``.
        """
        self.cost = None
        self.cost_sources = []
        self.unpriced = {m: n for m, n in self.unruled.items() if n}
        if pricer is None:
            return
        cost = Decimal(0)
        for (model, harness), tokens in self.tokens.items():
            spent = [t for t in tokens if t.input or t.output]
            if not spent:
                continue  # no tokens: nothing to price, whatever the model
            priced = pricer.price(model, harness, spent)
            if priced.cost is None:
                n = sum(t.input + t.output for t in spent)
                self.unpriced[model] = self.unpriced.get(model, 0) + n
                self.unpriced_reasons[model] = priced.reason
                continue
            cost += priced.cost
            for source in priced.sources:
                if source not in self.cost_sources:
                    self.cost_sources.append(source)
        # A row of unpriced requests only has no cost (None), never $0.
        if self.cost_sources or not self.unpriced:
            self.cost = cost

    def to_json(self, costs: bool = True) -> dict[str, Any]:
        """The row as ``usage --format json`` writes it."""
        import msgspec

        out: dict[str, Any] = dict(self.keys)
        out["requests"] = self.requests
        out["input_tokens"] = self.input_tokens
        out["output_tokens"] = self.output_tokens
        out["cache_read_input_tokens"] = self.cache_read_input_tokens
        out["cache_creation_input_tokens"] = self.cache_creation_input_tokens
        out["otel"] = msgspec.to_builtins(self.otel)
        if costs:
            out["cost_usd"] = float(self.cost) if self.cost is not None else None
            out["cost_status"] = self.cost_status
            out["cost_sources"] = self.cost_sources
            if self.unpriced:
                out["unpriced_tokens"] = self.unpriced_tokens
                out["unpriced_models"] = sorted(self.unpriced)
        out["reported_cost_usd"] = self.reported_cost
        return out


@dataclass
class UsageReport:
    """Rows in key order, their totals, and how many requests were counted once though seen again."""

    by: list[str]
    rows: list[Row]
    totals: Row
    duplicates: int = 0
    costs: bool = True
    #: Grouped by session: each session's project, parent transcript and last request
    #: (what the table shows beside the id; the JSON and CSV rows stay as they are).
    sessions: dict[str, SessionFacts] = field(default_factory=dict)
    #: ``--by block``: each block by its key (its start, as the rows show it).
    blocks: dict[str, Block] = field(default_factory=dict)
    #: The instant blocks are judged active at.
    now_ns: int = 0


@dataclass
class SessionFacts:
    """What a person tells a session by, beside its id."""

    project: str = ""
    harness: str = ""
    #: The transcript of the session itself (not a subagent's), where its first prompt is.
    path: str = ""
    #: The time of its last request counted (nanoseconds; 0 for none).
    last_ns: int = 0


def _negated(o: OtelUsage) -> OtelUsage:
    return OtelUsage(
        input_tokens=-o.input_tokens,
        output_tokens=-o.output_tokens,
        cache_read_input_tokens=-o.cache_read_input_tokens,
        cache_creation_input_tokens=-o.cache_creation_input_tokens,
        reasoning_output_tokens=None
        if o.reasoning_output_tokens is None
        else -o.reasoning_output_tokens,
        cache_creation_5m_input_tokens=None
        if o.cache_creation_5m_input_tokens is None
        else -o.cache_creation_5m_input_tokens,
        cache_creation_1h_input_tokens=None
        if o.cache_creation_1h_input_tokens is None
        else -o.cache_creation_1h_input_tokens,
    )


def _zone(tz: str | None) -> tzinfo | None:
    if not tz:
        return None
    if tz.upper() == "UTC":
        from datetime import UTC

        return UTC
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(tz)
    except (KeyError, ValueError, OSError):
        raise OptionError(f'--tz: unknown time zone "{tz}"') from None


class _Dates:
    """Local dates of request instants, memoized per hour (most requests share a few)."""

    def __init__(self, zone: tzinfo | None) -> None:
        self.zone = zone
        self._memo: dict[int, datetime] = {}
        self._labels: dict[tuple[int, str], str] = {}

    def label(self, ns: int, name: str) -> str:
        """The ``day``, ``week`` or ``month`` key of the instant *ns*, memoized per slot."""
        slot = ns // 900_000_000_000
        found = self._labels.get((slot, name))
        if found is not None:
            return found
        dt = self.at(ns)
        if dt is None:
            text = "(no time)"
        elif name == "day":
            text = dt.strftime("%Y-%m-%d")
        elif name == "month":
            text = dt.strftime("%Y-%m")
        else:
            year, week, _ = dt.isocalendar()
            text = f"{year}-W{week:02d}"
        self._labels[(slot, name)] = text
        return text

    def at(self, ns: int) -> datetime | None:
        if not ns:
            return None
        # Zones change offset on the hour or half-hour at most: a 15-minute slot is safe.
        slot = ns // 900_000_000_000
        dt = self._memo.get(slot)
        if dt is None:
            dt = datetime.fromtimestamp(slot * 900, tz=self.zone)
            if self.zone is None:
                dt = dt.astimezone()
            self._memo[slot] = dt
        return dt


def block_label(start_ns: int, dates: _Dates) -> str:
    """A block's key: its start in local time (or ``--tz``), ``YYYY-MM-DD HH:MM``."""
    dt = dates.at(start_ns)
    return "(no time)" if dt is None else dt.strftime("%Y-%m-%d %H:%M")


def _key_value(
    name: str,
    req: CachedRequest,
    t: Transcript,
    dates: _Dates,
    blocks: dict[int, int] | None = None,
) -> str:
    if name == "block":
        start = blocks.get(id(req), 0) if blocks is not None else 0
        return block_label(start, dates) if start else "(no time)"
    if name in ("day", "week", "month"):
        return dates.label(req.ns, name) if req.ns else "(no time)"
    if name == "session":
        return t.session_id or "(no session id)"
    if name == "project":
        return t.project or "(no cwd)"
    if name == "model":
        return req.model or "(no model)"
    if name == "harness":
        return t.harness
    return t.summary.path


def window_bounds(since: str | None, until: str | None) -> tuple[int | None, int | None]:
    """``--since``/``--until`` as nanoseconds (``None``: open)."""
    try:
        lo = timestamps.parse_when(since) if since else None
        hi = timestamps.parse_when(until, end_of_day=True) if until else None
    except ValueError as exc:
        raise OptionError(str(exc)) from None
    return lo, hi


class _Copies:
    """How many requests :func:`counted_requests` passed over as copies of one counted."""

    count = 0


def counted_requests(
    transcripts: Sequence[Transcript],
    window: tuple[int | None, int | None] = (None, None),
    copies: _Copies | None = None,
) -> Iterator[tuple[CachedRequest, Transcript]]:
    """Each request once, in the transcript that started first; those in the window (with a
    window, not those without a time). *copies* counts the requests passed over as copies
    (in or out of the window)."""
    ordered = sorted(transcripts, key=lambda t: (t.started_ns, t.summary.path))
    seen: set[str] = set()
    lo, hi = window
    copies = copies if copies is not None else _Copies()
    if lo is None and hi is None:
        for t in ordered:
            for req in t.summary.requests:
                key = req.key
                if key:
                    if key in seen:
                        copies.count += 1
                        continue
                    seen.add(key)
                yield req, t
        return
    for t in ordered:
        for req in t.summary.requests:
            if req.key:
                if req.key in seen:
                    copies.count += 1
                    continue
                seen.add(req.key)
            if (lo is not None or hi is not None) and not req.ns:
                continue  # a request with no time cannot be placed in --since/--until
            if req.ns and ((lo is not None and req.ns < lo) or (hi is not None and req.ns > hi)):
                continue
            yield req, t


class Grouper:
    """Requests into rows by the grouping keys; rows can be updated and re-priced (``--follow``)."""

    def __init__(
        self,
        by: Sequence[str],
        *,
        pricer: Pricer | None = None,
        since: str | None = None,
        until: str | None = None,
        tz: str | None = None,
    ) -> None:
        for name in by:
            if name not in GROUP_KEYS:
                raise UsageError(f'unknown grouping "{name}"')
        self.by = list(by)
        self.pricer = pricer
        self.window = window_bounds(since, until)
        self._dates = _Dates(_zone(tz))
        self.groups: dict[tuple[str, ...], Row] = {}
        self.sessions: dict[str, SessionFacts] = {}
        #: ``--by block``: each request's block start, by the request object's id.
        self.block_of: dict[int, int] | None = None

    def in_window(self, req: CachedRequest) -> bool:
        """Whether *req* falls in ``--since``/``--until`` (a request without a time does only
        when there is no window: it cannot be placed in one)."""
        lo, hi = self.window
        if not req.ns:
            return lo is None and hi is None
        return not ((lo is not None and req.ns < lo) or (hi is not None and req.ns > hi))

    def add(
        self,
        req: CachedRequest,
        t: Transcript,
        sign: int = 1,
        key: tuple[str, ...] | None = None,
    ) -> tuple[str, ...]:
        """Count *req* (of transcript *t*) in its row; return the row's key.

        ``sign=-1`` with the *key* it was counted under takes it out again.
        """
        if key is None:
            key = tuple(_key_value(name, req, t, self._dates, self.block_of) for name in self.by)
        self._row(key).add(req, t.harness, sign)
        if "session" in self.by and sign > 0:
            self._note_sessions(((req, t),))
        return key

    def _row(self, key: tuple[str, ...]) -> Row:
        """The row of *key*, made empty if it is new."""
        row = self.groups.get(key)
        if row is None:
            keys = {GROUP_KEYS[n]: v for n, v in zip(self.by, key, strict=True)}
            row = self.groups[key] = Row(keys=keys)
        return row

    def _note_sessions(self, counted: Sequence[tuple[CachedRequest, Transcript]]) -> None:
        """Take each counted request's session facts: the first project, harness and main
        transcript seen, and the latest request's time."""
        for req, t in counted:
            facts = self.sessions.setdefault(t.session_id or "(no session id)", SessionFacts())
            facts.project = facts.project or t.project
            facts.harness = facts.harness or t.harness
            if not facts.path and not t.summary.meta.is_subagent:
                facts.path = t.summary.path
            facts.last_ns = max(facts.last_ns, req.ns)

    def add_all(self, counted: Sequence[tuple[CachedRequest, Transcript]]) -> None:
        """:meth:`add` each of *counted* in order: the same rows, each row's requests added
        in one pass (a warm report of a whole home is mostly this)."""
        by = self.by
        dates = self._dates
        blocks = self.block_of
        rows: dict[tuple[str, ...], list[tuple[CachedRequest, Transcript]]] = {}
        one = by[0] if len(by) == 1 else ""
        for pair in counted:
            req, t = pair
            if one in ("day", "week", "month"):
                key: tuple[str, ...] = (dates.label(req.ns, one) if req.ns else "(no time)",)
            else:
                key = tuple(_key_value(name, req, t, dates, blocks) for name in by)
            found = rows.get(key)
            if found is None:
                rows[key] = [pair]
            else:
                found.append(pair)
        for key, pairs in rows.items():
            self._row(key).add_all(pairs)
        if "session" in by:
            self._note_sessions(counted)

    def report(
        self, *, reprice: set[tuple[str, ...]] | None = None, duplicates: int = 0
    ) -> UsageReport:
        """The rows in key order with their totals; rows are priced (all, or those in *reprice*)."""
        rows = [self.groups[k] for k in sorted(self.groups) if self.groups[k].requests]
        totals = Row(keys={})
        for key in sorted(self.groups):
            row = self.groups[key]
            if reprice is None or key in reprice:
                row.price(self.pricer)
        for row in rows:
            totals.merge(row)
        if totals.unpriced and not totals.cost_sources:
            totals.cost = None  # only free (no-token) requests priced: unpriced, never $0
        return UsageReport(
            by=self.by,
            rows=rows,
            totals=totals,
            duplicates=duplicates,
            costs=self.pricer is not None,
            sessions=self.sessions,
        )


def build_report(
    transcripts: Sequence[Transcript],
    by: Sequence[str],
    *,
    pricer: Pricer | None = None,
    since: str | None = None,
    until: str | None = None,
    tz: str | None = None,
    now_ns: int | None = None,
) -> UsageReport:
    """Group the requests of *transcripts* by *by* and price each group (``pricer`` ``None``: no costs).

    With ``block`` among *by*, the report's :attr:`~UsageReport.blocks` hold each
    five-hour window (:mod:`agentminutes.usage.blocks`), whether it is active at
    *now_ns* (default: now), its burn rate and projection.
    """
    grouper = Grouper(by, pricer=pricer, since=since, until=until, tz=tz)
    copies = _Copies()
    counted = list(counted_requests(transcripts, grouper.window, copies))
    if "block" in by:
        starts = find_blocks([req.ns for req, _ in counted])
        grouper.block_of = {id(req): start for (req, _), start in zip(counted, starts, strict=True)}
    grouper.add_all(counted)
    report = grouper.report(duplicates=copies.count)
    if grouper.block_of is not None:
        report.blocks = _blocks(counted, grouper, report)
        report.now_ns = time.time_ns() if now_ns is None else now_ns
    return report


def _blocks(
    counted: list[tuple[CachedRequest, Transcript]], grouper: Grouper, report: UsageReport
) -> dict[str, Block]:
    """Each block of the report by its key: times, requests, tokens, and the cost of its rows."""
    assert grouper.block_of is not None
    found: dict[str, Block] = {}
    for req, _ in counted:
        start = grouper.block_of.get(id(req), 0)
        if not start:
            continue
        label = block_label(start, grouper._dates)
        block = found.get(label)
        if block is None:
            block = found[label] = Block(start_ns=start, first_ns=req.ns, last_ns=req.ns)
        block.first_ns = min(block.first_ns, req.ns)
        block.last_ns = max(block.last_ns, req.ns)
        block.requests += 1
        otel = req.otel()
        if otel is not None:
            block.tokens += otel.input_tokens + otel.output_tokens
        else:
            block.tokens += req.input_tokens + req.output_tokens
    for row in report.rows:
        block = found.get(row.keys.get("block", ""))
        if block is not None and row.cost is not None:
            block.cost = (block.cost or Decimal(0)) + row.cost
    return found
