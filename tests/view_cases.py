"""One transcript of every harness (with tool calls where it records any) and a final answer,
for the ``view`` tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import FIXTURES, run_cli

#: (harness, transcript, conversation): a session of each harness.
CASES: list[tuple[str, Path, str]] = [
    ("aider", FIXTURES / "aider/simple-calculator/.aider.chat.history.md", ""),
    ("amp", FIXTURES / "amp/constructed/threads/T-019a4c1e-7d2b-7f3a-9c41-2e6b8d0f5a13.json", ""),
    ("antigravity", FIXTURES / "antigravity/agent-sessions/cli_small.jsonl", ""),
    ("chatgpt", FIXTURES / "chatgpt/constructed-modern.json", ""),
    ("claude-ai", FIXTURES / "claude-ai/export.zip", "c1000000"),
    ("claude-code", FIXTURES / "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl", ""),
    ("cline", FIXTURES / "cline/1769064454592/api_conversation_history.json", ""),
    (
        "continue-cli",
        FIXTURES / "continue-cli/constructed/sessions/3c9f2a41-5b7d-4e08-9a6c-1d2e3f405162.json",
        "",
    ),
    (
        "crush",
        FIXTURES / "crush/constructed/project/.crush/crush.db",
        "7d1e0b52-3c4a-4f6e-8a9b-0c1d2e3f4a5b",
    ),
    (
        "cursor",
        FIXTURES / "cursor/constructed/projects/home-dev-demo/agent-transcripts/"
        "6f1c2d7e-8a3b-4c5d-9e0f-1a2b3c4d5e6f/6f1c2d7e-8a3b-4c5d-9e0f-1a2b3c4d5e6f.jsonl",
        "",
    ),
    ("droid", FIXTURES / "droid/lab-0.225.2/tools.jsonl", ""),
    ("goose", FIXTURES / "goose/constructed/sessions/sessions.db", "20260108_1"),
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
