#!/usr/bin/env python3
"""Check the built wheel as a downstream project sees it: installed, typed, ``mypy --strict``.

    python scripts/check_typed_client.py [--keep DIR]

Builds the wheel (``pip wheel --no-deps .``), installs it into a fresh virtualenv
with mypy, writes a small client that uses ``agentminutes.load``,
``agentminutes.follow`` and a stage (:data:`CLIENT`), runs ``mypy --strict`` on
it — no ``# type: ignore`` anywhere — and then runs it on a fixture. Prints
what mypy and the client print; exits non-zero if either fails. Takes about a
minute (the venv and its installs); it needs PyPI for mypy and the
dependencies.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = (
    ROOT / "fixtures" / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
)

CLIENT = '''\
"""A downstream program: a whole session with a stage, then the same transcript followed."""

import asyncio
import sys

import agentminutes
from agentminutes import Event, Session


def without_thinking(event: Event) -> Event | None:
    return None if event.kind == "thinking" else event


def summarize(path: str) -> tuple[int, dict[str, int]]:
    stage = agentminutes.per_event(without_thinking)
    session: Session = agentminutes.load(path, stages=[stage], max_payload_bytes=4096)
    return len(session.events), dict(session.stats().tool_calls_by_kind or {})


async def kinds_followed(path: str) -> list[str]:
    return [str(event.kind) async for event in agentminutes.follow(path, idle_exit=0.3)]


if __name__ == "__main__":
    events, tools = summarize(sys.argv[1])
    followed = asyncio.run(kinds_followed(sys.argv[1]))
    print(f"loaded {events} events, tools {tools}; followed {len(followed)} events")
'''


def _run(*cmd: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    print("$", " ".join(map(str, cmd)), flush=True)
    proc = subprocess.run(list(map(str, cmd)), cwd=cwd, capture_output=True, text=True, check=False)
    sys.stdout.write(proc.stdout)
    sys.stdout.write(proc.stderr)
    return proc


def check(work: Path) -> int:
    """Build, install and check in *work*; the exit status."""
    wheels = work / "wheels"
    if _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, ROOT).returncode:
        return 1
    [wheel] = wheels.glob("*.whl")
    venv = work / "venv"
    if _run(sys.executable, "-m", "venv", venv).returncode:
        return 1
    python = venv / "bin" / "python"
    if _run(python, "-m", "pip", "install", "-q", wheel, "mypy").returncode:
        return 1
    client = work / "client.py"
    client.write_text(CLIENT, encoding="utf-8")
    assert "type: ignore" not in CLIENT
    checked = _run(python, "-m", "mypy", "--strict", "--no-incremental", client, cwd=work)
    ran = _run(python, client, FIXTURE, cwd=work)
    return 1 if checked.returncode or ran.returncode else 0


def main() -> int:
    """Parse the arguments and run the check."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        return check(args.keep)
    with tempfile.TemporaryDirectory(prefix="agentminutes-typed-") as work:
        return check(Path(work))


if __name__ == "__main__":
    raise SystemExit(main())
