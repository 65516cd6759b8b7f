"""What the commands do once their arguments are parsed: the functions the command table names.

Each takes the command's arguments and options as keyword arguments (see
:mod:`agentminutes.cli.spec`) and returns its exit status (``None`` for 0).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from functools import partial
from typing import IO, TYPE_CHECKING, Any, Final, NamedTuple, TypeVar

from agentminutes.cli.many import (
    ALL_EXTENSION,
    Made,
    OneRun,
    made,
    replayed,
    run_many,
    transcript_list,
)
from agentminutes.errors import UsageError, source_name
from agentminutes.formats import FORMATS, Format, Options, format_named, offered
from agentminutes.harness import ParseOptions
from agentminutes.pipeline.batch import Batch, Stage, apply_stages
from agentminutes.pipeline.document_sources import Feed, feeds
from agentminutes.pipeline.processes import default_jobs, file_bytes, in_order, pays
from agentminutes.sinks.output import open_output, refuse_inputs
from agentminutes.stages import build_stages
from agentminutes.stages.redact import chosen, redaction, redaction_choice

if TYPE_CHECKING:
    from agentminutes.formats.losses import LossReport

__all__ = (
    "CONVERT_FORMATS",
    "run_archive",
    "run_convert",
    "run_stats",
)

#: The formats of ``convert --format`` (the formats' table's, :mod:`agentminutes.formats`).
CONVERT_FORMATS = offered("convert")


_T = TypeVar("_T")


def _run(main: Callable[[], Coroutine[Any, Any, _T]], transcripts: Sequence[str]) -> _T:
    """Run a command's coroutine; without an event loop unless a transcript is stdin.

    Transcripts on paths are read synchronously (``feeds(..., sync=True)``) and
    the sinks and built-in stages never wait, so the coroutine completes in
    one step: the async stack (asyncio, anyio, aiofiles), a third of a small
    convert's start-up, is never imported. Stdin is read asynchronously.
    """
    if "-" in transcripts:
        import anyio

        return anyio.run(main)
    step = main()
    try:
        step.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    step.close()
    raise RuntimeError("a command step waited on I/O while reading a file synchronously")


def _feed(
    transcript: str,
    harness: str,
    options: ParseOptions,
    stages: list[Stage],
    conversation: str | None,
) -> Feed:
    """The one session *transcript* is (or the one chosen in it), stages applied."""
    feed = next(feeds(transcript, harness, options, conversation, sync=True))
    return Feed(apply_stages(feed.batches, stages), feed.skipped, feed.white_space)


async def _convert(fmt: Format, output: str | None, job: Feed, options: Options) -> None:
    """Write *job* as *fmt* to *output*, then its skip and loss lines on stderr."""
    from agentminutes.formats.write import write_feed

    with open_output(output, atomic=not fmt.streams) as stream:
        written = await write_feed(
            fmt, stream, job, options=options, flush=fmt.streams and output is None
        )
    if not fmt.counts_skips:
        _skip_summary(written.events, job.skipped(), job.white_space())
    _loss_line(fmt, written.loss)


def _loss_line(fmt: Format, loss: LossReport | None) -> None:
    """What *fmt* could not carry, on stderr (nothing for a format that carries it all)."""
    if loss is not None:
        print(f"agentminutes: {fmt.name}: {loss.summary()}", file=sys.stderr)


async def _convert_all(
    transcript: str,
    output: str | None,
    harness: str,
    options: ParseOptions,
    stages: list[Stage],
) -> None:
    """Every session of *transcript*, one whole-session JSON document per line."""
    from agentminutes.formats.write import write_feed

    sessions = events = 0
    skipped: dict[str, int] = {}
    with open_output(output, atomic=output is not None) as stream:
        for feed in feeds(transcript, harness, options, every=True, sync=True):
            job = Feed(apply_stages(feed.batches, stages), feed.skipped, feed.white_space)
            events += (await write_feed(FORMATS["json"], stream, job, options=_ONE_LINE)).events
            sessions += 1
            for k, v in job.skipped().items():
                skipped[k] = skipped.get(k, 0) + v
    _skip_summary(events, skipped, sessions=f"{sessions} sessions, ")


#: Documents one a line (``--all``, several transcripts into one output).
_ONE_LINE: Final = Options(indent=0)


def _with_white_space(job: Feed) -> dict[str, int]:
    """*job*'s skip counts, white-space lines among them (as the summary line names them)."""
    counts = dict(job.skipped())
    if white_space := job.white_space():
        counts["(white-space line)"] = white_space
    return counts


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
    harness_version: str,
    permissive: bool,
    keep_raw: bool,
    text_form: str,
    *,
    check_verbatim: bool = True,
    system_text: bool = True,
) -> ParseOptions:
    return ParseOptions(
        permissive=permissive,
        keep_raw=keep_raw,
        harness_version=harness_version,
        text_form=text_form,
        check_verbatim=check_verbatim,
        system_text=system_text,
    )


