"""The Cursor adapter: agent transcripts (constructed), converted and followed."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from agentminutes.harness import ParseOptions, detect
from agentminutes.harness.cursor.adapter import CursorAdapter
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from conftest import FIXTURES, run_cli
from follow_helpers import FollowProc, append, expected, lines_of

ROOT = FIXTURES / "cursor" / "constructed" / "projects" / "home-dev-demo" / "agent-transcripts"
SID = "6f1c2d7e-8a3b-4c5d-9e0f-1a2b3c4d5e6f"
MAIN = ROOT / SID / f"{SID}.jsonl"
SUB = next((ROOT / SID / "subagents").glob("*.jsonl"))


def _events(path: Path, **options: object) -> list:
    conv = Conversion(name=str(path), options=ParseOptions(**options))  # type: ignore[arg-type]
    return list(conv.iter_events(open_sync_chunks(path)))


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_transcripts_are_detected_and_every_line_read() -> None:
    for path in (MAIN, SUB):
        assert detect(path.read_bytes())[0] is CursorAdapter
        events = _events(path)
        assert events[0].kind == "session_meta"
        assert not [e for e in events if e.kind == "unknown"]


def test_messages_calls_and_turn_ends_as_the_file_holds_them() -> None:
    lines = _lines(MAIN)
    events = _events(MAIN)
    uses = [b for x in lines if x.get("role") == "assistant" for b in x["message"]["content"]]
    calls = [e.tool_call for e in events if e.kind == "tool_call"]
    assert [c.name for c in calls] == [b["name"] for b in uses if b["type"] == "tool_use"]
    kinds = {c.name: c.kind for c in calls}
    assert kinds == {"Shell": "execute", "Read": "read", "StrReplace": "edit", "Task": "other"}
    texts = [e.assistant_message.content[0].text for e in events if e.kind == "assistant_message"]
    assert texts == [b["text"] for b in uses if b["type"] == "text"]
    users = [e.user_message.content[0].text for e in events if e.kind == "user_message"]
    assert users == [
        "why does the test in tests/test_parse.py fail?",
        "run the whole suite",
    ]  # the <user_query> wrapper (and the time line before it) taken off
    delivered = _events(MAIN, text_form="delivered")
    raw = [e.user_message.content[0].text for e in delivered if e.kind == "user_message"]
    assert raw[0] == lines[0]["message"]["content"][0]["text"]
    ends = [e.system for e in events if e.kind == "system"]
    assert [(s.subtype, s.level) for s in ends] == [("turn_ended", ""), ("turn_ended", "error")]
    assert ends[1].text == "Request was aborted"


def test_a_result_with_no_id_answers_the_oldest_open_call() -> None:
    events = _events(SUB)
    call = next(e.tool_call for e in events if e.kind == "tool_call")
    result = next(e.tool_result for e in events if e.kind == "tool_result")
    assert result.tool_call_id == call.tool_call_id
    assert result.tool_name == "Grep"
    assert "src/load.py:12" in result.content[0].text


def test_follow_a_transcript_cursor_keeps_appending_to_matches_convert(tmp_path: Path) -> None:
    target = tmp_path / f"{SID}.jsonl"
    target.touch()
    want = expected(MAIN)
    f = FollowProc(target)
    try:
        append(target, lines_of(MAIN))
        f.wait_lines(len(want))  # Cursor's lines are whole messages: nothing is held
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    assert f.events == want


def test_stats_of_a_task_joins_the_subagent_beside_it() -> None:
    proc = run_cli("stats", "--include-subagents", MAIN)
    assert proc.returncode == 0, proc.stderr
    task = json.loads(proc.stdout)
    assert (task["session_id"], task["join"]) == (SID, "layout")
    sub = task["transcripts"][1]
    assert (sub["subagent_id"], sub["is_subagent"]) == (SUB.stem, True)
    calls = sum(
        len([b for b in x.get("message", {}).get("content", []) if b.get("type") == "tool_use"])
        for p in (MAIN, SUB)
        for x in _lines(p)
        if x.get("role") == "assistant"
    )
    assert task["task"]["tool_calls"] == calls
