"""Deprecated: moved to :mod:`agentminutes.pipeline.document_sources` (its name says its job)."""

from agentminutes._lazy import moved

__getattr__ = moved(__name__, "agentminutes.pipeline.document_sources")
