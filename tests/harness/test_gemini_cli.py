"""The Gemini CLI adapter on real and constructed chat recordings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentminutes.errors import ParseError
from agentminutes.harness import ADAPTERS, SNIFF_BYTES, Confidence, ParseOptions, detect
from agentminutes.harness.gemini_cli import GeminiCliAdapter
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from agentminutes.schema import Event, EventKind, Origin, to_builtins
from agentminutes.timestamps import valid_timestamp
from conftest import FIXTURES, ROOT, fixture_id, stats_json, transcripts

GEMINI = FIXTURES / "gemini-cli"
ALL = transcripts("gemini-cli")
JSONL = [p for p in ALL if p.suffix == ".jsonl"]
GENUINE = sorted((GEMINI / "vibe-comparison").glob("*.jsonl"))
CONSTRUCTED = GEMINI / "constructed"
NEWER = CONSTRUCTED / "session-2026-08-01T09-00-c0ffee01.jsonl"
LEGACY = CONSTRUCTED / "session-2025-11-03T14-10-5e55a7e0.json"
LOGS = CONSTRUCTED / "logs.json"
CHAT_CHECKPOINT = CONSTRUCTED / "checkpoint-readme.json"
TOOL_CHECKPOINT = CONSTRUCTED / "checkpoint-tool-write_file.json"
SYNTHETIC_JSON = GEMINI / "agent-sessions" / "gemini_large.json"
SESSIONS = [p for p in ALL if p not in (LOGS, TOOL_CHECKPOINT)]
CORPUS = ROOT.parent / "shared" / "corpus"


def events(path: Path, **options: Any) -> list[Event]:
    conv = Conversion(name=str(path), options=ParseOptions(**options))
    return list(conv.iter_events(open_sync_chunks(path)))


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def of(evs: list[Event], kind: str) -> list[Event]:
    return [e for e in evs if e.kind == kind]


def final_versions(path: Path) -> dict[str, dict[str, Any]]:
    """Each message id's last bare record in a JSONL recording."""
    out: dict[str, dict[str, Any]] = {}
    for rec in lines(path):
        if "id" in rec:
            out[rec["id"]] = rec
    return out


# -- detection -------------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_every_fixture_detected(path: Path) -> None:
    cls, conf = detect(path.read_bytes()[:SNIFF_BYTES])
    assert cls.name == "gemini-cli"
    # A saved chat (plain Gemini API contents) is not distinctive, nor a prompt log
    # (logs.json), which Qwen Code writes alike: only its folder tells (see below).
    plain = path == CHAT_CHECKPOINT or path.name == "logs.json"
    expected = Confidence.POSSIBLE if plain else Confidence.CERTAIN
    assert conf == expected


def test_no_other_adapter_claims_gemini_files() -> None:
    for path in ALL:
        head = path.read_bytes()[:SNIFF_BYTES]
        for cls in ADAPTERS:
            if cls is GeminiCliAdapter or (cls.name == "qwen-code" and path.name == "logs.json"):
                continue
            assert cls.sniff(head) == Confidence.NO_MATCH, (cls.name, path)


def test_a_prompt_log_is_told_by_its_folder(tmp_path: Path) -> None:
    """Gemini CLI and Qwen Code write the same logs.json: ~/.qwen/tmp/<hash>/ says Qwen Code,
    ~/.gemini/tmp/<hash>/ Gemini CLI; elsewhere it is possibly Gemini CLI's."""
    import agentminutes

    log = next(p for p in ALL if p.name == "logs.json")
    for home, want in ((".qwen", "qwen-code"), (".gemini", "gemini-cli")):
        target = tmp_path / home / "tmp" / "abc123" / "logs.json"
        target.parent.mkdir(parents=True)
        target.write_bytes(log.read_bytes())
        assert agentminutes.detect(target) == (want, "possible")
    assert agentminutes.detect(log) == ("gemini-cli", "possible")


# -- strict parsing ----------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_strict_parse(path: Path) -> None:
    evs = events(path)
    assert evs[0].kind == EventKind.SESSION_META
    assert len(of(evs, EventKind.SESSION_META)) == 1
    assert not of(evs, EventKind.UNKNOWN)
    assert of(evs, EventKind.USER_MESSAGE)
    if path in SESSIONS:
        assert of(evs, EventKind.ASSISTANT_MESSAGE)


