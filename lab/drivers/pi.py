"""pi (``@mariozechner/pi-coding-agent``): ``pi -p`` with a custom OpenAI-compatible provider.

``~/.pi/agent/models.json`` declares a ``lab`` provider (``openai-completions`` API, base
URL, the key's variable) and its model; ``PI_OFFLINE`` keeps it from fetching anything at
start-up and ``PI_SKIP_VERSION_CHECK`` from checking for updates. A second prompt
``--continue``s.
"""

from __future__ import annotations

from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run, write_json
from lab.scenario import ToolCall

MODEL = "lab-model"


class Pi(Driver):
    """pi, print mode."""

    harness: ClassVar[str] = "pi"
    package: ClassVar[str] = "@mariozechner/pi-coding-agent"
    executable: ClassVar[str] = "pi"
    pinned: ClassVar[str] = "0.73.1"
    protocol: ClassVar[str] = "openai-chat"
    follows: ClassVar[str | None] = ".pi/agent/sessions"
    transcripts: ClassVar[tuple[str, ...]] = (".pi/agent/sessions/**/*.jsonl",)

    def env(self, run: Run) -> dict[str, str]:
        """The provider's key; no start-up fetches, no version check."""
        return {
            "LAB_API_KEY": DUMMY_KEY,
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
            "PI_CODING_AGENT_DIR": str(run.home / ".pi" / "agent"),
        }

    def prepare(self, run: Run) -> None:
        """``models.json``: the lab provider and its one model."""
        write_json(
            run.home / ".pi" / "agent" / "models.json",
            {
                "providers": {
                    "lab": {
                        "baseUrl": f"{run.url}/v1",
                        "api": "openai-completions",
                        "apiKey": "LAB_API_KEY",
                        "models": [
                            {
                                "id": MODEL,
                                "name": "Lab model",
                                "reasoning": True,
                                "input": ["text"],
                                "contextWindow": 128000,
                                "maxTokens": 8192,
                                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                            }
                        ],
                    }
                }
            },
        )
        write_json(
            run.home / ".pi" / "agent" / "settings.json",
            {"defaultProvider": "lab", "defaultModel": MODEL},
        )

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``pi -p PROMPT`` on the lab model; later prompts ``--continue``."""
        cmd = [str(run.executable), "--provider", "lab", "--model", MODEL, "-p", prompt]
        return [*cmd, "--continue"] if index else cmd

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """``bash``, ``read``, ``write``."""
        if call.kind == "shell":
            return "bash", {"command": call.params["command"]}
        path = str(run.work / call.params["path"])
        if call.kind == "read":
            return "read", {"path": path}
        return "write", {"path": path, "content": call.params.get("content", "")}
