"""GitHub Copilot CLI transcripts: the adapter lives in :mod:`agentminutes.harness.copilot.adapter`."""

from agentminutes.harness.copilot.adapter import CopilotAdapter

__all__ = ("CopilotAdapter",)
