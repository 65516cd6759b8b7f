"""``agentminutes usage``: the report over the harnesses' folders, once or kept current (``--follow``)."""

from __future__ import annotations

import sys

from agentminutes.discovery.sessions import ScanProgress
from agentminutes.errors import UsageError
from agentminutes.usage.cache import SummaryCache
from agentminutes.usage.prices import PriceFile, PriceMemo, Pricer, catalog_available
from agentminutes.usage.report import (
    Collection,
    UsageReport,
    build_report,
    collect,
    collect_paths,
    parse_by,
)

__all__ = ("FORMATS", "run_usage", "usage_command")

FORMATS = ("table", "json", "csv")


def summary_line(found: Collection, report: UsageReport) -> str:
    """The stderr account of a run: transcripts read or cached, requests, copies, errors."""
    n = len(found.transcripts) + sum(found.no_usage.values())
    parts = [
        f"{_plural(n, 'transcript')} ({found.from_cache} unchanged, {found.parsed} read)",
        _plural(report.totals.requests, "request"),
    ]
    if report.duplicates:
        parts.append(f"{report.duplicates} copies of requests counted once")
    if found.no_usage:
        listed = ", ".join(f"{h} {c}" for h, c in sorted(found.no_usage.items()))
        parts.append(f"no usage recorded by: {listed}")
    unknown = sum(t.summary.unknown_records for t in found.transcripts)
    if unknown:
        parts.append(f"{unknown} records no rule classified (their usage not counted)")
    parts.append(_plural(len(found.errors), "error"))
    return ", ".join(parts)


def _plural(n: int, word: str) -> str:
    return f"1 {word}" if n == 1 else f"{n} {word}s"


def usage_command(
    transcripts: list[str] | None = None,
    *,
    harness: str = "",
    root: str = "",
    cwd: str = "",
    session_id: str = "",
    since: str = "",
    until: str = "",
    by: str = "day",
    fmt: str = "table",
    prices: str = "",
    cost: bool = True,
    tz: str = "",
    cache_dir: str = "",
    use_cache: bool = True,
    follow: bool = False,
    idle_exit: float | None = None,
    poll: bool = False,
    jobs: int | None = None,
    full: bool = False,
) -> int:
    """Run ``agentminutes usage``; return the exit status (1 when a transcript could not be read).

    *transcripts* (paths, or folders of them): report on those instead of the
    harnesses' folders. *full*: every record read as ``convert`` reads it (a
    usage read otherwise passes over records no request depends on); the cache is
    then neither used nor written.
    """
    if fmt not in FORMATS:
        raise UsageError(f'unknown format "{fmt}" (want table, json, or csv)')
    if jobs is not None and jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if transcripts and (root or cwd or session_id or follow):
        raise UsageError(
            "--root, --cwd, --session-id and --follow choose sessions in the harnesses' "
            "folders; give them without TRANSCRIPTs"
        )
    if full and follow:
        raise UsageError("--full reads the transcripts once, whole; drop --follow")
    groups = parse_by(by)
    if follow and "block" in groups:
        raise UsageError("--by block is a report of the windows so far; drop --follow")
    price_file = PriceFile(prices) if prices else None
    # A full read's summaries count what a usage read does not check: not cached.
    cache = SummaryCache(cache_dir or None, enabled=use_cache and not full)
    memo = PriceMemo(cache.folder if use_cache else None)
    pricer = Pricer(price_file, memo=memo) if cost else None
    err = sys.stderr
    if cost and price_file is None and not catalog_available():
        print(
            "agentminutes: no price catalog installed (pip install 'agentminutes-py[cost]'):"
            " every cost is reported as unpriced",
            file=err,
        )
    progress = ScanProgress(err, "reading… {files} transcripts")

    def report_error(text: str) -> None:
        progress.clear()
        print(f"agentminutes: {text}", file=err, flush=True)

    if transcripts:
        found = collect_paths(
            transcripts,
            harness or None,
            cache=cache,
            on_error=report_error,
            on_file=progress.file,
            full=full,
        )
    else:
        found = collect(
            harness or None,
            root or None,
            cwd=cwd or None,
            session_id=session_id or None,
            since=since or None,
            until=until or None,
            cache=cache,
            on_error=report_error,
            on_file=progress.file,
            complete_lines=follow,  # the follow takes over where each summary stops
            jobs=jobs,
            # Transcripts read anew have requests the price memo has not seen.
            while_reading=pricer.prepare if pricer is not None else None,
            full=full,
        )
    progress.clear()
    problem = cache.save()
    if problem:
        print(f"agentminutes: {problem}", file=err)
    report = build_report(
        found.transcripts, groups, pricer=pricer, since=since or None, until=until or None, tz=tz
    )
    memo.save()
    if follow:
        from agentminutes.usage.live import follow_usage

        return follow_usage(
            found,
            report,
            groups,
            pricer=pricer,
            fmt=fmt,
            harness=harness,
            root=root,
            cwd=cwd,
            session_id=session_id,
            since=since,
            until=until,
            tz=tz,
            idle_exit=idle_exit,
            poll=poll,
        )
    write_report(report, fmt)
    for line in found.details:
        print(f"agentminutes: {line}", file=err)
    print(f"agentminutes: {summary_line(found, report)}", file=err)
    return 1 if found.errors else 0


def run_usage(
    *,
    transcripts: list[str],
    harness: str,
    root: str,
    cwd: str,
    session_id: str,
    since: str,
    until: str,
    by: str,
    fmt: str,
    prices: str,
    no_cost: bool,
    tz: str,
    cache_dir: str,
    no_cache: bool,
    follow: bool,
    idle_exit: float | None,
    poll: bool,
    jobs: int | None,
    full: bool = False,
) -> int:
    """The command line's entry (one keyword per option of ``cli.spec``'s ``usage``)."""
    return usage_command(
        transcripts,
        harness=harness,
        root=root,
        cwd=cwd,
        session_id=session_id,
        since=since,
        until=until,
        by=by,
        fmt=fmt,
        prices=prices,
        cost=not no_cost,
        tz=tz,
        cache_dir=cache_dir,
        use_cache=not no_cache,
        follow=follow,
        idle_exit=idle_exit,
        poll=poll,
        jobs=jobs,
        full=full,
    )


def write_report(report: UsageReport, fmt: str) -> None:
    """Write *report* to stdout in *fmt*."""
    from agentminutes.usage import render

    if fmt == "json":
        render.render_json(report, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    elif fmt == "csv":
        render.render_csv(report, sys.stdout)
        sys.stdout.flush()
    else:
        render.render_table(report, sys.stdout)
        sys.stdout.flush()
