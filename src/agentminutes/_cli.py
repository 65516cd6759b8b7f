"""The ``agentminutes`` command line: a thin typer layer that builds pipelines from flags."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import IO, Annotated

import anyio
import typer

from agentminutes._documents import Feed, feeds
from agentminutes._errors import UsageError
from agentminutes._pipeline import Stage, apply_stages
from agentminutes._version import __version__
from agentminutes.harness import ParseOptions
from agentminutes.sinks import JsonlSink, SessionJsonSink, StatsSink

app = typer.Typer(
    name="agentminutes",
    help="Turn coding-agent session transcripts into one normalized, versioned event stream.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Format(StrEnum):
    json = "json"
    jsonl = "jsonl"


class TextForm(StrEnum):
    bare = "bare"
    delivered = "delivered"


def _version(value: bool) -> None:
    if value:
        print(f"agentminutes version {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-v", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """agentminutes parses native agent-harness session logs into one event schema."""


Transcript = Annotated[str, typer.Argument(help='Transcript file, or "-" for stdin.')]
HarnessOpt = Annotated[
    str,
    typer.Option("--harness", help='Source harness, or "auto" to detect it from the first bytes.'),
]
HarnessVersionOpt = Annotated[
    str,
    typer.Option(
        "--harness-version",
        help="Harness version for formats that record none (metadata only; never changes parsing).",
    ),
]
PermissiveOpt = Annotated[
    bool,
    typer.Option(
        "--permissive", help="Keep unclassifiable records as unknown events instead of failing."
    ),
]
PromoteOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--promote",
        help='Opt-in telemetry promotion to apply (e.g. "codex:web-search"); repeatable.',
    ),
]
TextFormOpt = Annotated[
    TextForm,
    typer.Option(
        "--text-form",
        help="System event text: bare (as recorded) or delivered (as the harness delivered it).",
    ),
]
OutputOpt = Annotated[
    str | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
]


def _stages(max_payload_bytes: int, promote: list[str] | None) -> list[Stage]:
    from agentminutes.stages import promotions, truncate_payloads

    stages = promotions(promote or [])
    if max_payload_bytes < 0:
        raise UsageError("--max-payload-bytes must be 0 (keep whole) or positive")
    if max_payload_bytes:
        stages.append(truncate_payloads(max_payload_bytes))
    return stages


@contextmanager
def _output(path: str | None, *, atomic: bool) -> Iterator[IO[bytes]]:
    """Where a command writes: stdout or a file; *atomic* output appears only on success.

    Atomic stdout output is spooled (in memory up to 32 MiB, then on disk),
    so a failed parse prints no half document and memory stays bounded.
    """
    if path is None and not atomic:
        yield sys.stdout.buffer
        return
    if path is None:
        with tempfile.SpooledTemporaryFile(max_size=8 << 20) as spool:
            yield spool
            spool.seek(0)
            out = sys.stdout.buffer
            while chunk := spool.read(1 << 20):
                out.write(chunk)
            out.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".agentminutes-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _feed(
    transcript: str,
    harness: str,
    options: ParseOptions,
    stages: list[Stage],
    conversation: str | None,
) -> Feed:
    """The one session *transcript* is (or the one chosen in it), stages applied."""
    feed = next(feeds(transcript, harness, options, conversation))
    return Feed(apply_stages(feed.batches, stages), feed.skipped)


async def _convert(fmt: Format, output: str | None, job: Feed) -> None:
    if fmt is Format.jsonl:
        with _output(output, atomic=False) as stream:
            jsonl = JsonlSink(stream, flush=output is None)
            events = 0
            async for batch in job.batches:
                events += len(batch.events)
                await jsonl.send(batch)
            await jsonl.aclose()
        _skip_summary(events, job.skipped())
        return
    with _output(output, atomic=True) as stream:
        sink = SessionJsonSink(stream)
        async for batch in job.batches:
            await sink.send(batch)
        sink.finish(job.skipped())
        await sink.aclose()


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
    with _output(output, atomic=output is not None) as stream:
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
    _skip_summary(events, skipped, f"{sessions} sessions, ")


def _skip_summary(events: int, skipped: dict[str, int], sessions: str = "") -> None:
    text = f"agentminutes: {sessions}{events} events, {sum(skipped.values())} skipped records"
    if skipped:
        text += " (" + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())) + ")"
    print(text, file=sys.stderr)


def _options(
    harness_version: str, permissive: bool, keep_raw: bool, text_form: TextForm
) -> ParseOptions:
    return ParseOptions(
        permissive=permissive,
        keep_raw=keep_raw,
        harness_version=harness_version,
        text_form=text_form.value,
    )


ConversationOpt = Annotated[
    str | None,
    typer.Option(
        "--conversation",
        help="In a multi-conversation source (ChatGPT or claude.ai export, turns.db): "
        "the conversation to read, by id or unique id prefix.",
    ),
]


@app.command()
def convert(
    transcript: Transcript,
    fmt: Annotated[
        Format,
        typer.Option("--format", help="json (the whole session) or jsonl (one event per line)."),
    ] = Format.json,
    output: OutputOpt = None,
    harness: HarnessOpt = "auto",
    harness_version: HarnessVersionOpt = "",
    permissive: PermissiveOpt = False,
    keep_raw: Annotated[
        bool, typer.Option("--keep-raw", help="Keep the verbatim source records in provenance.")
    ] = False,
    max_payload_bytes: Annotated[
        int,
        typer.Option(
            "--max-payload-bytes",
            help="Replace tool-result payloads larger than this by size and sha256 (0 keeps them whole).",
        ),
    ] = 0,
    promote: PromoteOpt = None,
    text_form: TextFormOpt = TextForm.bare,
    conversation: ConversationOpt = None,
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Convert every conversation of the source: JSONL, one whole session JSON per line.",
        ),
    ] = False,
) -> None:
    """Convert a transcript to the normalized session (json) or event stream (jsonl)."""
    options = _options(harness_version, permissive, keep_raw, text_form)
    stages = _stages(max_payload_bytes, promote)
    if every:
        if conversation:
            raise UsageError("--all converts every conversation; drop --conversation, or --all")
        if fmt is Format.jsonl:
            raise UsageError(
                "--all writes one whole session per line; it does not combine with --format jsonl"
            )
        anyio.run(_convert_all, transcript, output, harness, options, stages)
        return
    anyio.run(_convert, fmt, output, _feed(transcript, harness, options, stages, conversation))


async def _stats(output: str | None, job: Feed) -> None:
    with _output(output, atomic=True) as stream:
        sink = StatsSink(stream)
        async for batch in job.batches:
            await sink.send(batch)
        sink.finish()
        await sink.aclose()


@app.command()
def stats(
    transcript: Transcript,
    output: OutputOpt = None,
    harness: HarnessOpt = "auto",
    harness_version: HarnessVersionOpt = "",
    permissive: PermissiveOpt = False,
    promote: PromoteOpt = None,
    text_form: TextFormOpt = TextForm.bare,
    conversation: ConversationOpt = None,
    include_subagents: Annotated[
        bool,
        typer.Option(
            "--include-subagents",
            help="Summarize the whole task: the session and its subagent transcripts, "
            "each on its own, added up, with a per-agent split.",
        ),
    ] = False,
    root: Annotated[
        str | None,
        typer.Option(
            "--root",
            help="With --include-subagents: where to look for Codex and Antigravity "
            "subagents (default: the harness's folders).",
        ),
    ] = None,
    all_subagents: Annotated[
        bool,
        typer.Option(
            "--all-subagents",
            help="With --include-subagents, Claude Code: also the workflow agents nested "
            "below subagents/ (the reference CLI leaves them out).",
        ),
    ] = False,
) -> None:
    """Summarize a session: tool mix, bytes retrieved, latency, tokens, models, final answer."""
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
            text_form=text_form.value,
            promote=promote or [],
        )
        return
    options = _options(harness_version, permissive, False, text_form)
    job = _feed(transcript, harness, options, _stages(0, promote), conversation)
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
    import msgspec

    from agentminutes._task import nested_left_out, task_stats_sync

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
    with _output(output, atomic=True) as stream:
        stream.write(data)
    left_out = nested_left_out(task, all_subagents)
    if left_out:
        print(
            f"agentminutes: note: {left_out} subagent transcripts nested below "
            "subagents/ (workflow agents) are not counted; --all-subagents adds them",
            file=sys.stderr,
        )


@app.command()
def detect(transcript: Transcript) -> None:
    """Print the harness that wrote a transcript and how sure detection is."""
    from agentminutes._detect import detect_command

    detect_command(transcript)


@app.command()
def follow(
    targets: Annotated[
        list[str] | None,
        typer.Argument(
            help="Transcript files (they may not exist yet) or folders of transcripts; "
            "default: the --harness's transcript folder.",
            show_default=False,
        ),
    ] = None,
    harness: HarnessOpt = "auto",
    fmt: Annotated[
        Format, typer.Option("--format", help="Output format; follow writes jsonl.")
    ] = Format.jsonl,
    to: Annotated[
        str,
        typer.Option(
            "--to",
            help="Where events go: - (stdout), file:PATH (append), tcp://HOST:PORT or "
            "unix:PATH (a collector; ?buffer=BYTES sets the buffer, default 4 MiB).",
        ),
    ] = "-",
    state: Annotated[
        str | None,
        typer.Option(
            "--state", help="Save progress here and resume from it: each event written once."
        ),
    ] = None,
    from_end: Annotated[
        bool,
        typer.Option(
            "--from-end", help="Skip what the transcripts already hold (without --state)."
        ),
    ] = False,
    idle_exit: Annotated[
        float | None,
        typer.Option(
            "--idle-exit",
            help="Stop, writing held events, after this many seconds without new lines.",
        ),
    ] = None,
    cwd: Annotated[
        str | None,
        typer.Option("--cwd", help="Only sessions whose working directory is DIR or under it."),
    ] = None,
    session_id: Annotated[
        str | None, typer.Option("--session-id", help="Only this session (and its subagents).")
    ] = None,
    poll: Annotated[
        bool, typer.Option("--poll", help="Poll file sizes instead of file-change notification.")
    ] = False,
    harness_version: HarnessVersionOpt = "",
    permissive: PermissiveOpt = False,
    keep_raw: Annotated[
        bool, typer.Option("--keep-raw", help="Keep the verbatim source records in provenance.")
    ] = False,
    max_payload_bytes: Annotated[
        int,
        typer.Option(
            "--max-payload-bytes",
            help="Replace tool-result payloads larger than this by size and sha256 (0 keeps them whole).",
        ),
    ] = 0,
    promote: PromoteOpt = None,
    text_form: TextFormOpt = TextForm.bare,
) -> None:
    """Follow transcripts as they are written: events within milliseconds of each line.

    One transcript prints what convert --format jsonl prints for it, event by
    event. Several (or a folder) print one envelope per line:
    {"transcript": PATH, "harness": NAME, "event": EVENT}. SIGINT, SIGTERM
    and --idle-exit stop it (exit 0) after writing held events; with --state,
    SIGTERM keeps them in the state for the next run instead.
    """
    from agentminutes._follow_run import follow_main

    follow_main(
        targets=targets,
        harness=harness,
        fmt=fmt.value,
        to=to,
        state=state,
        from_end=from_end,
        idle_exit=idle_exit,
        cwd=cwd,
        session_id=session_id,
        poll=poll,
        harness_version=harness_version,
        permissive=permissive,
        keep_raw=keep_raw,
        max_payload_bytes=max_payload_bytes,
        promote=promote,
        text_form=text_form.value,
    )


@app.command()
def sessions(
    harness: Annotated[
        str,
        typer.Option(
            "--harness", help="One harness; default: the default folders of every harness."
        ),
    ] = "",
    root: Annotated[
        str,
        typer.Option(
            "--root",
            help="Search this folder instead of the default ones (needs --harness); for a "
            "data-export harness, an export file or a folder of them.",
        ),
    ] = "",
    cwd: Annotated[
        str, typer.Option("--cwd", help="Keep sessions whose recorded working directory is DIR.")
    ] = "",
    session_id: Annotated[
        str,
        typer.Option(
            "--session-id",
            help="Keep the session (or subagent) with this id; with --harness, looked up directly.",
        ),
    ] = "",
    since: Annotated[
        str,
        typer.Option(
            "--since", help="Keep sessions active at or after T (RFC 3339, or YYYY-MM-DD: local)."
        ),
    ] = "",
    until: Annotated[
        str,
        typer.Option(
            "--until",
            help="Keep sessions active at or before T (RFC 3339, or YYYY-MM-DD: that whole day).",
        ),
    ] = "",
    fmt: Annotated[
        str,
        typer.Option(
            "--format", help="paths (transcript paths, subagents included), json, or jsonl."
        ),
    ] = "paths",
    all_subagents: Annotated[
        bool,
        typer.Option(
            "--all-subagents",
            help="Claude Code: also subagents nested below subagents/ (workflow agents).",
        ),
    ] = False,
) -> None:
    """List session transcripts in the harnesses' own folders, filtered by identity or time.

    Per-file errors go to stderr and set exit status 1 without stopping the
    scan; a summary of what was matched, filtered, skipped and unreadable
    follows. Sessions that record no working directory never match --cwd.
    """
    from agentminutes._sessions import sessions_command

    code = sessions_command(
        harness=harness,
        root=root or None,
        cwd=cwd,
        session_id=session_id,
        since=since,
        until=until,
        fmt=fmt,
        all_subagents=all_subagents,
    )
    if code:
        raise typer.Exit(code)


@app.command()
def archive(
    to: Annotated[
        str,
        typer.Option("--to", help="The archive folder (created if missing).", show_default=False),
    ],
    harness: Annotated[str, typer.Option("--harness", help="The sessions' harness.")],
    session_id: Annotated[
        str | None, typer.Option("--session-id", help="Archive this session (and its subagents).")
    ] = None,
    cwd: Annotated[
        str | None,
        typer.Option("--cwd", help="Archive every session whose working directory is DIR."),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", help="With --cwd: only sessions active since T (RFC 3339 or YYYY-MM-DD)."
        ),
    ] = None,
    root: Annotated[
        str | None,
        typer.Option("--root", help="Look for sessions here instead of the harness's folders."),
    ] = None,
    permissive: PermissiveOpt = False,
) -> None:
    """Copy sessions with their subagent transcripts and sidecars into a folder, and normalize them.

    Files keep their path relative to the harness's folder; each transcript
    gets its normalized session beside it (FILE.agentminutes.json) and
    MANIFEST.json records every file's size, sha256, source and copy time.
    Run it again to add what changed: transcripts that grew are extended with
    their new complete lines; a source changed any other way is reported
    (exit 1) and its copy kept. Sources are only read; a session still being
    written is copied up to its last complete line.
    """
    from agentminutes._archive import archive_sync

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
    if not result.ok:
        raise typer.Exit(1)
