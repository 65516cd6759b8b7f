"""The ChatGPT export adapter: the genuine export subset, a constructed modern conversation, ZIPs."""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from pathlib import Path

import msgspec
import pytest

from agentminutes import iter_sessions, load
from agentminutes.errors import ParseError
from agentminutes.harness import Confidence, detect
from agentminutes.harness._export import epoch_rfc3339
from agentminutes.harness.chatgpt import ChatGPTAdapter
from conftest import FIXTURES, run_cli

GENUINE = FIXTURES / "chatgpt" / "conversations.json"
MODERN = FIXTURES / "chatgpt" / "constructed-modern.json"


def _by_kind(events: list) -> Counter[str]:
    return Counter(e.kind for e in events)


def test_detects_export_heads() -> None:
    cls, conf = detect(GENUINE.read_bytes()[:65536])
    assert (cls, conf) == (ChatGPTAdapter, Confidence.CERTAIN)
    cls, conf = detect(MODERN.read_bytes()[:65536])
    assert cls is ChatGPTAdapter
    assert ChatGPTAdapter.sniff(b'[{"title": "x", "mapping": {') == Confidence.POSSIBLE
    assert ChatGPTAdapter.sniff(b'{"type":"user","sessionId":"s"}') == Confidence.NO_MATCH


def test_genuine_export_converts_strictly() -> None:
    sessions = list(iter_sessions(GENUINE))
    assert len(sessions) == 8
    for s in sessions:
        kinds = _by_kind(s.events)
        assert kinds["unknown"] == 0
        assert s.totals is None, "exports record no usage"
        assert s.meta.harness == "chatgpt"
        assert kinds["user_message"] >= 1
        # One conversation in the export is a prompt that never got an answer.
        if s.meta.session_id != "ba745bf1-f90f-4b29-b8dc-d3c86ca33166":
            assert kinds["assistant_message"] >= 1, s.meta.session_id
    skipped = Counter[str]()
    for s in sessions:
        skipped.update(s.report.skipped_records or {})
    assert skipped == {"root": 8, "empty/system": 8, "off_branch": 1}


def test_active_branch_and_timestamps() -> None:
    s = load(GENUINE, conversation="e96087ed")
    assert s.report.skipped_records == {"root": 1, "empty/system": 1, "off_branch": 1}
    ts = [e.timestamp for e in s.events if e.timestamp]
    assert all(t.endswith("Z") for t in ts)
    # Epoch floats keep the digits the export wrote.
    raw = json.loads(GENUINE.read_bytes())
    conv = next(c for c in raw if c["id"].startswith("e96087ed"))
    user = next(e for e in s.events if e.kind == "user_message")
    digits = repr(conv["mapping"][user.id]["message"]["create_time"]).split(".")[1]
    assert user.timestamp.endswith("." + digits.rstrip("0") + "Z")


def test_browsing_calls_pair_with_results() -> None:
    s = load(GENUINE, conversation="902d8aca")
    calls = [e for e in s.events if e.kind == "tool_call"]
    results = [e for e in s.events if e.kind == "tool_result"]
    assert calls
    assert all(c.tool_call.name == "browser" and c.tool_call.kind == "fetch" for c in calls)
    assert s.report.orphan_tool_results == 0
    ids = {c.tool_call.tool_call_id for c in calls}
    assert all(r.tool_result.tool_call_id in ids for r in results)
    # quote_lines answered by several tether_quote messages: one call, many results.
    per_call = Counter(r.tool_result.tool_call_id for r in results)
    assert max(per_call.values()) >= 3
    errors = [r for r in results if r.tool_result.is_error]
    assert errors
    assert "Failed to fetch" in errors[0].tool_result.content[0].text
    quotes = [r for r in results if r.tool_result.fetch is not None]
    assert quotes
    assert quotes[0].tool_result.fetch.url.startswith("http")
    # Each tool-addressed message is an assistant message of its own, sharing its id.
    anchors = {e.message_id for e in s.events if e.kind == "assistant_message"}
    assert {c.message_id for c in calls} <= anchors


def test_plugin_call() -> None:
    s = load(GENUINE, conversation="c21a4db5")
    call = next(e for e in s.events if e.kind == "tool_call")
    assert call.tool_call.name == "show_me.get_MermaidRoute"
    assert call.tool_call.kind == "other"
    assert json.loads(bytes(call.tool_call.input))["content_type"] == "text"
    result = next(e for e in s.events if e.kind == "tool_result")
    assert result.tool_result.tool_call_id == call.tool_call.tool_call_id
    assert result.tool_result.enrichment  # the plugin invocation metadata
    models = {e.assistant_message.model for e in s.events if e.kind == "assistant_message"}
    assert models == {"gpt-4-plugins"}


