"""The Codex adapter on real transcripts: accounting, origins, tools, promotions, other formats.

Expectations are derived from the fixture lines themselves (re-reading them
with the json module), never copied from our own output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentminutes.errors import ParseError
from agentminutes.harness import ADAPTERS, Confidence, ParseOptions, detect
from agentminutes.harness.codex import CodexAdapter
from agentminutes.pipeline.conversion import Conversion, feed_lines
from agentminutes.schema import Event
from conftest import FIXTURES, convert_json, fixture_id, stats_json, transcripts

CODEX = FIXTURES / "codex"
CABINET = (
    CODEX / "cabinet-gov/rollout-2026-04-30T11-12-25-019ddc5f-977f-7fd3-a392-a6477e6b25b2.jsonl"
)
EXACT = (
    CODEX
    / "exact2026/rollout-2026-05-07T15-38-21-019e0317-0939-7262-9c00-59e4b98f1c8b-first329.jsonl"
)
TOOL_SEARCH = CODEX / "feipi/rollout-2026-06-19T10-14-27-019edda8-7eca-7710-b78b-6ce7607beaa1.jsonl"
SUBAGENT = CODEX / "feipi/rollout-2026-06-19T12-32-38-019ede26-ff03-7a82-bb34-cfab716a498a.jsonl"
SMALL = CODEX / "agent-sessions/codex_small_0.146.0.jsonl"
GHOST = CODEX / "ogekuri-g/rollout-2025-12-15T15-11-17-019b2259-ee39-7c11-b613-5d32c161f9c9.jsonl"
OLDEST = (
    CODEX / "nitta-dotfiles/rollout-2025-09-19T01-23-04-4accfe1e-cc02-49e1-a13c-2318fb86a0b1.jsonl"
)
LEGACY = (
    CODEX / "nitta-dotfiles/rollout-2025-09-19T01-53-52-1d480e7c-6376-47af-8312-9a0cf1eef4a6.jsonl"
)
EXEC = CODEX / "agentcmd/exec-json/stream-output-4.jsonl"
WRAPPED = CODEX / "arvo-logger/arvo_42530547-vul-1766981267.exec-json-wrapped.log"

ALL = transcripts("codex")
MODERN = [p for p in ALL if p.suffix == ".jsonl" and b'"payload"' in p.read_bytes()[:4096]]

HARNESS_TAGS = (
    "<environment_context>",
    "<ENVIRONMENT_CONTEXT>",
    "<user_instructions>",
    "<turn_aborted>",
)


def records(path: Path) -> list[tuple[int, Any]]:
    """The fixture's non-blank lines, parsed, with their 1-based numbers."""
    out = []
    for i, line in enumerate(path.read_bytes().split(b"\n"), 1):
        if line.strip():
            out.append((i, json.loads(line)))
    return out


def payload_type(rec: Any) -> str:
    p = rec.get("payload")
    return p.get("type", "") if isinstance(p, dict) else ""


def events(path: Path, **kw: Any) -> list[dict[str, Any]]:
    return convert_json(path, **kw)["events"] or []


def of_kind(evs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in evs if e["kind"] == kind]


# -- detection -----------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_every_fixture_is_detected_as_codex_with_certainty(path: Path) -> None:
    cls, confidence = detect(path.read_bytes()[:65536])
    assert cls is CodexAdapter
    assert confidence == Confidence.CERTAIN


@pytest.mark.parametrize(
    "head",
    [
        # First lines shaped like the other harnesses' transcripts.
        b'{"type":"session","version":3,"id":"x","timestamp":"2026-05-12T01:02:27.657Z","cwd":"/p"}\n',
        b'{"step_index":0,"source":"USER_EXPLICIT","type":"USER_INPUT","status":"DONE","created_at":"2026-06-29T11:00:28Z","content":"hi"}\n',
        b'{"type":"session.start","data":{"sessionId":"s","version":1,"producer":"copilot-agent"}}\n',
        b'{"sessionId":"s","projectHash":"h","startTime":"2026-04-29T21:39:22.319Z","messages":[]}\n',
        b'{"type":"user","uuid":"u","parentUuid":null,"timestamp":"2026-05-10T10:00:00.000Z","sessionId":"s"}\n',
        b"{\n",
        b'{"id":"x","timestamp":"2025-08-26T03:00:07.759Z"}\n',
        b'{"type":"error","message":"boom"}\n',
    ],
)
def test_other_shapes_are_not_claimed(head: bytes) -> None:
    assert CodexAdapter.sniff(head) == Confidence.NO_MATCH


