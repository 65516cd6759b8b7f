"""OpenCode's drift vocabulary: where its format hides its churn (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from msgspec import Raw

from agentminutes.harness.description import resolve
from agentminutes.harness.drift_vocabulary import (
    UNTYPED,
    Obj,
    Vocabulary,
    as_obj,
    prefixes,
    read_file,
    string_at,
)

__all__ = ("VOCABULARY",)


def _opencode_source(path: str) -> Iterator[tuple[str, Obj]]:
    """A database's or storage tree's records: sessions, messages by role, parts by type.

    Only the session, message and part tables are read (never account tables).
    """
    import os

    import msgspec

    route = resolve(
        "agentminutes.pipeline.document_sources:route"
    )  # a layer up: named, not imported
    found = route(path, "opencode")
    doc = found.document
    if doc is None:
        return
    if doc.container == "sqlite":
        conn = doc.connect()
        try:
            cols = [r[1] for r in conn.execute("PRAGMA table_info(session)")]
            for row in conn.execute("SELECT * FROM session"):
                yield (
                    "session",
                    {c: Raw(msgspec.json.encode(v)) for c, v in zip(cols, row, strict=True)},
                )
            for (data,) in conn.execute("SELECT data FROM message"):
                yield from _opencode_record("message", "role", data)
            for (data,) in conn.execute("SELECT data FROM part"):
                yield from _opencode_record("part", "type", data)
        finally:
            conn.close()
        return
    root = doc.path or path
    for folder, _dirs, files in sorted(os.walk(root)):
        rel = os.path.relpath(folder, root).replace(os.sep, "/").split("/")
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            data = read_file(os.path.join(folder, name)) or b""
            if "part" in rel:
                yield from _opencode_record("part", "type", data)
            elif "message" in rel:
                yield from _opencode_record("message", "role", data)
            elif "session" in rel:
                rec = as_obj(Raw(data))
                if rec is not None:
                    yield "session", rec


def _opencode_record(table: str, field: str, data: bytes | str) -> Iterator[tuple[str, Obj]]:
    rec = as_obj(Raw(data.encode() if isinstance(data, str) else data))
    if rec is not None:
        yield f"{table}/{string_at(rec, field) or UNTYPED}", rec


VOCABULARY: Final = Vocabulary(
    harness="opencode",
    discriminators={
        "part/tool": ("tool", "state.status"),
        "part/step-finish": ("reason",),
        "message/assistant": ("finish", "error.name"),
    },
    deep={"message/assistant": ("tokens", "time"), "part/tool": ("state",)},
    normalize=prefixes({"tool": ("mcp_", "mcp__")}),
    source=_opencode_source,
)
