"""Factory Droid (``@factory/cli``): ``droid exec`` with a custom (bring-your-own-key) model.

``~/.factory/settings.json`` declares one ``customModels`` entry of provider
``generic-chat-completion-api`` whose ``baseUrl`` is the server: no Factory login is needed.
The npm package ``@factory/cli`` only carries a launcher; the binary is in a platform package
(``@factory/cli-linux-x64``), installed here directly (the registry holds platform releases the
launcher's own version does not always match: 0.225.2 beside a launcher of 0.225.1). Auto-update
is off (``FACTORY_DROID_AUTO_UPDATE_ENABLED``). A second prompt cannot be recorded: ``droid exec
-s <session id>`` fetches the session from api.factory.ai first ("Failed to fetch session"), even
for a custom model, so resuming needs Factory's service. Droid also tries to reach Factory for
credentials and telemetry; here those calls fail (no network), and the session is written anyway.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, ClassVar

from lab.drivers import CACHE, DUMMY_KEY, Driver, Run, write_json
from lab.scenario import ToolCall

MODEL = "droid-lab"
PLATFORM = "@factory/cli-linux-x64"


class Droid(Driver):
    """Factory Droid, headless (``droid exec``)."""

    harness: ClassVar[str] = "droid"
    package: ClassVar[str] = "@factory/cli"
    executable: ClassVar[str] = "droid"
    pinned: ClassVar[str] = "0.225.2"
    protocol: ClassVar[str] = "openai-chat"
    transcripts: ClassVar[tuple[str, ...]] = (
        ".factory/sessions/*/*.jsonl",
        ".factory/sessions/*/*.settings.json",
    )
    sources: ClassVar[tuple[str, ...] | None] = (".factory/sessions/*/*.jsonl",)
    #: ``droid exec -s`` resumes through Factory's service only.
    features: ClassVar[tuple[str, ...]] = ()

    def install(self, version: str) -> Path:
        """The platform package's binary (the launcher would fetch it at install time)."""
        prefix = CACHE / self.harness / version
        exe = prefix / "node_modules" / PLATFORM / "bin" / self.executable
        if not exe.exists():
            prefix.mkdir(parents=True, exist_ok=True)
            if not (prefix / "package.json").exists():
                (prefix / "package.json").write_text('{"private": true}\n')
            subprocess.run(
                [
                    "npm",
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    f"{PLATFORM}@{version}",
                ],
                cwd=prefix,
                check=True,
            )
        return exe

    def newest(self) -> str:
        """The platform package's newest release (the binary that is recorded)."""
        out = subprocess.run(
            ["npm", "view", PLATFORM, "version"], capture_output=True, text=True, check=True
        )
        return out.stdout.strip().splitlines()[-1]

    def env(self, run: Run) -> dict[str, str]:
        """No auto-update, no keyring."""
        return {"FACTORY_DROID_AUTO_UPDATE_ENABLED": "false", "FACTORY_DISABLE_KEYRING": "1"}

    def prepare(self, run: Run) -> None:
        """``settings.json``: the lab as a custom Chat Completions model."""
        write_json(
            run.home / ".factory" / "settings.json",
            {
                "customModels": [
                    {
                        "model": MODEL,
                        "displayName": "Lab",
                        "baseUrl": f"{run.url}/v1",
                        "apiKey": DUMMY_KEY,
                        "provider": "generic-chat-completion-api",
                        "maxOutputTokens": 4096,
                    }
                ]
            },
        )

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``droid exec --auto high -m custom:… PROMPT``."""
        return [str(run.executable), "exec", "--auto", "high", "-m", f"custom:{MODEL}", prompt]

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """``Execute`` (with the risk level it demands), ``Read``, ``Create``."""
        if call.kind == "shell":
            return "Execute", {
                "command": call.params["command"],
                "riskLevelReason": "Lists or reads files only.",
                "riskLevel": "low",
            }
        path = str(run.work / call.params["path"])
        if call.kind == "read":
            return "Read", {"file_path": path}
        return "Create", {"file_path": path, "content": call.params.get("content", "")}
