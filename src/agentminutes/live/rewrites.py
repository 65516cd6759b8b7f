"""Whole documents rewritten on every turn: what each rewrite adds.

The formats that keep a session as one JSON document (Gemini CLI
``session-*.json``, the oldest Copilot sessions, Amp threads, Continue
sessions) are rewritten whole on every turn, so a follower reads each version to its end and writes only the
events it has not written yet.
"""

from __future__ import annotations

import hashlib

from agentminutes.errors import ParseError
from agentminutes.harness import Adapter, ParseOptions
from agentminutes.pipeline.conversion import adapter_line
from agentminutes.pipeline.verbatim import safe_events
from agentminutes.schema import Event

__all__ = ("document_news", "unseen")


def document_news(
    adapter: Adapter, options: ParseOptions, held: tuple[int, bytes] | None = None
) -> list[Event]:
    """The events of a whole document read to its end, but those of its last record.

    The document is converted on a copy of the adapter, so the follow goes on
    reading; a document the harness is still writing does not parse yet, and
    waits for the next change. *held* is the file's last line when it has no
    newline yet: a harness that writes its document with none (Continue's
    ``JSON.stringify``) ends every save so, and the copy reads it too. The
    events of its last record are held: the harness may rewrite that record (a
    reply gets its token counts later), so they are written once a later save
    shows a record after it, or at the stop.
    """
    scratch = type(adapter)(options, on_skip=None)
    scratch.restore(adapter.snapshot())
    try:
        if held is not None:
            line = adapter_line(scratch, held[1], held[0])
            if line:
                scratch.feed(line, held[0])
        events = safe_events(scratch.finish())
    except ParseError:
        return []
    starts = [e.provenance.line for e in events if e.provenance is not None]
    last = max(starts, default=0)
    if starts.count(last) < len(starts):
        return [e for e in events if e.provenance is None or e.provenance.line != last]
    return []


def unseen(shown: set[str], events: list[Event]) -> list[Event]:
    """*events* of a whole document minus those written already (*shown*, updated), by identity.

    A rewrite may move records to other lines, so an event is known by what it
    is (kind, ids, subtype) and its rank among events alike, not by position.
    """
    out = []
    rank: dict[str, int] = {}
    for ev in events:
        base = "|".join(
            (
                ev.kind,
                ev.id,
                ev.message_id,
                ev.tool_call.tool_call_id if ev.tool_call is not None else "",
                ev.tool_result.tool_call_id if ev.tool_result is not None else "",
                ev.system.subtype if ev.system is not None else "",
            )
        )
        rank[base] = rank.get(base, 0) + 1
        key = hashlib.sha256(f"{base}|{rank[base]}".encode()).hexdigest()[:32]
        if key not in shown:
            shown.add(key)
            out.append(ev)
    return out
