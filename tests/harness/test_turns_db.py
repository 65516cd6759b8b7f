"""The Pinocchio/Geppetto turns.db adapter, on the constructed turn store."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from agentminutes import conversations, load
from agentminutes.errors import DetectError, ParseError
from agentminutes.harness import Confidence
from agentminutes.harness.turns_db import TurnsDBAdapter
from conftest import FIXTURES, run_cli

DB = FIXTURES / "turns-db" / "turns.db"
AGENT = "5cf06c5f-0460-485e-a7c5-92d56af826f9"


def test_detect() -> None:
    assert TurnsDBAdapter.sniff(DB.read_bytes()[:65536]) == Confidence.CERTAIN
    assert run_cli("detect", DB).stdout == b"turns-db\tcertain\n"


def test_listing() -> None:
    listed = conversations(DB)
    assert [c.id for c in listed] == [AGENT, "9a1d2e3f-0000-4000-8000-000000000002"]
    assert listed[0].title == "Which files are in the workspace?"
    assert listed[0].messages == 5
    assert listed[0].created == "2026-01-03T00:00:00Z"


def test_snapshots_diff_into_new_turns() -> None:
    s = load(DB, conversation=AGENT)
    assert s.report.skipped_records == {
        "superseded/pre_inference": 2,
        "superseded/post_inference": 4,
        "superseded/input": 7,
        "repeated_block": 6,
    }
    kinds = [e.kind for e in s.events]
    assert kinds == [
        "session_meta",
        "system",
        "user_message",
        "thinking",
        "tool_call",
        "assistant_message",
        "tool_result",
        "assistant_message",
        "user_message",
        "user_message",
        "tool_call",
        "assistant_message",
        "tool_result",
        "assistant_message",
    ]
    ev = s.events
    # The system prompt re-created for turn 2 (same content, new id) is not repeated.
    assert sum(1 for e in ev if e.kind == "system") == 1
    assert ev[3].message_id == ev[4].message_id == ev[5].message_id
    assert ev[4].tool_call.tool_call_id == ev[6].tool_result.tool_call_id == "call_1"
    assert ev[6].tool_result.tool_name == "list_files"
    assert ev[7].assistant_message.model == "gpt-5-mini"
    assert ev[8].user_message.origin == "harness"  # written by agent-mode middleware
    assert ev[9].user_message.origin == "human"
    failed = ev[12].tool_result
    assert failed.is_error
    assert failed.content[0].text == "permission denied"
    assert ev[1].timestamp == "2026-01-03T00:00:00.01Z"
    assert s.totals is None
    assert s.report.orphan_tool_results == 0


def test_runtime_key_stands_in_for_the_model() -> None:
    s = load(DB, conversation="9a1d")
    answer = next(e for e in s.events if e.kind == "assistant_message")
    assert answer.assistant_message.model == "cerebras-llama-3.3-70b"
    other = [e for e in s.events if e.kind == "system" and e.system.subtype == "block/other"]
    assert len(other) == 1


def test_stats_and_stdin() -> None:
    stats = json.loads(run_cli("stats", "--conversation", AGENT, DB).stdout)
    assert "totals" not in stats
    assert stats["tool_errors"] == 1
    from_file = run_cli("convert", "--all", DB)
    from_stdin = run_cli("convert", "--all", "-", stdin=DB.read_bytes())
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout


def test_other_databases(tmp_path: Path) -> None:
    plain = tmp_path / "plain.db"
    with closing(sqlite3.connect(plain)) as conn, conn:
        conn.execute("CREATE TABLE notes (x TEXT)")
    with pytest.raises(DetectError, match="sqlite"):
        load(plain)
    with pytest.raises(ParseError, match="not a Pinocchio turn store"):
        load(plain, harness="turns-db")


def test_unknown_block_kind(tmp_path: Path) -> None:
    path = tmp_path / "turns.db"
    path.write_bytes(DB.read_bytes())
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE blocks SET kind = 'hologram' WHERE block_id = 'llm-c2'")
    with pytest.raises(ParseError, match=r'unrecognized block kind "hologram".* at record 4'):
        load(path, conversation="9a1d")
    s = load(path, conversation="9a1d", permissive=True)
    assert s.report.unknown_events == 1
