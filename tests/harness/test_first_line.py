"""A first line that is no record (a comment, a cut record, JSON that is no object).

Detection reads past it (the sniff window); strict conversion fails on it, naming line 1;
``--permissive`` keeps it as an ``unknown`` event that follows the session's
``session_meta`` (the stream opens with its meta), and converts the rest exactly as the
transcript without that line converts. All through the real command line, on real
transcripts of each line format that records a session id up front.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, run_cli

#: Real transcripts: (harness, path). Codex in both rollout shapes.
TRANSCRIPTS = [
    ("claude-code", FIXTURES / "claude-code" / "profilesite-18cb2580.jsonl"),
    (
        "codex",
        FIXTURES
        / "codex"
        / "cabinet-gov"
        / "rollout-2026-04-30T11-12-25-019ddc5f-977f-7fd3-a392-a6477e6b25b2.jsonl",
    ),
    (
        "codex",  # legacy: a bare metadata line, then bare items
        FIXTURES
        / "codex"
        / "nitta-dotfiles"
        / "rollout-2025-08-26T03-00-07-81037e80-2462-435b-bb4c-b4437eae0f88.jsonl",
    ),
    (
        "qwen-code",
        FIXTURES / "qwen-code" / "todo-list" / "734553eb-442f-4bd2-8002-4cd9ecd958e3.jsonl",
    ),
    (
        "qwen-code",
        FIXTURES / "qwen-code" / "todo-list" / "5c7e5311-5ac2-4e52-a4c0-d938f6e98268.jsonl",
    ),
]

#: First lines that are no record, and what ``raw`` keeps of each (always JSON).
TOPS: list[tuple[str, bytes, Any]] = [
    (
        "comment",
        b"// Source: exported from a session viewer",
        "// Source: exported from a session viewer",
    ),
    ("cut-record", b'{"type":"user","sessionId":"0f3c', '{"type":"user","sessionId":"0f3c'),
    ("array", b"[1, 2, 3]", [1, 2, 3]),
    ("string", b'"a bare string"', "a bare string"),
    ("number", b"42", 42),
]


def _shifted(value: Any, by: int) -> Any:
    """*value* with every provenance line number moved down *by* lines."""
    if isinstance(value, dict):
        return {
            k: v + by if k in ("line", "end_line") and isinstance(v, int) else _shifted(v, by)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_shifted(v, by) for v in value]
    return value


def _ids(case: tuple[str, Path]) -> str:
    return f"{case[0]}-{case[1].stem[:12]}"


@pytest.mark.parametrize("at", range(len(TRANSCRIPTS)), ids=[_ids(t) for t in TRANSCRIPTS])
def test_a_first_line_that_is_no_record(at: int, tmp_path: Path) -> None:
    harness, source = TRANSCRIPTS[at]
    strict = run_cli("convert", source)
    assert strict.returncode == 0, strict.stderr
    original = json.loads(strict.stdout)
    # Two kinds of top line per transcript, so that every kind meets every harness.
    for name, top, kept in (TOPS[at % len(TOPS)], TOPS[(at + 2) % len(TOPS)]):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(top + b"\n" + source.read_bytes())

        detected = run_cli("detect", path)
        assert detected.stdout.split(b"\t")[0] == harness.encode(), (name, detected.stderr)

        failed = run_cli("convert", path)
        assert failed.returncode == 1, name
        [message] = failed.stderr.decode().splitlines()
        assert f"{path}: {harness}: " in message
        assert message.endswith(" at line 1"), message

        proc = run_cli("convert", "--permissive", path)
        assert proc.returncode == 0, (name, proc.stderr)
        doc = json.loads(proc.stdout)
        events = doc["events"]
        assert events[0]["kind"] == "session_meta", name
        unknowns = [e for e in events if e["kind"] == "unknown"]
        assert events[1] == unknowns[0], name  # right after the meta
        assert unknowns[0]["provenance"] == {"line": 1, "end_line": 1}
        assert unknowns[0]["unknown"]["raw"] == kept
        assert len(unknowns) == 1
        # Everything else is the transcript's own conversion, one line further down.
        expected = _shifted(original, 1)
        assert [e for e in events if e["kind"] != "unknown"] == expected["events"], name
        assert doc["report"] == {**expected["report"], "unknown_events": 1}
        assert {k: v for k, v in doc.items() if k not in ("events", "report")} == {
            k: v for k, v in expected.items() if k not in ("events", "report")
        }


@pytest.mark.parametrize("case", TRANSCRIPTS, ids=_ids)
def test_a_first_record_replaced_by_a_cut_one(case: tuple[str, Path], tmp_path: Path) -> None:
    """The first record itself is damaged: the stream still opens with a session_meta."""
    harness, source = case
    first, rest = source.read_bytes().split(b"\n", 1)
    path = tmp_path / "cut.jsonl"
    path.write_bytes(first[: len(first) // 2] + b"\n" + rest)
    proc = run_cli("convert", "--permissive", "--format", "jsonl", path)
    if harness == "codex" and b"could not detect" in proc.stderr:
        # A legacy Codex rollout without its metadata line is bare items: nothing says Codex.
        assert b"session_meta" not in rest.split(b"\n", 1)[0]
        return
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(x) for x in proc.stdout.splitlines()]
    assert events[0]["kind"] == "session_meta"
    assert events[0]["session_meta"]["harness"] == harness
    assert events[1]["kind"] == "unknown"
    assert events[1]["provenance"]["line"] == 1
    assert events[1]["unknown"]["raw"] == first[: len(first) // 2].decode("utf-8", "replace")
    # The rest is what the lines after it convert to on their own.
    alone = tmp_path / "rest.jsonl"
    alone.write_bytes(rest)
    rest_events = json.loads(run_cli("convert", alone).stdout)["events"]
    assert events[2:] == _shifted(rest_events[1:], 1)


def test_follow_opens_with_the_meta_too(tmp_path: Path) -> None:
    """``follow --permissive`` writes what ``convert --permissive`` writes."""
    source = TRANSCRIPTS[0][1]
    path = tmp_path / "comment.jsonl"
    path.write_bytes(TOPS[0][1] + b"\n" + source.read_bytes())
    converted = run_cli("convert", "--permissive", "--format", "jsonl", path)
    followed = run_cli("follow", "--permissive", "--idle-exit", "0.3", path)
    assert followed.returncode == 0, followed.stderr
    assert followed.stdout == converted.stdout
    assert json.loads(followed.stdout.splitlines()[0])["kind"] == "session_meta"


def test_only_lines_that_are_no_records(tmp_path: Path) -> None:
    """No record ever comes: the unknowns still go out, at the end, in line order."""
    from agentminutes.harness import ParseOptions, adapter_class

    for harness in ("claude-code", "codex"):
        adapter = adapter_class(harness)(ParseOptions(permissive=True))
        assert adapter.feed(b"// one", 1) == []
        assert adapter.feed(b"[2]", 2) == []
        events = adapter.finish()
        assert [e.provenance.line for e in events if e.provenance] == [1, 2], harness
        assert all(e.kind == "unknown" for e in events)
    # Qwen Code: lines that are no records are an older whole document, which this is not.
    adapter = adapter_class("qwen-code")(ParseOptions(permissive=True))
    assert adapter.feed(b"// one", 1) == []
    assert adapter.feed(b"[2]", 2) == []
    [event] = adapter.finish()
    assert event.unknown is not None
    assert "invalid JSON document" in event.unknown.reason
