"""The ACP projection: ``agentminutes.formats.acp`` and ``convert --format acp``, on real fixtures.

Every expectation is counted straight from the parsed events, independently
of the projector: which updates each event kind must produce, and which losses.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentminutes import iter_sessions, load
from agentminutes.formats.acp import (
    AgentMessageChunk,
    AgentThoughtChunk,
    LossReport,
    Projector,
    ToolCallStart,
    ToolCallUpdate,
    Update,
    UserMessageChunk,
    encode_notification,
    project,
)
from agentminutes.harness import ADAPTERS, DOCUMENT_ADAPTERS
from agentminutes.schema import ContentBlock, Event, Session
from conftest import FIXTURES, fixture_id, transcripts

LINE = [p for cls in ADAPTERS for p in transcripts(cls.name)]
DOCUMENTS = [p for cls in DOCUMENT_ADAPTERS for p in transcripts(cls.name)]


def _raw(value: msgspec.Raw) -> Any:
    return json.loads(bytes(value)) if len(value) else None


def _texts(blocks: list[ContentBlock] | None) -> list[str]:
    return [b.text for b in blocks or [] if b.kind == "text" and b.text and not b.truncated]


def _expected_losses(events: list[Event]) -> tuple[Counter[str], Counter[str]]:
    """The losses the projection must report, counted from the events by kind."""
    dropped: Counter[str] = Counter()
    fields: Counter[str] = Counter()
    for ev in events:
        if ev.timestamp:
            fields["timestamp"] += 1
        blocks: list[ContentBlock] = []
        if ev.session_meta is not None:
            dropped["session_meta"] += 1
        elif ev.system is not None:
            dropped["system/" + ev.system.subtype] += 1
        elif ev.unknown is not None:
            dropped["unknown"] += 1
        elif ev.user_message is not None:
            blocks = ev.user_message.content or []
            fields["user_message.origin"] += ev.user_message.origin == "harness"
            dropped["user_message_empty"] += not _texts(blocks)
        elif ev.assistant_message is not None:
            msg = ev.assistant_message
            blocks = msg.content or []
            fields["assistant_message.model"] += bool(msg.model)
            fields["assistant_message.stop_reason"] += bool(msg.stop_reason)
            fields["assistant_message.usage"] += msg.usage is not None
            dropped["assistant_message_empty"] += not _texts(blocks)
        elif ev.thinking is not None:
            fields["thinking.signature"] += bool(ev.thinking.signature)
            dropped["thinking_empty"] += not ev.thinking.text
        elif ev.tool_result is not None:
            blocks = ev.tool_result.content or []
            fields["tool_result.fetch"] += ev.tool_result.fetch is not None
        for b in blocks:
            if b.truncated:
                fields["content_block:truncated"] += 1
            elif b.kind != "text":
                fields["content_block:" + b.kind] += 1
    return +dropped, +fields


def _check(events: list[Event], updates: list[Update], loss: LossReport) -> None:
    calls = [ev.tool_call for ev in events if ev.tool_call is not None]
    results = [ev.tool_result for ev in events if ev.tool_result is not None]
    starts = [u for u in updates if isinstance(u, ToolCallStart)]
    ends = [u for u in updates if isinstance(u, ToolCallUpdate)]

    # Every tool call is a tool_call update, in order, with its id, name, kind and input.
    assert [(u.tool_call_id, u.title, u.kind, u.status) for u in starts] == [
        (c.tool_call_id, c.name, c.kind, "pending") for c in calls
    ]
    assert [_raw(u.raw_input) for u in starts] == [_raw(c.input) for c in calls]
    # Every result is a tool_call_update with its status, text content and enrichment.
    assert [(u.tool_call_id, u.status) for u in ends] == [
        (r.tool_call_id, "failed" if r.is_error else "completed") for r in results
    ]
    assert [[c.content.text for c in u.content or []] for u in ends] == [
        _texts(r.content) for r in results
    ]
    assert [_raw(u.raw_output) for u in ends] == [_raw(r.enrichment) for r in results]

    # Message chunks: one per text block, thoughts one per thinking event with text.
    chunks = [
        (type(u).__name__, u.content.text)
        for u in updates
        if isinstance(u, UserMessageChunk | AgentMessageChunk | AgentThoughtChunk)
    ]
    want: list[tuple[str, str]] = []
    for ev in events:
        if ev.user_message is not None:
            want += [("UserMessageChunk", t) for t in _texts(ev.user_message.content)]
        elif ev.assistant_message is not None:
            want += [("AgentMessageChunk", t) for t in _texts(ev.assistant_message.content)]
        elif ev.thinking is not None and ev.thinking.text:
            want.append(("AgentThoughtChunk", ev.thinking.text))
    assert chunks == want

    dropped, fields = _expected_losses(events)
    assert loss.total_events == len(events)
    assert loss.updates == len(updates) == len(starts) + len(ends) + len(chunks)
    assert dict(loss.dropped_events or {}) == dict(dropped)
    assert dict(loss.dropped_fields or {}) == dict(fields)
    # Every event is either projected or dropped, exactly once.
    assert loss.projected_events + sum(dropped.values()) == len(events)


@pytest.mark.parametrize("path", LINE, ids=[fixture_id(p) for p in LINE])
def test_projection_of_every_line_fixture(path: Path) -> None:
    session = load(path)
    updates, loss = project(session)
    _check(session.events, updates, loss)


@pytest.mark.parametrize("path", DOCUMENTS, ids=[fixture_id(p) for p in DOCUMENTS])
def test_projection_of_every_document_conversation(path: Path) -> None:
    for session in iter_sessions(path):
        updates, loss = project(session)
        _check(session.events, updates, loss)


def test_fixtures_exercise_every_update_and_loss() -> None:
    kinds: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    reasons: set[str] = set()
    for path in LINE:
        updates, loss = project(load(path))
        kinds.update(type(u).__name__ for u in updates)
        statuses.update(u.status for u in updates if isinstance(u, ToolCallUpdate))
        reasons.update(loss.dropped_events or {})
        reasons.update(loss.dropped_fields or {})
    assert set(kinds) == {
        "UserMessageChunk",
        "AgentMessageChunk",
        "AgentThoughtChunk",
        "ToolCallStart",
        "ToolCallUpdate",
    }
    assert statuses["completed"] > 0
    assert statuses["failed"] > 0
    for reason in (
        "session_meta",
        "assistant_message_empty",
        "thinking_empty",
        "timestamp",
        "user_message.origin",
        "assistant_message.usage",
        "thinking.signature",
        "content_block:image",
    ):
        assert reason in reasons, reason


def test_truncated_blocks_and_unknown_events(tmp_path: Path) -> None:
    src = FIXTURES / "claude-code/fasthooks-main.jsonl"
    session = load(src, max_payload_bytes=16)
    updates, loss = project(session)
    _check(session.events, updates, loss)
    assert (loss.dropped_fields or {})["content_block:truncated"] > 0

    lines = src.read_text().splitlines()
    lines.insert(2, json.dumps({"type": "planted-unknown", "uuid": "x"}))
    planted = tmp_path / "t.jsonl"
    planted.write_text("\n".join(lines) + "\n")
    session = load(planted, permissive=True)
    updates, loss = project(session)
    _check(session.events, updates, loss)
    assert (loss.dropped_events or {})["unknown"] == 1


def test_streaming_projector_matches_whole_session() -> None:
    session = load(FIXTURES / "codex/exact2026/" / _only(FIXTURES / "codex/exact2026"))
    projector = Projector()
    streamed: list[Update] = []
    for ev in session.events:
        streamed.extend(projector.project(ev))
    updates, loss = project(session)
    assert msgspec.json.encode(streamed) == msgspec.json.encode(updates)
    assert projector.report() == loss
    assert projector.session_id == session.meta.session_id
    assert project(session.events)[1] == loss


def _only(folder: Path) -> str:
    (name,) = [p.name for p in folder.iterdir()]
    return name


def test_wire_shapes() -> None:
    call = ToolCallStart(
        tool_call_id="c1",
        title="Read",
        kind="read",
        status="pending",
        raw_input=msgspec.Raw(b'{"path":"a"}'),
    )
    assert json.loads(encode_notification("s1", call)) == {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s1",
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "c1",
                "title": "Read",
                "kind": "read",
                "status": "pending",
                "rawInput": {"path": "a"},
            },
        },
    }
    done = ToolCallUpdate(tool_call_id="c1", status="failed")
    assert json.loads(encode_notification("s1", done))["params"]["update"] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "failed",
    }
    assert LossReport(total_events=2, projected_events=1, updates=1).summary() == (
        "2 events, 1 projected, 1 updates"
    )


def _session(path: Path) -> Session:
    return load(path)


@pytest.mark.parametrize(
    "fixture",
    [
        "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
        "copilot/agent-sessions/copilot_small_1.0.77.jsonl",
        "gemini-cli/constructed/session-2025-11-03T14-10-5e55a7e0.json",
    ],
)
def test_cli_convert_acp(cli: Any, fixture: str, tmp_path: Path) -> None:
    path = FIXTURES / fixture
    session = _session(path)
    updates, loss = project(session)
    done = cli("convert", "--format", "acp", path)
    assert done.returncode == 0, done.stderr
    expected = b"".join(encode_notification(session.meta.session_id, u) + b"\n" for u in updates)
    assert done.stdout == expected
    for line in done.stdout.splitlines():
        msg = json.loads(line)
        assert msg["jsonrpc"] == "2.0"
        assert msg["method"] == "session/update"
        assert msg["params"]["sessionId"] == session.meta.session_id
    err = done.stderr.decode().splitlines()
    assert err[-1] == f"agentminutes: acp: {loss.summary()}"
    assert err[0].startswith(f"agentminutes: {len(session.events)} events, ")

    out = tmp_path / "out.jsonl"
    done = cli("convert", "--format", "acp", "-o", out, path)
    assert done.returncode == 0
    assert out.read_bytes() == expected


def test_cli_convert_acp_errors(cli: Any, tmp_path: Path) -> None:
    done = cli("convert", "--all", "--format", "acp", FIXTURES / "chatgpt/conversations.json")
    assert done.returncode == 1
    assert done.stderr.decode() == (
        "Error: --all writes one whole session per line; it does not combine with --format acp\n"
    )
    bad = tmp_path / "bad.jsonl"
    src = FIXTURES / "claude-code/fasthooks-main.jsonl"
    bad.write_bytes(src.read_bytes() + b"{broken\n")
    done = cli("convert", "--format", "acp", bad)
    assert done.returncode == 1
    assert done.stderr.decode().count("\n") == 1
    assert done.stderr.decode().startswith(f"Error: {bad}: claude-code: invalid JSON")
