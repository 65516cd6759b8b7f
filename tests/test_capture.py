"""``agentminutes run`` and ``agentminutes.capture``: a fake agent (a real subprocess that
writes real transcripts, a session with its subagents, line by line) is captured from the
first line, its events are the one-shot parse's, its session is archived whole, and the
exit status is the agent's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import msgspec
import pytest

import agentminutes
from conftest import FIXTURES

SESSION = "8aa54c1d-5030-4491-be42-e0c416424b8a"
MAIN = FIXTURES / "claude-code" / "claudeless" / f"{SESSION}.jsonl"
SUBAGENTS = sorted((MAIN.with_suffix("") / "subagents").glob("*.jsonl"))
OTHER = FIXTURES / "claude-code" / "profilesite" / "d45db2bf-d60b-4801-a95b-f5f61f4bda64.jsonl"

#: The fake agent: copies a session (and its subagents) into the Claude Code home line by
#: line, each line in two writes, prints the session id, exits with the status asked.
AGENT = """
import os, sys, time
home, status, main, *subagents = sys.argv[1:]
project = os.path.join(home, ".claude", "projects", "-work")
session = os.path.basename(main)[: -len(".jsonl")]
pairs = [(main, os.path.join(project, session + ".jsonl"))]
pairs += [(s, os.path.join(project, session, "subagents", os.path.basename(s))) for s in subagents]
outs = {}
for _, target in pairs:
    os.makedirs(os.path.dirname(target), exist_ok=True)
    outs[target] = open(target, "ab", buffering=0)
queues = [(open(s, "rb").read().splitlines(keepends=True), t) for s, t in pairs]
while any(q for q, _ in queues):
    for lines, target in queues:
        if lines:
            line = lines.pop(0)
            outs[target].write(line[: len(line) // 2])
            time.sleep(0.002)
            outs[target].write(line[len(line) // 2 :])
print(f"session: {session}", flush=True)
sys.exit(int(status))
"""

_enc = msgspec.json.Encoder()


def _one_shot(path: Path) -> list[dict]:
    return [json.loads(_enc.encode(e)) for e in agentminutes.iter_events(path)]


def _home(tmp_path: Path) -> Path:
    """A home with a session there before the run (not the run's: not captured)."""
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-work"
    project.mkdir(parents=True)
    (project / OTHER.name).write_bytes(OTHER.read_bytes())
    return home


def _command(home: Path, status: int) -> list[str]:
    return [sys.executable, "-c", AGENT, str(home), str(status), str(MAIN), *map(str, SUBAGENTS)]


def _check_archive(archive: Path, home: Path) -> None:
    project = home / ".claude" / "projects" / "-work"
    for rel in [f"{SESSION}.jsonl", *(f"{SESSION}/subagents/{s.name}" for s in SUBAGENTS)]:
        copies = list(archive.rglob(rel.rsplit("/", 1)[-1]))
        assert len(copies) == 1, rel
        assert copies[0].read_bytes() == (project / rel).read_bytes()  # complete
        assert Path(f"{copies[0]}.agentminutes.json").exists()
    assert not list(archive.rglob(OTHER.name))


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_capture_follows_archives_and_keeps_the_status(tmp_path: Path, backend: str) -> None:
    home = _home(tmp_path)
    archive = tmp_path / "archive"
    printed: list[bytes] = []

    async def main() -> tuple[agentminutes.Capture, dict[str, list[dict]]]:
        got: dict[str, list[dict]] = {}
        async with agentminutes.capture(
            _command(home, 3),
            harness="claude-code",
            env={**os.environ, "HOME": str(home)},
            archive=archive,
            output=printed.append,
        ) as run:
            async for env in run:
                got.setdefault(env.transcript, []).append(json.loads(_enc.encode(env.event)))
        return run, got

    run, got = anyio.run(main, backend=backend)
    project = home / ".claude" / "projects" / "-work"
    assert run.returncode == 3
    assert run.sessions == [SESSION]
    assert run.errors == []
    assert got == {
        str(project / f"{SESSION}.jsonl"): _one_shot(MAIN),
        **{str(project / SESSION / "subagents" / s.name): _one_shot(s) for s in SUBAGENTS},
    }
    assert b"".join(printed) == f"session: {SESSION}\n".encode()
    assert len(run.archived) == 1
    assert run.archived[0].errors == []
    _check_archive(archive, home)


def test_agentminutes_run_writes_events_and_exits_with_the_command_status(tmp_path: Path) -> None:
    home = _home(tmp_path)
    archive = tmp_path / "archive"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentminutes",
            "run",
            "--harness",
            "claude-code",
            "--archive",
            str(archive),
            "--",
            *_command(home, 5),
        ],
        capture_output=True,
        env={**os.environ, "HOME": str(home)},
        timeout=120,
        check=False,
    )
    assert proc.returncode == 5, proc.stderr
    assert proc.stderr.decode() == f"session: {SESSION}\n"  # the agent's own output
    envelopes = [json.loads(line) for line in proc.stdout.splitlines()]
    project = home / ".claude" / "projects" / "-work"
    by: dict[str, list[dict]] = {}
    for env in envelopes:
        by.setdefault(env["transcript"], []).append(env["event"])
    assert by[str(project / f"{SESSION}.jsonl")] == _one_shot(MAIN)
    for s in SUBAGENTS:
        assert by[str(project / SESSION / "subagents" / s.name)] == _one_shot(s)
    assert len(by) == 1 + len(SUBAGENTS)
    assert {env["session_id"] for env in envelopes} == {SESSION}
    _check_archive(archive, home)
