"""``usage --by session`` on a terminal: each id with its project, title and last activity."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from session_home import build_home


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_home(tmp_path_factory.mktemp("home"))


def _usage(home: Path, *args: str) -> str:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "CODEX", "CLAUDE"))}
    proc = subprocess.run(
        [sys.executable, "-m", "agentminutes", "usage", "--no-cache", *args],
        capture_output=True,
        env={**keep, "HOME": str(home), "COLUMNS": "240"},
        check=False,
    )
    return proc.stdout.decode()


def test_each_session_has_its_project_title_and_last_activity(home: Path) -> None:
    text = _usage(home, "--by", "session", "--format", "table")
    header, *lines = text.splitlines()
    assert header.split()[:5] == ["Session", "Project", "Title", "Last", "activity"]
    [row] = [line for line in lines if line.startswith("ef958aa1-0e93-49f0-bb71-150f63befcd1")]
    assert "OK, we're going to make a little experiment" in row
    assert "2026-04-18" in row
    [row] = [line for line in lines if line.startswith("11110000-0000-4000-8000-000000000001")]
    assert "/repo" in row
    assert "Review the diff with a workflow." in row
    # the latest activity last, just above the totals
    rows = json.loads(_usage(home, "--by", "session", "--format", "json"))
    shown = [line.split()[0] for line in lines if line and not line.startswith(("Total", " "))]
    ids = [r["session_id"] for r in rows]
    assert sorted(i for i in shown if i in ids) == sorted(ids)
    stamps = [m.group(0) for line in lines if (m := re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", line))]
    assert len(stamps) >= 10
    assert stamps == sorted(stamps)


def test_json_rows_are_unchanged(home: Path) -> None:
    rows = json.loads(_usage(home, "--by", "session", "--format", "json"))
    assert rows
    for row in rows:
        assert "title" not in row
        assert "project" not in row
        assert "session_id" in row