def test_registry_order_is_alphabetical() -> None:
    names = [a.name for a in ADAPTERS]
    assert names == sorted(names)
    assert "codex" in names


# -- accounting ----------------------------------------------------------


def expected_usage(path: Path) -> list[dict[str, int] | None]:
    """Per assistant message, in emission order: the token counts pooled since the last close."""
    pool: list[int] | None = None
    anchor = False
    out: list[dict[str, int] | None] = []

    def close() -> None:
        nonlocal pool, anchor
        if anchor:
            out.append(
                None
                if pool is None
                else {"in": pool[0], "cached": pool[1], "write": pool[2], "out": pool[3]}
            )
            pool, anchor = None, False

    for _, rec in records(path):
        kind, sub = rec.get("type"), payload_type(rec)
        if kind == "event_msg" and sub == "token_count":
            last = ((rec["payload"].get("info") or {}).get("last_token_usage")) or None
            if last is not None:
                pool = pool or [0, 0, 0, 0]
                pool[0] += last.get("input_tokens") or 0
                pool[1] += last.get("cached_input_tokens") or 0
                pool[2] += last.get("cache_write_input_tokens") or 0
                pool[3] += last.get("output_tokens") or 0
        elif kind == "event_msg" and sub in ("task_started", "task_complete"):
            close()
        elif kind == "response_item":
            close()
            p = rec["payload"]
            if sub == "message" and p.get("role") == "assistant":
                anchor = True
    close()
    return out


@pytest.mark.parametrize("path", [CABINET, EXACT, OLDEST, GHOST], ids=fixture_id)
def test_assistant_usage_is_the_token_counts_pooled_since_the_last_message(path: Path) -> None:
    doc = convert_json(path)
    got = [e["assistant_message"].get("usage") for e in of_kind(doc["events"], "assistant_message")]
    want = expected_usage(path)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if w is None:
            assert g is None
            continue
        assert g["input_tokens"] == w["in"]
        assert g["output_tokens"] == w["out"]
        assert g.get("cache_read_input_tokens", 0) == w["cached"]
        assert g.get("cache_creation_input_tokens", 0) == w["write"]
    totals = doc.get("totals")
    if any(w is not None for w in want):
        assert totals["input_tokens"] == sum(w["in"] for w in want if w)
        # Codex input already includes the cached tokens: no double count.
        assert totals["total_prompt_tokens"] == totals["input_tokens"]


def test_usage_after_the_last_assistant_message_is_not_counted() -> None:
    # The fixture ends with token counts after its last assistant message closed.
    all_input = sum(
        ((r["payload"].get("info") or {}).get("last_token_usage") or {}).get("input_tokens", 0)
        for _, r in records(EXACT)
        if payload_type(r) == "token_count"
    )
    totals = convert_json(EXACT)["totals"]
    assert 0 < totals["input_tokens"] <= all_input


def test_model_comes_from_the_turn_context_before_each_message() -> None:
    evs = events(EXACT)
    models = {r["payload"]["model"] for _, r in records(EXACT) if r["type"] == "turn_context"}
    got = {e["assistant_message"].get("model") for e in of_kind(evs, "assistant_message")}
    assert got
    assert got <= models


def test_duplicated_event_messages_are_counted_skips() -> None:
    doc = convert_json(CABINET)
    dup = {}
    for _, r in records(CABINET):
        sub = payload_type(r)
        if r["type"] == "event_msg" and (
            sub in ("user_message", "agent_message", "agent_reasoning") or sub.endswith("_delta")
        ):
            dup[f"event_msg/{sub}"] = dup.get(f"event_msg/{sub}", 0) + 1
    assert dup
    assert doc["report"]["skipped_records"] == dup


# -- origins, meta, content --------------------------------------------------


