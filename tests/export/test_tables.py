"""One transcript's rows (``to_arrow``) against the library's own view of the same file."""

from __future__ import annotations

import json
import pickle
import shutil
from collections import Counter
from pathlib import Path

import msgspec
import pyarrow as pa
import pytest

import agentminutes
from agentminutes import timestamps
from agentminutes.export import schemas, to_arrow
from agentminutes.export.tables import iter_batches
from agentminutes.harness.antigravity.layout import conversation_id_of
from agentminutes.schema.usage import OtelUsage
from agentminutes.schema.usage import requests as usage_requests
from conftest import FIXTURES, fixture_id, transcripts

HARNESSES = ("claude-code", "codex", "copilot", "pi", "antigravity", "gemini-cli")
LINE_FIXTURES = [p for h in HARNESSES for p in transcripts(h)]
DOCUMENTS = [*transcripts("chatgpt"), *transcripts("claude-ai"), *transcripts("turns-db")]


def _tables(path: Path) -> dict[str, pa.Table]:
    found: dict[str, list[pa.RecordBatch]] = {t: [] for t in schemas.TABLES}
    for name, batch in iter_batches(path):
        found[name].append(batch)
    return {t: pa.Table.from_batches(b, schema=schemas.SCHEMAS[t]) for t, b in found.items()}


@pytest.mark.parametrize("path", LINE_FIXTURES, ids=fixture_id)
def test_rows_match_the_library(path: Path) -> None:
    tables = _tables(path)
    assert tables["failures"].num_rows == 0
    events = list(agentminutes.iter_events(path))
    stats = agentminutes.load(path).stats()

    rows = tables["events"].to_pylist()
    assert [r["kind"] for r in rows] == [e.kind for e in events]
    assert [r["seq"] for r in rows] == list(range(len(events)))
    for row, ev in zip(rows, events, strict=True):
        payload = getattr(ev, ev.kind)
        assert json.loads(row["payload"]) == json.loads(msgspec.json.encode(payload))
        ns = timestamps.to_ns(ev.timestamp) if ev.timestamp else None
        got = row["timestamp"]
        assert (got is None) == (ns is None)
        if ns is not None:
            assert int(got.timestamp() * 1_000_000) == ns // 1000
        assert row["message_id"] == (ev.message_id or None)
        assert row["agent_id"] == (ev.agent_id or None)
        assert row["line"] == (ev.provenance.line if ev.provenance else None)

    (session,) = tables["sessions"].to_pylist()
    assert session["transcript"] == str(path.resolve())
    assert session["events"] == stats.events
    assert session["tool_calls"] == stats.tool_calls
    assert session["tool_errors"] == stats.tool_errors
    assert session["wall_time_ms"] == (stats.wall_time_ms if stats.start_time else None)
    assert session["models"] == (stats.models or [])
    # The row's counts are folded apart from StatsBuilder (in the loop that makes the rows):
    # every one of them is StatsBuilder's.
    assert session["user_messages"] == stats.user_messages
    assert session["harness_messages"] == stats.harness_messages
    assert session["unanswered_calls"] == stats.unanswered_calls
    assert session["orphan_results"] == stats.orphan_results
    assert session["result_bytes"] == stats.result_bytes
    kinds = stats.event_counts or {}
    for column, kind in (
        ("assistant_messages", "assistant_message"),
        ("thinking_blocks", "thinking"),
        ("tool_results", "tool_result"),
        ("system_events", "system"),
        ("unknown_events", "unknown"),
    ):
        assert session[column] == kinds.get(kind, 0), column
    for column, when in (("started_at", stats.start_time), ("ended_at", stats.end_time)):
        got = session[column]
        assert (got is None) == (not when), column
        if when:
            assert int(got.timestamp() * 1_000_000) == timestamps.to_ns(when) // 1000, column
    totals = stats.totals
    assert session["input_tokens"] == (totals.input_tokens if totals else None)
    assert session["output_tokens"] == (totals.output_tokens if totals else None)
    assert session["total_prompt_tokens"] == (totals.total_prompt_tokens if totals else None)
    meta = events[0].session_meta
    assert meta is not None
    assert session["session_id"] == (meta.session_id or conversation_id_of(str(path.resolve())))

    calls = tables["tool_calls"].to_pylist()
    assert Counter(c["tool_name"] for c in calls) == Counter(stats.tool_calls_by_name or {})
    durations: Counter[str] = Counter()
    for c in calls:
        if c["duration_ms"] is not None:
            durations[c["tool_name"]] += c["duration_ms"]
    expected = Counter(stats.tool_time_ms_by_name or {})
    assert +durations == +expected

    requests = tables["requests"].to_pylist()
    messages = [r for r in requests if r["source"] == "assistant_message"]
    assert len(messages) == (stats.event_counts or {}).get("assistant_message", 0)
    assert len({r["dedup_key"] for r in requests}) == len(requests)
    # Rows read from other records carry the normalized view only: the raw sums stay convert's.
    others = [r for r in requests if r["source"] != "assistant_message"]
    assert all(not r["has_usage"] and r["output_tokens"] is None for r in others)
    if totals is not None:
        assert sum(r["output_tokens"] or 0 for r in requests) == totals.output_tokens
        assert sum(r["input_tokens"] or 0 for r in requests) == totals.input_tokens
    # The otel_* columns hold each request once, as `usage` folds the same events.
    folded = [r for r in usage_requests(events) if r.otel is not None]
    counted = [r for r in requests if r["otel_input_tokens"] is not None]
    assert len(counted) == len(folded)
    assert Counter(r["source"] for r in counted) == Counter(r.origin for r in folded)
    for name in OtelUsage.__struct_fields__:
        want = sum(getattr(r.otel, name) or 0 for r in folded)
        assert sum(r[f"otel_{name}"] or 0 for r in requests) == want, name
    # Every batch is one date partition, the session's.
    dates = {
        r["date"]
        for t in ("events", "sessions", "tool_calls", "requests")
        for r in tables[t].select(["date"]).to_pylist()
    }
    assert dates == {session["date"]}