class _StatsUsage(NamedTuple):
    """``stats --usage``: the block is asked for; how it is priced."""

    prices: str | None
    cost: bool

    def pricer(self) -> Any:
        from agentminutes.usage.stats import make_pricer

        return make_pricer(self.prices, self.cost, lambda text: print(text, file=sys.stderr))


def _with_usage(document: bytes, block: dict[str, Any], indent: int) -> bytes:
    """*document* (a stats JSON object) with the ``usage`` block added as its last key."""
    import msgspec

    data = msgspec.json.decode(document)
    data["usage"] = block
    encoded = msgspec.json.encode(data)
    return (msgspec.json.format(encoded, indent=indent) if indent else encoded) + b"\n"


async def _stats_document(
    job: Feed, usage: _StatsUsage | None, indent: int
) -> tuple[bytes, Any, int]:
    """The stats JSON of *job* (with the usage block when asked), its usage report (``None``
    when not asked) and its event count."""
    import io

    from agentminutes.formats.write import write_feed

    buffer = io.BytesIO()
    if usage is None:
        written = await write_feed(FORMATS["stats"], buffer, job, options=Options(indent=indent))
        return buffer.getvalue(), None, written.events
    from agentminutes.usage.stats import UsageFold, block_json

    fold = UsageFold()

    async def folded(batches: AsyncIterator[Batch]) -> AsyncIterator[Batch]:
        async for batch in batches:
            fold.add(batch.events)
            yield batch

    tapped = Feed(folded(job.batches), job.skipped, job.white_space)
    written = await write_feed(FORMATS["stats"], buffer, tapped, options=Options(indent=indent))
    report = fold.report(usage.pricer())
    data = _with_usage(buffer.getvalue(), block_json(report, fold.harness), indent)
    return data, report, written.events


async def _stats(
    output: str | None, job: Feed, fmt: str, title: str, usage: _StatsUsage | None = None
) -> None:
    prompts = None
    if fmt == "table":
        # What the user messages are (typed, interruptions, client notices): the table
        # says it, the JSON keeps the reference's one count.
        from agentminutes.cli.stats_view import PromptCounts

        prompts = PromptCounts()
        counted = prompts

        async def tap(batches: AsyncIterator[Batch]) -> AsyncIterator[Batch]:
            async for batch in batches:
                for ev in batch.events:
                    counted.add(ev)
                yield batch

        job = Feed(tap(job.batches), job.skipped, job.white_space)
    data, report, _ = await _stats_document(job, usage, 2)
    if fmt == "table":
        import msgspec

        from agentminutes.schema import Stats

        _table(msgspec.json.decode(data, type=Stats), title, output, report, prompts)
        return
    with open_output(output, atomic=True) as stream:
        stream.write(data)


def _stats_format(fmt: str | None, output: str | None) -> str:
    """``table`` for a person at a terminal, else the JSON scripts read."""
    if fmt is not None:
        return fmt
    return "table" if output is None and sys.stdout.isatty() else "json"


def _table(
    summary: object, title: str, output: str | None, usage: Any = None, prompts: Any = None
) -> None:
    """The summary as tables; *usage* (a usage report, ``stats --usage``) adds its table."""
    from agentminutes.cli.stats_view import write_table
    from agentminutes.schema import Stats, TaskStats

    assert isinstance(summary, Stats | TaskStats)
    terminal = output is None and sys.stdout.isatty()
    if terminal:
        write_table(summary, title, None, terminal=True, prompts=prompts)
        if usage is not None:
            _usage_table(usage, sys.stdout)
        return
    with open_output(output, atomic=True) as stream:
        write_table(summary, title, stream, terminal=False, prompts=prompts)
        if usage is not None:
            import io

            text = io.StringIO()
            _usage_table(usage, text)
            stream.write(text.getvalue().encode("utf-8"))


