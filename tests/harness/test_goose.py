"""The Goose adapter: a ``sessions.db`` built from Goose's schema (constructed), converted and followed."""

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
from db_replay import copy_schema, replay_goose
from follow_helpers import FollowProc, wait_for

DB = FIXTURES / "goose" / "constructed" / "sessions" / "sessions.db"
SCRIPT = Path(__file__).parent.parent.parent / "scripts" / "build_goose_fixture.py"


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    """The fixture database, closed after the test (Python 3.13 warns of one left open)."""
    with contextlib.closing(sqlite3.connect(DB)) as c:
        yield c


def _dump(path: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as c:
        return list(c.iterdump())


def _sessions(path: Path) -> dict[str, agentminutes.Session]:
    return {s.meta.subagent_id or s.meta.session_id: s for s in agentminutes.iter_sessions(path)}


def test_the_fixture_is_what_its_script_builds(tmp_path: Path) -> None:
    fresh = tmp_path / "sessions.db"
    subprocess.run([sys.executable, str(SCRIPT), str(fresh)], check=True)
    assert _dump(fresh) == _dump(DB)


def test_the_database_is_detected_and_every_message_read_strictly(conn: sqlite3.Connection) -> None:
    assert detect(DB) == ("goose", "certain")
    sessions = _sessions(DB)
    assert set(sessions) == {r[0] for r in conn.execute("select id from sessions")}
    for sid, session in sessions.items():
        assert not [e for e in session.events if e.kind == "unknown"]
        contents = [
            (role, json.loads(c), json.loads(m))
            for role, c, m in conn.execute(
                "select role, content_json, metadata_json from messages where session_id = ? order by id",
                (sid,),
            )
        ]
        typed = [
            b["text"]
            for role, c, m in contents
            if role == "user" and m["userVisible"] and m["agentVisible"]
            for b in c
            if b["type"] == "text"
        ]
        human = [
            e
            for e in session.events
            if e.kind == "user_message" and e.user_message.origin == "human"
        ]
        assert [e.user_message.content[0].text for e in human] == typed
        requests = [b for role, c, m in contents for b in c if b["type"] == "toolRequest"]
        calls = [e.tool_call for e in session.events if e.kind == "tool_call"]
        assert [(c.tool_call_id, c.name) for c in calls] == [
            (b["id"], b["toolCall"]["value"]["name"]) for b in requests
        ]


def test_tool_kinds_errors_visibility_and_the_sessions_totals(conn: sqlite3.Connection) -> None:
    main = _sessions(DB)["20260108_1"]
    results = [e.tool_result for e in main.events if e.kind == "tool_result"]
    assert [(r.tool_name, r.is_error) for r in results] == [
        ("developer__shell", False),
        ("developer__text_editor", True),
    ]
    assert {e.tool_call.name: e.tool_call.kind for e in main.events if e.kind == "tool_call"} == {
        "developer__shell": "execute",
        "developer__text_editor": "edit",
    }
    harness = [
        e for e in main.events if e.kind == "user_message" and e.user_message.origin == "harness"
    ]
    assert len(harness) == 1
    assert [e.system.subtype for e in main.events if e.kind == "system"] == ["ui_message"]
    replies = [e for e in main.events if e.kind == "assistant_message"]
    used = [e.assistant_message.usage for e in replies if e.assistant_message.usage]
    row = conn.execute(
        "select accumulated_input_tokens, accumulated_output_tokens, accumulated_cost from sessions"
        " where id = '20260108_1'"
    ).fetchone()
    assert [(u.input_tokens, u.output_tokens, u.cost) for u in used] == [row]
    assert replies[-1].assistant_message.usage is used[0]
    assert {e.assistant_message.model for e in replies} == {"gpt-4o"}
    child = _sessions(DB)["20260108_2"]
    assert child.meta.is_subagent


def _converted(db: Path) -> dict[str, list[Any]]:
    want = {}
    for sid in _sessions(db):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "agentminutes",
                "convert",
                "--format",
                "jsonl",
                "--conversation",
                sid,
                str(db),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        want[sid] = [json.loads(x) for x in proc.stdout.splitlines()]
    return want


def test_follow_the_database_goose_keeps_writing_matches_convert(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    writer = copy_schema(DB, db)
    f = FollowProc(db)
    try:
        wait_for(lambda: (tmp_path / "sessions.db-wal").exists(), what="the WAL")
        replay_goose(DB, writer)
        wait_for(lambda: len(f.lines) > 8, what="events of the commits")
        f.wait_quiet(0.5)
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
        writer.close()
    got: dict[str, list[Any]] = {}
    for env in f.events:
        got.setdefault(env["transcript"], []).append(env["event"])
    assert got == {f"{db}#{sid}": events for sid, events in _converted(db).items()}
    assert "Traceback" not in f.stderr
