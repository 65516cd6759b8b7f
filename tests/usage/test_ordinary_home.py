"""An ordinary home: real transcripts, files with no conversation, most harnesses not installed.

``usage``, ``sessions`` and ``export`` must agree on it: exit 0 and no error
line, the files with no conversation (Claude Code writes files of ``summary``
or ``file-history-snapshot`` records only) counted as skipped; a corrupt
transcript is one error line (the harness named once) and exit 1 in all three.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from session_home import FIXTURES

PROJECT = ".claude/projects/-work-proj"
#: Real sessions (with usage) copied into the home.
SESSIONS = (
    "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl",
    "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
)


def _records_of_type(source: str, kind: str) -> str:
    """The lines of a fixture whose record ``type`` is *kind* (real records, not made up)."""
    lines = (FIXTURES / source).read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if line.strip() and json.loads(line).get("type") == kind]
    assert kept, (source, kind)
    return "\n".join(kept) + "\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    project = home / PROJECT
    project.mkdir(parents=True)
    for source in SESSIONS:
        (project / Path(source).name).write_bytes((FIXTURES / source).read_bytes())
    summaries = _records_of_type(
        "claude-code/ccl/07f2e15c-a38b-454b-9148-60edc06de401.jsonl", "summary"
    )
    (project / "11111111-1111-4111-8111-111111111111.jsonl").write_text(summaries)
    snapshots = _records_of_type(
        "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl", "file-history-snapshot"
    )
    (project / "22222222-2222-4222-8222-222222222222.jsonl").write_text(snapshots)
    (project / "33333333-3333-4333-8333-333333333333.jsonl").write_bytes(b"")
    return home


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_HOME", "_DIR"))}
    env.update(HOME=str(home), TZ="UTC", XDG_CACHE_HOME=str(home / ".cache"))
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=120,
        check=False,
    )


COMMANDS = {
    "usage": ("usage", "--format", "json"),
    "sessions": ("sessions",),
    "export": ("export", "--format", "atif", "--to", "dataset"),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_ordinary_home_is_no_error(home: Path, name: str) -> None:
    p = _cli(home, *COMMANDS[name])
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    # No line names a file of the home (that is what an error line does).
    assert not [line for line in lines if str(home / ".claude") in line]
    assert not [line for line in lines if line.startswith("Error")]
    # The three files with no conversation: counted, in the same words by every command.
    assert any(line.endswith("skipped files: 3 no conversation") for line in lines), lines
    # Harnesses not installed here are not news.
    assert not [line for line in lines if "root does not exist" in line or "any harness" in line]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_corrupt_transcript_is_one_error_line(home: Path, name: str) -> None:
    bad = home / PROJECT / "44444444-4444-4444-8444-444444444444.jsonl"
    bad.write_text("not JSON at all\n")
    p = _cli(home, *COMMANDS[name])
    assert p.returncode == 1
    named = [line for line in p.stderr.splitlines() if str(bad) in line]
    assert len(named) == 1, p.stderr
    # The harness is named once, by whoever read the file.
    assert named[0].count("claude-code") <= 1, named[0]


def test_usage_of_paths_equals_usage_of_the_home(home: Path) -> None:
    scanned = json.loads(_cli(home, "usage", "--by", "model", "--format", "json").stdout)
    named = _cli(home, "usage", "--by", "model", "--format", "json", str(home / PROJECT))
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout) == scanned
    assert "skipped files: 3 no conversation" in named.stderr
    one = home / PROJECT / Path(SESSIONS[0]).name
    alone = _cli(home, "usage", "--by", "model", "--format", "json", "--no-cache", str(one))
    rows = json.loads(alone.stdout)
    assert 0 < sum(r["requests"] for r in rows) < sum(r["requests"] for r in scanned)
    # Filters that choose sessions in the harnesses' folders make no sense with paths.
    assert _cli(home, "usage", "--cwd", "/x", str(one)).returncode == 1


def _followed(home: Path, *args: str) -> list[str]:
    p = _cli(home, "follow", "--idle-exit", "0.5", *args)
    assert p.returncode == 0, p.stderr
    return sorted({json.loads(line)["transcript"] for line in p.stdout.splitlines()})


def test_follow_watches_every_harness_folder_and_cwd_means_what_it_means_elsewhere(
    home: Path,
) -> None:
    sessions = _cli(home, "sessions").stdout.split()
    # No --harness, no target: the folders sessions and usage scan.
    followed = _followed(home)
    assert set(sessions) <= set(followed)
    # --cwd: the recorded working directory is DIR (not a folder above it), as in sessions.
    exact = _cli(home, "sessions", "--cwd", "/Users/admin").stdout.split()
    assert [Path(p).name for p in exact] == [Path(SESSIONS[0]).name]
    assert _followed(home, "--cwd", "/Users/admin") == exact
    assert _cli(home, "sessions", "--cwd", "/Users").stdout == ""
    assert _followed(home, "--cwd", "/Users") == []