@pytest.mark.parametrize("path", GENUINE, ids=fixture_id)
def test_genuine_recording_maps_every_message(path: Path) -> None:
    evs = events(path)
    final = final_versions(path)
    header = lines(path)[0]
    meta = evs[0].session_meta
    assert meta is not None
    assert meta.session_id == header["sessionId"]
    by_type: dict[str, int] = {}
    for rec in final.values():
        by_type[rec["type"]] = by_type.get(rec["type"], 0) + 1
    assert len(of(evs, EventKind.ASSISTANT_MESSAGE)) == by_type.get("gemini", 0)
    assert len(of(evs, EventKind.USER_MESSAGE)) == by_type.get("user", 0)
    notices = [e for e in of(evs, EventKind.SYSTEM) if e.system and e.system.subtype != "session"]
    assert len(notices) == sum(by_type.get(t, 0) for t in ("info", "warning", "error"))
    calls = [c for r in final.values() for c in r.get("toolCalls", [])]
    assert [e.tool_call.tool_call_id for e in of(evs, EventKind.TOOL_CALL)] == [  # type: ignore[union-attr]
        c["id"] for c in calls
    ]
    assert [e.tool_result.tool_call_id for e in of(evs, EventKind.TOOL_RESULT)] == [  # type: ignore[union-attr]
        c["id"] for c in calls
    ]


# -- held messages and updates -----------------------------------------------


@pytest.mark.parametrize("path", JSONL, ids=[fixture_id(p) for p in JSONL])
def test_one_assistant_message_per_id_spanning_its_versions(path: Path) -> None:
    numbered = [
        (n, json.loads(text))
        for n, text in enumerate(path.read_text().splitlines(), 1)
        if text.strip()
    ]
    seen: dict[str, list[int]] = {}
    for n, rec in numbered:
        if rec.get("type") == "gemini":
            seen.setdefault(rec["id"], []).append(n)
    msgs = {e.message_id: e for e in of(events(path), EventKind.ASSISTANT_MESSAGE)}
    for message_id, at in seen.items():
        prov = msgs[message_id].provenance
        assert prov is not None
        assert (prov.line, prov.end_line) == (at[0], at[-1])


def test_the_held_message_is_released_by_the_next_record() -> None:
    path = GENUINE[0]
    adapter = GeminiCliAdapter(ParseOptions())
    numbered = [(n, t) for n, t in enumerate(path.read_bytes().splitlines(), 1) if t.strip()]
    released: dict[str, int] = {}
    shown: dict[str, int] = {}
    for n, text in numbered:
        for ev in adapter.feed(text, n):
            if ev.kind == EventKind.ASSISTANT_MESSAGE:
                released[ev.message_id] = n
            elif ev.kind in (EventKind.TOOL_CALL, EventKind.THINKING):
                shown.setdefault(ev.message_id, n)
    last = adapter.finish()
    assert len(last) <= 1
    assert all(e.kind == EventKind.ASSISTANT_MESSAGE for e in last)
    recs = dict(numbered)
    for message_id, n in released.items():
        releaser = json.loads(recs[n])
        assert releaser.get("id") not in (None, message_id)
        # thinking and tool calls went out before the message was released
        assert shown.get(message_id, 0) <= n


def test_events_of_a_message_precede_its_assistant_message() -> None:
    for path in JSONL:
        evs = events(path)
        closed: set[str] = set()
        for ev in evs:
            if ev.kind == EventKind.ASSISTANT_MESSAGE:
                closed.add(ev.message_id)
            elif ev.kind in (EventKind.THINKING, EventKind.TOOL_CALL):
                assert ev.message_id not in closed, (path, ev)


def test_last_updated_sets_are_counted_skips() -> None:
    for path in JSONL:
        expected = sum(1 for r in lines(path) if set(r.get("$set", {"x": 0})) == {"lastUpdated"})
        conv = Conversion(name=str(path))
        list(conv.iter_events(open_sync_chunks(path)))
        assert conv.skipped.get("$set", 0) == expected


