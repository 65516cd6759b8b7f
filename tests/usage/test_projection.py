"""A usage read asks adapters only for the kinds it folds, and counts exactly what a full read counts."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

import agentminutes
from agentminutes.harness import ParseOptions, adapter_class
from agentminutes.pipeline.sync import sync_feeds
from agentminutes.schema import EventKind, to_builtins
from agentminutes.schema.usage import RequestFolder
from agentminutes.usage.summary import compact, summarize
from session_home import FIXTURES

CLAUDE_CODE = sorted((FIXTURES / "claude-code").rglob("*.jsonl"))


def _events(path: Path, kinds: frozenset[str] | None) -> list[agentminutes.Event]:
    options = ParseOptions(permissive=True, check_verbatim=False, kinds=kinds)
    return [
        ev
        for batches, _ in sync_feeds(str(path), None, False, "claude-code", options)
        for batch in batches
        for ev in batch.events
    ]


def _full_requests(path: Path) -> list[object]:
    folder = RequestFolder("claude-code")
    out = [compact(r) for ev in _events(path, None) for r in folder.add(ev)]
    return out + [compact(r) for r in folder.finish()]


@pytest.mark.parametrize("path", CLAUDE_CODE, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_projected_read_counts_the_requests_a_full_read_counts(path: Path) -> None:
    expected = _full_requests(path)
    summary = summarize(str(path), "claude-code")
    assert not summary.error, summary.error
    assert msgspec.to_builtins(summary.requests) == msgspec.to_builtins(expected)


def test_claude_code_leaves_out_user_records_only_when_asked() -> None:
    path = FIXTURES / "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    full = _events(path, None)
    projected = _events(path, RequestFolder.KINDS)
    full_kinds = {ev.kind for ev in full}
    assert {EventKind.USER_MESSAGE, EventKind.TOOL_RESULT} <= full_kinds
    assert not {ev.kind for ev in projected} & {EventKind.USER_MESSAGE, EventKind.TOOL_RESULT}
    # Every assistant message is there, as the full read has it, and the session's identity.
    wanted = {EventKind.ASSISTANT_MESSAGE, EventKind.SESSION_META}
    assert [to_builtins(ev) for ev in projected if ev.kind in wanted] == [
        to_builtins(ev) for ev in full if ev.kind in wanted
    ]
    # A projection that wants user messages reads them.
    with_users = _events(path, frozenset({EventKind.USER_MESSAGE}))
    assert [to_builtins(ev) for ev in with_users if ev.kind == EventKind.USER_MESSAGE] == [
        to_builtins(ev) for ev in full if ev.kind == EventKind.USER_MESSAGE
    ]


def test_the_projection_is_configuration_not_state() -> None:
    """A follower's saved state does not carry the projection of the read that saved it."""
    cls = adapter_class("claude-code")
    projected = cls(ParseOptions(kinds=RequestFolder.KINDS))
    full = cls(ParseOptions())
    full.restore(projected.snapshot())
    assert full.projected is None
    # A lean read's configuration (what it builds, its line-as-it-is feed) is not state either.
    lean = cls(ParseOptions(kinds=LEAN, check_verbatim=False))
    assert lean.lean
    assert lean.lean_feed is not None
    full.restore(lean.snapshot())
    assert not full.lean
    assert full.lean_feed is None
    assert full.want_tools


LEAN = RequestFolder.kinds_for("claude-code")


def _wanted(events: list[agentminutes.Event]) -> list[object]:
    return [to_builtins(ev) for ev in events if ev.kind in LEAN]


