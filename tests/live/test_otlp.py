"""``follow --to otlp+http://``: spans exported live to a real OTLP/HTTP receiver.

The receiver (``tests/otlp_receiver.py``) is an HTTP server on 127.0.0.1 that
decodes every request with ``opentelemetry-proto``. The follower is the real
CLI in a subprocess, following a transcript that a writer grows on disk. What
the receiver gets must be exactly the spans ``convert --format otlp-json``
writes for the whole transcript (ids, parent links, names, times, attributes,
status), each once — across a restart from ``--state`` and a collector that
refuses requests for a while too.
"""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path

import pytest

from agentminutes import load
from conftest import FIXTURES
from copilot_requests import usage_parts, write_with_usage_records
from follow_helpers import FollowProc, append, lines_of, wait_for
from otlp_receiver import Received, Receiver, file_spans

CLAUDE_CODE = FIXTURES / "claude-code" / "fasthooks-main.jsonl"
CODEX = (
    FIXTURES
    / "codex"
    / "feipi"
    / "rollout-2026-06-19T10-14-27-019edda8-7eca-7710-b78b-6ce7607beaa1.jsonl"
)
COPILOT = FIXTURES / "copilot" / "agent-sessions" / "copilot_small_1.0.77.jsonl"
#: The one fixture format with inline subagents: a nested invoke_agent under its tool call.
QWEN = FIXTURES / "qwen-code" / "constructed" / "0a11ce00-0000-4000-8000-000000000001.jsonl"

LIVE = [
    pytest.param(CLAUDE_CODE, id="claude-code"),
    pytest.param(CODEX, id="codex"),
    pytest.param(COPILOT, id="copilot"),
    pytest.param(QWEN, id="qwen-code"),
]


@pytest.fixture
def receiver() -> object:
    r = Receiver()
    yield r
    r.close()


def _keys(spans: list[Received]) -> Counter[tuple[object, ...]]:
    return Counter(s.key() for s in spans)


def _first_result(path: Path) -> tuple[int, str]:
    """The line of the first tool result whose call came before it, and its call id."""
    calls: set[str] = set()
    for ev in load(path, permissive=True).events:
        if ev.tool_call is not None:
            calls.add(ev.tool_call.tool_call_id)
        if ev.tool_result is not None and ev.tool_result.tool_call_id in calls:
            assert ev.provenance is not None
            return ev.provenance.end_line or ev.provenance.line, ev.tool_result.tool_call_id
    raise AssertionError(f"{path}: no tool result")


def _check_shape(spans: list[Received], path: Path) -> None:
    """The links and attributes the conventions ask for, checked on what was received."""
    by_id = {s.span_id: s for s in spans}
    assert len(by_id) == len(spans)  # each span once
    roots = [s for s in spans if not s.parent_span_id]
    assert len(roots) == 1
    root = roots[0]
    session = load(path, permissive=True)
    assert root.name == f"invoke_agent {session.meta.harness}"
    assert root.attributes["gen_ai.conversation.id"] == session.meta.session_id
    assert root.attributes["gen_ai.agent.name"] == session.meta.harness
    assert root.service == session.meta.harness
    assert {s.trace_id for s in spans} == {root.trace_id}
    calls = {ev.tool_call.tool_call_id for ev in session.events if ev.tool_call is not None}
    tools = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert {s.attributes["gen_ai.tool.call.id"] for s in tools} == calls
    subagents = 0
    for s in spans:
        if s is root:
            continue
        parent = by_id[s.parent_span_id]  # every link lands on a span received
        op = s.attributes["gen_ai.operation.name"]
        if op in ("chat", "execute_tool"):
            assert parent.attributes["gen_ai.operation.name"] == "invoke_agent"
        else:  # a subagent: under the tool call that spawned it, else the session's agent
            assert op == "invoke_agent"
            agent = s.attributes["gen_ai.agent.id"]
            if agent in calls:
                assert parent.attributes["gen_ai.tool.call.id"] == agent
            else:
                assert parent is root
            subagents += 1
    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(chats) == sum(1 for ev in session.events if ev.assistant_message is not None)
    own = session.meta.subagent_id
    assert subagents == len({ev.agent_id for ev in session.events if ev.agent_id not in ("", own)})


@pytest.mark.parametrize("path", LIVE)
def test_spans_go_out_live_as_the_transcript_grows(
    path: Path, tmp_path: Path, receiver: Receiver
) -> None:
    _grows_live(path, tmp_path, receiver)