@pytest.mark.parametrize("path", MODERN, ids=[fixture_id(p) for p in MODERN])
def test_user_origin_follows_the_injected_context_tags(path: Path) -> None:
    want = []
    for _, r in records(path):
        p = r.get("payload")
        if (
            r.get("type") == "response_item"
            and payload_type(r) == "message"
            and p["role"] == "user"
        ):
            content = p.get("content") or []
            first = (
                content
                if isinstance(content, str)
                else (content[0] or {}).get("text", "")
                if content
                else ""
            )
            want.append("harness" if first.strip().startswith(HARNESS_TAGS) else "human")
    got = [e["user_message"]["origin"] for e in of_kind(events(path), "user_message")]
    assert got == want


def test_subagent_meta() -> None:
    meta = convert_json(SUBAGENT)["meta"]
    first = records(SUBAGENT)[0][1]["payload"]
    assert meta["is_subagent"] is True
    assert meta["subagent_id"] == first["id"]
    assert meta["harness_version"] == first["cli_version"]
    assert meta["git_branch"] == first["git"]["branch"]


def test_base_instructions_become_a_system_event_on_the_meta_line() -> None:
    evs = events(CABINET)
    assert evs[0]["kind"] == "session_meta"
    base = evs[1]
    assert base["system"]["subtype"] == "session_meta/base_instructions"
    assert base["provenance"]["line"] == 1
    assert base["system"]["text"] == records(CABINET)[0][1]["payload"]["base_instructions"]["text"]


# -- tools ---------------------------------------------------------------


@pytest.mark.parametrize("path", MODERN, ids=[fixture_id(p) for p in MODERN])
def test_results_pair_with_earlier_calls_by_id(path: Path) -> None:
    doc = convert_json(path)
    names: dict[str, str] = {}
    for ev in doc["events"]:
        if ev["kind"] == "tool_call":
            names[ev["tool_call"]["tool_call_id"]] = ev["tool_call"]["name"]
        elif ev["kind"] == "tool_result":
            res = ev["tool_result"]
            if res["tool_call_id"] in names:
                assert res.get("tool_name") == names[res["tool_call_id"]]
    seen: set[str] = set()
    orphans = 0
    for _, r in records(path):
        kind = payload_type(r)
        if kind in ("function_call", "custom_tool_call", "tool_search_call"):
            seen.add(r["payload"]["call_id"])
        elif kind in ("function_call_output", "custom_tool_call_output", "tool_search_output"):
            orphans += r["payload"]["call_id"] not in seen
    assert doc["report"].get("orphan_tool_results", 0) == orphans


def test_web_search_call_is_a_pair_on_its_own_line() -> None:
    lines = [n for n, r in records(EXACT) if payload_type(r) == "web_search_call"]
    evs = events(EXACT)
    for n in lines:
        here = [e for e in evs if e["provenance"]["line"] == n]
        assert [e["kind"] for e in here] == ["tool_call", "tool_result"]
        assert here[0]["tool_call"]["kind"] == "fetch"
        assert here[0]["tool_call"]["tool_call_id"] == here[1]["tool_result"]["tool_call_id"]
    assert lines


def test_exit_codes_in_string_outputs_mark_errors() -> None:
    # Legacy and 0.3x outputs are JSON documents with metadata.exit_code.
    for path in (LEGACY, OLDEST):
        failed = set()
        for _, r in records(path):
            if payload_type(r) == "function_call_output" or r.get("type") == "function_call_output":
                p = r.get("payload", r)
                try:
                    doc = json.loads(p["output"])
                except (ValueError, TypeError):
                    continue
                if isinstance(doc, dict) and (doc.get("metadata") or {}).get("exit_code", 0) != 0:
                    failed.add(p["call_id"])
        got = {
            e["tool_result"]["tool_call_id"]
            for e in of_kind(events(path), "tool_result")
            if e["tool_result"].get("is_error")
        }
        assert got == failed


# -- records the reference rejects -------------------------------------------


@pytest.mark.parametrize("path", [SMALL, TOOL_SEARCH, GHOST], ids=fixture_id)
def test_reference_rejected_records_parse_strictly(path: Path) -> None:
    doc = convert_json(path)
    assert not of_kind(doc["events"], "unknown")
    assert "unknown_events" not in doc["report"]


