"""Gemini CLI's drift vocabulary: where its format hides its churn (read by :mod:`agentminutes.drift`)."""

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
    objects,
    prefixes,
    string_at,
    type_field,
)

__all__ = ("VOCABULARY",)


def _gemini_type(record: Obj) -> str:
    rtype = type_field(record)
    if rtype != UNTYPED:
        return rtype
    for key in ("$set", "$rewindTo"):
        if key in record:
            return key
    if "sessionId" in record and "projectHash" in record:
        return "(session)"
    return UNTYPED


def _gemini_document(doc: Raw) -> Iterator[tuple[str, Obj]]:
    items = as_list(doc)
    if items is not None:  # logs.json: the project's prompt log
        for item in items:
            rec = as_obj(item)
            if rec is not None:
                yield "logs/" + type_field(rec), rec
        return
    obj = as_obj(doc)
    if obj is None:
        return
    if "messages" in obj:  # a legacy session-*.json: the records of the JSONL recording
        yield "(session)", obj
        for rec in objects(obj["messages"]):
            yield type_field(rec), rec
        return
    # A /chat save or tool checkpoint: Gemini API contents.
    yield "(checkpoint)", obj
    for key in ("history", "clientHistory"):
        for rec in objects(obj.get(key)):
            role = string_at(rec, "role") or string_at(rec, "type") or UNTYPED
            yield f"checkpoint/{role}", rec


VOCABULARY: Final = Vocabulary(
    harness="gemini-cli",
    record_type=_gemini_type,
    discriminators={
        "gemini": ("toolCalls[].name", "toolCalls[].status", "content[].*"),
        "user": ("content[].*",),
        "checkpoint": ("parts[].*",),
    },
    deep={"gemini": ("toolCalls[]", "thoughts[]")},
    normalize=prefixes({"toolCalls[].name": ("mcp_",)}),
    document=_gemini_document,
)
