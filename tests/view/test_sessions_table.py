"""``sessions`` for a person: a table on a terminal, newest first, as wide as the terminal;
in a pipe the paths as ever."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from agentminutes.discovery.layouts import SessionRef
from session_home import build_home


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_home(tmp_path_factory.mktemp("home"))


def _env(home: Path, columns: int) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "CODEX", "CLAUDE"))}
    return {**keep, "HOME": str(home), "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm"}


def _terminal(args: list[str], env: dict[str, str]) -> str:
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentminutes", *args],
        stdout=terminal,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    proc.wait(timeout=120)
    return re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode()).replace("\r", "")


def test_piped_output_is_the_paths_as_before(home: Path) -> None:
    env = _env(home, 100)
    run = [sys.executable, "-m", "agentminutes", "sessions"]
    piped = subprocess.run(run, capture_output=True, env=env, check=False)
    paths = subprocess.run([*run, "--format", "paths"], capture_output=True, env=env, check=False)
    assert piped.stdout == paths.stdout
    assert piped.stdout.decode().splitlines()[0].startswith(str(home))
    refused = subprocess.run([*run, "--limit", "3"], capture_output=True, env=env, check=False)
    assert refused.returncode == 2 or refused.returncode == 1
    assert b"--format table" in refused.stderr


@pytest.mark.parametrize("columns", [100, 160])
def test_on_a_terminal_a_table_fits_the_width(home: Path, columns: int) -> None:
    shown = _terminal(["sessions", "--limit", "8"], _env(home, columns))
    lines = [line for line in shown.splitlines() if line.strip()]
    header = lines[0].split()
    assert header == [
        "Started",
        "Harness",
        "Project",
        "Title",
        "Model",
        "Msgs",
        "Tools",
        "Tokens",
        "Cost",
        "Path",
    ]
    rows = lines[1:9]
    assert all(len(line) <= columns for line in lines)
    assert lines[9].startswith("8 of ")
    # newest activity first: the scan's own windows say which that is
    jsonl = subprocess.run(
        [sys.executable, "-m", "agentminutes", "sessions", "--format", "jsonl"],
        capture_output=True,
        env=_env(home, columns),
        check=False,
    )
    import json

    refs = [msgspec.json.decode(line, type=SessionRef) for line in jsonl.stdout.splitlines()]
    assert json  # the decoder above is msgspec's
    newest = max(refs, key=lambda r: r.window()[1])
    assert newest.meta.harness in rows[0]


def test_sorted_by_tool_calls_the_busiest_comes_first(home: Path) -> None:
    shown = _terminal(["sessions", "--sort", "tools", "--limit", "3"], _env(home, 200))
    lines = [line for line in shown.splitlines() if line.strip()]
    tools_at = lines[0].index("Tools")
    counts = [int(line[tools_at - 2 : tools_at + 5].split()[-1]) for line in lines[1:4]]
    assert counts == sorted(counts, reverse=True)
    assert counts[0] >= 40
