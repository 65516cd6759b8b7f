"""A transcript's sessions as the exports read them: streamed, in bounded memory."""

from __future__ import annotations

import json
from pathlib import Path

import agentminutes
from agentminutes.export.transcripts import SessionEnd, TranscriptEvents
from agentminutes.pipeline.sources import CHUNK_BYTES
from conftest import FIXTURES

ANTIGRAVITY = FIXTURES / "antigravity/vibe-coding/cli-d580aa81/transcript_full.jsonl"


def _steps_in_order(tmp_path: Path, min_bytes: int) -> Path:
    """A real Antigravity transcript repeated until it is *min_bytes* long, its steps
    numbered in file order (as the harness writes them), so nothing needs sorting."""
    records = [json.loads(line) for line in ANTIGRAVITY.read_text(encoding="utf-8").splitlines()]
    path = tmp_path / "transcript_full.jsonl"
    size = step = 0
    with path.open("w", encoding="utf-8") as f:
        while size < min_bytes:
            for rec in records:
                rec["step_index"] = step
                step += 1
                line = json.dumps(rec) + "\n"
                f.write(line)
                size += len(line.encode())
    return path


def test_an_antigravity_transcript_in_step_order_streams(tmp_path: Path) -> None:
    # The adapter sorts a transcript whole unless a first read proves it in order: the
    # export must let it read the file, or it holds every event until the end (a
    # 100 MB transcript took 330 MB to export).
    path = _steps_in_order(tmp_path, 3 * CHUNK_BYTES)
    parts = list(TranscriptEvents(path).parts())
    batches = [p for p in parts if not isinstance(p, SessionEnd) and p]
    assert len(batches) >= 3, "events come out chunk by chunk, none held to the end"
    assert [ev for b in batches for ev in b] == list(agentminutes.iter_events(path))
