"""The Continue adapter: a session document (constructed from Continue's source), converted and followed."""

from __future__ import annotations

import copy
import json
import signal
from pathlib import Path
from typing import Any

from agentminutes.errors import DetectError
from agentminutes.harness import detect
from agentminutes.harness.continue_cli.adapter import ContinueAdapter
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from conftest import FIXTURES
from follow_helpers import FollowProc, expected

SESSION = next((FIXTURES / "continue-cli" / "constructed" / "sessions").glob("*.json"))


def _events(path: Path) -> list:
    return list(Conversion(name=str(path)).iter_events(open_sync_chunks(path)))


def test_a_session_is_detected_and_its_index_is_not() -> None:
    assert detect(SESSION.read_bytes())[0] is ContinueAdapter
    index = json.dumps([{"sessionId": "x", "title": "t", "workspaceDirectory": "/w"}], indent=2)
    try:
        cls, _ = detect(index.encode())
    except DetectError:
        cls = None
    assert cls is not ContinueAdapter


def test_history_items_become_messages_calls_and_results() -> None:
    doc = json.loads(SESSION.read_text())
    events = _events(SESSION)
    assert events[0].session_meta.session_id == doc["sessionId"]
    assert events[0].session_meta.cwd == doc["workspaceDirectory"]
    assert not [e for e in events if e.kind == "unknown"]
    items = doc["history"]
    human = [e for e in events if e.kind == "user_message" and e.user_message.origin == "human"]
    assert [e.user_message.content[0].text for e in human] == [
        i["message"]["content"] for i in items if i["message"]["role"] == "user"
    ]
    context = [e for e in events if e.kind == "user_message" and e.user_message.origin == "harness"]
    assert context[0].user_message.content[0].text.startswith("# tally")
    calls = [e.tool_call for e in events if e.kind == "tool_call"]
    native = [c for i in items for c in i["message"].get("toolCalls", [])]
    assert [(c.tool_call_id, c.name) for c in calls] == [
        (c["id"], c["function"]["name"]) for c in native
    ]
    assert [json.loads(bytes(c.input)) for c in calls] == [
        json.loads(c["function"]["arguments"]) for c in native
    ]
    results = [e.tool_result for e in events if e.kind == "tool_result"]
    assert [(r.tool_call_id, r.is_error) for r in results] == [
        ("call_Rk2w9", False),
        ("call_Xp03b", True),
    ]


def test_usage_per_reply_and_the_sessions_own_cost() -> None:
    doc = json.loads(SESSION.read_text())
    events = _events(SESSION)
    used = [e.assistant_message.usage for e in events if e.kind == "assistant_message"]
    native = [i["message"]["usage"] for i in doc["history"] if i["message"]["role"] == "assistant"]
    assert [(u.input_tokens, u.output_tokens, u.cache_read_input_tokens) for u in used] == [
        (n["prompt_tokens"], n["completion_tokens"], n["prompt_tokens_details"]["cached_tokens"])
        for n in native
    ]
    last = events[-1]
    assert last.system.subtype == "session_usage"
    assert json.loads(bytes(last.system.details))["totalCost"] == doc["usage"]["totalCost"]


def _save(path: Path, doc: dict[str, Any]) -> None:
    data = json.dumps(doc, indent=2).encode()
    with open(path, "r+b" if path.exists() else "wb") as f:
        f.truncate(0)
        f.write(data)


def test_follow_a_session_rewritten_each_turn_holds_a_running_tool(tmp_path: Path) -> None:
    doc = json.loads(SESSION.read_text())
    items = doc["history"]
    final = tmp_path / "final.json"
    _save(final, doc)
    want = [{k: v for k, v in e.items() if k != "provenance"} for e in expected(final)]
    target = tmp_path / SESSION.name
    _save(target, dict(doc, history=items[:1]))
    f = FollowProc(target)
    try:
        f.wait_lines(2)  # meta and the running total; the last item waits for a later save
        running = copy.deepcopy(items[:3])
        running[1]["toolCallStates"][0]["status"] = "calling"
        del running[1]["toolCallStates"][0]["output"]
        _save(target, dict(doc, history=running))
        f.wait_quiet(0.4)
        shown = [e["kind"] for e in f.events]
        assert "tool_call" not in shown
        assert "assistant_message" not in shown
        _save(target, doc)
        f.wait_quiet(0.4)
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    got = [{k: v for k, v in e.items() if k != "provenance"} for e in f.events]
    # Each save's running total was shown as it came; the last is the one convert writes.
    totals = [e for e in got if e.get("system", {}).get("subtype") == "session_usage"]
    assert totals[-1] == want[-1]
    rest = [e for e in got if e not in totals]
    assert sorted(map(json.dumps, rest)) == sorted(map(json.dumps, want[:-1]))
    assert len(rest) == len(want) - 1
