"""The normalized (OpenTelemetry GenAI) usage view and the per-request fold, per harness, on real fixtures.

Every expectation is computed from the transcript's own JSON lines, not from
our adapters: the test fails if a rule maps a field wrongly.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

import agentminutes
from agentminutes import timestamps
from agentminutes.schema import TokenUsage
from agentminutes.schema.stats import PROMPT_RULES
from agentminutes.schema.usage import (
    USAGE_RULES,
    RequestFolder,
    otel_usage,
    reported_cost,
    requests,
)

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _sum(usages: list[TokenUsage]) -> tuple[int, int, int, int]:
    total = TokenUsage(input_tokens=0, output_tokens=0)
    for u in usages:
        total.add(u)
    return (
        total.input_tokens,
        total.output_tokens,
        total.cache_read_input_tokens,
        total.cache_creation_input_tokens,
    )


def test_every_harness_with_a_prompt_rule_has_a_usage_rule() -> None:
    # A harness whose usage is summed (PROMPT_RULES) must say what its fields mean;
    # "input" (input_tokens already holds the cache) is the OpenAI shape.
    for harness, rule in PROMPT_RULES.items():
        assert harness in USAGE_RULES, f"{harness}: add a UsageRule to schema.usage.USAGE_RULES"
        assert USAGE_RULES[harness].input_includes_cache == (rule == "input"), harness


def test_a_harness_without_a_rule_has_no_normalized_view() -> None:
    usage = TokenUsage(input_tokens=10, output_tokens=5, cache_read_input_tokens=3)
    assert otel_usage(usage, "antigravity") is None
    assert otel_usage(usage, "no-such-harness") is None


def test_claude_code_input_excludes_the_cache_and_keeps_the_write_split() -> None:
    path = FIXTURES / "claude-code/ohcconfig/b21f5989-26ca-432d-9d08-9c11aebeb752.jsonl"
    finals: dict[str, dict[str, Any]] = {}
    for rec in _lines(path):
        msg = rec.get("message")
        if rec.get("type") == "assistant" and isinstance(msg, dict) and msg.get("usage"):
            finals[msg["id"]] = msg["usage"]  # the last snapshot of each API message
    reqs = requests(agentminutes.iter_events(path))
    assert len(reqs) == len(finals)
    by_id = {r.key.split(":", 1)[1]: r for r in reqs}
    one_hour_seen = False
    for mid, u in finals.items():
        o = by_id[mid].otel
        assert o is not None
        cache_write = u.get("cache_creation_input_tokens", 0)
        cache_read = u.get("cache_read_input_tokens", 0)
        assert o.input_tokens == u["input_tokens"] + cache_read + cache_write
        assert o.cache_read_input_tokens == cache_read
        assert o.cache_creation_input_tokens == cache_write
        assert o.output_tokens == u["output_tokens"]
        assert o.reasoning_output_tokens is None  # Anthropic does not report it apart
        split = u["cache_creation"]
        assert o.cache_creation_5m_input_tokens == split["ephemeral_5m_input_tokens"]
        assert o.cache_creation_1h_input_tokens == split["ephemeral_1h_input_tokens"]
        assert o.cache_creation_5m_input_tokens + o.cache_creation_1h_input_tokens == cache_write
        one_hour_seen |= bool(split["ephemeral_1h_input_tokens"])
    assert one_hour_seen


def _codex_rows(path: Path) -> list[dict[str, dict[str, int]]]:
    rows = []
    for rec in _lines(path):
        payload = rec.get("payload") or {}
        if rec.get("type") == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            if info and info.get("total_token_usage"):
                rows.append(info)
    return rows


CODEX_WITH_REPLAYS = [
    "codex/ogekuri-g/rollout-2025-12-15T15-11-17-019b2259-ee39-7c11-b613-5d32c161f9c9.jsonl",
    "codex/exact2026/rollout-2026-05-07T15-38-21-019e0317-0939-7262-9c00-59e4b98f1c8b-first329.jsonl",
]


@pytest.mark.parametrize("rel", CODEX_WITH_REPLAYS)
def test_codex_counts_each_request_once_from_the_cumulative_counters(rel: str) -> None:
    path = FIXTURES / rel
    rows = _codex_rows(path)
    replays = [
        r
        for prev, r in itertools.pairwise(rows)
        if r["total_token_usage"] == prev["total_token_usage"]
    ]
    assert replays, "the fixture re-emits token_count records"
    final = rows[-1]["total_token_usage"]
    first_last = rows[0]["last_token_usage"]
    first_total = rows[0]["total_token_usage"]
    reqs = requests(agentminutes.iter_events(path))
    # Each advancing record is one request; the sum is the final cumulative total.
    assert len(reqs) == len(rows) - len(replays)
    raw = _sum([r.usage for r in reqs])
    assert (
        raw[0] == final["input_tokens"] - first_total["input_tokens"] + first_last["input_tokens"]
    )
    assert (
        raw[1]
        == final["output_tokens"] - first_total["output_tokens"] + first_last["output_tokens"]
    )
    assert (
        raw[2]
        == final["cached_input_tokens"]
        - first_total["cached_input_tokens"]
        + first_last["cached_input_tokens"]
    )
    # convert (the reference's rule) adds every record's last_token_usage: the replays twice.
    session = agentminutes.load(path)
    assert session.totals is not None
    pooled_replays = sum(r["last_token_usage"]["output_tokens"] for r in replays)
    assert session.totals.output_tokens - raw[1] == pooled_replays
    # OpenAI shape: input already holds the cached tokens; reasoning is a part of output.
    reasoning = sum(r.otel.reasoning_output_tokens or 0 for r in reqs if r.otel)
    assert (
        reasoning
        == final["reasoning_output_tokens"]
        - first_total["reasoning_output_tokens"]
        + first_last["reasoning_output_tokens"]
    )
    for r in reqs:
        assert r.otel is not None
        assert r.otel.input_tokens == r.usage.input_tokens
        assert r.otel.cache_read_input_tokens <= r.otel.input_tokens
        assert (r.otel.reasoning_output_tokens or 0) <= r.otel.output_tokens
        assert r.model
        assert r.key.startswith("codex:")


def test_codex_without_replays_equals_convert() -> None:
    path = (
        FIXTURES
        / "codex/feipi/rollout-2026-06-19T10-14-27-019edda8-7eca-7710-b78b-6ce7607beaa1.jsonl"
    )
    session = agentminutes.load(path)
    assert session.totals is not None
    t = session.totals
    reqs = requests(session.events)
    assert _sum([r.usage for r in reqs]) == (
        t.input_tokens,
        t.output_tokens,
        t.cache_read_input_tokens,
        t.cache_creation_input_tokens,
    )


def test_codex_fork_keys_its_copied_records_by_the_parent() -> None:
    path = (
        FIXTURES
        / "codex/feipi/rollout-2026-06-19T10-14-27-019edda8-7eca-7710-b78b-6ce7607beaa1.jsonl"
    )
    events = list(agentminutes.iter_events(path))
    own = requests(events)
    from agentminutes.schema.usage import RequestFolder

    folder = RequestFolder("codex")
    forked: list[Any] = []
    for ev in events:
        if ev.system is not None and ev.system.subtype.startswith("session_meta"):
            folder.fork_of = "parent-session"
        forked.extend(folder.add(ev))
    assert [r.key.split(":")[2] for r in forked] == [r.key.split(":")[2] for r in own]
    assert all(r.key.startswith("codex:parent-session:") for r in forked)


def test_codex_exec_stream_counts_its_messages() -> None:
    path = FIXTURES / "codex/agentcmd/exec-json/stream-output-4.jsonl"
    usage = next(r for r in _lines(path) if r.get("type") == "turn.completed")["usage"]
    reqs = requests(agentminutes.iter_events(path))
    assert _sum([r.usage for r in reqs])[:3] == (
        usage["input_tokens"],
        usage["output_tokens"],
        usage["cached_input_tokens"],
    )


@pytest.mark.parametrize(
    ("rel", "harness"),
    [
        ("gemini-cli/vibe-comparison/session-2026-04-25T08-41-3494a697.jsonl", "gemini-cli"),
        ("gemini-cli/constructed/session-2026-08-01T09-00-c0ffee01.jsonl", "gemini-cli"),
    ],
)
def test_gemini_input_includes_the_cache_natively_and_thoughts_are_reasoning(
    rel: str, harness: str
) -> None:
    path = FIXTURES / rel
    by_id = {
        msg["id"]: msg["tokens"]
        for rec in _lines(path)
        for msg in [rec, *((rec.get("$set") or {}).get("messages") or [])]
        if isinstance(msg, dict) and msg.get("type") == "gemini" and msg.get("tokens")
    }
    reqs = requests(agentminutes.iter_events(path))
    assert reqs
    assert sum(r.otel.input_tokens for r in reqs if r.otel) == sum(
        t["input"] + t.get("tool", 0) for t in by_id.values()
    )
    assert sum(r.otel.cache_read_input_tokens for r in reqs if r.otel) == sum(
        t.get("cached", 0) for t in by_id.values()
    )
    assert sum(r.otel.output_tokens for r in reqs if r.otel) == sum(
        t["output"] + t.get("thoughts", 0) for t in by_id.values()
    )
    assert sum(r.otel.reasoning_output_tokens or 0 for r in reqs if r.otel) == sum(
        t.get("thoughts", 0) for t in by_id.values()
    )


def test_qwen_code_thoughts_are_reasoning_inside_output() -> None:
    path = FIXTURES / "qwen-code/constructed/0a11ce00-0000-4000-8000-000000000001.jsonl"
    native = [r["usageMetadata"] for r in _lines(path) if r.get("usageMetadata")]
    reqs = requests(agentminutes.iter_events(path))
    assert len(reqs) == len(native)
    for r, u in zip(reqs, native, strict=True):
        assert r.otel is not None
        assert r.otel.input_tokens == u["promptTokenCount"] + u.get("toolUsePromptTokenCount", 0)
        assert r.otel.cache_read_input_tokens == u.get("cachedContentTokenCount", 0)
        assert r.otel.reasoning_output_tokens == u.get("thoughtsTokenCount")  # None: not recorded
        assert r.otel.output_tokens >= (r.otel.reasoning_output_tokens or 0)


@pytest.mark.parametrize(
    "rel", ["pi/pi-mono/before-compaction.jsonl", "pi/constructed/v3-fork-tools.jsonl"]
)
def test_pi_input_excludes_the_cache_and_its_own_cost_is_reported(rel: str) -> None:
    path = FIXTURES / rel
    native = [
        r["message"]["usage"]
        for r in _lines(path)
        if r.get("type") == "message"
        and r.get("message", {}).get("role") == "assistant"
        and r["message"].get("usage")
    ]
    reqs = requests(agentminutes.iter_events(path))
    assert len(reqs) == len(native)
    for r, u in zip(reqs, native, strict=True):
        assert r.otel is not None
        assert r.otel.input_tokens == u["input"] + u.get("cacheRead", 0) + u.get("cacheWrite", 0)
        assert r.reported_cost == pytest.approx(u["cost"]["total"])


def test_reported_cost_is_none_where_nothing_recorded_one() -> None:
    assert reported_cost(TokenUsage(input_tokens=1, output_tokens=1), "claude-code") is None
    assert reported_cost(TokenUsage(input_tokens=1, output_tokens=1), "pi") is None


# -- Copilot CLI: usage beside the messages (assistant.usage, session.shutdown) ----------------

_COPILOT = FIXTURES / "copilot/agent-sessions"


def _copilot_metrics(rec: dict[str, Any]) -> dict[str, tuple[int, int, int, int]]:
    out = {}
    for model, m in rec["data"]["modelMetrics"].items():
        u = m["usage"]
        counts = (u["inputTokens"], u["outputTokens"], u["cacheReadTokens"], u["cacheWriteTokens"])
        out[model] = counts
    return out


def _counts(r: Any) -> tuple[int, int, int, int]:
    u = r.usage
    return (
        u.input_tokens,
        u.output_tokens,
        u.cache_read_input_tokens,
        u.cache_creation_input_tokens,
    )


@pytest.mark.parametrize("name", ["copilot_small_0.0.420.jsonl", "copilot_schema_drift.jsonl"])
def test_copilot_counts_each_model_of_the_shutdown_metrics(name: str) -> None:
    path = _COPILOT / name
    shutdowns = [r for r in _lines(path) if r["type"] == "session.shutdown"]
    assert len(shutdowns) == 1
    want = _copilot_metrics(shutdowns[0])
    # convert keeps the reference's output: no usage on Copilot events, no totals.
    assert agentminutes.load(path).totals is None
    reqs = requests(agentminutes.iter_events(path))
    assert {r.model: _counts(r) for r in reqs} == want
    for r in reqs:
        assert r.timestamp == timestamps.normalize(shutdowns[0]["timestamp"])
        o = r.otel
        assert o is not None
        # inputTokens already counts the cache: the normalized input is it, unchanged.
        assert (o.input_tokens, o.cache_read_input_tokens) == (
            r.usage.input_tokens,
            want[r.model][2],
        )
        assert o.cache_read_input_tokens <= o.input_tokens
        usage = shutdowns[0]["data"]["modelMetrics"][r.model]["usage"]
        assert o.reasoning_output_tokens == usage.get("reasoningTokens")


def test_copilot_session_wide_token_details_count_fresh_input_apart_from_the_cache() -> None:
    path = _COPILOT / "copilot_small_1.0.77.jsonl"
    (shutdown,) = [r for r in _lines(path) if r["type"] == "session.shutdown"]
    data = shutdown["data"]
    assert all("usage" not in m for m in data["modelMetrics"].values())
    d = {k: v["tokenCount"] for k, v in data["tokenDetails"].items()}
    (req,) = requests(agentminutes.iter_events(path, permissive=True))
    (model,) = data["modelMetrics"]
    assert req.model == model
    gross = d["input"] + d["cache_read"] + d["cache_write"]
    assert _counts(req) == (gross, d["output"], d["cache_read"], d["cache_write"])


def _copilot_segments(tmp_path: Path, later: list[dict[str, int]]) -> Path:
    """The real 0.0.420 session, then one resumed process per entry of *later*, each
    closed by a shutdown whose gpt-4.1 counters are the entry's."""
    lines = (_COPILOT / "copilot_small_0.0.420.jsonl").read_text(encoding="utf-8").splitlines()
    recs = [json.loads(x) for x in lines]
    shutdown = recs[-1]
    out = list(recs)
    for i, counters in enumerate(later):
        ts = f"2025-12-19T0{i}:00:00.000Z"
        out.append(
            {
                "type": "session.resume",
                "data": {"resumeTime": ts, "eventCount": len(out)},
                "id": f"r{i}",
                "timestamp": ts,
                "parentId": out[-1]["id"],
            }
        )
        nxt = json.loads(json.dumps(shutdown))
        nxt["id"], nxt["timestamp"], nxt["parentId"] = f"s{i}", ts, f"r{i}"
        nxt["data"]["modelMetrics"]["gpt-4.1"]["usage"].update(counters)
        out.append(nxt)
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in out), encoding="utf-8")
    return path