def test_metadata_rewind_and_history_rewrite() -> None:
    evs = events(NEWER)
    systems = {e.system.subtype: e for e in evs if e.system is not None}
    update = systems["metadata_update"].system
    assert update is not None
    assert update.text == "Rename a helper in utils.py"
    rewind = systems["rewind"]
    assert rewind.system is not None
    assert rewind.system.text == "u-0003"
    rewrite = systems["history_rewrite"]
    assert rewrite.system is not None
    assert rewrite.system.text == "3 messages: 1 kept, 2 added, 5 removed"
    after = evs[evs.index(rewrite) + 1 :]
    added = [e for e in after if e.provenance and e.provenance.line == rewrite.provenance.line]  # type: ignore[union-attr]
    assert [(e.kind, e.id) for e in added] == [
        (EventKind.USER_MESSAGE, "s-0001"),
        (EventKind.ASSISTANT_MESSAGE, "s-0002"),
    ]
    assert added[0].user_message is not None
    assert added[0].user_message.origin == Origin.HARNESS
    # the kept message is not emitted twice
    assert sum(1 for e in evs if e.id == "u-0001") == 1


def test_a_resync_of_the_whole_history_adds_no_events(tmp_path: Path) -> None:
    # On resume the recorder rewrites the history from the model's view: model
    # content becomes parts (thoughts, function calls with their ids) and the
    # tool-response turns appear as user messages of their own.
    source = GENUINE[1]
    history: list[dict[str, Any]] = []
    for rec in final_versions(source).values():
        if rec["type"] != "gemini":
            history.append(rec)
            continue
        parts: list[dict[str, Any]] = [{"text": "thinking it over", "thought": True}]
        parts.append({"text": rec["content"]})
        parts += [
            {"functionCall": {"id": c["id"], "name": c["name"], "args": c["args"]}}
            for c in rec.get("toolCalls", [])
        ]
        history.append({**rec, "content": parts})
        responses = [r for c in rec.get("toolCalls", []) for r in c["result"]]
        if responses:
            history.append(
                {
                    "id": f"resp-{rec['id']}",
                    "timestamp": rec["timestamp"],
                    "type": "user",
                    "content": responses,
                }
            )
    path = tmp_path / "session.jsonl"
    path.write_bytes(
        source.read_bytes() + json.dumps({"$set": {"messages": history}}).encode() + b"\n"
    )
    before, after = events(source), events(path)
    (rewrite,) = after[len(before) :]
    assert rewrite.system is not None
    assert rewrite.system.subtype == "history_rewrite"
    assert [msgspec.json.encode(e) for e in after[: len(before)]] == [
        msgspec.json.encode(e) for e in before
    ]
    conv = Conversion(name=str(path))
    list(conv.iter_events(open_sync_chunks(path)))
    assert "user/functionResponse" not in conv.skipped


def test_function_responses_sent_back_are_not_repeated() -> None:
    evs = events(NEWER)
    results = [e.tool_result.tool_call_id for e in of(evs, EventKind.TOOL_RESULT)]  # type: ignore[union-attr]
    assert len(results) == len(set(results))
    assert set(results) == {e.tool_call.tool_call_id for e in of(evs, EventKind.TOOL_CALL)}  # type: ignore[union-attr]
    conv = Conversion(name=str(NEWER))
    list(conv.iter_events(open_sync_chunks(NEWER)))
    echoes = [r for r in lines(NEWER) if r.get("type") == "user" and "functionResponse" in str(r)]
    assert conv.skipped["user/functionResponse"] == len(echoes)
    humans = [e.user_message.origin for e in of(evs, EventKind.USER_MESSAGE)]  # type: ignore[union-attr]
    assert humans.count(Origin.HUMAN) == 3


def test_function_response_without_a_recorded_result_becomes_the_result(tmp_path: Path) -> None:
    recs = lines(GEMINI / "agent-sessions" / "gemini_jsonl_v040.jsonl")
    call = recs[3]["toolCalls"][0]
    del call["result"], call["status"]
    echo = {
        "id": "u-echo",
        "timestamp": "2026-04-29T21:39:36.000Z",
        "type": "user",
        "content": [
            {
                "functionResponse": {
                    "id": call["id"],
                    "name": call["name"],
                    "response": {"output": "ok"},
                }
            }
        ],
    }
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*recs[:4], echo, recs[4]]))
    evs = events(path)
    (result,) = of(evs, EventKind.TOOL_RESULT)
    assert result.tool_result is not None
    assert result.tool_result.tool_call_id == call["id"]
    assert result.tool_result.content is not None
    assert result.tool_result.content[0].text == "ok"
    assert result.provenance is not None
    assert result.provenance.line == 5


