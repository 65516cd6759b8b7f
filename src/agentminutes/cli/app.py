"""The ``agentminutes`` command line: a thin typer layer that builds pipelines from flags."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from agentminutes._version import __version__
from agentminutes.cli.commands import run_convert, run_stats

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


class ConvertFormat(StrEnum):
    json = "json"
    jsonl = "jsonl"
    acp = "acp"


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
KeepRawOpt = Annotated[
    bool, typer.Option("--keep-raw", help="Keep the verbatim source records in provenance.")
]
MaxPayloadOpt = Annotated[
    int,
    typer.Option(
        "--max-payload-bytes",
        help="Replace tool-result payloads larger than this by size and sha256 (0 keeps them whole).",
    ),
]
OutputOpt = Annotated[
    str | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
]


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
        ConvertFormat,
        typer.Option(
            "--format",
            help="json (the whole session), jsonl (one event per line), or acp (the Agent "
            "Client Protocol session/update notifications, one JSON-RPC message per line; "
            "what they cannot carry is counted on stderr).",
        ),
    ] = ConvertFormat.json,
    output: OutputOpt = None,
    harness: HarnessOpt = "auto",
    harness_version: HarnessVersionOpt = "",
    permissive: PermissiveOpt = False,
    keep_raw: KeepRawOpt = False,
    max_payload_bytes: MaxPayloadOpt = 0,
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
    """Convert a transcript to the normalized session (json), its event stream (jsonl) or ACP updates (acp)."""
    run_convert(
        transcript,
        fmt=fmt.value,
        output=output,
        harness=harness,
        harness_version=harness_version,
        permissive=permissive,
        keep_raw=keep_raw,
        max_payload_bytes=max_payload_bytes,
        promote=promote,
        text_form=text_form.value,
        conversation=conversation,
        every=every,
    )


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
    run_stats(
        transcript,
        output=output,
        harness=harness,
        harness_version=harness_version,
        permissive=permissive,
        promote=promote,
        text_form=text_form.value,
        conversation=conversation,
        include_subagents=include_subagents,
        root=root,
        all_subagents=all_subagents,
    )


@app.command()
def detect(transcript: Transcript) -> None:
    """Print the harness that wrote a transcript and how sure detection is."""
    from agentminutes.cli.detect import detect_command

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
    keep_raw: KeepRawOpt = False,
    max_payload_bytes: MaxPayloadOpt = 0,
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
    from agentminutes.live.runner import follow_main

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
    from agentminutes.discovery.sessions import sessions_command

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
    if not result.ok:
        raise typer.Exit(1)


@app.command()
def export(
    targets: Annotated[
        list[str] | None,
        typer.Argument(
            help="Transcripts, data exports and folders of them (walked); default: the "
            "sessions in the harnesses' own folders, as `sessions` finds them.",
            show_default=False,
        ),
    ] = None,
    to: Annotated[
        str,
        typer.Option("--to", help="The dataset folder (created if missing).", show_default=False),
    ] = "",
    harness: HarnessOpt = "auto",
    root: Annotated[
        str | None,
        typer.Option("--root", help="Without TARGETs: search this folder (needs --harness)."),
    ] = None,
    cwd: Annotated[
        str | None,
        typer.Option("--cwd", help="Without TARGETs: sessions whose working directory is DIR."),
    ] = None,
    session_id: Annotated[
        str | None,
        typer.Option("--session-id", help="Without TARGETs: this session (and its subagents)."),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Without TARGETs: sessions active at or after T."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", help="Without TARGETs: sessions active at or before T."),
    ] = None,
    all_subagents: Annotated[
        bool,
        typer.Option(
            "--all-subagents",
            help="Without TARGETs, Claude Code: also the workflow agents nested below subagents/.",
        ),
    ] = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            help="Worker processes (default: the CPUs available).",
            show_default=False,
        ),
    ] = None,
    harness_version: HarnessVersionOpt = "",
    permissive: PermissiveOpt = False,
    max_payload_bytes: MaxPayloadOpt = 0,
    promote: PromoteOpt = None,
    text_form: TextFormOpt = TextForm.bare,
) -> None:
    """Export transcripts to a Hive-partitioned Parquet dataset DuckDB reads with no code.

    Tables events, sessions, tool_calls, requests and failures, in
    DIR/<table>/harness=<h>/date=<yyyy-mm-dd>/part-*.parquet. Run it again to add
    what is new or changed: each changed transcript's rows are replaced whole. A
    transcript that cannot be exported gets a failures row and an error line;
    the run goes on and exits 1. Needs pyarrow: pip install 'agentminutes[parquet]'.
    """
    from agentminutes.errors import UsageError
    from agentminutes.export.runner import export_command

    if not to:
        raise UsageError("export needs --to DIR, the dataset's folder")
    code = export_command(
        targets,
        to=to,
        harness=harness,
        root=root,
        cwd=cwd,
        session_id=session_id,
        since=since,
        until=until,
        all_subagents=all_subagents,
        jobs=jobs,
        permissive=permissive,
        harness_version=harness_version,
        text_form=text_form.value,
        promote=promote,
        max_payload_bytes=max_payload_bytes,
    )
    if code:
        raise typer.Exit(code)


drift_app = typer.Typer(
    name="drift",
    help="Check transcripts for format drift against the baselines shipped in the package.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(drift_app)


@drift_app.command("scan")
def drift_scan(
    transcripts: Annotated[
        list[str],
        typer.Argument(
            help="Transcript files, scanned in order.", metavar="TRANSCRIPT", show_default=False
        ),
    ],
) -> None:
    """Compare each transcript's vocabulary with its harness's baseline.

    For each file: the harness, a strict parse with every line accounted for,
    then each new record type, new key, missing key and new discriminator value
    (content block types, tool names, subtypes). Exit status: 0 clean, 1 drift,
    3 a file could not be checked (no harness detected, no baseline).
    """
    from agentminutes.drift import scan_command

    raise typer.Exit(scan_command(transcripts))