def test_tool_search_is_a_search_call_with_its_result() -> None:
    evs = events(TOOL_SEARCH)
    (line, rec) = next(
        (n, r) for n, r in records(TOOL_SEARCH) if payload_type(r) == "tool_search_call"
    )
    call = next(e for e in evs if e["provenance"]["line"] == line)
    assert call["kind"] == "tool_call"
    assert call["tool_call"]["kind"] == "search"
    assert call["tool_call"]["input"] == rec["payload"]["arguments"]
    result = next(
        e
        for e in of_kind(evs, "tool_result")
        if e["tool_result"]["tool_call_id"] == rec["payload"]["call_id"]
    )
    assert result["tool_result"]["tool_name"] == call["tool_call"]["name"]
    assert result["provenance"]["line"] > line


def test_ghost_snapshot_and_image_generation() -> None:
    evs = events(SMALL)
    by_line = {n: payload_type(r) for n, r in records(SMALL)}
    ghosts = [e for e in evs if by_line[e["provenance"]["line"]] == "ghost_snapshot"]
    assert [e["system"]["subtype"] for e in ghosts] == ["ghost_snapshot"]
    images = [e for e in evs if by_line[e["provenance"]["line"]] == "image_generation_call"]
    assert [e["kind"] for e in images] == ["tool_call", "tool_result"]


def test_tool_search_leaves_the_assistant_message_open_as_the_reference_does() -> None:
    # An assistant message followed by a tool_search_call closes only at the
    # next ordinary item, so both see the same usage for it.
    meta = records(CABINET)[0][1]
    lines = [
        meta,
        {
            "timestamp": "2026-01-01T00:00:01Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "a"}],
            },
        },
        {
            "timestamp": "2026-01-01T00:00:02Z",
            "type": "response_item",
            "payload": {"type": "tool_search_call", "call_id": "t1", "arguments": {"query": "q"}},
        },
        {
            "timestamp": "2026-01-01T00:00:03Z",
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {"last_token_usage": {"input_tokens": 7, "output_tokens": 1}},
            },
        },
        {
            "timestamp": "2026-01-01T00:00:04Z",
            "type": "response_item",
            "payload": {"type": "tool_search_output", "call_id": "t1", "tools": [{"name": "x"}]},
        },
    ]
    evs = run_lines([json.dumps(r).encode() for r in lines])
    kinds = [e.kind for e in evs]
    assert kinds.index("assistant_message") > kinds.index("tool_call")
    msg = next(e for e in evs if e.assistant_message is not None)
    assert msg.assistant_message is not None
    assert msg.assistant_message.usage is not None
    assert msg.assistant_message.usage.input_tokens == 7


# -- promotions --------------------------------------------------------------


def test_patch_apply_promotion() -> None:
    ends = {n: r["payload"] for n, r in records(EXACT) if payload_type(r) == "patch_apply_end"}
    plain = events(EXACT)
    promoted = events(EXACT, promote=["codex:patch-apply"])
    assert len(promoted) == len(plain) + len(ends)
    assert not [
        e for e in promoted if e["kind"] == "system" and e["system"]["subtype"] == "patch_apply_end"
    ]
    for n, payload in ends.items():
        pair = [e for e in promoted if e["provenance"]["line"] == n]
        assert [e["kind"] for e in pair] == ["tool_call", "tool_result"]
        call, result = pair[0]["tool_call"], pair[1]["tool_result"]
        assert call["tool_call_id"] == result["tool_call_id"] == payload["call_id"]
        assert call["name"] == "apply_patch"
        assert call["kind"] == "edit"
        assert call["promoted_from"] == result["promoted_from"] == "event_msg/patch_apply_end"
        assert call["input"] == payload["changes"]
        assert result["enrichment"] == payload
        assert result.get("is_error", False) == (payload.get("success") is False)
        system = next(e for e in plain if e["provenance"]["line"] == n)
        assert pair[0]["timestamp"] == pair[1]["timestamp"] == system["timestamp"]


def test_web_search_promotion() -> None:
    ends = {n: r["payload"] for n, r in records(EXACT) if payload_type(r) == "web_search_end"}
    assert ends
    promoted = events(EXACT, promote=["codex:web-search"])
    for n, payload in ends.items():
        pair = [e for e in promoted if e["provenance"]["line"] == n]
        assert [e["kind"] for e in pair] == ["tool_call", "tool_result"]
        assert pair[0]["tool_call"]["tool_call_id"] == payload["call_id"]
        assert pair[0]["tool_call"]["kind"] == "fetch"
        assert pair[0]["tool_call"]["promoted_from"] == "event_msg/web_search_end"
        assert pair[0]["tool_call"]["input"] == payload["action"]
        assert not pair[1]["tool_result"].get("is_error")
    plain = stats_json(EXACT)
    both = stats_json(EXACT, promote=["codex:web-search", "codex:patch-apply"])
    n_patch = sum(1 for _, r in records(EXACT) if payload_type(r) == "patch_apply_end")
    assert both["tool_calls"] == plain["tool_calls"] + len(ends) + n_patch


