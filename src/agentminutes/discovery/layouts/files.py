"""Deprecated path: this layout is :mod:`agentminutes.harness.files_layout` now."""

from agentminutes._lazy import moved

__getattr__ = moved(__name__, "agentminutes.harness.files_layout")
