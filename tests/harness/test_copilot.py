"""The Copilot adapter on real transcripts: pairing by id, errors, subagents, legacy JSON.

Expectations are derived from the fixture records themselves (read here with
the standard ``json`` module), not copied from our own output; the golden
tests pin the output against the reference.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from agentminutes.errors import ParseError
from agentminutes.harness import ADAPTERS, SNIFF_BYTES, Confidence, ParseOptions, detect
from agentminutes.harness.copilot import CopilotAdapter
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from agentminutes.schema import Event
from agentminutes.timestamps import valid_timestamp
from conftest import FIXTURES, convert_json, fixture_id, run_cli, stats_json, transcripts

ALL = transcripts("copilot")
SMALL = FIXTURES / "copilot/agent-sessions/copilot_small_0.0.420.jsonl"
NEWEST = FIXTURES / "copilot/agent-sessions/copilot_small_1.0.77.jsonl"
LARGE = FIXTURES / "copilot/agent-sessions/copilot_large.jsonl"
FLAT = FIXTURES / "copilot/hawzx-ai/27d7ef99-f7c7-43eb-8599-cb469623c8f7.jsonl"
LEGACY = (
    FIXTURES
    / "copilot/polusiti-sys/session_e02997e2-e7e7-46ae-8027-b1a73e0cb908_1761492781060.json"
)
LEGACY_TINY = (
    FIXTURES
    / "copilot/polusiti-sys/session_ea20af27-b3c6-4843-b737-05a1b8aeacf0_1759498020507.json"
)
LINES = [p for p in ALL if p.suffix == ".jsonl"]


def records(path: Path) -> dict[int, dict[str, Any]]:
    """The fixture's records by line number."""
    out = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if line.strip():
            out[n] = json.loads(line)
    return out


