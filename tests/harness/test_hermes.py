"""The Hermes Agent adapter on session stores recorded in the lab (hermes-agent 0.19.0)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentminutes.harness import detect
from agentminutes.pipeline.document_sources import DocumentConversion, route
from agentminutes.schema import Event, EventKind
from agentminutes.schema.usage import OtelUsage, requests
from conftest import read_db
from follow_helpers import FollowProc
from lab_recordings import recordings, scripted_calls, tool_calls

RECORDINGS = recordings("hermes")
IDS = [r.name for r in RECORDINGS]


def events_of(db: Path) -> list[Event]:
    found = route(str(db), "auto")
    assert found.document is not None
    assert found.adapter is not None
    assert found.adapter.name == "hermes"
    try:
        sessions = list(DocumentConversion(found.document, found.adapter).sessions())
    finally:
        found.document.release()
    return [e for s in sessions for e in s.events]


def test_recorded_in_several_scenarios() -> None:
    assert {r.folder.name for r in RECORDINGS} >= {"tools", "long-output", "text"}


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_recording_converts_strictly_and_auto_detected(rec) -> None:
    (db,) = rec.sources
    cls, _ = detect(db.read_bytes()[:65536])
    assert cls.name == "hermes"
    events = events_of(db)
    assert events[0].kind == EventKind.SESSION_META
    assert not [e for e in events if e.kind == EventKind.UNKNOWN]
    prompts = [
        b.text
        for e in events
        if e.kind == EventKind.USER_MESSAGE and e.user_message and e.user_message.content
        for b in e.user_message.content
    ]
    assert prompts == [r["command"][r["command"].index("-z") + 1] for r in rec.note["runs"]]
    answers = [e for e in events if e.kind == EventKind.ASSISTANT_MESSAGE]
    assert len(answers) == rec.truth["conversation_requests"]


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_tool_calls_equal_the_scripted_ones(rec) -> None:
    got = tool_calls(events_of(rec.sources[0]))
    want = scripted_calls(rec.truth)
    assert [(n, i) for n, i, _ in got] == [(n, i) for n, i, _ in want]
    assert [err for _, _, err in got] == [fails for _, _, fails in want]


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_usage_equals_what_was_billed(rec) -> None:
    events = events_of(rec.sources[0])
    total = OtelUsage.zero()
    for r in requests(events, "hermes"):
        assert r.otel is not None
        total.add(r.otel)
    billed = rec.truth["billed"]
    assert total.input_tokens == billed["input_tokens"]
    assert total.output_tokens == billed["output_tokens"]
    assert total.cache_read_input_tokens == billed["cache_read_input_tokens"]
    assert total.cache_creation_input_tokens == billed["cache_creation_input_tokens"]
    assert total.reasoning_output_tokens == billed["reasoning_output_tokens"]


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_") and k != "HERMES_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args],
        capture_output=True,
        text=True,
        env={**env, "HOME": str(home)},
        check=False,
    )


def test_sessions_and_usage_find_the_store_with_no_harness_named(tmp_path: Path) -> None:
    for rec in RECORDINGS:
        home = rec.folder / "home"
        done = _cli(home, "sessions", "--format", "json")
        assert done.returncode == 0, done.stderr
        rows = json.loads(done.stdout)
        assert [r["meta"]["harness"] for r in rows] == ["hermes"]
        done = _cli(
            home,
            "usage",
            "--by",
            "harness",
            "--format",
            "json",
            "--no-cost",
            "--cache-dir",
            str(tmp_path / "cache"),
        )
        assert done.returncode == 0, done.stderr
        (row,) = json.loads(done.stdout)
        assert row["otel"]["input_tokens"] == rec.truth["billed"]["input_tokens"]


def test_follow_on_a_store_hermes_keeps_writing(tmp_path: Path) -> None:
    (rec,) = [r for r in RECORDINGS if r.folder.name == "tools"]
    converted = _cli(rec.folder, "convert", "--format", "jsonl", str(rec.sources[0]))
    want = [json.loads(line) for line in converted.stdout.splitlines()]
    db = tmp_path / "state.db"
    with read_db(rec.sources[0]) as source, contextlib.closing(sqlite3.connect(db)) as copy:
        # The same schema, empty; then the rows written in the order Hermes wrote them.
        for (sql,) in source.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN"
            " ('sessions', 'messages', 'session_model_usage')"
        ):
            copy.execute(sql)
        copy.commit()
        follower = FollowProc(db)
        try:
            # Pacing, not a condition: a database follower stats its files and shows no sign
            # of having started; one that starts late reads the rows at its start, the same.
            time.sleep(0.5)
            session = source.execute("SELECT * FROM sessions").fetchone()
            copy.execute(f"INSERT INTO sessions VALUES ({','.join('?' * len(session))})", session)
            copy.commit()
            for row in source.execute("SELECT * FROM messages ORDER BY id"):
                copy.execute(f"INSERT INTO messages VALUES ({','.join('?' * len(row))})", row)
                copy.commit()
                time.sleep(0.05)
            for row in source.execute("SELECT * FROM session_model_usage"):
                copy.execute(
                    f"INSERT INTO session_model_usage VALUES ({','.join('?' * len(row))})", row
                )
            copy.commit()
            follower.wait_lines(len(want) - 1)
            follower.wait_quiet(0.5)
            assert follower.stop(signal.SIGINT) == 0
        finally:
            follower.kill()
    assert [e["event"] for e in follower.events] == want
