"""Kimi CLI (``kimi-cli`` on PyPI): ``kimi --print -p … --yolo`` against the Chat Completions route.

A ``~/.kimi/config.toml`` names one provider of type ``kimi`` (Moonshot's OpenAI-compatible
API, the type Kimi's own login sets up) whose ``base_url`` is the server, with telemetry off.
A second prompt ``--continue``s the folder's last session. 1.51.0 is the last release that runs:
1.52.0, the final one, only prints that kimi-cli is no longer maintained (its successor, Kimi
Code, installs from a script, not a registry). Kimi CLI needs Python 3.12 or newer.
"""

from __future__ import annotations

from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run
from lab.scenario import ToolCall

MODEL = "kimi-k2-lab"


class Kimi(Driver):
    """Kimi CLI, headless (print mode)."""

    harness: ClassVar[str] = "kimi"
    registry: ClassVar[str] = "pypi"
    package: ClassVar[str] = "kimi-cli"
    executable: ClassVar[str] = "kimi"
    pinned: ClassVar[str] = "1.51.0"
    protocol: ClassVar[str] = "openai-chat"
    python: ClassVar[str] = "3.13"
    transcripts: ClassVar[tuple[str, ...]] = (
        ".kimi/sessions/*/*/wire.jsonl",
        ".kimi/sessions/*/*/context.jsonl",
        ".kimi/sessions/*/*/state.json",
    )
    sources: ClassVar[tuple[str, ...] | None] = (".kimi/sessions/*/*/wire.jsonl",)

    def prepare(self, run: Run) -> None:
        """``config.toml``: the lab as the default model's provider, telemetry off."""
        config = run.home / ".kimi" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            'default_model = "lab"\n'
            "telemetry = false\n\n"
            "[providers.lab]\n"
            'type = "kimi"\n'
            f'base_url = "{run.url}/v1"\n'
            f'api_key = "{DUMMY_KEY}"\n\n'
            "[models.lab]\n"
            'provider = "lab"\n'
            f'model = "{MODEL}"\n'
            "max_context_size = 200000\n"
        )

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``kimi --print -p PROMPT --yolo``; later prompts ``--continue``."""
        cmd = [str(run.executable), "--print", "-p", prompt, "--yolo"]
        return [*cmd, "--continue"] if index else cmd

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """``Shell``, ``ReadFile``, ``WriteFile`` (absolute paths)."""
        if call.kind == "shell":
            return "Shell", {"command": call.params["command"]}
        path = str(run.work / call.params["path"])
        if call.kind == "read":
            return "ReadFile", {"path": path}
        return "WriteFile", {"path": path, "content": call.params.get("content", "")}
