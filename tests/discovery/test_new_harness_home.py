"""A home holding a session of each harness added by issue 34 that has a home folder.

``sessions``, ``usage`` and ``export`` find every one of them with no
``--harness`` (Aider writes in each repository, so it is found under a
``--root``): Amp, Continue, Cursor (with its subagent), Crush (through
``projects.json``) and Goose.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    share = home / ".local" / "share"
    (share / "amp" / "threads").mkdir(parents=True)
    for p in (FIXTURES / "amp" / "constructed" / "threads").iterdir():
        shutil.copy(p, share / "amp" / "threads")
    (home / ".continue" / "sessions").mkdir(parents=True)
    for p in (FIXTURES / "continue-cli" / "constructed" / "sessions").iterdir():
        shutil.copy(p, home / ".continue" / "sessions")
    (home / ".continue" / "sessions" / "sessions.json").write_text("[]")  # the index: no session
    shutil.copytree(FIXTURES / "cursor" / "constructed" / "projects", home / ".cursor" / "projects")
    data = home / "proj" / ".crush"
    data.mkdir(parents=True)
    shutil.copy(FIXTURES / "crush" / "constructed" / "project" / ".crush" / "crush.db", data)
    (share / "crush").mkdir(parents=True)
    listing = {"projects": [{"path": str(data.parent), "data_dir": str(data)}]}
    (share / "crush" / "projects.json").write_text(json.dumps(listing))
    (share / "goose" / "sessions").mkdir(parents=True)
    shutil.copy(
        FIXTURES / "goose" / "constructed" / "sessions" / "sessions.db",
        share / "goose" / "sessions",
    )
    repo = home / "src" / "calc"
    repo.mkdir(parents=True)
    shutil.copy(FIXTURES / "aider" / "simple-calculator" / ".aider.chat.history.md", repo)
    return home


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if not k.endswith(("_HOME", "_DIR", "_DATA", "_ROOT"))
    }
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


def _conversations(db: Path, table: str) -> set[str]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return {r[0] for r in conn.execute(f"select id from {table}")}


def test_sessions_finds_every_session_with_no_harness_named(home: Path) -> None:
    p = _cli(home, "sessions", "--format", "json")
    assert p.returncode == 0, p.stderr
    found: dict[str, set[str]] = {}
    for ref in json.loads(p.stdout):
        found.setdefault(ref["meta"]["harness"], set()).add(ref["meta"]["session_id"])
    cursor_id = next((home / ".cursor" / "projects").glob("*/agent-transcripts/*")).name
    assert found == {
        "amp": {json.loads(next((home / ".local/share/amp/threads").iterdir()).read_text())["id"]},
        "continue-cli": {
            json.loads(p.read_text())["sessionId"]
            for p in (home / ".continue" / "sessions").glob("*-*.json")
        },
        "cursor": {cursor_id},
        "crush": _conversations(home / "proj" / ".crush" / "crush.db", "sessions"),
        "goose": _conversations(home / ".local/share/goose/sessions/sessions.db", "sessions"),
    }
    refs = json.loads(p.stdout)
    cursor = next(r for r in refs if r["meta"]["harness"] == "cursor")
    assert [Path(x).parent.name for x in cursor["subagent_paths"]] == ["subagents"]
    # Aider's history sits in its repository: found under a root.
    p = _cli(
        home, "sessions", "--harness", "aider", "--root", str(home / "src"), "--format", "json"
    )
    assert p.returncode == 0, p.stderr
    assert [Path(r["path"]).parent.name for r in json.loads(p.stdout)] == ["calc"]


def test_usage_counts_every_harness_that_records_usage(home: Path) -> None:
    p = _cli(home, "usage", "--format", "json", "--by", "harness")
    assert p.returncode == 0, p.stderr
    rows = {r["harness"]: r for r in json.loads(p.stdout)}
    assert set(rows) == {"amp", "continue-cli", "crush", "goose"}
    assert "no usage recorded by: cursor" in p.stderr
    with contextlib.closing(sqlite3.connect(home / "proj" / ".crush" / "crush.db")) as crush:
        (top,) = crush.execute(
            "select sum(cost) from sessions where parent_session_id is null"
        ).fetchone()
    assert rows["crush"]["reported_cost_usd"] == pytest.approx(top)  # a subagent's cost once


def test_export_writes_every_session(home: Path) -> None:
    p = _cli(home, "export", "--format", "atif", "--to", str(home / "dataset"))
    assert p.returncode == 0, p.stderr
    assert "0 failed" in p.stderr
    assert "6 exported" in p.stderr  # amp, continue, cursor and its subagent, crush.db, sessions.db
