"""Continue's drift vocabulary: a session split into history items (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from msgspec import Raw

from agentminutes.harness.drift_vocabulary import (
    UNTYPED,
    Obj,
    Vocabulary,
    as_obj,
    objects,
    string_at,
)

__all__ = ("VOCABULARY",)


def _records(doc: Raw) -> Iterator[tuple[str, Obj]]:
    """A session: its header, each history item by its message's role."""
    obj = as_obj(doc)
    if obj is None:
        return
    yield "(session)", {k: v for k, v in obj.items() if k != "history"}
    for rec in objects(obj.get("history")):
        yield f"item/{string_at(rec, 'message.role') or UNTYPED}", rec


VOCABULARY: Final = Vocabulary(
    harness="continue-cli",
    discriminators={
        "item/assistant": ("message.toolCalls[].function.name", "toolCallStates[].status"),
    },
    deep={"item/assistant": ("message.usage", "toolCallStates[]")},
    document=_records,
)
