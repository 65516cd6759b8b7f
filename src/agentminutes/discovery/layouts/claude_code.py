"""Deprecated path: this layout is :mod:`agentminutes.harness.claude_code.layout` now."""

from agentminutes._lazy import moved

__getattr__ = moved(__name__, "agentminutes.harness.claude_code.layout")
