"""Deprecated path: this layout is :mod:`agentminutes.harness.documents_layout` now."""

from agentminutes._lazy import moved

__getattr__ = moved(__name__, "agentminutes.harness.documents_layout")
