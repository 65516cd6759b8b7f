"""Event ids: the same event has the same id in every delivery, across restarts and processes."""

from __future__ import annotations

import json
import shutil
from contextlib import aclosing
from pathlib import Path

import anyio
import msgspec
import pytest

import agentminutes
from follow_helpers import MAIN, SMALL, FollowProc, append, expected, lines_of


async def _follow_folder(folder: Path, **kwargs: object) -> list[agentminutes.Envelope]:
    async with aclosing(agentminutes.follow_many([folder], idle_exit=0.4, **kwargs)) as it:  # type: ignore[arg-type]
        return [env async for env in it]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_ids_are_stable_across_a_restart_from_state(tmp_path: Path, backend: str) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    target = folder / "main.jsonl"
    state = tmp_path / "state.json"
    lines = lines_of(MAIN)
    append(target, lines[:25])
    first = anyio.run(lambda: _follow_folder(folder, state=state), backend=backend)
    append(target, lines[25:])
    second = anyio.run(lambda: _follow_folder(folder, state=state), backend=backend)
    # A fresh follower (no state) of the finished file names every event as the two did.
    whole = anyio.run(lambda: _follow_folder(folder), backend=backend)
    assert len({e.id for e in whole}) == len(whole) == len(expected(MAIN))
    by_id = {e.id: e.event for e in whole}
    # each event of the two runs came once, under the id the fresh follower gives it
    assert sorted(e.id for e in first + second) == sorted(by_id)
    assert all(by_id[e.id] == e.event for e in first + second)
    identity = whole[0].id.split(":")[0]
    assert all(e.id.split(":")[0] == identity for e in whole)
    for env in whole:
        prov = env.event.provenance
        assert prov is not None
        assert env.id.split(":")[1] == f"{prov.line}-{prov.end_line or prov.line}"


def test_cli_envelopes_carry_the_library_ids(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    target = folder / "small.jsonl"
    shutil.copyfile(SMALL, target)
    f = FollowProc(folder, "--idle-exit", "0.4")
    assert f.wait_exit() == 0
    cli = [json.loads(line) for line in f.lines]
    lib = anyio.run(_follow_folder, folder)
    assert [(e["id"], e["event"]) for e in cli] == [
        (e.id, json.loads(msgspec.json.encode(e.event))) for e in lib
    ]
    assert all(e["session_id"] == cli[0]["event"]["session_meta"]["session_id"] for e in cli)


def test_a_copy_or_other_content_is_another_transcript(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    one = folder / "one.jsonl"
    shutil.copyfile(SMALL, one)
    shutil.copyfile(SMALL, folder / "copy.jsonl")
    got = anyio.run(_follow_folder, folder)
    by_file: dict[str, list[str]] = {}
    for env in got:
        by_file.setdefault(Path(env.transcript).name, []).append(env.id)
    assert len(by_file["one.jsonl"]) == len(by_file["copy.jsonl"]) == len(expected(SMALL))
    # same events, another file: no id in common, so a collector keeps both
    assert not set(by_file["one.jsonl"]) & set(by_file["copy.jsonl"])
    # the same file (same inode) rewritten with another session
    before = set(by_file["one.jsonl"])
    (folder / "copy.jsonl").unlink()
    with open(one, "r+b") as f:
        f.truncate(0)
        f.write(MAIN.read_bytes())
    again = anyio.run(_follow_folder, folder)
    assert not {e.id for e in again} & before
