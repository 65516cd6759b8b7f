"""Claude Code (``@anthropic-ai/claude-code``): ``claude -p`` against the Anthropic route.

``ANTHROPIC_BASE_URL`` points it at the server; ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``
turns off telemetry, error reporting, update checks and the feature-flag fetch;
``IS_SANDBOX=1`` lets root skip the permission prompts. A second prompt continues the
session (``--continue``).
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run
from lab.scenario import ToolCall


class ClaudeCode(Driver):
    """Claude Code, headless."""

    harness: ClassVar[str] = "claude-code"
    package: ClassVar[str] = "@anthropic-ai/claude-code"
    executable: ClassVar[str] = "claude"
    pinned: ClassVar[str] = "2.1.332"
    protocol: ClassVar[str] = "anthropic"
    follows: ClassVar[str | None] = ".claude/projects"
    transcripts: ClassVar[tuple[str, ...]] = (".claude/projects/**/*.jsonl",)
    features: ClassVar[tuple[str, ...]] = ("resume", "subagent", "compact")

    def env(self, run: Run) -> dict[str, str]:
        """Base URL, dummy key, every nonessential call off."""
        env = {
            "ANTHROPIC_BASE_URL": run.url,
            "ANTHROPIC_API_KEY": DUMMY_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1",
            "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
        }
        if os.geteuid() == 0:
            env["IS_SANDBOX"] = "1"
        return env

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``claude -p PROMPT`` with every tool allowed; later prompts ``--continue``."""
        cmd = [str(run.executable), "-p", prompt, "--dangerously-skip-permissions"]
        return [*cmd, "--continue"] if index else cmd

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """``Bash``, ``Read`` (absolute path), ``Write``, ``Agent``."""
        if call.kind == "agent":
            return "Agent", {
                "description": "Lab subagent",
                "prompt": call.params["prompt"],
                "subagent_type": "general-purpose",
            }
        if call.kind == "shell":
            return "Bash", {"command": call.params["command"], "description": "Run a command"}
        path = str(run.work / call.params["path"])
        if call.kind == "read":
            return "Read", {"file_path": path}
        return "Write", {"file_path": path, "content": call.params.get("content", "")}
