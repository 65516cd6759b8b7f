"""Deprecated: moved to :mod:`agentminutes.formats.losses` (the output formats' package)."""

from agentminutes._lazy import moved

__getattr__ = moved(__name__, "agentminutes.formats.losses")
