"""The command line, run for real in a subprocess: outputs, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
SKIPPY = FIXTURES / "claude-code" / "ohcconfig" / "b21f5989-26ca-432d-9d08-9c11aebeb752.jsonl"
TOOLS = FIXTURES / "claude-code" / "ccl" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def assert_one_line_error(proc: object, *needles: str) -> str:
    assert proc.returncode != 0  # type: ignore[attr-defined]
    err = proc.stderr.decode()  # type: ignore[attr-defined]
    assert "Traceback" not in err
    [line] = err.strip().splitlines()
    assert line.startswith("Error: ")
    for needle in needles:
        assert needle in line, line
    return line


def test_version() -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.decode().startswith("agentminutes version ")


def test_convert_json_is_the_jsonl_events_in_one_document() -> None:
    whole = run_cli("convert", SKIPPY)
    stream = run_cli("convert", "--format", "jsonl", SKIPPY)
    assert whole.returncode == stream.returncode == 0
    doc = json.loads(whole.stdout)
    events = [json.loads(line) for line in stream.stdout.splitlines()]
    assert doc["events"] == events
    assert doc["meta"] == events[0]["session_meta"]
    skipped = doc["report"]["skipped_records"]
    summary = stream.stderr.decode().strip()
    assert summary.startswith(
        f"agentminutes: {len(events)} events, {sum(skipped.values())} skipped records ("
    )
    for kind, n in skipped.items():
        assert f"{kind} {n}" in summary


def test_stdin_and_output_file(tmp_path: Path) -> None:
    out = tmp_path / "session.json"
    via_file = run_cli("convert", "-o", out, CC)
    via_stdin = run_cli("convert", "-", stdin=CC.read_bytes())
    assert via_file.returncode == via_stdin.returncode == 0
    assert via_file.stdout == b""
    assert json.loads(out.read_bytes())["events"] == json.loads(via_stdin.stdout)["events"]


def test_stats_and_detect() -> None:
    stats = run_cli("stats", CC)
    assert stats.returncode == 0
    summary = json.loads(stats.stdout)
    session = json.loads(run_cli("convert", CC).stdout)
    assert summary["events"] == len(session["events"])
    assert summary["totals"] == session["totals"]
    detect = run_cli("detect", CC)
    assert detect.stdout == b"claude-code\tcertain\n"


def test_promote_and_payload_flags_reach_the_pipeline() -> None:
    proc = run_cli("convert", "--max-payload-bytes", "10", "--format", "jsonl", TOOLS)
    assert proc.returncode == 0
    results = [json.loads(x) for x in proc.stdout.splitlines() if b'"tool_result"' in x]
    blocks = [b for r in results for b in r["tool_result"].get("content", [])]
    assert blocks
    assert all(b.get("truncated") or len(b.get("text", "").encode()) <= 10 for b in blocks)
    # A promotion that does not exist is a value not allowed: the error and a usage hint.
    proc = run_cli("convert", "--promote", "nope:thing", CC)
    error, usage = proc.stderr.decode().splitlines()
    assert (proc.returncode, usage[:26]) == (2, "Usage: agentminutes conver")
    assert error.startswith("Error: --promote: ")
    assert "nope:thing" in error


@pytest.mark.parametrize("verb", ["convert", "stats"])
def test_a_parse_error_prints_nothing_but_one_line(verb: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(
        b"".join(lines_of(CC)[:3]) + b'{"type":"user", oops\n' + b"".join(lines_of(CC)[3:])
    )
    proc = run_cli(verb, bad)
    assert proc.stdout == b""
    assert_one_line_error(
        proc, str(bad), "claude-code", "invalid JSON", "at line 4", "harness version"
    )


def test_jsonl_keeps_what_was_streamed_before_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(lines_of(CC)[:5]) + b"garbage\n")
    proc = run_cli("convert", "--format", "jsonl", bad)
    assert_one_line_error(proc, "at line 6")
    assert proc.stdout.count(b"\n") >= 2


BROKEN = {
    "truncated last line": lambda p: p.write_bytes(b"".join(lines_of(CC)[:4])[:-40]),
    "binary garbage": lambda p: p.write_bytes(bytes(range(256)) * 40),
    "empty file": lambda p: p.write_bytes(b""),
    "invalid UTF-8": lambda p: p.write_bytes(
        b"".join(lines_of(CC)[:2]) + lines_of(CC)[2].replace(b'"user"', b'"us\xff\xfeer"', 1)
    ),
    "blank lines only": lambda p: p.write_bytes(b"\n\n   \n"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
@pytest.mark.parametrize("verb", ["convert", "stats", "detect"])
def test_broken_inputs_fail_in_one_line(case: str, verb: str, tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    BROKEN[case](path)
    proc = run_cli(verb, path)
    if verb == "detect" and case in ("truncated last line", "invalid UTF-8"):
        assert proc.returncode == 0  # the head is still recognizably Claude Code
        return
    line = assert_one_line_error(proc, str(path))
    assert len(line) < 400


def test_missing_file_and_directory(tmp_path: Path) -> None:
    for verb in ("convert", "stats", "detect"):
        assert_one_line_error(run_cli(verb, tmp_path / "nope.jsonl"), "nope.jsonl", "no such file")
        assert_one_line_error(run_cli(verb, tmp_path), "is a directory")


def test_a_50_mb_single_line_converts(tmp_path: Path) -> None:
    first_user = next(x for x in lines_of(CC) if json.loads(x).get("type") == "user")
    record = json.loads(first_user)
    record["message"] = {"role": "user", "content": "x" * 50_000_000}
    path = tmp_path / "big.jsonl"
    path.write_bytes(lines_of(CC)[0] + json.dumps(record).encode() + b"\n")
    proc = run_cli("convert", "--format", "jsonl", path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    last = json.loads(proc.stdout.splitlines()[-1])
    assert len(last["user_message"]["content"][0]["text"]) == 50_000_000


def test_usage_errors_say_what_is_wrong_then_how_to_call_the_command() -> None:
    for args, needle in (
        (("convert", "--bogus", CC), "--bogus"),
        (("convert", "--format", "xml", CC), "xml"),
        (("nonsense",), "nonsense"),
        # Values the table checks through the registry, and one the command judges.
        (("convert", "--harness", "nope", CC), "nope"),
        (("convert", "--promote", "codex:nope", CC), "codex:nope"),
    ):
        proc = run_cli(*args)
        assert proc.returncode == 2
        error, usage = proc.stderr.decode().splitlines()
        assert error.startswith("Error: ")
        assert needle in error
        assert usage.startswith("Usage: agentminutes ")
    # Options that contradict each other are an error of the run: one line, status 1.
    assert_one_line_error(run_cli("convert", "--all", "--conversation", "x", CC), "--conversation")


def test_help_is_not_an_error() -> None:
    for args in (("--help",), ("convert", "--help"), ("stats", "-h")):
        proc = run_cli(*args)
        assert proc.returncode == 0
        assert b"Usage:" in proc.stdout


def test_no_traceback_when_stdout_closes_early() -> None:
    import subprocess
    import sys

    p = subprocess.Popen(
        [sys.executable, "-m", "agentminutes", "convert", "--format", "jsonl", str(SKIPPY)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert p.stdout is not None
    p.stdout.readline()
    p.stdout.close()
    _, err = p.communicate(timeout=30)
    assert b"Traceback" not in err


def test_a_half_written_last_line_says_the_agent_may_still_be_writing(tmp_path: Path) -> None:
    live = tmp_path / "live.jsonl"
    lines = lines_of(CC)
    live.write_bytes(b"".join(lines[:5]) + lines[5][:150])  # the sixth line, half written
    line = assert_one_line_error(run_cli("stats", live), "truncated", "at line 6")
    assert "the agent may still be writing it" in line
    # A broken line in the middle is just broken.
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"".join(lines[:5]) + lines[5][:150] + b"\n" + b"".join(lines[6:]))
    line = assert_one_line_error(run_cli("stats", broken), "at line 6")
    assert "may still be writing" not in line
