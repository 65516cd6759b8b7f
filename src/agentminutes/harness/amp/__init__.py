"""Amp threads: ``~/.local/share/amp/threads/T-<uuid>.json``, one JSON document per thread.

Amp (Sourcegraph's agent, CLI and editor extension) rewrites the whole thread
file as the thread grows: ``{v, id, created, title, agentMode, env: {initial:
{trees, platform}}, messages: […], usageLedger: {events: […]}, relationships}``.
Messages use Anthropic-shaped blocks; an assistant message carries its
``usage`` (model, fresh input, output, cache reads and writes), a tool's
outcome is a ``tool_result`` block with a ``run`` (status, result or error)
in the next user message. Newer releases keep threads on Amp's server and
write no local file (nothing to read there).
"""

from __future__ import annotations

from agentminutes.harness.amp.adapter import AmpAdapter
from agentminutes.harness.amp.vocabulary import HARNESS

__all__ = ("HARNESS", "AmpAdapter")
