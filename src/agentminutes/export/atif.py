"""Deprecated: moved to :mod:`agentminutes.formats.atif` (the output formats' package)."""

from agentminutes._lazy import moved

__getattr__ = moved(__name__, "agentminutes.formats.atif")
