"""Gemini CLI chat recordings: the adapter lives in :mod:`agentminutes.harness.gemini_cli.adapter`."""

from agentminutes.harness.gemini_cli.adapter import GeminiCliAdapter

__all__ = ("GeminiCliAdapter",)
