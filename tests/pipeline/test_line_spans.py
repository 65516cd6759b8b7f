"""A lean read's lines where they were read: the same lines, numbers and offsets as copied ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentminutes.harness import ParseOptions
from agentminutes.pipeline.conversion import Conversion
from agentminutes.pipeline.sources import LineSplitter
from agentminutes.schema import to_builtins
from agentminutes.schema.usage import RequestFolder

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures"
TRANSCRIPT = FIXTURES / "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"


def _chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("size", [1, 7, 333, 4096, 1 << 20])
def test_spans_are_the_lines_push_hands_out(size: int) -> None:
    # No newline at the end: the last line is held, then flushed, by both.
    data = TRANSCRIPT.read_bytes() + b'{"type":"last"}\n\n  \nno newline'
    copied, spanned = LineSplitter(), LineSplitter()
    for chunk in _chunks(data, size):
        lines = copied.push(chunk)
        held, spans = spanned.push_spans(chunk)
        assert [(n, held[s:e]) for n, s, e in spans] == lines
        assert (spanned.lineno, spanned.offset, spanned.pending, spanned.pending_nul) == (
            copied.lineno,
            copied.offset,
            copied.pending,
            copied.pending_nul,
        )
    assert spanned.held() == copied.held()
    assert spanned.flush() == copied.flush()


def _lean_events(data: bytes, size: int) -> list[object]:
    options = ParseOptions(
        permissive=True, check_verbatim=False, kinds=RequestFolder.kinds_for("claude-code")
    )
    conv = Conversion(name="t", harness="claude-code", options=options)
    events = [to_builtins(ev) for ev in conv.iter_events(_chunks(data, size))]
    return [events, dict(conv.skipped)]


@pytest.mark.parametrize("size", [97, 4096])
def test_a_lean_read_in_small_chunks_reads_what_it_reads_whole(size: int) -> None:
    data = TRANSCRIPT.read_bytes()
    whole = _lean_events(data, len(data))
    assert whole[1], "records passed over are counted"
    assert _lean_events(data, size) == whole
