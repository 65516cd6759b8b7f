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

from agentminutes._errors import UsageError
from agentminutes._pipeline import Conversion, Stage, apply_stages, open_chunks, source_name
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
        with tempfile.SpooledTemporaryFile(max_size=32 << 20) as spool:
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


async def _convert(
    transcript: str,
    fmt: Format,
    output: str | None,
    conversion: Conversion,
    stages: list[Stage],
) -> None:
    batches = apply_stages(conversion.batches(open_chunks(transcript)), stages)
    if fmt is Format.jsonl:
        with _output(output, atomic=False) as stream:
            jsonl = JsonlSink(stream, flush=output is None)
            events = 0
            async for batch in batches:
                events += len(batch.events)
                await jsonl.send(batch)
            await jsonl.aclose()
        _skip_summary(events, conversion.skipped)
        return
    with _output(output, atomic=True) as stream:
        sink = SessionJsonSink(stream)
        async for batch in batches:
            await sink.send(batch)
        sink.finish(conversion.skipped)
        await sink.aclose()


def _skip_summary(events: int, skipped: dict[str, int]) -> None:
    text = f"agentminutes: {events} events"
    if skipped:
        total = sum(skipped.values())
        parts = ", ".join(f"{k} {v}" for k, v in sorted(skipped.items()))
        text += f", {total} skipped records ({parts})"
    print(text, file=sys.stderr)


def _conversion(
    transcript: str,
    harness: str,
    harness_version: str,
    permissive: bool,
    keep_raw: bool,
    text_form: TextForm,
) -> Conversion:
    options = ParseOptions(
        permissive=permissive,
        keep_raw=keep_raw,
        harness_version=harness_version,
        text_form=text_form.value,
    )
    return Conversion(name=source_name(transcript), harness=harness, options=options)


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
) -> None:
    """Convert a transcript to the normalized session (json) or event stream (jsonl)."""
    conversion = _conversion(transcript, harness, harness_version, permissive, keep_raw, text_form)
    stages = _stages(max_payload_bytes, promote)
    anyio.run(_convert, transcript, fmt, output, conversion, stages)


async def _stats(
    transcript: str, output: str | None, conversion: Conversion, stages: list[Stage]
) -> None:
    batches = apply_stages(conversion.batches(open_chunks(transcript)), stages)
    with _output(output, atomic=True) as stream:
        sink = StatsSink(stream)
        async for batch in batches:
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
) -> None:
    """Summarize a session: tool mix, bytes retrieved, latency, tokens, models, final answer."""
    conversion = _conversion(transcript, harness, harness_version, permissive, False, text_form)
    stages = _stages(0, promote)
    anyio.run(_stats, transcript, output, conversion, stages)


@app.command()
def detect(transcript: Transcript) -> None:
    """Print the harness that wrote a transcript and how sure detection is."""
    from agentminutes._detect import detect_command

    detect_command(transcript)
