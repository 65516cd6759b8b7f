"""Aider (``aider-chat`` on PyPI): ``aider --message …`` against the Chat Completions route.

The model is ``openai/<name>`` at the server (``--openai-api-base``); analytics, update
checks and git are off, replies are not streamed (streamed, Aider estimates the
tokens itself instead of reading the usage the server reports), and the chat
history file is kept under HOME (``--chat-history-file``). Aider offers the model no tools: it edits files from
the reply's text, so every request is the conversation's (no side requests), and
the scenarios that script tool calls do not apply (:meth:`name_tool` says so).
A second prompt restores the chat history (``--restore-chat-history``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run
from lab.scenario import ToolCall

MODEL = "gpt-4.1"


class Aider(Driver):
    """Aider, one message per run."""

    harness: ClassVar[str] = "aider"
    registry: ClassVar[str] = "pypi"
    package: ClassVar[str] = "aider-chat"
    executable: ClassVar[str] = "aider"
    pinned: ClassVar[str] = "0.86.1"
    protocol: ClassVar[str] = "openai-chat"
    transcripts: ClassVar[tuple[str, ...]] = (".aider.chat.history.md",)

    def env(self, run: Run) -> dict[str, str]:
        """The key, and no analytics or update checks."""
        return {"OPENAI_API_KEY": DUMMY_KEY, "AIDER_ANALYTICS": "false"}

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``aider --message PROMPT`` with the model at the server; later prompts restore."""
        cmd = [
            str(run.executable),
            "--message",
            prompt,
            "--model",
            f"openai/{MODEL}",
            "--openai-api-base",
            f"{run.url}/v1",
            "--chat-history-file",
            str(run.home / ".aider.chat.history.md"),
            "--input-history-file",
            str(run.home / ".aider.input.history"),
            "--no-git",
            "--yes-always",
            "--no-analytics",
            "--no-check-update",
            "--no-show-model-warnings",
            "--no-pretty",
            "--no-stream",
            "--no-detect-urls",
            "--map-tokens",
            "0",
        ]
        return [*cmd, "--restore-chat-history"] if index else cmd

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """Aider has no tools to name."""
        raise NotImplementedError("Aider offers no tools: its edits are in the reply's text")

    def is_side(self, view: Any, body: dict[str, Any]) -> bool:
        """Every request is the conversation's: Aider never offers tools."""
        return False
