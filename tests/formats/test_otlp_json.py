"""The OTel GenAI projection: ``agentminutes.formats.otlp_json`` and ``convert --format otlp-json``.

Every fixture of every harness is projected and its OTLP/JSON decoded with
``opentelemetry-proto``'s own parser; the expectations (span counts, token
sums, links) are counted from the parsed events and the session's totals,
independently of the projector.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan

from agentminutes import iter_sessions, load
from agentminutes.formats.otlp_json import Span, SpanProjector, encode_otlp_json, project
from agentminutes.harness import ADAPTERS, DOCUMENT_ADAPTERS
from agentminutes.schema import Session
from agentminutes.schema.stats import PROMPT_RULES, with_prompt_total
from agentminutes.schema.usage import requests
from conftest import FIXTURES, fixture_id, transcripts
from copilot_requests import SOURCE as COPILOT_SOURCE
from copilot_requests import usage_parts, write_with_usage_records

ALL = [p for cls in (*ADAPTERS, *DOCUMENT_ADAPTERS) for p in transcripts(cls.name)]

_CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}


_HEX_IDS = {"traceId": 32, "spanId": 16, "parentSpanId": 16}


def _decode(line: bytes) -> list[PbSpan]:
    """One OTLP/JSON line, decoded by ``opentelemetry-proto``'s messages (strict: unknown
    fields rejected). OTLP/JSON writes span and trace ids as hex, where the generic
    protobuf JSON mapping wants base64 (the one documented deviation): the ids are
    checked as hex and handed over as base64, as OTLP's own JSON decoders do."""
    request = json.loads(line)
    for rs in request["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key, width in _HEX_IDS.items():
                    if key in span:
                        assert len(span[key]) == width, span[key]
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    decoded = Parse(json.dumps(request), ExportTraceServiceRequest())
    return [s for rs in decoded.resource_spans for ss in rs.scope_spans for s in ss.spans]


def _attrs(span: PbSpan) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in span.attributes:
        which = kv.value.WhichOneof("value")
        value = getattr(kv.value, which)
        if which == "array_value":
            value = [v.string_value for v in value.values]
        out[kv.key] = value
    return out


_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read.input_tokens",
    "cache_creation.input_tokens",
)


def _usage_sums(attrs: list[dict[str, Any]]) -> tuple[int, ...]:
    return tuple(sum(a.get(f"gen_ai.usage.{k}", 0) for a in attrs) for k in _USAGE_KEYS)


def _otel_sums(rows: list[Any]) -> tuple[int, ...]:
    return tuple(
        sum(getattr(o, k.replace(".", "_")) for o in rows)
        for k in (
            "input_tokens",
            "output_tokens",
            "cache_read.input_tokens",
            "cache_creation.input_tokens",
        )
    )


def _subagents(session: Session) -> set[str]:
    own = session.meta.subagent_id
    return {ev.agent_id for ev in session.events if ev.agent_id and ev.agent_id != own}