def test_constructed_modern_conversation() -> None:
    s = load(MODERN)
    kinds = _by_kind(s.events)
    assert kinds["unknown"] == 0
    assert s.report.skipped_records == {
        "root": 1,
        "empty/system": 1,
        "off_branch": 1,
        "reasoning_recap": 1,
    }
    users = [e for e in s.events if e.kind == "user_message"]
    assert [u.user_message.origin for u in users] == ["harness", "human", "human"]
    assert users[0].user_message.content[1].text == "Answer briefly."
    assert users[2].user_message.content[0].kind == "image"
    thinking = next(e for e in s.events if e.kind == "thinking")
    call = next(e for e in s.events if e.kind == "tool_call")
    assert thinking.message_id == call.message_id == "code-1"
    assert call.tool_call.kind == "execute"
    memory = next(e for e in s.events if e.kind == "system")
    assert memory.system.subtype == "system/model_editable_context"
    final = [e for e in s.events if e.kind == "assistant_message"][-1]
    assert final.assistant_message.content[0].text == "Here is your poster."
    assert final.assistant_message.stop_reason == "stop"
    assert final.assistant_message.model == "gpt-4o"
    web = [e for e in s.events if e.kind == "tool_result"][-1]
    assert web.tool_result.tool_name == "web.run"
    assert [b.kind for b in web.tool_result.content] == ["text", "other"]
    assert (
        json.loads(bytes(web.tool_result.content[1].raw))["content_type"] == "future_search_result"
    )
    assert s.report.orphan_tool_results == 0


def _with_role(role: str) -> bytes:
    conv = json.loads(MODERN.read_bytes())
    conv["mapping"]["a-2"]["message"]["author"]["role"] = role
    return json.dumps(conv).encode()


def test_unknown_role_fails_strictly_and_is_kept_permissively(tmp_path: Path) -> None:
    path = tmp_path / "conv.json"
    path.write_bytes(_with_role("critic"))
    with pytest.raises(ParseError) as err:
        load(path)
    text = str(err.value)
    assert "chatgpt" in text
    assert "6790a1b2-0000-4000-8000-00000000c0de" in text
    assert 'unrecognized author role "critic"' in text
    assert "at record 16" in text
    s = load(path, permissive=True)
    unknown = [e for e in s.events if e.kind == "unknown"]
    assert len(unknown) == 1
    assert unknown[0].unknown.record_type == "critic"
    assert s.report.unknown_events == 1


def test_pretty_printed_json_gives_single_line_events() -> None:
    result = run_cli("convert", "--format", "jsonl", MODERN)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 17
    for line in lines:
        json.loads(line)


def test_zip_of_the_genuine_export(tmp_path: Path) -> None:
    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("chat.html", "<html></html>")
        zf.writestr("user.json", '{"id": "user-x"}')
        zf.write(GENUINE, "conversations.json")
        zf.writestr("message_feedback.json", "[]")
    assert run_cli("detect", archive).stdout == b"chatgpt\tcertain\n"
    from_zip = run_cli("convert", "--all", archive)
    from_json = run_cli("convert", "--all", GENUINE)
    assert from_zip.returncode == 0, from_zip.stderr
    assert from_zip.stdout == from_json.stdout
    assert from_zip.stdout.count(b"\n") == 8


def test_stats_omit_totals() -> None:
    result = run_cli("stats", "--conversation", "902d8aca", GENUINE)
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert "totals" not in stats
    assert stats["tool_calls_by_name"]["browser"] >= 1
    assert stats["models"] == ["gpt-4-browsing"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"1686317999.727911", "2023-06-09T13:39:59.727911Z"),
        (b"1686324267.0", "2023-06-09T15:24:27Z"),
        (b"1686324267", "2023-06-09T15:24:27Z"),
        (b"1686324267.1234567891", "2023-06-09T15:24:27.123456789Z"),
        (b"null", ""),
        (b'"2024-01-01T00:00:00Z"', "2024-01-01T00:00:00Z"),
        (b'"yesterday"', ""),
        (b"1.6863242670e9", "2023-06-09T15:24:27Z"),
        (b"-5", ""),
    ],
)
def test_epoch_times(raw: bytes, expected: str) -> None:
    assert epoch_rfc3339(msgspec.Raw(raw)) == expected
