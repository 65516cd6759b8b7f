"""The Claude Code adapter on real transcripts: folding, pairing, origins, skips, duplicates."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentminutes import load
from agentminutes.errors import ParseError
from agentminutes.harness import ParseOptions, detect
from agentminutes.harness.claude_code import ClaudeCodeAdapter
from conftest import FIXTURES, convert_json, transcripts

CC = FIXTURES / "claude-code"
PARENT = CC / "ccl" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
SUBAGENT = (
    CC
    / "ccl"
    / "ef958aa1-0e93-49f0-bb71-150f63befcd1"
    / "subagents"
    / "agent-a36efb2a1231c41e2.jsonl"
)
OLD = CC / "ccl" / "12a546d1-83a7-49a6-abba-5400db340b43.jsonl"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def by_kind(session: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in session["events"] if e["kind"] == kind]


@pytest.mark.parametrize("path", transcripts("claude-code"), ids=lambda p: str(p.relative_to(CC)))
def test_every_fixture_is_detected_as_claude_code(path: Path) -> None:
    cls, _ = detect(path.read_bytes()[:65536])
    assert cls.name == "claude-code"


@pytest.mark.parametrize("path", [PARENT, SUBAGENT, OLD], ids=lambda p: p.name)
def test_one_assistant_message_per_api_message_with_the_last_usage(path: Path) -> None:
    last_usage: dict[str, dict[str, Any]] = {}
    for rec in records(path):
        msg = rec.get("message") or {}
        if rec.get("type") == "assistant" and not rec.get("isApiErrorMessage") and msg.get("usage"):
            last_usage[msg["id"]] = msg["usage"]
    session = convert_json(path)
    anchors = by_kind(session, "assistant_message")
    ids = [e["message_id"] for e in anchors]
    assert len(ids) == len(set(ids)) == len(last_usage)
    for ev in anchors:
        usage = ev["assistant_message"]["usage"]
        native = last_usage[ev["message_id"]]
        assert usage["output_tokens"] == native["output_tokens"]
        assert usage["input_tokens"] == native["input_tokens"]
    total_out = sum(u["output_tokens"] for u in last_usage.values())
    assert session["totals"]["output_tokens"] == total_out


def test_thinking_and_tool_calls_share_their_message_id() -> None:
    session = convert_json(PARENT)
    anchors = {e["message_id"] for e in by_kind(session, "assistant_message")}
    parts = by_kind(session, "thinking") + by_kind(session, "tool_call")
    assert parts
    assert {e["message_id"] for e in parts} <= anchors


def test_tool_results_carry_the_sidecar_and_the_called_tool_name() -> None:
    sidecars = {}
    for rec in records(PARENT):
        content = (rec.get("message") or {}).get("content")
        if rec.get("type") == "user" and isinstance(content, list) and "toolUseResult" in rec:
            for block in content:
                if block.get("type") == "tool_result":
                    sidecars[block["tool_use_id"]] = rec["toolUseResult"]
    session = convert_json(PARENT)
    names = {
        e["tool_call"]["tool_call_id"]: e["tool_call"]["name"]
        for e in by_kind(session, "tool_call")
    }
    results = by_kind(session, "tool_result")
    assert results
    for ev in results:
        res = ev["tool_result"]
        assert res["tool_name"] == names[res["tool_call_id"]]
        if res["tool_call_id"] in sidecars:
            assert res["enrichment"] == sidecars[res["tool_call_id"]]


def test_meta_records_are_harness_origin_and_typed_prompts_human() -> None:
    meta_uuids = {r["uuid"] for r in records(PARENT) if r.get("type") == "user" and r.get("isMeta")}
    session = convert_json(PARENT)
    users = by_kind(session, "user_message")
    assert {e["id"] for e in users if e["user_message"]["origin"] == "harness"} == meta_uuids
    assert any(e["user_message"]["origin"] == "human" for e in users)


def test_subagent_transcripts_are_marked() -> None:
    meta = convert_json(SUBAGENT)["meta"]
    assert meta["is_subagent"] is True
    assert meta["subagent_id"] == "a36efb2a1231c41e2"
    assert meta["session_id"] == convert_json(PARENT)["meta"]["session_id"]


def test_records_the_reference_rejects_are_counted_skips() -> None:
    path = CC / "ccl" / "256ba646-2c15-437a-98e9-4171aafd030e.jsonl"
    native = Counter(r["type"] for r in records(path))
    session = convert_json(path)
    assert session["report"]["skipped_records"]["progress"] == native["progress"]
    assert not session["report"].get("unknown_events")
    old = convert_json(CC / "ccl" / "07f2e15c-a38b-454b-9148-60edc06de401.jsonl")
    summaries = Counter(
        r["type"] for r in records(CC / "ccl" / "07f2e15c-a38b-454b-9148-60edc06de401.jsonl")
    )
    assert old["report"]["skipped_records"]["summary"] == summaries["summary"]


def test_early_top_level_tool_records_pair_by_name() -> None:
    session = convert_json(CC / "agentsessions" / "schema_drift.jsonl")
    [call] = by_kind(session, "tool_call")
    [result] = by_kind(session, "tool_result")
    assert call["tool_call"]["name"] == "bash"
    assert result["tool_result"]["tool_call_id"] == call["tool_call"]["tool_call_id"]
    assert result["tool_result"]["content"][0]["text"].startswith("# Title")


def test_reappended_rows_are_counted_once(tmp_path: Path) -> None:
    # A second compaction re-appends earlier rows with their uuids (anthropics/claude-code#92089).
    lines = PARENT.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "reappended.jsonl"
    copy.write_bytes(b"".join(lines) + b"".join(lines[5:60]))
    original, doubled = convert_json(PARENT), convert_json(copy)
    assert doubled["events"] == original["events"]
    assert doubled["totals"] == original["totals"]
    dup = {
        k: v for k, v in doubled["report"]["skipped_records"].items() if k.endswith("/duplicate")
    }
    native_dups = sum(1 for line in lines[5:60] if json.loads(line).get("uuid"))
    assert sum(dup.values()) == native_dups


def test_a_reappended_row_with_fields_added_is_still_a_copy(tmp_path: Path) -> None:
    # Real re-appended copies are not byte-identical: Claude Code adds ``slug`` or
    # ``promptId`` to them; the uuid, type and timestamp are what make them the same row.
    lines = PARENT.read_bytes().splitlines(keepends=True)
    copies = []
    for line in lines[5:60]:
        rec = json.loads(line)
        rec["slug"] = "added-on-copy"
        copies.append(json.dumps(rec).encode() + b"\n")
    copy = tmp_path / "reappended.jsonl"
    copy.write_bytes(b"".join(lines) + b"".join(copies))
    original, doubled = convert_json(PARENT), convert_json(copy)
    assert doubled["events"] == original["events"]
    assert doubled["totals"] == original["totals"]


def test_a_different_record_reusing_a_uuid_is_kept(tmp_path: Path) -> None:
    # A uuid taken by another record (another time) is not a copy: dropping it would
    # lose a real message, and the reference keeps it too.
    lines = PARENT.read_bytes().splitlines()
    recs = [json.loads(line) for line in lines]
    users = [i for i, r in enumerate(recs) if r.get("type") == "user" and r.get("uuid")]
    first, later = users[0], users[-1]
    assert recs[first]["timestamp"] != recs[later]["timestamp"]
    recs[later]["uuid"] = recs[first]["uuid"]
    changed = tmp_path / "reused.jsonl"
    changed.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in recs))
    original, reused = convert_json(PARENT), convert_json(changed)
    assert len(reused["events"]) == len(original["events"])
    at_later = [e for e in reused["events"] if e["provenance"]["line"] == later + 1]
    assert at_later
    assert all(e["id"] == recs[first]["uuid"] for e in at_later)
    assert not any(k.endswith("/duplicate") for k in reused["report"]["skipped_records"])


def test_a_rewound_branch_rerecording_an_answered_message_is_not_counted_again(
    tmp_path: Path,
) -> None:
    # A rewind re-records an answered API message under new uuids; the reference fails
    # here ("resumed after its fold closed"), we keep one anchor and one result per call.
    lines = PARENT.read_bytes().splitlines()
    recs = [json.loads(line) for line in lines]
    first_id = next(r["message"]["id"] for r in recs if r.get("type") == "assistant")
    copied = [
        r for r in recs if r.get("type") == "assistant" and r["message"].get("id") == first_id
    ]
    calls = {
        b["id"] for r in copied for b in r["message"]["content"] if b.get("type") == "tool_use"
    }
    answers = [
        r
        for r in recs
        if r.get("type") == "user"
        and isinstance(r["message"].get("content"), list)
        and any(b.get("tool_use_id") in calls for b in r["message"]["content"])
    ]
    assert calls
    assert answers
    branch = [dict(r, uuid="rewound-" + r["uuid"]) for r in copied + answers]
    copy = tmp_path / "rewound.jsonl"
    copy.write_bytes(b"\n".join(lines + [json.dumps(r).encode() for r in branch]) + b"\n")
    original, rewound = convert_json(PARENT), convert_json(copy)
    assert rewound["totals"] == original["totals"]
    assert len(by_kind(rewound, "assistant_message")) == len(by_kind(original, "assistant_message"))
    result_ids = [e["tool_result"]["tool_call_id"] for e in by_kind(rewound, "tool_result")]
    assert len(result_ids) == len(set(result_ids))


def test_an_unknown_record_names_harness_version_line_and_drift(tmp_path: Path) -> None:
    lines = PARENT.read_bytes().splitlines()
    rec = json.loads(lines[4])
    rec["version"] = "9.0.0"
    bad = dict(rec, type="brand-new-record")
    path = tmp_path / "drift.jsonl"
    path.write_bytes(b"\n".join([json.dumps(rec).encode(), json.dumps(bad).encode()]) + b"\n")
    with pytest.raises(ParseError) as err:
        convert_json(path)
    text = str(err.value)
    assert "claude-code" in text
    assert "at line 2" in text
    assert "harness version 9.0.0" in text
    assert "format drift" in text
    permissive = convert_json(path, permissive=True)
    [unknown] = by_kind(permissive, "unknown")
    assert unknown["unknown"]["record_type"] == "brand-new-record"
    assert permissive["report"]["unknown_events"] == 1


def test_max_payload_bytes_replaces_large_results_by_size_and_digest() -> None:
    whole = convert_json(PARENT)
    cut = convert_json(PARENT, max_payload_bytes=200)
    pairs = zip(by_kind(whole, "tool_result"), by_kind(cut, "tool_result"), strict=True)
    truncated = 0
    for full, small in pairs:
        for a, b in zip(
            full["tool_result"].get("content", []),
            small["tool_result"].get("content", []),
            strict=True,
        ):
            if a["kind"] == "text" and len(a["text"].encode()) > 200:
                truncated += 1
                assert b == {
                    "kind": "text",
                    "truncated": True,
                    "size": len(a["text"].encode()),
                    "digest": hashlib.sha256(a["text"].encode()).hexdigest(),
                }
            else:
                assert a == b
    assert truncated
    assert (
        load(PARENT, max_payload_bytes=200).stats().result_bytes
        == load(PARENT).stats().result_bytes
    )


def test_keep_raw_keeps_every_folded_record() -> None:
    session = convert_json(PARENT, keep_raw=True)
    lines = PARENT.read_bytes().splitlines()
    for ev in by_kind(session, "assistant_message"):
        prov = ev["provenance"]
        assert prov["raw"][0] == json.loads(lines[prov["line"] - 1])
        assert prov["raw"][-1] == json.loads(lines[prov["end_line"] - 1])


def test_harness_version_hint_never_overrides_a_recorded_version() -> None:
    session = convert_json(PARENT, harness_version="0.0.1")
    assert session["meta"]["harness_version"] == "2.1.114"


def test_options_object_is_used_by_the_adapter() -> None:
    adapter = ClaudeCodeAdapter(ParseOptions(permissive=True))
    assert adapter.feed(b'{"type":"mystery"}', 1) == []  # held: no session_meta yet
    [event] = adapter.finish()
    assert event.kind == "unknown"


def _step_by_step(line: bytes) -> Any:
    raise msgspec.ValidationError("the one-pass decoder turned off")


@pytest.mark.parametrize("path", transcripts("claude-code"), ids=lambda p: str(p.relative_to(CC)))
def test_one_pass_decoding_reads_every_record_as_the_step_by_step_decoders(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast path changes nothing: the same session with it turned off, verbatim and text alike."""
    from agentminutes.harness.claude_code import adapter

    accepted = 0
    one_pass = adapter._decode_fast_record

    def counting(line: bytes) -> Any:
        nonlocal accepted
        rec = one_pass(line)
        accepted += 1
        return rec

    monkeypatch.setattr(adapter, "_decode_fast_record", counting)
    fast = [msgspec.json.encode(load(path, permissive=True, keep_raw=raw)) for raw in (False, True)]
    monkeypatch.setattr(adapter, "_decode_fast_record", _step_by_step)
    slow = [msgspec.json.encode(load(path, permissive=True, keep_raw=raw)) for raw in (False, True)]
    assert fast == slow
    assert accepted > 0  # the fast path was taken