def _check(session: Session, content: bool) -> list[PbSpan]:
    spans, loss = project(session, content=content)
    decoded = _decode(encode_otlp_json(spans, harness=session.meta.harness))
    events = session.events
    messages = sum(1 for ev in events if ev.assistant_message is not None)
    calls = sum(1 for ev in events if ev.tool_call is not None)
    agents = _subagents(session)
    assert len(decoded) == messages + calls + 1 + len(agents)
    assert loss.spans == len(decoded)
    names = Counter(_attrs(s)["gen_ai.operation.name"] for s in decoded)
    assert names == Counter(
        {
            k: v
            for k, v in {
                "chat": messages,
                "execute_tool": calls,
                "invoke_agent": 1 + len(agents),
            }.items()
            if v
        }
    )

    # One trace; ids unique and valid; every parent inside the trace; one root.
    assert len({s.trace_id for s in decoded}) == 1
    ids = [s.span_id for s in decoded]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 8 and any(i) for i in ids)
    roots = [s for s in decoded if not s.parent_span_id]
    assert len(roots) == 1
    assert roots[0].name == f"invoke_agent {session.meta.harness}"
    root_attrs = _attrs(roots[0])
    assert root_attrs["gen_ai.conversation.id"] == session.meta.session_id
    assert root_attrs["gen_ai.agent.name"] == session.meta.harness
    assert {s.parent_span_id for s in decoded if s.parent_span_id} <= set(ids)
    for s in decoded:
        assert s.start_time_unix_nano <= s.end_time_unix_nano

    # Tokens: the chat spans add up to the session's totals, cache counted in the input.
    chats = [_attrs(s) for s in decoded if s.name.startswith("chat")]
    total = session.totals
    if total is not None and session.meta.harness in PROMPT_RULES:
        prompt = with_prompt_total(total, session.meta.harness).total_prompt_tokens
        assert sum(a.get("gen_ai.usage.input_tokens", 0) for a in chats) == prompt
        assert sum(a.get("gen_ai.usage.output_tokens", 0) for a in chats) == total.output_tokens
        assert (
            sum(a.get("gen_ai.usage.cache_read.input_tokens", 0) for a in chats)
            == total.cache_read_input_tokens
        )
        assert (
            sum(a.get("gen_ai.usage.cache_creation.input_tokens", 0) for a in chats)
            == total.cache_creation_input_tokens
        )
    elif session.meta.harness == "copilot":
        # Usage beside the messages: per-request records on the chat spans, shutdown sums
        # on the root span, every normalized request on exactly one span.
        reqs = requests(events, "copilot")
        per_request = [r.otel for r in reqs if r.origin == "assistant.usage" and r.otel]
        spans_attrs = [_attrs(s) for s in decoded]
        assert _usage_sums(chats) == _otel_sums(per_request)
        assert _usage_sums(spans_attrs) == _otel_sums([r.otel for r in reqs if r.otel])
        if reqs and not per_request:
            assert _usage_sums([root_attrs]) == _otel_sums([r.otel for r in reqs if r.otel])
    elif total is None:
        assert not any("gen_ai.usage.input_tokens" in a for a in chats)

    # Tools: a result closes the latest open call of its id; failed ones are marked.
    open_calls: set[str] = set()
    failed = 0
    for ev in events:
        if ev.tool_call is not None:
            open_calls.add(ev.tool_call.tool_call_id)
        elif ev.tool_result is not None and ev.tool_result.tool_call_id in open_calls:
            open_calls.discard(ev.tool_result.tool_call_id)
            failed += ev.tool_result.is_error
    tool_spans = [s for s in decoded if s.name.startswith("execute_tool")]
    assert sum("error.type" in _attrs(s) for s in tool_spans) == failed
    assert sum(s.status.code == 2 for s in tool_spans) == failed
    for span in decoded:
        if not content:
            assert not _CONTENT_KEYS & set(_attrs(span))
    assert loss.total_events == len(events)
    return decoded


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_every_fixture_decodes_with_counts_and_tokens(path: Path) -> None:
    for session in iter_sessions(path):
        _check(session, content=False)


def test_figures_over_all_fixtures() -> None:
    """The fixtures exercise every span kind, failures, nested agents and token usage."""
    seen: Counter[str] = Counter()
    for path in ALL:
        for session in iter_sessions(path):
            for span in _check(session, content=True):
                attrs = _attrs(span)
                seen[attrs["gen_ai.operation.name"]] += 1
                seen["error"] += "error.type" in attrs
                seen["usage"] += "gen_ai.usage.input_tokens" in attrs
                seen["nested_agent"] += span.name.startswith("invoke") and bool(span.parent_span_id)
                seen["content"] += bool(_CONTENT_KEYS & set(attrs))
    assert all(seen[k] for k in ("chat", "execute_tool", "invoke_agent", "error", "usage"))
    assert seen["nested_agent"]
    assert seen["content"]


def test_ids_are_deterministic_and_tool_spans_timed_from_call_to_result() -> None:
    path = FIXTURES / "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    first, _ = project(load(path))
    again, _ = project(load(path))
    assert [(s.trace_id, s.span_id, s.parent_span_id) for s in first] == [
        (s.trace_id, s.span_id, s.parent_span_id) for s in again
    ]
    from agentminutes.timestamps import to_ns

    session = load(path)
    called = {ev.tool_call.tool_call_id: ev.timestamp for ev in session.events if ev.tool_call}
    answered: dict[str, str] = {}
    for ev in session.events:
        if ev.tool_result is not None:
            answered.setdefault(ev.tool_result.tool_call_id, ev.timestamp)
    checked = 0
    for span in first:
        if span.name.startswith("execute_tool"):
            call_id = str(span.attributes["gen_ai.tool.call.id"])
            assert span.start_time_unix_nano == to_ns(called[call_id])
            if call_id in answered:
                assert span.end_time_unix_nano == to_ns(answered[call_id])
                checked += 1
    assert checked