def test_cancelled_tool_is_an_error_result_with_display() -> None:
    evs = events(NEWER)
    result = next(
        e for e in of(evs, EventKind.TOOL_RESULT) if e.tool_result.tool_call_id == "replace_1"
    )  # type: ignore[union-attr]
    assert result.tool_result is not None
    assert result.tool_result.is_error
    display = final_versions(NEWER)["g-0002"]["toolCalls"][0]["resultDisplay"]
    assert json.loads(bytes(result.tool_result.enrichment)) == display
    call = next(e for e in of(evs, EventKind.TOOL_CALL) if e.tool_call.tool_call_id == "replace_1")  # type: ignore[union-attr]
    assert call.tool_call is not None
    assert call.tool_call.kind == "edit"
    assert result.timestamp == "2026-08-01T09:00:14Z"  # .000 trimmed, as the reference writes it
    assert call.timestamp == "2026-08-01T09:00:11Z"


# -- tokens ------------------------------------------------------------------


@pytest.mark.parametrize("path", [*GENUINE, NEWER, LEGACY], ids=fixture_id)
def test_tokens_map_without_double_counting_thoughts(path: Path) -> None:
    if path.suffix == ".json":
        finals = {m["id"]: m for m in json.loads(path.read_text())["messages"]}
    else:
        finals = final_versions(path)
    msgs = of(events(path), EventKind.ASSISTANT_MESSAGE)
    checked = 0
    for ev in msgs:
        tokens = finals.get(ev.message_id, {}).get("tokens")
        usage = ev.assistant_message.usage  # type: ignore[union-attr]
        if not tokens:
            assert usage is None
            continue
        assert usage is not None
        assert usage.cache_read_input_tokens == tokens["cached"]
        assert usage.output_tokens == tokens["output"] + tokens["thoughts"]
        assert usage.input_tokens == tokens["input"] - tokens["cached"] + tokens["tool"]
        total = usage.input_tokens + usage.cache_read_input_tokens + usage.output_tokens
        assert total == tokens["total"]
        extra = {k: json.loads(bytes(v)) for k, v in (usage.extra or {}).items()}
        assert extra == {k: tokens[k] for k in ("thoughts", "tool", "total")}
        checked += 1
    assert checked


def test_stats_totals_present_where_recorded_and_omitted_where_not() -> None:
    for path in GENUINE:
        finals = [r["tokens"] for r in final_versions(path).values() if r.get("tokens")]
        totals = stats_json(path)["totals"]
        assert totals["total_prompt_tokens"] == sum(t["input"] + t["tool"] for t in finals)
        assert totals["output_tokens"] == sum(t["output"] + t["thoughts"] for t in finals)
    for path in (LOGS, CHAT_CHECKPOINT, TOOL_CHECKPOINT):
        assert "totals" not in stats_json(path)


def test_thoughts_become_thinking_events() -> None:
    path = GENUINE[0]
    thoughts = [t for r in final_versions(path).values() for t in r.get("thoughts") or []]
    got = of(events(path), EventKind.THINKING)
    assert [e.timestamp for e in got] == [valid_timestamp(t["timestamp"]) for t in thoughts]
    for ev, t in zip(got, thoughts, strict=True):
        assert ev.thinking is not None
        assert ev.thinking.text == f"{t['subject']}\n\n{t['description']}"


# -- whole-file documents -----------------------------------------------------


@pytest.mark.parametrize("path", [LEGACY, SYNTHETIC_JSON], ids=fixture_id)
def test_legacy_document_events_point_at_their_message(path: Path) -> None:
    text = path.read_text().splitlines()
    evs = events(path)
    doc = json.loads(path.read_text())
    ids = [m["id"] for m in doc["messages"]]
    mapped = [e for e in evs if e.id in ids]
    assert {e.id for e in mapped} == set(ids)
    for ev in mapped:
        prov = ev.provenance
        assert prov is not None
        span = "\n".join(text[prov.line - 1 : prov.end_line])
        assert f'"{ev.id}"' in span
        for other in ids:
            if other != ev.id:
                assert f'"{other}"' not in span