def test_copilot_resumed_sessions_count_cumulative_shutdowns_once_and_reset_ones_whole(
    tmp_path: Path,
) -> None:
    first = _copilot_metrics(_lines(_COPILOT / "copilot_small_0.0.420.jsonl")[-1])["gpt-4.1"]
    grown = {
        "inputTokens": 1500,
        "outputTokens": 80,
        "cacheReadTokens": 1200,
        "cacheWriteTokens": 0,
    }
    reset = {"inputTokens": 300, "outputTokens": 20, "cacheReadTokens": 100, "cacheWriteTokens": 0}
    path = _copilot_segments(tmp_path, [grown, reset])
    reqs = requests(agentminutes.iter_events(path))
    assert [_counts(r) for r in reqs] == [
        first,  # the first process, whole
        (1500 - first[0], 80 - first[1], 1200 - first[2], 0),  # carried on: the increase
        (300, 20, 100, 0),  # started from zero: whole
    ]
    assert len({r.key for r in reqs}) == 3
    # usage --follow resumes from the last counted request: the next shutdown is compared
    # with the one that request came from.
    events = list(agentminutes.iter_events(path))
    cut = next(i for i, e in enumerate(events) if e.id == "r0")
    resumed = RequestFolder("copilot", "copilot_stage0_small")
    resumed.resume(reqs[0].model, reqs[0].key)
    later = [r for e in events[cut:] for r in resumed.add(e)]
    assert [_counts(r) for r in later] == [_counts(r) for r in reqs[1:]]


