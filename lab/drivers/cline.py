"""Cline CLI (``cline``): ``cline PROMPT`` with an OpenAI-compatible provider.

``cline auth -p openai -b URL -k KEY -m MODEL`` (run by :meth:`Cline.prepare` inside the
temporary HOME) points it at the server's Chat Completions route; tools are auto-approved
by default. The 3.x CLI writes ``~/.cline/data/sessions/<id>/<id>.messages.json`` (and
``<id>.json`` beside it). It has no headless resume (``--id`` opens the interactive UI),
so the second-prompt scenario is not recorded.
"""

from __future__ import annotations

import subprocess
from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run, base_env
from lab.scenario import ToolCall

MODEL = "lab-model"


class Cline(Driver):
    """Cline CLI, one-shot."""

    harness: ClassVar[str] = "cline"
    package: ClassVar[str] = "cline"
    executable: ClassVar[str] = "cline"
    pinned: ClassVar[str] = "3.0.65"
    protocol: ClassVar[str] = "openai-chat"
    transcripts: ClassVar[tuple[str, ...]] = (".cline/data/sessions/*/*.json",)
    sources: ClassVar[tuple[str, ...] | None] = (".cline/data/sessions/*/*.messages.json",)
    #: ``--id`` resumes a session only in the interactive UI (it demands a terminal).
    features: ClassVar[tuple[str, ...]] = ()

    def prepare(self, run: Run) -> None:
        """``cline auth``: the OpenAI-compatible provider, its base URL, key and model."""
        subprocess.run(
            [
                str(run.executable),
                "auth",
                "-p",
                "openai",
                "-k",
                DUMMY_KEY,
                "-m",
                MODEL,
                "-b",
                f"{run.url}/v1",
            ],
            env={**base_env(run), **self.env(run)},
            cwd=run.work,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=True,
            timeout=60,
        )

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``cline --cwd WORK PROMPT`` (act mode, tools auto-approved)."""
        return [str(run.executable), "--cwd", str(run.work), "--auto-approve", "true", prompt]

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """Cline's shell and file tools, by whichever names this release offers."""
        if call.kind == "shell":
            name = next(
                (n for n in ("execute_command", "run_commands", "bash") if n in offered),
                "execute_command",
            )
            return name, {"command": call.params["command"], "requires_approval": False}
        path = call.params["path"]
        if call.kind == "read":
            name = next((n for n in ("read_file", "read_files") if n in offered), "read_file")
            return name, {"path": path}
        name = next((n for n in ("write_to_file", "write_file") if n in offered), "write_to_file")
        return name, {"path": path, "content": call.params.get("content", "")}
