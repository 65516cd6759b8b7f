"""Qwen Code (``@qwen-code/qwen-code``): ``qwen -p … --yolo`` against the Chat Completions route.

``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``OPENAI_MODEL`` point it at the server; usage
statistics and the background memory extraction are off in ``~/.qwen/settings.json``. A second prompt ``--continue``s.
"""

from __future__ import annotations

from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run, write_json
from lab.scenario import ToolCall

MODEL = "qwen3-coder-plus"


class QwenCode(Driver):
    """Qwen Code, headless."""

    harness: ClassVar[str] = "qwen-code"
    package: ClassVar[str] = "@qwen-code/qwen-code"
    executable: ClassVar[str] = "qwen"
    pinned: ClassVar[str] = "0.24.4"
    protocol: ClassVar[str] = "openai-chat"
    follows: ClassVar[str | None] = ".qwen/projects"
    transcripts: ClassVar[tuple[str, ...]] = (".qwen/projects/**/*.jsonl", ".qwen/tmp/**/chats/*")

    def env(self, run: Run) -> dict[str, str]:
        """The OpenAI-compatible endpoint, key and model."""
        return {
            "OPENAI_BASE_URL": f"{run.url}/v1",
            "OPENAI_API_KEY": DUMMY_KEY,
            "OPENAI_MODEL": MODEL,
        }

    def prepare(self, run: Run) -> None:
        """Settings: OpenAI auth, no usage statistics, no update checks."""
        write_json(
            run.home / ".qwen" / "settings.json",
            {
                "security": {"auth": {"selectedType": "openai"}},
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                "model": {"name": MODEL},
                # The background memory extraction is a request of its own, with tools,
                # after the answer: not part of the scripted conversation.
                "memory": {"enableManagedAutoMemory": False},
            },
        )

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``qwen -p PROMPT --yolo``; later prompts ``--continue``."""
        cmd = [str(run.executable), "-p", prompt, "--yolo"]
        return [*cmd, "--continue"] if index else cmd

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """``run_shell_command``, ``read_file``, ``write_file`` (absolute paths)."""
        if call.kind == "shell":
            return "run_shell_command", {"command": call.params["command"], "is_background": False}
        path = str(run.work / call.params["path"])
        if call.kind == "read":
            return "read_file", {"file_path": path}
        return "write_file", {"file_path": path, "content": call.params.get("content", "")}
