"""How one harness's usage fields read: :class:`UsageRule`, which each harness declares.

A module of its own so that the harness descriptions, read by every command,
can declare their rule without importing the usage arithmetic of
:mod:`agentminutes.schema.usage` (which re-exports it).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ("UsageRule",)


class UsageRule(NamedTuple):
    """How one harness's :class:`~agentminutes.schema.TokenUsage` fields are to be read.

    The rule describes the fields as the harness's adapter fills them, which is
    not always the native format: Gemini CLI and Qwen Code report a
    ``promptTokenCount`` that includes the cached tokens, and their adapters
    already subtract them (so ``input_tokens`` is fresh input there).
    """

    #: ``input_tokens`` already counts the cache reads and writes (OpenAI-shaped usage).
    input_includes_cache: bool
    #: The key of ``usage.extra`` holding the reasoning part of ``output_tokens``
    #: (``""``: the harness does not report it apart).
    reasoning_key: str = ""
    #: The key of ``usage.extra`` holding Anthropic's cache-write split
    #: (``{"ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"}``).
    cache_split_key: str = ""
    #: The key of ``usage.extra`` holding the cost the harness computed itself,
    #: an object whose ``total`` is in USD (pi), or a number.
    cost_key: str = ""
    #: How the harness's requests are told apart across transcripts (a resumed or
    #: forked session copies earlier messages): ``message`` the API message id alone
    #: (globally unique ids), ``message+time`` the id with the timestamp (short ids),
    #: ``""`` none (each request counts).
    key_rule: str = "message+time"