@pytest.mark.parametrize("path", CLAUDE_CODE, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_lean_read_gives_the_wanted_events_a_full_read_gives(path: Path) -> None:
    """Claude Code asked only for requests' events decodes leanly and builds nothing else,
    yet each event it gives is the full read's, unknowns included."""
    lean = _events(path, LEAN)
    assert {ev.kind for ev in lean} <= LEAN
    assert _wanted(lean) == _wanted(_events(path, None))


def test_usage_asks_for_system_events_only_where_requests_come_from_them() -> None:
    assert EventKind.SYSTEM not in RequestFolder.kinds_for("claude-code")
    assert EventKind.SYSTEM not in RequestFolder.kinds_for("gemini-cli")
    for name in ("codex", "copilot", "hermes"):
        assert RequestFolder.kinds_for(name) == RequestFolder.KINDS


def _assistant(
    message_id: str, uuid: str, content: str, usage: str = '{"input_tokens":3}'
) -> bytes:
    envelope = (
        f'"type":"assistant","sessionId":"s1","uuid":"{uuid}",'
        f'"timestamp":"2026-01-01T00:00:0{uuid[-1]}Z"'
    )
    message = f'"id":"{message_id}","model":"claude-x","content":{content},"usage":{usage}'
    return ("{" + envelope + ',"message":{' + message + "}}").encode()


@pytest.mark.parametrize(
    "line",
    [
        # a block whose field has the wrong type rejects the record, in both reads
        _assistant("m2", "u2", '[{"type":"text","text":5}]'),
        # a block type no rule knows
        _assistant("m2", "u2", '[{"type":"hologram"}]'),
        # a null block
        _assistant("m2", "u2", "[null]"),
        # usage that is not an object; a count that is not a number
        _assistant("m2", "u2", "[]", usage="7"),
        _assistant("m2", "u2", "[]", usage='{"input_tokens":"x"}'),
        # a lone surrogate escape (Go reads U+FFFD) in the model and in a skipped field
        _assistant("m2", "u2", '[{"type":"text","text":"a\\ud800b"}]'),
        _assistant("m2\\udc00", "u2", "[]"),
        # invalid UTF-8 in a field read and in one skipped
        _assistant("m2\xff", "u2", "[]").replace(b"\xc3\xbf", b"\xff"),
        _assistant(
            "m2", "u2", '[{"type":"tool_use","id":"t","name":"x","input":{"k":"\xff"}}]'
        ).replace(b"\xc3\xbf", b"\xff"),
        # a message that is null, or absent
        b'{"type":"assistant","sessionId":"s1","uuid":"u2","message":null}',
        b'{"type":"assistant","sessionId":"s1","uuid":"u2"}',
        # an envelope field of the wrong type
        _assistant("m2", "u2", "[]").replace(b'"sessionId":"s1"', b'"sessionId":1'),
    ],
)
def test_a_lean_read_reports_what_a_full_read_reports(tmp_path: Path, line: bytes) -> None:
    """A malformed record is an unknown event (or a request lost) in the lean read as in the
    full one; what Go reads differently (U+FFFD) is read so by both."""
    path = tmp_path / "t.jsonl"
    first = _assistant("m1", "u1", '[{"type":"text","text":"hi"}]')
    last = _assistant("m3", "u3", '[{"type":"thinking","thinking":"t","signature":"s"}]')
    path.write_bytes(b"\n".join([first, line, last]) + b"\n")
    full = _events(path, None)
    lean = _events(path, LEAN)
    assert _wanted(lean) == _wanted(full)
    assert any(ev.kind == EventKind.ASSISTANT_MESSAGE for ev in lean)
    summary = summarize(str(path), "claude-code")
    folder = RequestFolder("claude-code")
    expected = [compact(r) for ev in full for r in folder.add(ev)]
    assert msgspec.to_builtins(summary.requests) == msgspec.to_builtins(expected)
    assert summary.unknown_records == sum(ev.kind == EventKind.UNKNOWN for ev in full)


def _versioned(kind: str, uuid: str, rest: str) -> bytes:
    envelope = (
        f'"type":"{kind}","sessionId":"s1","version":"2.1.0","uuid":"{uuid}",'
        f'"timestamp":"2026-01-01T00:00:0{uuid[-1]}Z"'
    )
    return ("{" + envelope + rest + "}").encode()


def _versioned_assistant(message_id: str, uuid: str, kind: str = "assistant") -> bytes:
    message = (
        f'"id":"{message_id}","model":"claude-x","content":[{{"type":"text","text":"a"}}],'
        '"usage":{"input_tokens":3,"output_tokens":2}'
    )
    return _versioned(kind, uuid, ',"message":{' + message + "}")


def _lean_adapter(path: Path) -> tuple[list[agentminutes.Event], dict[str, int]]:
    from agentminutes.harness.claude_code.adapter import ClaudeCodeAdapter
    from agentminutes.pipeline.conversion import feed_lines

    adapter = ClaudeCodeAdapter(ParseOptions(permissive=True, check_verbatim=False, kinds=LEAN))
    lines = list(enumerate(path.read_bytes().splitlines(), 1))
    events = feed_lines(adapter, lines, checked=False) + adapter.finish()
    return events, adapter.skipped


def test_a_lean_read_passes_over_records_of_other_types_on_their_type(tmp_path: Path) -> None:
    """Once the session is open, a user, attachment or system record is read for its type
    alone and counted as unread; the requests are the full read's."""
    path = tmp_path / "t.jsonl"
    tool_result = (
        ',"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t",'
        '"content":"a \\"usage\\": {} and \\"assistant\\" in a result"}]}'
    )
    path.write_bytes(
        b"\n".join(
            [
                _versioned_assistant("m1", "u1"),
                _versioned("user", "u2", tool_result),
                _versioned("system", "u3", ',"subtype":"x","content":"c"'),
                _versioned("attachment", "u4", ',"attachment":{"type":"todo"}'),
                _versioned("file-history-snapshot", "u5", ""),
                _versioned_assistant("m2", "u6"),
            ]
        )
        + b"\n"
    )
    full = _events(path, None)
    lean, skipped = _lean_adapter(path)
    assert _wanted(lean) == _wanted(full)
    assert skipped == {
        "user/unread": 1,
        "system/unread": 1,
        "attachment/unread": 1,
        "file-history-snapshot": 1,
    }
    assert len(summarize(str(path), "claude-code").requests) == 2


@pytest.mark.parametrize(
    "line",
    [
        # a line that is no JSON, and one whose type is no string
        b'{"type":"user","uuid":"u2",',
        b'{"type":7,"uuid":"u2"}',
        # a type no rule knows
        _versioned("hologram", "u2", ""),
        # an assistant record whose type is spelled with an escape is an assistant record
        _versioned_assistant("m2", "u2", kind="\\u0061ssistant"),
    ],
)
def test_what_a_lean_read_does_not_pass_over(tmp_path: Path, line: bytes) -> None:
    """Only a record decoded as one of the passed-over types is passed over: a line that
    is no JSON or of an unknown type is an unknown event, an assistant's is read."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        b"\n".join([_versioned_assistant("m1", "u1"), line, _versioned_assistant("m3", "u3")])
        + b"\n"
    )
    full = _events(path, None)
    lean, skipped = _lean_adapter(path)
    assert _wanted(lean) == _wanted(full)
    assert not any(name.endswith("/unread") for name in skipped)
    summary = summarize(str(path), "claude-code")
    folder = RequestFolder("claude-code")
    expected = [compact(r) for ev in full for r in folder.add(ev)]
    assert msgspec.to_builtins(summary.requests) == msgspec.to_builtins(expected)
    assert summary.unknown_records == sum(ev.kind == EventKind.UNKNOWN for ev in full)


def test_a_lean_read_does_not_check_a_passed_over_record(tmp_path: Path) -> None:
    """What the lean read does not check (docs/performance.md): a malformed record of a
    passed-over type, once the session is open, is no unknown there; a full read reports it."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        b"\n".join(
            [
                _versioned_assistant("m1", "u1"),
                _versioned("attachment", "u2", ',"attachment":5'),
                _versioned_assistant("m3", "u3"),
            ]
        )
        + b"\n"
    )
    full = _events(path, None)
    assert sum(ev.kind == EventKind.UNKNOWN for ev in full) == 1
    lean, skipped = _lean_adapter(path)
    assert not any(ev.kind == EventKind.UNKNOWN for ev in lean)
    assert skipped == {"attachment/unread": 1}
    assert summarize(str(path), "claude-code").unknown_records == 0


