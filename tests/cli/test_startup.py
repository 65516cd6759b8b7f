"""What a command's start-up imports: the fast path loads none of the heavy modules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import FIXTURES

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
CODEX = FIXTURES / "codex" / "agent-sessions" / "codex_050_legacy.jsonl"
#: Modules a synchronous convert, stats or detect of a JSONL file has no use for.
HEAVY = (
    "typer",
    "click",
    "rich",
    "anyio",
    "asyncio",
    "aiofiles",
    "sqlite3",
    "zipfile",
    "pyarrow",
    "opentelemetry",
    "google",
    "requests",
)

PROBE = """
import json, sys
from agentminutes.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps([code, sorted(sys.modules)]), file=sys.stderr)
"""


def imported_by(*args: str) -> tuple[int, set[str], bytes]:
    """Run the CLI's entry point on *args* in a fresh interpreter; its exit and its modules."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, check=False, timeout=120
    )
    code, modules = json.loads(proc.stderr.splitlines()[-1])
    return code, set(modules), proc.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["convert", str(CC)],
        ["convert", "--format", "jsonl", str(CC)],
        ["stats", str(CODEX)],
        ["detect", str(CC)],
        ["convert", str(CC), str(CODEX)],
        ["convert", "--format", "otlp-json", str(CC)],  # spans written by our own encoder
    ],
)
def test_fast_path_imports_no_heavy_module(args: list[str]) -> None:
    code, modules, out = imported_by(*args)
    assert code == 0
    assert out  # the command did its work
    loaded = {m for m in modules if m.split(".")[0] in HEAVY}
    assert not loaded, loaded
    # the secret detectors compile their expressions on import: only a redaction loads them
    assert "agentminutes.stages.detectors" not in modules


def test_the_detectors_are_loaded_when_a_convert_redacts() -> None:
    code, modules, out = imported_by("convert", "--format", "jsonl", "--redact", str(CC))
    assert code == 0
    assert out
    assert "agentminutes.stages.detectors" in modules


def test_only_the_detected_adapter_family_is_loaded() -> None:
    _, modules, _ = imported_by("convert", "--format", "jsonl", str(CODEX))
    assert "agentminutes.harness.codex" in modules
    for other in ("chatgpt", "claude_ai", "turns_db", "copilot", "gemini_cli", "pi"):
        assert f"agentminutes.harness.{other}" not in modules, other


def test_stdin_still_converts_through_the_async_path() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "convert", "--format", "jsonl", "-"],
        input=CC.read_bytes(),
        capture_output=True,
        check=False,
        timeout=120,
    )
    code, modules = json.loads(proc.stderr.splitlines()[-1])
    assert code == 0
    assert "anyio" in modules
    direct = subprocess.run(
        [sys.executable, "-m", "agentminutes", "convert", "--format", "jsonl", str(CC)],
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert proc.stdout == direct.stdout
