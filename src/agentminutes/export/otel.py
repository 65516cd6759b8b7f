"""Deprecated: moved to :mod:`agentminutes.formats.otlp_json` (the output formats' package)."""

from agentminutes._lazy import moved

__getattr__ = moved(__name__, "agentminutes.formats.otlp_json")
