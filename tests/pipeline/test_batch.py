"""Stages and marks: a stage that forgets a batch's mark never makes a follow go quiet."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path

import anyio
import msgspec
import pytest

import agentminutes
from agentminutes import Batch
from follow_helpers import MAIN, SMALL, expected

_enc = msgspec.json.Encoder()


def _plain(event: agentminutes.Event) -> dict:
    return json.loads(_enc.encode(event))


async def rebuild(batches: AsyncIterator[Batch]) -> AsyncIterator[Batch]:
    """A naive stage: one new batch per batch taken, its mark not copied."""
    async for batch in batches:
        yield Batch(list(batch.events))


async def drop_empty(batches: AsyncIterator[Batch]) -> AsyncIterator[Batch]:
    """Also naive: skips batches without events (progress over skipped records)."""
    async for batch in batches:
        if batch.events:
            yield Batch(list(batch.events))


async def pairs(batches: AsyncIterator[Batch]) -> AsyncIterator[Batch]:
    """Holds events across batches and forgets the marks: what they complete is unknowable."""
    held: list[agentminutes.Event] = []
    n = 0
    async for batch in batches:
        held.extend(batch.events)
        n += bool(batch.events)
        if n == 2:
            yield Batch(held)
            held, n = [], 0
    if held:
        yield Batch(held)


async def pairs_keeping_marks(batches: AsyncIterator[Batch]) -> AsyncIterator[Batch]:
    """The same, done right: the merged batch carries the last mark it completes."""
    held: list[agentminutes.Event] = []
    n = 0
    last = None
    async for batch in batches:
        held.extend(batch.events)
        n += bool(batch.events)
        if n == 2 or not batch.events:
            yield Batch(held, batch.mark)
            held, n = [], 0
        last = batch.mark
    if held:
        yield Batch(held, last)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("stage", [rebuild, drop_empty, pairs_keeping_marks])
def test_stages_that_rebuild_batches_keep_the_follow_and_its_progress(
    tmp_path: Path, backend: str, stage: agentminutes.Stage
) -> None:
    target = tmp_path / "session.jsonl"
    state = tmp_path / "state.json"
    shutil.copyfile(MAIN, target)

    async def main() -> list[dict]:
        events = agentminutes.follow(target, idle_exit=0.3, state=state, stages=[stage])
        async with aclosing(events) as it:
            return [_plain(ev) async for ev in it]

    assert anyio.run(main, backend=backend) == expected(MAIN)
    saved = json.loads(state.read_text())["transcripts"][str(target)]
    assert saved["offset"] == target.stat().st_size


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_stage_that_loses_marks_fails_loudly(tmp_path: Path, backend: str) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copyfile(SMALL, folder / "a.jsonl")
    shutil.copyfile(MAIN, folder / "b.jsonl")

    async def main() -> int:
        n = 0
        it = agentminutes.follow_many([folder], idle_exit=0.3, stages=[pairs])
        async with aclosing(it):
            async for _ in it:
                n += 1
        return n

    with pytest.raises(
        agentminutes.UsageError, match=r"stage pairs yielded .* without a batch mark"
    ):
        anyio.run(main, backend=backend)


def test_convert_stages_need_no_marks() -> None:
    """Whole-file parsing has no marks to keep: a mark-less stage is fine there."""
    got = [_plain(e) for e in agentminutes.iter_events(SMALL, stages=[pairs])]
    assert got == expected(SMALL)
