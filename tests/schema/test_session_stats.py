"""StatsBuilder's table of tool calls: the same stats in its compact and its wide form, times never clipped."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from agentminutes import iter_events, timestamps
from agentminutes.schema import Event, EventKind, Provenance, ToolCall, ToolKind, ToolResult
from agentminutes.schema.stats import StatsBuilder
from conftest import FIXTURES

# Real sessions with tool calls, results, errors and unanswered calls (the most of each harness).
SESSIONS = [
    FIXTURES / path
    for path in (
        "antigravity/health-connect/cli-fc6e6de7/transcript.jsonl",
        "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
        "codex/exact2026/rollout-2026-05-07T15-38-21-019e0317-0939-7262-9c00-59e4b98f1c8b-first329.jsonl",
        "copilot/hawzx-ai/27d7ef99-f7c7-43eb-8599-cb469623c8f7.jsonl",
        "pi/pi-mono/before-compaction.jsonl",
    )
]


def stats(events: list[Event], *, wide: bool = False) -> bytes:
    builder = StatsBuilder()
    if wide:
        builder._calls._widen()
    builder.add_all(events)
    return msgspec.json.encode(builder.build())


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.parts[-3])
def test_the_wide_table_gives_the_same_stats(path: Path) -> None:
    events = list(iter_events(path, permissive=True))
    compact = stats(events)
    assert msgspec.json.decode(compact)["tool_calls"] > 0
    assert stats(events, wide=True) == compact


def call(call_id: str, ts: str) -> Event:
    return Event(
        kind=EventKind.TOOL_CALL,
        timestamp=ts,
        provenance=Provenance(line=1),
        tool_call=ToolCall(tool_call_id=call_id, name="Bash", kind=ToolKind.EXECUTE),
    )


def result(call_id: str, ts: str) -> Event:
    return Event(
        kind=EventKind.TOOL_RESULT,
        timestamp=ts,
        provenance=Provenance(line=2),
        tool_result=ToolResult(tool_call_id=call_id),
    )


@pytest.mark.parametrize(
    ("called", "answered"),
    [
        ("2026-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z"),  # past 2**63 ns
        ("0001-01-01T00:00:00Z", "2026-01-01T00:00:01Z"),  # before -(2**63) ns
        ("2026-01-01T00:00:00Z", "2026-01-01T00:00:02.5Z"),  # fits: stays compact
    ],
    ids=["far-future-result", "far-past-call", "ordinary"],
)
def test_far_off_times_are_kept_whole(called: str, answered: str) -> None:
    start, end = timestamps.to_ns(called), timestamps.to_ns(answered)
    assert start is not None
    assert end is not None
    builder = StatsBuilder()
    builder.add_all([call("a", "2026-01-01T00:00:00Z"), result("a", "2026-01-01T00:00:01Z")])
    # Calls and results with no time, before the far-off one: they have no duration.
    builder.add_all([call("n", ""), result("n", "2026-01-01T00:00:03Z")])
    builder.add_all([call("m", "2026-01-01T00:00:00Z"), result("m", "")])
    builder.add_all([call("b", called), result("b", "2026-01-01T00:00:00Z"), result("b", answered)])
    built = builder.build()
    assert built.tool_time_ms_by_name == {"Bash": 1000 + (end - start) // 1_000_000}
    assert built.unanswered_calls == 0
    assert builder._calls.wide is (abs(end) >= 2**63 or abs(start) >= 2**63)


def test_an_unanswered_and_an_overwritten_call_are_counted_as_before() -> None:
    # A call id used twice: the result answers the later call; the earlier stays unanswered.
    builder = StatsBuilder()
    builder.add_all(
        [
            call("x", "2026-01-01T00:00:00Z"),
            call("x", "2026-01-01T00:00:05Z"),
            result("x", "2026-01-01T00:00:06Z"),
            call("y", "2026-01-01T00:00:07Z"),
        ]
    )
    built = builder.build()
    assert built.tool_calls == 3
    assert built.unanswered_calls == 2
    assert built.tool_time_ms_by_name == {"Bash": 1000}


def test_a_far_past_call_answered_without_a_time_has_no_duration() -> None:
    builder = StatsBuilder()
    builder.add_all([call("m", "2026-01-01T00:00:00Z"), result("m", "")])
    builder.add_all([call("p", "0001-01-01T00:00:00Z"), result("p", "")])
    built = builder.build()
    assert builder._calls.wide
    assert built.tool_time_ms_by_name is None
    assert built.unanswered_calls == 0
