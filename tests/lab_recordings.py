"""Lab recordings (``fixtures/lab/<harness>/<version>/<scenario>/``) read in process.

What :mod:`lab.check` asks of a recording through the command line, asked here of the
library, with no CLI and no network: the sources convert strictly and auto-detected, with
no ``unknown`` event; the tool calls are the scripted ones, in order, each answered, the
ones scripted to fail marked ``is_error``; the usage folded into requests sums to what the
server billed the conversation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentminutes.harness import SNIFF_BYTES, detect
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from agentminutes.schema import Event, EventKind
from agentminutes.schema.usage import OtelUsage, requests
from conftest import FIXTURES

LAB = FIXTURES / "lab"


@dataclass
class Recording:
    """One recording folder, its ground truth and its converted sources."""

    folder: Path
    truth: dict[str, Any]
    note: dict[str, Any]

    @property
    def sources(self) -> list[Path]:
        return [self.folder / p for p in self.note.get("sources", self.note["transcripts"])]

    @property
    def name(self) -> str:
        return f"{self.folder.parent.name}/{self.folder.name}"


def recordings(harness: str) -> list[Recording]:
    """Every recording of *harness*, by version and scenario."""
    return [
        Recording(
            folder=folder,
            truth=json.loads((folder / "ground_truth.json").read_text()),
            note=json.loads((folder / "recording.json").read_text()),
        )
        for folder in sorted((LAB / harness).glob("*/*"))
        if (folder / "ground_truth.json").exists()
    ]


def converted(path: Path) -> list[Event]:
    """The strict, auto-detected conversion of *path*."""
    conv = Conversion(name=str(path))
    return list(conv.iter_events(open_sync_chunks(path)))


def detected(path: Path) -> str:
    """The harness detection names for *path*'s head, and how sure it is."""
    cls, conf = detect(path.read_bytes()[:SNIFF_BYTES])
    return f"{cls.name}\t{conf}"


def tool_calls(events: list[Event]) -> list[tuple[str, str, bool | None]]:
    """Each call's name, id and its result's error flag (``None``: unanswered)."""
    results = {
        e.tool_result.tool_call_id: e.tool_result.is_error
        for e in events
        if e.kind == EventKind.TOOL_RESULT and e.tool_result is not None
    }
    return [
        (e.tool_call.name, e.tool_call.tool_call_id, results.get(e.tool_call.tool_call_id))
        for e in events
        if e.kind == EventKind.TOOL_CALL and e.tool_call is not None
    ]


def scripted_calls(truth: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """The ground truth's tool calls: name, id, whether scripted to fail."""
    return [(c["name"], c["id"], bool(c["fails"])) for c in truth["tool_calls"]]


def usage_sum(events: list[Event]) -> tuple[OtelUsage, int]:
    """The OpenTelemetry sum of the requests *events* record, and how many there are."""
    total = OtelUsage.zero()
    found = requests(events)
    for r in found:
        assert r.otel is not None
        total.add(r.otel)
    return total, len(found)


def billed(truth: dict[str, Any]) -> dict[str, int | None]:
    """What the server billed the conversation, in :class:`OtelUsage`'s field names."""
    b = truth["billed"]
    return {
        "input_tokens": b["input_tokens"],
        "output_tokens": b["output_tokens"],
        "cache_read_input_tokens": b["cache_read_input_tokens"],
        "cache_creation_input_tokens": b["cache_creation_input_tokens"],
        "reasoning_output_tokens": b["reasoning_output_tokens"],
    }
