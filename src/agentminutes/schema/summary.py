"""Deprecated: moved to :mod:`agentminutes.schema.stats` (its name says its job)."""

from agentminutes._lazy import moved

__getattr__ = moved(__name__, "agentminutes.schema.stats")
