"""The Crush adapter: a database built from Crush's schema (constructed), converted and followed."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agentminutes
from agentminutes.pipeline.detect import detect
from conftest import FIXTURES
from db_replay import copy_schema, replay_crush
from follow_helpers import FollowProc, wait_for

DB = FIXTURES / "crush" / "constructed" / "project" / ".crush" / "crush.db"
SCRIPT = Path(__file__).parent.parent.parent / "scripts" / "build_crush_fixture.py"


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    """The fixture database, closed after the test (Python 3.13 warns of one left open)."""
    with contextlib.closing(sqlite3.connect(DB)) as c:
        yield c


def _dump(path: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as c:
        return list(c.iterdump())


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args], capture_output=True, text=True, check=True
    )


def _sessions(path: Path) -> dict[str, agentminutes.Session]:
    found = list(agentminutes.iter_sessions(path))
    return {s.meta.subagent_id or s.meta.session_id: s for s in found}


def test_the_fixture_is_what_its_script_builds(tmp_path: Path) -> None:
    fresh = tmp_path / "crush.db"
    subprocess.run([sys.executable, str(SCRIPT), str(fresh)], check=True)
    assert _dump(fresh) == _dump(DB)


def test_the_database_is_detected_and_every_session_read_strictly(conn: sqlite3.Connection) -> None:
    assert detect(DB) == ("crush", "certain")
    rows = {r[0]: r for r in conn.execute("select id, parent_session_id, title from sessions")}
    sessions = _sessions(DB)
    assert set(sessions) == set(rows)
    for sid, session in sessions.items():
        assert not [e for e in session.events if e.kind == "unknown"]
        assert session.meta.cwd == str(DB.parent.parent)
        texts = [
            json.loads(p)["data"]["text"]
            for (parts,) in conn.execute(
                "select parts from messages where session_id = ? and role = 'user'", (sid,)
            )
            for p in map(json.dumps, json.loads(parts))
        ]
        assert [
            e.user_message.content[0].text for e in session.events if e.kind == "user_message"
        ] == texts


def test_a_subagent_session_is_named_by_the_call_that_started_it() -> None:
    sessions = _sessions(DB)
    child = next(s for s in sessions.values() if s.meta.is_subagent)
    parent = sessions[child.meta.session_id]
    agent_calls = [
        e.tool_call for e in parent.events if e.kind == "tool_call" and e.tool_call.name == "agent"
    ]
    assert [c.tool_call_id for c in agent_calls] == [child.meta.subagent_id]


def test_usage_is_the_last_requests_and_the_cost_the_sessions_own(conn: sqlite3.Connection) -> None:
    rows = {
        r[0]: r
        for r in conn.execute(
            "select id, parent_session_id, prompt_tokens, completion_tokens, cost from sessions"
        )
    }
    sessions = _sessions(DB)
    for sid, session in sessions.items():
        replies = [e for e in session.events if e.kind == "assistant_message"]
        used = [e.assistant_message.usage for e in replies if e.assistant_message.usage]
        _, _, prompt, completion, cost = rows[sid]
        if not (prompt or completion or cost):
            assert used == []
            continue
        assert len(used) == 1
        assert replies[-1].assistant_message.usage is used[0]
        children = sum(r[4] for r in rows.values() if r[1] == sid)
        assert (used[0].input_tokens, used[0].output_tokens) == (prompt, completion)
        assert used[0].cost == pytest.approx(cost - children)
    failed = next(s for s in sessions.values() if any(e.kind == "system" for e in s.events))
    error = next(e.system for e in failed.events if e.kind == "system")
    assert (error.subtype, error.level) == ("error", "error")
    assert "529" in error.text


def _converted(db: Path) -> dict[str, list[Any]]:
    want = {}
    for sid in _sessions(db):
        proc = _cli("convert", "--format", "jsonl", "--conversation", sid, str(db))
        want[sid] = [json.loads(x) for x in proc.stdout.splitlines()]
    return want


def test_follow_a_database_crush_keeps_writing_matches_convert(tmp_path: Path) -> None:
    db = tmp_path / "crush.db"
    writer = copy_schema(DB, db)
    f = FollowProc(db)
    try:
        wait_for(
            lambda: f.proc.poll() is None and (tmp_path / "crush.db-wal").exists(), what="the WAL"
        )
        replay_crush(DB, writer)
        wait_for(lambda: len(f.lines) > 10, what="events of the commits")
        f.wait_quiet(0.5)
        streamed = {
            e["event"].get("id") for e in f.events if e["event"]["kind"] == "assistant_message"
        }
        assert streamed  # replies were written while the database grew, not at the stop
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
        writer.close()
    got: dict[str, list[Any]] = {}
    for env in f.events:
        got.setdefault(env["transcript"], []).append(env["event"])
    # Replies were first seen half written, and the usage came after them: what follow
    # wrote is what convert reads from the finished database.
    assert got == {f"{db}#{sid}": events for sid, events in _converted(db).items()}
    assert "Traceback" not in f.stderr