def test_usage_full_reports_what_a_lean_read_passes_over(tmp_path: Path) -> None:
    """``usage --full`` reads every record as ``convert`` does: the malformed attachment a
    usage read passes over is reported, the requests and tokens are the same."""
    import json
    import os
    import subprocess
    import sys

    path = tmp_path / "t.jsonl"
    path.write_bytes(
        b"\n".join(
            [
                _versioned_assistant("m1", "u1"),
                _versioned("attachment", "u2", ',"attachment":5'),
                _versioned_assistant("m3", "u3"),
            ]
        )
        + b"\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_HOME", "_DIR"))}
    env.update(HOME=str(tmp_path), TZ="UTC", XDG_CACHE_HOME=str(tmp_path / ".cache"))

    command = [sys.executable, "-m", "agentminutes", "usage", str(path), "--harness"]
    command += ["claude-code", "--format", "json", "--no-cost"]

    def usage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )

    lean, full, lean_again = usage(), usage("--full"), usage()
    assert lean.returncode == full.returncode == 0, (lean.stderr, full.stderr)
    assert json.loads(lean.stdout) == json.loads(full.stdout)
    assert json.loads(lean.stdout)[0]["requests"] == 2
    assert "no rule classified" not in lean.stderr
    assert "1 records no rule classified" in full.stderr
    # A full read's summary is not cached: the next usage read is the lean one again.
    assert lean_again.stderr == lean.stderr.replace(
        "(0 unchanged, 1 read)", "(1 unchanged, 0 read)"
    )
