"""The claude.ai privacy-export adapter, on the constructed export ZIP."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from agentminutes import conversations, iter_sessions, load
from agentminutes.harness import Confidence
from agentminutes.harness.claude_ai import ClaudeAIAdapter
from conftest import FIXTURES, run_cli

EXPORT = FIXTURES / "claude-ai" / "export.zip"


def test_detects_zip_and_member() -> None:
    assert run_cli("detect", EXPORT).stdout == b"claude-ai\tcertain\n"
    with zipfile.ZipFile(EXPORT) as zf:
        head = zf.read("conversations.json")[:65536]
    assert ClaudeAIAdapter.sniff(head) == Confidence.CERTAIN
    assert ClaudeAIAdapter.sniff(b'[{"title": "x", "mapping": {}}]') == Confidence.NO_MATCH


def test_unzipped_conversations_json(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    with zipfile.ZipFile(EXPORT) as zf:
        path.write_bytes(zf.read("conversations.json"))
    assert run_cli("detect", path).stdout == b"claude-ai\tcertain\n"
    assert [s.meta.session_id for s in iter_sessions(path)] == [
        s.meta.session_id for s in iter_sessions(EXPORT)
    ]


def test_listing() -> None:
    listed = conversations(EXPORT)
    assert [(c.id[:2], c.title, c.messages) for c in listed] == [
        ("c1", "Weather in Lisbon", 4),
        ("c2", "Rename files", 2),
        ("c3", "", 2),
    ]
    assert listed[0].created == "2026-01-02T00:00:00Z"  # as the reference writes instants


def test_tool_use_splits_the_message_into_api_calls() -> None:
    s = load(EXPORT, conversation="c1")
    kinds = [e.kind for e in s.events]
    assert kinds == [
        "session_meta",
        "user_message",
        "thinking",
        "tool_call",
        "assistant_message",
        "tool_result",
        "tool_call",
        "assistant_message",
        "tool_result",
        "assistant_message",
        "user_message",
        "assistant_message",
    ]
    msg = "m1000000-0000-4000-8000-000000000002"
    ev = s.events
    assert ev[2].message_id == ev[3].message_id == ev[4].message_id == msg
    assert ev[6].message_id == ev[7].message_id == msg + ":1"
    assert ev[9].message_id == msg + ":2"
    assert ev[4].assistant_message.content[0].text == "Let me look that up."
    assert ev[7].assistant_message.content is None
    assert ev[5].tool_result.tool_call_id == "toolu_01"
    assert ev[5].tool_result.content[0].kind == "resource"
    assert ev[5].tool_result.content[0].uri == "https://weather.example/lisbon"
    assert ev[8].tool_result.is_error
    assert ev[3].tool_call.kind == "fetch"
    assert ev[6].tool_call.kind == "execute"
    assert ev[2].thinking.text.startswith("The user wants")
    # The attachment and the file reference travel with the prompt, verbatim.
    content = ev[1].user_message.content
    assert [b.kind for b in content] == ["text", "document", "document"]
    assert json.loads(bytes(content[1].raw))["extracted_content"].startswith("Trip: Lisbon")
    assert s.report.orphan_tool_results == 0
    assert s.totals is None


def test_block_timestamps_time_the_tools() -> None:
    stats = json.loads(run_cli("stats", "--conversation", "c1", EXPORT).stdout)
    assert stats["tool_time_ms_by_name"] == {"web_search": 2000, "repl": 2000}
    assert stats["tool_errors"] == 1
    assert "totals" not in stats
    assert stats["final_answer"] == "You're welcome — enjoy Lisbon."


def test_message_tree_follows_the_current_leaf() -> None:
    s = load(EXPORT, conversation="c2")
    assert s.report.skipped_records == {"off_branch": 1}
    call = next(e for e in s.events if e.kind == "tool_call")
    result = next(e for e in s.events if e.kind == "tool_result")
    # No ids in the export: the call is named by its place, the result pairs by tool name.
    assert call.tool_call.tool_call_id == "m2000000-0000-4000-8000-000000000003#1"
    assert result.tool_result.tool_call_id == call.tool_call.tool_call_id
    last = [e for e in s.events if e.kind == "assistant_message"][-1]
    assert [b.kind for b in last.assistant_message.content] == ["other", "text"]
    assert last.parent_id == "m2000000-0000-4000-8000-000000000001"


def test_empty_human_message_is_a_counted_skip() -> None:
    s = load(EXPORT, conversation="c3")
    assert s.report.skipped_records == {"empty/human": 1}
    assert [e.kind for e in s.events] == ["session_meta", "assistant_message"]
