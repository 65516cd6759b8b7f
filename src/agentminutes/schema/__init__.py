"""The normalized schema: msgspec Structs whose JSON is the output contract.

- :mod:`~agentminutes.schema.events` — the event Structs, kinds and the stats Structs.
- :mod:`~agentminutes.schema.stats` — folding events into totals, the report and stats.
- :mod:`~agentminutes.schema.session` — the whole-session Struct and its builder.

This is the bottom layer: it imports nothing of agentminutes but the time helpers.
"""

from __future__ import annotations

from agentminutes.schema import events
from agentminutes.schema.events import *  # noqa: F403  (the vocabulary, as events.__all__ names it)
from agentminutes.schema.session import Session

__all__ = ["Session"]
__all__ += events.__all__
