"""GitHub Copilot CLI (``@github/copilot``): ``copilot -p`` with its own model provider (BYOK).

``COPILOT_PROVIDER_BASE_URL`` / ``COPILOT_PROVIDER_TYPE=openai`` / ``COPILOT_PROVIDER_API_KEY``
/ ``COPILOT_MODEL`` point it at the server's Chat Completions route with no GitHub sign-in;
``COPILOT_OFFLINE=true`` keeps it from GitHub's servers (telemetry off with it) and
``COPILOT_AUTO_UPDATE=false`` from updating. A second prompt ``--continue``s.
"""

from __future__ import annotations

from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run
from lab.scenario import ToolCall

MODEL = "gpt-4.1"


class Copilot(Driver):
    """Copilot CLI, headless, bring-your-own-key."""

    harness: ClassVar[str] = "copilot"
    package: ClassVar[str] = "@github/copilot"
    executable: ClassVar[str] = "copilot"
    pinned: ClassVar[str] = "1.0.102"
    protocol: ClassVar[str] = "openai-chat"
    follows: ClassVar[str | None] = ".copilot/session-state"
    transcripts: ClassVar[tuple[str, ...]] = (".copilot/session-state/**/events.jsonl",)

    def env(self, run: Run) -> dict[str, str]:
        """The provider, offline mode, no updates."""
        return {
            "COPILOT_PROVIDER_BASE_URL": f"{run.url}/v1",
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": DUMMY_KEY,
            "COPILOT_MODEL": MODEL,
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_HOME": str(run.home / ".copilot"),
        }

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``copilot -p PROMPT --allow-all-tools``; later prompts ``--continue``."""
        cmd = [str(run.executable), "-p", prompt, "--allow-all-tools", "--allow-all-paths"]
        return [*cmd, "--continue"] if index else cmd

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """``bash``, ``view``, ``create`` (absolute paths)."""
        if call.kind == "shell":
            return "bash", {"command": call.params["command"], "description": "Run a command"}
        path = str(run.work / call.params["path"])
        if call.kind == "read":
            return "view", {"path": path}
        return "create", {"path": path, "file_text": call.params.get("content", "")}
