"""Shared test helpers: fixture paths, JSON canonicalization, running the CLI for real."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentminutes.formats.json import SessionJsonSink
from agentminutes.formats.stats import StatsSink
from agentminutes.harness import ParseOptions
from agentminutes.pipeline.batch import Batch, apply_stages
from agentminutes.pipeline.conversion import Conversion, open_chunks
from agentminutes.stages import promotions, truncate_payloads

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
GOLDEN = FIXTURES / "golden"

_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def canon(value: Any) -> Any:
    """Normalize parsed JSON so equal meanings compare equal (timestamps as instants)."""
    if isinstance(value, dict):
        return {k: canon(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canon(v) for v in value]
    if isinstance(value, str) and _TS.match(value):
        m = re.match(r"^(.*T\d{2}:\d{2}:\d{2})(\.\d+)?(.*)$", value)
        assert m is not None
        zone = "+00:00" if m.group(3) == "Z" else m.group(3)
        dt = datetime.fromisoformat(m.group(1) + zone)
        ns = int(((m.group(2) or ".")[1:] + "000000000")[:9])
        return ("instant", int(dt.timestamp()), ns)
    return value


def transcripts(harness: str) -> list[Path]:
    """Every transcript fixture of *harness* (sidecars excluded)."""
    base = FIXTURES / harness
    if not base.exists():
        return []
    return sorted(
        p
        for p in base.rglob("*")
        if p.is_file()
        and p.suffix in (".jsonl", ".json", ".log", ".zip", ".db", ".md")
        and not p.name.endswith(".meta.json")
        and p.name != "journal.jsonl"  # a workflow run's journal beside its agents
        and "golden" not in p.parts
    )


def fixture_id(path: Path) -> str:
    return str(path.relative_to(FIXTURES))


def _batches(
    path: Path,
    promote: Sequence[str],
    max_payload_bytes: int,
    harness: str,
    options: dict[str, Any],
) -> tuple[Conversion, AsyncIterator[Batch]]:
    conv = Conversion(name=str(path), harness=harness, options=ParseOptions(**options))
    stages = promotions(promote)
    if max_payload_bytes:
        stages.append(truncate_payloads(max_payload_bytes))
    return conv, apply_stages(conv.batches(open_chunks(path)), stages)


def convert_json(
    path: Path,
    *,
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    harness: str = "auto",
    **options: Any,
) -> Any:
    """Our whole-session JSON for *path*, parsed (in-process, through the real pipeline)."""

    async def run() -> bytes:
        out = io.BytesIO()
        conv, batches = _batches(path, promote, max_payload_bytes, harness, options)
        sink = SessionJsonSink(out)
        async for batch in batches:
            await sink.send(batch)
        sink.finish(conv.skipped)
        return out.getvalue()

    return json.loads(anyio.run(run))


def stats_json(
    path: Path, *, promote: Sequence[str] = (), harness: str = "auto", **options: Any
) -> Any:
    """Our stats JSON for *path*, parsed."""

    async def run() -> bytes:
        out = io.BytesIO()
        _, batches = _batches(path, promote, 0, harness, options)
        sink = StatsSink(out)
        async for batch in batches:
            await sink.send(batch)
        sink.finish()
        return out.getvalue()

    return json.loads(anyio.run(run))


def read_db(path: str | os.PathLike[str]) -> contextlib.closing[sqlite3.Connection]:
    """The database at *path* opened only to be read, closed by its ``with``.

    Immutable: nothing is written beside it (a WAL fixture opened for writing gets
    ``-wal`` and ``-shm`` files in the fixtures folder while the test runs).
    """
    uri = Path(path).resolve().as_uri() + "?mode=ro&immutable=1"
    return contextlib.closing(sqlite3.connect(uri, uri=True))


def run_cli(
    *args: str | os.PathLike[str], stdin: bytes | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """Run the real ``agentminutes`` command line in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *map(str, args)],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def cli() -> Any:
    return run_cli