@pytest.mark.parametrize("path", DOCUMENTS, ids=fixture_id)
def test_a_document_source_is_one_session_per_conversation(path: Path) -> None:
    tables = _tables(path)
    sessions = list(agentminutes.iter_sessions(path))
    rows = tables["sessions"].to_pylist()
    assert [r["session_id"] for r in rows] == [s.meta.session_id for s in sessions]
    assert tables["events"].num_rows == sum(len(s.events) for s in sessions)
    titled = {c.id: c.title for c in agentminutes.conversations(path)}
    assert [r["title"] for r in rows] == [titled.get(r["session_id"]) or None for r in rows]


def test_to_arrow_is_picklable_and_gives_each_table_with_its_schema() -> None:
    path = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
    fn = pickle.loads(pickle.dumps(to_arrow))
    for table in schemas.TABLES:
        got = fn(str(path), table)
        assert got.schema.equals(schemas.SCHEMAS[table], check_metadata=True)
    with pytest.raises(agentminutes.UsageError, match="unknown table"):
        to_arrow(path, "nope")


def test_a_transcript_that_fails_has_a_failures_row_and_no_other_rows(tmp_path: Path) -> None:
    src = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
    bad = tmp_path / "broken.jsonl"
    lines = src.read_bytes().splitlines(keepends=True)
    bad.write_bytes(b"".join([*lines[:6], b'{"type": "planted-record", "x": 1}\n', *lines[6:]]))
    tables = _tables(bad)
    assert all(tables[t].num_rows == 0 for t in ("events", "sessions", "tool_calls", "requests"))
    (row,) = tables["failures"].to_pylist()
    assert row["harness"] == "claude-code"
    assert row["line"] == 7
    assert row["error_type"] == "ParseError"
    assert 'unrecognized record type "planted-record"' in row["error"]
    assert str(bad) in row["error"]


def test_claude_code_titles_exit_codes_and_spawned_subagents(tmp_path: Path) -> None:
    parent = FIXTURES / "claude-code" / "ccl" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    copy = tmp_path / parent.name
    shutil.copytree(parent.with_suffix(""), copy.with_suffix(""))
    title = b'{"type":"custom-title","customTitle":"Planted title","sessionId":"x"}\n'
    copy.write_bytes(parent.read_bytes() + title)
    tables = _tables(copy)
    (session,) = tables["sessions"].to_pylist()
    assert session["title"] == "Planted title"
    subagents = sorted(
        p.name[len("agent-") : -len(".jsonl")]
        for p in (copy.with_suffix("") / "subagents").glob("agent-*.jsonl")
    )
    assert subagents
    assert set(subagents) <= set(session["subagent_ids"])
    spawned = [c for c in tables["tool_calls"].to_pylist() if c["subagent_id"]]
    assert {c["subagent_id"] for c in spawned} <= set(session["subagent_ids"])
    assert all(c["tool_name"] in ("Task", "Agent") for c in spawned)
    sub = next((copy.with_suffix("") / "subagents").glob("agent-*.jsonl"))
    (child,) = _tables(sub)["sessions"].to_pylist()
    assert child["is_subagent"]
    assert child["parent_session_id"] == session["session_id"]


def test_exit_codes_native_and_scraped() -> None:
    from agentminutes.export.tables import _exit_code

    assert _exit_code("Exit code 2\nTraceback …", b"") == (2, "scraped")
    assert _exit_code("Chunk ID: 1\nProcess exited with code 0\nOutput:", b"") == (0, "scraped")
    assert _exit_code('{"output":"x","metadata":{"exit_code":3}}', b"") == (3, "native")
    assert _exit_code("ok", b'{"exitCode": 1, "stdout": ""}') == (1, "native")
    assert _exit_code("all good, exit code 5 was not it", b"") == (None, None)
