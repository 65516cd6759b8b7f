"""The async library API under every anyio backend (asyncio and trio), and files closed on errors."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

import agentminutes
from conftest import FIXTURES
from follow_helpers import MAIN, lines_of

BACKENDS = ["asyncio", "trio"]


def _open_fds() -> set[str]:
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            out.add(os.readlink(f"/proc/self/fd/{fd}"))
    return out


def _corrupt(tmp_path: Path) -> Path:
    bad = tmp_path / "bad.jsonl"
    lines = lines_of(MAIN)
    bad.write_bytes(
        b"".join(lines[:5]) + b'{"type": "user", "message": 17}\n' + b"".join(lines[5:])
    )
    return bad


@pytest.mark.parametrize("backend", BACKENDS)
def test_parse_and_events_run_under_every_backend(backend: str) -> None:
    async def main() -> tuple[int, int]:
        session = await agentminutes.parse(MAIN)
        streamed = [e async for e in agentminutes.events(MAIN)]
        return len(session.events), len(streamed)

    parsed, streamed = anyio.run(main, backend=backend)
    assert parsed == streamed == len(agentminutes.load(MAIN).events) > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_parse_error_closes_the_transcript(tmp_path: Path, backend: str) -> None:
    bad = _corrupt(tmp_path)

    async def main() -> list[str]:
        raised = []
        with pytest.raises(agentminutes.ParseError) as first:
            await agentminutes.parse(bad)
        raised.append(str(first.value))
        with pytest.raises(agentminutes.ParseError) as second:
            async for _ in agentminutes.events(bad):
                pass
        raised.append(str(second.value))
        return raised

    raised = anyio.run(main, backend=backend)
    assert all("line 6" in r for r in raised)
    assert str(bad) not in _open_fds()  # closed at the error, not when collected
    with pytest.raises(agentminutes.ParseError):
        agentminutes.load(bad)
    assert str(bad) not in _open_fds()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cancelled_archive_leaves_the_archive_as_it_was(tmp_path: Path, backend: str) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-work"
    project.mkdir(parents=True)
    session = "c45af7b1-cb7c-4e51-93db-8cbb250a877a"
    # A long session (the fixture's lines many times over), so the run is cut mid-way.
    lines = lines_of(MAIN)
    (project / f"{session}.jsonl").write_bytes(lines[0] + b"".join(lines[1:]) * 150)
    to = tmp_path / "archive"
    env = {"HOME": str(home)}

    async def main() -> tuple[bool, list[str]]:
        with anyio.move_on_after(0.03) as scope:
            await agentminutes.archive(to, harness="claude-code", session_id=session, env=env)
        threads = [t.name for t in threading.enumerate() if t.name.startswith("agentminutes")]
        return scope.cancelled_caught, threads

    cancelled, threads = anyio.run(main, backend=backend)
    assert cancelled
    assert threads == []
    left = sorted(p.name for p in to.rglob("*") if p.is_file())
    assert left == [".agentminutes-archive.lock"]  # no copy, no temporary file, no manifest
    assert not [fd for fd in _open_fds() if fd.startswith(str(to))]
    # Not cancelled, the same run completes.
    done = agentminutes.archive_sync(to, harness="claude-code", session_id=session, env=env)
    assert done.copied
    assert done.normalized


def _by_session(path: Path) -> dict[str, list[dict]]:
    enc = msgspec.json.Encoder()
    out = {}
    for session in agentminutes.iter_sessions(path):
        sid = session.meta.subagent_id or session.meta.session_id
        out[sid] = [json.loads(enc.encode(e)) for e in session.events]
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_library_follows_a_database_and_a_task_folder(tmp_path: Path, backend: str) -> None:
    """What the command line follows, the library follows: an OpenCode database (by
    session), a Cline task folder."""
    db = tmp_path / "opencode.db"
    shutil.copy(FIXTURES / "opencode" / "constructed" / "opencode.db", db)
    task = tmp_path / "task"
    shutil.copytree(FIXTURES / "cline" / "1769064454592", task)
    enc = msgspec.json.Encoder()

    async def main(target: Path) -> tuple[dict[str, list[dict]], list[agentminutes.Ended]]:
        got: dict[str, list[dict]] = {}
        ends: list[agentminutes.Ended] = []
        async with agentminutes.follow_many([target], idle_exit=0.3, on_end=ends.append) as it:
            async for env in it:
                got.setdefault(env.transcript, []).append(json.loads(enc.encode(env.event)))
        return got, ends

    got, ends = anyio.run(main, db, backend=backend)
    want = _by_session(db)
    assert got == {f"{db}#{sid}": events for sid, events in want.items()}
    assert sorted(e.transcript for e in ends) == sorted(got)
    assert {e.reason for e in ends} == {"idle"}
    got, ends = anyio.run(main, task, backend=backend)
    assert got == {str(task): next(iter(_by_session(task).values()))}
    assert [e.reason for e in ends] == ["idle"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancelled_reads_stop_at_the_next_chunk(
    tmp_path: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """parse(), sessions() and task_stats() read on a thread of their own: cancelled, each
    returns at its next chunk, with its file closed and its thread gone.

    Counted in chunks, not timed: the read holds after its first chunk until the caller
    is cancelled, and then may read one more chunk at the most.
    """
    from agentminutes.pipeline import conversion
    from agentminutes.pipeline.sources import CHUNK_BYTES

    lines = lines_of(MAIN)
    big = tmp_path / "big.jsonl"
    big.write_bytes(lines[0] + b"".join(lines[1:]) * 200)  # ~14 MB: a dozen chunks
    chunks = -(-big.stat().st_size // CHUNK_BYTES)
    assert chunks > 4
    read: list[int] = []
    first_chunk, caller_cancelled = threading.Event(), threading.Event()
    real = conversion.iter_chunks

    def held(stream: Any, **kwargs: Any) -> Any:
        for chunk in real(stream, **kwargs):
            read.append(len(chunk))
            if len(read) == 1:
                first_chunk.set()
                caller_cancelled.wait(60)
            yield chunk

    monkeypatch.setattr(conversion, "iter_chunks", held)

    async def cancelled(call: str) -> None:
        with anyio.CancelScope() as scope:

            async def cancel_soon() -> None:
                await anyio.to_thread.run_sync(first_chunk.wait, 60)
                scope.cancel()
                caller_cancelled.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel_soon)
                if call == "parse":
                    await agentminutes.parse(big)
                elif call == "sessions":
                    async for _ in agentminutes.sessions(big):
                        pass
                else:
                    await agentminutes.task_stats(big, harness="claude-code")
        assert scope.cancelled_caught

    for call in ("parse", "sessions", "task_stats"):
        read.clear()
        first_chunk.clear()
        caller_cancelled.clear()
        anyio.run(cancelled, call, backend=backend)
        assert 1 <= len(read) <= 2, call  # stopped at the chunk after the cancel
        assert not [t for t in threading.enumerate() if t.name.startswith("agentminutes")]
        assert str(big) not in _open_fds()