def test_file_change_items_promote_with_line_ids() -> None:
    items = [
        (n, r["payload"]["item"])
        for n, r in records(SMALL)
        if payload_type(r) == "item_completed"
        and (r["payload"].get("item") or {}).get("type") == "FileChange"
    ]
    assert items
    promoted = events(SMALL, promote=["codex:patch-apply"])
    for n, item in items:
        call = next(e for e in promoted if e["provenance"]["line"] == n)["tool_call"]
        assert call["tool_call_id"] == (item.get("id") or f"item_completed:L{n}")
        assert call["promoted_from"] == "event_msg/item_completed/FileChange"


def test_promotion_refuses_another_harness(tmp_path: Path) -> None:
    path = tmp_path / "claude.jsonl"
    path.write_text(
        json.dumps(
            {
                "type": "user",
                "uuid": "u",
                "sessionId": "s",
                "timestamp": "2026-01-01T00:00:00Z",
                "message": {"role": "user", "content": "hi"},
            }
        )
        + "\n"
    )
    from agentminutes.errors import UsageError

    with pytest.raises(UsageError, match="applies to codex"):
        convert_json(path, promote=["codex:web-search"])


# -- legacy and exec --json ------------------------------------------------


def test_legacy_rollout() -> None:
    doc = convert_json(LEGACY)
    recs = records(LEGACY)
    assert doc["meta"]["session_id"] == recs[0][1]["id"]
    evs = doc["events"]
    assert of_kind(evs, "user_message")
    assert of_kind(evs, "assistant_message")
    calls = {e["tool_call"]["tool_call_id"] for e in of_kind(evs, "tool_call")}
    results = {e["tool_result"]["tool_call_id"] for e in of_kind(evs, "tool_result")}
    assert calls
    assert calls == results
    states = sum(1 for _, r in recs if r.get("record_type") == "state")
    assert doc["report"]["skipped_records"] == {"record_type/state": states}
    # Bare items carry no time; only the metadata line does.
    assert [e["provenance"]["line"] for e in evs if "timestamp" in e] == [1, 1]
    assert "totals" not in doc


def test_exec_json_stream() -> None:
    doc = convert_json(EXEC)
    recs = records(EXEC)
    evs = doc["events"]
    assert doc["meta"]["session_id"] == recs[0][1]["thread_id"]
    usage = next(r["usage"] for _, r in recs if r["type"] == "turn.completed")
    (msg,) = of_kind(evs, "assistant_message")
    assert msg["assistant_message"]["usage"]["input_tokens"] == usage["input_tokens"]
    assert (
        msg["assistant_message"]["usage"]["cache_read_input_tokens"] == usage["cached_input_tokens"]
    )
    assert msg["assistant_message"]["usage"]["output_tokens"] == usage["output_tokens"]
    started = {r["item"]["id"]: n for n, r in recs if r["type"] == "item.started"}
    for call in of_kind(evs, "tool_call"):
        cid = call["tool_call"]["tool_call_id"]
        result = next(
            e for e in of_kind(evs, "tool_result") if e["tool_result"]["tool_call_id"] == cid
        )
        assert call["provenance"]["line"] == started[cid]
        assert result["provenance"]["line"] > started[cid]
    assert of_kind(evs, "thinking")


def test_wrapped_exec_log() -> None:
    doc = convert_json(WRAPPED)
    recs = records(WRAPPED)
    header = recs[0][1]
    evs = doc["events"]
    assert evs[0]["kind"] == "session_meta"
    assert evs[0]["provenance"] == {"line": 1, "end_line": 2}
    assert doc["meta"]["session_id"] == recs[1][1]["data"]["thread_id"]
    assert doc["meta"]["cwd"] == header["workspace"]
    (user,) = of_kind(evs, "user_message")
    assert user["user_message"]["origin"] == "human"
    assert user["user_message"]["content"][0]["text"] == header["prompt"]
    assert of_kind(evs, "assistant_message")
    assert doc["totals"]["output_tokens"] > 0
    stats = stats_json(WRAPPED)
    span_ms = (recs[-1][1]["timestamp_unix"] - header["timestamp_unix"]) * 1000
    assert abs(stats["wall_time_ms"] - span_ms) < 2


