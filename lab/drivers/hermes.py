"""Hermes Agent (``hermes-agent`` on PyPI): ``hermes -z …`` against the Chat Completions route.

``~/.hermes/config.yaml`` names a ``custom`` provider whose ``base_url`` is the server, with a
dummy key. Hermes keeps its sessions in the SQLite database ``~/.hermes/state.db`` (WAL mode;
the WAL is collected beside it). No second prompt is recorded: in one-shot mode (``-z``) both
``--continue`` and ``--resume <id>`` start a new session (two sessions in the store, 0.19.0).
Hermes probes the endpoint for its model's context length first (``/v1/models``, ``/api/tags``, ``/props`` …:
answered 404, listed under ``unhandled``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from lab.drivers import DUMMY_KEY, Driver, Run
from lab.scenario import ToolCall

MODEL = "hermes-lab"


class Hermes(Driver):
    """Hermes Agent, one-shot (``-z``)."""

    harness: ClassVar[str] = "hermes"
    registry: ClassVar[str] = "pypi"
    package: ClassVar[str] = "hermes-agent"
    executable: ClassVar[str] = "hermes"
    pinned: ClassVar[str] = "0.19.0"
    protocol: ClassVar[str] = "openai-chat"
    transcripts: ClassVar[tuple[str, ...]] = (".hermes/state.db", ".hermes/state.db-wal")
    sources: ClassVar[tuple[str, ...] | None] = (".hermes/state.db",)
    timeout: ClassVar[float] = 300.0
    #: ``-z`` starts a new session even when told to continue one.
    features: ClassVar[tuple[str, ...]] = ()

    def env(self, run: Run) -> dict[str, str]:
        """The key (the provider's base URL is in the config)."""
        return {"OPENAI_API_KEY": DUMMY_KEY}

    def prepare(self, run: Run) -> None:
        """``config.yaml``: a custom OpenAI-compatible provider at the server."""
        config = run.home / ".hermes" / "config.yaml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            "model:\n"
            "  provider: custom\n"
            f"  base_url: {run.url}/v1\n"
            f"  default: {MODEL}\n"
            f"  api_key: {DUMMY_KEY}\n"
        )

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """``hermes -z PROMPT --yolo``."""
        return [str(run.executable), "-z", prompt, "--yolo"]

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """``terminal``, ``read_file``, ``write_file`` (absolute paths)."""
        if call.kind == "shell":
            return "terminal", {"command": call.params["command"]}
        path = str(run.work / call.params["path"])
        if call.kind == "read":
            return "read_file", {"path": path}
        return "write_file", {"path": path, "content": call.params.get("content", "")}
