"""OpenHands CLI (``openhands`` on PyPI): ``openhands --headless -t …`` against Chat Completions.

``LLM_MODEL`` (a LiteLLM name, ``openai/<model>``), ``LLM_API_KEY`` and ``LLM_BASE_URL`` with
``--override-with-envs`` point it at the server; LiteLLM's model-price fetch is off
(``LITELLM_LOCAL_MODEL_COST_MAP``). OpenHands needs Python 3.12 or newer. A second prompt
resumes the last conversation (``--resume --last``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run
from lab.scenario import ToolCall

MODEL = "openhands-lab"


class OpenHands(Driver):
    """OpenHands CLI, headless."""

    harness: ClassVar[str] = "openhands"
    registry: ClassVar[str] = "pypi"
    package: ClassVar[str] = "openhands"
    executable: ClassVar[str] = "openhands"
    pinned: ClassVar[str] = "1.16.0"
    protocol: ClassVar[str] = "openai-chat"
    python: ClassVar[str] = "3.12"
    transcripts: ClassVar[tuple[str, ...]] = (
        ".openhands/conversations/*/base_state.json",
        ".openhands/conversations/*/events/*.json",
    )
    #: The conversation folder is the source; its state file names it.
    sources: ClassVar[tuple[str, ...] | None] = (".openhands/conversations/*/base_state.json",)
    timeout: ClassVar[float] = 300.0

    def env(self, run: Run) -> dict[str, str]:
        """The LiteLLM model, key and base URL; no banner, no price-map fetch."""
        return {
            "LLM_MODEL": f"openai/{MODEL}",
            "LLM_API_KEY": DUMMY_KEY,
            "LLM_BASE_URL": f"{run.url}/v1",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "OPENHANDS_SUPPRESS_BANNER": "1",
        }

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``openhands --headless --override-with-envs --always-approve -t PROMPT``."""
        cmd = [
            str(run.executable),
            "--headless",
            "--override-with-envs",
            "--always-approve",
            "--exit-without-confirmation",
        ]
        if index:
            cmd += ["--resume", "--last"]
        return [*cmd, "-t", prompt]

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """``terminal``; ``file_editor`` (``view``, ``create``), each with a ``security_risk``."""
        risk = {"security_risk": "LOW"}  # demanded by the security analyzer the CLI sets up
        if call.kind == "shell":
            return "terminal", {"command": call.params["command"], **risk}
        path = str(run.work / call.params["path"])
        if call.kind == "read":
            return "file_editor", {"command": "view", "path": path, **risk}
        return "file_editor", {
            "command": "create",
            "path": path,
            "file_text": call.params.get("content", ""),
            **risk,
        }
