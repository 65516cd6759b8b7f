"""The formats' table: one row a format, one surface a module, and every command reads it."""

from __future__ import annotations

import importlib
import io
import re
from pathlib import Path

import anyio
import pytest

from agentminutes.cli.spec import COMMANDS
from agentminutes.formats import FORMATS, Options, format_named, offered
from agentminutes.formats.write import write_feed
from agentminutes.harness import ParseOptions
from agentminutes.pipeline.document_sources import feeds
from conftest import FIXTURES, run_cli

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
CODEX = FIXTURES / "codex" / "agent-sessions" / "codex_050_legacy.jsonl"
#: The formats whose loss report has a stderr line of its own.
LOSSY = ("acp", "otlp-json", "atif")


def _choices(command: str, flag: str = "--format") -> tuple[str, ...]:
    (found,) = [c for c in COMMANDS if c.words == (command,)]
    return found.by_flag[flag].choices


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_row_names_a_module_with_the_one_surface(name: str) -> None:
    fmt = FORMATS[name]
    assert fmt.name == name
    module = importlib.import_module(f"agentminutes.formats.{fmt.module}")
    writer = module.writer(Options())
    for method in ("add", "finish", "loss"):
        assert callable(getattr(writer, method)), (name, method)
    assert fmt.extension.startswith(".")
    assert fmt.commands


def test_the_extensions_are_apart() -> None:
    endings = [f.extension for f in FORMATS.values()]
    assert len(set(endings)) == len(endings)


def test_the_commands_offer_what_the_table_lists() -> None:
    assert (
        _choices("convert") == offered("convert") == ("json", "jsonl", "acp", "otlp-json", "atif")
    )
    assert _choices("export") == ("parquet", *offered("export")) == ("parquet", "atif")
    assert _choices("follow") == offered("follow") == ("jsonl",)


def test_a_format_a_command_does_not_offer_is_a_usage_error() -> None:
    from agentminutes.errors import UsageError

    with pytest.raises(UsageError, match=r'unknown format "stats" \(want json, jsonl, acp'):
        format_named("stats", "convert")
    assert format_named("atif", "export") is FORMATS["atif"]


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_write_feed_writes_what_the_command_writes(name: str) -> None:
    """The library loop and ``convert``/``stats`` give the same bytes for every format."""

    async def written() -> bytes:
        feed = next(feeds(str(CC), "auto", ParseOptions(), sync=True))
        out = io.BytesIO()
        result = await write_feed(FORMATS[name], out, feed)
        assert result.events > 0
        assert (result.loss is None) == (name not in LOSSY)
        return out.getvalue()

    args = ["stats", "--format", "json"] if name == "stats" else ["convert", "--format", name]
    proc = run_cli(*args, CC)
    assert proc.returncode == 0, proc.stderr
    assert anyio.run(written) == proc.stdout


@pytest.mark.parametrize("name", offered("convert"))
def test_to_dir_is_alike_for_every_format(name: str, tmp_path: Path) -> None:
    """Each transcript's file is its convert alone, named by the table's ending; stderr holds
    one summary line for all, and for a lossy format one loss line summed over them."""
    out = tmp_path / "out"
    proc = run_cli("convert", "--format", name, "--to-dir", out, CC, CODEX)
    assert proc.returncode == 0, proc.stderr
    files = sorted(out.iterdir())
    assert len(files) == 2
    assert all(f.name.endswith(FORMATS[name].extension) for f in files)
    for path in (CC, CODEX):
        (mine,) = [f for f in files if f.name.startswith(path.stem + ".")]
        alone = run_cli("convert", "--format", name, path)
        assert mine.read_bytes() == alone.stdout
    lines = proc.stderr.decode().splitlines()
    assert lines[0].startswith("agentminutes: 2 transcripts, 2 sessions, ")
    if name in LOSSY:
        assert len(lines) == 2
        events = int(re.search(r"(\d+) events", lines[0]).group(1))  # type: ignore[union-attr]
        assert lines[1].startswith(f"agentminutes: {name}: {events} events, ")
    else:
        assert len(lines) == 1


@pytest.mark.parametrize(
    ("old", "new", "name"),
    [
        ("agentminutes.export.acp", "agentminutes.formats.acp", "Projector"),
        ("agentminutes.export.otel", "agentminutes.formats.otlp_json", "SpanProjector"),
        ("agentminutes.export.atif", "agentminutes.formats.atif", "trajectory"),
        ("agentminutes.export.losses", "agentminutes.formats.losses", "loss_summary"),
        ("agentminutes.sinks.documents", "agentminutes.formats.json", "SessionJsonSink"),
        ("agentminutes.sinks.documents", "agentminutes.formats.stats", "StatsSink"),
        ("agentminutes.pipeline.documents", "agentminutes.pipeline.document_sources", "feeds"),
        ("agentminutes.export.runner", "agentminutes.export.command", "export_dataset"),
        ("agentminutes.schema.summary", "agentminutes.schema.stats", "StatsBuilder"),
    ],
)
def test_a_moved_name_still_imports_with_a_warning(old: str, new: str, name: str) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=f"import {name} from {new}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)
    with pytest.raises(AttributeError):  # and no warning: they are errors here
        module.no_such_name  # noqa: B018
