"""Aider's chat-history line shapes and the report lines read for usage."""

from __future__ import annotations

import re
from typing import Final

HARNESS: Final = "aider"

#: The header of each run (``io.py`` writes it when the chat history file opens).
RUN_HEADER: Final = re.compile(rb"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")

#: What a person typed: one ``#### `` line per input line (``<blank>`` for none).
USER_PREFIX: Final = b"####"

#: What Aider reported: a block quote (only an output's first line carries it).
QUOTE_PREFIX: Final = b">"

#: The start-up banner's release line, ``> Aider v0.82.2``.
VERSION_LINE: Final = re.compile(r"^Aider v(\d[\w.+-]*)")

#: The banner's model line: ``Main model: X with diff edit format`` (``Model:`` before 0.39).
MODEL_LINE: Final = re.compile(r"^(?:Main model|Model): (\S+)")

#: The usage report after each reply: ``Tokens: 3.2k sent, 1.1k cache write, 2.0k cache hit,
#: 222 received. Cost: $0.01 message, $0.02 session.`` (the cache parts and the cost only
#: where known; ``request`` for ``message`` in older releases).
TOKENS_LINE: Final = re.compile(
    r"^Tokens: (?P<sent>[\d.,]+k?) sent"
    r"(?:, (?P<write>[\d.,]+k?) cache write)?"
    r"(?:, (?P<hit>[\d.,]+k?) cache hit)?"
    r", (?P<received>[\d.,]+k?) received\."
    r"(?: Cost: \$(?P<cost>[\d.,]+) (?:message|request), \$(?P<session>[\d.,]+) session\.)?"
)


def token_count(text: str) -> tuple[int, bool]:
    """A count as Aider prints it (``222``, ``3.2k``, ``12k``, ``1,234``): its value, and
    whether the print rounded it (``k``)."""
    text = text.replace(",", "")
    if text.endswith("k"):
        return round(float(text[:-1]) * 1000), True
    return int(float(text)), False


#: The reasoning Aider writes at the head of a streamed reply, between its own tags.
REASONING: Final = re.compile(
    r"\A\s*<thinking-content-([0-9a-f]{32})>(.*?)</thinking-content-\1>", re.DOTALL
)
