"""Several transcripts read by worker processes: the same output, errors and exit as one process.

The size above which workers start (``pipeline.processes.PARALLEL_BYTES``) is
lowered to one byte, so the fixtures are read by real worker processes; each
test runs the command line in this process with ``--jobs 1`` and ``--jobs 2``
and compares everything it wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentminutes.cli import main
from agentminutes.pipeline import processes
from conftest import FIXTURES

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
CODEX = FIXTURES / "codex" / "agent-sessions" / "codex_050_legacy.jsonl"
COPILOT = FIXTURES / "copilot" / "agent-sessions" / "copilot_small_0.0.420.jsonl"
ANTIGRAVITY = FIXTURES / "antigravity" / "agent-sessions" / "cli_schema_drift.jsonl"
#: A Claude Code task with workflow agents nested below subagents/ (a note on stderr).
WORKFLOWS = FIXTURES / "claude-code" / "ccl" / "11110000-0000-4000-8000-000000000001.jsonl"


@pytest.fixture
def workers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Workers start for any size; the list records each start's worker count."""
    import agentminutes.cli.commands as commands

    monkeypatch.setattr(processes, "PARALLEL_BYTES", 1)
    started: list[int] = []
    real = commands.in_order

    def spy(*args: Any, **kwargs: Any) -> Any:
        started.append(args[3])
        return real(*args, **kwargs)

    monkeypatch.setattr(commands, "in_order", spy)
    return started


def _run(capfd: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capfd.readouterr()
    return code, out, err


def _transcripts(tmp_path: Path) -> list[Path]:
    """Real transcripts of four harnesses, and between them one that is no transcript,
    one that fails half-way, and one that is missing."""
    broken = tmp_path / "not-a-transcript.jsonl"
    broken.write_bytes(b"this is not a transcript\n")
    halfway = tmp_path / "halfway.jsonl"
    halfway.write_bytes(CC.read_bytes() + b"{oops\n")
    return [CC, broken, CODEX, halfway, tmp_path / "missing.jsonl", COPILOT, ANTIGRAVITY, CC]


def test_stats_of_several_is_the_same_with_workers(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], workers: list[int]
) -> None:
    paths = _transcripts(tmp_path)
    one = _run(capfd, "stats", "--jobs", "1", *paths)
    assert workers == []
    two = _run(capfd, "stats", "--jobs", "2", *paths)
    assert workers == [2]
    assert two == one
    code, out, err = two
    assert code == 1
    assert len(out.splitlines()) == 5
    errors = [line for line in err.splitlines() if line.startswith("Error:")]
    failed = [paths[1], paths[3], paths[4]]  # not a transcript, half-way, missing: in order
    assert len(errors) == len(failed)
    assert all(str(p) in e for p, e in zip(failed, errors, strict=True))
    assert "8 transcripts (3 failed)" in err
    assert "Traceback" not in err


def test_stats_paths_from_into_a_folder_is_the_same_with_workers(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], workers: list[int]
) -> None:
    paths = _transcripts(tmp_path)
    listing = tmp_path / "paths.txt"
    listing.write_text("".join(f"{p}\n" for p in paths))
    got = []
    for jobs in ("1", "2"):
        folder = tmp_path / f"out{jobs}"
        code, out, err = _run(
            capfd, "stats", "--jobs", jobs, "--paths-from", listing, "--to-dir", folder
        )
        files = {p.name: p.read_bytes() for p in folder.iterdir()}
        got.append((code, out.replace(str(folder), "OUT"), err, files))
    assert workers == [2]
    assert got[0] == got[1]
    assert len(got[0][3]) == 4  # five written, the transcript given twice into one file


def test_stats_with_skips_and_notes_is_the_same_with_workers(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], workers: list[int]
) -> None:
    # --permissive turns the half-read line into a counted skip; --usage prints its
    # pricing notes, per transcript, on stderr.
    paths = _transcripts(tmp_path)
    one = _run(capfd, "stats", "--permissive", "--usage", "--jobs", "1", *paths)
    two = _run(capfd, "stats", "--permissive", "--usage", "--jobs", "2", *paths)
    assert workers == [2]
    assert two == one
    assert "skipped records" in one[2]


def test_notes_come_where_one_process_writes_them(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], workers: list[int]
) -> None:
    # Each task's note about the workflow agents it leaves out is printed by a worker;
    # it comes on stderr between the error lines, as one process prints it.
    paths = [WORKFLOWS, tmp_path / "missing.jsonl", WORKFLOWS, CC]
    one = _run(capfd, "stats", "--include-subagents", "--jobs", "1", *paths)
    two = _run(capfd, "stats", "--include-subagents", "--jobs", "2", *paths)
    assert workers == [2]
    assert two == one
    lines = one[2].splitlines()
    assert lines[0].startswith("agentminutes: note: ")
    assert lines[1].startswith("Error: ")
    assert "missing.jsonl" in lines[1]
    assert lines[2].startswith("agentminutes: note: ")


def test_jobs_is_at_least_one(capfd: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capfd, "stats", "--jobs", "0", CC, CODEX)
    assert code == 2
    assert "--jobs" in err


def _antigravity_root(tmp_path: Path) -> Path:
    """Antigravity conversations (identities told by reading each transcript whole), one
    of them failing at its last line and one holding no conversation."""
    root = tmp_path / "brain"
    sources = sorted((FIXTURES / "antigravity").glob("*/*.jsonl"))
    for i, src in enumerate([*sources, *sources]):
        logs = root / f"conversation-{i:02d}" / ".system_generated" / "logs"
        logs.mkdir(parents=True)
        (logs / "transcript_full.jsonl").write_bytes(src.read_bytes())
    failing = root / "conversation-01" / ".system_generated" / "logs" / "transcript_full.jsonl"
    failing.write_bytes(failing.read_bytes() + b"{oops\n")
    empty = root / "conversation-02" / ".system_generated" / "logs" / "transcript_full.jsonl"
    empty.write_bytes(b"\n")
    return root


@pytest.mark.parametrize("fmt", ["paths", "json"])
def test_sessions_read_whole_are_the_same_with_workers(
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fmt: str,
) -> None:
    monkeypatch.setattr(processes, "PARALLEL_BYTES", 1)
    started: list[int] = []
    real = processes.in_order

    def spy(*args: Any, **kwargs: Any) -> Any:
        started.append(len(args[1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(processes, "in_order", spy)
    root = _antigravity_root(tmp_path)
    args = ("sessions", "--harness", "antigravity", "--root", root, "--format", fmt)
    one = _run(capfd, *args, "--jobs", "1")
    assert started == []
    two = _run(capfd, *args, "--jobs", "2")
    assert started == [len(list(root.iterdir()))]  # every transcript read by the workers
    assert two == one
    code, _, err = one
    assert code == 1
    assert "conversation-01" in err
    assert "1 error" in err
    assert "1 skipped file" in err