# -- errors, permissive mode, follow-readiness --------------------------------


def run_lines(lines: list[bytes], **options: Any) -> list[Event]:
    adapter = CodexAdapter(ParseOptions(**options))
    out = feed_lines(adapter, list(enumerate(lines, 1)))
    return out + adapter.finish()


def meta_line(version: str) -> bytes:
    rec = records(CABINET)[0][1]
    rec["payload"]["cli_version"] = version
    return json.dumps(rec).encode()


BAD = b'{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"brand_new_item"}}'


def test_error_for_a_newer_version_says_drift() -> None:
    newer = f"0.{int(CodexAdapter.last_checked.split('.')[1]) + 1}.0"
    with pytest.raises(ParseError) as info:
        run_lines([meta_line(newer), BAD])
    message = str(info.value)
    assert "brand_new_item" in message
    assert "at line 2" in message
    assert f"harness version {newer}" in message
    assert "likely format drift" in message


def test_error_for_a_checked_version_does_not_say_drift() -> None:
    with pytest.raises(ParseError) as info:
        run_lines([meta_line(CodexAdapter.last_checked), BAD])
    assert "drift" not in str(info.value)


def test_permissive_mode_keeps_bad_lines_as_unknown() -> None:
    evs = run_lines([meta_line("0.1.0"), BAD, b"{not json", b'{"type":"nope"}'], permissive=True)
    unknown = [e for e in evs if e.unknown is not None]
    assert [e.provenance.line for e in unknown if e.provenance] == [2, 3, 4]


def test_pretty_printed_rollout_reads_like_the_compact_one(tmp_path: Path) -> None:
    pretty = tmp_path / "pretty.jsonl"
    pretty.write_text("".join(json.dumps(r, indent=4) + "\n" for _, r in records(CABINET)))
    assert CodexAdapter.sniff(pretty.read_bytes()[:65536]) == Confidence.POSSIBLE

    def strip(evs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in e.items() if k != "provenance"} for e in evs]

    got = convert_json(pretty, harness="codex")
    want = convert_json(CABINET)
    assert strip(got["events"]) == strip(want["events"])
    assert got["totals"] == want["totals"]
    last = got["events"][-1]["provenance"]
    assert last["end_line"] > last["line"]


def test_conversion_counts_skips_through_the_pipeline() -> None:
    conv = Conversion(name=str(CABINET), options=ParseOptions())
    from agentminutes.pipeline.conversion import open_sync_chunks

    n = sum(1 for _ in conv.iter_events(open_sync_chunks(CABINET)))
    assert n == len(events(CABINET))
    assert conv.skipped == convert_json(CABINET)["report"]["skipped_records"]


def test_payload_limit_spares_results_that_are_no_tool_output() -> None:
    web = {n for n, r in records(EXACT) if payload_type(r) == "web_search_call"}
    results = of_kind(
        events(EXACT, promote=["codex:patch-apply"], max_payload_bytes=100), "tool_result"
    )
    spared = [
        r
        for r in results
        if r["provenance"]["line"] in web or r["tool_result"].get("promoted_from")
    ]
    assert spared
    for r in spared:
        assert "truncated" not in r["tool_result"]["enrichment"]
    native = [r for r in results if r not in spared]
    assert all(r["tool_result"]["enrichment"].get("truncated") for r in native)


def test_drifted_head_with_rollout_records_is_claimed_and_fails_loudly() -> None:
    world = records(SMALL)[2][1]
    assert world["type"] == "world_state"
    lines = [
        b'{"created_at":"2025-09-10T12:00:00Z","role":"user","message":"x"}',
        json.dumps(world).encode(),
    ]
    assert CodexAdapter.sniff(b"\n".join(lines) + b"\n") == Confidence.POSSIBLE
    with pytest.raises(ParseError, match="at line 1"):
        run_lines(lines)
    evs = run_lines(lines, permissive=True)
    assert [e.kind for e in evs] == [
        "session_meta",
        "unknown",
        "system",
    ]  # the stream opens with its meta
