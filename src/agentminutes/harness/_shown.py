"""Which events of a session rebuilt on each change were handed on already.

A tail that rebuilds a session whole (a database's rows, a folder's files) hands
on only the events it did not hand on before. An event is known by what it is
(kind, ids, subtype, origin) and its rank among events alike, not by position:
a rebuild may number or order records differently.
"""

from __future__ import annotations

from agentminutes.schema import Event

__all__ = ("event_key", "unseen")


def event_key(ev: Event, rank: dict[str, int]) -> str:
    """*ev*'s identity, ranked among the events alike counted in *rank* (updated)."""
    base = "|".join(
        (
            ev.kind,
            ev.id,
            ev.message_id,
            ev.tool_call.tool_call_id if ev.tool_call is not None else "",
            ev.tool_result.tool_call_id if ev.tool_result is not None else "",
            ev.system.subtype if ev.system is not None else "",
            ev.user_message.origin if ev.user_message is not None else "",
        )
    )
    rank[base] = rank.get(base, 0) + 1
    return f"{base}|{rank[base]}"


def unseen(shown: set[str], events: list[Event]) -> list[Event]:
    """*events* minus those whose identity is in *shown*; the new ones are added to it."""
    fresh: list[Event] = []
    rank: dict[str, int] = {}
    for ev in events:
        key = event_key(ev, rank)
        if key not in shown:
            shown.add(key)
            fresh.append(ev)
    return fresh
