"""What the scripted server bills a request: deterministic token counts, in one shape.

The counts follow the OpenTelemetry GenAI conventions agentminutes' ``usage`` reports in:
``input_tokens`` includes the cache reads and writes, ``output_tokens`` includes reasoning.
Each wire module (:mod:`lab.wire`) turns a :class:`Billing` into its protocol's usage object
(Anthropic keeps fresh input apart from the cache, OpenAI counts cached tokens inside the
prompt, Gemini counts thoughts apart from the candidates), so a harness that records what it
was sent can be checked against this one figure.

The numbers are made up but never arbitrary: they grow with the request and the reply, the
first conversation request reads nothing from the cache and later ones read three fifths of
their prompt, so a harness that drops, doubles or mislabels a count is caught.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Billing:
    """One request's billed tokens (OpenTelemetry GenAI conventions)."""

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    #: Part of ``output_tokens``; ``None`` where the protocol does not report it apart
    #: (Anthropic bills thinking as output and says no more).
    reasoning_output_tokens: int | None

    @property
    def fresh_input_tokens(self) -> int:
        """Input that was neither read from nor written to the cache."""
        return self.input_tokens - self.cache_read_input_tokens - self.cache_creation_input_tokens

    def as_json(self) -> dict[str, Any]:
        """The ground-truth JSON object."""
        return asdict(self)


def bill(
    *,
    request_bytes: int,
    conversation_index: int,
    reply_chars: int,
    thinking_chars: int,
    cache_writes: bool,
    reasoning_apart: bool,
) -> Billing:
    """The billing for one answered request.

    ``conversation_index`` is the request's place among the conversation's requests (side
    requests pass 0: they share no prefix); ``cache_writes`` is whether the protocol reports
    cache creation (Anthropic only); ``reasoning_apart`` whether it reports reasoning apart.
    """
    prompt = 1200 + request_bytes // 50
    cache_read = 0 if conversation_index == 0 else (prompt * 3) // 5
    cache_creation = min(prompt - cache_read, 256) if cache_writes else 0
    reasoning = (thinking_chars // 4 + 2) if thinking_chars else 0
    output = 8 + reply_chars // 4 + reasoning
    return Billing(
        input_tokens=prompt,
        output_tokens=output,
        cache_read_input_tokens=cache_read,
        cache_creation_input_tokens=cache_creation,
        reasoning_output_tokens=reasoning if reasoning_apart else None,
    )
