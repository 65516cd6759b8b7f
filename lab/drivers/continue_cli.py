"""Continue CLI (``@continuedev/cli``): ``cn -p … --auto`` against the Chat Completions route.

A local ``config.yaml`` (``--config``) names one OpenAI-provider model whose ``apiBase``
is the server; telemetry is off (``CONTINUE_CLI_ENABLE_TELEMETRY=0``). A second prompt
``--resume``s the last session. The session is ``~/.continue/sessions/<id>.json``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run
from lab.scenario import ToolCall

MODEL = "gpt-4.1"


class ContinueCli(Driver):
    """Continue's ``cn``, headless."""

    harness: ClassVar[str] = "continue-cli"
    package: ClassVar[str] = "@continuedev/cli"
    executable: ClassVar[str] = "cn"
    pinned: ClassVar[str] = "1.5.47"
    protocol: ClassVar[str] = "openai-chat"
    transcripts: ClassVar[tuple[str, ...]] = (".continue/sessions/*.json",)
    sources: ClassVar[tuple[str, ...] | None] = (
        ".continue/sessions/????????-????-????-????-????????????.json",
    )

    def env(self, run: Run) -> dict[str, str]:
        """No telemetry, no metrics."""
        return {"CONTINUE_CLI_ENABLE_TELEMETRY": "0", "CONTINUE_METRICS_ENABLED": "0"}

    def prepare(self, run: Run) -> None:
        """``~/.continue/config.yaml``: one model at the server."""
        config = run.home / ".continue" / "config.yaml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            "name: lab\n"
            "version: 1.0.0\n"
            "schema: v1\n"
            "models:\n"
            f"  - name: {MODEL}\n"
            "    provider: openai\n"
            f"    model: {MODEL}\n"
            f"    apiBase: {run.url}/v1\n"
            f"    apiKey: {DUMMY_KEY}\n"
            "    roles: [chat, edit, apply]\n"
        )

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``cn -p PROMPT --auto --config …``; later prompts ``--resume``."""
        config = str(run.home / ".continue" / "config.yaml")
        cmd = [str(run.executable), "-p", prompt, "--auto", "--config", config]
        return [*cmd, "--resume"] if index else cmd

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """``Bash``, ``Read``, ``Write`` (paths as given, the working folder being the cwd)."""
        if call.kind == "shell":
            return "Bash", {"command": call.params["command"]}
        path = str(run.work / call.params["path"])
        if call.kind == "read":
            return "Read", {"filepath": path}
        return "Write", {"filepath": path, "content": call.params.get("content", "")}