def test_copilot_assistant_usage_records_are_the_requests_and_the_shutdown_is_not_added(
    tmp_path: Path,
) -> None:
    recs = _lines(_COPILOT / "copilot_small_0.0.420.jsonl")
    shutdown = recs[-1]
    u = shutdown["data"]["modelMetrics"]["gpt-4.1"]["usage"]
    # The shutdown's sum split into the two requests that made it (the shape later
    # releases write per request: inputTokens counting the cache reads).
    parts = [
        {
            "model": "gpt-4.1",
            "inputTokens": 400,
            "outputTokens": 20,
            "cacheReadTokens": 300,
            "cacheWriteTokens": 0,
            "reasoningTokens": 0,
            "cost": 1,
            "duration": 900,
        },
        {
            "model": "gpt-4.1",
            "inputTokens": u["inputTokens"] - 400,
            "outputTokens": u["outputTokens"] - 20,
            "cacheReadTokens": u["cacheReadTokens"] - 300,
            "cacheWriteTokens": 0,
            "reasoningTokens": 0,
            "cost": 1,
            "duration": 700,
        },
    ]
    usage_recs = [
        {
            "type": "assistant.usage",
            "data": p,
            "id": f"u{i}",
            "timestamp": recs[4 + 2 * i]["timestamp"],
            "parentId": recs[4 + 2 * i]["id"],
        }
        for i, p in enumerate(parts)
    ]
    out = [*recs[:5], usage_recs[0], *recs[5:7], usage_recs[1], recs[7]]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in out), encoding="utf-8")
    reqs = requests(agentminutes.iter_events(path))
    assert [_counts(r) for r in reqs] == [
        (p["inputTokens"], p["outputTokens"], p["cacheReadTokens"], 0) for p in parts
    ]
    assert [r.key for r in reqs] == [
        "copilot:copilot_stage0_small:u0",
        "copilot:copilot_stage0_small:u1",
    ]
    assert all(r.reported_cost is None for r in reqs)  # "cost" is premium requests, not USD
    # usage --follow resumes a transcript from its last counted request: the shutdown that
    # arrives later is still not added.
    events = list(agentminutes.iter_events(path))
    cut = next(i for i, e in enumerate(events) if e.id == "u1") + 1
    resumed = RequestFolder("copilot", "copilot_stage0_small")
    resumed.resume(reqs[-1].model, reqs[-1].key)
    assert [r for e in events[cut:] for r in resumed.add(e)] == []


@pytest.mark.parametrize(
    "path",
    [
        FIXTURES
        / "codex/exact2026/rollout-2026-05-07T15-38-21-019e0317-0939-7262-9c00-59e4b98f1c8b-first329.jsonl",
        _COPILOT / "copilot_small_0.0.420.jsonl",
    ],
    ids=["codex", "copilot"],
)
def test_a_folder_carries_on_from_its_snapshot(path: Path) -> None:
    """What the live OTel projection saves with --state: through JSON and back, the folder
    counts the rest of the transcript as if it had never stopped, at every cut."""
    events = list(agentminutes.iter_events(path))
    harness = events[0].session_meta.harness if events[0].session_meta else ""
    whole = requests(events, harness)
    assert whole
    for cut in range(1, len(events)):
        first = RequestFolder(harness)
        got = [r for ev in events[:cut] for r in first.add(ev)]
        if first._waiting:  # Codex rows still waiting for a model are not kept: not a cut
            continue
        carried = RequestFolder(harness)
        carried.restore(json.loads(json.dumps(first.snapshot())))
        got += [r for ev in events[cut:] for r in carried.add(ev)]
        got += carried.finish()
        assert got == whole, cut
