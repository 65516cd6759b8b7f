"""Amp's drift vocabulary: a thread split into messages by role (read by :mod:`agentminutes.drift`)."""

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
    prefixes,
    string_at,
)

__all__ = ("VOCABULARY",)


def _records(doc: Raw) -> Iterator[tuple[str, Obj]]:
    """A thread: its header, each message by role, each usage ledger event."""
    obj = as_obj(doc)
    if obj is None:
        return
    yield "(thread)", {k: v for k, v in obj.items() if k not in ("messages", "usageLedger")}
    for rec in objects(obj.get("messages")):
        yield f"message/{string_at(rec, 'role') or UNTYPED}", rec
    ledger = as_obj(obj.get("usageLedger", Raw(b"{}"))) or {}
    for rec in objects(ledger.get("events")):
        yield "usageLedger/event", rec


VOCABULARY: Final = Vocabulary(
    harness="amp",
    discriminators={
        "message/assistant": ("content[].type", "content[].name", "state.type", "state.stopReason"),
        "message/user": ("content[].type", "content[].run.status"),
        "message/info": ("content[].type",),
    },
    deep={"message/assistant": ("usage", "content[]"), "message/user": ("content[]",)},
    normalize=prefixes({"content[].name": ("mcp__",)}),
    document=_records,
)
