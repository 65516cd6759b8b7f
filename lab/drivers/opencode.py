"""OpenCode (``opencode-ai``): ``opencode run`` with a custom OpenAI-compatible provider.

``opencode.json`` in the config folder declares a ``lab`` provider
(``@ai-sdk/openai-compatible``, base URL, key) and model; the models.dev catalog fetch,
auto-update, sharing, LSP downloads and default plugins are off by their
``OPENCODE_DISABLE_*`` variables. Its transcript is the SQLite database (and WAL) under
``~/.local/share/opencode/``. A second prompt ``--continue``s.
"""

from __future__ import annotations

from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run, write_json
from lab.scenario import ToolCall

MODEL = "lab-model"


class OpenCode(Driver):
    """OpenCode, ``run`` mode."""

    harness: ClassVar[str] = "opencode"
    package: ClassVar[str] = "opencode-ai"
    executable: ClassVar[str] = "opencode"
    pinned: ClassVar[str] = "1.18.33"
    protocol: ClassVar[str] = "openai-chat"
    transcripts: ClassVar[tuple[str, ...]] = (
        ".local/share/opencode/*.db",
        ".local/share/opencode/*.db-wal",
    )
    sources: ClassVar[tuple[str, ...] | None] = (".local/share/opencode/*.db",)

    def env(self, run: Run) -> dict[str, str]:
        """No catalog fetch, update, share, LSP download or default plugin."""
        return {
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_CLAUDE_CODE": "1",
            "LAB_API_KEY": DUMMY_KEY,
        }

    def prepare(self, run: Run) -> None:
        """``opencode.json``: the lab provider, its model, every permission granted."""
        write_json(
            run.home / ".config" / "opencode" / "opencode.json",
            {
                "$schema": "https://opencode.ai/config.json",
                "autoupdate": False,
                "share": "disabled",
                "model": f"lab/{MODEL}",
                "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny"},
                "provider": {
                    "lab": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "Lab",
                        "options": {"baseURL": f"{run.url}/v1", "apiKey": DUMMY_KEY},
                        "models": {
                            MODEL: {"name": "Lab model", "tool_call": True, "reasoning": True}
                        },
                    }
                },
            },
        )

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``opencode run PROMPT``; later prompts ``--continue``."""
        cmd = [str(run.executable), "run", "--model", f"lab/{MODEL}"]
        return [*cmd, "--continue", prompt] if index else [*cmd, prompt]

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """``bash``, ``read``, ``write`` (absolute paths)."""
        if call.kind == "shell":
            return "bash", {"command": call.params["command"], "description": "Run a command"}
        path = str(run.work / call.params["path"])
        if call.kind == "read":
            return "read", {"filePath": path}
        return "write", {"filePath": path, "content": call.params.get("content", "")}