def test_legacy_document_maps_like_the_jsonl(tmp_path: Path) -> None:
    doc = json.loads(LEGACY.read_text())
    header = {k: v for k, v in doc.items() if k != "messages"}
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *doc["messages"]]))

    def strip(evs: list[Event]) -> list[Any]:
        out = []
        for e in evs:
            d = to_builtins(e)
            d.pop("provenance", None)
            if e.system is not None and e.system.subtype == "session":
                d["system"].pop("details")
            out.append(d)
        return out

    assert strip(events(LEGACY)) == strip(events(path))


def test_logs_json_is_a_prompt_log() -> None:
    entries = json.loads(LOGS.read_text())
    evs = events(LOGS)
    users = of(evs, EventKind.USER_MESSAGE)
    assert [u.user_message.content[0].text for u in users] == [e["message"] for e in entries]  # type: ignore[union-attr,index]
    assert all(u.user_message.origin == Origin.HUMAN for u in users)  # type: ignore[union-attr]
    marks = [e.system.text for e in evs if e.system is not None]
    assert marks == list(dict.fromkeys(e["sessionId"] for e in entries))
    assert evs[0].session_meta is not None
    assert evs[0].session_meta.session_id == entries[0]["sessionId"]


def test_saved_chat_checkpoint() -> None:
    evs = events(CHAT_CHECKPOINT)
    kinds = [e.kind for e in evs]
    assert kinds == [
        "session_meta",
        "user_message",
        "assistant_message",
        "user_message",
        "thinking",
        "tool_call",
        "assistant_message",
        "tool_result",
        "assistant_message",
    ]
    call, result = of(evs, EventKind.TOOL_CALL)[0], of(evs, EventKind.TOOL_RESULT)[0]
    assert call.tool_call is not None
    assert result.tool_result is not None
    assert call.tool_call.tool_call_id == result.tool_result.tool_call_id
    assert result.tool_result.tool_name == "read_file"


def test_tool_checkpoint_keeps_the_pending_call() -> None:
    evs = events(TOOL_CHECKPOINT)
    doc = json.loads(TOOL_CHECKPOINT.read_text())
    pending = evs[-1]
    assert pending.system is not None
    assert pending.system.subtype == "checkpoint/tool_call"
    assert json.loads(bytes(pending.system.details)) == doc["toolCall"]
    assert len(of(evs, EventKind.USER_MESSAGE)) == 1


def test_broken_document_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "session-broken.json"
    text = LEGACY.read_text().splitlines()
    text[20] = text[20] + " oops"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(ParseError, match="invalid JSON document") as info:
        events(path)
    assert info.value.line == 21


# -- incremental parsing -------------------------------------------------------


@pytest.mark.parametrize("path", JSONL, ids=[fixture_id(p) for p in JSONL])
def test_jsonl_is_not_buffered(path: Path) -> None:
    adapter = GeminiCliAdapter(ParseOptions())
    for lineno, line in enumerate(path.read_bytes().splitlines(), 1):
        adapter.feed(line, lineno)
    assert len(adapter.finish()) <= 1
    assert adapter.document == []


# -- errors --------------------------------------------------------------------


HEADER = {
    "sessionId": "s1",
    "projectHash": "p",
    "startTime": "2026-01-01T00:00:00Z",
    "kind": "main",
}
NEW = {"id": "m1", "timestamp": "2026-01-01T00:00:01Z", "type": "hologram", "content": "x"}


def _write(tmp_path: Path, recs: list[dict[str, Any]]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_unknown_message_type_fails_strictly(tmp_path: Path) -> None:
    path = _write(tmp_path, [HEADER, NEW])
    with pytest.raises(
        ParseError, match=r'unrecognized message type "hologram".* at line 2'
    ) as info:
        events(path)
    assert "likely format drift" not in str(info.value)
    (unknown,) = of(events(path, permissive=True), EventKind.UNKNOWN)
    assert unknown.unknown is not None
    assert unknown.unknown.record_type == "hologram"


def test_drift_named_for_a_newer_release(tmp_path: Path) -> None:
    path = _write(tmp_path, [HEADER, NEW])
    with pytest.raises(
        ParseError, match=r"harness version 1\.2\.0, newer than last checked"
    ) as info:
        events(path, harness_version="1.2.0")
    assert "likely format drift" in str(info.value)


def test_subagent_recording(tmp_path: Path) -> None:
    path = _write(tmp_path, [{**HEADER, "kind": "subagent"}])
    meta = events(path)[0].session_meta
    assert meta is not None
    assert meta.is_subagent
    assert meta.subagent_id == "s1"