def write(tmp_path: Path, recs: list[dict[str, Any]], name: str = "events.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def events_of(path: Path, **options: Any) -> list[Event]:
    conv = Conversion(name=str(path), options=ParseOptions(**options))
    return list(conv.iter_events(open_sync_chunks(path)))


# -- detection -------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_every_fixture_is_detected_as_certain(path: Path) -> None:
    cls, confidence = detect(path.read_bytes()[:SNIFF_BYTES])
    assert cls is CopilotAdapter
    assert confidence == Confidence.CERTAIN


OTHERS = [p for cls in ADAPTERS if cls.name != "copilot" for p in transcripts(cls.name)]


@pytest.mark.parametrize("path", OTHERS, ids=[fixture_id(p) for p in OTHERS])
def test_other_harnesses_transcripts_are_not_claimed(path: Path) -> None:
    assert CopilotAdapter.sniff(path.read_bytes()[:SNIFF_BYTES]) == Confidence.NO_MATCH


def test_a_file_starting_mid_session_is_possible(tmp_path: Path) -> None:
    recs = list(records(SMALL).values())[1:]
    assert CopilotAdapter.sniff(write(tmp_path, recs).read_bytes()) == Confidence.POSSIBLE


# -- every strict parse, and the records the reference rejects ---------------------------------


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_every_fixture_converts_strictly_with_no_unknown_events(path: Path) -> None:
    doc = convert_json(path)
    assert not any(ev["kind"] == "unknown" for ev in doc["events"])
    assert "totals" not in doc
    assert [ev["kind"] for ev in doc["events"]].count("session_meta") == 1
    assert doc["events"][0]["kind"] == "session_meta"


def test_records_the_reference_rejects_map_onto_events() -> None:
    recs = records(NEWEST) | {n + 1000: r for n, r in records(LARGE).items()}
    kinds: dict[str, set[str]] = {}
    for path, offset in ((NEWEST, 0), (LARGE, 1000)):
        for ev in convert_json(path)["events"]:
            rec = recs[ev["provenance"]["line"] + offset]
            if ev["kind"] != "session_meta":
                kinds.setdefault(rec["type"], set()).add(ev["kind"])
    assert kinds["hook.start"] == kinds["hook.end"] == {"system"}
    assert kinds["system.notification"] == {"system"}
    assert kinds["assistant.reasoning"] == {"thinking"}
    notification = next(r for r in recs.values() if r["type"] == "system.notification")
    texts = [
        ev["system"].get("text")
        for ev in convert_json(NEWEST)["events"]
        if ev["kind"] == "system" and ev["system"]["subtype"] == "system.notification"
    ]
    assert texts == [notification["data"]["content"]]


# -- calls, results, errors ----------------------------------------------------------------------


@pytest.mark.parametrize("path", LINES, ids=[fixture_id(p) for p in LINES])
def test_results_are_named_by_their_calls_id_and_flag_errors(path: Path) -> None:
    recs = records(path)
    names: dict[str, str] = {}
    expected: dict[int, str | None] = {}
    for n, rec in recs.items():
        data = rec.get("data") or {}
        if rec["type"] == "assistant.message":
            for req in data.get("toolRequests") or []:
                names[req["toolCallId"]] = req["name"]
        elif rec["type"] == "tool.execution_start":
            names.setdefault(data["toolCallId"], data["toolName"])
        elif rec["type"] == "tool.execution_complete":
            expected[n] = names.get(data["toolCallId"])
    results = [ev for ev in convert_json(path)["events"] if ev["kind"] == "tool_result"]
    assert results
    for ev in results:
        n = ev["provenance"]["line"]
        data = recs[n]["data"]
        result = ev["tool_result"]
        assert result["tool_call_id"] == data["toolCallId"]
        assert result.get("tool_name") == expected[n]
        shell = data.get("shellExecution") or {}
        error = data.get("success") is False or bool(shell.get("exitCode")) or "error" in data
        assert result.get("is_error", False) is error
        assert result["enrichment"] == data


def test_calls_keep_arguments_verbatim_and_precede_their_anchor() -> None:
    recs = records(NEWEST)
    events = convert_json(NEWEST)["events"]
    for i, ev in enumerate(events):
        if ev["kind"] != "tool_call":
            continue
        data = recs[ev["provenance"]["line"]]["data"]
        req = next(
            r for r in data["toolRequests"] if r["toolCallId"] == ev["tool_call"]["tool_call_id"]
        )
        assert ev["tool_call"]["input"] == req["arguments"]
        anchor = next(e for e in events[i:] if e["kind"] == "assistant_message")
        assert anchor["provenance"] == ev["provenance"]
        assert anchor["message_id"] == ev["message_id"] == data["messageId"]
    assert any(
        isinstance(r["data"]["toolRequests"][0]["arguments"], str)
        for r in recs.values()
        if r["type"] == "assistant.message" and r["data"]["toolRequests"]
    )


def test_a_result_before_its_call_is_an_orphan() -> None:
    doc = convert_json(NEWEST)
    seen: set[str] = set()
    orphans = 0
    for ev in doc["events"]:
        if ev["kind"] == "tool_call":
            seen.add(ev["tool_call"]["tool_call_id"])
        elif ev["kind"] == "tool_result" and ev["tool_result"]["tool_call_id"] not in seen:
            orphans += 1
    assert orphans == doc["report"]["orphan_tool_results"] == 1


# -- subagents ------------------------------------------------------------------------------------


def _with_subagent(tmp_path: Path) -> Path:
    recs = list(records(SMALL).values())
    ask = next(r for r in recs if r["type"] == "user.message")
    sub_user = dict(ask, id="s1", agentId="sub-1", data=dict(ask["data"], source="agent-sub-1"))
    call = next(r for r in recs if r["type"] == "assistant.message" and r["data"]["toolRequests"])
    sub_call = dict(call, id="s2", agentId="sub-1")
    sub_call["data"] = dict(
        call["data"], toolRequests=[dict(call["data"]["toolRequests"][0], toolCallId="sub-call")]
    )
    done = next(r for r in recs if r["type"] == "tool.execution_complete")
    sub_done = dict(
        done,
        id="s3",
        agentId="sub-1",
        data=dict(done["data"], toolCallId="sub-call", success=False),
    )
    return write(tmp_path, [*recs[:-1], sub_user, sub_call, sub_done, recs[-1]])


def test_inline_subagent_events_carry_agent_id_and_split_stats(tmp_path: Path) -> None:
    path = _with_subagent(tmp_path)
    doc = convert_json(path)
    agents = {ev["id"]: ev.get("agent_id", "") for ev in doc["events"] if ev.get("id")}
    assert agents["s1"] == agents["s2"] == agents["s3"] == "sub-1"
    assert agents["e1"] == ""
    delegated = next(ev for ev in doc["events"] if ev.get("id") == "s1")
    assert delegated["user_message"]["origin"] == "harness"
    stats = stats_json(path)
    assert stats["harness_messages"] == 1
    by_agent = stats["by_agent"]
    assert set(by_agent) == {"", "sub-1"}
    sub = by_agent["sub-1"]
    assert sub["events"] == sum(1 for ev in doc["events"] if ev.get("agent_id") == "sub-1")
    assert sub["tool_calls"] == 1
    assert sub["tool_errors"] == 1
    assert by_agent[""]["tool_calls"] == stats["tool_calls"] - 1


def test_a_single_agent_session_has_no_split() -> None:
    assert "by_agent" not in stats_json(FLAT)


# -- skills ------------------------------------------------------------------------------------------


def test_a_skill_body_is_wrapped_as_the_next_record_delivers_it(tmp_path: Path) -> None:
    recs = list(records(SMALL).values())[:1]
    body = "# Greeter\nSay hello.\n"
    digest = "sha256:" + hashlib.sha256(body.encode()).hexdigest()
    base = {"timestamp": "2026-01-01T00:00:00Z", "parentId": None}
    recs += [
        {**base, "type": "skill.invoked", "id": "k1", "data": {"content": body}},
        {
            **base,
            "type": "skill.context_delivered_ref",
            "id": "k2",
            "data": {"contentId": digest, "prefix": "<s>", "suffix": "</s>"},
        },
        {**base, "type": "skill.invoked_ref", "id": "k3", "data": {"contentId": digest}},
    ]
    events = convert_json(write(tmp_path, recs))["events"]
    texts = {ev["id"]: ev["system"].get("text") for ev in events if ev["kind"] == "system"}
    assert texts == {"k1": f"<s>{body}</s>", "k2": None, "k3": body}
    assert [ev["id"] for ev in events[1:]] == ["k1", "k2", "k3"]


# -- meta, versions and drift ---------------------------------------------------------------------


def test_meta_comes_from_session_start_and_its_version_wins() -> None:
    start = records(NEWEST)[1]
    meta = convert_json(NEWEST, harness_version="0.1")["meta"]
    assert meta["session_id"] == start["data"]["sessionId"]
    assert meta["harness_version"] == start["data"]["copilotVersion"]
    assert meta["cwd"] == start["data"]["context"]["cwd"]
    assert meta["git_branch"] == start["data"]["context"]["branch"]


def test_without_session_start_the_hint_is_the_version(tmp_path: Path) -> None:
    path = write(tmp_path, list(records(SMALL).values())[1:])
    doc = convert_json(path, harness_version="0.0.1")
    assert doc["meta"] == {"harness": "copilot", "harness_version": "0.0.1"}
    assert (
        doc["events"][0]["provenance"]
        == doc["events"][1]["provenance"]
        == {"line": 1, "end_line": 1}
    )


def _with_version(tmp_path: Path, version: str) -> Path:
    recs = list(records(SMALL).values())
    recs[0] = dict(recs[0], data=dict(recs[0]["data"], copilotVersion=version))
    recs.append(dict(recs[-1], type="hologram.render", id="late"))
    return write(tmp_path, recs)


def test_an_unknown_record_from_a_newer_release_suggests_format_drift(tmp_path: Path) -> None:
    with pytest.raises(ParseError) as err:
        convert_json(_with_version(tmp_path, "9.0.0"))
    text = str(err.value)
    assert 'unrecognized record type "hologram.render"' in text
    assert "(harness version 9.0.0, newer than last checked 1.0.102; likely format drift" in text
    assert text.endswith(f"at line {len(records(SMALL)) + 1}")
    with pytest.raises(ParseError) as err:
        convert_json(_with_version(tmp_path, CopilotAdapter.last_checked))
    assert "drift" not in str(err.value)


def test_malformed_data_is_named_with_its_record_type(tmp_path: Path) -> None:
    recs = list(records(SMALL).values())
    ask = next(i for i, r in enumerate(recs) if r["type"] == "user.message")
    recs[ask] = dict(recs[ask], data={"content": 5})
    with pytest.raises(
        ParseError,
        match=r"malformed user\.message: json: cannot unmarshal number into Go struct field userMessage\.content of type string",
    ):
        convert_json(write(tmp_path, recs))
    doc = convert_json(write(tmp_path, recs), permissive=True)
    assert [ev["unknown"]["record_type"] for ev in doc["events"] if ev["kind"] == "unknown"] == [
        "user.message"
    ]


# -- the legacy single-document session ------------------------------------------------------------


def test_legacy_document_becomes_a_session() -> None:
    native = json.loads(LEGACY.read_text(encoding="utf-8"))
    doc = convert_json(LEGACY)
    meta = doc["events"][0]
    assert meta["session_meta"]["session_id"] == native["sessionId"]
    assert meta["timestamp"] == valid_timestamp(native["startTime"])
    total_lines = len(LEGACY.read_text(encoding="utf-8").rstrip("\n").split("\n"))
    assert meta["provenance"] == {"line": 1, "end_line": total_lines}
    timeline = native["timeline"]
    results = [ev for ev in doc["events"] if ev["kind"] == "tool_result"]
    completed = [e for e in timeline if e["type"] == "tool_call_completed"]
    assert [r["tool_result"]["tool_call_id"] for r in results] == [e["callId"] for e in completed]
    assert [r.get("id") for r in results] == [e["id"] for e in completed]
    assert [r["tool_result"].get("is_error", False) for r in results] == [
        e["result"]["type"] != "success" for e in completed
    ]
    calls = [ev["tool_call"]["tool_call_id"] for ev in doc["events"] if ev["kind"] == "tool_call"]
    made = [c["id"] for m in native["chatMessages"] for c in m.get("tool_calls", [])]
    assert sorted(calls) == sorted(made)
    seen: set[str] = set()
    for ev in doc["events"]:
        if ev["kind"] == "tool_call":
            seen.add(ev["tool_call"]["tool_call_id"])
        elif ev["kind"] == "tool_result":
            assert ev["tool_result"]["tool_call_id"] in seen, "each call comes before its result"
    replies = {
        m["tool_call_id"]: m["content"] for m in native["chatMessages"] if m["role"] == "tool"
    }
    for ev in results:
        assert ev["tool_result"]["content"][0]["text"] == replies[ev["tool_result"]["tool_call_id"]]
    users = [
        ev["user_message"]["content"][0]["text"]
        for ev in doc["events"]
        if ev["kind"] == "user_message"
    ]
    assert users == [e["text"] for e in timeline if e["type"] == "user"]


def test_legacy_provenance_points_at_each_timeline_entry() -> None:
    lines = LEGACY.read_text(encoding="utf-8").split("\n")
    native = json.loads(LEGACY.read_text(encoding="utf-8"))
    ids = {e["id"] for e in native["timeline"]}
    for ev in convert_json(LEGACY)["events"]:
        if ev.get("id") in ids:
            span = lines[ev["provenance"]["line"] - 1 : ev["provenance"]["end_line"]]
            entry = json.loads("\n".join(span).rstrip(","))
            assert entry["id"] == ev["id"]


def test_legacy_model_change_and_jsonl_lines(tmp_path: Path) -> None:
    doc = convert_json(LEGACY_TINY)
    assert [ev["kind"] for ev in doc["events"]] == ["session_meta", "system"]
    assert doc["events"][1]["system"]["subtype"] == "timeline.info"
    proc = run_cli("convert", "--format", "jsonl", LEGACY)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert [json.loads(line) for line in lines] == convert_json(LEGACY)["events"]


def test_legacy_document_is_read_whole_at_the_end() -> None:
    adapter = CopilotAdapter()
    lines = [(n, line.strip()) for n, line in enumerate(LEGACY_TINY.read_bytes().split(b"\n"), 1)]
    assert all(adapter.feed(line, n) == [] for n, line in lines if line)
    assert [ev.kind for ev in adapter.finish()] == ["session_meta", "system"]


def test_a_legacy_document_on_one_line_reads_the_same(tmp_path: Path) -> None:
    native = json.loads(LEGACY.read_text(encoding="utf-8"))
    path = tmp_path / "session.json"
    path.write_text(json.dumps(native) + "\n", encoding="utf-8")
    assert detect(path.read_bytes()[:SNIFF_BYTES]) == (CopilotAdapter, Confidence.CERTAIN)
    one = convert_json(path)["events"]
    pretty = convert_json(LEGACY)["events"]
    assert [ev["kind"] for ev in one] == [ev["kind"] for ev in pretty]
    assert all(ev["provenance"] == {"line": 1, "end_line": 1} for ev in one)


def test_truncated_raw_blocks_keep_verbatim_size_and_drop_raw(tmp_path: Path) -> None:
    recs = list(records(SMALL).values())
    done = next(i for i, r in enumerate(recs) if r["type"] == "tool.execution_complete")
    recs[done] = dict(recs[done], data=dict(recs[done]["data"], result={"content": ["a", 1]}))
    path = write(tmp_path, recs)  # json.dumps writes '["a", 1]', 8 bytes with its space
    doc = convert_json(path, max_payload_bytes=3)
    result = next(ev["tool_result"] for ev in doc["events"] if ev["kind"] == "tool_result")
    block = result["content"][0]
    assert block["kind"] == "other"
    assert "raw" not in block
    assert block["truncated"] is True
    assert block["size"] == len(b'["a", 1]')
    assert result["enrichment"]["truncated"] is True
    whole = convert_json(path)
    kept = next(ev["tool_result"] for ev in whole["events"] if ev["kind"] == "tool_result")
    assert kept["content"][0]["raw"] == ["a", 1]
