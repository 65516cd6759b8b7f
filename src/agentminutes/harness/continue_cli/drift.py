"""Continue's drift vocabulary: a session split into history items (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from msgspec import Raw

from agentminutes.harness.drift_vocabulary import (
    UNTYPED,
    Obj,
    Vocabulary,
    as_list,
    as_obj,
    string_at,
)

__all__ = ("VOCABULARY",)


def _records(doc: Raw) -> Iterator[tuple[str, Obj]]:
    """A session: its header, each history item by its message's role."""
    obj = as_obj(doc)
    if obj is None:
        return
    yield "(session)", {k: v for k, v in obj.items() if k != "history"}
    for item in as_list(obj.get("history", Raw(b"[]"))) or []:
        rec = as_obj(item)
        if rec is not None:
            yield f"item/{string_at(rec, 'message.role') or UNTYPED}", rec


VOCABULARY: Final = Vocabulary(
    harness="continue-cli",
    discriminators={
        "item/assistant": ("message.toolCalls[].function.name", "toolCallStates[].status"),
    },
    deep={"item/assistant": ("message.usage", "toolCallStates[]")},
    document=_records,
)
