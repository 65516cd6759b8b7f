"""The pi adapter on real and constructed session files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentminutes.errors import ParseError
from agentminutes.harness import ADAPTERS, SNIFF_BYTES, Confidence, ParseOptions, detect
from agentminutes.harness.pi import PiAdapter
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from agentminutes.schema import Event, EventKind, Origin
from conftest import FIXTURES, ROOT, fixture_id, stats_json, transcripts

PI = FIXTURES / "pi"
ALL = transcripts("pi")
GENUINE = [p for p in ALL if "constructed" not in p.parts and "agent-sessions" not in p.parts]
SMALL = PI / "agent-sessions" / "pi_small.jsonl"
FORK = PI / "constructed" / "v3-fork-tools.jsonl"
HOOK = PI / "constructed" / "v2-hook-message.jsonl"
V1 = PI / "pi-mono" / "before-compaction.jsonl"
CORPUS = ROOT.parent / "shared" / "corpus"


def events(path: Path, **options: Any) -> list[Event]:
    conv = Conversion(name=str(path), options=ParseOptions(**options))
    return list(conv.iter_events(open_sync_chunks(path)))


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def of(evs: list[Event], kind: str) -> list[Event]:
    return [e for e in evs if e.kind == kind]


# -- detection -------------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_every_fixture_detected_certain(path: Path) -> None:
    cls, conf = detect(path.read_bytes()[:SNIFF_BYTES])
    assert (cls.name, conf) == ("pi", Confidence.CERTAIN)


def test_no_other_adapter_claims_pi_files() -> None:
    for path in ALL:
        head = path.read_bytes()[:SNIFF_BYTES]
        for cls in ADAPTERS:
            if cls is not PiAdapter:
                assert cls.sniff(head) == Confidence.NO_MATCH, (cls.name, path)


# -- strict parsing ----------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_strict_parse_has_a_conversation(path: Path) -> None:
    evs = events(path)
    assert evs[0].kind == EventKind.SESSION_META
    assert len(of(evs, EventKind.SESSION_META)) == 1
    assert not of(evs, EventKind.UNKNOWN)
    assert of(evs, EventKind.USER_MESSAGE)
    assert of(evs, EventKind.ASSISTANT_MESSAGE)


def test_genuine_fixtures_are_the_old_v1_format() -> None:
    assert GENUINE
    for path in GENUINE:
        header = records(path)[0]
        assert header["type"] == "session"
        assert "version" not in header


def test_one_assistant_message_per_assistant_record() -> None:
    for path in ALL:
        expected = sum(
            1
            for r in records(path)
            if r["type"] == "message" and r["message"]["role"] == "assistant"
        )
        assert len(of(events(path), EventKind.ASSISTANT_MESSAGE)) == expected, path


# -- pairing -----------------------------------------------------------------


@pytest.mark.parametrize("path", [V1, FORK, HOOK], ids=fixture_id)
def test_tool_results_pair_with_earlier_calls(path: Path) -> None:
    evs = events(path)
    calls: dict[str, Event] = {}
    for ev in evs:
        if ev.tool_call is not None:
            calls[ev.tool_call.tool_call_id] = ev
        elif ev.tool_result is not None:
            call = calls[ev.tool_result.tool_call_id]
            assert call.tool_call is not None
            assert ev.tool_result.tool_name == call.tool_call.name
    assert stats_json(path).get("orphan_results", 0) == 0


def test_tool_kinds_and_error_results() -> None:
    evs = events(FORK)
    kinds = {e.tool_call.name: e.tool_call.kind for e in evs if e.tool_call is not None}
    assert kinds == {"grep": "search", "read": "read", "edit": "edit"}
    errors = {e.tool_result.tool_call_id: e.tool_result.is_error for e in evs if e.tool_result}
    assert errors == {"call_grep_1": False, "call_read_1": True, "call_edit_1": False}
    edit = next(e for e in evs if e.tool_result and e.tool_result.tool_name == "edit")
    assert edit.tool_result is not None
    details = records(FORK)[11]["message"]["details"]
    assert json.loads(bytes(edit.tool_result.enrichment)) == details


def test_thinking_and_calls_share_the_message_id() -> None:
    evs = events(FORK)
    msg = of(evs, EventKind.ASSISTANT_MESSAGE)[0]
    assert msg.message_id == records(FORK)[5]["id"]
    own = [e for e in evs if e.message_id == msg.message_id]
    assert [e.kind for e in own] == ["thinking", "tool_call", "tool_call", "assistant_message"]
    assert own[0].thinking is not None
    assert own[0].thinking.signature == "sig-1"


# -- usage -------------------------------------------------------------------


@pytest.mark.parametrize("path", [V1, FORK, SMALL], ids=fixture_id)
def test_usage_maps_each_message_and_keeps_cost(path: Path) -> None:
    recs = [r for r in records(path) if r["type"] == "message"]
    usages = [r["message"]["usage"] for r in recs if r["message"]["role"] == "assistant"]
    msgs = of(events(path), EventKind.ASSISTANT_MESSAGE)
    for usage, ev in zip(usages, msgs, strict=True):
        got = ev.assistant_message.usage  # type: ignore[union-attr]
        assert got is not None
        assert got.input_tokens == usage["input"]
        assert got.output_tokens == usage["output"]
        assert got.cache_read_input_tokens == usage["cacheRead"]
        assert got.cache_creation_input_tokens == usage["cacheWrite"]
        extra = {k: json.loads(bytes(v)) for k, v in (got.extra or {}).items()}
        assert extra["cost"] == usage["cost"]
        assert set(extra) == set(usage) - {"input", "output", "cacheRead", "cacheWrite"}


def test_stats_totals_sum_the_recorded_usage() -> None:
    usages = [
        r["message"]["usage"]
        for r in records(V1)
        if r["type"] == "message" and r["message"]["role"] == "assistant"
    ]
    totals = stats_json(V1)["totals"]
    assert totals["input_tokens"] == sum(u["input"] for u in usages)
    assert totals["output_tokens"] == sum(u["output"] for u in usages)
    assert totals["cache_read_input_tokens"] == sum(u["cacheRead"] for u in usages)
    assert totals["total_prompt_tokens"] == sum(
        u["input"] + u["cacheRead"] + u["cacheWrite"] for u in usages
    )


# -- lineage, lifecycle and origin -----------------------------------------------


@pytest.mark.parametrize(("path", "key"), [(FORK, "parentSession"), (V1, "branchedFrom")])
def test_fork_lineage_on_the_session_event(path: Path, key: str) -> None:
    evs = events(path)
    header = records(path)[0]
    meta = evs[0].session_meta
    assert meta is not None
    assert meta.session_id == header["id"]
    assert meta.cwd == header["cwd"]
    session = evs[1]
    assert session.system is not None
    assert session.system.subtype == "session"
    assert session.system.text == header[key]
    assert json.loads(bytes(session.system.details)) == header


def test_session_without_parent_has_empty_lineage() -> None:
    session = events(SMALL)[1]
    assert session.system is not None
    assert session.system.subtype == "session"
    assert session.system.text == ""


def test_lifecycle_records_are_system_events_with_the_record() -> None:
    evs = events(FORK)
    by_subtype = {e.system.subtype: e for e in evs if e.system is not None}
    assert set(by_subtype) >= {
        "model_change",
        "thinking_level_change",
        "session_info",
        "custom/todo-tracker",
        "label",
        "branch_summary",
        "assistant/aborted",
        "bashExecution",
    }
    recs = records(FORK)
    assert by_subtype["model_change"].system.text == "gemini-2.5-pro"  # type: ignore[union-attr]
    branch = by_subtype["branch_summary"]
    assert json.loads(bytes(branch.system.details)) == recs[14]  # type: ignore[union-attr]
    assert branch.parent_id == recs[14]["parentId"]
    aborted = by_subtype["assistant/aborted"].system
    assert aborted is not None
    assert aborted.text == "Request was aborted."
    hidden = by_subtype["bashExecution"].system
    assert hidden is not None
    assert hidden.text == recs[-1]["message"]["command"]
    compactions = [e for e in events(V1) if e.system and e.system.subtype == "compaction"]
    assert len(compactions) == sum(1 for r in records(V1) if r["type"] == "compaction")


def test_origin_rules() -> None:
    fork = of(events(FORK), EventKind.USER_MESSAGE)
    origins = [e.user_message.origin for e in fork]  # type: ignore[union-attr]
    # user, custom_message (injected), bash run by the person, user, user
    assert origins == [Origin.HUMAN, Origin.HARNESS, Origin.HUMAN, Origin.HUMAN, Origin.HUMAN]
    bash = fork[2].user_message
    assert bash is not None
    assert bash.content is not None
    assert bash.content[0].text == "pytest -q"
    image = fork[0].user_message.content[1]  # type: ignore[union-attr,index]
    assert (image.kind, image.mime_type) == ("image", "image/png")
    hook = of(events(HOOK), EventKind.USER_MESSAGE)
    assert [e.user_message.origin for e in hook] == [Origin.HUMAN, Origin.HARNESS]  # type: ignore[union-attr]


# -- incremental parsing -------------------------------------------------------


def test_each_line_yields_its_events_at_once() -> None:
    adapter = PiAdapter(ParseOptions())
    for lineno, line in enumerate(FORK.read_bytes().splitlines(), 1):
        got = adapter.feed(line, lineno)
        assert got, f"line {lineno} held back"
        assert all(e.provenance is not None and e.provenance.line == lineno for e in got)
    assert adapter.finish() == []


# -- errors --------------------------------------------------------------------


def _write(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


HEADER = {
    "type": "session",
    "version": 3,
    "id": "s1",
    "timestamp": "2026-01-01T00:00:00Z",
    "cwd": "/",
}
NEW = {"type": "hologram", "id": "x1", "parentId": None, "timestamp": "2026-01-01T00:00:01Z"}


def test_unknown_record_fails_strictly_and_is_kept_permissively(tmp_path: Path) -> None:
    path = _write(tmp_path, [HEADER, NEW])
    with pytest.raises(ParseError) as info:
        events(path)
    assert info.value.line == 2
    assert 'unrecognized record type "hologram"' in str(info.value)
    assert "likely format drift" not in str(info.value)
    unknown = of(events(path, permissive=True), EventKind.UNKNOWN)
    assert len(unknown) == 1
    assert unknown[0].unknown is not None
    assert unknown[0].unknown.record_type == "hologram"


def test_drift_named_for_a_newer_session_format(tmp_path: Path) -> None:
    path = _write(tmp_path, [{**HEADER, "version": 4}, NEW])
    with pytest.raises(ParseError, match=r"format v4, newer than v3 .*likely format drift"):
        events(path)


def test_drift_named_for_a_newer_pi_release(tmp_path: Path) -> None:
    path = _write(tmp_path, [HEADER, NEW])
    with pytest.raises(
        ParseError, match=r"harness version 9\.0\.0, newer than last checked"
    ) as info:
        events(path, harness_version="9.0.0")
    assert "likely format drift" in str(info.value)
    with pytest.raises(ParseError) as old:
        events(path, harness_version=PiAdapter.last_checked)
    assert "likely format drift" not in str(old.value)


def test_malformed_assistant_block_names_the_line(tmp_path: Path) -> None:
    bad = {
        "type": "message",
        "id": "m1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01Z",
        "message": {"role": "assistant", "content": [{"type": "hologram"}], "usage": None},
    }
    with pytest.raises(ParseError, match=r'assistant content block "hologram".* at line 2'):
        events(_write(tmp_path, [HEADER, bad]))
