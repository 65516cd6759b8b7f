"""The Qwen Code adapter on real and constructed chat recordings."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentminutes.harness import ADAPTERS, SNIFF_BYTES, Confidence, ParseOptions, detect
from agentminutes.harness.qwen_code import QwenCodeAdapter
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from agentminutes.schema import Event, EventKind, Origin
from conftest import FIXTURES, fixture_id, transcripts
from follow_helpers import FollowProc, append, expected, lines_of

QWEN = FIXTURES / "qwen-code"
ALL = transcripts("qwen-code")
GENUINE = [p for p in ALL if "constructed" not in p.parts]
CONSTRUCTED = QWEN / "constructed" / "0a11ce00-0000-4000-8000-000000000001.jsonl"
BOOK = QWEN / "todo-list" / "c85afb93-5dc4-4bb5-be6e-0f2771b8e976.jsonl"
TODO = QWEN / "todo-list" / "5c7e5311-5ac2-4e52-a4c0-d938f6e98268.jsonl"
SLASH = QWEN / "todo-list" / "9f7385a4-35ec-4c8c-a1fc-a1e1aab4ed46.jsonl"
GEMINI_LOGS = FIXTURES / "gemini-cli" / "constructed" / "logs.json"
GEMINI_LEGACY = FIXTURES / "gemini-cli" / "constructed" / "session-2025-11-03T14-10-5e55a7e0.json"


def events(path: Path, harness: str = "auto", **options: Any) -> list[Event]:
    conv = Conversion(name=str(path), harness=harness, options=ParseOptions(**options))
    return list(conv.iter_events(open_sync_chunks(path)))


def of(evs: list[Event], kind: str) -> list[Event]:
    return [e for e in evs if e.kind == kind]


# -- detection -------------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_every_fixture_detected_certain(path: Path) -> None:
    cls, conf = detect(path.read_bytes()[:SNIFF_BYTES])
    assert (cls.name, conf) == ("qwen-code", Confidence.CERTAIN)


def test_no_other_adapter_claims_qwen_records() -> None:
    # Qwen records share Claude Code's envelope (uuid, parentUuid, sessionId, type).
    for path in ALL:
        head = path.read_bytes()[:SNIFF_BYTES]
        for cls in ADAPTERS:
            if cls is not QwenCodeAdapter:
                assert cls.sniff(head) == Confidence.NO_MATCH, (cls.name, path)


def test_claude_code_fixtures_are_not_claimed() -> None:
    for path in transcripts("claude-code"):
        assert QwenCodeAdapter.sniff(path.read_bytes()[:SNIFF_BYTES]) == Confidence.NO_MATCH, path


# -- real recordings -------------------------------------------------------


@pytest.mark.parametrize("path", GENUINE, ids=[fixture_id(p) for p in GENUINE])
def test_genuine_recordings_parse_strictly_with_every_call_answered(path: Path) -> None:
    evs = events(path)
    assert evs[0].kind == EventKind.SESSION_META
    meta = evs[0].session_meta
    assert meta is not None
    assert meta.harness == "qwen-code"
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert (meta.session_id, meta.cwd, meta.harness_version) == (
        first["sessionId"],
        first["cwd"],
        first["version"],
    )
    assert not of(evs, EventKind.UNKNOWN)
    calls = {e.tool_call.tool_call_id for e in of(evs, EventKind.TOOL_CALL) if e.tool_call}
    results = [e.tool_result for e in of(evs, EventKind.TOOL_RESULT) if e.tool_result]
    assert {r.tool_call_id for r in results} <= calls


def test_book_recording_maps_every_record_type() -> None:
    evs = events(BOOK)
    lines = [json.loads(x) for x in BOOK.read_text(encoding="utf-8").splitlines()]
    by_type: dict[str, int] = {}
    for rec in lines:
        by_type[rec["type"]] = by_type.get(rec["type"], 0) + 1
    assert len(of(evs, EventKind.USER_MESSAGE)) == by_type["user"]
    assert len(of(evs, EventKind.ASSISTANT_MESSAGE)) == by_type["assistant"]
    assert len(of(evs, EventKind.TOOL_RESULT)) == by_type["tool_result"]
    assert len(of(evs, EventKind.SYSTEM)) == by_type["system"]
    calls = sum(
        1
        for rec in lines
        if rec["type"] == "assistant"
        for part in rec["message"]["parts"]
        if "functionCall" in part
    )
    assert len(of(evs, EventKind.TOOL_CALL)) == calls
    failed = [
        rec["toolCallResult"]["callId"]
        for rec in lines
        if rec["type"] == "tool_result" and rec["toolCallResult"]["status"] != "success"
    ]
    assert failed, "the fixture holds failed tool calls"
    errors = [e.tool_result.tool_call_id for e in of(evs, EventKind.TOOL_RESULT) if e.tool_result]
    assert set(failed) <= set(errors)
    flagged = {
        e.tool_result.tool_call_id
        for e in of(evs, EventKind.TOOL_RESULT)
        if e.tool_result and e.tool_result.is_error
    }
    assert flagged == set(failed)
    subtypes = {e.system.subtype for e in of(evs, EventKind.SYSTEM) if e.system}
    assert {"ui_telemetry", "slash_command"} <= subtypes
    kinds = {
        e.tool_call.name: e.tool_call.kind for e in of(evs, EventKind.TOOL_CALL) if e.tool_call
    }
    assert kinds["run_shell_command"] == "execute"
    assert kinds["write_file"] == "edit"


def test_usage_is_gemini_shaped_and_totals_count_the_cache() -> None:
    lines = [json.loads(x) for x in TODO.read_text(encoding="utf-8").splitlines()]
    msgs = of(events(TODO), EventKind.ASSISTANT_MESSAGE)
    recorded = [r["usageMetadata"] for r in lines if r["type"] == "assistant"]
    assert len(msgs) == len(recorded)
    for ev, usage in zip(msgs, recorded, strict=True):
        u = ev.assistant_message.usage if ev.assistant_message else None
        assert u is not None
        cached = usage.get("cachedContentTokenCount", 0)
        assert u.cache_read_input_tokens == cached
        assert u.input_tokens == usage["promptTokenCount"] - cached
        # Reported input + cache + output is what Qwen recorded as the total.
        assert (
            u.input_tokens + u.cache_read_input_tokens + u.output_tokens
            == (usage["totalTokenCount"])
        )


def test_slash_commands_alone_are_system_events() -> None:
    evs = events(SLASH)
    assert [e.kind for e in evs] == ["session_meta", "system", "system"]
    assert [e.system.text for e in evs[1:] if e.system] == ["/ide install", "/ide install"]


# -- constructed shapes ------------------------------------------------------


def test_constructed_shapes() -> None:
    evs = events(CONSTRUCTED)
    assert not of(evs, EventKind.UNKNOWN)
    system = {e.system.subtype: e.system for e in of(evs, EventKind.SYSTEM) if e.system}
    assert system["parent_session"].text == "0a11ce00-0000-4000-8000-0000000000ff"
    assert system["custom_title"].text == "README summary"
    assert "chat_compression" in system
    users = of(evs, EventKind.USER_MESSAGE)
    assert [u.user_message.origin for u in users if u.user_message] == [Origin.HUMAN, Origin.HUMAN]
    assert users[0].user_message is not None
    assert users[0].user_message.content is not None
    assert [b.kind for b in users[0].user_message.content] == ["text", "image"]
    thinking = of(evs, EventKind.THINKING)
    assert len(thinking) == 1
    assert thinking[0].message_id == "u3"
    calls = {e.tool_call.tool_call_id: e.tool_call.kind for e in evs if e.tool_call}
    assert calls == {"call_1": "read", "call_2": "fetch", "call_3": "execute"}
    results = {e.tool_result.tool_call_id: e.tool_result.is_error for e in evs if e.tool_result}
    assert results == {"call_1": False, "call_2": True, "call_3": True}
    msgs = [e.assistant_message for e in of(evs, EventKind.ASSISTANT_MESSAGE)]
    usages = [m.usage for m in msgs if m is not None]
    # u3: 1200 + 80 != 1300, so the 20 thoughts come on top of the candidates;
    # u7: 1400 + 30 == 1430, so its 10 thoughts are already inside them.
    assert [u.output_tokens for u in usages if u] == [100, 30, 12]
    assert [u.input_tokens for u in usages if u] == [200, 200, 200]
    sidechain = [e for e in evs if e.id == "u9"]
    assert sidechain
    assert all(e.agent_id == "explore-7f3c" for e in sidechain)


def test_stats_totals_use_the_all_prompt_rule() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agentminutes", "stats", str(CONSTRUCTED)],
        capture_output=True,
        check=True,
    )
    totals = json.loads(out.stdout)["totals"]
    assert (
        totals["total_prompt_tokens"] == totals["input_tokens"] + totals["cache_read_input_tokens"]
    )


# -- the older Gemini-shaped documents -----------------------------------------


@pytest.mark.parametrize("doc", [GEMINI_LOGS, GEMINI_LEGACY], ids=["logs.json", "session-json"])
def test_older_documents_read_by_gemini_rules_labelled_qwen(doc: Path) -> None:
    gemini = events(doc, harness="gemini-cli")
    qwen = events(doc, harness="qwen-code")
    assert qwen[0].session_meta is not None
    assert qwen[0].session_meta.harness == "qwen-code"
    assert [e.kind for e in qwen] == [e.kind for e in gemini]
    assert qwen[1:] == gemini[1:]


def test_an_empty_prompt_log_is_possible_qwen() -> None:
    cls, conf = detect(b"[]\n")
    assert (cls.name, conf) == ("qwen-code", Confidence.POSSIBLE)


def test_snapshot_mid_legacy_document_resumes() -> None:
    lines = GEMINI_LEGACY.read_bytes().splitlines()
    skipped: list[int] = []
    a = QwenCodeAdapter(on_skip=lambda n, _t: skipped.append(n))
    half = len(lines) // 2
    for n, line in enumerate(lines[:half], 1):
        if line.strip():
            a.feed(line.strip(), n)
    b = QwenCodeAdapter(on_skip=lambda n, _t: skipped.append(n))
    b.restore(a.snapshot())
    for n, line in enumerate(lines[half:], half + 1):
        if line.strip():
            b.feed(line.strip(), n)
    assert b.finish()[1:] == events(GEMINI_LEGACY, harness="gemini-cli")[1:]


# -- follow ----------------------------------------------------------------


def test_follow_a_chat_growing_on_disk_matches_convert(tmp_path: Path) -> None:
    target = tmp_path / "chats" / "5c7e5311-5ac2-4e52-a4c0-d938f6e98268.jsonl"
    target.parent.mkdir()
    target.touch()
    want = expected(TODO)
    f = FollowProc(target)
    try:
        # A writer process appends the real recording line by line, some lines split.
        writer = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys, time\n"
                "src, dst = sys.argv[1], sys.argv[2]\n"
                "with open(src, 'rb') as s, open(dst, 'ab', buffering=0) as d:\n"
                "    for line in s:\n"
                "        cut = len(line) // 2\n"
                "        d.write(line[:cut]); time.sleep(0.002); d.write(line[cut:])\n",
                str(TODO),
                str(target),
            ]
        )
        assert writer.wait(60) == 0
        # Every Qwen record is complete when written: nothing is held back.
        f.wait_lines(len(want))
        f.wait_quiet(0.2)
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    assert f.events == want


def test_follow_resumes_from_state_exactly_once(tmp_path: Path) -> None:
    target = tmp_path / "chat.jsonl"
    state = tmp_path / "state.json"
    lines = lines_of(BOOK)
    want = expected(BOOK)
    target.touch()
    first = FollowProc(target, "--state", state)
    try:
        append(target, lines[:30])
        first.wait_quiet(0.3)
        assert first.stop(signal.SIGTERM) == 0
    finally:
        first.kill()
    append(target, lines[30:])
    second = FollowProc(target, "--state", state)
    try:
        second.wait_lines(len(want) - len(first.lines))
        second.wait_quiet(0.2)
        assert second.stop(signal.SIGINT) == 0
    finally:
        second.kill()
    assert first.events + second.events == want


# -- sessions ----------------------------------------------------------------


def test_sessions_lists_every_chat_in_a_home_built_from_fixtures(tmp_path: Path) -> None:
    home = tmp_path / "home"
    chats = [
        (".qwen/projects/D--Hackathon-Book/chats", BOOK),
        (".qwen/projects/C--Users-haroon-traders/chats", TODO),
        (".qwen/projects/D--Hackathon-Book-sp-book/chats", SLASH),
        (".qwen/projects/-home-dev-app/chats", CONSTRUCTED),
        (".qwen/tmp/5e55a7e0/chats", GEMINI_LEGACY),
    ]
    for folder, src in chats:
        (home / folder).mkdir(parents=True)
        (home / folder / src.name).write_bytes(src.read_bytes())
    (home / ".qwen/tmp/5e55a7e0/logs.json").write_bytes(GEMINI_LOGS.read_bytes())
    env = {**os.environ, "HOME": str(home)}
    env.pop("QWEN_HOME", None)
    env.pop("QWEN_RUNTIME_DIR", None)
    listed = subprocess.run(
        [sys.executable, "-m", "agentminutes", "sessions", "--harness", "qwen-code"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    paths = sorted(listed.stdout.split())
    assert paths == sorted(str(home / folder / src.name) for folder, src in chats)
    assert "1 not a chat recording" in listed.stderr
    rooted = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentminutes",
            "sessions",
            "--harness",
            "qwen-code",
            "--root",
            str(home / ".qwen" / "projects"),
            "--format",
            "jsonl",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    refs = [json.loads(x) for x in rooted.stdout.splitlines()]
    assert len(refs) == 4
    assert {r["meta"]["harness"] for r in refs} == {"qwen-code"}
    ids = {r["meta"]["session_id"] for r in refs}
    assert ids == {p.stem for _, p in chats[:4]}


def test_a_null_token_counter_counts_nothing(tmp_path: Path) -> None:
    """Found by the fuzzer: ``cachedContentTokenCount: null`` failed the whole conversion."""
    from conftest import run_cli

    source = QWEN / "todo-list" / "734553eb-442f-4bd2-8002-4cd9ecd958e3.jsonl"
    records = [json.loads(x) for x in source.read_bytes().splitlines() if x.strip()]
    at = next(i for i, r in enumerate(records) if r.get("usageMetadata"))
    usage = records[at]["usageMetadata"]
    usage["cachedContentTokenCount"] = None
    path = tmp_path / source.name
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    proc = run_cli("convert", path)
    assert proc.returncode == 0, proc.stderr
    [message] = [
        e
        for e in json.loads(proc.stdout)["events"]
        if e["kind"] == "assistant_message" and e["provenance"]["line"] == at + 1
    ]
    counted = message["assistant_message"]["usage"]
    assert counted["input_tokens"] == usage["promptTokenCount"]  # nothing cached to take off
    assert "cache_read_input_tokens" not in counted