def test_inline_subagent_nests_under_the_root() -> None:
    path = FIXTURES / "qwen-code/constructed/0a11ce00-0000-4000-8000-000000000001.jsonl"
    spans, _ = project(load(path))
    agents = [s for s in spans if s.name.startswith("invoke_agent")]
    root = next(s for s in agents if not s.parent_span_id)
    nested = [s for s in agents if s.parent_span_id]
    assert len(nested) == 1
    assert nested[0].parent_span_id == root.span_id
    assert nested[0].attributes["gen_ai.agent.id"]
    under = [s for s in spans if s.parent_span_id == nested[0].span_id]
    assert under
    assert all(s.name.startswith("chat") for s in under)


def test_streaming_projector_matches_whole_session() -> None:
    path = (
        FIXTURES
        / "codex/exact2026/rollout-2026-05-07T15-38-21-019e0317-0939-7262-9c00-59e4b98f1c8b-first329.jsonl"
    )
    session = load(path)
    whole, loss = project(session)
    projector = SpanProjector("")
    streamed: list[Span] = []
    for ev in session.events:
        streamed.extend(projector.project(ev))
    # Chat spans leave with their message; tool spans with their result.
    assert sum(s.name.startswith("chat") for s in streamed) == sum(
        1 for ev in session.events if ev.assistant_message
    )
    streamed.extend(projector.finish())
    assert streamed == whole
    assert projector.report() == loss


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_a_projector_carries_on_from_its_snapshot(path: Path) -> None:
    """What a live follow with --state does at every batch: the snapshot goes through JSON
    (the state file) and a restored projector continues as if it had never stopped —
    at every cut, also where tool calls are open and content is pending."""
    for session in iter_sessions(path):
        events = session.events
        whole, loss = project(session, content=True)
        cuts = sorted({len(events) // 3, len(events) // 2, (2 * len(events)) // 3})
        for cut in cuts:
            first = SpanProjector(session.meta.harness, content=True)
            spans = [s for ev in events[:cut] for s in first.project(ev)]
            snap = json.loads(json.dumps(first.snapshot()))
            carried = SpanProjector.restore(snap, content=True)
            spans += [s for ev in events[cut:] for s in carried.project(ev)]
            spans += carried.finish()
            assert spans == whole, (path, cut)
            assert carried.report() == loss
            # Agent spans a stop already wrote are not written again.
            assert carried.finish() == []


def _gross(part: dict[str, Any]) -> tuple[int, ...]:
    # inputTokens counts the cache reads and writes already: the normalized input is it.
    return (
        part["inputTokens"],
        part["outputTokens"],
        part["cacheReadTokens"],
        part["cacheWriteTokens"],
    )


def test_copilot_chat_spans_carry_their_assistant_usage_records(tmp_path: Path) -> None:
    path = write_with_usage_records(tmp_path / "events.jsonl")
    session = load(path)
    decoded = _check(session, content=False)
    chats = [_attrs(s) for s in decoded if s.name.startswith("chat")]
    # In message order: each request's usage on its own message's chat span.
    ordered = sorted(
        (s for s in decoded if s.name.startswith("chat")), key=lambda s: s.end_time_unix_nano
    )
    assert [_usage_sums([_attrs(s)]) for s in ordered] == [_gross(p) for p in usage_parts()]
    assert all(a["gen_ai.response.model"] == "gpt-4.1" for a in chats)
    # The shutdown closes the process whose requests were counted one by one: nothing on
    # the root, and the chat spans add up to the shutdown's own sum.
    root = next(s for s in decoded if not s.parent_span_id)
    assert "gen_ai.usage.input_tokens" not in _attrs(root)
    shutdown = json.loads(COPILOT_SOURCE.read_text(encoding="utf-8").splitlines()[-1])
    metrics = shutdown["data"]["modelMetrics"]["gpt-4.1"]["usage"]
    assert _usage_sums(chats) == _gross(metrics)
    # The usage records became span attributes, not losses.
    _, loss = project(session)
    assert "system/assistant.usage" not in (loss.dropped_events or {})


def test_copilot_shutdown_metrics_go_on_the_root_span() -> None:
    session = load(COPILOT_SOURCE)
    decoded = _check(session, content=False)
    assert not any(
        "gen_ai.usage.input_tokens" in _attrs(s) for s in decoded if s.name.startswith("chat")
    )
    root = next(s for s in decoded if not s.parent_span_id)
    shutdown = json.loads(COPILOT_SOURCE.read_text(encoding="utf-8").splitlines()[-1])
    metrics = shutdown["data"]["modelMetrics"]["gpt-4.1"]["usage"]
    assert _usage_sums([_attrs(root)]) == _gross(metrics)


def test_copilot_chat_span_waits_for_its_usage_and_the_wait_survives_a_snapshot(
    tmp_path: Path,
) -> None:
    path = write_with_usage_records(tmp_path / "events.jsonl")
    session = load(path)
    whole, loss = project(session)
    events = session.events
    for cut in range(len(events) + 1):
        first = SpanProjector("copilot")
        spans = [s for ev in events[:cut] for s in first.project(ev)]
        if any(ev.assistant_message for ev in events[:cut]) and not any(
            ev.system and ev.system.subtype == "assistant.usage" for ev in events[:cut]
        ):
            # The message passed, its usage not yet: its chat span is held, not sent bare.
            assert not any(s.name.startswith("chat") for s in spans)
        carried = SpanProjector.restore(json.loads(json.dumps(first.snapshot())))
        spans += [s for ev in events[cut:] for s in carried.project(ev)]
        spans += carried.finish()
        assert sorted(spans, key=lambda s: s.span_id) == sorted(whole, key=lambda s: s.span_id)
        assert carried.report() == loss


def test_a_snapshot_of_another_layout_is_refused() -> None:
    with pytest.raises(ValueError, match="not a span projector snapshot"):
        SpanProjector.restore({"v": 999})
    with pytest.raises(ValueError, match="damaged"):
        SpanProjector.restore({"v": 1, "harness": "codex"})


@pytest.mark.parametrize(
    "fixture",
    [
        "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
        "codex/exact2026/rollout-2026-05-07T15-38-21-019e0317-0939-7262-9c00-59e4b98f1c8b-first329.jsonl",
        "gemini-cli/vibe-comparison/session-2026-04-25T08-23-e435870b.jsonl",
    ],
)
def test_cli_convert_otlp_json(cli: Any, fixture: str, tmp_path: Path) -> None:
    path = FIXTURES / fixture
    session = load(path)
    spans, loss = project(session)
    out = tmp_path / "trace.jsonl"
    done = cli("convert", "--format", "otlp-json", "-o", out, path)
    assert done.returncode == 0, done.stderr
    lines = out.read_bytes().splitlines()
    decoded = [s for line in lines for s in _decode(line)]
    # Lines hold at most 512 spans; together they are the projection, in its order.
    assert len(lines) == -(-len(spans) // 512)
    assert [s.span_id.hex() for s in decoded] == [s.span_id for s in spans]
    assert done.stderr.decode().splitlines()[-1] == f"agentminutes: otlp-json: {loss.summary()}"

    done = cli("convert", "--format", "otlp-json", "--otel-content", path)
    assert done.returncode == 0, done.stderr
    with_content = [_attrs(s) for line in done.stdout.splitlines() for s in _decode(line)]
    assert any("gen_ai.output.messages" in a for a in with_content)
    json.loads(done.stdout.splitlines()[0])  # UTF-8 JSON


def test_cli_otel_content_needs_otlp_json(cli: Any) -> None:
    done = cli("convert", "--otel-content", FIXTURES / "claude-code/fasthooks-main.jsonl")
    assert done.returncode == 1
    assert done.stderr.decode() == "Error: --otel-content is for --format otlp-json\n"
