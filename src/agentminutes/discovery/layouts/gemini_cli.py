"""Deprecated path: this layout is :mod:`agentminutes.harness.gemini_cli.layout` now."""

from agentminutes._lazy import moved

__getattr__ = moved(__name__, "agentminutes.harness.gemini_cli.layout")