def _usage_table(report: Any, stream: IO[str]) -> None:
    from agentminutes.usage.render import render_table

    stream.write("\nUsage by model\n")
    render_table(report, stream)


def run_convert(
    transcripts: Sequence[str] | None = None,
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
    paths_from: str | None = None,
    to_dir: str | None = None,
    redact: bool = False,
    no_redact: bool = False,
    redact_pattern: Sequence[str] | None = None,
    redact_config: str | None = None,
    otel_content: bool = False,
) -> int | None:
    """``agentminutes convert``: the whole session (json), its events (jsonl), its ACP
    ``session/update`` notifications (acp), its OTel GenAI spans (otlp-json), its ATIF
    trajectory (atif), or every session; of one transcript or several.

    Secrets are redacted on request only (*redact*, or patterns or a config):
    the default output is the contract's, byte for byte the transcript's texts.
    The one exception is ``--otel-content``: prompts, responses and tool input and
    output written into spans are meant for a tracing backend, so they are redacted
    unless *no_redact* (a warning says so).
    """
    form = format_named(fmt, "convert")
    if otel_content and fmt != "otlp-json":
        raise UsageError("--otel-content is for --format otlp-json")
    paths = transcript_list(transcripts, paths_from)
    options = _options(harness_version, permissive, keep_raw, text_form)
    choice = redaction_choice(
        redact,
        no_redact,
        patterns=redact_pattern or (),
        config=redact_config,
        default=otel_content,
        where="into the spans' content",
    )
    redactor = redaction(
        choice, default=otel_content, patterns=redact_pattern or (), config=redact_config
    )
    stages = build_stages(
        promote=promote or (), max_payload_bytes=max_payload_bytes, redaction=redactor
    )
    run = _Convert(
        form,
        output,
        to_dir,
        every,
        conversation,
        harness,
        options,
        stages,
        Options(content=otel_content),
    )
    code = _convert_paths(paths, run, paths_from)
    if redactor is not None:
        print(f"agentminutes: {redactor.summary()}", file=sys.stderr)
    return code


class _Convert(NamedTuple):
    """What ``convert`` was asked to do, beside which transcripts."""

    fmt: Format
    output: str | None
    to_dir: str | None
    every: bool
    conversation: str | None
    harness: str
    options: ParseOptions
    stages: list[Stage]
    writing: Options


def _convert_paths(paths: list[str], run: _Convert, paths_from: str | None) -> int | None:
    fmt, output = run.fmt, run.output
    if run.every and fmt.name != "json":
        raise UsageError(
            f"--all writes one whole session per line; it does not combine with --format {fmt.name}"
        )
    if len(paths) > 1 or paths_from is not None or run.to_dir is not None:
        return _convert_many(paths, run)
    transcript = paths[0]
    refuse_inputs(output, [transcript])
    if run.every:
        if run.conversation:
            raise UsageError("--all converts every conversation; drop --conversation, or --all")
        _run(
            partial(_convert_all, transcript, output, run.harness, run.options, run.stages),
            [transcript],
        )
        return None
    job = _feed(transcript, run.harness, run.options, run.stages, run.conversation)
    _run(partial(_convert, fmt, output, job, run.writing), [transcript])
    return None


def _many_checks(output: str | None, to_dir: str | None, conversation: str | None) -> None:
    if output is not None and to_dir is not None:
        raise UsageError("-o writes one output and --to-dir one file per transcript; choose one")
    if conversation:
        raise UsageError(
            "--conversation picks a conversation of one source; with several transcripts use "
            "--all, or convert that source on its own"
        )


def _convert_many(paths: list[str], run: _Convert) -> int:
    """Several transcripts: one whole session per line (as ``--all``), or one file each.

    Every format reports alike: the skipped records of all transcripts in the one
    summary line at the end, then what the format could not carry, summed over them.
    """
    from agentminutes.formats.losses import added
    from agentminutes.formats.write import write_feed

    fmt, output, to_dir, every, conversation, harness, options, stages, writing = run
    _many_checks(output, to_dir, conversation)
    if to_dir is None and fmt.name != "json":
        raise UsageError(
            f"several transcripts with --format {fmt.name} need --to-dir DIR (one file each); "
            "--format json writes one whole session per line"
        )
    if to_dir is None or every:
        # One a line; in --to-dir a transcript's file is what convert writes for it alone.
        writing = writing._replace(indent=0)
    losses: list[LossReport | None] = [None]

    async def one(transcript: str, stream: IO[bytes]) -> tuple[int, int, dict[str, int]]:
        sessions = events = 0
        skipped: dict[str, int] = {}
        loss: LossReport | None = None
        for feed in feeds(transcript, harness, options, every=every, sync=True):
            job = Feed(apply_stages(feed.batches, stages), feed.skipped, feed.white_space)
            written = await write_feed(fmt, stream, job, options=writing)
            events += written.events
            loss = added(loss, written.loss)
            sessions += 1
            for k, v in _with_white_space(job).items():
                skipped[k] = skipped.get(k, 0) + v
        losses[0] = added(losses[0], loss)
        return sessions, events, skipped

    extension = ALL_EXTENSION if every else fmt.extension
    outcome = _run(
        partial(run_many, paths, one, output=output, to_dir=to_dir, extension=extension), paths
    )
    print(outcome.summary(), file=sys.stderr)
    _loss_line(fmt, losses[0])
    return 1 if outcome.failed else 0


