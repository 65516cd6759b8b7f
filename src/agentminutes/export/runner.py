"""Deprecated: moved to :mod:`agentminutes.export.command` (its name says its job)."""

from agentminutes._lazy import moved

__getattr__ = moved(__name__, "agentminutes.export.command")
