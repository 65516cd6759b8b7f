"""Codex (``@openai/codex``): ``codex exec`` against the Responses route.

A ``[model_providers.lab]`` entry in ``CODEX_HOME/config.toml`` (``base_url``,
``wire_api = "responses"``, ``env_key``) points it at the server; analytics, OTel export,
update checks and the web-search tool are off. A second prompt is ``codex exec resume --last``.
Codex has no file-reading tool: a scenario's ``read`` is a ``cat`` through its shell tool.
"""

from __future__ import annotations

import shlex
from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run
from lab.scenario import ToolCall

MODEL = "gpt-5.1-codex"


class Codex(Driver):
    """Codex CLI, ``exec`` mode."""

    harness: ClassVar[str] = "codex"
    package: ClassVar[str] = "@openai/codex"
    executable: ClassVar[str] = "codex"
    pinned: ClassVar[str] = "0.171.0"
    protocol: ClassVar[str] = "openai-responses"
    follows: ClassVar[str | None] = ".codex/sessions"
    transcripts: ClassVar[tuple[str, ...]] = (".codex/sessions/**/*.jsonl",)

    def env(self, run: Run) -> dict[str, str]:
        """``CODEX_HOME`` inside the temporary HOME, the provider's key."""
        return {
            "CODEX_HOME": str(run.home / ".codex"),
            "LAB_API_KEY": DUMMY_KEY,
            "CODEX_DISABLE_UPDATE_CHECK": "1",
        }

    def prepare(self, run: Run) -> None:
        """``config.toml``: the lab provider, no approvals, no sandbox, nothing outside."""
        config = f"""model = "{MODEL}"
model_provider = "lab"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
web_search = "disabled"

[model_providers.lab]
name = "lab"
base_url = "{run.url}/v1"
wire_api = "responses"
env_key = "LAB_API_KEY"
request_max_retries = 4
stream_max_retries = 2

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
log_user_prompt = false
"""
        path = run.home / ".codex" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(config)

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``codex exec PROMPT``; later prompts ``codex exec resume --last PROMPT``."""
        head = [str(run.executable), "exec"]
        if index:
            head += ["resume", "--last"]
        return [*head, "--skip-git-repo-check", prompt]

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """Whichever shell tool this release offers; reads and writes go through it."""
        if call.kind == "shell":
            command = call.params["command"]
        elif call.kind == "read":
            command = f"cat {shlex.quote(call.params['path'])}"
        else:
            command = f"printf %s {shlex.quote(call.params.get('content', ''))} > {shlex.quote(call.params['path'])}"
        if "exec_command" in offered:
            return "exec_command", {"cmd": command}
        if "shell_command" in offered:
            return "shell_command", {"command": command}
        return "shell", {"command": ["bash", "-lc", command]}