def run_stats(
    transcripts: Sequence[str] | None = None,
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
    paths_from: str | None = None,
    to_dir: str | None = None,
    fmt: str | None = None,
    usage: bool = False,
    prices: str | None = None,
    no_cost: bool = False,
    jobs: int | None = None,
) -> int | None:
    """``agentminutes stats``: the behavioural summary of one session (or, with
    ``include_subagents``, of its whole task); of one transcript or several. As JSON,
    or (*fmt* ``table``, one transcript) as tables; by default tables on a terminal
    and JSON anywhere else. *usage* adds the usage block (:mod:`agentminutes.usage.stats`).
    Several transcripts are read by *jobs* worker processes (default: one per CPU)
    once there are enough bytes to read; the output is the same, in the same order."""
    paths = transcript_list(transcripts, paths_from)
    wants_usage = _StatsUsage(prices, not no_cost) if usage else None
    # What --include-subagents reads a task with.
    task: dict[str, Any] = {
        "harness": harness,
        "root": root,
        "all_subagents": all_subagents,
        "permissive": permissive,
        "harness_version": harness_version,
        "text_form": text_form,
        "promote": list(promote or []),
        "usage": wants_usage,
    }
    if len(paths) > 1 or paths_from is not None or to_dir is not None:
        if fmt == "table":
            raise UsageError("--format table lays out one transcript's summary; give one")
        _many_checks(output, to_dir, conversation)
        if include_subagents and conversation:
            raise UsageError("--include-subagents reads transcripts; drop --conversation")
        spec = _StatsMany(
            harness,
            # A summary as JSON: system events are counted by subtype, their text unread.
            _options(
                harness_version,
                permissive,
                False,
                text_form,
                check_verbatim=False,
                system_text=False,
            ),
            tuple(promote or ()),
            wants_usage,
            0 if to_dir is None else 2,
            task if include_subagents else None,
        )
        one: OneRun = _stats_one(spec, build_stages(promote=spec.promote))
        workers = default_jobs() if jobs is None else jobs
        sizes = [file_bytes(p) for p in paths] if workers > 1 and "-" not in paths else []
        results = None
        if sizes and pays(workers, sizes):
            results = in_order(
                partial(_stats_made, spec),
                paths,
                sizes,
                workers,
                preload=("agentminutes.cli.commands",),
            )
            one = replayed(results)
        try:
            outcome = _run(
                partial(
                    run_many,
                    paths,
                    one,
                    output=output,
                    to_dir=to_dir,
                    extension=FORMATS["stats"].extension,
                ),
                paths,
            )
        finally:
            if results is not None:
                results.close()  # left early (an error, Ctrl-C): the workers stop now
        print(outcome.summary(), file=sys.stderr)
        return 1 if outcome.failed else 0
    transcript = paths[0]
    refuse_inputs(output, [transcript])
    fmt = _stats_format(fmt, output)
    title = source_name(os.path.basename(transcript))
    if include_subagents:
        if conversation:
            raise UsageError("--include-subagents reads transcripts; drop --conversation")
        _task_stats(transcript, output, fmt=fmt, **task)
        return None
    # The JSON summary reads no system event's text (the table's prompt counts read only
    # user messages' text).
    options = _options(
        harness_version,
        permissive,
        False,
        text_form,
        check_verbatim=False,
        system_text=fmt != "table",
    )
    job = _feed(transcript, harness, options, build_stages(promote=promote or ()), conversation)
    _run(partial(_stats, output, job, fmt, title, wants_usage), [transcript])
    return None