def test_copilot_usage_records_reach_their_chat_spans_live(
    tmp_path: Path, receiver: Receiver
) -> None:
    """The live projection holds a Copilot chat span for the usage record after it, as the
    file projection does: the collector gets the same spans, usage on the chat spans."""
    (tmp_path / "src").mkdir()
    path = write_with_usage_records(tmp_path / "src" / "events.jsonl")
    got = _grows_live(path, tmp_path, receiver)
    chats = [s for s in got if s.attributes.get("gen_ai.operation.name") == "chat"]
    parts = usage_parts()
    assert sum(int(s.attributes["gen_ai.usage.input_tokens"]) for s in chats) == sum(
        p["inputTokens"] for p in parts
    )
    assert all("gen_ai.usage.output_tokens" in s.attributes for s in chats)


def _grows_live(path: Path, tmp_path: Path, receiver: Receiver) -> list[Received]:
    want = file_spans(path, "--permissive")
    lines = lines_of(path)
    result_line, call_id = _first_result(path)
    target = tmp_path / path.name
    target.write_bytes(b"")
    # Stopped by a signal once all is written (an --idle-exit timer could end it early on a
    # loaded machine, before the second part is written); the stop reads what is on disk.
    f = FollowProc(target, "--permissive", "--to", receiver.url)
    try:
        f.wait_open(target)
        append(target, lines[:result_line], seed=3)
        # The tool span goes out once its result is on disk, the follower still running.
        wait_for(
            lambda: any(
                s.attributes.get("gen_ai.tool.call.id") == call_id for s in receiver.snapshot()
            ),
            what=f"the span of tool call {call_id}",
        )
        assert f.proc.poll() is None
        append(target, lines[result_line:], seed=4)
        assert f.stop(signal.SIGINT) == 0, f.stderr
    finally:
        f.kill()
    got = receiver.snapshot()
    assert _keys(got) == _keys(want)
    assert receiver.paths == {"/v1/traces"}
    _check_shape(got, path)
    return got


def _split_after_open_call(path: Path) -> int:
    """A line count that ends just after a tool call whose result comes later."""
    session = load(path, permissive=True)
    results = {
        ev.tool_result.tool_call_id: ev.provenance.line
        for ev in session.events
        if ev.tool_result is not None and ev.provenance is not None
    }
    for ev in session.events:
        call = ev.tool_call
        if call is None or ev.provenance is None:
            continue
        end = ev.provenance.end_line or ev.provenance.line
        if results.get(call.tool_call_id, 0) > end + 1:
            return end
    raise AssertionError(f"{path}: no call with a later result")


def _entry(state: Path) -> dict[str, object]:
    doc = json.loads(state.read_text())
    entries = dict(doc["transcripts"])
    journal = state.with_name(state.name + ".journal")
    if journal.exists():
        for line in journal.read_text().splitlines()[1:]:
            record = json.loads(line)
            if "e" in record:
                entries[record["t"]] = record["e"]
    (entry,) = entries.values()
    return entry


@pytest.mark.parametrize("path", [CLAUDE_CODE, CODEX], ids=["claude-code", "codex"])
def test_a_restart_from_state_exports_every_span_once(
    path: Path, tmp_path: Path, receiver: Receiver
) -> None:
    want = file_spans(path, "--permissive")
    lines = lines_of(path)
    cut = _split_after_open_call(path)
    target, state = tmp_path / path.name, tmp_path / "follow.state"
    target.write_bytes(b"".join(lines[:cut]))
    # The spans the first part completes: those convert writes for it that are final.
    final = _keys(want)
    first = [s for s in file_spans(target, "--permissive") if final[s.key()]]
    first = [s for s in first if s.attributes["gen_ai.operation.name"] != "invoke_agent"]

    f = FollowProc(target, "--permissive", "--to", receiver.url, "--state", state)
    try:
        wait_for(lambda: len(receiver.snapshot()) >= len(first), what="the first part's spans")
        # SIGTERM with --state pauses: the open tool call and the agent span wait in the state.
        assert f.stop(signal.SIGTERM) == 0, f.stderr
    finally:
        f.kill()
    assert _keys(receiver.snapshot()) == _keys(first)
    held = _entry(state)["otel"]
    assert isinstance(held, dict)
    assert held["open"]  # the call without its result yet

    append(target, lines[cut:], seed=5)
    f = FollowProc(
        target, "--permissive", "--to", receiver.url, "--state", state, "--idle-exit", "1"
    )
    try:
        assert f.wait_exit(60) == 0, f.stderr
    finally:
        f.kill()
    got = receiver.snapshot()
    assert _keys(got) == _keys(want)  # every span, each exactly once
    _check_shape(got, path)


