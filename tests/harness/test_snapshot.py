"""Every adapter resumes from a snapshot: what a follower restarted from ``--state`` relies on.

For every transcript fixture of every line adapter, feeding the lines to one
adapter gives the same events as feeding the first part, snapshotting, and
feeding the rest to a fresh adapter restored from that snapshot, at several
cut points, in whole-file and in live mode.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from agentminutes.harness import ADAPTERS, ParseOptions, adapter_class
from agentminutes.pipeline.conversion import feed_lines
from agentminutes.schema import Event
from conftest import fixture_id, transcripts

CASES = [(cls.name, p) for cls in ADAPTERS for p in transcripts(cls.name)]


def encoded(events: list[Event]) -> list[bytes]:
    return [msgspec.json.encode(e) for e in events]


@pytest.mark.parametrize("live", [False, True], ids=["whole-file", "live"])
@pytest.mark.parametrize(("harness", "path"), CASES, ids=[fixture_id(p) for _, p in CASES])
def test_a_restored_snapshot_continues_exactly(harness: str, path: Path, live: bool) -> None:
    cls = adapter_class(harness)
    options = ParseOptions(live=live)
    lines = list(enumerate(path.read_bytes().split(b"\n"), 1))
    whole = cls(options)
    expected = encoded(feed_lines(whole, lines) + whole.finish())
    n = len(lines)
    for cut in sorted({1, n // 3, n // 2, n - 1}):
        first = cls(options)
        got = feed_lines(first, lines[:cut])
        state = first.snapshot()
        second = cls(options)
        second.restore(state)
        got += feed_lines(second, lines[cut:]) + second.finish()
        assert encoded(got) == expected, f"cut before line {cut + 1}"
