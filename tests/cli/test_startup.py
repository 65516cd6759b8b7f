"""What a command's start-up imports: the fast path loads none of the heavy modules."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

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
    "calendar",  # with locale: timestamps does calendar's arithmetic itself
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
    assert "agentminutes.harness.codex.adapter" in modules
    # the other harnesses' descriptions (their folders' fronts) are read, their adapters not
    for other in ("chatgpt", "claude_ai", "turns_db", "copilot", "gemini_cli", "pi"):
        assert f"agentminutes.harness.{other}.adapter" not in modules, other


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


def test_detect_loads_one_adapter_family_and_no_document_pipeline() -> None:
    code, modules, out = imported_by("detect", str(CC))
    assert code == 0
    assert out.startswith(b"claude-code\t")
    # a line transcript is told from a ZIP or a database by its head (pipeline.sources)
    for module in ("pipeline.document_sources", "pipeline.conversion", "pipeline.batch"):
        assert f"agentminutes.{module}" not in modules, module
    # Claude Code's sniff rules Qwen Code's records out through their Structs alone
    assert "agentminutes.harness._qwen_records" in modules
    assert "agentminutes.harness.qwen_code.adapter" not in modules
    # the command table is Structs: the CLI's framework and its helpers stay out
    assert "agentminutes.cli.commands" not in modules


def test_a_zip_or_database_is_still_detected_by_what_it_holds() -> None:
    db = next((FIXTURES / "turns-db").glob("*.db"))
    code, modules, out = imported_by("detect", str(db))
    assert code == 0
    assert out.startswith(b"turns-db\t")
    assert "agentminutes.pipeline.document_sources" in modules


#: Runs the CLI's entry point and reports the modules loaded when the first event was
#: written to stdout (the follower then stops itself with --idle-exit).
FOLLOW_PROBE = """
import json, sys
import agentminutes.sinks.stdout as stdout
put = stdout.StdoutSink.put
first = []
def record(self, batch):
    put(self, batch)
    if not first:
        first.append(sorted(sys.modules))
stdout.StdoutSink.put = record
from agentminutes.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps([code, first[0] if first else [], sorted(sys.modules)]), file=sys.stderr)
"""

#: What follow to stdout needs only once its first events are out (or never).
LATER = (
    "asyncio",
    "anyio",
    "watchfiles",
    "ctypes",  # the inotify watch, set after what is on disk was written
    "socket",  # the socket sinks: only for tcp:// and unix:
    "selectors",
    "secrets",  # a redaction's key
    "random",
    "hmac",
    "sqlite3",
    "zipfile",
    "pathlib",  # the harnesses' default folders: a named transcript needs none
)


def test_follow_writes_its_first_event_before_loading_the_event_loop(tmp_path: Path) -> None:
    target = tmp_path / CC.name
    shutil.copy(CC, target)
    proc = subprocess.run(
        [sys.executable, "-c", FOLLOW_PROBE, "follow", "--idle-exit", "0.3", str(target)],
        capture_output=True,
        check=False,
        timeout=120,
    )
    code, at_first, at_end = json.loads(proc.stderr.splitlines()[-1])
    assert code == 0
    assert at_first, "no event was written"
    direct = subprocess.run(
        [sys.executable, "-m", "agentminutes", "convert", "--format", "jsonl", str(CC)],
        capture_output=True,
        check=True,
        timeout=120,
    )
    assert proc.stdout == direct.stdout  # the follow wrote the whole transcript
    loaded = {m for m in at_first if m.split(".")[0] in LATER}
    assert not loaded, loaded
    for module in (
        "agentminutes.pipeline.document_sources",  # the file is told a line transcript by its head
        "agentminutes.sinks.sockets",
        "agentminutes.harness.qwen_code.adapter",
        "agentminutes.stages.detectors",
    ):
        assert module not in at_first, module
    assert "anyio" in at_end  # then the follow went on, in the event loop, to its idle exit


def test_sessions_starts_without_the_conversion_commands(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-home-user-work"
    project.mkdir(parents=True)
    shutil.copy(CC, project / CC.name)
    code, modules, out = imported_by(
        "sessions", "--harness", "claude-code", "--root", str(tmp_path / "projects")
    )
    assert code == 0
    assert out.strip() == str(project / CC.name).encode()
    for module in (
        "agentminutes.cli.commands",
        "agentminutes.pipeline.document_sources",
        "agentminutes.stages",
        "agentminutes.harness.qwen_code.adapter",
        # the pager's and the close-match helpers: a listing to a pipe needs neither
        "subprocess",
        "shutil",
        "difflib",
    ):
        assert module not in modules, module
    assert not {m for m in modules if m.split(".")[0] in HEAVY}
    # one harness asked for: its layout alone is imported (and its adapter, to read identities)
    layouts = {m for m in modules if m.startswith("agentminutes.discovery.layouts.")}
    assert layouts == {f"agentminutes.discovery.layouts.{m}" for m in ("base", "registry")}
    layouts = {m for m in modules if m.startswith("agentminutes.harness.") and "layout" in m}
    assert layouts == {"agentminutes.harness.layout", "agentminutes.harness.claude_code.layout"}
    adapters = {m for m in modules if m.startswith("agentminutes.harness.") and ".adapter" in m}
    assert adapters == {"agentminutes.harness.claude_code.adapter"}
    # --harness names one folder: the others' descriptions are not read (3 ms of a start)
    folders = {m for m in modules if m.count(".") == 2 and m.startswith("agentminutes.harness.")}
    assert {"agentminutes.harness.aider", "agentminutes.harness.codex"}.isdisjoint(folders)


@pytest.mark.parametrize("args", [["stats", str(CC)], ["convert", "--format", "jsonl", str(CC)]])
def test_a_read_without_digests_loads_no_openssl(args: list[str]) -> None:
    # hashlib loads OpenSSL (~2 ms of every start): only a run that digests imports it
    # (truncation, redaction, a file name for one of several transcripts).
    code, modules, out = imported_by(*args)
    assert code == 0
    assert out
    assert "_hashlib" not in modules
