"""``stats`` for a person at a terminal: a table there, the same JSON as ever anywhere else."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, run_cli

#: A real session with a real tool mix (40 calls of 7 tools) and subagents beside it.
TOOLS = FIXTURES / "claude-code" / "ccl" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"


def test_scripts_still_read_json_when_stdout_is_not_a_terminal(tmp_path: Path) -> None:
    piped = run_cli("stats", TOOLS)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == run_cli("stats", "--format", "json", TOOLS).stdout
    stats = json.loads(piped.stdout)
    assert stats["tool_calls"] == 40
    out = tmp_path / "stats.json"
    assert run_cli("stats", TOOLS, "-o", out).returncode == 0
    assert out.read_bytes() == piped.stdout


def test_the_table_shows_the_summary(tmp_path: Path) -> None:
    stats = json.loads(run_cli("stats", TOOLS).stdout)
    proc = run_cli("stats", "--format", "table", TOOLS)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    assert "\x1b[" not in text  # not a terminal: plain text
    for heading in ("tool mix", "tokens", "system activity", "final answer", "wall time"):
        assert heading in text
    tool_rows = text.split("tool mix", 1)[1].split("tokens", 1)[0].splitlines()
    for name, calls in stats["tool_calls_by_name"].items():
        [row] = [line for line in tool_rows if line.startswith(f"│ {name} ")]
        assert f" {calls} " in row
    assert f"{stats['totals']['total_prompt_tokens']:,}" in text
    assert stats["models"][0] in text
    assert stats["final_answer"].splitlines()[0] in text
    written = tmp_path / "stats.txt"
    assert run_cli("stats", "--format", "table", "-o", written, TOOLS).returncode == 0
    assert written.read_text(encoding="utf-8") == text


def test_on_a_terminal_the_table_is_the_default() -> None:
    controller, terminal = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentminutes", "stats", str(TOOLS)],
        stdout=terminal,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal's other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    assert proc.wait(timeout=60) == 0
    shown = b"".join(chunks).decode()
    assert "tool mix" in shown
    assert "TaskUpdate" in shown
    assert not shown.lstrip().startswith("{")


def test_the_task_table_splits_the_agents() -> None:
    proc = run_cli("stats", "--include-subagents", "--format", "table", TOOLS)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    task = json.loads(run_cli("stats", "--include-subagents", TOOLS).stdout)
    assert f"{len(task['transcripts'])} transcripts" in text
    assert "by agent" in text
    assert str(task["task"]["tool_calls"]) in text


def test_follow_refuses_every_whole_document_source_the_same_way() -> None:
    sources = {
        "chatgpt": FIXTURES / "chatgpt" / "conversations.json",
        "claude-ai": FIXTURES / "claude-ai" / "export.zip",
        "turns-db": FIXTURES / "turns-db" / "turns.db",
    }
    for harness, path in sources.items():
        for extra in ([], ["--harness", harness]):
            proc = run_cli("follow", "--idle-exit", "0.5", *extra, path)
            assert proc.returncode == 1
            assert proc.stdout == b""
            [line] = proc.stderr.decode().splitlines()
            assert line.startswith(f"Error: {path}: a {harness} source is a whole document")
            assert "use convert" in line


def test_the_table_tells_typed_prompts_from_interruptions_and_client_notices() -> None:
    """The JSON keeps the reference's one count; the table says what the messages are."""
    import json as _json

    from conftest import FIXTURES as _FIXTURES
    from conftest import run_cli as _run

    path = _FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
    texts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = _json.loads(line)
        if record.get("type") == "user":
            content = record["message"]["content"]
            texts.append(content if isinstance(content, str) else content[0].get("text", ""))
    interruptions = sum(t.startswith("[Request interrupted by user") for t in texts)
    notices = sum(t.startswith("<") for t in texts)
    typed = len(texts) - interruptions - notices
    assert (typed, interruptions, notices) == (3, 3, 1)  # the file: hello, hi, hi
    table = _run("stats", "--format", "table", path).stdout.decode()
    assert (
        f"{len(texts)} from the user ({typed} typed, {interruptions} interruptions, "
        f"{notices} sent by the client" in " ".join(table.split())
    )
    assert _json.loads(_run("stats", path).stdout)["user_messages"] == len(texts)
