"""The Kimi CLI adapter on wire logs recorded in the lab (kimi-cli 1.51.0, its last working release)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentminutes.errors import ParseError
from agentminutes.harness import ParseOptions
from agentminutes.harness.kimi.adapter import KimiAdapter
from agentminutes.schema import EventKind
from follow_helpers import FollowProc, append, expected, lines_of
from lab_recordings import (
    billed,
    converted,
    detected,
    recordings,
    scripted_calls,
    tool_calls,
    usage_sum,
)

RECORDINGS = recordings("kimi")
IDS = [r.name for r in RECORDINGS]


def test_recorded_in_several_scenarios() -> None:
    assert {r.folder.name for r in RECORDINGS} >= {"tools", "second-prompt", "text"}


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_recording_converts_strictly_and_auto_detected(rec) -> None:
    (wire,) = rec.sources
    assert detected(wire) == "kimi\tcertain"
    events = converted(wire)
    assert events[0].kind == EventKind.SESSION_META
    assert not [e for e in events if e.kind == EventKind.UNKNOWN]
    prompts = [
        b.text
        for e in events
        if e.kind == EventKind.USER_MESSAGE and e.user_message and e.user_message.content
        for b in e.user_message.content
    ]
    assert prompts == [r["command"][r["command"].index("-p") + 1] for r in rec.note["runs"]]
    assert [e for e in events if e.kind == EventKind.ASSISTANT_MESSAGE]


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_tool_calls_equal_the_scripted_ones(rec) -> None:
    (wire,) = rec.sources
    got = tool_calls(converted(wire))
    want = scripted_calls(rec.truth)
    assert [(n, i) for n, i, _ in got] == [(n, i) for n, i, _ in want]
    assert [err for _, _, err in got] == [fails for _, _, fails in want]


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_usage_equals_what_was_billed(rec) -> None:
    (wire,) = rec.sources
    total, count = usage_sum(converted(wire))
    want = billed(rec.truth)
    assert count == rec.truth["conversation_requests"]
    assert total.input_tokens == want["input_tokens"]
    assert total.output_tokens == want["output_tokens"]
    assert total.cache_read_input_tokens == want["cache_read_input_tokens"]
    assert total.cache_creation_input_tokens == want["cache_creation_input_tokens"]
    # Kimi records the reasoning inside output, never apart: not recorded is not zero.
    assert total.reasoning_output_tokens is None


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_every_line_is_an_event_or_a_counted_skip(rec) -> None:
    (wire,) = rec.sources
    lines = [n for n, raw in enumerate(wire.read_bytes().splitlines(), 1) if raw.strip()]
    adapter = KimiAdapter(ParseOptions())
    cited: set[int] = set()
    skipped: list[int] = []
    adapter.on_skip = lambda n, _t: skipped.append(n)
    for n, raw in enumerate(wire.read_bytes().splitlines(), 1):
        if raw.strip():
            for ev in adapter.feed(raw, n):
                assert ev.provenance is not None
                cited.update(range(ev.provenance.line, ev.provenance.end_line + 1))
    for ev in adapter.finish():
        assert ev.provenance is not None
        cited.update(range(ev.provenance.line, ev.provenance.end_line + 1))
    assert set(lines) <= cited | set(skipped)
    assert sum(adapter.skipped.values()) == len(skipped)


def test_assistant_messages_carry_the_api_message_id_and_usage() -> None:
    (rec,) = [r for r in RECORDINGS if r.folder.name == "tools"]
    events = converted(rec.sources[0])
    messages = [e for e in events if e.kind == EventKind.ASSISTANT_MESSAGE]
    ids = [
        r.get("billed") and r.get("message_id", f"msg_lab{r['n']:03d}")
        for r in rec.truth["requests"]
    ]
    assert [m.message_id for m in messages] == ids
    calls = [e for e in events if e.kind == EventKind.TOOL_CALL]
    assert {c.message_id for c in calls} == {i for i in ids[:2] if i}
    assert [c.tool_call.kind for c in calls if c.tool_call] == ["execute", "read", "read"]


def test_an_unknown_wire_message_is_a_loud_error_naming_the_line() -> None:
    adapter = KimiAdapter()
    adapter.feed(b'{"type": "metadata", "protocol_version": "1.10"}', 1)
    bad = b'{"timestamp": 1.0, "message": {"type": "TeleportBegin", "payload": {}}}'
    with pytest.raises(ParseError) as exc:
        adapter.feed(bad, 2)
    assert "TeleportBegin" in str(exc.value)
    assert "line 2" in str(exc.value)
    permissive = KimiAdapter(ParseOptions(permissive=True))
    permissive.feed(b'{"type": "metadata", "protocol_version": "1.10"}', 1)
    (ev,) = permissive.feed(bad, 2)
    assert ev.kind == EventKind.UNKNOWN


def test_a_subagent_event_is_read_inline_under_its_agent_id() -> None:
    # The shape kimi-cli 1.51.0 writes (kimi_cli/subagents/runner.py wraps each merged wire
    # message of a subagent run): constructed from the source, not recorded.
    adapter = KimiAdapter()
    lines = [
        {"type": "metadata", "protocol_version": "1.10"},
        {"timestamp": 1.0, "message": {"type": "TurnBegin", "payload": {"user_input": "go"}}},
        *[
            {
                "timestamp": 2.0,
                "message": {
                    "type": "SubagentEvent",
                    "payload": {
                        "parent_tool_call_id": "call_1",
                        "agent_id": "a1",
                        "subagent_type": "coder",
                        "event": inner,
                    },
                },
            }
            for inner in (
                {"type": "StepBegin", "payload": {"n": 1}},
                {"type": "ContentPart", "payload": {"type": "text", "text": "sub says"}},
                {
                    "type": "StatusUpdate",
                    "payload": {
                        "message_id": "m_sub",
                        "token_usage": {
                            "input_other": 5,
                            "output": 2,
                            "input_cache_read": 1,
                            "input_cache_creation": 0,
                        },
                    },
                },
            )
        ],
    ]
    events = []
    for n, rec in enumerate(lines, 1):
        events += adapter.feed(json.dumps(rec).encode(), n)
    events += adapter.finish()
    (msg,) = [e for e in events if e.kind == EventKind.ASSISTANT_MESSAGE]
    assert (msg.agent_id, msg.message_id) == ("a1", "m_sub")
    usage = msg.assistant_message.usage if msg.assistant_message else None
    assert usage is not None
    assert usage.input_tokens == 5
    assert adapter.skipped == {"SubagentEvent/StepBegin": 1}


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("XDG_") and k != "KIMI_SHARE_DIR"
    }
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args],
        capture_output=True,
        text=True,
        env={**env, "HOME": str(home)},
        check=False,
    )


def test_sessions_finds_each_recording_by_its_folder_id() -> None:
    for rec in RECORDINGS:
        home = rec.folder / "home"
        for args in (("--harness", "kimi"), ()):
            done = _cli(home, "sessions", *args, "--format", "json")
            assert done.returncode == 0, done.stderr
            (row,) = json.loads(done.stdout)
            assert row["meta"] == {"harness": "kimi", "session_id": rec.sources[0].parent.name}


def test_follow_on_a_growing_wire_log_prints_what_convert_prints(tmp_path: Path) -> None:
    (rec,) = [r for r in RECORDINGS if r.folder.name == "second-prompt"]
    source = rec.sources[0]
    target = tmp_path / "wire.jsonl"
    target.touch()
    want = expected(source)
    f = FollowProc(target)
    try:
        append(target, lines_of(source))
        f.wait_lines(len(want))
        f.wait_quiet(0.2)
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    assert f.events == want
