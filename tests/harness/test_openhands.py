"""The OpenHands CLI adapter on conversation folders recorded in the lab (openhands 1.16.0)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentminutes.harness import detect
from agentminutes.pipeline.document_sources import DocumentConversion, route
from agentminutes.schema import Event, EventKind
from agentminutes.schema.usage import OtelUsage, requests
from lab_recordings import recordings, scripted_calls, tool_calls

RECORDINGS = recordings("openhands")
IDS = [r.name for r in RECORDINGS]


def events_of(state: Path) -> list[Event]:
    found = route(str(state), "auto")
    assert found.document is not None
    assert found.adapter is not None
    assert found.adapter.name == "openhands"
    try:
        sessions = list(DocumentConversion(found.document, found.adapter).sessions())
    finally:
        found.document.release()
    return [e for s in sessions for e in s.events]


def test_recorded_in_several_scenarios() -> None:
    assert {r.folder.name for r in RECORDINGS} >= {"tools", "long-output", "text"}


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_recording_converts_strictly_and_auto_detected(rec) -> None:
    (state,) = rec.sources
    for member in (state, *sorted((state.parent / "events").glob("*.json"))):
        cls, _ = detect(member.read_bytes()[:65536])
        assert cls.name == "openhands", member.name
    events = events_of(state)
    assert events[0].kind == EventKind.SESSION_META
    assert events[0].session_meta is not None
    assert events[0].session_meta.session_id == state.parent.name
    assert not [e for e in events if e.kind == EventKind.UNKNOWN]
    prompts = [
        b.text
        for e in events
        if e.kind == EventKind.USER_MESSAGE and e.user_message and e.user_message.content
        for b in e.user_message.content
    ]
    assert prompts == [r["command"][-1] for r in rec.note["runs"]]
    answers = [e for e in events if e.kind == EventKind.ASSISTANT_MESSAGE]
    assert [a.message_id for a in answers] == [
        r.get("message_id", f"msg_lab{r['n']:03d}")
        for r in rec.truth["requests"]
        if r.get("billed") and not r["side"]
    ]


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_tool_calls_equal_the_scripted_ones(rec) -> None:
    got = tool_calls(events_of(rec.sources[0]))
    want = scripted_calls(rec.truth)
    assert [(n, i) for n, i, _ in got] == [(n, i) for n, i, _ in want]
    assert [err for _, _, err in got] == [fails for _, _, fails in want]


@pytest.mark.parametrize("rec", RECORDINGS, ids=IDS)
def test_usage_equals_what_was_billed(rec) -> None:
    found = requests(events_of(rec.sources[0]), "openhands")
    total = OtelUsage.zero()
    for r in found:
        assert r.otel is not None
        total.add(r.otel)
    billed = rec.truth["billed"]
    assert len(found) == rec.truth["conversation_requests"]
    assert total.input_tokens == billed["input_tokens"]
    assert total.output_tokens == billed["output_tokens"]
    assert total.cache_read_input_tokens == billed["cache_read_input_tokens"]
    assert total.cache_creation_input_tokens == billed["cache_creation_input_tokens"]
    assert total.reasoning_output_tokens == billed["reasoning_output_tokens"]


def test_sessions_and_usage_find_the_conversations_with_no_harness_named(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "OPENHANDS_"))}
    for rec in RECORDINGS:
        home = rec.folder / "home"
        run = {"capture_output": True, "text": True, "env": {**env, "HOME": str(home)}}
        done = subprocess.run(
            [sys.executable, "-m", "agentminutes", "sessions", "--format", "json"],
            check=False,
            **run,  # type: ignore[call-overload]
        )
        assert done.returncode == 0, done.stderr
        rows = json.loads(done.stdout)
        assert [r["meta"]["harness"] for r in rows] == ["openhands"]
        done = subprocess.run(
            [
                *(sys.executable, "-m", "agentminutes", "usage", "--format", "json", "--no-cost"),
                *("--by", "harness", "--cache-dir", str(tmp_path / "cache")),
            ],
            check=False,
            **run,  # type: ignore[call-overload]
        )
        assert done.returncode == 0, done.stderr
        (row,) = json.loads(done.stdout)
        assert row["otel"]["input_tokens"] == rec.truth["billed"]["input_tokens"]
