"""Gemini CLI (``@google/gemini-cli``): ``gemini -p … --yolo`` against the Gemini route.

``GOOGLE_GEMINI_BASE_URL`` and ``GEMINI_API_KEY`` point it at the server; usage statistics,
telemetry and update checks are off in ``~/.gemini/settings.json``. Its classifier calls
(next speaker, model routing, loop detection) demand JSON: the server answers them as side
requests. A second prompt ``--resume latest``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run, write_json
from lab.scenario import ToolCall

MODEL = "gemini-2.5-pro"


class GeminiCli(Driver):
    """Gemini CLI, headless."""

    harness: ClassVar[str] = "gemini-cli"
    package: ClassVar[str] = "@google/gemini-cli"
    executable: ClassVar[str] = "gemini"
    pinned: ClassVar[str] = "0.61.0"
    protocol: ClassVar[str] = "gemini"
    follows: ClassVar[str | None] = ".gemini/tmp"
    transcripts: ClassVar[tuple[str, ...]] = (".gemini/tmp/**/chats/*",)

    def env(self, run: Run) -> dict[str, str]:
        """The Gemini endpoint and key."""
        return {
            "GOOGLE_GEMINI_BASE_URL": run.url,
            "GEMINI_API_KEY": DUMMY_KEY,
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "GEMINI_TELEMETRY_ENABLED": "false",
        }

    def prepare(self, run: Run) -> None:
        """Settings: API-key auth, no statistics, telemetry or update checks."""
        write_json(
            run.home / ".gemini" / "settings.json",
            {
                "security": {
                    "auth": {"selectedType": "gemini-api-key"},
                    "folderTrust": {"enabled": False},
                },
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
                "general": {
                    "disableAutoUpdate": True,
                    "disableUpdateNag": True,
                    "enableAutoUpdate": False,
                    "enableAutoUpdateNotification": False,
                },
                "model": {"name": MODEL},
            },
        )

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``gemini -p PROMPT --yolo``; later prompts ``--resume latest``."""
        cmd = [str(run.executable), "-m", MODEL, "-p", prompt, "--yolo"]
        return [*cmd, "--resume", "latest"] if index else cmd

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """``run_shell_command``, ``read_file``, ``write_file`` (absolute paths)."""
        if call.kind == "shell":
            return "run_shell_command", {"command": call.params["command"]}
        path = str(run.work / call.params["path"])
        if call.kind == "read":
            return "read_file", {"file_path": path}
        return "write_file", {"file_path": path, "content": call.params.get("content", "")}
