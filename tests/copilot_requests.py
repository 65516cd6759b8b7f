"""A real Copilot CLI session with the per-request ``assistant.usage`` records later releases write.

No transcript of the corpus holds them (the CLI marks them ephemeral, and few
releases persist them), so tests derive one from the real 0.0.420 fixture: its
``session.shutdown`` sum split into the two requests that made it, each record
written after its message (and its tool's result), as the CLI's event order has it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import FIXTURES

SOURCE = FIXTURES / "copilot" / "agent-sessions" / "copilot_small_0.0.420.jsonl"


def usage_parts() -> list[dict[str, Any]]:
    """The two requests' ``assistant.usage`` data; together they are the shutdown's sum."""
    recs = [json.loads(x) for x in SOURCE.read_text(encoding="utf-8").splitlines()]
    u = recs[-1]["data"]["modelMetrics"]["gpt-4.1"]["usage"]
    first = {"inputTokens": 400, "outputTokens": 20, "cacheReadTokens": 300}
    return [
        {"model": "gpt-4.1", **first, "cacheWriteTokens": 0, "cost": 1, "duration": 900},
        {
            "model": "gpt-4.1",
            "inputTokens": u["inputTokens"] - first["inputTokens"],
            "outputTokens": u["outputTokens"] - first["outputTokens"],
            "cacheReadTokens": u["cacheReadTokens"] - first["cacheReadTokens"],
            "cacheWriteTokens": 0,
            "cost": 1,
            "duration": 700,
        },
    ]


def write_with_usage_records(path: Path) -> Path:
    """The session at *path*: the first usage record after its message's tool result, the
    second right after its message, the shutdown last."""
    recs = [json.loads(x) for x in SOURCE.read_text(encoding="utf-8").splitlines()]
    # e5: the message with the tool request; e6: its result; e7: the last message.
    usage = [
        {
            "type": "assistant.usage",
            "data": part,
            "id": f"u{i}",
            "timestamp": recs[5 + i]["timestamp"],
            "parentId": recs[5 + i]["id"],
            "ephemeral": True,
        }
        for i, part in enumerate(usage_parts())
    ]
    out = [*recs[:6], usage[0], recs[6], usage[1], recs[7]]
    path.write_text("".join(json.dumps(r) + "\n" for r in out), encoding="utf-8")
    return path
