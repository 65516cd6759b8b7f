"""JSONL output holds exactly one event per line, whatever shape the source had."""

from __future__ import annotations

import io
import json
from pathlib import Path

import anyio
import pytest

from agentminutes.harness import ADAPTERS
from agentminutes.pipeline.conversion import Conversion, open_chunks
from agentminutes.schema import Event, EventKind, Raw, SystemEvent
from agentminutes.sinks import JsonlSink, one_line
from conftest import fixture_id, transcripts

ALL = [p for cls in ADAPTERS for p in transcripts(cls.name)]


def jsonl_of(path: Path) -> bytes:
    async def run() -> bytes:
        out = io.BytesIO()
        sink = JsonlSink(out)
        async for batch in Conversion(name=str(path)).batches(open_chunks(path)):
            await sink.send(batch)
        return out.getvalue()

    return anyio.run(run)


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_every_line_is_one_event(path: Path) -> None:
    lines = jsonl_of(path).splitlines()
    assert lines
    for line in lines:
        assert json.loads(line)["kind"]


def test_a_pretty_printed_payload_is_put_on_one_line() -> None:
    pretty = b'{\n  "a": [1,\n    2],\n  "b": "keep\\nescaped \\u00e9"\n}'
    event = Event(kind=EventKind.SYSTEM, system=SystemEvent(subtype="x", details=Raw(pretty)))
    out = io.BytesIO()
    anyio.run(JsonlSink(out).send, _batch([event, event]))
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0])["system"]["details"] == json.loads(pretty)
    assert b"\\u00e9" in lines[0]  # verbatim string spelling kept
    assert one_line(b'{"a":1}') == b'{"a":1}'


def _batch(events: list[Event]):  # type: ignore[no-untyped-def]
    from agentminutes.pipeline.batch import Batch

    return Batch(events)
