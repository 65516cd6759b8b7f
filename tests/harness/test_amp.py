"""The Amp adapter: a thread document (constructed), converted and followed as Amp rewrites it."""

from __future__ import annotations

import copy
import json
import signal
from pathlib import Path
from typing import Any

from agentminutes.harness import ParseOptions, detect
from agentminutes.harness.amp.adapter import AmpAdapter
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from conftest import FIXTURES
from follow_helpers import FollowProc, expected

THREAD = next((FIXTURES / "amp" / "constructed" / "threads").glob("T-*.json"))


def _events(path: Path, **options: object) -> list:
    conv = Conversion(name=str(path), options=ParseOptions(**options))  # type: ignore[arg-type]
    return list(conv.iter_events(open_sync_chunks(path)))


def test_a_thread_is_detected_and_read_strictly() -> None:
    assert detect(THREAD.read_bytes()[:65536]) == (AmpAdapter, detect(THREAD.read_bytes())[1])
    doc = json.loads(THREAD.read_text())
    events = _events(THREAD)
    meta = events[0].session_meta
    assert (meta.session_id, meta.cwd, meta.git_branch) == (
        doc["id"],
        "/home/dev/src/fetcher",
        "retry-backoff",
    )
    assert meta.harness_version == doc["env"]["initial"]["platform"]["clientVersion"]
    assert not [e for e in events if e.kind == "unknown"]
    users = [m for m in doc["messages"] if m["role"] == "user"]
    typed = [b["text"] for m in users for b in m["content"] if b["type"] == "text"]
    assert [e.user_message.content[0].text for e in events if e.kind == "user_message"] == typed


def test_usage_per_reply_with_amps_credits_as_its_cost() -> None:
    doc = json.loads(THREAD.read_text())
    replies = [e for e in _events(THREAD) if e.kind == "assistant_message"]
    native = [m for m in doc["messages"] if m["role"] == "assistant"]
    assert len(replies) == len(native)
    credits = {
        e["toMessageId"]: e["credits"] for e in doc["usageLedger"]["events"] if "toMessageId" in e
    }
    for ev, m in zip(replies, native, strict=True):
        u = ev.assistant_message.usage
        assert (u.input_tokens, u.output_tokens) == (
            m["usage"]["inputTokens"],
            m["usage"]["outputTokens"],
        )
        assert u.cache_read_input_tokens == m["usage"]["cacheReadInputTokens"]
        assert u.cache_creation_input_tokens == m["usage"]["cacheCreationInputTokens"]
        assert u.cost == credits[m["messageId"]]
        assert ev.assistant_message.model == m["usage"]["model"]
    # The title's ledger event names no message: it stays an event of its own.
    ledger = [
        e for e in _events(THREAD) if e.kind == "system" and e.system.subtype == "usage_ledger"
    ]
    assert [e.system.text for e in ledger] == ["claude-haiku-4-5-20251001"]


def test_tool_runs_pair_with_their_calls_and_errors_are_errors() -> None:
    events = _events(THREAD)
    calls = {e.tool_call.tool_call_id: e.tool_call for e in events if e.kind == "tool_call"}
    results = [e.tool_result for e in events if e.kind == "tool_result"]
    assert {r.tool_call_id for r in results} == set(calls)
    assert {r.tool_name: r.is_error for r in results} == {
        "Read": False,
        "edit_file": False,
        "Bash": True,
    }
    assert {c.name: c.kind for c in calls.values()} == {
        "Read": "read",
        "edit_file": "edit",
        "Bash": "execute",
    }
    assert next(r for r in results if r.is_error).content[0].text.startswith("NameError")


def _save(path: Path, doc: dict[str, Any]) -> None:
    data = json.dumps(doc, indent=2).encode() + b"\n"
    with open(path, "r+b" if path.exists() else "wb") as f:
        f.truncate(0)
        f.write(data)


def test_follow_a_thread_rewritten_each_turn_holds_a_streaming_reply(tmp_path: Path) -> None:
    doc = json.loads(THREAD.read_text())
    messages = doc["messages"]
    final = tmp_path / "final.json"
    _save(final, doc)
    want = [{k: v for k, v in e.items() if k != "provenance"} for e in expected(final)]
    target = tmp_path / THREAD.name
    ledger = doc["usageLedger"]["events"]
    # Amp books a reply's charge in the ledger when the reply completes.
    _save(
        target,
        dict(doc, messages=messages[:2], usageLedger={"events": ledger[:1]}, relationships=[]),
    )
    f = FollowProc(target)
    try:
        f.wait_lines(2)  # meta and the question; the first reply waits for a later save
        # The next reply streams: written with half its text and no end state. It is held.
        streaming = copy.deepcopy(messages[:4])
        streaming[3]["state"] = {"type": "streaming"}
        streaming[3]["content"] = [{"type": "text", "text": "I will add a delay"}]
        _save(
            target,
            dict(doc, messages=streaming, usageLedger={"events": ledger[:1]}, relationships=[]),
        )
        f.wait_quiet(0.4)
        assert not [e for e in f.events if e.get("id") == "3"]
        _save(target, doc)
        f.wait_quiet(0.4)
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    got = [{k: v for k, v in e.items() if k != "provenance"} for e in f.events]
    # Usage ledger events arrive with the document that holds them: compared as sets of lines.
    assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, want))
    assert len(got) == len(want)
