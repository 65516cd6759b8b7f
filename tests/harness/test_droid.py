"""The Factory Droid adapter on sessions recorded in the lab (droid 0.225.2, a custom model)."""

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
from agentminutes.harness.droid.adapter import DroidAdapter
from agentminutes.schema import EventKind, Origin
from follow_helpers import FollowProc, append, expected, lines_of
from lab_recordings import converted, detected, recordings, scripted_calls, tool_calls

RECORDINGS = recordings("droid")
IDS = [r.name for r in RECORDINGS]


def test_recorded_in_several_scenarios() -> None:
    assert {r.folder.name for r in RECORDINGS} >= {"tools", "text", "long-output"}


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_recording_converts_strictly_and_auto_detected(rec) -> None:
    (session,) = rec.sources
    assert detected(session) == "droid\tcertain"
    events = converted(session)
    assert events[0].kind == EventKind.SESSION_META
    assert events[0].session_meta is not None
    assert events[0].session_meta.session_id == session.stem
    assert not [e for e in events if e.kind == EventKind.UNKNOWN]
    typed = [
        b.text
        for e in events
        if e.kind == EventKind.USER_MESSAGE
        and e.user_message
        and e.user_message.origin == Origin.HUMAN
        and e.user_message.content
        for b in e.user_message.content
    ]
    assert typed == [r["command"][-1] for r in rec.note["runs"]]
    messages = [e for e in events if e.kind == EventKind.ASSISTANT_MESSAGE]
    assert [m.message_id for m in messages] == [
        r.get("message_id", f"msg_lab{r['n']:03d}")
        for r in rec.truth["requests"]
        if r.get("billed") and not r["side"]
    ]
    assert {m.assistant_message.model for m in messages if m.assistant_message} == {"custom:Lab-0"}


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_tool_calls_equal_the_scripted_ones(rec) -> None:
    (session,) = rec.sources
    got = tool_calls(converted(session))
    want = scripted_calls(rec.truth)
    assert [(n, i) for n, i, _ in got] == [(n, i) for n, i, _ in want]
    assert [err for _, _, err in got] == [fails for _, _, fails in want]


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_the_usage_beside_the_transcript_is_what_was_billed(rec) -> None:
    # The transcript records none; the settings file beside it keeps the session's sums,
    # fresh input apart from the cache, and no reasoning count (thinkingTokens stays 0).
    (session,) = rec.sources
    assert all(e.assistant_message.usage is None for e in converted(session) if e.assistant_message)
    usage = json.loads(session.with_suffix(".settings.json").read_text())["tokenUsage"]
    billed = rec.truth["billed"]
    assert usage["inputTokens"] + usage["cacheReadTokens"] == billed["input_tokens"]
    assert usage["cacheReadTokens"] == billed["cache_read_input_tokens"]
    assert usage["outputTokens"] == billed["output_tokens"]


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_every_line_is_an_event(rec) -> None:
    (session,) = rec.sources
    lines = [n for n, raw in enumerate(session.read_bytes().splitlines(), 1) if raw.strip()]
    cited = {e.provenance.line for e in converted(session) if e.provenance}
    assert set(lines) == cited


def test_the_context_before_the_prompt_is_the_harness_s() -> None:
    (rec,) = [r for r in RECORDINGS if r.folder.name == "tools"]
    users = [e for e in converted(rec.sources[0]) if e.kind == EventKind.USER_MESSAGE]
    assert [u.user_message.origin for u in users if u.user_message] == [
        Origin.HARNESS,
        Origin.HUMAN,
    ]


def test_an_unknown_record_type_is_a_loud_error() -> None:
    (rec,) = [r for r in RECORDINGS if r.folder.name == "text"]
    first = rec.sources[0].read_bytes().splitlines()[0]
    adapter = DroidAdapter()
    adapter.feed(first, 1)
    with pytest.raises(ParseError) as exc:
        adapter.feed(b'{"type":"mission_state","id":"x"}', 2)
    assert "mission_state" in str(exc.value)
    permissive = DroidAdapter(ParseOptions(permissive=True))
    permissive.feed(first, 1)
    (ev,) = permissive.feed(b'{"type":"mission_state","id":"x"}', 2)
    assert ev.kind == EventKind.UNKNOWN


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "FACTORY_"))}
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args],
        capture_output=True,
        text=True,
        env={**env, "HOME": str(home)},
        check=False,
    )


def test_sessions_finds_each_recording_with_no_harness_named() -> None:
    for rec in RECORDINGS:
        done = _cli(rec.folder / "home", "sessions", "--format", "json")
        assert done.returncode == 0, done.stderr
        (row,) = json.loads(done.stdout)
        assert row["meta"]["harness"] == "droid"
        assert row["meta"]["session_id"] == rec.sources[0].stem


def test_follow_on_a_growing_session_prints_what_convert_prints(tmp_path: Path) -> None:
    (rec,) = [r for r in RECORDINGS if r.folder.name == "tools"]
    source = rec.sources[0]
    target = tmp_path / "s.jsonl"
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
