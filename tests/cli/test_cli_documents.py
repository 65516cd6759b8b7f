"""The command line on multi-conversation sources: --conversation, --all, and their errors."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import FIXTURES, run_cli

GENUINE = FIXTURES / "chatgpt" / "conversations.json"
EXPORT = FIXTURES / "claude-ai" / "export.zip"
DB = FIXTURES / "turns-db" / "turns.db"


def _one_error_line(result) -> str:  # type: ignore[no-untyped-def]
    assert result.returncode == 1
    assert result.stdout == b""
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    return lines[0]


def test_several_conversations_need_a_choice() -> None:
    for path in (GENUINE, EXPORT, DB):
        line = _one_error_line(run_cli("convert", path))
        assert "--conversation ID" in line
        assert "--all" in line
        assert "Ids: " in line
    line = _one_error_line(run_cli("stats", EXPORT))
    assert "3 conversations" in line


def test_conversation_by_id_and_prefix() -> None:
    full = run_cli("convert", "--conversation", "c1000000-0000-4000-8000-000000000001", EXPORT)
    prefix = run_cli("convert", "--conversation", "c1", EXPORT)
    assert full.returncode == 0, full.stderr
    assert full.stdout == prefix.stdout
    session = json.loads(full.stdout)
    assert session["meta"] == {
        "harness": "claude-ai",
        "session_id": "c1000000-0000-4000-8000-000000000001",
    }
    assert "totals" not in session
    assert session["report"] == {}


def test_unknown_and_ambiguous_conversations() -> None:
    line = _one_error_line(run_cli("convert", "--conversation", "nope", GENUINE))
    assert 'no conversation "nope" among the 8' in line
    assert "Ids: " in line
    line = _one_error_line(run_cli("convert", "--conversation", "c", EXPORT))
    assert 'prefix "c" matches 3 conversations' in line
    line = _one_error_line(run_cli("stats", "--conversation", "nope", DB))
    assert "no conversation" in line


def test_all_prints_one_session_per_line(tmp_path: Path) -> None:
    result = run_cli("convert", "--all", GENUINE)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 8
    sessions = [json.loads(line) for line in lines]
    for s in sessions:
        assert set(s) == {"agentminutes_schema", "meta", "events", "report"}
        assert s["events"][0]["kind"] == "session_meta"
        assert s["events"][0]["session_meta"]["session_id"] == s["meta"]["session_id"]
    assert len({s["meta"]["session_id"] for s in sessions}) == 8
    assert result.stderr.decode().startswith("agentminutes: 8 sessions, ")
    out = tmp_path / "all.jsonl"
    to_file = run_cli("convert", "--all", "-o", out, GENUINE)
    assert to_file.returncode == 0, to_file.stderr
    assert out.read_bytes() == result.stdout


def test_all_and_single_session_sources(tmp_path: Path) -> None:
    modern = FIXTURES / "chatgpt" / "constructed-modern.json"
    one = run_cli("convert", modern)
    assert one.returncode == 0, one.stderr
    every = run_cli("convert", "--all", modern)
    assert json.loads(every.stdout) == json.loads(one.stdout)
    line = tmp_path / "s.jsonl"
    line.write_text(
        '{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-01-01T00:00:00Z",'
        '"message":{"role":"user","content":"hi"}}\n'
    )
    every = run_cli("convert", "--all", line)
    assert every.returncode == 0, every.stderr
    assert json.loads(every.stdout)["meta"]["session_id"] == "s1"
    err = _one_error_line(run_cli("convert", "--conversation", "s1", line))
    assert "single-session transcript" in err


def test_flag_conflicts() -> None:
    err = _one_error_line(run_cli("convert", "--all", "--conversation", "c1", EXPORT))
    assert "--all" in err
    err = _one_error_line(run_cli("convert", "--all", "--format", "jsonl", EXPORT))
    assert "--format jsonl" in err


def test_jsonl_events_of_one_conversation() -> None:
    result = run_cli("convert", "--format", "jsonl", "--conversation", "c2", EXPORT)
    assert result.returncode == 0, result.stderr
    kinds = [json.loads(line)["kind"] for line in result.stdout.splitlines()]
    assert kinds[0] == "session_meta"
    assert result.stderr == b"agentminutes: 6 events, 1 skipped records (off_branch 1)\n"


def test_stdin_sources() -> None:
    zipped = run_cli("convert", "--conversation", "c1", "-", stdin=EXPORT.read_bytes())
    assert zipped.returncode == 0, zipped.stderr
    assert zipped.stdout == run_cli("convert", "--conversation", "c1", EXPORT).stdout
    raw = run_cli("convert", "--all", "-", stdin=GENUINE.read_bytes())
    assert raw.stdout == run_cli("convert", "--all", GENUINE).stdout
    line = (
        b'{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-01-01T00:00:00Z",'
        b'"message":{"role":"user","content":"hi"}}\n'
    )
    piped = run_cli("convert", "--format", "jsonl", "-", stdin=line)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout.splitlines()[0])["kind"] == "session_meta"


def test_broken_documents(tmp_path: Path) -> None:
    truncated = tmp_path / "conversations.json"
    truncated.write_bytes(GENUINE.read_bytes()[:5000])
    err = _one_error_line(run_cli("convert", "--all", truncated))
    assert "chatgpt" in err
    assert "invalid JSON" in err
    bad_zip = tmp_path / "export.zip"
    bad_zip.write_bytes(EXPORT.read_bytes()[:200])
    err = _one_error_line(run_cli("convert", bad_zip))
    assert str(bad_zip) in err
    err = _one_error_line(run_cli("convert", "--harness", "turns-db", GENUINE))
    assert "does not read json" in err