def test_a_refusing_collector_holds_spans_and_progress(tmp_path: Path, receiver: Receiver) -> None:
    want = file_spans(CODEX, "--permissive")
    target, state = tmp_path / CODEX.name, tmp_path / "follow.state"
    target.write_bytes(CODEX.read_bytes())
    receiver.refuse = True
    f = FollowProc(target, "--permissive", "--to", receiver.url, "--state", state)
    try:
        wait_for(lambda: receiver.refused >= 2, what="requests refused and sent again")
        f.proc.send_signal(signal.SIGINT)  # a stop: the follower waits for the collector...
        wait_for(lambda: receiver.refused >= 3, what="another attempt during the stop")
        code = f.stop(signal.SIGINT)  # ... until hurried: it gives up, saying what it held
    finally:
        f.kill()
    assert code == 1
    assert "the collector did not accept" in f.stderr
    assert "spans the collector had not accepted" in f.stderr
    assert f.stderr.count("retrying, holding spans meanwhile") == 1
    assert receiver.snapshot() == []
    doc = json.loads(state.read_text())
    assert doc["transcripts"] == {}  # no progress for what was not accepted

    receiver.refuse = False
    f = FollowProc(
        target, "--permissive", "--to", receiver.url, "--state", state, "--idle-exit", "0.5"
    )
    try:
        assert f.wait_exit(60) == 0, f.stderr
    finally:
        f.kill()
    assert _keys(receiver.snapshot()) == _keys(want)


def test_an_absent_collector_is_waited_for(tmp_path: Path) -> None:
    probe = Receiver()
    port = probe.port
    probe.close()  # a free port, nobody listening yet
    target = tmp_path / COPILOT.name
    target.write_bytes(COPILOT.read_bytes())
    f = FollowProc(
        target, "--permissive", "--to", f"otlp+http://127.0.0.1:{port}", "--idle-exit", "0.3"
    )
    late: Receiver | None = None
    try:
        wait_for(lambda: "retrying, holding spans meanwhile" in _stderr_so_far(f), what="a notice")
        late = Receiver(port)
        assert f.wait_exit(60) == 0, f.stderr
        assert _keys(late.snapshot()) == _keys(file_spans(COPILOT, "--permissive"))
        assert "accepts spans again" in f.stderr
    finally:
        f.kill()
        if late is not None:
            late.close()


def _stderr_so_far(f: FollowProc) -> str:
    """What the follower wrote to stderr until now (read without blocking)."""
    import os

    assert f.proc.stderr is not None
    fd = f.proc.stderr.fileno()
    os.set_blocking(fd, False)
    try:
        chunk = f.proc.stderr.read() or b""
    except BlockingIOError:
        chunk = b""
    f.early = getattr(f, "early", b"") + chunk  # type: ignore[attr-defined]
    return f.early.decode(errors="replace")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--to", "otlp+http://127.0.0.1"], "expected otlp+http://HOST:PORT[/PATH]"),
        (["--to", "otlp+http://127.0.0.1:4318?x=1"], "an OTLP address takes no options"),
        (["--otel-content"], "--otel-content is for --to otlp+http://HOST:PORT"),
    ],
)
def test_bad_otlp_options_are_one_error_line(args: list[str], error: str, tmp_path: Path) -> None:
    f = FollowProc(COPILOT, *args, "--idle-exit", "0.1")
    code = f.wait_exit(30)
    if args[0] == "--to":  # a value --to does not take: exit 2, the error and the usage hint
        assert code == 2
        error_line, hint = f.stderr.splitlines()
        assert error_line == f"Error: --to {args[1]}: {error}"
        assert hint.startswith("Usage: agentminutes follow")
    else:  # options that do not go together
        assert code != 0
        assert f.stderr.splitlines() == [f"Error: {error}"]


def test_the_library_follows_into_a_collector(tmp_path: Path, receiver: Receiver) -> None:
    import anyio

    import agentminutes

    target, state = tmp_path / CODEX.name, tmp_path / "lib.state"
    target.write_bytes(CODEX.read_bytes())

    async def main() -> int:
        return await agentminutes.follow_to(
            receiver.url, [target], state=state, idle_exit=0.3, permissive=True
        )

    assert anyio.run(main) > 0
    assert _keys(receiver.snapshot()) == _keys(file_spans(CODEX, "--permissive"))
    assert _entry(state)["otel"]  # the projection's progress went into the state
