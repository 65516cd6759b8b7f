"""One transcript of every harness with tool calls and a final answer, for the ``view`` tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import FIXTURES, run_cli

#: (harness, transcript, conversation): a session of each harness with tool calls.
CASES: list[tuple[str, Path, str]] = [
    ("antigravity", FIXTURES / "antigravity/agent-sessions/cli_small.jsonl", ""),
    ("chatgpt", FIXTURES / "chatgpt/constructed-modern.json", ""),
    ("claude-ai", FIXTURES / "claude-ai/export.zip", "c1000000"),
    ("claude-code", FIXTURES / "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl", ""),
    ("cline", FIXTURES / "cline/1769064454592/api_conversation_history.json", ""),
    ("codex", FIXTURES / "codex/agent-sessions/codex_small_0.146.0.jsonl", ""),
    ("copilot", FIXTURES / "copilot/agent-sessions/copilot_large.jsonl", ""),
    ("gemini-cli", FIXTURES / "gemini-cli/agent-sessions/gemini_jsonl_v040.jsonl", ""),
    ("kimi", FIXTURES / "kimi/lab-1.51.0/tools.wire.jsonl", ""),
    (
        "opencode",
        FIXTURES / "opencode/constructed/storage/message/ses_0b0000000001TreeSession01/msg_t1.json",
        "",
    ),
    ("pi", FIXTURES / "pi/constructed/v3-fork-tools.jsonl", ""),
    (
        "qwen-code",
        FIXTURES / "qwen-code/constructed/0a11ce00-0000-4000-8000-000000000001.jsonl",
        "",
    ),
    ("turns-db", FIXTURES / "turns-db/turns.db", "5cf06c5f"),
]

IDS = [c[0] for c in CASES]


def conversation_args(conversation: str) -> list[str]:
    """``--conversation ID`` when the source holds several."""
    return ["--conversation", conversation] if conversation else []


def events_of(path: Path, conversation: str) -> list[dict[str, Any]]:
    """The transcript's events as ``convert --format jsonl`` writes them."""
    proc = run_cli("convert", "--format", "jsonl", *conversation_args(conversation), path)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def stats_of(path: Path, conversation: str) -> dict[str, Any]:
    """``stats`` of the transcript."""
    proc = run_cli("stats", "--format", "json", *conversation_args(conversation), path)
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))