@pytest.mark.parametrize(
    "path", sorted(CC.rglob("*.jsonl")), ids=lambda p: str(p.relative_to(FIXTURES))
)
def test_a_read_without_system_text_differs_only_in_that_text(path: Path) -> None:
    """``system_text=False`` (``stats`` as JSON) leaves system events' text empty, and
    changes nothing else: not the events, their order, the counts, nor the summary."""
    from agentminutes.pipeline.sync import sync_feeds
    from agentminutes.schema import to_builtins
    from agentminutes.schema.stats import StatsBuilder

    def read(system_text: bool) -> tuple[list[Any], dict[str, int]]:
        options = ParseOptions(permissive=True, check_verbatim=False, system_text=system_text)
        events: list[Any] = []
        skipped: dict[str, int] = {}
        for batches, skipped_of in sync_feeds(str(path), None, False, "claude-code", options):
            events += [ev for batch in batches for ev in batch.events]
            skipped = skipped_of()
        return events, skipped

    full, full_skipped = read(True)
    bare, bare_skipped = read(False)
    assert bare_skipped == full_skipped
    texts = 0
    for ev in full:
        if ev.system is not None and ev.system.text:
            ev.system.text = ""
            texts += 1
    assert to_builtins(bare) == to_builtins(full)
    assert not any(ev.system is not None and ev.system.text for ev in bare)
    summaries = []
    for events in (full, bare):
        builder = StatsBuilder()
        builder.add_all(events)
        summaries.append(to_builtins(builder.build()))
    assert summaries[0] == summaries[1]
    if path.name.startswith("d82cf66b"):
        assert texts  # the fixture has attachments and system records with text
