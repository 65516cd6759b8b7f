"""``view`` on a terminal and in pipes: every tool call, every result, the final answer, subagents."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from view_cases import CASES, IDS, conversation_args, events_of, stats_of

#: 40 tool calls and a subagent transcript beside it (``<session>/subagents/``).
WITH_SUBAGENT = FIXTURES / "claude-code" / "ccl" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize(("harness", "path", "conversation"), CASES, ids=IDS)
def test_the_text_view_shows_every_call_and_the_final_answer(
    harness: str, path: Path, conversation: str
) -> None:
    stats = stats_of(path, conversation)
    proc = run_cli(
        "view", "--format", "text", "--no-subagents", *conversation_args(conversation), path
    )
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    assert "\x1b[" not in text
    assert text.startswith(f"harness: {harness}")
    calls = re.findall(r"^\s*● (.+)$", text, re.M)
    orphans = text.count("(result with no recorded call)")
    assert len(calls) - orphans == stats["tool_calls"]
    for name, n in (stats.get("tool_calls_by_name") or {}).items():
        assert sum(1 for c in calls if c == name) >= n, name
    errors = len(re.findall(r"✗ error", text))
    assert errors >= stats.get("tool_errors", 0)
    answer = stats["final_answer"]
    assert _squash(answer) in _squash(text.split("── final answer", 1)[1])
    prompts = [
        e
        for e in events_of(path, conversation)
        if (e.get("user_message") or {}).get("origin") == "human"
    ]
    assert len(re.findall(r"^── turn \d+ ", text, re.M)) == len(prompts)


def test_long_results_are_cut_unless_full() -> None:
    cut = run_cli("view", "--format", "text", WITH_SUBAGENT).stdout.decode()
    whole = run_cli("view", "--format", "text", "--full", WITH_SUBAGENT).stdout.decode()
    assert "more lines (--full shows all)" in cut
    assert "more lines" not in whole
    assert len(whole) > len(cut)


def test_subagents_nest_under_the_call_that_started_them() -> None:
    text = run_cli("view", "--format", "text", WITH_SUBAGENT).stdout.decode()
    lines = text.splitlines()
    [at] = [i for i, line in enumerate(lines) if "▼ subagent a36efb2a1231c41e2" in line]
    assert lines[at].startswith("    ▼")  # one level in
    calls_before = [line for line in lines[:at] if re.match(r"^● ", line)]
    assert calls_before[-1] == "● Agent"  # the call that spawned it
    sub = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentminutes",
            "stats",
            "--format",
            "json",
            "--include-subagents",
            str(WITH_SUBAGENT),
        ],
        capture_output=True,
        check=True,
    )
    assert b'"a36efb2a1231c41e2"' in sub.stdout
    nested_calls = [line for line in lines[at:] if re.match(r"^    ● ", line)]
    assert len(nested_calls) == 7
    without = run_cli("view", "--format", "text", "--no-subagents", WITH_SUBAGENT).stdout.decode()
    assert "▼ subagent" not in without


def test_markdown_has_a_heading_per_turn_and_fenced_results() -> None:
    proc = run_cli("view", "--format", "markdown", "--no-subagents", WITH_SUBAGENT)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    assert text.startswith("# Session ef958aa1-0e93-49f0-bb71-150f63befcd1")
    assert text.count("**Tool call `") == 40
    assert "## Final answer" in text
    assert text.count("```") % 2 == 0


def test_a_session_id_finds_its_transcript(tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "-work-app"
    project.mkdir(parents=True)
    (project / WITH_SUBAGENT.name).write_bytes(WITH_SUBAGENT.read_bytes())
    env = {**os.environ, "HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentminutes",
            "view",
            "--format",
            "text",
            "--harness",
            "claude-code",
            "ef958aa1-0e93-49f0-bb71-150f63befcd1",
        ],
        capture_output=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert b"session: ef958aa1-0e93-49f0-bb71-150f63befcd1" in proc.stdout
    missing = run_cli("view", "no-such-session-id")
    assert missing.returncode == 1
    assert missing.stderr.decode().startswith("Error: no-such-session-id: no such file")


def _on_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentminutes", *args],
        stdin=terminal,
        stdout=terminal,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "120", "LINES": "40", "TERM": "xterm-256color", **env},
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


def test_on_a_terminal_it_is_styled_and_goes_through_the_pager(tmp_path: Path) -> None:
    log = tmp_path / "paged"
    pager = f"tee {log} >/dev/null; echo PAGER-RAN"
    code, shown = _on_terminal(["view", str(WITH_SUBAGENT)], {"PAGER": pager})
    assert code == 0
    assert "PAGER-RAN" in shown
    paged = log.read_text(encoding="utf-8")
    assert "\x1b[" in paged  # colours, as git log gives less -R
    assert "ef958aa1-0e93-49f0-bb71-150f63befcd1" in paged
    assert "▼ subagent a36efb2a1231c41e2" in paged
    plain = re.sub(r"\x1b\[[0-9;]*m", "", paged)
    assert "● TaskUpdate" in plain
    code, direct = _on_terminal(["view", "--no-pager", str(WITH_SUBAGENT)], {"PAGER": pager})
    assert code == 0
    assert "PAGER-RAN" not in direct
    assert "\x1b[" in direct


def test_transcript_text_cannot_drive_the_terminal(tmp_path: Path) -> None:
    lines = WITH_SUBAGENT.read_text(encoding="utf-8").splitlines(keepends=True)
    hostile = "\\u001b]0;owned\\u0007\\u001b[2J[bold red]markup[/bold red] :smile:"
    planted = [line.replace("TaskUpdate", "TaskUpdate" + hostile, 1) for line in lines]
    path = tmp_path / "hostile.jsonl"
    path.write_text("".join(planted), encoding="utf-8")
    code, shown = _on_terminal(["view", "--no-pager", str(path)], {})
    assert code == 0
    assert "\x1b]0;owned" not in shown
    assert "\x1b[2J" not in shown
    assert "[bold red]markup[/bold red] :smile:" in shown