class _StatsMany(NamedTuple):
    """How ``stats`` reads each of several transcripts (what a worker process is sent)."""

    harness: str
    options: ParseOptions
    promote: tuple[str, ...]
    usage: _StatsUsage | None
    indent: int
    #: ``--include-subagents``: how the task is read (``None``: the transcript alone).
    task: dict[str, Any] | None


def _stats_one(
    spec: _StatsMany, stages: list[Stage]
) -> Callable[[str, IO[bytes]], Coroutine[Any, Any, tuple[int, int, dict[str, int]]]]:
    """One transcript's stats object, written to the stream: the work of each of several."""

    async def one(transcript: str, stream: IO[bytes]) -> tuple[int, int, dict[str, int]]:
        if spec.task is not None:
            stream.write(_task_stats_json(transcript, spec.indent, **spec.task)[0])
            return 1, 0, {}
        job = _feed(transcript, spec.harness, spec.options, stages, None)
        data, _, events = await _stats_document(job, spec.usage, spec.indent)
        stream.write(data)
        return 1, events, _with_white_space(job)

    return one


def _stats_made(spec: _StatsMany, transcript: str) -> Made:
    """:func:`_stats_one` of *transcript* in a worker process (stages of its own)."""
    one = _stats_one(spec, build_stages(promote=spec.promote))
    return made(transcript, lambda stream: _run(partial(one, transcript, stream), [transcript]))


def _task_stats(transcript: str, output: str | None, *, fmt: str, **values: Any) -> None:
    """``stats --include-subagents``: the task summary (see :mod:`agentminutes.discovery.task`)."""
    data, report = _task_stats_json(transcript, 2, **values)
    if fmt == "table":
        import msgspec

        from agentminutes.schema import TaskStats

        _table(
            msgspec.json.decode(data, type=TaskStats),
            os.path.basename(transcript),
            output,
            report,
        )
        return
    with open_output(output, atomic=True) as stream:
        stream.write(data)


def _task_stats_json(
    transcript: str,
    indent: int,
    *,
    harness: str,
    root: str | None,
    all_subagents: bool,
    permissive: bool,
    harness_version: str,
    text_form: str,
    promote: list[str],
    usage: _StatsUsage | None = None,
) -> tuple[bytes, Any]:
    """The task summary of *transcript* as JSON (*indent* 0: one line), with the usage block
    and its report when *usage* asks for them; notes go to stderr."""
    import msgspec

    from agentminutes.discovery.task import nested_left_out, task_stats_sync

    ParseOptions(text_form=text_form)  # checks it before the task is walked
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
    data = msgspec.json.format(encoded, indent=indent) if indent else encoded
    report = None
    if usage is not None:
        from agentminutes.usage.stats import block_json, task_report

        paths = [t.path for t in task.transcripts]
        report = task_report(paths, task.harness, usage.pricer())
        data = _with_usage(data, block_json(report, task.harness), indent)[:-1]
    left_out = nested_left_out(task, all_subagents)
    if left_out:
        named = f"{transcript}: " if indent == 0 else ""
        print(
            f"agentminutes: note: {named}{left_out} subagent transcripts nested below "
            "subagents/ (workflow agents) are not counted; --all-subagents adds them",
            file=sys.stderr,
        )
    return data + b"\n", report


def run_archive(
    *,
    to: str,
    harness: str,
    session_id: str | None,
    cwd: str | None,
    since: str | None,
    root: str | None,
    permissive: bool,
    redact: bool = False,
    no_redact: bool = False,
    redact_pattern: Sequence[str] | None = None,
    redact_config: str | None = None,
    jobs: int | None = None,
) -> int:
    """``agentminutes archive``: copy and normalize sessions; 1 when a source changed.

    Redaction (of the normalized sessions only) is on request. Without it, the
    normalized sessions are written by *jobs* worker processes (default: one per
    CPU) once the transcripts hold enough bytes.
    """
    from agentminutes.discovery.archive import archive_sync

    redactor = redaction(
        chosen(redact, no_redact), patterns=redact_pattern or (), config=redact_config
    )

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
        redaction=redactor,
        jobs=default_jobs() if jobs is None else jobs,
    )
    if redactor is not None:
        print(f"agentminutes: archive: {redactor.summary()}", file=sys.stderr)
    print(f"agentminutes: archived {result.summary()} into {result.to}", file=sys.stderr)
    return 0 if result.ok else 1
