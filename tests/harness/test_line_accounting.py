"""Line accounting over every transcript fixture of every adapter.

Each non-blank input line ends as exactly one of: inside the provenance range
of at least one event, a counted skip, or (strict mode) a ParseError. No line
is both an event's and a skip, and the skip counts in the report are the
skipped lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentminutes.errors import ParseError
from agentminutes.harness import ADAPTERS, ParseOptions
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from conftest import FIXTURES, fixture_id, transcripts

ALL = [p for cls in ADAPTERS for p in transcripts(cls.name)]


def _content_lines(path: Path) -> set[int]:
    data = path.read_bytes()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return {i for i, line in enumerate(lines, 1) if line.strip(b" \t\r\n\xef\xbb\xbf")}


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_every_line_accounted_once(path: Path) -> None:
    skipped: list[int] = []
    conv = Conversion(
        name=str(path), options=ParseOptions(), on_skip=lambda line, _t: skipped.append(line)
    )
    if "broken" in path.name:
        # Strict mode may refuse a fixture only where the fixture is marked broken.
        with pytest.raises(ParseError) as failed:
            list(conv.iter_events(open_sync_chunks(path)))
        assert failed.value.line > 0
        return
    events = list(conv.iter_events(open_sync_chunks(path)))
    covered: set[int] = set()
    for ev in events:
        p = ev.provenance
        assert p is not None, f"event without provenance: {ev.kind}"
        covered.update(range(p.line, (p.end_line or p.line) + 1))
    skip_set = set(skipped)
    assert len(skip_set) == len(skipped), "a line was skipped twice"
    assert not (skip_set & _event_lines(events)), "a line is both an event and a skip"
    expected = _content_lines(path) if _is_line_format(path) else None
    if expected is not None:
        missing = expected - covered - skip_set
        assert not missing, f"lines neither event nor skip: {sorted(missing)[:10]}"
    assert (conv.skipped and sum(conv.skipped.values()) == len(skipped)) or not skipped


def _event_lines(events: list) -> set[int]:
    # Lines that are an event's own record (a fold's range also spans
    # interleaved records that have their own events).
    return {ev.provenance.line for ev in events} | {ev.provenance.end_line for ev in events}


def _is_line_format(path: Path) -> bool:
    return path.suffix in (".jsonl", ".log", ".md")


def test_fixtures_exist() -> None:
    assert ALL, f"no transcript fixtures under {FIXTURES}"
