"""What the commands do once their arguments are parsed: the functions the command table names.

Each takes the command's arguments and options as keyword arguments (see
:mod:`agentminutes.cli.spec`) and returns its exit status (``None`` for 0).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import anyio

from agentminutes.errors import UsageError
from agentminutes.harness import ParseOptions
from agentminutes.pipeline.batch import Stage, apply_stages
from agentminutes.pipeline.documents import Feed, feeds
from agentminutes.sinks.documents import JsonlSink, SessionJsonSink, StatsSink
from agentminutes.sinks.output import open_output, refuse_inputs
from agentminutes.stages import build_stages

__all__ = ("run_archive", "run_convert", "run_detect", "run_sessions", "run_stats")


def _feed(
    transcript: str,
    harness: str,
    options: ParseOptions,
    stages: list[Stage],
    conversation: str | None,
) -> Feed:
    """The one session *transcript* is (or the one chosen in it), stages applied."""
    feed = next(feeds(transcript, harness, options, conversation))
    return Feed(apply_stages(feed.batches, stages), feed.skipped, feed.white_space)


async def _convert(fmt: str, output: str | None, job: Feed) -> None:
    if fmt == "acp":
        await _convert_acp(output, job)
        return
    if fmt == "jsonl":
        with open_output(output, atomic=False) as stream:
            jsonl = JsonlSink(stream, flush=output is None)
            events = 0
            async for batch in job.batches:
                events += len(batch.events)
                await jsonl.send(batch)
            await jsonl.aclose()
        _skip_summary(events, job.skipped(), job.white_space())
        return
    with open_output(output, atomic=True) as stream:
        sink = SessionJsonSink(stream)
        async for batch in job.batches:
            await sink.send(batch)
        sink.finish(job.skipped())
        await sink.aclose()


async def _convert_acp(output: str | None, job: Feed) -> None:
    """Stream the session as ACP ``session/update`` notifications, one JSON-RPC message a line."""
    import msgspec

    from agentminutes.export.acp import Notification, Projector, SessionNotification

    projector = Projector()
    encoder = msgspec.json.Encoder()
    events = 0
    with open_output(output, atomic=False) as stream:
        buf = bytearray()
        async for batch in job.batches:
            del buf[:]
            for ev in batch.events:
                for update in projector.project(ev):
                    params = SessionNotification(projector.session_id, update)
                    encoder.encode_into(Notification(params=params), buf, -1)
                    buf += b"\n"
            events += len(batch.events)
            if buf:
                stream.write(buf)
                if output is None:
                    stream.flush()
        stream.flush()
    _skip_summary(events, job.skipped(), job.white_space())
    print(f"agentminutes: acp: {projector.report().summary()}", file=sys.stderr)


async def _convert_all(
    transcript: str,
    output: str | None,
    harness: str,
    options: ParseOptions,
    stages: list[Stage],
) -> None:
    """Every session of *transcript*, one whole-session JSON document per line."""
    sessions = events = 0
    skipped: dict[str, int] = {}
    with open_output(output, atomic=output is not None) as stream:
        for feed in feeds(transcript, harness, options, every=True):
            sink = SessionJsonSink(stream, indent=0)
            async for batch in apply_stages(feed.batches, stages):
                events += len(batch.events)
                await sink.send(batch)
            counts = feed.skipped()
            sink.finish(counts)
            await sink.aclose()
            sessions += 1
            for k, v in counts.items():
                skipped[k] = skipped.get(k, 0) + v
    _skip_summary(events, skipped, sessions=f"{sessions} sessions, ")


def _skip_summary(
    events: int, skipped: dict[str, int], white_space: int = 0, sessions: str = ""
) -> None:
    """The stderr summary: events written, records skipped by type.

    Lines of only Unicode white space, which the reference passes over as blank
    lines (and its report does not count), are counted here as skips of their
    own, so that every non-blank line is accounted for.
    """
    counts = sorted(skipped.items())
    if white_space:
        counts.append(("(white-space line)", white_space))
    total = sum(n for _, n in counts)
    text = f"agentminutes: {sessions}{events} events, {total} skipped records"
    if counts:
        text += " (" + ", ".join(f"{k} {v}" for k, v in counts) + ")"
    print(text, file=sys.stderr)


def _options(
    harness_version: str, permissive: bool, keep_raw: bool, text_form: str
) -> ParseOptions:
    if text_form not in ("bare", "delivered"):
        raise UsageError(f'unknown text form "{text_form}" (want bare or delivered)')
    return ParseOptions(
        permissive=permissive,
        keep_raw=keep_raw,
        harness_version=harness_version,
        text_form=text_form,
    )


async def _stats(output: str | None, job: Feed) -> None:
    with open_output(output, atomic=True) as stream:
        sink = StatsSink(stream)
        async for batch in job.batches:
            await sink.send(batch)
        sink.finish()
        await sink.aclose()


def run_convert(
    transcript: str,
    *,
    fmt: str = "json",
    output: str | None = None,
    harness: str = "auto",
    harness_version: str = "",
    permissive: bool = False,
    keep_raw: bool = False,
    max_payload_bytes: int = 0,
    promote: Sequence[str] | None = None,
    text_form: str = "bare",
    conversation: str | None = None,
    every: bool = False,
) -> None:
    """``agentminutes convert``: the whole session (json), its events (jsonl), its ACP
    ``session/update`` notifications (acp), or every session."""
    if fmt not in ("json", "jsonl", "acp"):
        raise UsageError(f'unknown format "{fmt}" (want json, jsonl or acp)')
    refuse_inputs(output, [transcript])
    options = _options(harness_version, permissive, keep_raw, text_form)
    stages = build_stages(promote=promote or (), max_payload_bytes=max_payload_bytes)
    if every:
        if conversation:
            raise UsageError("--all converts every conversation; drop --conversation, or --all")
        if fmt != "json":
            raise UsageError(
                f"--all writes one whole session per line; it does not combine with --format {fmt}"
            )
        anyio.run(_convert_all, transcript, output, harness, options, stages)
        return
    anyio.run(_convert, fmt, output, _feed(transcript, harness, options, stages, conversation))


def run_stats(
    transcript: str,
    *,
    output: str | None = None,
    harness: str = "auto",
    harness_version: str = "",
    permissive: bool = False,
    promote: Sequence[str] | None = None,
    text_form: str = "bare",
    conversation: str | None = None,
    include_subagents: bool = False,
    root: str | None = None,
    all_subagents: bool = False,
) -> None:
    """``agentminutes stats``: the behavioural summary of one session (or, with
    ``include_subagents``, of its whole task)."""
    refuse_inputs(output, [transcript])
    if include_subagents:
        if conversation:
            raise UsageError("--include-subagents reads transcripts; drop --conversation")
        _task_stats(
            transcript,
            output,
            harness=harness,
            root=root,
            all_subagents=all_subagents,
            permissive=permissive,
            harness_version=harness_version,
            text_form=text_form,
            promote=list(promote or []),
        )
        return
    options = _options(harness_version, permissive, False, text_form)
    job = _feed(transcript, harness, options, build_stages(promote=promote or ()), conversation)
    anyio.run(_stats, output, job)


def _task_stats(
    transcript: str,
    output: str | None,
    *,
    harness: str,
    root: str | None,
    all_subagents: bool,
    permissive: bool,
    harness_version: str,
    text_form: str,
    promote: list[str],
) -> None:
    """``stats --include-subagents``: the task summary (see :mod:`agentminutes.discovery.task`)."""
    import msgspec

    from agentminutes.discovery.task import nested_left_out, task_stats_sync

    if text_form not in ("bare", "delivered"):
        raise UsageError(f'unknown text form "{text_form}" (want bare or delivered)')
    task = task_stats_sync(
        transcript,
        harness=harness,
        root=root,
        all_subagents=all_subagents,
        permissive=permissive,
        harness_version=harness_version,
        text_form=text_form,
        promote=promote,
    )
    encoded = msgspec.json.Encoder(order="deterministic").encode(task)
    data = msgspec.json.format(encoded, indent=2) + b"\n"
    with open_output(output, atomic=True) as stream:
        stream.write(data)
    left_out = nested_left_out(task, all_subagents)
    if left_out:
        print(
            f"agentminutes: note: {left_out} subagent transcripts nested below "
            "subagents/ (workflow agents) are not counted; --all-subagents adds them",
            file=sys.stderr,
        )


def run_detect(transcript: str) -> None:
    """``agentminutes detect``: ``harness<TAB>certain|possible``."""
    from agentminutes.cli.detect import detect_command

    detect_command(transcript)


def run_sessions(*, root: str | None, **values: Any) -> int:
    """``agentminutes sessions``: list the sessions in the harnesses' folders."""
    from agentminutes.discovery.sessions import sessions_command

    return sessions_command(root=root or None, **values)


def run_archive(
    *,
    to: str,
    harness: str,
    session_id: str | None,
    cwd: str | None,
    since: str | None,
    root: str | None,
    permissive: bool,
) -> int:
    """``agentminutes archive``: copy and normalize sessions; 1 when a source changed."""
    from agentminutes.discovery.archive import archive_sync

    def report(text: str) -> None:
        print(f"agentminutes: archive: {text}", file=sys.stderr, flush=True)

    result = archive_sync(
        to,
        harness=harness,
        session_id=session_id,
        cwd=cwd,
        since=since,
        root=root,
        permissive=permissive,
        on_report=report,
    )
    print(f"agentminutes: archived {result.summary()} into {result.to}", file=sys.stderr)
    return 0 if result.ok else 1
