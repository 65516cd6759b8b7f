"""Codex CLI transcripts: the adapter lives in :mod:`agentminutes.harness.codex.adapter`."""

from agentminutes.harness.codex.adapter import HARNESS, CodexAdapter

__all__ = ("HARNESS", "CodexAdapter")
